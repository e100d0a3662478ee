//! The timeline stage: settle every event's year, zone and clock (aligning kernel uptime to wall
//! time with anchors found in the inputs), fill hosts and GPU identities, drop duplicates seen
//! through two routes, and order everything.

use crate::model::{Attrs, Body, Layer, RawEvent, Severity, SourceRef, TimeQuality};
use crate::pipeline::InputResult;
use chrono::{Datelike, TimeZone, Utc};
use std::collections::{BTreeMap, BTreeSet};

mod dedupe;
pub mod filter;
mod order;
mod zone;

pub use zone::Zone;

/// Options that change how times are read.
#[derive(Clone, Debug, Default)]
pub struct TimeOptions {
    /// Year for stamps that carry none.
    pub year: Option<i32>,
    /// UTC offset (seconds) for stamps that carry no zone.
    pub tz_offset: Option<i32>,
    /// A zone for stamps that carry none (`--tz`), over `tz_offset`: a named zone gives each
    /// stamp the offset in force at its local time.
    pub zone: Option<Zone>,
    /// The moment of the analysis (an upper bound for inferred years); seconds since the epoch.
    pub now: i64,
}

/// An event on the final timeline.
#[derive(Clone, Debug)]
pub struct Event {
    /// `e1`, `e2`, … in timeline order.
    pub id: String,
    /// UTC microseconds since the epoch.
    pub time_us: Option<i64>,
    /// How far the time can be trusted.
    pub quality: TimeQuality,
    /// Kernel uptime in microseconds, when known.
    pub uptime_us: Option<u64>,
    /// Host.
    pub host: Option<String>,
    /// Evidence location.
    pub source: SourceRef,
    /// Input index.
    pub input: usize,
    /// Boot segment within the input.
    pub boot: u32,
    /// Kind.
    pub kind: String,
    /// Code.
    pub code: Option<i64>,
    /// GPU bus id (or index/UUID).
    pub gpu: Option<String>,
    /// GPU UUID when known.
    pub gpu_uuid: Option<String>,
    /// Rank.
    pub rank: Option<i64>,
    /// Layer on its own.
    pub layer: Layer,
    /// Severity on its own.
    pub severity: Severity,
    /// Verbatim record.
    pub message: String,
    /// Message after the prefix (see [`Event::body`]).
    pub body: Body,
    /// Details.
    pub attrs: Attrs,
    /// The same event seen in other places.
    pub also_seen: Vec<SourceRef>,
    /// Seen by the server's management controller (its times are on the BMC's clock).
    pub bmc: bool,
    /// Further occurrences past the events cap that this event stands for (counted, not kept).
    pub suppressed: u64,
}

impl Event {
    /// The message part after the line prefix (empty once the message was taken for a report).
    pub fn body(&self) -> &str {
        self.body.text(&self.message)
    }

    /// How many occurrences this event stands for: itself and those past the cap.
    pub fn weight(&self) -> u64 {
        1 + self.suppressed
    }
}

/// Result of the timeline stage.
pub struct Timeline {
    /// Ordered events.
    pub events: Vec<Event>,
    /// Per-host notes on clock alignment.
    pub notes: Vec<String>,
    /// BDF → UUID/serial per host.
    pub identities: BTreeMap<(String, String), (Option<String>, Option<String>)>,
    /// Trainer progress samples (kind `progress`), timed like events but kept off the timeline:
    /// the throughput stage builds its series from them.
    pub progress: Vec<Event>,
}

fn wall_us(e: &RawEvent, year: i32, tz: i32, zone: Option<&Zone>) -> Option<(i64, bool)> {
    let w = e.stamp.wall?;
    let mut secs = w.naive_secs;
    if !w.has_year {
        secs = crate::formats::time::rebase_year(secs, year)?;
    }
    let zoned = w.offset.is_some();
    let local = zone.map_or(tz, |z| z.offset_at_local(secs));
    secs -= w.offset.unwrap_or(local) as i64;
    // a date past year 9999 (or before year -9999) is not taken as a time
    let us = secs.checked_mul(1_000_000)?.checked_add(w.micros as i64)?;
    let max = crate::formats::time::MAX_WALL_US;
    (-max..=max).contains(&us).then_some((us, zoned))
}

fn year_of(secs: i64) -> i32 {
    Utc.timestamp_opt(secs, 0)
        .single()
        .map_or(2000, |d| d.year())
}

