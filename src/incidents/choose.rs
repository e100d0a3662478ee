//! Cause before consequence: every rule that fits an incident offers a candidate (its earliest
//! fitting event); a candidate whose event another candidate's event explains (the `[[explains]]`
//! tables of the rules, or an event that names the Xid it was caused by) cannot name the cause,
//! whatever the order of the rules. The order decides only among the candidates nothing explains.

use super::facts::{Facts, RuleFacts};
use crate::catalog::Catalog;
use crate::rules::{Explains, Rule, RuleSet};
use crate::scan::FastMap as HashMap;
use crate::timeline::Event;

/// A rule that fits an incident, with the event it fits first.
#[derive(Clone, Copy, Debug)]
pub(super) struct Candidate<'r> {
    /// The rule.
    pub rule: &'r Rule,
    /// Index of its event in the timeline.
    pub event: usize,
}

/// A pool of events indexed by kind and by (kind, code): a rule looks only at the events its
/// kinds and codes allow, so finding each rule's first fitting event stays near-linear in the
/// events (a scan of the whole pool per rule was rules × events). The index is one list of
/// positions in `all`, grouped by (kind, code) and in pool order within a group: four bytes per
/// member, as a pool of a long timeline holds every member.
struct Pool<'e> {
    all: &'e [usize],
    /// Positions in `all` (`u32`: events are numbered in `u32`), grouped as said above.
    order: Vec<u32>,
    /// The groups of each kind (ranges of `order`, one per code and one for no code).
    by_kind: HashMap<&'e str, Vec<std::ops::Range<usize>>>,
    /// The group of each kind and code.
    by_code: HashMap<(&'e str, i64), std::ops::Range<usize>>,
}

impl<'e> Pool<'e> {
    fn new(all: &'e [usize], events: &'e [Event]) -> Pool<'e> {
        // kinds are interned: each event's kind is found by its text's place (no text hashed or
        // compared per event), and the few places resolved to their texts once
        let mut slots: HashMap<(usize, usize), usize> = HashMap::default();
        let mut names: Vec<&'e str> = Vec::new();
        let mut last: Option<((usize, usize), usize)> = None;
        let mut slot_of: Vec<u32> = Vec::with_capacity(all.len());
        for &i in all {
            let kind = events[i].kind;
            let place = (kind.as_ptr() as usize, kind.len());
            let slot = match last {
                Some((p, s)) if p == place => s,
                _ => {
                    let s = *slots.entry(place).or_insert_with(|| {
                        names.iter().position(|n| *n == kind).unwrap_or_else(|| {
                            names.push(kind);
                            names.len() - 1
                        })
                    });
                    last = Some((place, s));
                    s
                }
            };
            slot_of.push(slot as u32);
        }
        // grouped by a stable sort of the positions (pool order within a group), with no key
        // list beside them
        let group = |pos: u32| (slot_of[pos as usize], events[all[pos as usize]].code);
        let mut order: Vec<u32> = (0..all.len()).map(|p| p as u32).collect();
        order.sort_by_key(|&pos| group(pos));
        let mut by_kind: HashMap<&'e str, Vec<std::ops::Range<usize>>> = HashMap::default();
        let mut by_code = HashMap::default();
        let mut start = 0;
        for (k, &pos) in order.iter().enumerate() {
            let (slot, code) = group(pos);
            let ends = order.get(k + 1).is_none_or(|&n| group(n) != (slot, code));
            if ends {
                let (name, range) = (names[slot as usize], start..k + 1);
                by_kind.entry(name).or_default().push(range.clone());
                if let Some(c) = code {
                    by_code.insert((name, c), range);
                }
                start = k + 1;
            }
        }
        Pool {
            all,
            order,
            by_kind,
            by_code,
        }
    }

    /// The first event of the pool (in pool order) that `ok` accepts among those whose kind and
    /// code `rule` allows.
    fn first(&self, rule: &Rule, mut ok: impl FnMut(usize) -> bool) -> Option<usize> {
        let m = &rule.pattern;
        let groups: Vec<&std::ops::Range<usize>> = if !m.xid.is_empty() || !m.sxid.is_empty() {
            let (kind, codes) = if m.xid.is_empty() {
                ("sxid", &m.sxid)
            } else {
                ("xid", &m.xid)
            };
            codes
                .iter()
                .filter_map(|&c| self.by_code.get(&(kind, c)))
                .collect()
        } else if !m.kinds.is_empty() {
            m.kinds
                .iter()
                .filter_map(|k| self.by_kind.get(k.as_str()))
                .flatten()
                .collect()
        } else {
            return self.all.iter().copied().find(|&i| ok(i));
        };
        // the earliest accepted position over the groups (a code listed twice is looked at once)
        let mut best: Option<u32> = None;
        for g in groups {
            let limit = best.unwrap_or(u32::MAX);
            if let Some(&pos) = self.order[g.clone()]
                .iter()
                .take_while(|&&pos| pos < limit)
                .find(|&&pos| ok(self.all[pos as usize]))
            {
                best = Some(pos);
            }
        }
        best.map(|pos| self.all[pos as usize])
    }
}

