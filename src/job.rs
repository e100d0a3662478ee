//! Distributed jobs: the rank ⇄ host ⇄ pid ⇄ GPU table from NCCL init lines, events tied to ranks
//! and GPUs, clock skew between hosts from collectives that must time out together, the rank
//! that fell behind, ranks that went silent, and the work lost since the last checkpoint.

use crate::pipeline::InputResult;
use crate::scan::FastMap;
use crate::timeline::Event;
use rayon::prelude::*;
use std::collections::{BTreeMap, BTreeSet};

/// One rank of the job.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct RankInfo {
    /// Global rank.
    pub rank: i64,
    /// Host.
    pub host: Option<String>,
    /// Process id.
    pub pid: Option<u64>,
    /// CUDA device ordinal on the host.
    pub cuda_dev: Option<i64>,
    /// GPU bus id.
    pub gpu: Option<String>,
}

/// What the job logs tell about the job.
#[derive(Clone, Debug, Default)]
pub struct JobInfo {
    /// World size (largest `nranks` seen, else highest rank + 1).
    pub world_size: Option<i64>,
    /// Ranks seen, by rank.
    pub ranks: Vec<RankInfo>,
    /// Ranks of the world that no line names.
    pub missing_ranks: Vec<i64>,
    /// Ranks that logged no watchdog timeout while most others did (likely where the job broke).
    pub silent_ranks: Vec<i64>,
    /// The rank whose last completed collective is behind all others.
    pub straggler: Option<(i64, i64)>,
    /// Estimated clock offset of each host against the others, seconds.
    pub skew_s: BTreeMap<String, f64>,
    /// Index of the last checkpoint saved before the first fault.
    pub last_checkpoint: Option<usize>,
    /// Seconds of training lost between that checkpoint and the first fault.
    pub work_lost_s: Option<i64>,
}

fn pid_of(message: &str) -> Option<u64> {
    // NCCL prefix `host:pid:tid [dev]` (possibly after a timestamp)
    let tok = message.split_whitespace().find(|t| {
        t.matches(':').count() >= 2
            && t.rsplit(':')
                .take(2)
                .all(|p| !p.is_empty() && p.bytes().all(|c| c.is_ascii_digit()))
    })?;
    let mut it = tok.rsplitn(3, ':');
    it.next();
    it.next()?.parse().ok()
}

/// The ranks the inputs' rank-map lines (NCCL init) name, by rank, and the largest `nranks`.
fn rank_table(inputs: &[InputResult]) -> (BTreeMap<i64, RankInfo>, Option<i64>) {
    let mut ranks: BTreeMap<i64, RankInfo> = BTreeMap::new();
    let mut world: Option<i64> = None;
    for r in inputs {
        for a in r.attachments.iter().filter(|a| a.kind == "rank_map") {
            let Some(rank) = a.rank else { continue };
            if let Some(n) = a.attrs.get("nranks").and_then(|n| n.parse::<i64>().ok()) {
                world = Some(world.map_or(n, |w| w.max(n)));
            }
            let e = ranks.entry(rank).or_insert_with(|| RankInfo {
                rank,
                ..RankInfo::default()
            });
            e.host = e
                .host
                .clone()
                .or_else(|| a.host.as_deref().map(str::to_string))
                .or_else(|| r.host.clone());
            e.pid = e.pid.or_else(|| pid_of(&a.message));
            e.cuda_dev = e
                .cuda_dev
                .or_else(|| a.attrs.get("cuda_dev").and_then(|c| c.parse().ok()));
            e.gpu = e
                .gpu
                .clone()
                .or_else(|| a.gpu.as_deref().map(str::to_string));
        }
    }
    (ranks, world)
}

/// Ties events to ranks (by host and pid, else by host and CUDA device when one rank has it)
/// and to the GPU of their rank. Each event on its own: in parallel, with tables that borrow
/// the rank table's hosts (no key is cloned per event).
fn tie_events(events: &mut [Event], ranks: &BTreeMap<i64, RankInfo>) {
    if ranks.is_empty() {
        return;
    }
    let mut by_host_pid: FastMap<(&str, u64), i64> = FastMap::default();
    let mut by_host_dev: FastMap<(&str, i64), Vec<i64>> = FastMap::default();
    for r in ranks.values() {
        if let (Some(h), Some(p)) = (r.host.as_deref(), r.pid) {
            // the highest rank of a (host, pid) wins, as the rank order inserts it last
            by_host_pid.insert((h, p), r.rank);
        }
        if let (Some(h), Some(d)) = (r.host.as_deref(), r.cuda_dev) {
            by_host_dev.entry((h, d)).or_default().push(r.rank);
        }
    }
    events.par_iter_mut().with_min_len(4096).for_each(|e| {
        let host = e.host.as_deref().unwrap_or_default();
        if e.rank.is_none() && !by_host_pid.is_empty() {
            let pid = e
                .attrs
                .get("pid")
                .and_then(|p| p.parse::<u64>().ok())
                .or_else(|| pid_of(&e.message));
            if let Some(r) = pid.and_then(|p| by_host_pid.get(&(host, p))) {
                e.rank = Some(*r);
            }
        }
        if e.rank.is_none() && !by_host_dev.is_empty() {
            if let Some(idx) = e.attrs.get("gpu_index").and_then(|i| i.parse::<i64>().ok()) {
                if let Some(list) = by_host_dev.get(&(host, idx)).filter(|l| l.len() == 1) {
                    e.rank = Some(list[0]);
                }
            }
        }
        if e.gpu.is_none() {
            if let Some(info) = e.rank.and_then(|r| ranks.get(&r)) {
                if info.host.is_none() || info.host.as_deref() == e.host.as_deref() {
                    e.gpu = info.gpu.as_deref().map(std::sync::Arc::from);
                }
            }
        }
    });
}

