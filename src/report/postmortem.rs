//! The post-mortem as plain data: what a vendor or internal ticket needs beside the incidents
//! themselves (impact, the chain of each incident, NVIDIA's resolution bucket, the rows of the
//! timeline table and the first fault among them, the job, what to attach), computed once from a
//! [`Report`] so that the Markdown and the HTML post-mortems say the same. The suspect GPUs with
//! their counters and RMA criteria are in [`gpus`].
//!
//! Nothing here writes markup: each renderer escapes and decorates the values itself.

mod attach;
pub mod gpus;
mod job;
pub mod marks;

use super::json::{EventJson, IncidentJson, Report};
use crate::catalog::Catalog;
use std::collections::{BTreeMap, BTreeSet};

pub use attach::{attach, Attach};
pub use gpus::{suspects, Criterion, Suspect};
pub use job::{job, JobFacts};

/// A comma list, or `-`.
pub fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.join(", ")
    }
}

/// Ranks as ranges: `0–63 (64 ranks)`; `-` when there are none.
pub fn ranks(v: &[i64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let mut sorted = v.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut start = sorted[0];
    let mut prev = sorted[0];
    for &x in sorted[1..].iter().chain(std::iter::once(&i64::MIN)) {
        if x != prev + 1 {
            parts.push(if start == prev {
                start.to_string()
            } else {
                format!("{start}–{prev}")
            });
            start = x;
        }
        prev = x;
    }
    format!(
        "{} ({} rank{})",
        parts.join(", "),
        sorted.len(),
        if sorted.len() == 1 { "" } else { "s" }
    )
}

/// A duration for people: `42 s`, `12 min`, `4.1 h`, `3.0 d`.
pub fn human_span(us: i64) -> String {
    let s = us as f64 / 1e6;
    if s < 120.0 {
        format!("{s:.0} s")
    } else if s < 7200.0 {
        format!("{:.0} min", s / 60.0)
    } else if s < 172_800.0 {
        format!("{:.1} h", s / 3600.0)
    } else {
        format!("{:.1} d", s / 86400.0)
    }
}

/// A report time for people: `2026-03-14T02:13:07.412000Z` → `2026-03-14 02:13:07.412`.
pub fn pretty(iso: &str) -> String {
    let t = iso.trim_end_matches('Z').replacen('T', " ", 1);
    match t.split_once('.') {
        Some((a, f)) => {
            let f = f.trim_end_matches('0');
            if f.is_empty() {
                a.to_string()
            } else {
                format!("{a}.{f}")
            }
        }
        None => t,
    }
}

/// Wall time, or kernel uptime, of an event; a time of day nothing dated (`15:58:29, date
/// unknown`); `no time` when it has none of them.
pub fn when(e: &EventJson) -> String {
    match (&e.time, e.uptime_s) {
        (Some(t), _) => pretty(t),
        (None, Some(u)) => format!("uptime {u:.6} s"),
        _ => crate::report::json::undated_time_text(e).unwrap_or_else(|| "no time".into()),
    }
}

/// Kind and code of an event: `xid 79`, or the kind alone.
pub fn what(e: &EventJson) -> String {
    e.code
        .map_or_else(|| e.kind.clone(), |c| format!("{} {c}", e.kind))
}

/// Where an event happened: ` on gpu-node-03 0000:3b:00.0`, or nothing when no line says.
pub fn place(e: &EventJson) -> String {
    let parts: Vec<&str> = [e.host.as_deref(), e.gpu.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" on {}", parts.join(" "))
    }
}

/// Events by id.
pub fn index(r: &Report) -> BTreeMap<&str, &EventJson> {
    r.events.iter().map(|e| (e.id.as_str(), e)).collect()
}

/// The incident that gives the verdict (same layer and summary).
pub fn verdict_incident(r: &Report) -> Option<&IncidentJson> {
    r.incidents.iter().find(|i| {
        i.root_cause.layer == r.verdict.root_cause_layer
            && i.root_cause.summary == r.verdict.summary
    })
}