/// One candidate per fitting rule, in rule order.
pub(super) fn candidates<'r>(
    members: &[usize],
    primaries: &[usize],
    events: &[Event],
    rules: &'r RuleSet,
    catalog: &Catalog,
) -> Vec<Candidate<'r>> {
    let mut facts = Facts::new(events, members, catalog);
    let mut out = Vec::new();
    // only a named cause the catalog knows, and not itself a follow-on, is informative
    let informative = |e: &Event| {
        e.attrs
            .get("caused_by_xid")
            .and_then(|v| v.parse::<i64>().ok())
            .and_then(|n| catalog.xid.get(&n))
            .is_some_and(|x| !x.sympathetic)
    };
    let (all, prim) = (Pool::new(members, events), Pool::new(primaries, events));
    for rule in &rules.rules {
        let by_named_cause = rule.layer_from.as_deref() == Some("caused_by_xid");
        let pool = if rule.pattern.on_consequences || by_named_cause {
            &all
        } else {
            &prim
        };
        let mut rf = RuleFacts::default();
        if let Some(i) = pool.first(rule, |i| {
            (!by_named_cause || informative(&events[i])) && facts.fits(rule, &mut rf, i)
        }) {
            out.push(Candidate { rule, event: i });
        }
    }
    out
}

/// Whether `cause` comes no later than `effect` (plus `after_s`): by wall time when both have
/// one, by uptime within one boot of one host, else by timeline order.
fn no_later(cause: &Event, effect: &Event, ci: usize, ei: usize, after_s: i64) -> bool {
    match (cause.time_us, effect.time_us) {
        (Some(c), Some(e)) => c <= e + after_s.max(0) * 1_000_000,
        _ => match (cause.uptime_us, effect.uptime_us) {
            (Some(c), Some(e)) if cause.host == effect.host && cause.boot == effect.boot => c <= e,
            _ => ci <= ei,
        },
    }
}

/// Same host (or no host named by either), and the same GPU when both name one.
fn same_place(cause: &Event, effect: &Event) -> bool {
    let host = cause.host.is_none() || effect.host.is_none() || cause.host == effect.host;
    let gpu = match (&cause.gpu, &effect.gpu) {
        (Some(a), Some(b)) => a == b,
        _ => true,
    };
    host && gpu
}

/// The `[[explains]]` entry by which `events[ci]` explains `events[ei]`, if any.
pub(super) fn explains<'a>(
    table: &'a [Explains],
    events: &[Event],
    ci: usize,
    ei: usize,
) -> Option<&'a Explains> {
    if ci == ei {
        return None;
    }
    let (c, e) = (&events[ci], &events[ei]);
    // two readings of one record (an ECC error and the CUDA error it was reported as) are one
    // observation: neither explains the other
    if !same_place(c, e) || (c.input == e.input && c.source.line == e.source.line) {
        return None;
    }
    table.iter().find(|x| {
        x.cause.iter().any(|k| k == c.kind)
            && x.effect.iter().any(|k| k == e.kind)
            && (x.cause_min_severity.is_none_or(|s| c.severity >= s))
            && no_later(c, e, ci, ei, x.after_s)
    })
}

/// Whether `events[ei]` names the Xid it was caused by and `events[ci]` is that Xid.
pub(super) fn named_cause(events: &[Event], ci: usize, ei: usize) -> bool {
    let (c, e) = (&events[ci], &events[ei]);
    let Some(n) = e
        .attrs
        .get("caused_by_xid")
        .and_then(|v| v.parse::<i64>().ok())
    else {
        return false;
    };
    c.kind == "xid" && c.code == Some(n) && same_place(c, e) && ci != ei
}

/// Index of the candidate that names the cause: the first in rule order that no other
/// candidate's event explains; with a reason when it displaced an earlier candidate.
pub(super) fn pick(
    cands: &[Candidate<'_>],
    events: &[Event],
    rules: &RuleSet,
) -> Option<(usize, Option<String>)> {
    let explained_by = |k: usize| -> Option<(usize, String)> {
        let ei = cands[k].event;
        cands.iter().enumerate().find_map(|(j, c)| {
            if j == k || c.event == ei {
                return None;
            }
            if named_cause(events, c.event, ei) {
                return Some((j, "the driver names it as the cause".to_string()));
            }
            explains(&rules.explains, events, c.event, ei).map(|x| (j, x.reason.clone()))
        })
    };
    let first = (0..cands.len()).find(|&k| explained_by(k).is_none());
    match first {
        Some(0) => Some((0, None)),
        Some(k) => {
            // why the first candidate in rule order did not decide
            let note = explained_by(0).map(|(_, why)| why);
            Some((k, note))
        }
        // every candidate is explained by another (a cycle): keep the rule order
        None if !cands.is_empty() => Some((0, None)),
        None => None,
    }
}
