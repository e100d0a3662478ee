//! Judging one incident: the rules' candidates among its members, cause before consequence,
//! then its verdict, consequences, evidence and summary.

use super::verdict::{
    alone, alternatives_of, benign, consequences_only, discounted_only, from_event, from_rule,
    suspects, tally, Verdict,
};
use super::{cause, choose, reading, Alternative, Incident};
use crate::catalog::Catalog;
use crate::job::JobInfo;
use crate::model::{Layer, Severity};
use crate::rules::{Rule, RuleSet};
use crate::timeline::Event;
use rayon::prelude::*;
use std::collections::BTreeMap;

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
        if evidence.len() >= 12 {
            break;
        }
        if i == p {
            continue;
        }
        let e = &events[i];
        if conseq[i] {
            continue;
        }
        // the cheap tests first: most members of a large incident are not related
        let related = (e.gpu.is_some() && e.gpu == pe.gpu)
            || (e.kind == pe.kind && e.host == pe.host)
            || (e.kind == "pcie_aer" && e.host == pe.host)
            || (e.host == pe.host && chosen.is_some_and(|r| r.pattern.fits(e)));
        if !related {
            continue;
        }
        let seen = evidence.iter().any(|&j| {
            events[j].source == e.source
                || (e.kind != "pcie_aer"
                    && events[j].kind == e.kind
                    && events[j].code == e.code
                    && events[j].bmc == e.bmc)
        });
        if !seen {
            evidence.push(i);
        }
    }
    evidence
}

/// Names one incident's cause: candidates from the rules, cause before consequence, then the
/// verdict, its consequences, evidence and summary. `conseq` says per event whether the rules
/// take it for a consequence.
pub(super) fn judge(
    members: Vec<usize>,
    events: &[Event],
    (rules, conseq): (&RuleSet, &[bool]),
    catalog: &Catalog,
    kernel_inputs: bool,
    job: Option<&JobInfo>,
) -> Incident {
    let d = decide(
        &members,
        events,
        (rules, conseq),
        catalog,
        (kernel_inputs, job),
    );
    let consequences = consequences_of(&members, events, conseq, d.v.primary, d.preceded);
    let evidence = evidence_of(d.v.primary, d.cause, d.rule, &members, events, conseq);
    let summary = full_summary(&d.v, d.why.as_deref(), &consequences, events, conseq, job);
    let t = tally(&members, events, conseq);
    let severity = members
        .iter()
        .map(|&i| events[i].severity)
        .max()
        .unwrap_or(Severity::Warning);
    Incident {
        id: String::new(),
        events: members,
        primary: d.v.primary,
        rule: d.v.rule,
        layer: d.v.layer,
        confidence: (d.v.confidence.clamp(0.05, 0.99) * 100.0).round() / 100.0,
        summary,
        evidence,
        responsibility: d.v.responsibility,
        alternatives: d.alternatives,
        actions: d.v.actions,
        hosts: t.hosts.into_iter().collect(),
        gpus: t.gpus.into_iter().collect(),
        ranks: t.ranks.into_iter().collect(),
        consequences,
        counts: t.counts,
        severity,
        missing: d.missing,
        slowdown: None,
        hang: None,
    }
}

/// What judging an incident settled: the verdict and what it rests on.
struct Decision<'r> {
    v: Verdict,
    alternatives: Vec<Alternative>,
    /// What the logs lack to say more (from a verdict no rule chose).
    missing: Vec<String>,
    /// The rule that chose the verdict, if one did.
    rule: Option<&'r Rule>,
    /// The earlier event that rule names as the cause (a BMC alert before a GPU loss), and
    /// the rule's clause with the event it judged.
    cause: Option<usize>,
    preceded: Option<(&'r crate::rules::Preceded, usize)>,
    /// Why the rule was preferred to the others that matched.
    why: Option<String>,
}

/// The verdict on `members`: the rule a candidate of theirs matched, picked among the others,
/// or, with none, the verdict from the events alone ([`without_rule`]).
fn decide<'r>(
    members: &[usize],
    events: &[Event],
    (rules, conseq): (&'r RuleSet, &[bool]),
    catalog: &Catalog,
    (kernel_inputs, job): (bool, Option<&JobInfo>),
) -> Decision<'r> {
    let (discounted, primaries) = split_members(members, events, catalog, conseq);
    let cands = choose::candidates(members, &primaries, events, rules, catalog);
    let picked = choose::pick(&cands, events, rules);
    let chosen = picked.as_ref().map(|(k, _)| cands[*k]);
    let alternatives = alternatives_of(&cands, picked.as_ref().map(|p| p.0), events, catalog);
    let preceded = chosen.and_then(|c| Some((c.rule.pattern.preceded_by.as_ref()?, c.event)));
    let cause = preceded.and_then(|(p, i)| cause::cause_of(p, i, events, members));
    let mut cause = cause;
    let (v, alternatives, missing) = match chosen {
        Some(c) => {
            let mut v = from_rule(c, members, events, catalog, cause, !alternatives.is_empty());
            let mut alternatives = alternatives;
            if reading::by_event(c.rule) {
                cause =
                    settle(&mut v, &mut alternatives, members, events, conseq, catalog).or(cause);
            }
            (v, alternatives, Vec::new())
        }
        None => {
            let (v, alt, missing) = without_rule(
                (members, &primaries, &discounted),
                events,
                (rules, catalog),
                kernel_inputs,
                job,
            );
            (v, alt.unwrap_or(alternatives), missing)
        }
    };
    Decision {
        v,
        alternatives,
        missing,
        rule: chosen.map(|c| c.rule),
        cause,
        preceded,
        why: picked.and_then(|(_, why)| why),
    }
}