/// The primary fault (first evidence event) of each incident: event id → (incident id, whether
/// it is the verdict's incident, i.e. the first fault). An event that is the primary fault of
/// several incidents is listed once, under the first of them, marked when any is the verdict's.
pub fn primaries(r: &Report) -> BTreeMap<&str, (&str, bool)> {
    let top = verdict_incident(r).map(|i| i.id.as_str());
    let mut out: BTreeMap<&str, (&str, bool)> = BTreeMap::new();
    for inc in &r.incidents {
        if let Some(ev) = inc.root_cause.evidence.first() {
            let is_top = Some(inc.id.as_str()) == top;
            out.entry(ev.as_str())
                .and_modify(|v| v.1 |= is_top)
                .or_insert((inc.id.as_str(), is_top));
        }
    }
    out
}

/// The first fault: the primary fault of the verdict's incident.
pub fn first_fault(r: &Report) -> Option<&EventJson> {
    let id = verdict_incident(r)?.root_cause.evidence.first()?;
    r.events.iter().find(|e| &e.id == id)
}

/// An incident's window for people: wall times with the duration, else the kernel uptime range of
/// its events, else the times of day of its lines that nothing dated, else `no time in these
/// lines`.
pub fn window(inc: &IncidentJson, events: &BTreeMap<&str, &EventJson>) -> String {
    match (&inc.start, &inc.end) {
        (Some(a), Some(b)) => {
            let dur = match (
                chrono::DateTime::parse_from_rfc3339(a),
                chrono::DateTime::parse_from_rfc3339(b),
            ) {
                (Ok(x), Ok(y)) => {
                    format!(" ({})", human_span((y - x).num_microseconds().unwrap_or(0)))
                }
                _ => String::new(),
            };
            if a == b {
                pretty(a)
            } else {
                format!("{} → {}{dur}", pretty(a), pretty(b))
            }
        }
        _ => {
            let ups: Vec<f64> = inc
                .events
                .iter()
                .filter_map(|id| id.with_text(|t| events.get(t).copied()))
                .filter_map(|e| e.uptime_s)
                .collect();
            match (
                ups.iter().copied().reduce(f64::min),
                ups.iter().copied().reduce(f64::max),
            ) {
                (Some(a), Some(b)) => format!(
                    "kernel uptime {a:.3} s → {b:.3} s ({}); no wall time in these lines",
                    human_span(((b - a) * 1e6) as i64)
                ),
                _ => undated_window(inc, events),
            }
        }
    }
}

/// The window of an incident whose lines print only times of day that nothing dated:
/// `15:58:29 → 15:58:40, date unknown`, else `no time in these lines`.
fn undated_window(inc: &IncidentJson, events: &BTreeMap<&str, &EventJson>) -> String {
    let mut tods = inc
        .events
        .iter()
        .filter_map(|id| id.with_text(|t| events.get(t).copied()))
        .filter(|e| e.time_of_day.is_some())
        .map(|e| {
            (
                e.day_in_file.unwrap_or(0),
                e.time_of_day.as_deref().unwrap_or(""),
            )
        });
    let Some(first) = tods.next() else {
        return "no time in these lines".to_string();
    };
    let (lo, hi) = tods.fold((first, first), |(lo, hi), t| (lo.min(t), hi.max(t)));
    let text = |(d, t): (u64, &str)| match d {
        0 => t.to_string(),
        d => format!("{t} (+{d} day{})", if d == 1 { "" } else { "s" }),
    };
    if lo == hi {
        format!("{}, date unknown", text(lo))
    } else {
        format!("{} → {}, date unknown", text(lo), text(hi))
    }
}

/// The rule that named an incident's cause, or why none did.
pub fn rule(inc: &IncidentJson) -> String {
    inc.root_cause
        .rule
        .clone()
        .unwrap_or_else(|| "none fitted: the most severe event decides".into())
}

/// The distinct values, sorted.
pub(crate) fn union<'a>(it: impl Iterator<Item = &'a String>) -> Vec<String> {
    it.cloned().collect::<BTreeSet<_>>().into_iter().collect()
}

