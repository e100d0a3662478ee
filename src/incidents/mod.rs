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
    let mut incidents: Vec<Incident> = merged
        .into_iter()
        .map(|mut g| {
            g.sort_unstable();
            judge(g, events, rules, catalog, kernel_inputs, job)
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
            e.attrs.get("caused_by_xid").map_or("", String::as_str),
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
            e.attrs
                .get("frames")
                .map_or("no frames shown", String::as_str),
        )
}

/// The verdict part of an incident: layer, confidence, summary, who acts, what to do, the primary
/// event and the rule that named it.
struct Verdict {
    layer: Layer,
    confidence: f64,
    summary: String,
    responsibility: String,
    actions: Vec<String>,
    primary: Option<usize>,
    rule: Option<String>,
}

/// Hosts, GPUs, ranks and exact occurrence counts of an incident's members.
#[derive(Default)]
struct Tally {
    hosts: BTreeSet<String>,
    gpus: BTreeSet<String>,
    ranks: BTreeSet<i64>,
    counts: BTreeMap<String, u64>,
}

fn tally(members: &[usize], events: &[Event], rules: &RuleSet) -> Tally {
    let mut t = Tally::default();
    for &i in members {
        let e = &events[i];
        if let Some(h) = &e.host {
            t.hosts.insert(h.clone());
        }
        if let Some(g) = e.gpu.as_ref().filter(|_| !rules.is_consequence(e)) {
            t.gpus.insert(g.clone());
        }
        if let Some(r) = e.rank {
            t.ranks.insert(r);
        }
        let key = match e.code {
            Some(c) => format!("{}:{c}", e.kind),
            None => e.kind.clone(),
        };
        *t.counts.entry(key).or_default() += e.weight();
    }
    t
}

