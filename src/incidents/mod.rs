//! Incidents: bursts of events grouped on one time axis, each with its primary fault named by the
//! rules, the consequences that followed, alternatives, and who must act.

use crate::catalog::Catalog;
use crate::job::JobInfo;
use crate::model::{Layer, Severity};
use crate::rules::{Match, Rule, RuleSet};
use crate::timeline::Event;
use std::collections::{BTreeMap, BTreeSet};

mod cause;
mod drift;
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

/// Distinct non-sympathetic Xid codes on a GPU (bus id on one host: identical servers share bus
/// ids), counted only when they span at least two layers (several memory Xids of one ECC event
/// are one fault, not a repeat offender).
fn distinct_codes_on_gpu(
    events: &[Event],
    members: &[usize],
    on: &Event,
    catalog: &Catalog,
) -> usize {
    let mut codes = BTreeSet::new();
    let mut layers = BTreeSet::new();
    for e in members.iter().map(|&i| &events[i]) {
        if e.kind == "xid"
            && e.gpu.is_some()
            && e.gpu == on.gpu
            && e.host == on.host
            && !catalog.is_sympathetic("xid", e.code)
        {
            if let Some(c) = e.code {
                codes.insert(c);
                layers.insert(e.layer);
            }
        }
    }
    if layers.len() >= 2 {
        codes.len()
    } else {
        0
    }
}

/// Distinct processes whose events fitting `m` name the same GPU (on the same host) and the same
/// GPC and TPC as `on`; 0 when `on` names no compute unit.
fn processes_on_unit(m: &Match, events: &[Event], members: &[usize], on: &Event) -> usize {
    let unit = |e: &Event| (e.attrs.get("gpc").cloned(), e.attrs.get("tpc").cloned());
    let (Some(_), Some(_), Some(_)) = (&on.gpu, on.attrs.get("gpc"), on.attrs.get("tpc")) else {
        return 0;
    };
    members
        .iter()
        .map(|&i| &events[i])
        .filter(|e| m.fits(e) && e.gpu == on.gpu && e.host == on.host && unit(e) == unit(on))
        .filter_map(|e| e.attrs.get("pid"))
        .collect::<BTreeSet<_>>()
        .len()
}

/// A collective's operation type and input size, as a watchdog line names them.
type OpAndSize<'a> = (Option<&'a String>, Option<&'a String>);

/// Ranks waited in different collectives: several operation types, or one sequence number with
/// different operations or sizes.
fn desync(events: &[Event], members: &[usize]) -> bool {
    let timeouts: Vec<&Event> = members
        .iter()
        .map(|&i| &events[i])
        .filter(|e| e.kind == "nccl_timeout")
        .collect();
    let ops: BTreeSet<&str> = timeouts
        .iter()
        .filter_map(|e| e.attrs.get("op").map(String::as_str))
        .collect();
    if ops.len() >= 2 {
        return true;
    }
    let mut per_seq: BTreeMap<&str, BTreeSet<OpAndSize>> = BTreeMap::new();
    for e in &timeouts {
        if let Some(seq) = e.attrs.get("seq") {
            per_seq
                .entry(seq.as_str())
                .or_default()
                .insert((e.attrs.get("op"), e.attrs.get("numel_in")));
        }
    }
    per_seq.values().any(|v| v.len() >= 2)
}

fn fits(rule: &Rule, e: &Event, events: &[Event], members: &[usize], catalog: &Catalog) -> bool {
    let m = &rule.pattern;
    if !m.fits(e) {
        return false;
    }
    if let Some(n) = m.min_distinct_codes_on_gpu {
        if e.gpu.is_none() || distinct_codes_on_gpu(events, members, e, catalog) < n {
            return false;
        }
    }
    if let Some(n) = m.min_processes_same_unit {
        if processes_on_unit(m, events, members, e) < n {
            return false;
        }
    }
    if let Some(n) = m.min_count {
        let seen: u64 = members
            .iter()
            .filter(|&&i| m.fits(&events[i]))
            .map(|&i| events[i].weight())
            .sum();
        if seen < n as u64 {
            return false;
        }
    }
    if let Some(p) = &m.preceded_by {
        if !members.iter().any(|&c| p.fits(&events[c], e)) {
            return false;
        }
    }
    match m.fact.as_deref() {
        Some("desync") => desync(events, members),
        Some(_) => false,
        None => true,
    }
}