/// What the incidents hit, over which time, and who acts.
#[derive(Clone, Debug)]
pub struct Impact<'a> {
    /// Incidents per root-cause layer, in the layers' name order.
    pub by_layer: Vec<(&'static str, usize)>,
    /// Earliest start and latest end of the incidents with a wall time.
    pub window: Option<(&'a str, &'a str)>,
    /// Hosts of all incidents.
    pub hosts: Vec<String>,
    /// GPUs with faults.
    pub gpus: Vec<String>,
    /// Ranks of all incidents.
    pub ranks: Vec<i64>,
    /// World size of the job, when its logs tell it.
    pub world_size: Option<i64>,
    /// Scheduler job ids named by the incidents' lines (steps folded into their job).
    pub jobs: Vec<String>,
    /// Seconds of work lost since the last checkpoint before the first fault.
    pub work_lost_s: Option<i64>,
    /// What each slowdown incident cost.
    pub slow: Vec<SlowLoss<'a>>,
    /// Who must act, over all incidents.
    pub who: Vec<String>,
}

/// What a slowdown cost: over a slow phase at a fraction of the earlier throughput, the rest of
/// that fraction of the phase is training time lost.
#[derive(Clone, Debug, PartialEq)]
pub struct SlowLoss<'a> {
    /// The incident.
    pub incident: &'a str,
    /// Length of the slow phase (to the recovery, else to the last slow sample), microseconds.
    pub phase_us: i64,
    /// Throughput during the phase relative to before.
    pub ratio: f64,
    /// Training time lost: `phase × (1 − ratio)`, microseconds.
    pub lost_us: i64,
    /// Still slow at the end of the log (the loss goes on).
    pub ongoing: bool,
}

fn parse_us(t: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(t)
        .ok()
        .map(|d| d.timestamp_micros())
}

/// The cost of a slowdown incident, when its slow phase has wall times.
pub fn slow_loss(inc: &IncidentJson) -> Option<SlowLoss<'_>> {
    let sd = inc.slowdown.as_ref()?;
    let start = parse_us(sd.start.as_deref()?)?;
    let end = parse_us(sd.recovered_at.as_deref().or(sd.end.as_deref())?)?;
    let phase_us = (end - start).max(0);
    let ratio = sd.ratio.clamp(0.0, 1.0);
    Some(SlowLoss {
        incident: &inc.id,
        phase_us,
        ratio,
        lost_us: (phase_us as f64 * (1.0 - ratio)).round() as i64,
        ongoing: sd.ongoing,
    })
}

impl Impact<'_> {
    /// Length of [`Impact::window`] in microseconds.
    pub fn span_us(&self) -> Option<i64> {
        let (a, b) = self.window?;
        let a = chrono::DateTime::parse_from_rfc3339(a).ok()?;
        let b = chrono::DateTime::parse_from_rfc3339(b).ok()?;
        (b - a).num_microseconds()
    }
}

/// The impact of all incidents; `None` when there is none (the verdict then says whether
/// nothing was found or nothing could be read).
pub fn impact<'a>(r: &'a Report, events: &BTreeMap<&str, &'a EventJson>) -> Option<Impact<'a>> {
    if r.incidents.is_empty() {
        return None;
    }
    let mut by_layer: BTreeMap<&'static str, usize> = BTreeMap::new();
    for i in &r.incidents {
        *by_layer.entry(i.root_cause.layer).or_default() += 1;
    }
    let start = r.incidents.iter().filter_map(|i| i.start.as_deref()).min();
    let end = r.incidents.iter().filter_map(|i| i.end.as_deref()).max();
    let jobs: BTreeSet<String> = r
        .incidents
        .iter()
        .flat_map(|i| i.events.iter())
        .filter_map(|id| id.with_text(|t| events.get(t).copied()))
        .filter_map(|e| e.details.get("job"))
        .map(|j| j.split('.').next().unwrap_or(j).to_string())
        .collect();
    Some(Impact {
        by_layer: by_layer.into_iter().collect(),
        window: start.zip(end),
        hosts: union(r.incidents.iter().flat_map(|i| i.hosts.iter())),
        gpus: union(r.incidents.iter().flat_map(|i| i.gpus.iter())),
        ranks: r
            .incidents
            .iter()
            .flat_map(|i| i.ranks.iter().copied())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        world_size: r.job.as_ref().and_then(|j| j.world_size),
        jobs: jobs.into_iter().collect(),
        work_lost_s: r.job.as_ref().and_then(|j| j.work_lost_s),
        slow: r.incidents.iter().filter_map(slow_loss).collect(),
        who: union(r.incidents.iter().map(|i| &i.root_cause.responsibility)),
    })
}

