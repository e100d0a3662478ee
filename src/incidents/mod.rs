//! Incidents: bursts of events grouped on one time axis, each with its primary fault named by the
//! rules, the consequences that followed, alternatives, and who must act.

use crate::catalog::Catalog;
use crate::job::JobInfo;
use crate::model::{Layer, Severity};
use crate::rules::{Rule, RuleSet};
use crate::timeline::Event;
use std::collections::{BTreeMap, BTreeSet};

mod cause;
mod choose;
mod confidence;
mod drift;
mod facts;
mod verdict;

use verdict::{
    alone, alternatives_of, benign, consequences_only, discounted_only, from_event, from_rule,
    suspects, tally,
};
mod topo;

pub use drift::{add_driver_drift, ago};
pub use topo::add_nic_gpus;

/// A runner-up explanation.
#[derive(Clone, Debug)]
pub struct Alternative {
    /// Layer.
    pub layer: Layer,
    /// Confidence.
    pub confidence: f64,
    /// Why.
    pub summary: String,
}

/// One incident.
#[derive(Clone, Debug)]
pub struct Incident {
    /// `i1`, `i2`, …
    pub id: String,
    /// Indices into the timeline's events.
    pub events: Vec<usize>,
    /// Index of the primary event.
    pub primary: Option<usize>,
    /// Rule that named the cause.
    pub rule: Option<String>,
    /// Root-cause layer.
    pub layer: Layer,
    /// Confidence.
    pub confidence: f64,
    /// One-sentence verdict.
    pub summary: String,
    /// Evidence event indices (primary first, then supporting).
    pub evidence: Vec<usize>,
    /// vendor | operator | user.
    pub responsibility: String,
    /// Runner-up layers.
    pub alternatives: Vec<Alternative>,
    /// Steps.
    pub actions: Vec<String>,
    /// Hosts involved.
    pub hosts: Vec<String>,
    /// GPUs involved.
    pub gpus: Vec<String>,
    /// Ranks involved.
    pub ranks: Vec<i64>,
    /// Consequence counts by kind (occurrences past the events cap included).
    pub consequences: BTreeMap<String, u64>,
    /// Occurrences by `kind` or `kind:code`, over all member events, those past the events cap
    /// included: exact whatever the cap.
    pub counts: BTreeMap<String, u64>,
    /// Highest severity.
    pub severity: Severity,
    /// Data that would settle the cause.
    pub missing: Vec<String>,
    /// For incidents of kind `slowdown`: the regression found in the trainer's progress lines.
    pub slowdown: Option<crate::throughput::Slowdown>,
}

/// Where an event sits for grouping: one axis per clock domain.
fn axis(e: &Event) -> (u8, String, i64) {
    if let Some(t) = e.time_us {
        (0, String::new(), t)
    } else if let Some(u) = e.uptime_us {
        // one axis per host and boot: uptimes restart at zero after a reboot
        (
            1,
            format!("{}#{}", e.host.clone().unwrap_or_default(), e.boot),
            u as i64,
        )
    } else {
        (
            2,
            format!("{:08}", e.input),
            (e.source.line as i64).saturating_mul(1_000_000),
        )
    }
}

