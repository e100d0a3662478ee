//! Which known issues an analysis matches. An entry matches a line when an event of its kinds
//! (and codes) has a message its pattern finds, on a GPU of its products, and the versions of
//! that event's host lie in its range; with no version in the inputs, a wording that dates the
//! driver (a version hint) or a line that only affected versions print still matches, as
//! `probable`. A match joins the incident of its line: its evidence gains the line and the
//! version line, its confidence rises, its first action becomes the fix. The version rules
//! (fabric manager equal to the driver, the minimum driver of a CUDA runtime) are findings on
//! their own when the versions break them.

use super::facts::{Fact, Facts, HostFacts};
use super::version::Version;
use super::{Known, KnownSet};
use crate::incidents::{Alternative, Incident};
use crate::model::{Layer, Severity};
use crate::timeline::Event;

/// How sure a match is.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Status {
    /// The line and the version were both read.
    Confirmed,
    /// The line was read; the version was not (or only dated by the wording).
    Probable,
    /// Versions that break a version rule.
    Incompatible,
}

impl Status {
    /// As shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Confirmed => "confirmed",
            Status::Probable => "probable",
            Status::Incompatible => "incompatible",
        }
    }
}

/// One entry matched.
#[derive(Clone, Debug)]
pub struct KnownMatch {
    /// Entry id.
    pub id: String,
    /// Component.
    pub component: String,
    /// The entry's summary.
    pub summary: String,
    /// Affected versions as written.
    pub affected: String,
    /// The fix.
    pub fixed_in: Option<String>,
    /// The workaround.
    pub workaround: Option<String>,
    /// Source URL.
    pub source: String,
    /// How sure.
    pub status: Status,
    /// The version read (`driver 525.85.12`), or why none was.
    pub version: String,
    /// Where the version was read (`path:line`).
    pub version_source: Option<String>,
    /// The events that identify it (lines first, then the version line).
    pub events: Vec<usize>,
    /// Host.
    pub host: Option<String>,
    /// Index of the incident it joined.
    pub incident: Option<usize>,
}

/// A line as the matcher sees it.
pub struct Line<'a> {
    /// Event kind.
    pub kind: &'a str,
    /// Code.
    pub code: Option<i64>,
    /// Verbatim message.
    pub message: &'a str,
    /// Captures (`client_version`, ...).
    pub attrs: Vec<(&'a str, &'a str)>,
}

impl<'a> Line<'a> {
    fn of(e: &'a Event) -> Line<'a> {
        Line {
            kind: e.kind,
            code: e.code,
            message: &e.message,
            attrs: e.attrs.iter().collect(),
        }
    }

    fn attr(&self, k: &str) -> Option<&'a str> {
        self.attrs.iter().find(|(n, _)| *n == k).map(|(_, v)| *v)
    }
}

/// True when a line of this kind, code and message is one entry `k` speaks of (before its
/// products and versions are looked at).
fn fits(k: &Known, (kind, code, message): (&str, Option<i64>, &str)) -> bool {
    let e = &k.entry;
    if e.kinds.is_empty() || !e.kinds.iter().any(|x| x == kind) {
        return false;
    }
    if !e.codes.is_empty() && !code.is_some_and(|c| e.codes.contains(&c)) {
        return false;
    }
    k.pattern
        .as_ref()
        .is_none_or(|p| p.is_match(message.as_bytes()))
}

