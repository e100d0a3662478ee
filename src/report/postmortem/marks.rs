//! How the renderers mark events: consequences (what followed a fault: ranks exiting, NCCL
//! timeouts) apart from faults and unknown events, groups of repeated consequences per kind and
//! host, and a state snapshot (`nvidia-smi -q`, `dcgmi diag`) that was taken after its incident
//! had begun, which shows the state at that time rather than when the fault started.

use crate::report::json::{EventJson, IncidentJson, Report};
use std::collections::{BTreeMap, BTreeSet};

/// Groups of fewer consequences than this stay plain rows.
pub const GROUP_MIN: usize = 3;

/// The consequence events: in an incident, of a kind it counts as a consequence, and not its
/// evidence.
pub fn consequences(r: &Report) -> BTreeSet<&str> {
    let by_id: BTreeMap<&str, &EventJson> = r.events.iter().map(|e| (e.id.as_str(), e)).collect();
    let mut out = BTreeSet::new();
    for inc in &r.incidents {
        for id in &inc.events {
            let Some(e) = id.with_text(|t| by_id.get(t).copied()) else {
                continue;
            };
            if inc.consequences.contains_key(&e.kind) && !inc.root_cause.evidence.contains(&e.id) {
                out.insert(e.id.as_str());
            }
        }
    }
    out
}

/// Rows of a table after grouping: a row alone, or the first consequence of a kind on a host
/// followed by the others of that kind and host (at least [`GROUP_MIN`] in all).
#[derive(Debug)]
pub enum Row<'a> {
    /// One event.
    One(&'a EventJson),
    /// Consequences of one kind on one host, in report order.
    Group(Vec<&'a EventJson>),
}

/// Groups the consequence rows per kind and host, each group at the place of its first row.
pub fn group<'a>(r: &'a Report, rows: &[&'a EventJson]) -> Vec<Row<'a>> {
    let csq = consequences(r);
    let mut groups: BTreeMap<(&str, Option<&str>), Vec<&EventJson>> = BTreeMap::new();
    for e in rows.iter().filter(|e| csq.contains(e.id.as_str())) {
        groups
            .entry((e.kind.as_str(), e.host.as_deref()))
            .or_default()
            .push(e);
    }
    let mut out = Vec::new();
    for e in rows {
        let key = (e.kind.as_str(), e.host.as_deref());
        match groups.get(&key) {
            Some(g) if csq.contains(e.id.as_str()) && g.len() >= GROUP_MIN => {
                if g[0].id == e.id {
                    out.push(Row::Group(g.clone()));
                }
            }
            _ => out.push(Row::One(e)),
        }
    }
    out
}

/// Whether the event comes from a state snapshot (a dump of counters and states at one moment).
pub fn is_snapshot(r: &Report, e: &EventJson) -> bool {
    r.inputs
        .iter()
        .any(|i| i.path == e.source.path && matches!(i.format, "nvidia_smi" | "dcgmi"))
}

/// Whether `e`, the primary fault of `inc`, is a snapshot taken after the incident began: it
/// shows the state observed then, not the start of the fault.
pub fn observed_later(r: &Report, inc: &IncidentJson, e: &EventJson) -> bool {
    is_snapshot(r, e)
        && match (inc.start.as_deref(), e.time.as_deref()) {
            (Some(a), Some(b)) => a < b,
            _ => false,
        }
}

/// The incident whose primary fault `id` is, when that fault is a later snapshot.
pub fn observed_at<'a>(r: &'a Report, id: &str) -> Option<&'a IncidentJson> {
    let e = r.events.iter().find(|e| e.id == id)?;
    r.incidents.iter().find(|inc| {
        inc.root_cause.evidence.first().map(String::as_str) == Some(id) && observed_later(r, inc, e)
    })
}
