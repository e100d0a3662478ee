//! Why a job slowed: the events near a slowdown's start that match a cause of
//! `data/rules.toml` (`[[slowdown_cause]]`), ranked by confidence; the best names the layer, the
//! others become alternatives, and what data is missing is said either way.

use super::series::Metric;
use super::Slowdown;
use crate::catalog::Catalog;
use crate::formats::Format;
use crate::incidents::{render, Alternative, Incident};
use crate::model::{Layer, Severity};
use crate::pipeline::InputResult;
use crate::report::short_us;
use crate::rules::{RuleSet, SlowdownCause};
use crate::timeline::{short_host, Event};
use std::collections::BTreeSet;

/// Confidence lost when the evidence is on another host of the job.
const OTHER_HOST_PENALTY: f64 = 0.15;
/// Confidence lost when the evidence was logged after the slow phase ended.
const LATE_PENALTY: f64 = 0.1;
/// Confidence lost when the evidence carries no time (a state dump).
const UNTIMED_PENALTY: f64 = 0.1;
/// Confidence lost when the slowdown rests on a short series (a few samples).
const SHORT_PENALTY: f64 = 0.15;
/// Confidence of a slowdown no cause was found for (lower for a short series).
const NO_CAUSE: f64 = 0.3;

/// One cause that fits a slowdown.
#[derive(Clone, Debug)]
struct Candidate<'r> {
    cause: &'r SlowdownCause,
    /// Matching events, best first.
    events: Vec<usize>,
    confidence: f64,
}

fn round2(v: f64) -> f64 {
    (v * 100.0).round() / 100.0
}

/// How one event relates to a slowdown: None when it is out of the window, else the confidence
/// penalty for being on another host or untimed.
fn relation(e: &Event, s: &Slowdown, before_us: i64, after_us: i64) -> Option<f64> {
    let mut penalty = if s.short.is_some() {
        SHORT_PENALTY
    } else {
        0.0
    };
    match (e.time_us, s.start_us) {
        (Some(t), Some(start)) => {
            let end = s.end_us.unwrap_or(start).max(start);
            if t < start - before_us || t > end + after_us {
                return None;
            }
            // a state read during the slow phase is as good as one just before it
            if t > end {
                penalty += LATE_PENALTY;
            }
        }
        _ => penalty += UNTIMED_PENALTY,
    }
    if let (Some(a), Some(b)) = (&s.host, &e.host) {
        if **a != **b {
            penalty += OTHER_HOST_PENALTY;
        }
    }
    Some(penalty)
}

/// True when an earlier event of the same kind on the same host has the `changed_from` details.
fn changed(c: &SlowdownCause, e: &Event, events: &[Event]) -> bool {
    c.changed_from.is_empty()
        || events.iter().any(|o| {
            o.kind == e.kind
                && o.host == e.host
                && c.changed_from
                    .iter()
                    .all(|(k, v)| o.attrs.get(k) == Some(v))
                && match (o.time_us, e.time_us) {
                    (Some(a), Some(b)) if a != b => a < b,
                    _ => o.input == e.input && o.source.line < e.source.line,
                }
        })
}

fn candidates<'r>(
    s: &Slowdown,
    events: &[Event],
    rules: &'r RuleSet,
    job_hosts: &BTreeSet<String>,
) -> Vec<Candidate<'r>> {
    let p = &rules.slowdown;
    let after = p.window_after_s * 1_000_000;
    let mut out = Vec::new();
    for c in &rules.slowdown_causes {
        let before = c.window_before_s.unwrap_or(p.window_before_s) * 1_000_000;
        let mut hits: Vec<(f64, usize)> = Vec::new();
        for (i, e) in events.iter().enumerate() {
            if e.kind == "throughput_drop" || !c.pattern.fits(e) {
                continue;
            }
            // another host only counts when it belongs to the same job
            if let (Some(h), Some(sh)) = (&e.host, &s.host) {
                if **h != **sh && !job_hosts.contains(&**h) {
                    continue;
                }
            }
            let Some(pen) = relation(e, s, before, after) else {
                continue;
            };
            if !changed(c, e, events) {
                continue;
            }
            hits.push((pen, i));
        }
        if hits.is_empty() || hits.len() < c.pattern.min_count.unwrap_or(1) {
            continue;
        }
        hits.sort_by(|a, b| a.0.total_cmp(&b.0).then(a.1.cmp(&b.1)));
        out.push(Candidate {
            cause: c,
            confidence: round2((c.confidence - hits[0].0).max(0.05)),
            events: hits.into_iter().map(|h| h.1).collect(),
        });
    }
    // most confident first; ties keep the order of the rules file
    out.sort_by(|a, b| b.confidence.total_cmp(&a.confidence));
    out
}

