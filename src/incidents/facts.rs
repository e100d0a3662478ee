//! What a rule asks of the whole incident beyond its own event (how many events fit, distinct
//! codes on the event's GPU, processes on one compute unit, an earlier cause, a desync), answered
//! from indexes built once per incident and rule, so judging stays near-linear in the events
//! (a scan of every member per candidate event was quadratic on logs with many GPUs and codes).

use crate::catalog::Catalog;
use crate::rules::{Preceded, Rule};
use crate::scan::FastMap;
use crate::timeline::Event;
use std::collections::{BTreeMap, BTreeSet};

/// (host, GPU), borrowed from the events.
type GpuKey<'e> = (Option<&'e str>, Option<&'e str>);
/// (host, GPU, GPC, TPC), borrowed from the events.
type UnitKey<'e> = (Option<&'e str>, &'e str, &'e str, &'e str);
/// Per GPU: how many distinct Xid codes count (0 unless they span two layers).
type CodesOnGpu<'e> = FastMap<GpuKey<'e>, usize>;
/// A collective's operation type and input size, as a watchdog line names them.
type OpAndSize<'e> = (Option<&'e str>, Option<&'e str>);

/// The incident's indexes, filled on first use.
pub(super) struct Facts<'a> {
    events: &'a [Event],
    members: &'a [usize],
    catalog: &'a Catalog,
    /// Per GPU: distinct non-sympathetic Xid codes and their layers.
    codes: Option<CodesOnGpu<'a>>,
    desync: Option<bool>,
    earliest: Option<Earliest<'a>>,
}

/// Where the incident's first trouble lies, for `first_failure`: the earliest time of a timed
/// troubling event, and the smallest timeline index of any and of an untimed one.
#[derive(Clone, Copy)]
struct Earliest<'a> {
    /// The signal of the kill it was computed for.
    kill: &'a str,
    time: Option<i64>,
    index: Option<usize>,
    untimed_index: Option<usize>,
}

/// Per rule: what its incident-level conditions need.
#[derive(Default)]
pub(super) struct RuleFacts<'a> {
    count: Option<u64>,
    /// Per compute unit: how many distinct processes.
    units: Option<FastMap<UnitKey<'a>, usize>>,
    /// Per host: sorted times of the events that fit `preceded_by`.
    causes: Option<FastMap<Option<&'a str>, Vec<i64>>>,
    /// The hosts with an event of `with_state`'s kinds (`None`: an event that names no host).
    states: Option<FastMap<Option<&'a str>, ()>>,
}

