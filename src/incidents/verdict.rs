//! The verdict of one incident by its route: a rule through its event, the most severe event
//! when no rule fits, events that are safe to ignore on their own, or consequences alone; with
//! the runner-up layers, the counts and who must act.

use super::{cause, choose, confidence, reading, render, Alternative};
use crate::catalog::Catalog;
use crate::job::JobInfo;
use crate::model::Layer;
use crate::rules::{Rule, RuleSet};
use crate::timeline::Event;
use std::collections::{BTreeMap, BTreeSet};

/// The verdict part of an incident: layer, confidence, summary, who acts, what to do, the primary
/// event and the rule that named it.
pub(super) struct Verdict {
    pub(super) layer: Layer,
    pub(super) confidence: f64,
    pub(super) summary: String,
    pub(super) responsibility: String,
    pub(super) actions: Vec<String>,
    pub(super) primary: Option<usize>,
    pub(super) rule: Option<String>,
}

/// Hosts, GPUs, ranks and exact occurrence counts of an incident's members.
#[derive(Default)]
pub(super) struct Tally {
    pub(super) hosts: BTreeSet<String>,
    pub(super) gpus: BTreeSet<String>,
    pub(super) ranks: BTreeSet<i64>,
    pub(super) counts: BTreeMap<String, u64>,
}

/// `conseq` says per event whether the rules take it for a consequence.
pub(super) fn tally(members: &[usize], events: &[Event], conseq: &[bool]) -> Tally {
    // borrowed while counting (hashed: many members, few distinct values), owned and ordered
    // once per distinct value
    let mut hosts: std::collections::HashSet<&str, crate::scan::FastBuild> = Default::default();
    let mut gpus: std::collections::HashSet<&str, crate::scan::FastBuild> = Default::default();
    let mut ranks: BTreeSet<i64> = BTreeSet::new();
    let mut counts: crate::scan::FastMap<(&str, Option<i64>), u64> = Default::default();
    for &i in members {
        let e = &events[i];
        if let Some(h) = &e.host {
            hosts.insert(h);
        }
        if let Some(g) = e.gpu.as_ref().filter(|_| !conseq[i]) {
            gpus.insert(g);
        }
        if let Some(r) = e.rank {
            ranks.insert(r);
        }
        *counts.entry((e.kind, e.code)).or_default() += e.weight();
    }
    let mut t = Tally {
        hosts: hosts.into_iter().map(str::to_string).collect(),
        gpus: gpus.into_iter().map(str::to_string).collect(),
        ranks,
        counts: BTreeMap::new(),
    };
    for ((kind, code), n) in counts {
        let key = match code {
            Some(c) => format!("{kind}:{c}"),
            None => kind.to_string(),
        };
        *t.counts.entry(key).or_default() += n;
    }
    t
}