/// What data would settle a slowdown's cause, given the inputs on its host.
fn missing_data(s: &Slowdown, inputs: &[InputResult], events: &[Event]) -> Vec<String> {
    let host = s.host.clone();
    let on_host = |r: &InputResult| match (&host, &r.host) {
        (Some(h), Some(rh)) => short_host(rh) == *h,
        (Some(h), None) => events
            .iter()
            .any(|e| e.input == r.index && e.host.as_deref() == Some(h.as_str())),
        (None, _) => true,
    };
    let has = |fs: &[Format]| inputs.iter().any(|r| fs.contains(&r.format) && on_host(r));
    let name = host.clone().unwrap_or_else(|| "the job's hosts".into());
    let when = s
        .start_us
        .map(short_us)
        .unwrap_or_else(|| "the slow phase".into());
    let mut out = Vec::new();
    if !has(&[
        Format::Dmesg,
        Format::Syslog,
        Format::Journal,
        Format::JournalJson,
        Format::BugReport,
    ]) {
        out.push(format!(
            "no kernel log from {name} covering {when} (PCIe link, Xid, OOM and hung-task lines)"
        ));
    }
    if !has(&[Format::NvidiaSmi, Format::Dcgmi, Format::BugReport]) {
        out.push(format!(
            "no nvidia-smi -q or DCGM dump from {name} taken during the slow phase (clocks-event reasons, temperatures, link width)"
        ));
    }
    if !events.iter().any(|e| e.kind == "nccl_transport") {
        out.push(
            "no NCCL_DEBUG=INFO output, so a fall back from InfiniBand to sockets cannot be ruled out"
                .into(),
        );
    }
    out
}

fn describe(s: &Slowdown) -> String {
    let who = match (&s.host, s.rank) {
        (Some(h), Some(r)) => format!(" on {h} (rank {r})"),
        (Some(h), None) => format!(" on {h}"),
        (None, Some(r)) => format!(" (rank {r})"),
        (None, None) => String::new(),
    };
    let from = match (s.start_us, s.start_iter) {
        (Some(t), Some(it)) => format!(" from {} (iteration {it})", short_us(t)),
        (Some(t), None) => format!(" from {}", short_us(t)),
        (None, Some(it)) => format!(" from iteration {it}"),
        (None, None) => String::new(),
    };
    let fmt = |v: f64| {
        if v >= 100.0 {
            format!("{v:.0}")
        } else {
            format!("{v:.2}")
        }
    };
    let (b, d) = (fmt(s.baseline), fmt(s.degraded));
    let figures = match s.metric {
        Metric::StepTime => format!("step time {b} → {d} ms"),
        Metric::SamplesPerSec => format!("{b} → {d} samples/s"),
        Metric::BusBandwidth => format!("bus bandwidth {b} → {d} GB/s"),
        Metric::TokensPerSec => format!("{b} → {d} tokens/s"),
        Metric::EpochTime => format!("epoch time {b} → {d} s"),
        Metric::TflopsPerGpu => format!("{b} → {d} TFLOP/s/GPU"),
    };
    let few = match s.short {
        Some(sh) => format!(
            "; read from only {} samples ({} before the step), so a clear step but a thin record",
            sh.samples, sh.before
        ),
        None => String::new(),
    };
    format!(
        "training throughput{who} fell to {:.0}% of its earlier level{from} ({figures}; {}{few})",
        s.ratio * 100.0,
        s.label
    )
}

/// Builds one incident per slowdown. `drops` holds each slowdown's `throughput_drop` event index.
/// Failure incidents made only of events that explain a slowdown (a thermal state, a degraded
/// link) are folded into it; a failure starting within the hour after the slow phase ends marks
/// the job as stopped rather than slowed.
pub fn incidents(
    slowdowns: &[(Slowdown, usize)],
    events: &[Event],
    inputs: &[InputResult],
    rules: &RuleSet,
    catalog: &Catalog,
    failures: &mut Vec<Incident>,
) -> Vec<Incident> {
    let job_hosts: BTreeSet<String> = slowdowns.iter().filter_map(|s| s.0.host.clone()).collect();
    let mut out = Vec::new();
    for (s, drop) in slowdowns {
        let mut s = s.clone();
        let cands = candidates(&s, events, rules, &job_hosts);
        let stopped = stopped_after(&s, failures, events);
        let mut members: BTreeSet<usize> = BTreeSet::from([*drop]);
        if stopped.is_some() {
            s.ongoing = false;
        } else {
            // failures whose every event is a cause of the slowdown are part of it
            let matched: BTreeSet<usize> = cands.iter().flat_map(|c| c.events.clone()).collect();
            failures.retain(|f| {
                let explained = f.events.iter().all(|i| matched.contains(i));
                if explained {
                    members.extend(f.events.iter().copied());
                }
                !explained
            });
        }
        let mut inc = slow_incident(&s, *drop, inputs, events);
        let summary = outcome(&s, stopped);
        match cands.first() {
            Some(best) => {
                attribute(&mut inc, &summary, &cands, *drop, events, catalog);
                members.extend(best.events.iter().copied());
            }
            None => no_cause(&mut inc, &summary, &s),
        }
        gather(&mut inc, members, events);
        inc.slowdown = Some(s);
        out.push(inc);
    }
    out
}