impl<'a> Facts<'a> {
    /// Facts of one incident.
    pub fn new(events: &'a [Event], members: &'a [usize], catalog: &'a Catalog) -> Facts<'a> {
        Facts {
            events,
            members,
            catalog,
            codes: None,
            desync: None,
            earliest: None,
        }
    }

    fn member_events(&self) -> impl Iterator<Item = &'a Event> + '_ {
        self.members.iter().map(|&i| &self.events[i])
    }

    /// Distinct non-sympathetic Xid codes on `e`'s GPU (same host), counted only when they span
    /// at least two layers (several memory Xids of one ECC event are one fault). Counted once per
    /// GPU for the incident, looked up by borrowed keys.
    fn distinct_codes(&mut self, e: &Event) -> usize {
        let codes = self.codes.get_or_insert_with(|| {
            // per GPU: its codes (sorted, each once) and the layers they are on (one bit each):
            // a log of thousands of GPUs holds this for every one of them at once
            let mut m: FastMap<GpuKey, (Vec<i64>, u32)> = FastMap::default();
            for &i in self.members {
                let x = &self.events[i];
                if x.kind == "xid" && x.gpu.is_some() && !self.catalog.is_sympathetic("xid", x.code)
                {
                    if let Some(c) = x.code {
                        let slot = m.entry((x.host.as_deref(), x.gpu.as_deref())).or_default();
                        if let Err(at) = slot.0.binary_search(&c) {
                            slot.0.insert(at, c);
                        }
                        slot.1 |= 1 << (x.layer as u32);
                    }
                }
            }
            m.into_iter()
                .map(|(k, (codes, layers))| {
                    (
                        k,
                        if layers.count_ones() >= 2 {
                            codes.len()
                        } else {
                            0
                        },
                    )
                })
                .collect()
        });
        codes
            .get(&(e.host.as_deref(), e.gpu.as_deref()))
            .copied()
            .unwrap_or(0)
    }

    /// Ranks waited in different collectives: several operation types, or one sequence number
    /// with different operations or sizes.
    fn desync(&mut self) -> bool {
        if let Some(d) = self.desync {
            return d;
        }
        let timeouts: Vec<&Event> = self
            .member_events()
            .filter(|e| e.kind == "nccl_timeout")
            .collect();
        let ops: BTreeSet<&str> = timeouts.iter().filter_map(|e| e.attrs.get("op")).collect();
        let mut per_seq: BTreeMap<&str, BTreeSet<OpAndSize>> = BTreeMap::new();
        for e in &timeouts {
            if let Some(seq) = e.attrs.get("seq") {
                per_seq
                    .entry(seq)
                    .or_default()
                    .insert((e.attrs.get("op"), e.attrs.get("numel_in")));
            }
        }
        let d = ops.len() >= 2 || per_seq.values().any(|v| v.len() >= 2);
        self.desync = Some(d);
        d
    }

    /// Whether an event is trouble that a first failure must come before: anything at warning
    /// level or above, or a process ended by a signal (a SIGTERM before a SIGKILL is a stop
    /// escalated after its grace period) other than the kill itself, seen through another route.
    fn troubling(x: &Event, kill: &str) -> bool {
        let signal = x.attrs.get("signal");
        let same_kill = x.kind == "process_exit" && signal == Some(kill);
        !same_kill
            && (x.severity >= crate::model::Severity::Warning
                || (x.kind == "process_exit" && signal.is_some()))
    }

    /// Whether nothing troubling (see [`Facts::troubling`]) lies before event `i`: by time when
    /// both have one, else by timeline order. Computed once per incident: the earliest time of
    /// the troubling events and their smallest indices.
    fn first_failure(&mut self, i: usize) -> bool {
        let (events, members) = (self.events, self.members);
        let e = &events[i];
        let kill = e.attrs.get("signal").unwrap_or("");
        if self.earliest.is_some_and(|f| f.kill != kill) {
            self.earliest = None;
        }
        let first = *self.earliest.get_or_insert_with(|| {
            let mut f = Earliest {
                kill,
                time: None,
                index: None,
                untimed_index: None,
            };
            for &k in members
                .iter()
                .filter(|&&k| Self::troubling(&events[k], kill))
            {
                let x = &events[k];
                f.index = Some(f.index.map_or(k, |m| m.min(k)));
                match x.time_us {
                    Some(t) => f.time = Some(f.time.map_or(t, |m| m.min(t))),
                    None => f.untimed_index = Some(f.untimed_index.map_or(k, |m| m.min(k))),
                }
            }
            f
        });
        let before = match e.time_us {
            Some(t) => {
                first.time.is_some_and(|c| c < t) || first.untimed_index.is_some_and(|c| c < i)
            }
            None => first.index.is_some_and(|c| c < i),
        };
        !before
    }

    /// Whether event `i` fits `rule`, its own pattern and the incident-level conditions.
    pub fn fits(&mut self, rule: &Rule, rf: &mut RuleFacts<'a>, i: usize) -> bool {
        let e = &self.events[i];
        let m = &rule.pattern;
        if !m.fits(e) {
            return false;
        }
        if let Some(n) = m.min_distinct_codes_on_gpu {
            if e.gpu.is_none() || self.distinct_codes(e) < n {
                return false;
            }
        }
        if let Some(n) = m.min_processes_same_unit {
            if self.processes_on_unit(rule, rf, e) < n {
                return false;
            }
        }
        if let Some(n) = m.min_count {
            let members = self.member_events();
            let seen = *rf
                .count
                .get_or_insert_with(|| members.filter(|x| m.fits(x)).map(Event::weight).sum());
            if seen < n as u64 {
                return false;
            }
        }
        if let Some(p) = &m.preceded_by {
            if !self.preceded(p, rf, e) {
                return false;
            }
        }
        if !m.with_state.is_empty() && !self.state_on_host(&m.with_state, rf, e) {
            return false;
        }
        match m.fact.as_deref() {
            Some("desync") => self.desync(),
            Some("first_failure") => self.first_failure(i),
            Some(_) => false,
            None => true,
        }
    }

    /// Whether an event of one of `kinds` lies anywhere in the inputs on `e`'s host (or names
    /// no host, or `e` names none).
    fn state_on_host(&self, kinds: &[String], rf: &mut RuleFacts<'a>, e: &Event) -> bool {
        let events = self.events;
        let hosts = rf.states.get_or_insert_with(|| {
            events
                .iter()
                .filter(|x| kinds.iter().any(|k| k == x.kind))
                .map(|x| (x.host.as_deref(), ()))
                .collect()
        });
        match e.host.as_deref() {
            None => !hosts.is_empty(),
            h => hosts.contains_key(&None) || hosts.contains_key(&h),
        }
    }

    /// Distinct processes whose events fitting the rule name `e`'s GPU (same host) and its GPC
    /// and TPC; 0 when `e` names no compute unit.
    fn processes_on_unit(&self, rule: &Rule, rf: &mut RuleFacts<'a>, e: &Event) -> usize {
        fn unit(x: &Event) -> Option<UnitKey<'_>> {
            Some((
                x.host.as_deref(),
                x.gpu.as_deref()?,
                x.attrs.get("gpc")?,
                x.attrs.get("tpc")?,
            ))
        }
        let Some(key) = unit(e) else { return 0 };
        let (events, members) = (self.events, self.members);
        let units = rf.units.get_or_insert_with(|| {
            let mut m: FastMap<UnitKey, BTreeSet<&str>> = FastMap::default();
            for x in members.iter().map(|&i| &events[i]) {
                if !rule.pattern.fits(x) {
                    continue;
                }
                if let (Some(k), Some(pid)) = (unit(x), x.attrs.get("pid")) {
                    m.entry(k).or_default().insert(pid);
                }
            }
            m.into_iter().map(|(k, pids)| (k, pids.len())).collect()
        });
        units.get(&key).copied().unwrap_or(0)
    }

    /// Whether an event of `p`'s kinds lies on `e`'s host within `p`'s window around it.
    fn preceded(&self, p: &Preceded, rf: &mut RuleFacts<'a>, e: &Event) -> bool {
        let Some(t) = e.time_us else { return false };
        if e.host.is_none() {
            return false;
        }
        let (events, members) = (self.events, self.members);
        let causes = rf.causes.get_or_insert_with(|| {
            let mut m: FastMap<Option<&str>, Vec<i64>> = FastMap::default();
            for c in members.iter().map(|&i| &events[i]) {
                if p.kinds.iter().any(|k| k == c.kind)
                    && p.min_severity.is_none_or(|s| c.severity >= s)
                {
                    if let (Some(ct), Some(_)) = (c.time_us, &c.host) {
                        m.entry(c.host.as_deref()).or_default().push(ct);
                    }
                }
            }
            for v in m.values_mut() {
                v.sort_unstable();
            }
            m
        });
        let Some(times) = causes.get(&e.host.as_deref()) else {
            return false;
        };
        let lo = t - p.within_s * 1_000_000;
        let hi = t + p.after_s * 1_000_000;
        let k = times.partition_point(|&c| c < lo);
        times.get(k).is_some_and(|&c| c <= hi)
    }
}