/// Picks the year for an input's year-less stamps: the anchor year, minus the New Year
/// rollovers seen in the file, and one less when that would put the last line after the anchor.
fn infer_year(events: &[&RawEvent], anchor: i64) -> (i32, Vec<i32>) {
    let mut offsets = Vec::with_capacity(events.len());
    let mut rollovers = 0;
    let mut prev: Option<i64> = None;
    for e in events {
        if let Some(w) = e.stamp.wall.filter(|w| !w.has_year) {
            if let Some(p) = prev {
                if w.naive_secs + 180 * 86_400 < p {
                    rollovers += 1;
                }
            }
            prev = Some(w.naive_secs);
        }
        offsets.push(rollovers);
    }
    let mut base = year_of(anchor) - rollovers;
    if let Some(p) = prev {
        if let Some(last) = crate::formats::time::rebase_year(p, base + rollovers) {
            if last > anchor + 86_400 {
                base -= 1;
            }
        }
    }
    (base, offsets)
}

/// `+05:00`, `-06:00`.
fn offset_text(off: i32) -> String {
    let sign = if off < 0 { '-' } else { '+' };
    let a = off.abs();
    format!("{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
}

/// Per host, the UTC offset its BMC records print most often (ties: the smallest offset).
fn bmc_zones(results: &[InputResult]) -> BTreeMap<String, i32> {
    let mut seen: BTreeMap<String, BTreeMap<i32, usize>> = BTreeMap::new();
    for r in results {
        for e in r.events.iter().filter(|e| e.bmc) {
            let (Some(off), Some(h)) = (
                e.stamp.wall.and_then(|w| w.offset),
                e.host.as_ref().or(r.host.as_ref()),
            ) else {
                continue;
            };
            *seen
                .entry(short_host(h))
                .or_default()
                .entry(off)
                .or_default() += 1;
        }
    }
    seen.into_iter()
        .filter_map(|(h, offs)| {
            let best = offs
                .into_iter()
                .max_by_key(|&(o, n)| (n, std::cmp::Reverse(o)))?;
            Some((h, best.0))
        })
        .collect()
}

/// A host's short name: the first label of a fully qualified name (NCCL prints only that), IP
/// addresses as they are.
pub fn short_host(h: &str) -> String {
    let is_ip = h.bytes().all(|c| c.is_ascii_digit() || c == b'.') || h.contains(':');
    if is_ip {
        h.to_string()
    } else {
        h.split('.').next().unwrap_or(h).to_string()
    }
}

/// A step back of the wall clock between two events of one input larger than this is reported.
const BACKWARDS_US: i64 = 60 * 1_000_000;

/// While raw events move to the timeline, their list gives its memory back this often.
const SHRINK_EVERY: usize = 1 << 15;

/// Builds the timeline from all inputs.
pub fn build(results: &mut [InputResult], opts: &TimeOptions) -> Timeline {
    let mut notes = Vec::new();
    // Host-level facts from bundles: capture time and zone.
    let mut host_anchor: BTreeMap<String, i64> = BTreeMap::new();
    let mut host_tz: BTreeMap<String, i32> = BTreeMap::new();
    for r in results.iter() {
        if let (Some(b), Some(h)) = (&r.bundle, &r.host) {
            if let Some(c) = b.captured {
                let secs = c.naive_secs - c.offset.unwrap_or(0) as i64;
                if c.has_year {
                    host_anchor.insert(h.clone(), secs);
                }
            }
            if let Some(off) = b.utc_offset {
                host_tz.insert(h.clone(), off);
            }
        }
    }
    // Dated stamps (with a year) anchor the year of year-less ones: per host, else anywhere.
    // A BMC's log keeps years of history (its last alert may be long before the incident): its
    // dates never anchor the host's year-less logs.
    let mut dated_host: BTreeMap<String, i64> = BTreeMap::new();
    let mut dated_any: Option<i64> = None;
    for r in results.iter() {
        for e in r.events.iter().filter(|e| !e.bmc) {
            if let Some(w) = e.stamp.wall.filter(|w| w.has_year) {
                let secs = w.naive_secs - w.offset.unwrap_or(0) as i64;
                let h = e
                    .host
                    .clone()
                    .or_else(|| r.host.clone())
                    .map(|h| short_host(&h))
                    .unwrap_or_default();
                let v = dated_host.entry(h).or_insert(secs);
                *v = (*v).max(secs);
                dated_any = Some(dated_any.map_or(secs, |d| d.max(secs)));
            }
        }
    }
    // The zone of each host's BMC clock, from its records that print one (Redfish `Created`,
    // lclog `Timestamp` with an offset): the most frequent offset.
    let bmc_tz = bmc_zones(results);
    // Boot segments.
    for r in results.iter_mut() {
        let mut boot = 0u32;
        let mut bl = r.boot_lines.iter().peekable();
        let mut prev_mono: Option<u64> = None;
        for e in r.events.iter_mut() {
            while bl.peek().is_some_and(|&&l| l <= e.line) {
                bl.next();
                boot += 1;
                prev_mono = None;
            }
            if let Some(m) = e.stamp.mono_us {
                if prev_mono.is_some_and(|p| m + 1_000_000 < p) {
                    boot += 1;
                }
                prev_mono = Some(m);
            }
            e.boot = boot;
        }
    }
    // First pass: wall times.
    struct Pending {
        time_us: Option<i64>,
        quality: TimeQuality,
    }
    let mut pend: Vec<Vec<Pending>> = Vec::new();
    let mut bmc_hosts: BTreeMap<String, Option<i32>> = BTreeMap::new();
    for r in results.iter() {
        let host = r.host.clone().unwrap_or_default();
        let anchor = opts
            .year
            .map(|y| crate::formats::time::civil_secs(y, 12, 31, 0).unwrap_or(opts.now))
            .or_else(|| host_anchor.get(&host).copied())
            .or_else(|| dated_host.get(&short_host(&host)).map(|d| d + 86_400))
            .or(dated_any.map(|d| d + 86_400))
            .or(r.mtime)
            .unwrap_or(opts.now);
        let refs: Vec<&RawEvent> = r.events.iter().collect();
        let (base, rolls) = infer_year(&refs, anchor);
        let tz = opts
            .tz_offset
            .or_else(|| host_tz.get(&host).copied())
            .unwrap_or(0);
        let forced = opts.tz_offset.is_some() || opts.zone.is_some();
        let tz_known = forced || host_tz.contains_key(&host);
        let mut v = Vec::with_capacity(r.events.len());
        for (e, roll) in r.events.iter().zip(rolls) {
            // --year is the year the input starts in: a New Year crossed inside it still moves
            // the later lines to the next year
            let year = opts.year.map_or(base + roll, |y| y + roll);
            // a BMC's clock is its own: the zone its other records name, else the host's; only
            // `--tz` makes a zone-less BMC time exact
            let (tz, tz_known) = if e.bmc {
                let h = e.host.as_ref().or(r.host.as_ref()).map(|h| short_host(h));
                let zone = h.as_ref().and_then(|h| bmc_tz.get(h).copied());
                if let (Some(h), Some(w)) = (h, e.stamp.wall) {
                    if w.offset.is_none() && !forced {
                        bmc_hosts.insert(h, zone);
                    }
                }
                (opts.tz_offset.or(zone).unwrap_or(tz), forced)
            } else {
                (tz, tz_known)
            };
            match wall_us(e, year, tz, opts.zone.as_ref()) {
                Some((us, zoned)) => {
                    let has_year = e.stamp.wall.is_some_and(|w| w.has_year) || opts.year.is_some();
                    let q = if (zoned || tz_known) && has_year && !e.borrowed_time {
                        TimeQuality::Exact
                    } else {
                        TimeQuality::Estimated
                    };
                    v.push(Pending {
                        time_us: Some(us),
                        quality: q,
                    });
                }
                None => v.push(Pending {
                    time_us: None,
                    quality: TimeQuality::None,
                }),
            }
        }
        pend.push(v);
    }
    for (h, zone) in bmc_hosts {
        notes.push(match zone {
            Some(off) => format!("{h}: BMC times without a zone are read in the zone of the BMC's own records (UTC{}); the BMC clock is not checked against the host's", offset_text(off)),
            None => format!("{h}: BMC times without a zone are read in the host's zone (--tz sets it); the BMC clock is not checked against the host's"),
        });
    }
    // Clocks that went backwards inside one input (a clock step, a restored snapshot, lines
    // merged out of order): said once per input, with the first place and how many times; the
    // timeline orders by time whatever the line order.
    for (r, pv) in results.iter_mut().zip(&pend) {
        let mut prev: Option<(i64, u64)> = None;
        let mut first: Option<(u64, i64, u64)> = None;
        let mut times = 0u64;
        for (e, p) in r.events.iter().zip(pv) {
            if e.borrowed_time || e.stamp.wall.is_none() {
                continue;
            }
            let Some(t) = p.time_us else { continue };
            if let Some((pt, pl)) = prev {
                if t + BACKWARDS_US < pt {
                    times += 1;
                    first.get_or_insert((e.line, (pt - t) / 1_000_000, pl));
                }
            }
            prev = Some((t, e.line));
        }
        if let Some((line, back, from)) = first {
            r.warnings.push(format!(
                "clock went backwards {times} time(s): first at line {line}, {back} s earlier than line {from}; events are ordered by time"
            ));
        }
    }
    // Anchors: (host, body) → offset (wall - mono) from events carrying both; needed only when
    // some event has an uptime but no wall time.
    let mono_only = results.iter().zip(&pend).any(|(r, pv)| {
        r.events
            .iter()
            .zip(pv)
            .any(|(e, p)| p.time_us.is_none() && e.stamp.mono_us.is_some())
    });
    let mut anchors: crate::scan::FastMap<(&str, &str), Vec<(u64, i64)>> = Default::default();
    for (r, pv) in results.iter().zip(&pend).filter(|_| mono_only) {
        for (e, p) in r.events.iter().zip(pv) {
            if let (Some(m), Some(t)) = (e.stamp.mono_us, p.time_us) {
                let host = e.host.as_deref().or(r.host.as_deref()).unwrap_or_default();
                anchors
                    .entry((host, e.body()))
                    .or_default()
                    .push((m, t - m as i64));
            }
        }
    }
    // Align mono-only segments.
    for (r, pv) in results.iter().zip(pend.iter_mut()) {
        let mut seg_offsets: BTreeMap<u32, Vec<i64>> = BTreeMap::new();
        for (e, p) in r.events.iter().zip(pv.iter()) {
            if p.time_us.is_some() {
                continue;
            }
            let Some(m) = e.stamp.mono_us else { continue };
            let host = e.host.as_deref().or(r.host.as_deref()).unwrap_or_default();
            if let Some(list) = anchors.get(&(host, e.body())) {
                for &(am, off) in list {
                    if am.abs_diff(m) <= 2_000 {
                        seg_offsets.entry(e.boot).or_default().push(off);
                    }
                }
            }
        }
        let mut capture_bound = None;
        if let Some(b) = &r.bundle {
            if let Some(c) = b.captured {
                let cap = (c.naive_secs - c.offset.unwrap_or(0) as i64) * 1_000_000;
                let last_boot = r.events.iter().map(|e| e.boot).max().unwrap_or(0);
                let last_mono = r
                    .events
                    .iter()
                    .filter(|e| e.boot == last_boot)
                    .filter_map(|e| e.stamp.mono_us)
                    .max();
                if let Some(lm) = last_mono {
                    capture_bound = Some((last_boot, cap - lm as i64));
                }
            }
        }
        for (boot, mut offs) in seg_offsets.clone() {
            offs.sort_unstable();
            let med = offs[offs.len() / 2];
            seg_offsets.insert(boot, vec![med]);
        }
        let mut aligned = 0;
        for (e, p) in r.events.iter().zip(pv.iter_mut()) {
            if p.time_us.is_some() {
                continue;
            }
            let Some(m) = e.stamp.mono_us else { continue };
            if let Some(off) = seg_offsets.get(&e.boot).and_then(|v| v.first()) {
                p.time_us = Some(m as i64 + off);
                p.quality = TimeQuality::Aligned;
                aligned += 1;
            } else if let Some((b, off)) = capture_bound.filter(|(b, _)| *b == e.boot) {
                let _ = b;
                p.time_us = Some(m as i64 + off);
                p.quality = TimeQuality::Estimated;
            }
        }
        if aligned > 0 {
            notes.push(format!("{}: {aligned} uptime stamps aligned to wall time with matching lines of the same host", r.path));
        }
    }
    // GPU identities from attachments.
    let mut identities: BTreeMap<(String, String), (Option<String>, Option<String>)> =
        BTreeMap::new();
    for r in results.iter() {
        let mut last_gpu: Option<String> = None;
        for a in &r.attachments {
            if a.kind != "gpu_identity" {
                continue;
            }
            let host = a
                .host
                .clone()
                .or_else(|| r.host.clone())
                .unwrap_or_default();
            if let Some(g) = &a.gpu {
                last_gpu = Some(g.clone());
            }
            let Some(g) = a.gpu.clone().or_else(|| last_gpu.clone()) else {
                continue;
            };
            let ent = identities.entry((host, g)).or_default();
            if let Some(u) = a.attrs.get("uuid") {
                ent.0 = Some(u.to_string());
            }
            if let Some(s) = a.attrs.get("serial").or_else(|| a.attrs.get("serial2")) {
                ent.1 = Some(s.to_string());
            }
        }
    }
    // Assemble.
    // grown in steps as the raw events' lists shrink (reserved whole up front, it would stand
    // beside them whole)
    let mut events: Vec<Event> = Vec::new();
    for (r, pv) in results.iter_mut().zip(pend) {
        let attachments = std::mem::take(&mut r.attachments);
        // moved from the back, the raw events' list shrinking as the timeline's grows (the two
        // are never both whole), then the input's part put back in line order
        let (mut raw, mut pv, from) = (std::mem::take(&mut r.events), pv, events.len());
        while let (Some(e), Some(p)) = (raw.pop(), pv.pop()) {
            if raw.len() % SHRINK_EVERY == 0 {
                raw.shrink_to_fit();
            }
            if events.len() == events.capacity() {
                events.reserve_exact(SHRINK_EVERY.min(raw.len() + 1));
            }
            let host = e.host.as_deref().or(r.host.as_deref()).map(short_host);
            let gpu_uuid = match (&host, &e.gpu) {
                (Some(h), Some(g)) if !identities.is_empty() => identities
                    .get(&(h.clone(), g.clone()))
                    .and_then(|x| x.0.clone()),
                _ => None,
            };
            let quality = if p.time_us.is_none() {
                TimeQuality::None
            } else if e.borrowed_time {
                TimeQuality::Estimated
            } else {
                p.quality
            };
            events.push(Event {
                id: String::new(),
                time_us: p.time_us,
                quality,
                uptime_us: e.stamp.mono_us,
                host,
                source: SourceRef {
                    path: r.path.clone(),
                    line: e.line,
                },
                input: r.index,
                boot: e.boot,
                kind: e.kind,
                code: e.code,
                gpu: e.gpu,
                gpu_uuid,
                rank: e.rank,
                layer: e.layer,
                severity: e.severity,
                message: e.message,
                body: e.body,
                attrs: e.attrs,
                also_seen: Vec::new(),
                bmc: e.bmc,
                suppressed: e.suppressed,
            });
        }
        events[from..].reverse();
        merge_attachments(&mut events, r.index, &attachments);
        r.attachments = attachments;
    }
    // split only when there is progress to split off (no second copy of a long timeline)
    let (progress, events): (Vec<Event>, Vec<Event>) =
        if events.iter().any(|e| e.kind == "progress") {
            events.into_iter().partition(|e| e.kind == "progress")
        } else {
            (Vec::new(), events)
        };
    // a bug report holds the kernel log twice (dmesg and syslog sections): one input, two routes
    let bundles: BTreeSet<usize> = results
        .iter()
        .filter(|r| r.format == crate::formats::Format::BugReport)
        .map(|r| r.index)
        .collect();
    let events = finish(dedupe::process_routes(dedupe::bmc_routes(dedupe::dedupe(
        events, &bundles,
    ))));
    Timeline {
        events,
        notes,
        identities,
        progress,
    }
}

/// Orders events (see [`order::order`]) and numbers them `e1`, `e2`, … in that order.
pub fn finish(events: Vec<Event>) -> Vec<Event> {
    let mut events = order::order(events);
    for (i, e) in events.iter_mut().enumerate() {
        e.id = format!("e{}", i + 1);
    }
    events
}

/// Merges watchdog progress lines into the nearest earlier timeout of the same input and rank.
fn merge_attachments(events: &mut [Event], input: usize, attachments: &[RawEvent]) {
    for a in attachments.iter().filter(|a| a.kind == "nccl_progress") {
        let target = events.iter_mut().rfind(|e| {
            e.input == input
                && e.kind == "nccl_timeout"
                && e.source.line <= a.line
                && a.line - e.source.line <= 50
                && (a.rank.is_none() || e.rank == a.rank)
        });
        if let Some(t) = target {
            for (k, v) in &a.attrs {
                t.attrs.insert_if_absent(k, v);
            }
        }
    }
}
