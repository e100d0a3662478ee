//! Bursts of NVRM events: one event per burst.

use super::Located;
use crate::events::nvrm::GENERIC_KIND;
use crate::model::LineStamp;
use std::collections::HashMap;

/// Lines of one burst further apart than this (seconds; lines when no time) start a new event.
const BURST_GAP_S: u64 = 600;
const BURST_GAP_LINES: u64 = 2000;

fn seconds(s: &LineStamp) -> (Option<u64>, Option<i64>) {
    (
        s.mono_us.map(|u| u / 1_000_000),
        s.wall.map(|w| w.naive_secs),
    )
}

fn close(a: &LineStamp, al: u64, b: &LineStamp, bl: u64) -> bool {
    match (seconds(a), seconds(b)) {
        ((Some(x), _), (Some(y), _)) => y.abs_diff(x) <= BURST_GAP_S,
        ((_, Some(x)), (_, Some(y))) => y.abs_diff(x) <= BURST_GAP_S,
        _ => bl.abs_diff(al) <= BURST_GAP_LINES,
    }
}

/// What the events of one burst share: host, kind, GPU (or GPU instance), family, class,
/// status and, for the generic kind, the function (or the text).
type BurstKey = (
    Option<std::sync::Arc<str>>,
    &'static str,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
    Option<String>,
);

/// The burst key of `e` ([`BurstKey`]).
fn burst_key(e: &Located) -> BurstKey {
    let a = &e.draft.attrs;
    let owned = |k: &str| a.get(k).map(str::to_string);
    let generic = e.draft.kind == GENERIC_KIND;
    (
        e.host.clone(),
        e.draft.kind,
        e.draft
            .gpu
            .as_deref()
            .or_else(|| a.get("gpu_instance"))
            .map(str::to_string),
        owned("family"),
        owned("class"),
        owned("status"),
        if generic {
            owned("function").or_else(|| owned("text"))
        } else {
            None
        },
    )
}

/// One event per burst: the NVRM parser's events of one host, kind, GPU, family, class,
/// status (and function, for the generic kind) that follow each other within
/// [`BURST_GAP_S`] are one event, the first, whose `burst_lines` detail counts the lines it
/// stands for (a flood of RPC failures after a GPU fell off the bus is one fact, not hundreds;
/// occurrences past the events cap stay in `suppressed`). Running it again over its own output
/// keeps the counts.
pub fn collapse_bursts(events: &mut Vec<Located>, recognizers: &[&'static str]) {
    if !events
        .iter()
        .any(|e| recognizers.contains(&e.draft.recognizer()))
    {
        return;
    }
    let mut open: HashMap<BurstKey, (usize, LineStamp, u64, u64)> = HashMap::new();
    let mut keep = vec![true; events.len()];
    for i in 0..events.len() {
        let e = &events[i];
        if !recognizers.contains(&e.draft.recognizer()) {
            continue;
        }
        let key = burst_key(e);
        let lines = (e.draft.attrs)
            .get("burst_lines")
            .and_then(|n| n.parse::<u64>().ok())
            .unwrap_or(1);
        let (stamp_i, line_i, extra) = (e.stamp, e.line, e.suppressed);
        match open.get_mut(&key) {
            Some((first, stamp, line, n)) if close(stamp, *line, &stamp_i, line_i) => {
                keep[i] = false;
                *n += lines;
                *stamp = stamp_i;
                *line = line_i;
                let (f, n) = (*first, *n);
                // occurrences past the events cap stay counted on the event kept
                events[f].suppressed += extra;
                events[f].draft.attrs.insert("burst_lines", n.to_string());
            }
            _ => {
                open.insert(key, (i, stamp_i, line_i, lines));
            }
        }
    }
    let mut i = 0;
    events.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}
