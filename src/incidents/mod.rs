//! Incidents: bursts of events grouped on one time axis, each with its primary fault named by the
//! rules, the consequences that followed, alternatives, and who must act.

use crate::catalog::Catalog;
use crate::job::JobInfo;
use crate::model::{Layer, Severity};
use crate::rules::RuleSet;
use crate::timeline::Event;
use rayon::prelude::*;
use std::collections::BTreeMap;

mod cause;
mod choose;
mod confidence;
mod drift;
mod facts;
mod judge;
mod phrase;
mod reading;
mod verdict;

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
    /// For incidents of kind `hang`: what the job was waiting for when its progress stopped.
    pub hang: Option<crate::throughput::hang::Hang>,
}

/// Where an event sits for grouping: one axis per clock domain (wall time; a host's boot; an
/// input's lines, one second a line; an input's times of day).
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
    } else if let Some(t) = e.time_of_day_us() {
        // one axis per input whose lines print a time of day nothing dated: that time
        (3, format!("{:08}", e.input), t as i64)
    } else {
        (
            2,
            format!("{:08}", e.input),
            (e.source.line as i64).saturating_mul(1_000_000),
        )
    }
}

/// Groups events into incidents and names each one's cause. Incidents are judged in parallel
/// (each on its own, collected in order).
pub fn build(
    events: &[Event],
    rules: &RuleSet,
    catalog: &Catalog,
    kernel_inputs: bool,
    job: Option<&JobInfo>,
) -> Vec<Incident> {
    let groups = bursts(events, rules, catalog);
    let merged = merge_untimed(groups, events);
    // asked of every member several times while judging: answered once per event
    let conseq: Vec<bool> = events
        .par_iter()
        .with_min_len(4096)
        .map(|e| rules.is_consequence(e))
        .collect();
    if events.len() >= crate::pipeline::LARGE_LIST {
        // what the timeline's order and the bursts freed, before judging makes its indexes
        crate::alloc::give_back();
    }
    let mut incidents: Vec<Incident> = merged
        .into_par_iter()
        .map(|mut g| {
            g.sort_unstable();
            judge::judge(g, events, (rules, &conseq), catalog, kernel_inputs, job)
        })
        .collect();
    if events.len() >= crate::pipeline::LARGE_LIST {
        // what judging a long incident freed, in the pool's arenas, before the reports are made
        crate::alloc::give_back();
    }
    renumber(&mut incidents);
    incidents
}

/// The bursts of events at warning or above on each axis: a quiet gap longer than the rules'
/// (longer after a sticky code) ends one.
fn bursts(events: &[Event], rules: &RuleSet, catalog: &Catalog) -> Vec<Vec<usize>> {
    // slowdowns are grouped by the throughput stage, not by bursts
    let mut by_axis: BTreeMap<(u8, String), Vec<(i64, usize)>> = BTreeMap::new();
    let mut timed: Vec<(i64, usize)> = Vec::new();
    for (i, e) in events.iter().enumerate() {
        // slowdowns and hangs are judged by the throughput stage
        if e.severity < Severity::Warning
            || e.kind == "throughput_drop"
            || e.kind == "progress_stall"
        {
            continue;
        }
        match axis(e) {
            // one axis for every timed event: no key to build per event
            (0, _, p) => timed.push((p, i)),
            (a, k, p) => by_axis.entry((a, k)).or_default().push((p, i)),
        }
    }
    if !timed.is_empty() {
        by_axis.insert((0, String::new()), timed);
    }
    let us = |s: i64| s.max(0).saturating_mul(1_000_000);
    let mut groups: Vec<Vec<usize>> = Vec::new();
    for (_, mut list) in by_axis {
        list.sort_unstable();
        let mut cur: Vec<usize> = Vec::new();
        let mut last = i64::MIN;
        // user rules may give any gap: negative ones are 0, huge ones saturate
        let mut gap = us(rules.grouping.gap_s);
        for (p, i) in list {
            if !cur.is_empty() && p.saturating_sub(last) > gap {
                groups.push(std::mem::take(&mut cur));
                gap = us(rules.grouping.gap_s);
            }
            let e = &events[i];
            if catalog.is_sticky(e.kind, e.code) || e.kind == "fell_off_bus" {
                gap = us(rules.grouping.sticky_gap_s);
            }
            cur.push(i);
            last = p;
        }
        if !cur.is_empty() {
            groups.push(cur);
        }
    }
    groups
}