/// Groups events into incidents and names each one's cause.
pub fn build(
    events: &[Event],
    rules: &RuleSet,
    catalog: &Catalog,
    kernel_inputs: bool,
    job: Option<&JobInfo>,
) -> Vec<Incident> {
    // slowdowns are grouped by the throughput stage, not by bursts
    let relevant: Vec<usize> = (0..events.len())
        .filter(|&i| events[i].severity >= Severity::Warning && events[i].kind != "throughput_drop")
        .collect();
    let mut by_axis: BTreeMap<(u8, String), Vec<(i64, usize)>> = BTreeMap::new();
    for &i in &relevant {
        let (a, k, p) = axis(&events[i]);
        by_axis.entry((a, k)).or_default().push((p, i));
    }
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (_, mut list) in by_axis {
        list.sort();
        let mut cur: Vec<usize> = Vec::new();
        let mut last = i64::MIN;
        // user rules may give any gap: negative ones are 0, huge ones saturate
        let us = |s: i64| s.max(0).saturating_mul(1_000_000);
        let mut gap = us(rules.grouping.gap_s);
        for (p, i) in list {
            if !cur.is_empty() && p.saturating_sub(last) > gap {
                groups.push(std::mem::take(&mut cur));
                gap = us(rules.grouping.gap_s);
            }
            let e = &events[i];
            if catalog.is_sticky(&e.kind, e.code) || e.kind == "fell_off_bus" {
                gap = us(rules.grouping.sticky_gap_s);
            }
            cur.push(i);
            last = p;
        }
        if !cur.is_empty() {
            groups.push(cur);
        }
    }
    // Groups without a wall time join a timed group that shares a GPU or rank; groups with no
    // time at all may also join an uptime-only group. Two uptime-only groups never merge: they
    // were split by a gap or by a reboot (uptimes restart at zero).
    let timed = |g: &Vec<usize>| g.iter().any(|&i| events[i].time_us.is_some());
    let uptime_only =
        |g: &Vec<usize>| !timed(g) && g.iter().any(|&i| events[i].uptime_us.is_some());
    let mut merged: Vec<(bool, Vec<usize>)> = groups
        .iter()
        .filter(|g| timed(g))
        .map(|g| (true, g.clone()))
        .collect();
    let later = groups
        .iter()
        .filter(|g| uptime_only(g))
        .chain(groups.iter().filter(|g| !timed(g) && !uptime_only(g)));
    for g in later {
        let gpus: BTreeSet<&String> = g.iter().filter_map(|&i| events[i].gpu.as_ref()).collect();
        let ranks: BTreeSet<i64> = g.iter().filter_map(|&i| events[i].rank).collect();
        let on_uptime = uptime_only(g);
        let target = merged.iter().position(|(is_timed, m)| {
            (*is_timed || !on_uptime)
                && m.iter().any(|&i| {
                    events[i].gpu.as_ref().is_some_and(|x| gpus.contains(x))
                        || events[i].rank.is_some_and(|r| ranks.contains(&r))
                })
        });
        match target {
            Some(t) => merged[t].1.extend(g.iter().copied()),
            None => merged.push((false, g.clone())),
        }
    }
    let merged: Vec<Vec<usize>> = merged.into_iter().map(|(_, g)| g).collect();
    // asked of every member several times while judging: answered once per event
    let conseq: Vec<bool> = events.iter().map(|e| rules.is_consequence(e)).collect();
    let mut incidents: Vec<Incident> = merged
        .into_iter()
        .map(|mut g| {
            g.sort_unstable();
            judge(g, events, (rules, &conseq), catalog, kernel_inputs, job)
        })
        .collect();
    renumber(&mut incidents);
    incidents
}

/// Orders incidents by their first event and numbers them `i1`, `i2`, ….
pub fn renumber(incidents: &mut [Incident]) {
    incidents.sort_by(|a, b| a.events.first().cmp(&b.events.first()));
    for (n, inc) in incidents.iter_mut().enumerate() {
        inc.id = format!("i{}", n + 1);
    }
}

/// Fills a rule's summary template from one event: {gpu} {host} {code} {title} {count} {rank};
/// {xid_title} is the Xid catalog's title of the event's code (for events that report an Xid
/// seen elsewhere, such as the device plugin's); {frames} the first frames of a kernel report.
pub fn render(template: &str, e: &Event, count: u64, catalog: &Catalog) -> String {
    let gpu = e.gpu.clone().unwrap_or_else(|| "(unknown GPU)".into());
    let host = e.host.clone().unwrap_or_else(|| "(unknown host)".into());
    let rank_text = e.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
    template
        .replace("{gpu}", &gpu)
        .replace("{host}", &host)
        .replace("{code}", &e.code.map(|c| c.to_string()).unwrap_or_default())
        .replace("{title}", &catalog.title(&e.kind, e.code))
        .replace("{xid_title}", &catalog.title("xid", e.code))
        .replace("{count}", &count.to_string())
        .replace("{rank_text}", &rank_text)
        .replace("{rank}", &e.rank.map(|r| r.to_string()).unwrap_or_default())
        .replace(
            "{caused_by_xid}",
            e.attrs.get("caused_by_xid").unwrap_or(""),
        )
        .replace(
            "{caused_by_title}",
            &catalog.title(
                "xid",
                e.attrs.get("caused_by_xid").and_then(|v| v.parse().ok()),
            ),
        )
        .replace(
            "{frames}",
            e.attrs.get("frames").unwrap_or("no frames shown"),
        )
}

