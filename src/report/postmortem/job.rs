//! The distributed job as the post-mortem shows it.

use crate::report::json::{EventJson, Report};
use std::collections::{BTreeMap, BTreeSet};

/// The distributed job as the post-mortem shows it.
#[derive(Clone, Debug)]
pub struct JobFacts<'a> {
    /// World size, when a line tells it.
    pub world_size: Option<i64>,
    /// Ranks seen.
    pub ranks_seen: usize,
    /// Hosts the ranks ran on.
    pub hosts: usize,
    /// Ranks no line names.
    pub missing: &'a [i64],
    /// Ranks that logged no timeout while the others did.
    pub silent: &'a [i64],
    /// The rank behind all others and its last completed collective.
    pub straggler: Option<(i64, i64)>,
    /// Clock offsets of a second or more: `host +41.0 s`.
    pub skews: Vec<String>,
    /// Seconds lost since the last checkpoint before the first fault.
    pub work_lost_s: Option<i64>,
    /// The last checkpoint saved before the first fault.
    pub last_checkpoint: Option<&'a EventJson>,
}

/// The job facts, when the inputs hold job logs.
pub fn job<'a>(r: &'a Report, events: &BTreeMap<&str, &'a EventJson>) -> Option<JobFacts<'a>> {
    let j = r.job.as_ref()?;
    let hosts: BTreeSet<&str> = j.ranks.iter().filter_map(|x| x.host.as_deref()).collect();
    Some(JobFacts {
        world_size: j.world_size,
        ranks_seen: j.ranks.len(),
        hosts: hosts.len(),
        missing: &j.missing_ranks,
        silent: &j.silent_ranks,
        straggler: j.straggler,
        skews: j
            .skew_s
            .iter()
            .filter(|(_, v)| v.abs() >= 1.0)
            .map(|(h, v)| format!("{h} {v:+.1} s"))
            .collect(),
        work_lost_s: j.work_lost_s,
        last_checkpoint: j
            .last_checkpoint
            .as_deref()
            .and_then(|id| events.get(id).copied()),
    })
}