/// The verdict of one entry on one line: its status, the version read, and the fact used.
pub fn judge_line(
    k: &Known,
    set: &KnownSet,
    l: &Line,
    hf: &HostFacts,
) -> Option<(Status, String, Option<Fact>)> {
    let e = &k.entry;
    if !fits(k, (l.kind, l.code, l.message)) {
        return None;
    }
    if let Some(p) = &k.products {
        if !hf.products.is_empty() && !hf.products.iter().any(|n| p.is_match(n.as_bytes())) {
            return None;
        }
    }
    // a rule about two versions the line itself names: they must differ
    let pair: Vec<Version> = e
        .differ
        .iter()
        .filter_map(|a| l.attr(a))
        .filter_map(Version::parse)
        .collect();
    if pair.len() == 2 && pair[0] == pair[1] {
        return None;
    }
    let of = k.version_of();
    if let Some(f) = hf.versions.get(of) {
        return k.range.contains(&f.version).then(|| {
            (
                Status::Confirmed,
                format!("{of} {}", f.text),
                Some(f.clone()),
            )
        });
    }
    let dated = set
        .hints
        .iter()
        .find(|h| h.hint.version_of == of && h.pattern.is_match(l.message.as_bytes()));
    if let Some(h) = dated {
        return k.range.overlaps(&h.range).then(|| {
            (
                Status::Probable,
                format!(
                    "{of} version not in the inputs; the wording is that of {of} {}",
                    h.hint.versions
                ),
                None,
            )
        });
    }
    if !e.unversioned {
        return None;
    }
    let every = e.affected.trim().is_empty() || e.affected.trim() == "*";
    Some(if every {
        (
            Status::Confirmed,
            "the line names the versions".to_string(),
            None,
        )
    } else {
        (
            Status::Probable,
            format!("{of} version not in the inputs"),
            None,
        )
    })
}

/// Matches every entry of `set` on the events, joins the matches to their incidents (or makes
/// a finding of a broken version rule) and returns them, in entry order.
pub fn apply(
    events: &[Event],
    inputs: &[crate::pipeline::InputResult],
    incidents: &mut Vec<Incident>,
    set: &KnownSet,
) -> Vec<KnownMatch> {
    let facts = super::facts::gather(events, inputs);
    let mut out: Vec<KnownMatch> = Vec::new();
    let mut found = Found::default();
    for k in &set.entries {
        line_matches(k, set, (events, incidents), (&facts, &mut found), &mut out);
    }
    for m in &out {
        if let Some(i) = m.incident {
            strengthen(&mut incidents[i], m, set);
        }
    }
    super::rules::version_rules(set, &facts, events, incidents, &mut out);
    if !out.is_empty() {
        // evidence added and findings appended: the incidents' order and ids are made again,
        // and the matches follow their incidents
        let mut order: Vec<usize> = (0..incidents.len()).collect();
        order.sort_by(|&a, &b| {
            incidents[a]
                .events
                .first()
                .cmp(&incidents[b].events.first())
        });
        let mut at = vec![0; order.len()];
        for (p, &o) in order.iter().enumerate() {
            at[o] = p;
        }
        crate::incidents::renumber(incidents);
        for m in &mut out {
            m.incident = m.incident.map(|i| at[i]);
        }
    }
    out
}

/// The matches of entry `k` on the lines: one per incident (or per host, for lines in none).
/// An event's host facts and details are read only once its kind, code and message fit.
fn line_matches(
    k: &Known,
    set: &KnownSet,
    (events, incidents): (&[Event], &[Incident]),
    (facts, found): (&Facts, &mut Found),
    out: &mut Vec<KnownMatch>,
) {
    if k.entry.kinds.is_empty() {
        return;
    }
    for i in found.of_kinds(events, &k.entry.kinds) {
        let e = &events[i];
        if !fits(k, (e.kind, e.code, &e.message)) {
            continue;
        }
        let hf = facts.of(e.host.as_deref());
        let Some((status, version, fact)) = judge_line(k, set, &Line::of(e), &hf) else {
            continue;
        };
        let incident = found.incident_of(incidents, i);
        let host = e.host.as_deref().map(str::to_string);
        let key = (
            k.entry.id.clone(),
            incident,
            host.clone().filter(|_| incident.is_none()),
        );
        if let Some(&at) = found.matches.get(&key) {
            let m: &mut KnownMatch = &mut out[at];
            if m.events.len() < 3 && !m.events.contains(&i) {
                m.events.insert(m.events.len().min(2), i);
            }
            continue;
        }
        found.matches.insert(key, out.len());
        let mut ev = vec![i];
        ev.extend(fact.as_ref().and_then(|f| f.event).filter(|&x| x != i));
        out.push(KnownMatch {
            id: k.entry.id.clone(),
            component: k.entry.component.clone(),
            summary: k.entry.summary.clone(),
            affected: k.entry.affected.clone(),
            fixed_in: k.entry.fixed_in.clone(),
            workaround: k.entry.workaround.clone(),
            source: k.entry.source.clone(),
            status,
            version,
            version_source: fact.map(|f| f.origin),
            events: ev,
            host,
            incident,
        });
    }
}

