//! One event seen through two routes becomes one event that cites both: the same kernel line in
//! kern.log and the journal (or in a bug report's dmesg and syslog sections), and the same BMC
//! assertion in the SEL and in the iDRAC/Lifecycle log or Redfish.

use super::Event;
use std::collections::{BTreeMap, BTreeSet};

/// Host, kind, code, GPU and message text of an event, borrowed.
type DedupeKey<'e> = (
    Option<&'e str>,
    &'e str,
    Option<i64>,
    Option<&'e str>,
    &'e str,
);

fn dedupe_key(e: &Event) -> DedupeKey<'_> {
    (
        e.host.as_deref(),
        e.kind,
        e.code,
        e.gpu.as_deref(),
        e.body(),
    )
}

/// The hash of an event's [`DedupeKey`]: the index is keyed by it (no key is cloned), and the
/// events of one hash are compared by their keys.
fn key_hash(e: &Event) -> u64 {
    use std::hash::BuildHasher;
    crate::scan::FastBuild::default().hash_one(dedupe_key(e))
}

/// Other places kept per event (a line repeated thousands of times within two seconds would
/// otherwise list them all).
pub const MAX_ALSO_SEEN: usize = 64;

/// Drops the copies of one event seen through two routes (kern.log and journal, dmesg section and
/// syslog grep): same host, kind, code, GPU and text within two seconds; the copy's place is kept.
/// Two copies come from different inputs, or from one input of `bundles` (a bug report holds the
/// kernel log twice); the same line repeated within one plain log is a repeat, kept, unless it is
/// a BMC record (the same record exported twice).
pub(super) fn dedupe(mut events: Vec<Event>, bundles: &BTreeSet<usize>) -> Vec<Event> {
    if !may_repeat(&events, bundles) {
        return events;
    }
    // in place: the kept events are moved to the front (`kept` of them), in order
    let mut kept = 0;
    let mut index: crate::scan::FastMap<u64, Vec<usize>> = Default::default();
    for r in 0..events.len() {
        let e = &events[r];
        let key = key_hash(e);
        let mut dup_of = None;
        if let Some(list) = index.get(&key) {
            let same_key = |i: &&usize| dedupe_key(&events[**i]) == dedupe_key(e);
            for &i in list.iter().rev().filter(same_key).take(64) {
                let o = &events[i];
                if o.source.path == e.source.path && o.source.line == e.source.line {
                    continue;
                }
                // a BMC line names its record (SEL id, message id): the same line twice in one
                // export is the record exported twice
                if o.input == e.input && !bundles.contains(&e.input) && !e.bmc {
                    continue;
                }
                let same_time = match (o.time_us, e.time_us) {
                    (Some(a), Some(b)) => {
                        a.abs_diff(b) <= 2_000_000
                            && (o.uptime_us.is_none()
                                || e.uptime_us.is_none()
                                || o.uptime_us.unwrap().abs_diff(e.uptime_us.unwrap()) <= 2_000)
                    }
                    (None, None) => {
                        o.uptime_us.is_some() && o.uptime_us == e.uptime_us && o.input != e.input
                    }
                    _ => false,
                };
                if same_time {
                    dup_of = Some(i);
                    break;
                }
            }
        }
        match dup_of {
            Some(i) => {
                // the same occurrences seen through another route: not counted twice
                let (suppressed, source) = (e.suppressed, e.source.clone());
                let o = &mut events[i];
                o.suppressed = o.suppressed.max(suppressed);
                if o.also_seen().len() < MAX_ALSO_SEEN {
                    o.rare_mut().also_seen.push(source);
                }
            }
            None => {
                index.entry(key).or_default().push(kept);
                events.swap(kept, r);
                kept += 1;
            }
        }
    }
    events.truncate(kept);
    events
}

/// Whether two events may be one seen twice: they come from two inputs, or from a bug report, or
/// one is a BMC record. Else (one plain log) nothing is a copy and no index is built.
fn may_repeat(events: &[Event], bundles: &BTreeSet<usize>) -> bool {
    let Some(first) = events.first() else {
        return false;
    };
    events
        .iter()
        .any(|e| e.input != first.input || e.bmc || bundles.contains(&e.input))
}

/// BMC events of different inputs this close in time (µs) are one assertion when host, kind,
/// code, GPU and severity agree: the SEL, the Lifecycle log and Redfish print the same record
/// of the same clock (a few seconds cover records written one after the other).
const BMC_ROUTE_US: i64 = 5_000_000;

