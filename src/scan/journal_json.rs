//! journalctl's structured outputs (`-o json`, `json-seq`, `json-pretty`, `export`, `verbose`):
//! entry by entry; recognizers run on the decoded MESSAGE.

use super::{Located, ScanOutput};
use crate::events::{Draft, RecognizerSet, Record};
use crate::formats::journal_entries;
use crate::model::LineStamp;

/// Scans a JSON-lines journal export; at most `cap` events per host, kind, code, GPU and rank are
/// kept (the others are counted, see [`super::cap_by_key`]).
pub fn scan(buf: &[u8], set: &RecognizerSet, cap: u64) -> ScanOutput {
    let mut out = ScanOutput::default();
    let mut boot: Option<String> = None;
    let mut next_cap = cap.saturating_mul(2).max(4096);
    if buf.is_empty() {
        return out;
    }
    let body = buf.strip_suffix(b"\n").unwrap_or(buf);
    out.lines = bytecount::count(body, b'\n') as u64 + 1;
    let mode = journal_entries::detect(&buf[..buf.len().min(64 * 1024)])
        .unwrap_or(journal_entries::Mode::JsonLines);
    let mut recognized = 0u64;
    for at in journal_entries::entries(buf, mode) {
        recognized += at.lines;
        out.long_lines += u64::from(at.entry.cut);
        if at.entry.boot_id.is_some() && at.entry.boot_id != boot {
            if boot.is_some() {
                out.boot_lines.push(at.line);
            }
            boot = at.entry.boot_id.clone();
        }
        let msg = super::normalize_body(&at.entry.message);
        let Some(drafts) = drafts_of(set, &msg) else {
            continue;
        };
        let raw = &buf[at.span.0..at.span.1];
        place(
            &mut out,
            &at,
            (raw.strip_suffix(b"\r").unwrap_or(raw), &msg),
            drafts,
        );
        let held = (out.events.len() + out.attachments.len()) as u64;
        if held >= next_cap {
            out.cap(cap);
            let after = (out.events.len() + out.attachments.len()) as u64;
            next_cap = after.saturating_mul(2).max(next_cap);
        }
    }
    out.recognized = recognized.min(out.lines);
    super::collapse_bursts(&mut out.events, set.nvrm_recognizers());
    out.cap(cap);
    out
}

/// The drafts the recognizers make of an entry's message; `None` when no anchor is in it.
fn drafts_of(set: &RecognizerSet, msg: &str) -> Option<Vec<Draft>> {
    let owners = set.owners_in(msg);
    if owners.is_empty() {
        return None;
    }
    let rec = Record {
        full: msg,
        body: msg,
        preceding: &[],
        following: &[],
        rank: None,
    };
    let mut drafts = Vec::new();
    for o in owners {
        set.apply(o, &rec, &mut drafts);
    }
    set.settle(&mut drafts);
    Some(drafts)
}

/// Places the drafts of entry `at` (its line `raw`, its message `msg`) in `out`: one event per
/// kind, every attachment.
fn place(
    out: &mut ScanOutput,
    at: &journal_entries::Located,
    (raw, msg): (&[u8], &str),
    drafts: Vec<Draft>,
) {
    let stamp = LineStamp {
        wall: at.entry.wall(),
        mono_us: at.entry.source_mono_us,
        tod_us: None,
    };
    let mut kinds: Vec<&str> = Vec::new();
    for mut d in drafts {
        if d.attach_to().is_none() {
            if kinds.contains(&d.kind) {
                continue;
            }
            kinds.push(d.kind);
        }
        let message: std::sync::Arc<str> =
            String::from_utf8_lossy(&raw[..raw.len().min(super::MAX_MESSAGE_BYTES)]).into();
        let body = crate::model::Body::cut(&message, msg, super::MAX_MESSAGE_BYTES);
        d.attrs.share(&message);
        let host = at.entry.host.as_deref().map(Into::into);
        let loc = Located::new(d, at.line, (stamp, false, host), (message, body));
        if loc.draft.attach_to().is_some() {
            out.attachments.push(loc);
        } else {
            out.events.push(loc);
        }
    }
}