/// The evidence: the primary, the cause a rule named, then related events (same GPU, same kind on
/// the host, PCIe reports of the host, other events the rule fits), one per kind, code and route.
fn evidence_of(
    primary: Option<usize>,
    cause: Option<usize>,
    chosen: Option<&Rule>,
    members: &[usize],
    events: &[Event],
    conseq: &[bool],
) -> Vec<usize> {
    let mut evidence: Vec<usize> = primary.into_iter().chain(cause).collect();
    let Some(p) = primary else { return evidence };
    let pe = &events[p];
    for &i in members {
        if i == p || evidence.len() >= 12 {
            continue;
        }
        let e = &events[i];
        let named = chosen.is_some_and(|r| r.pattern.fits(e));
        let related = (e.gpu.is_some() && e.gpu == pe.gpu)
            || (e.kind == pe.kind && e.host == pe.host)
            || (e.kind == "pcie_aer" && e.host == pe.host)
            || (named && e.host == pe.host);
        let seen = evidence.iter().any(|&j| {
            events[j].source == e.source
                || (e.kind != "pcie_aer"
                    && events[j].kind == e.kind
                    && events[j].code == e.code
                    && events[j].bmc == e.bmc)
        });
        if related && !seen && !conseq[i] {
            evidence.push(i);
        }
    }
    evidence
}

/// Names one incident's cause: candidates from the rules, cause before consequence, then the
/// verdict, its consequences, evidence and summary. `conseq` says per event whether the rules
/// take it for a consequence.
fn judge(
    members: Vec<usize>,
    events: &[Event],
    (rules, conseq): (&RuleSet, &[bool]),
    catalog: &Catalog,
    kernel_inputs: bool,
    job: Option<&JobInfo>,
) -> Incident {
    let severity = members
        .iter()
        .map(|&i| events[i].severity)
        .max()
        .unwrap_or(Severity::Warning);
    let discounted: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| benign(catalog, &events[i]).is_some())
        .collect();
    let primaries: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| !conseq[i] && benign(catalog, &events[i]).is_none())
        .collect();
    let cands = choose::candidates(&members, &primaries, events, rules, catalog);
    let picked = choose::pick(&cands, events, rules);
    let chosen = picked.as_ref().map(|(k, _)| cands[*k]);
    let mut alternatives = alternatives_of(&cands, picked.as_ref().map(|p| p.0), events, catalog);
    let t = tally(&members, events, conseq);
    let mut missing = Vec::new();
    // the earlier event a rule names as the cause (a BMC alert before a GPU loss)
    let preceded = chosen.and_then(|c| Some((c.rule.pattern.preceded_by.as_ref()?, c.event)));
    let cause = preceded.and_then(|(p, i)| cause::cause_of(p, i, events, &members));
    let v = match chosen {
        Some(c) => from_rule(
            c,
            &members,
            events,
            catalog,
            cause,
            !alternatives.is_empty(),
        ),
        // no rule fits: the most severe primary, a specific kind before a generic one of the
        // same severity (the kind's own confidence in the catalog)
        None => match primaries.iter().copied().max_by_key(|&i| {
            (
                events[i].severity,
                (alone(catalog, &events[i]) * 100.0) as i64,
                std::cmp::Reverse(i),
            )
        }) {
            Some(i) => from_event(i, events, catalog),
            None if !discounted.is_empty() => {
                let d = discounted_only(&discounted, events, rules, catalog);
                alternatives = d.1;
                missing.push(d.2);
                d.0
            }
            None => {
                alternatives = suspects(&members, events);
                consequences_only(&members, events, kernel_inputs, job, &mut missing)
            }
        },
    };
    let consequences = consequences_of(&members, events, conseq, v.primary, preceded);
    let evidence = evidence_of(
        v.primary,
        cause,
        chosen.map(|c| c.rule),
        &members,
        events,
        conseq,
    );
    let why = picked.as_ref().and_then(|(_, why)| why.as_deref());
    let summary = full_summary(&v, why, &consequences, events, conseq, job);
    Incident {
        id: String::new(),
        events: members,
        primary: v.primary,
        rule: v.rule,
        layer: v.layer,
        confidence: (v.confidence.clamp(0.05, 0.99) * 100.0).round() / 100.0,
        summary,
        evidence,
        responsibility: v.responsibility,
        alternatives,
        actions: v.actions,
        hosts: t.hosts.into_iter().collect(),
        gpus: t.gpus.into_iter().collect(),
        ranks: t.ranks.into_iter().collect(),
        consequences,
        counts: t.counts,
        severity,
        missing,
        slowdown: None,
    }
}

