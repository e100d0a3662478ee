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

impl JobFacts<'_> {
    /// The facts but the last checkpoint (which each report cites its own way) as rows of a
    /// label and a text, the rows that have something to say; the flag is true when the text
    /// holds what the inputs named (a report escapes it), false when it is made of numbers.
    pub fn rows(&self) -> Vec<(&'static str, String, bool)> {
        let mut rows = vec![(
            "World size",
            format!(
                "{}; {} ranks seen on {} hosts",
                self.world_size
                    .map_or("unknown".to_string(), |w| w.to_string()),
                self.ranks_seen,
                self.hosts
            ),
            false,
        )];
        if !self.missing.is_empty() {
            rows.push(("Ranks no line names", super::ranks(self.missing), true));
        }
        if !self.silent.is_empty() {
            rows.push(("Ranks without a timeout", super::ranks(self.silent), true));
        }
        if let Some((rank, c)) = self.straggler {
            let text = format!("rank {rank} (last completed collective {c})");
            rows.push(("Straggler", text, false));
        }
        if !self.skews.is_empty() {
            rows.push(("Clock skew", self.skews.join(", "), true));
        }
        if let Some(w) = self.work_lost_s {
            rows.push(("Work lost", super::human_span(w * 1_000_000), false));
        }
        rows
    }
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