/// The other candidates' layers, one per layer, as runner-up explanations.
pub(super) fn alternatives_of(
    cands: &[choose::Candidate<'_>],
    chosen: Option<usize>,
    events: &[Event],
    catalog: &Catalog,
) -> Vec<Alternative> {
    let mut out: Vec<Alternative> = Vec::new();
    let Some(k) = chosen else { return out };
    let layer = rule_layer(cands[k].rule, &events[cands[k].event], catalog);
    if reading::by_event(cands[k].rule) {
        out = reading::alternatives(&events[cands[k].event], layer);
    }
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

/// A rule's layer for its event (`layer_from`: `caused_by_xid` reads it from the catalog,
/// `event` is the event's own reading, see [`super::reading`]).
pub(super) fn rule_layer(rule: &Rule, e: &Event, catalog: &Catalog) -> Layer {
    match rule.layer_from.as_deref() {
        Some("caused_by_xid") => e
            .attrs
            .get("caused_by_xid")
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(|n| catalog.xid.get(&n))
            .map_or(rule.layer, |x| x.layer),
        Some("event") => e.layer,
        _ => rule.layer,
    }
}

/// The verdict a rule gives through its event.
pub(super) fn from_rule(
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
    let layer = rule_layer(rule, &events[i], catalog);
    let responsibility = match reading::by_event(rule) {
        true => reading::responsibility(layer).to_string(),
        false => rule.responsibility.clone(),
    };
    Verdict {
        layer,
        confidence: confidence::of_rule(rule, i, members, events, has_alternatives),
        summary,
        responsibility,
        actions: rule.actions.clone(),
        primary: Some(i),
        rule: Some(rule.id.clone()),
    }
}

/// How far an event speaks for itself when no rule fits: the kind's confidence in the catalog
/// (0.3 for an error recognized but not understood), else 0.5.
pub(super) fn alone(catalog: &Catalog, e: &Event) -> f64 {
    catalog
        .kind
        .get(e.kind)
        .and_then(|k| k.confidence)
        .unwrap_or(0.5)
}

/// No rule fits but a primary fault is there: the most severe one speaks for itself.
pub(super) fn from_event(i: usize, events: &[Event], catalog: &Catalog) -> Verdict {
    let e = &events[i];
    let (responsibility, actions) = advice(catalog, e);
    Verdict {
        layer: e.layer,
        confidence: alone(catalog, e),
        summary: format!(
            "{}{}",
            catalog.title(e.kind, e.code),
            super::phrase::on_host(e.host.as_deref())
        ),
        responsibility,
        actions,
        primary: Some(i),
        rule: None,
    }
}

/// Only consequences were seen: say so, name the suspects the job's logs point at, and what
/// data would settle the cause.
pub(super) fn consequences_only(
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
        let exit: Vec<String> = e
            .code
            .map(|c| format!("exit code {c}"))
            .into_iter()
            .chain(e.attrs.get("signal").map(str::to_string))
            .collect();
        suspect = format!(
            "; torchrun names {}{} as the first failure{}",
            e.rank.map_or("a rank".to_string(), |r| format!("rank {r}")),
            super::phrase::on_host(e.host.as_deref()),
            if exit.is_empty() {
                String::new()
            } else {
                format!(" ({})", exit.join(", "))
            }
        );
    }
    if let Some(j) = job {
        if let Some((r, c)) = j.straggler {
            let host = j
                .ranks
                .iter()
                .find(|x| x.rank == r)
                .and_then(|x| x.host.clone());
            let on = super::phrase::on_host(host.as_deref());
            suspect = format!("; rank {r}{on} is behind the others (last completed collective {c}): look there first");
            missing.push(match host {
                Some(h) => {
                    format!("the kernel log and nvidia-bug-report of {h} (rank {r} fell behind)")
                }
                None => format!(
                    "the kernel log and nvidia-bug-report of the host of rank {r} (it fell behind)"
                ),
            });
        }
        if !j.silent_ranks.is_empty() && j.silent_ranks.len() <= 8 {
            let list: Vec<String> = j.silent_ranks.iter().map(|r| r.to_string()).collect();
            missing.push(format!("{} {} logged no timeout while the others did: their own logs and hosts' kernel logs", if list.len() == 1 { "rank" } else { "ranks" }, list.join(", ")));
        }
    }
    Verdict {
        layer: Layer::Unknown,
        confidence: 0.3,
        summary: format!(
            "Only consequences were seen ({} event{}, e.g. collective timeouts or process exits); the first fault is not in these inputs{suspect}",
            members.len(),
            if members.len() == 1 { "" } else { "s" }
        ),
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
pub(super) fn suspects(members: &[usize], events: &[Event]) -> Vec<Alternative> {
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
pub(super) fn benign<'c>(catalog: &'c Catalog, e: &Event) -> Option<&'c str> {
    // the details are looked at only for the kind that needs them
    let from_switch = e.kind == "nvlink_error" && e.attrs.contains_key("switch");
    catalog.benign(e.kind, e.code, from_switch)
}

/// Whether an event belongs to the bring-up of its host: this soon after the boot (uptime) or
/// after one of the driver loads `loads` on the host.
pub(super) fn at_bring_up(e: &Event, loads: &[&Event], rules: &RuleSet) -> bool {
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
pub(super) fn discounted_only(
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
    let title = catalog.title(e.kind, e.code);
    let on = super::phrase::on_host(e.host.as_deref());
    let when = if bring_up { " at bring-up" } else { "" };
    let mut alternatives = Vec::new();
    if bring_up {
        alternatives.push(Alternative {
            layer: Layer::DriverStack,
            confidence: 0.3,
            summary: format!("{n} events raised{when}{on}: a bring-up problem (driver configuration, firmware or virtualization mode) is likelier than {n} failing parts ({}:{})", e.source.path, e.source.line),
        });
    }
    alternatives.push(Alternative {
        layer: e.layer,
        confidence: 0.2,
        summary: format!("{title}{on} ({}:{})", e.source.path, e.source.line),
    });
    let reason = benign(catalog, e).unwrap_or_default();
    let note = format!("{n} events ({title}) were discounted: {reason}");
    let v = Verdict {
        layer: Layer::Unknown,
        confidence: 0.3,
        summary: format!("Only events that are safe to ignore on their own were seen{when}{on}: {n} × {title}"),
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

/// Responsibility and actions for an event from the catalog.
pub(super) fn advice(catalog: &Catalog, e: &Event) -> (String, Vec<String>) {
    if e.kind == "xid" {
        if let Some(x) = e.code.and_then(|c| catalog.xid.get(&c)) {
            return (x.responsibility.clone(), x.actions.clone());
        }
    }
    if let Some(k) = catalog.kind.get(e.kind) {
        return (k.responsibility.clone(), k.actions.clone());
    }
    (
        "operator".to_string(),
        vec!["Review the evidence lines".to_string()],
    )
}