/// Fills a rule's summary template from one event: {gpu} {host} {code} {title} {count} {rank};
/// {xid_title} is the Xid catalog's title of the event's code (for events that report an Xid
/// seen elsewhere, such as the device plugin's).
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
}

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
    let primaries: Vec<usize> = members
        .iter()
        .copied()
        .filter(|&i| !rules.is_consequence(&events[i]))
        .collect();
    let mut chosen: Option<(&Rule, usize)> = None;
    let mut alternatives: Vec<Alternative> = Vec::new();
    for rule in &rules.rules {
        let pool: &[usize] = if rule.pattern.on_consequences {
            &members
        } else {
            &primaries
        };
        if !rule.pattern.on_consequences && pool.is_empty() {
            continue;
        }
        let hit = pool
            .iter()
            .copied()
            .find(|&i| fits(rule, &events[i], events, &members, catalog));
        let Some(i) = hit else { continue };
        match chosen {
            None => chosen = Some((rule, i)),
            Some((c, _)) => {
                if rule.layer != c.layer && !alternatives.iter().any(|a| a.layer == rule.layer) {
                    alternatives.push(Alternative {
                        layer: rule.layer,
                        confidence: (rule.confidence * 0.4 * 100.0).round() / 100.0,
                        summary: format!(
                            "{} ({}:{})",
                            render(&rule.summary, &events[i], 1, catalog),
                            events[i].source.path,
                            events[i].source.line
                        ),
                    });
                }
            }
        }
    }
    let mut hosts: BTreeSet<String> = BTreeSet::new();
    let mut gpus: BTreeSet<String> = BTreeSet::new();
    let mut ranks: BTreeSet<i64> = BTreeSet::new();
    let mut consequences: BTreeMap<String, u64> = BTreeMap::new();
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for &i in &members {
        let e = &events[i];
        if let Some(h) = &e.host {
            hosts.insert(h.clone());
        }
        if let Some(g) = e.gpu.as_ref().filter(|_| !rules.is_consequence(e)) {
            gpus.insert(g.clone());
        }
        if let Some(r) = e.rank {
            ranks.insert(r);
        }
        let key = match e.code {
            Some(c) => format!("{}:{c}", e.kind),
            None => e.kind.clone(),
        };
        *counts.entry(key).or_default() += e.weight();
    }
    let mut missing = Vec::new();
    // the earlier event a rule names as the cause (a BMC alert before a GPU loss)
    let preceded = chosen.and_then(|(rule, i)| Some((rule.pattern.preceded_by.as_ref()?, i)));
    let cause = preceded.and_then(|(p, i)| cause::cause_of(p, i, events, &members));
    let (layer, confidence, summary, responsibility, actions, primary, rule_id) = match chosen {
        Some((rule, i)) => {
            let count: u64 = members
                .iter()
                .filter(|&&j| rule.pattern.fits(&events[j]))
                .map(|&j| events[j].weight())
                .sum();
            let mut conf = rule.confidence;
            if !alternatives.is_empty() {
                conf -= 0.1;
            }
            let mut summary = render(&rule.summary, &events[i], count, catalog);
            if let Some(c) = cause {
                summary = cause::fill(summary, &events[c], &events[i], catalog);
            }
            (
                rule.layer,
                conf,
                summary,
                rule.responsibility.clone(),
                rule.actions.clone(),
                Some(i),
                Some(rule.id.clone()),
            )
        }
        None => {
            // No rule fits: the most severe primary (a specific kind before a generic one of
            // the same severity), else only consequences were seen.
            let alone = |i: usize| {
                catalog
                    .kind
                    .get(&events[i].kind)
                    .and_then(|k| k.confidence)
                    .unwrap_or(0.5)
            };
            let best = primaries.iter().copied().max_by_key(|&i| {
                (
                    events[i].severity,
                    (alone(i) * 100.0) as i64,
                    std::cmp::Reverse(i),
                )
            });
            match best {
                Some(i) => {
                    let e = &events[i];
                    let (resp, acts) = advice(catalog, e);
                    (
                        e.layer,
                        alone(i),
                        format!(
                            "{} on {}",
                            catalog.title(&e.kind, e.code),
                            e.host.clone().unwrap_or_else(|| "(unknown host)".into())
                        ),
                        resp,
                        acts,
                        Some(i),
                        None,
                    )
                }
                None => {
                    if !kernel_inputs {
                        missing.push(
                            "no kernel log (dmesg, syslog or journal) of the job's hosts was given"
                                .to_string(),
                        );
                    }
                    missing.push(
                        "no GPU, host or network fault was found beneath the job's errors"
                            .to_string(),
                    );
                    let mut suspect = String::new();
                    if let Some(&i) = members.iter().find(|&&i| {
                        events[i].kind == "process_exit"
                            && events[i]
                                .attrs
                                .get("root_cause")
                                .is_some_and(|v| v == "true")
                    }) {
                        let e = &events[i];
                        suspect =
                            format!(
                            "; torchrun names rank {} on {} as the first failure (exit code {}{})",
                            e.rank.map_or("?".to_string(), |r| r.to_string()),
                            e.host.clone().unwrap_or_else(|| "an unknown host".into()),
                            e.code.map_or("?".to_string(), |c| c.to_string()),
                            e.attrs.get("signal").map(|s| format!(", {s}")).unwrap_or_default()
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
                            missing.push(format!("the kernel log and nvidia-bug-report of {host} (rank {r} fell behind)"));
                        }
                        if !j.silent_ranks.is_empty() && j.silent_ranks.len() <= 8 {
                            let list: Vec<String> =
                                j.silent_ranks.iter().map(|r| r.to_string()).collect();
                            missing.push(format!("rank(s) {} logged no timeout while the others did: their own logs and hosts' kernel logs", list.join(", ")));
                        }
                    }
                    let first = members.first().copied();
                    (
                        Layer::Unknown,
                        0.3,
                        format!("Only consequences were seen ({} events, e.g. collective timeouts or process exits); the first fault is not in these inputs{suspect}", members.len()),
                        "operator".to_string(),
                        vec![
                            "Collect dmesg/journal and nvidia-bug-report.log.gz from every host of the job for the time of the hang".to_string(),
                            "Compare each rank's last completed collective (the straggler is the suspect)".to_string(),
                        ],
                        first,
                        None,
                    )
                }
            }
        }
    };
    // the cause's kinds on its host (also below the cause's severity) come before, not after
    let is_cause = |i: usize| {
        preceded.is_some_and(|(p, e)| {
            p.kinds.contains(&events[i].kind) && events[i].host == events[e].host
        })
    };
    for &i in &members {
        if Some(i) != primary
            && !is_cause(i)
            && (rules.is_consequence(&events[i])
                || primary.is_some_and(|p| events[p].layer != events[i].layer))
        {
            *consequences.entry(events[i].kind.clone()).or_default() += events[i].weight();
        }
    }
    let mut evidence: Vec<usize> = primary.into_iter().chain(cause).collect();
    if let Some(p) = primary {
        let pe = &events[p];
        for &i in &members {
            if i == p || evidence.len() >= 12 {
                continue;
            }
            let e = &events[i];
            let named = chosen.is_some_and(|(r, _)| r.pattern.fits(e));
            let related = (e.gpu.is_some() && e.gpu == pe.gpu)
                || (e.kind == pe.kind && e.host == pe.host)
                || (e.kind == "pcie_aer" && e.host == pe.host)
                || (named && e.host == pe.host);
            // one line per kind and code and route (the OS's or the BMC's view; plus every PCIe
            // report): enough to show the chain
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
    }
    let mut summary = summary;
    if let (Some(p), Some(j)) = (primary, job) {
        let pe = &events[p];
        let rank = pe.rank.or_else(|| {
            j.ranks
                .iter()
                .find(|r| r.gpu.is_some() && r.gpu == pe.gpu && r.host == pe.host)
                .map(|r| r.rank)
        });
        if let Some(r) = rank.filter(|_| !summary.contains("(rank") && layer != Layer::Unknown) {
            summary.push_str(&format!(" (rank {r})"));
        }
    }
    let cons_total: u64 = consequences.values().sum();
    if cons_total > 0 && primary.is_some_and(|p| !rules.is_consequence(&events[p])) {
        let parts: Vec<String> = consequences
            .iter()
            .map(|(k, n)| format!("{k} ×{n}"))
            .collect();
        summary.push_str(&format!("; followed by {}", parts.join(", ")));
    }
    Incident {
        id: String::new(),
        events: members,
        primary,
        rule: rule_id,
        layer,
        confidence: (confidence.clamp(0.05, 0.99) * 100.0).round() / 100.0,
        summary,
        evidence,
        responsibility,
        alternatives,
        actions,
        hosts: hosts.into_iter().collect(),
        gpus: gpus.into_iter().collect(),
        ranks: ranks.into_iter().collect(),
        consequences,
        counts,
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