/// Builds the job table from the inputs' rank-map lines and ties events to ranks and GPUs.
pub fn build(inputs: &[InputResult], events: &mut [Event]) -> Option<JobInfo> {
    let (mut ranks, world) = rank_table(inputs);
    tie_events(events, &ranks);
    let named: BTreeSet<i64> = events
        .iter()
        .filter_map(|e| e.rank)
        .chain(ranks.keys().copied())
        .collect();
    if named.is_empty() {
        return None;
    }
    for &r in &named {
        ranks.entry(r).or_insert_with(|| RankInfo {
            rank: r,
            ..RankInfo::default()
        });
    }
    for e in events.iter() {
        if let (Some(r), Some(h)) = (e.rank, &e.host) {
            let info = ranks.get_mut(&r).expect("inserted above");
            if info.host.is_none()
                && matches!(
                    e.kind,
                    "nccl_timeout" | "process_exit" | "cuda_oom" | "cuda_error" | "nccl_error"
                )
            {
                info.host = Some(h.to_string());
            }
        }
    }
    let world_size = world.or_else(|| named.iter().max().map(|m| m + 1));
    let missing_ranks = world_size
        .map(|w| (0..w).filter(|r| !named.contains(r)).collect())
        .unwrap_or_default();
    Some(JobInfo {
        world_size,
        ranks: ranks.into_values().collect(),
        missing_ranks,
        silent_ranks: silent_ranks(events, world_size),
        straggler: straggler(events),
        skew_s: skew(events),
        last_checkpoint: None,
        work_lost_s: None,
    })
}

/// Ranks silent while at least half of the others timed out.
fn silent_ranks(events: &[Event], world_size: Option<i64>) -> Vec<i64> {
    let timed_out: BTreeSet<i64> = events
        .iter()
        .filter(|e| e.kind == "nccl_timeout")
        .filter_map(|e| e.rank)
        .collect();
    match world_size {
        Some(w) if timed_out.len() as i64 * 2 >= w && (timed_out.len() as i64) < w => {
            (0..w).filter(|r| !timed_out.contains(r)).collect()
        }
        _ => Vec::new(),
    }
}

/// The straggler: the one rank with the lowest last completed collective, when it is behind the
/// others (with that collective).
fn straggler(events: &[Event]) -> Option<(i64, i64)> {
    let mut last_completed: BTreeMap<i64, i64> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == "nccl_timeout") {
        if let (Some(r), Some(c)) = (
            e.rank,
            e.attrs
                .get("last_completed")
                .and_then(|c| c.parse::<i64>().ok()),
        ) {
            let v = last_completed.entry(r).or_insert(c);
            *v = (*v).min(c);
        }
    }
    if last_completed.len() < 2 {
        return None;
    }
    let min = *last_completed.values().min().unwrap_or(&0);
    let behind: Vec<i64> = last_completed
        .iter()
        .filter(|(_, &c)| c == min)
        .map(|(&r, _)| r)
        .collect();
    (behind.len() == 1 && last_completed.values().any(|&c| c > min)).then(|| (behind[0], min))
}

/// Per-host clock offsets: every rank's watchdog fires `ran for` after the collective started, so
/// `time - ran_for` estimates the same instant on every host; a host's median against the median
/// of all hosts is its offset.
fn skew(events: &[Event]) -> BTreeMap<String, f64> {
    let mut starts: BTreeMap<(String, String), Vec<(String, i64)>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == "nccl_timeout") {
        let (Some(t), Some(h), Some(seq), Some(ran)) = (
            e.time_us,
            &e.host,
            e.attrs.get("seq"),
            e.attrs
                .get("ran_for_ms")
                .and_then(|r| r.parse::<i64>().ok()),
        ) else {
            continue;
        };
        let op = e.attrs.get("op").map(str::to_string).unwrap_or_default();
        starts
            .entry((seq.to_string(), op))
            .or_default()
            .push((h.to_string(), t - ran * 1000));
    }
    let mut per_host: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for list in starts.values() {
        let hosts: BTreeSet<&String> = list.iter().map(|(h, _)| h).collect();
        if hosts.len() < 2 {
            continue;
        }
        let mut all: Vec<i64> = list.iter().map(|(_, s)| *s).collect();
        all.sort_unstable();
        let med = all[all.len() / 2];
        for (h, s) in list {
            per_host
                .entry(h.clone())
                .or_default()
                .push((*s - med) as f64 / 1e6);
        }
    }
    per_host
        .into_iter()
        .map(|(h, mut v)| {
            v.sort_by(|a, b| a.total_cmp(b));
            (h, (v[v.len() / 2] * 10.0).round() / 10.0)
        })
        .collect()
}

/// The last checkpoint before `fault_us` and the seconds lost since it.
pub fn work_lost(events: &[Event], fault_us: i64) -> (Option<usize>, Option<i64>) {
    let ck = events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == "checkpoint_saved" && e.time_us.is_some_and(|t| t <= fault_us))
        .max_by_key(|(_, e)| e.time_us)
        .map(|(i, _)| i);
    let lost = ck
        .and_then(|i| events[i].time_us)
        .map(|t| (fault_us - t) / 1_000_000);
    (ck, lost)
}