/// A verdict whose event's code cannot name the layer (`unknown` with candidates) takes the
/// layer of another fault of the incident that lies in one of its candidate layers; returns that
/// fault (cited as the cause).
fn settle(
    v: &mut Verdict,
    alternatives: &mut Vec<Alternative>,
    members: &[usize],
    events: &[Event],
    conseq: &[bool],
    catalog: &Catalog,
) -> Option<usize> {
    let p = v.primary?;
    let c = reading::context_for(p, members, events, conseq)?;
    let layer = events[c].layer;
    alternatives.retain(|a| a.layer != layer);
    alternatives.insert(
        0,
        Alternative {
            layer: Layer::Unknown,
            confidence: 0.2,
            summary: format!(
                "the code alone does not name the layer ({}:{})",
                events[p].source.path, events[p].source.line
            ),
        },
    );
    v.layer = layer;
    v.confidence = 0.45;
    v.responsibility = reading::responsibility(layer).to_string();
    v.summary
        .push_str(&reading::settled_by(&events[c], catalog));
    Some(c)
}

/// The members the catalog calls benign (discounted), and the others that the rules do not take
/// for a consequence (the primaries a verdict may start from).
fn split_members(
    members: &[usize],
    events: &[Event],
    catalog: &Catalog,
    conseq: &[bool],
) -> (Vec<usize>, Vec<usize>) {
    // asked once per member (in parallel on a large incident)
    let is_benign: Vec<bool> = members
        .par_iter()
        .with_min_len(4096)
        .map(|&i| benign(catalog, &events[i]).is_some())
        .collect();
    let (mut discounted, mut primaries) = (Vec::new(), Vec::new());
    for (&i, &b) in members.iter().zip(&is_benign) {
        if b {
            discounted.push(i);
        } else if !conseq[i] {
            primaries.push(i);
        }
    }
    (discounted, primaries)
}

/// The verdict when no rule fits: the most severe primary, a specific kind before a generic one
/// of the same severity (the kind's own confidence in the catalog); else what the discounted
/// events or the consequences alone say. Also the alternatives that replace the rules' (if
/// any) and the missing data it names.
fn without_rule(
    (members, primaries, discounted): (&[usize], &[usize], &[usize]),
    events: &[Event],
    (rules, catalog): (&RuleSet, &Catalog),
    kernel_inputs: bool,
    job: Option<&JobInfo>,
) -> (Verdict, Option<Vec<Alternative>>, Vec<String>) {
    let best = primaries.iter().copied().max_by_key(|&i| {
        (
            events[i].severity,
            (alone(catalog, &events[i]) * 100.0) as i64,
            std::cmp::Reverse(i),
        )
    });
    if let Some(i) = best {
        return (from_event(i, events, catalog), None, Vec::new());
    }
    if !discounted.is_empty() {
        let (v, alternatives, missing) = discounted_only(discounted, events, rules, catalog);
        return (v, Some(alternatives), vec![missing]);
    }
    let mut missing = Vec::new();
    let v = consequences_only(members, events, kernel_inputs, job, &mut missing);
    (v, Some(suspects(members, events)), missing)
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
            p.kinds.iter().any(|k| k == events[i].kind) && events[i].host == events[e].host
        })
    };
    // counted under borrowed kinds, one String per kind
    let mut counts: crate::scan::FastMap<&str, u64> = Default::default();
    for &i in members {
        if Some(i) != primary
            && !is_cause(i)
            && (conseq[i] || primary.is_some_and(|p| events[p].layer != events[i].layer))
        {
            *counts.entry(events[i].kind).or_default() += events[i].weight();
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
    v: &Verdict,
    why: Option<&str>,
    consequences: &BTreeMap<String, u64>,
    events: &[Event],
    conseq: &[bool],
    job: Option<&JobInfo>,
) -> String {
    let mut summary = v.summary.clone();
    if let Some(why) = why {
        summary.push_str(&format!(" — read as the cause because {why}"));
    }
    if let (Some(p), Some(j)) = (v.primary, job) {
        let pe = &events[p];
        let rank = pe.rank.or_else(|| {
            j.ranks
                .iter()
                .find(|r| {
                    r.gpu.is_some()
                        && r.gpu.as_deref() == pe.gpu.as_deref()
                        && r.host.as_deref() == pe.host.as_deref()
                })
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