/// The place of an evidence event in the chain of its incident.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Role {
    /// Before the primary fault (a warning sign, a driver change, AER errors on the root port).
    Before,
    /// The primary fault: the incident's first evidence event.
    Primary,
    /// After the primary fault and part of the evidence.
    With,
}

/// One step of a chain: an evidence event and its role.
#[derive(Clone, Copy, Debug)]
pub struct Step<'a> {
    /// Its role.
    pub role: Role,
    /// The event.
    pub event: &'a EventJson,
}

/// The consequences of one kind that followed the primary fault.
#[derive(Clone, Debug)]
pub struct Followed<'a> {
    /// Event kind (`nccl_timeout`, `process_exit`, …).
    pub kind: &'a str,
    /// How many (occurrences past the events cap included).
    pub count: u64,
    /// Time of the first and of the last of them ([`when`]), when the incident lists them.
    pub span: Option<(String, String)>,
    /// On how many hosts.
    pub hosts: usize,
}

/// The chain of an incident in time order: the evidence (before the primary fault, the primary
/// fault, what came with it), then the consequences by kind.
#[derive(Clone, Debug)]
pub struct Chain<'a> {
    /// Evidence events in report order, with their role.
    pub steps: Vec<Step<'a>>,
    /// Consequences by kind.
    pub then: Vec<Followed<'a>>,
}

/// Builds the chain of one incident.
pub fn chain<'a>(
    r: &'a Report,
    inc: &'a IncidentJson,
    events: &BTreeMap<&str, &'a EventJson>,
) -> Chain<'a> {
    let order: BTreeMap<&str, usize> = r
        .events
        .iter()
        .enumerate()
        .map(|(i, e)| (e.id.as_str(), i))
        .collect();
    let mut evidence: Vec<(usize, &EventJson)> = inc
        .root_cause
        .evidence
        .iter()
        .filter_map(|id| Some((*order.get(id.as_str())?, *events.get(id.as_str())?)))
        .collect();
    evidence.sort_by_key(|(i, _)| *i);
    let primary = inc.root_cause.evidence.first();
    let mut before = true;
    let steps = evidence
        .into_iter()
        .map(|(_, e)| {
            let role = if Some(&e.id) == primary {
                before = false;
                Role::Primary
            } else if before {
                Role::Before
            } else {
                Role::With
            };
            Step { role, event: e }
        })
        .collect();
    let then = inc
        .consequences
        .iter()
        .map(|(kind, &count)| {
            let of_kind: Vec<&EventJson> = inc
                .events
                .iter()
                .filter_map(|id| id.with_text(|t| events.get(t).copied()))
                .filter(|e| &e.kind == kind && !inc.root_cause.evidence.contains(&e.id))
                .collect();
            let hosts: BTreeSet<&str> = of_kind.iter().filter_map(|e| e.host.as_deref()).collect();
            Followed {
                kind,
                count,
                span: of_kind
                    .first()
                    .zip(of_kind.last())
                    .map(|(a, b)| (when(a), when(b))),
                hosts: hosts.len(),
            }
        })
        .collect();
    Chain { steps, then }
}