/// What the line matches found so far: where each match is (by entry id, incident, and host
/// when in no incident), and the first incident of each event (made on the first match; a
/// search of every incident's events per matched line was quadratic on many matched lines).
#[derive(Default)]
struct Found {
    matches: std::collections::HashMap<(String, Option<usize>, Option<String>), usize>,
    incident: Option<Vec<u32>>,
    /// The events of each kind, in order (made on the first entry: each entry then looks at
    /// the events of its kinds, not at every event).
    by_kind: Option<std::collections::HashMap<&'static str, Vec<u32>>>,
}

impl Found {
    /// The events of kinds `kinds`, in order.
    fn of_kinds(&mut self, events: &[Event], kinds: &[String]) -> Vec<usize> {
        let by_kind = self.by_kind.get_or_insert_with(|| {
            let mut by: std::collections::HashMap<&'static str, Vec<u32>> = Default::default();
            for (i, e) in events.iter().enumerate() {
                by.entry(e.kind).or_default().push(i as u32);
            }
            by
        });
        let mut of: Vec<usize> = kinds
            .iter()
            .filter_map(|k| by_kind.get(k.as_str()))
            .flatten()
            .map(|&i| i as usize)
            .collect();
        if kinds.len() > 1 {
            of.sort_unstable();
            of.dedup();
        }
        of
    }

    /// The first incident holding event `i`.
    fn incident_of(&mut self, incidents: &[Incident], i: usize) -> Option<usize> {
        let first = self.incident.get_or_insert_with(|| {
            let mut first = Vec::new();
            for (n, inc) in incidents.iter().enumerate().rev() {
                for &e in &inc.events {
                    if first.len() <= e {
                        first.resize(e + 1, u32::MAX);
                    }
                    first[e] = n as u32;
                }
            }
            first
        });
        first
            .get(i)
            .filter(|&&n| n != u32::MAX)
            .map(|&n| n as usize)
    }
}

/// The incident a match joined: evidence, confidence, layer, summary and first action.
fn strengthen(inc: &mut Incident, m: &KnownMatch, set: &KnownSet) {
    let Some(k) = set.entries.iter().find(|k| k.entry.id == m.id) else {
        return;
    };
    for &i in &m.events {
        if !inc.evidence.contains(&i) {
            inc.evidence.push(i);
        }
        if !inc.events.contains(&i) {
            inc.events.push(i);
            inc.events.sort_unstable();
        }
    }
    let layer = k.layer();
    if inc.layer != layer && m.status != Status::Incompatible {
        inc.alternatives.insert(
            0,
            Alternative {
                layer: inc.layer,
                confidence: (inc.confidence * 0.5).min(0.4),
                summary: inc.summary.clone(),
            },
        );
        inc.alternatives.retain(|a| a.layer != layer);
        inc.layer = layer;
        inc.confidence = inc.confidence.max(0.7);
        inc.responsibility = "operator".to_string();
    }
    let gain = if m.status == Status::Confirmed {
        0.15
    } else {
        0.05
    };
    inc.confidence = (inc.confidence + gain).min(0.95);
    inc.confidence = (inc.confidence * 100.0).round() / 100.0;
    inc.summary = format!("{}; {}", inc.summary, sentence(m));
    inc.actions.insert(0, action(m));
    if inc.responsibility == "user" && layer == Layer::DriverStack {
        inc.responsibility = "operator".to_string();
    }
}