/// The other candidates' layers, one per layer, as runner-up explanations.
fn alternatives_of(
    cands: &[choose::Candidate<'_>],
    chosen: Option<usize>,
    events: &[Event],
    catalog: &Catalog,
) -> Vec<Alternative> {
    let mut out: Vec<Alternative> = Vec::new();
    let Some(k) = chosen else { return out };
    let layer = rule_layer(cands[k].rule, &events[cands[k].event], catalog);
    for (j, c) in cands.iter().enumerate() {
        let l = rule_layer(c.rule, &events[c.event], catalog);
        if j == k || l == layer || out.iter().any(|a| a.layer == l) {
            continue;
        }
        let e = &events[c.event];
        out.push(Alternative {
            layer: l,
            confidence: (c.rule.confidence * 0.4 * 100.0).round() / 100.0,
            summary: format!(
                "{} ({}:{})",
                render(&c.rule.summary, e, 1, catalog),
                e.source.path,
                e.source.line
            ),
        });
    }
    out
}

/// A rule's layer for its event (`layer_from` reads it from the catalog).
fn rule_layer(rule: &Rule, e: &Event, catalog: &Catalog) -> Layer {
    match rule.layer_from.as_deref() {
        Some("caused_by_xid") => e
            .attrs
            .get("caused_by_xid")
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(|n| catalog.xid.get(&n))
            .map_or(rule.layer, |x| x.layer),
        _ => rule.layer,
    }
}

/// The verdict a rule gives through its event.
fn from_rule(
    c: choose::Candidate<'_>,
    members: &[usize],
    events: &[Event],
    catalog: &Catalog,
    cause: Option<usize>,
    has_alternatives: bool,
) -> Verdict {
    let (rule, i) = (c.rule, c.event);
    let count: u64 = members
        .iter()
        .filter(|&&j| rule.pattern.fits(&events[j]))
        .map(|&j| events[j].weight())
        .sum();
    let mut summary = render(&rule.summary, &events[i], count, catalog);
    if let Some(c) = cause {
        summary = cause::fill(summary, &events[c], &events[i], catalog);
    }
    Verdict {
        layer: rule_layer(rule, &events[i], catalog),
        confidence: confidence::of_rule(rule, i, members, events, has_alternatives),
        summary,
        responsibility: rule.responsibility.clone(),
        actions: rule.actions.clone(),
        primary: Some(i),
        rule: Some(rule.id.clone()),
    }
}

/// How far an event speaks for itself when no rule fits: the kind's confidence in the catalog
/// (0.3 for an error recognized but not understood), else 0.5.
fn alone(catalog: &Catalog, e: &Event) -> f64 {
    catalog
        .kind
        .get(&e.kind)
        .and_then(|k| k.confidence)
        .unwrap_or(0.5)
}

/// No rule fits but a primary fault is there: the most severe one speaks for itself.
fn from_event(i: usize, events: &[Event], catalog: &Catalog) -> Verdict {
    let e = &events[i];
    let (responsibility, actions) = advice(catalog, e);
    Verdict {
        layer: e.layer,
        confidence: alone(catalog, e),
        summary: format!(
            "{} on {}",
            catalog.title(&e.kind, e.code),
            e.host.clone().unwrap_or_else(|| "(unknown host)".into())
        ),
        responsibility,
        actions,
        primary: Some(i),
        rule: None,
    }
}

/// Only consequences were seen: say so, name the suspects the job's logs point at, and what
/// data would settle the cause.
fn consequences_only(
    members: &[usize],
    events: &[Event],
    kernel_inputs: bool,
    job: Option<&JobInfo>,
    missing: &mut Vec<String>,
) -> Verdict {
    if !kernel_inputs {
        missing.push(
            "no kernel log (dmesg, syslog or journal) of the job's hosts was given".to_string(),
        );
    }
    missing.push("no GPU, host or network fault was found beneath the job's errors".to_string());
    let mut suspect = String::new();
    if let Some(&i) = members.iter().find(|&&i| {
        events[i].kind == "process_exit"
            && events[i]
                .attrs
                .get("root_cause")
                .is_some_and(|v| v == "true")
    }) {
        let e = &events[i];
        suspect = format!(
            "; torchrun names rank {} on {} as the first failure (exit code {}{})",
            e.rank.map_or("?".to_string(), |r| r.to_string()),
            e.host.clone().unwrap_or_else(|| "an unknown host".into()),
            e.code.map_or("?".to_string(), |c| c.to_string()),
            e.attrs
                .get("signal")
                .map(|s| format!(", {s}"))
                .unwrap_or_default()
        );
    }
    if let Some(j) = job {
        if let Some((r, c)) = j.straggler {
            let host = j
                .ranks
                .iter()
                .find(|x| x.rank == r)
                .and_then(|x| x.host.clone())
                .unwrap_or_else(|| "an unknown host".into());
            suspect = format!("; rank {r} on {host} is behind the others (last completed collective {c}): look there first");
            missing.push(format!(
                "the kernel log and nvidia-bug-report of {host} (rank {r} fell behind)"
            ));
        }
        if !j.silent_ranks.is_empty() && j.silent_ranks.len() <= 8 {
            let list: Vec<String> = j.silent_ranks.iter().map(|r| r.to_string()).collect();
            missing.push(format!("rank(s) {} logged no timeout while the others did: their own logs and hosts' kernel logs", list.join(", ")));
        }
    }
    Verdict {
        layer: Layer::Unknown,
        confidence: 0.3,
        summary: format!("Only consequences were seen ({} events, e.g. collective timeouts or process exits); the first fault is not in these inputs{suspect}", members.len()),
        responsibility: "operator".to_string(),
        actions: vec![
            "Collect dmesg/journal and nvidia-bug-report.log.gz from every host of the job for the time of the hang".to_string(),
            "Compare each rank's last completed collective (the straggler is the suspect)".to_string(),
        ],
        primary: members.first().copied(),
        rule: None,
    }
}

/// The likeliest layers beneath consequences alone, ranked: transport errors point at the
/// network first; collective timeouts without them at a rank that stopped calling collectives
/// (a hang, a desync, uneven work) first.
fn suspects(members: &[usize], events: &[Event]) -> Vec<Alternative> {
    let first = |kind: &str| members.iter().map(|&i| &events[i]).find(|e| e.kind == kind);
    let at = |e: &Event| format!(" ({}:{})", e.source.path, e.source.line);
    let app = |e: &Event, c: f64| Alternative {
        layer: Layer::Application,
        confidence: c,
        summary: format!(
            "a rank stopped calling collectives (a hang, a desync or uneven work between ranks){}",
            at(e)
        ),
    };
    let net = |e: &Event, c: f64| Alternative {
        layer: Layer::NetworkStorage,
        confidence: c,
        summary: format!(
            "the transport between the ranks failed (NCCL network errors){}",
            at(e)
        ),
    };
    match (first("nccl_error"), first("nccl_timeout")) {
        (Some(e), t) => vec![net(e, 0.25), app(t.unwrap_or(e), 0.15)],
        (None, Some(t)) => vec![app(t, 0.25), net(t, 0.15)],
        (None, None) => Vec::new(),
    }
}

/// Why an event is safe to ignore on its own (the catalog says so), if it is.
fn benign<'c>(catalog: &'c Catalog, e: &Event) -> Option<&'c str> {
    catalog.benign(&e.kind, e.code, e.attrs.contains_key("switch"))
}

/// Whether an event belongs to the bring-up of its host: this soon after the boot (uptime) or
/// after one of the driver loads `loads` on the host.
fn at_bring_up(e: &Event, loads: &[&Event], rules: &RuleSet) -> bool {
    let window = rules.grouping.bring_up_s.max(0) as u64 * 1_000_000;
    if e.uptime_us.is_some_and(|u| u <= window) {
        return true;
    }
    loads.iter().any(|d| {
        d.host == e.host
            && match (d.time_us, e.time_us, d.uptime_us, e.uptime_us) {
                (Some(a), Some(b), _, _) => (0..=window as i64).contains(&(b - a)),
                (_, _, Some(a), Some(b)) => d.boot == e.boot && b >= a && b - a <= window,
                _ => false,
            }
    })
}