/// Consequence counts by kind: members other than the primary (and the cause a rule named, with
/// its kinds on its host) that are consequences or lie in another layer than the primary.
fn consequences_of(
    members: &[usize],
    events: &[Event],
    conseq: &[bool],
    primary: Option<usize>,
    preceded: Option<(&crate::rules::Preceded, usize)>,
) -> BTreeMap<String, u64> {
    // the cause's kinds on its host (also below the cause's severity) come before, not after
    let is_cause = |i: usize| {
        preceded.is_some_and(|(p, e)| {
            p.kinds.contains(&events[i].kind) && events[i].host == events[e].host
        })
    };
    // counted under borrowed kinds, one String per kind
    let mut counts: crate::scan::FastMap<&str, u64> = Default::default();
    for &i in members {
        if Some(i) != primary
            && !is_cause(i)
            && (conseq[i] || primary.is_some_and(|p| events[p].layer != events[i].layer))
        {
            *counts.entry(events[i].kind.as_str()).or_default() += events[i].weight();
        }
    }
    counts
        .into_iter()
        .map(|(k, n)| (k.to_string(), n))
        .collect()
}

/// The verdict's summary with what the incident adds: why the cause displaced an earlier
/// candidate, the primary's rank (from the job's table), and the consequences that followed.
fn full_summary(
    v: &verdict::Verdict,
    why: Option<&str>,
    consequences: &BTreeMap<String, u64>,
    events: &[Event],
    conseq: &[bool],
    job: Option<&JobInfo>,
) -> String {
    let mut summary = v.summary.clone();
    if let Some(why) = why {
        summary.push_str(&format!(" (the cause before its consequence: {why})"));
    }
    if let (Some(p), Some(j)) = (v.primary, job) {
        let pe = &events[p];
        let rank = pe.rank.or_else(|| {
            j.ranks
                .iter()
                .find(|r| r.gpu.is_some() && r.gpu == pe.gpu && r.host == pe.host)
                .map(|r| r.rank)
        });
        if let Some(r) = rank.filter(|_| !summary.contains("(rank") && v.layer != Layer::Unknown) {
            summary.push_str(&format!(" (rank {r})"));
        }
    }
    let cons_total: u64 = consequences.values().sum();
    if cons_total > 0 && v.primary.is_some_and(|p| !conseq[p]) {
        let parts: Vec<String> = consequences
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        summary.push_str(&format!("; followed by {}", parts.join(", ")));
    }
    summary
}

/// The incident that decides the verdict: most severe, then most confident, then earliest.
pub fn top(incidents: &[Incident]) -> Option<&Incident> {
    incidents.iter().max_by(|a, b| {
        let ka = (
            a.severity,
            (a.layer != Layer::Unknown) as u8,
            (a.confidence * 100.0) as i64,
            std::cmp::Reverse(a.events.first().copied()),
        );
        let kb = (
            b.severity,
            (b.layer != Layer::Unknown) as u8,
            (b.confidence * 100.0) as i64,
            std::cmp::Reverse(b.events.first().copied()),
        );
        ka.cmp(&kb)
    })
}