/// The summary's clause for a match.
pub fn sentence(m: &KnownMatch) -> String {
    let fix = m
        .fixed_in
        .as_deref()
        .map(|f| format!("; fixed in {f}"))
        .unwrap_or_default();
    let how = match m.status {
        Status::Confirmed => "matches known issue",
        Status::Probable => "probably matches known issue",
        Status::Incompatible => "breaks version rule",
    };
    // `*`: every version of the component (the line itself names what is wrong)
    let range = if matches!(m.affected.trim(), "" | "*") {
        format!("any {}", m.component)
    } else {
        format!("{} {}", m.component, m.affected)
    };
    format!(
        "{how} {} of {range} ({}): {}{fix}",
        m.id, m.version, m.summary
    )
}

/// The action a match gives: the upgrade, else the workaround.
pub fn action(m: &KnownMatch) -> String {
    match (&m.fixed_in, &m.workaround) {
        (Some(f), Some(w)) => format!(
            "Known issue {}: upgrade the {} to {f} or newer (workaround until then: {w}); see {}",
            m.id, m.component, m.source
        ),
        (Some(f), None) => format!(
            "Known issue {}: upgrade the {} to {f} or newer; see {}",
            m.id, m.component, m.source
        ),
        (None, Some(w)) => format!("Known issue {}: {w}; see {}", m.id, m.source),
        (None, None) => format!("Known issue {}: see {}", m.id, m.source),
    }
}

/// A finding of its own, for a broken version rule with nothing to join: an incident whose
/// evidence is the version lines.
pub(super) fn finding(m: &KnownMatch, events: &[Event]) -> Incident {
    let hosts: Vec<String> = m.host.iter().cloned().collect();
    Incident {
        id: String::new(),
        events: m.events.clone(),
        primary: m.events.first().copied(),
        rule: Some(format!("known:{}", m.id)),
        layer: Layer::DriverStack,
        confidence: 0.6,
        summary: format!(
            "Versions on {} break a version rule: {}",
            m.host.as_deref().unwrap_or("(unknown host)"),
            sentence(m)
        ),
        evidence: m.events.clone(),
        responsibility: "operator".to_string(),
        alternatives: Vec::new(),
        actions: Vec::new(),
        hosts,
        gpus: Vec::new(),
        ranks: Vec::new(),
        consequences: Default::default(),
        counts: m
            .events
            .iter()
            .map(|&i| (events[i].kind.to_string(), 1))
            .collect(),
        severity: Severity::Warning,
        missing: Vec::new(),
        slowdown: None,
        hang: None,
    }
}

/// The version of `hf` that entry `k`'s range holds, if any (products permitting): a node whose
/// versions an entry affects, whether or not its line was seen. Entries about every version
/// (`*`) and version rules flag nothing.
pub fn affects(k: &Known, hf: &HostFacts) -> Option<String> {
    let e = &k.entry;
    if e.rule.is_some() || e.affected.trim().is_empty() || e.affected.trim() == "*" {
        return None;
    }
    if let Some(p) = &k.products {
        if !hf.products.iter().any(|n| p.is_match(n.as_bytes())) {
            return None;
        }
    }
    let of = k.version_of();
    let f = hf.versions.get(of)?;
    k.range
        .contains(&f.version)
        .then(|| format!("{of} {}", f.text))
}

/// A host whose versions an entry's range holds.
#[derive(Clone, Debug)]
pub struct Affected {
    /// Host (`None`: not named).
    pub host: Option<String>,
    /// Entry id.
    pub id: String,
    /// The version read (`driver 525.85.12`).
    pub version: String,
}

/// Every host's versions against every entry's range: the nodes an entry affects, whether or
/// not its line was seen.
pub fn affected(
    events: &[Event],
    inputs: &[crate::pipeline::InputResult],
    set: &KnownSet,
) -> Vec<Affected> {
    let facts = super::facts::gather(events, inputs);
    let mut out = Vec::new();
    for h in facts.0.keys() {
        let host = (!h.is_empty()).then(|| h.clone());
        let hf = facts.of(host.as_deref());
        for k in &set.entries {
            if let Some(version) = affects(k, &hf) {
                out.push(Affected {
                    host: host.clone(),
                    id: k.entry.id.clone(),
                    version,
                });
            }
        }
    }
    out
}