/// Only events that are safe to ignore on their own were seen: the layer is `unknown`, with the
/// readings ranked (a flood at bring-up points at the bring-up, i.e. the driver stack, before
/// the parts that raised them), and a note on why they were discounted.
fn discounted_only(
    discounted: &[usize],
    events: &[Event],
    rules: &RuleSet,
    catalog: &Catalog,
) -> (Verdict, Vec<Alternative>, String) {
    let first = discounted[0];
    let e = &events[first];
    let n: u64 = discounted.iter().map(|&i| events[i].weight()).sum();
    let loads: Vec<&Event> = events.iter().filter(|d| d.kind == "driver_load").collect();
    let bring_up = discounted
        .iter()
        .all(|&i| at_bring_up(&events[i], &loads, rules));
    let title = catalog.title(&e.kind, e.code);
    let host = e.host.clone().unwrap_or_else(|| "(unknown host)".into());
    let when = if bring_up { " at bring-up" } else { "" };
    let mut alternatives = Vec::new();
    if bring_up {
        alternatives.push(Alternative {
            layer: Layer::DriverStack,
            confidence: 0.3,
            summary: format!("{n} events raised{when} on {host}: a bring-up problem (driver configuration, firmware or virtualization mode) is likelier than {n} failing parts ({}:{})", e.source.path, e.source.line),
        });
    }
    alternatives.push(Alternative {
        layer: e.layer,
        confidence: 0.2,
        summary: format!("{title} on {host} ({}:{})", e.source.path, e.source.line),
    });
    let reason = benign(catalog, e).unwrap_or_default();
    let note = format!("{n} events ({title}) were discounted: {reason}");
    let v = Verdict {
        layer: Layer::Unknown,
        confidence: 0.3,
        summary: format!("Only events that are safe to ignore on their own were seen{when} on {host}: {n} × {title}"),
        responsibility: "operator".to_string(),
        actions: vec![
            "Compare with a healthy node of the same model: if it raises none of these at driver load, check the driver version, firmware and virtualization settings of this one".to_string(),
            "Watch for a fatal code on the same links or switches".to_string(),
        ],
        primary: Some(first),
        rule: None,
    };
    (v, alternatives, note)
}

/// The evidence: the primary, the cause a rule named, then related events (same GPU, same kind on
/// the host, PCIe reports of the host, other events the rule fits), one per kind, code and route.
fn evidence_of(
    primary: Option<usize>,
    cause: Option<usize>,
    chosen: Option<&Rule>,
    members: &[usize],
    events: &[Event],
    rules: &RuleSet,
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
        if related && !seen && !rules.is_consequence(e) {
            evidence.push(i);
        }
    }
    evidence
}

/// Names one incident's cause: candidates from the rules, cause before consequence, then the
/// verdict, its consequences, evidence and summary.
fn judge(
    members: Vec<usize>,
    events: &[Event],
    rules: &RuleSet,
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
        .filter(|&i| !rules.is_consequence(&events[i]) && benign(catalog, &events[i]).is_none())
        .collect();
    let cands = choose::candidates(&members, &primaries, events, rules, catalog);
    let picked = choose::pick(&cands, events, rules);
    let chosen = picked.as_ref().map(|(k, _)| cands[*k]);
    let mut alternatives = alternatives_of(&cands, picked.as_ref().map(|p| p.0), events, catalog);
    let t = tally(&members, events, rules);
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
    // the cause's kinds on its host (also below the cause's severity) come before, not after
    let is_cause = |i: usize| {
        preceded.is_some_and(|(p, e)| {
            p.kinds.contains(&events[i].kind) && events[i].host == events[e].host
        })
    };
    let mut consequences: BTreeMap<String, u64> = BTreeMap::new();
    for &i in &members {
        if Some(i) != v.primary
            && !is_cause(i)
            && (rules.is_consequence(&events[i])
                || v.primary
                    .is_some_and(|p| events[p].layer != events[i].layer))
        {
            *consequences.entry(events[i].kind.clone()).or_default() += events[i].weight();
        }
    }
    let evidence = evidence_of(
        v.primary,
        cause,
        chosen.map(|c| c.rule),
        &members,
        events,
        rules,
    );
    let mut summary = v.summary;
    if let Some((_, Some(why))) = &picked {
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
    if cons_total > 0 && v.primary.is_some_and(|p| !rules.is_consequence(&events[p])) {
        let parts: Vec<String> = consequences
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        summary.push_str(&format!("; followed by {}", parts.join(", ")));
    }
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

/// Responsibility and actions for an event from the catalog.
fn advice(catalog: &Catalog, e: &Event) -> (String, Vec<String>) {
    if e.kind == "xid" {
        if let Some(x) = e.code.and_then(|c| catalog.xid.get(&c)) {
            return (x.responsibility.clone(), x.actions.clone());
        }
    }
    if let Some(k) = catalog.kind.get(&e.kind) {
        return (k.responsibility.clone(), k.actions.clone());
    }
    (
        "operator".to_string(),
        vec!["Review the evidence lines".to_string()],
    )
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