/// NVIDIA's resolution bucket (immediate and investigatory action) of each Xid in an incident's
/// evidence, once per code: `Xid 79 (GPU_FALLEN_OFF_BUS): immediate RESTART_BM, then …`. An Xid
/// line that the evidence cites through an event read from it (`fell_off_bus 79` is read from the
/// line of `xid 79`) counts as evidence.
pub fn resolution(
    inc: &IncidentJson,
    events: &BTreeMap<&str, &EventJson>,
    catalog: &Catalog,
) -> Vec<String> {
    let evidence: Vec<&EventJson> = inc
        .root_cause
        .evidence
        .iter()
        .filter_map(|id| events.get(id.as_str()).copied())
        .collect();
    let cited: BTreeSet<(&str, u64)> = evidence
        .iter()
        .map(|e| (e.source.path.as_str(), e.source.line))
        .collect();
    let same_line = inc
        .events
        .iter()
        .filter_map(|id| id.with_text(|t| events.get(t).copied()))
        .filter(|e| e.kind == "xid" && cited.contains(&(e.source.path.as_str(), e.source.line)));
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for e in evidence.iter().copied().chain(same_line) {
        let Some(code) = e.code.filter(|_| e.kind == "xid") else {
            continue;
        };
        let Some(x) = catalog.xid.get(&code) else {
            continue;
        };
        if x.immediate.is_empty() || !seen.insert(code) {
            continue;
        }
        out.push(format!(
            "Xid {code} ({}): immediate {}{}",
            x.mnemonic,
            x.immediate,
            if x.investigatory.is_empty() || x.investigatory == x.immediate {
                String::new()
            } else {
                format!(", then {}", x.investigatory)
            }
        ));
    }
    out
}

/// The events of a timeline table: severity warning or worse and every evidence line, in report
/// order, at most `cap` of them; evidence lines are kept past the cap so that the first fault and
/// every chain has its row. Returns the rows and how many there were before the cap.
pub fn table_rows(r: &Report, cap: usize) -> (Vec<&EventJson>, usize) {
    let evidence: BTreeSet<&str> = r
        .incidents
        .iter()
        .flat_map(|i| i.root_cause.evidence.iter().map(String::as_str))
        .collect();
    let rows: Vec<&EventJson> = r
        .events
        .iter()
        .filter(|e| e.severity != "info" || evidence.contains(e.id.as_str()))
        .collect();
    let n = rows.len();
    if n <= cap {
        return (rows, n);
    }
    let mut room = cap.saturating_sub(
        rows.iter()
            .filter(|e| evidence.contains(e.id.as_str()))
            .count(),
    );
    let kept = rows
        .into_iter()
        .filter(|e| {
            if evidence.contains(e.id.as_str()) {
                true
            } else if room > 0 {
                room -= 1;
                true
            } else {
                false
            }
        })
        .collect();
    (kept, n)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::crowded;

    #[test]
    fn capped_table_keeps_the_evidence_and_marks_the_first_fault() {
        let r = crowded();
        let (rows, n) = table_rows(&r, 100);
        assert_eq!(n, 1600, "the error events");
        assert_eq!(rows.len(), 100);
        assert_eq!(rows[98].id, "e197", "the first 99 others in order");
        assert_eq!(rows[99].id, "e3199", "the evidence past the cap");
        assert_eq!(first_fault(&r).map(|e| e.id.as_str()), Some("e3199"));
        assert_eq!(primaries(&r).get("e3199"), Some(&("i1", true)));
        let (all, n) = table_rows(&r, 5000);
        assert_eq!((all.len(), n), (1600, 1600));
    }

    #[test]
    fn spans_ranks_and_times_read_well() {
        assert_eq!(human_span(42_000_000), "42 s");
        assert_eq!(human_span(12 * 60_000_000), "12 min");
        assert_eq!(human_span(4 * 3_600_000_000 + 360_000_000), "4.1 h");
        assert_eq!(human_span(3 * 86_400_000_000), "3.0 d");
        assert_eq!(ranks(&[3, 0, 1, 2, 7, 9, 8]), "0–3, 7–9 (7 ranks)");
        assert_eq!(ranks(&[5]), "5 (1 rank)");
        assert_eq!(ranks(&[]), "-");
        assert_eq!(
            pretty("2026-03-14T02:13:07.412000Z"),
            "2026-03-14 02:13:07.412"
        );
        assert_eq!(pretty("2026-03-14T02:13:07.000000Z"), "2026-03-14 02:13:07");
    }
}