/// When the job stopped right after the slow phase: the first failure of error severity or
/// worse within an hour of its end.
fn stopped_after(s: &Slowdown, failures: &[Incident], events: &[Event]) -> Option<i64> {
    let end = s.end_us?;
    failures
        .iter()
        .filter(|f| f.severity >= Severity::Error)
        .filter_map(|f| f.events.first().and_then(|&i| events[i].time_us))
        .filter(|&t| t >= end && t - end <= 3_600_000_000)
        .min()
}

/// The slowdown described, with how it ended.
fn outcome(s: &Slowdown, stopped: Option<i64>) -> String {
    let mut summary = describe(s);
    summary.push_str(&match (stopped, s.recovered_us, s.ongoing) {
        (Some(t), _, _) => format!(", then the job stopped at {}", short_us(t)),
        (None, Some(t), _) => format!(", and recovered at {}", short_us(t)),
        (None, None, true) => " and stayed there to the end of the log".to_string(),
        _ => String::new(),
    });
    summary
}

/// The incident of slowdown `s` (its drop event `drop`) before a cause is named.
fn slow_incident(s: &Slowdown, drop: usize, inputs: &[InputResult], events: &[Event]) -> Incident {
    Incident {
        id: String::new(),
        events: Vec::new(),
        primary: Some(drop),
        rule: None,
        layer: Layer::Unknown,
        confidence: if s.short.is_some() {
            NO_CAUSE - SHORT_PENALTY
        } else {
            NO_CAUSE
        },
        summary: String::new(),
        evidence: vec![drop],
        responsibility: "operator".into(),
        alternatives: Vec::new(),
        actions: Vec::new(),
        hosts: s.host.iter().cloned().collect(),
        gpus: Vec::new(),
        ranks: s.rank.into_iter().collect(),
        consequences: Default::default(),
        counts: Default::default(),
        severity: Severity::Warning,
        missing: missing_data(s, inputs, events),
        slowdown: None,
        hang: None,
    }
}

/// Names the best candidate as the cause, and the next ones of other layers as alternatives.
fn attribute(
    inc: &mut Incident,
    summary: &str,
    cands: &[Candidate],
    drop: usize,
    events: &[Event],
    catalog: &Catalog,
) {
    let best = &cands[0];
    let e = &events[best.events[0]];
    inc.rule = Some(best.cause.id.clone());
    inc.layer = best.cause.layer;
    inc.confidence = best.confidence;
    inc.responsibility = best.cause.responsibility.clone();
    inc.actions = best.cause.actions.clone();
    inc.summary = format!(
        "{summary}; most likely because {} ({}:{})",
        render(
            &best.cause.summary,
            e,
            weight(events, &best.events),
            catalog
        ),
        e.source.path,
        e.source.line
    );
    inc.primary = Some(best.events[0]);
    inc.evidence = std::iter::once(best.events[0])
        .chain(std::iter::once(drop))
        .chain(best.events.iter().skip(1).take(4).copied())
        .collect();
    for c in cands.iter().skip(1) {
        if c.cause.layer == inc.layer || inc.alternatives.iter().any(|a| a.layer == c.cause.layer) {
            continue;
        }
        let e = &events[c.events[0]];
        inc.alternatives.push(Alternative {
            layer: c.cause.layer,
            confidence: c.confidence.min(inc.confidence - 0.05).max(0.05),
            summary: format!(
                "{} ({}:{})",
                render(&c.cause.summary, e, weight(events, &c.events), catalog),
                e.source.path,
                e.source.line
            ),
        });
    }
}

/// No cause in the logs: say so, and what to capture while the job is slow.
fn no_cause(inc: &mut Incident, summary: &str, s: &Slowdown) {
    inc.summary = format!("{summary}; no cause was found in the logs given");
    inc.actions = vec![
        format!(
            "Capture nvidia-smi -q -d PERFORMANCE,TEMPERATURE,POWER,ECC and dcgmi diag on {} while the job is slow",
            s.host.clone().unwrap_or_else(|| "every host of the job".into())
        ),
        "Compare per-rank step times to find the slow node, then check its PCIe link width, clocks-event reasons and NCCL transport".into(),
    ];
}

/// The members' hosts, the evidence's GPUs, and the occurrences per kind and code.
fn gather(inc: &mut Incident, members: BTreeSet<usize>, events: &[Event]) {
    let mut gpus: BTreeSet<String> = BTreeSet::new();
    let mut hosts: BTreeSet<String> = inc.hosts.iter().cloned().collect();
    for &i in &members {
        if let Some(g) = &events[i].gpu {
            if inc.evidence.contains(&i) {
                gpus.insert(g.to_string());
            }
        }
        if let Some(h) = &events[i].host {
            hosts.insert(h.to_string());
        }
    }
    inc.gpus = gpus.into_iter().collect();
    inc.hosts = hosts.into_iter().collect();
    for &i in &members {
        let e = &events[i];
        let key = match e.code {
            Some(c) => format!("{}:{c}", e.kind),
            None => e.kind.to_string(),
        };
        *inc.counts.entry(key).or_default() += e.weight();
    }
    inc.events = members.into_iter().collect();
}

/// Occurrences the events at `idx` stand for, those past the events cap included.
fn weight(events: &[Event], idx: &[usize]) -> u64 {
    idx.iter().map(|&i| events[i].weight()).sum()
}
