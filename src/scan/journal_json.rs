//! journalctl's structured outputs (`-o json`, `json-seq`, `json-pretty`, `export`, `verbose`):
//! entry by entry; recognizers run on the decoded MESSAGE.

use super::{Located, ScanOutput};
use crate::events::{RecognizerSet, Record};
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
        let entry = at.entry;
        let line_no = at.line;
        let raw = &buf[at.span.0..at.span.1];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        recognized += at.lines;
        if entry.boot_id.is_some() && entry.boot_id != boot {
            if boot.is_some() {
                out.boot_lines.push(line_no);
            }
            boot = entry.boot_id.clone();
        }
        let msg = super::normalize_body(&entry.message);
        let owners = set.owners_in(&msg);
        if owners.is_empty() {
            continue;
        }
        let rec = Record {
            full: &msg,
            body: &msg,
            preceding: &[],
            following: &[],
            rank: None,
        };
        let mut drafts = Vec::new();
        for o in owners {
            set.apply(o, &rec, &mut drafts);
        }
        set.settle(&mut drafts);
        let stamp = LineStamp {
            wall: entry.wall(),
            mono_us: entry.source_mono_us,
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
            let body = crate::model::Body::cut(&message, &msg, super::MAX_MESSAGE_BYTES);
            d.attrs.share(&message);
            let told = d.told.take().map(|t| *t).unwrap_or_default();
            let loc = Located {
                line: line_no,
                stamp: told.stamp.unwrap_or(stamp),
                borrowed: false,
                host: told
                    .host
                    .map(Into::into)
                    .or_else(|| entry.host.as_deref().map(Into::into)),
                message,
                body,
                draft: d,
                suppressed: 0,
                counted: false,
            };
            if loc.draft.attach_to().is_some() {
                out.attachments.push(loc);
            } else {
                out.events.push(loc);
            }
        }
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
