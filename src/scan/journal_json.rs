//! `journalctl -o json`: one JSON object per line; recognizers run on the decoded MESSAGE.

use super::{Located, ScanOutput};
use crate::events::{RecognizerSet, Record};
use crate::formats::journal::json_entry;
use crate::model::{LineStamp, WallStamp};

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
    for (i, raw) in body.split(|&c| c == b'\n').enumerate() {
        out.lines += 1;
        let line_no = i as u64 + 1;
        let Some(entry) = json_entry(raw.strip_suffix(b"\r").unwrap_or(raw)) else {
            continue;
        };
        out.recognized += 1;
        if entry.boot_id.is_some() && entry.boot_id != boot {
            if boot.is_some() {
                out.boot_lines.push(line_no);
            }
            boot = entry.boot_id.clone();
        }
        let msg = super::normalize_body(&entry.message);
        let mut owners: Vec<usize> = Vec::new();
        for m in set.automaton.find_overlapping_iter(msg.as_str()) {
            for &o in set.owners(m.pattern().as_usize()) {
                if !owners.contains(&o) {
                    owners.push(o);
                }
            }
        }
        if owners.is_empty() {
            continue;
        }
        owners.sort_unstable();
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
            wall: entry.realtime_us.map(|us| WallStamp {
                naive_secs: us.div_euclid(1_000_000),
                micros: us.rem_euclid(1_000_000) as u32,
                offset: Some(0),
                has_year: true,
            }),
            mono_us: entry.source_mono_us,
        };
        let mut kinds: Vec<String> = Vec::new();
        for d in drafts {
            if d.attach_to.is_none() {
                if kinds.contains(&d.kind) {
                    continue;
                }
                kinds.push(d.kind.clone());
            }
            let loc = Located {
                line: line_no,
                stamp: d.stamp.unwrap_or(stamp),
                borrowed: false,
                host: d.host.clone().or_else(|| entry.host.clone()),
                message: String::from_utf8_lossy(&raw[..raw.len().min(super::MAX_MESSAGE_BYTES)])
                    .into_owned(),
                body: msg.chars().take(super::MAX_MESSAGE_BYTES).collect(),
                draft: d,
                suppressed: 0,
            };
            if loc.draft.attach_to.is_some() {
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
    crate::events::nvrm::collapse_bursts(&mut out.events, set.nvrm_recognizers());
    out.cap(cap);
    out
}