/// Merges one BMC assertion seen through two routes (SEL and iDRAC/Redfish): the earliest copy
/// stays and cites the others in `also_seen`. Each kept event takes at most one copy per input,
/// so that two power supplies failing at once stay two events.
pub(super) fn bmc_routes(events: Vec<Event>) -> Vec<Event> {
    let mut idx: Vec<usize> = (0..events.len())
        .filter(|&i| events[i].bmc && events[i].time_us.is_some())
        .collect();
    idx.sort_by_key(|&i| (events[i].time_us, events[i].input, events[i].source.line));
    let mut merged_into: BTreeMap<usize, usize> = BTreeMap::new();
    for (pos, &a) in idx.iter().enumerate() {
        if merged_into.contains_key(&a) {
            continue;
        }
        let mut inputs = vec![events[a].input];
        for &b in &idx[pos + 1..] {
            let (ea, eb) = (&events[a], &events[b]);
            if eb.time_us.unwrap_or(0) - ea.time_us.unwrap_or(0) > BMC_ROUTE_US {
                break;
            }
            if merged_into.contains_key(&b) || inputs.contains(&eb.input) {
                continue;
            }
            let same = (&ea.host, &ea.kind, ea.code, &ea.gpu, ea.severity)
                == (&eb.host, &eb.kind, eb.code, &eb.gpu, eb.severity);
            if same {
                inputs.push(eb.input);
                merged_into.insert(b, a);
            }
        }
    }
    if merged_into.is_empty() {
        // nothing merged (no BMC events, nearly always): the list as it is, not moved again
        return events;
    }
    let mut cites: BTreeMap<usize, Vec<crate::model::SourceRef>> = BTreeMap::new();
    for (&b, &a) in &merged_into {
        let e = &events[b];
        let list = cites.entry(a).or_default();
        list.push(e.source.clone());
        list.extend(e.also_seen().iter().cloned());
    }
    events
        .into_iter()
        .enumerate()
        .filter(|(i, _)| !merged_into.contains_key(i))
        .map(|(i, mut e)| {
            if let Some(more) = cites.remove(&i) {
                e.rare_mut().also_seen.extend(more);
            }
            e
        })
        .collect()
}

/// Two reports of one process's exit this far apart (µs) are one exit when host and pid agree.
const EXIT_ROUTE_US: i64 = 600_000_000;

/// The process exits that are copies of another (copy → the one kept): per host and pid, the
/// one with a rank (then the earliest) keeps the others within [`EXIT_ROUTE_US`] of it, and the
/// rest are grouped again the same way.
fn exit_copies(events: &[Event]) -> BTreeMap<usize, usize> {
    let mut by_pid: BTreeMap<(Option<&str>, &str), Vec<usize>> = BTreeMap::new();
    for (i, e) in events.iter().enumerate() {
        if e.kind == "process_exit" {
            if let Some(pid) = e.attrs.get("pid") {
                by_pid.entry((e.host.as_deref(), pid)).or_default().push(i);
            }
        }
    }
    let mut merged_into: BTreeMap<usize, usize> = BTreeMap::new();
    for list in by_pid.values().filter(|l| l.len() > 1) {
        let mut rest = list.clone();
        while !rest.is_empty() {
            let keep = *rest
                .iter()
                .min_by_key(|&&i| {
                    (
                        events[i].rank.is_none(),
                        events[i].time_us.is_none(),
                        events[i].time_us,
                        i,
                    )
                })
                .unwrap_or(&rest[0]);
            let near = |i: usize| match (events[i].time_us, events[keep].time_us) {
                (Some(a), Some(b)) => a.abs_diff(b) <= EXIT_ROUTE_US as u64,
                _ => true,
            };
            let (copies, others): (Vec<usize>, Vec<usize>) = rest
                .iter()
                .copied()
                .filter(|&i| i != keep)
                .partition(|&i| near(i));
            for c in copies {
                merged_into.insert(c, keep);
            }
            rest = others;
        }
    }
    merged_into
}

/// Merges one process exit reported through two routes (the torchrun failure table and the
/// elastic agent's `failed (exitcode: …)` line, a Slurm step line and the trainer's own): same
/// host and pid, within ten minutes. The copy with a rank (then the earliest) stays, takes the
/// details only the other has, and cites it in `also_seen`; so 64 ranks count 64 exits.
pub(super) fn process_routes(events: Vec<Event>) -> Vec<Event> {
    let merged_into = exit_copies(&events);
    if merged_into.is_empty() {
        return events;
    }
    let mut copies: BTreeMap<usize, Vec<Event>> = BTreeMap::new();
    let mut kept = Vec::with_capacity(events.len());
    for (i, e) in events.into_iter().enumerate() {
        match merged_into.get(&i) {
            Some(&k) => copies.entry(k).or_default().push(e),
            None => kept.push((i, e)),
        }
    }
    kept.into_iter()
        .map(|(i, mut e)| {
            for c in copies.remove(&i).unwrap_or_default() {
                e.rank = e.rank.or(c.rank);
                e.gpu = e.gpu.or(c.gpu);
                e.code = e.code.or(c.code);
                for (k, v) in &c.attrs {
                    e.attrs.insert_if_absent(k, v);
                }
                e.suppressed = e.suppressed.max(c.suppressed);
                if e.also_seen().len() < MAX_ALSO_SEEN {
                    e.rare_mut().also_seen.push(c.source);
                }
            }
            e
        })
        .collect()
}