/// Groups without a wall time join the first timed group that shares a GPU or rank; groups with
/// no time at all may also join an uptime-only group. Two uptime-only groups never merge: they
/// were split by a gap or by a reboot (uptimes restart at zero). The first group that names a
/// GPU or rank is found from an index kept as groups grow (not a scan of every group).
fn merge_untimed(groups: Vec<Vec<usize>>, events: &[Event]) -> Vec<Vec<usize>> {
    let timed = |g: &[usize]| g.iter().any(|&i| events[i].time_us.is_some());
    let uptime_only = |g: &[usize]| !timed(g) && g.iter().any(|&i| events[i].uptime_us.is_some());
    let mut merged: Vec<Vec<usize>> = Vec::with_capacity(groups.len());
    let (mut on_uptime, mut untimed) = (Vec::new(), Vec::new());
    for g in groups {
        if timed(&g) {
            merged.push(g);
        } else if uptime_only(&g) {
            on_uptime.push(g);
        } else {
            untimed.push(g);
        }
    }
    let n_timed = merged.len();
    // the first group naming each GPU and rank: among the timed groups, and among all
    let mut first_timed = Places::default();
    for (k, g) in merged.iter().enumerate() {
        first_timed.add(k, g, events);
    }
    let mut first_any = first_timed.clone();
    let later = on_uptime
        .into_iter()
        .map(|g| (true, g))
        .chain(untimed.into_iter().map(|g| (false, g)));
    for (up, g) in later {
        let index = if up { &first_timed } else { &first_any };
        match index.first(&g, events) {
            Some(t) => {
                if t < n_timed {
                    first_timed.add(t, &g, events);
                }
                first_any.add(t, &g, events);
                merged[t].extend(g.iter().copied());
            }
            None => {
                first_any.add(merged.len(), &g, events);
                merged.push(g);
            }
        }
    }
    merged
}

/// The first group (by index) that names each GPU and each rank.
#[derive(Clone, Default)]
struct Places<'e> {
    gpu: crate::scan::FastMap<&'e str, usize>,
    rank: crate::scan::FastMap<i64, usize>,
}

impl<'e> Places<'e> {
    /// Notes that group `k` holds the events `g`.
    fn add(&mut self, k: usize, g: &[usize], events: &'e [Event]) {
        for &i in g {
            let e = &events[i];
            if let Some(x) = e.gpu.as_deref() {
                let at = self.gpu.entry(x).or_insert(k);
                *at = (*at).min(k);
            }
            if let Some(r) = e.rank {
                let at = self.rank.entry(r).or_insert(k);
                *at = (*at).min(k);
            }
        }
    }

    /// The first group that names a GPU or rank of the events `g`.
    fn first(&self, g: &[usize], events: &[Event]) -> Option<usize> {
        g.iter()
            .flat_map(|&i| {
                let e = &events[i];
                let by_gpu = e.gpu.as_deref().and_then(|x| self.gpu.get(x));
                let by_rank = e.rank.and_then(|r| self.rank.get(&r));
                by_gpu.into_iter().chain(by_rank).copied()
            })
            .min()
    }
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
/// A part no line named leaves its phrase out (see [`phrase::elide`]).
pub fn render(template: &str, e: &Event, count: u64, catalog: &Catalog) -> String {
    let fixed = render_fixed(template, e, count, catalog);
    render_attrs(&fixed, e)
}

/// `{attr:NAME}` placeholders: the event's detail NAME (empty when it has none).
fn render_attrs(text: &str, e: &Event) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find("{attr:") {
        out.push_str(&rest[..at]);
        let tail = &rest[at + 6..];
        let Some(end) = tail.find('}') else {
            out.push_str(&rest[at..]);
            return out;
        };
        out.push_str(e.attrs.get(&tail[..end]).unwrap_or(""));
        rest = &tail[end + 1..];
    }
    out.push_str(rest);
    out
}

fn render_fixed(template: &str, e: &Event, count: u64, catalog: &Catalog) -> String {
    let template = phrase::elide(
        template,
        e.host.is_some(),
        e.gpu.is_some(),
        e.code.is_some(),
        e.rank.is_some(),
    );
    let gpu = e.gpu.clone().unwrap_or_default();
    let host = e.host.clone().unwrap_or_default();
    let rank_text = e.rank.map(|r| format!(" (rank {r})")).unwrap_or_default();
    template
        .replace("{gpu}", &gpu)
        .replace("{host}", &host)
        .replace("{code}", &e.code.map(|c| c.to_string()).unwrap_or_default())
        .replace("{title}", &catalog.title(e.kind, e.code))
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
            "{reading}",
            e.attrs.get("reading").unwrap_or_else(|| {
                catalog
                    .kind
                    .get(e.kind)
                    .map_or("no reading", |k| k.meaning.trim_end_matches('.'))
            }),
        )
        .replace(
            "{error}",
            e.attrs
                .get("error")
                .or(e.attrs.get("nccl_result"))
                .or(e.attrs.get("library"))
                .unwrap_or(e.kind),
        )
        .replace(
            "{frames}",
            e.attrs.get("frames").unwrap_or("no frames shown"),
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
