//! Every raw event's time on the timeline's clock: the year of year-less stamps, the zone of
//! zone-less ones (a BMC's clock is its own), boot segments, and kernel uptimes aligned to wall
//! time with anchors found in the inputs.

use super::{short_host_str, TimeOptions, Zone};
use crate::model::{RawEvent, TimeQuality};
use crate::pipeline::InputResult;
use chrono::{Datelike, TimeZone, Utc};
use std::collections::BTreeMap;

/// An event's time, settled before the event moves to the timeline.
pub(super) struct Pending {
    pub(super) time_us: Option<i64>,
    pub(super) quality: TimeQuality,
}

/// A step back of the wall clock between two events of one input larger than this is reported.
const BACKWARDS_US: i64 = 60 * 1_000_000;

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
fn infer_year(events: &[RawEvent], anchor: i64) -> (i32, Vec<i32>) {
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
                e.host.as_deref().or(r.host.as_deref()),
            ) else {
                continue;
            };
            let h = short_host_str(h);
            if !seen.contains_key(h) {
                seen.insert(h.to_string(), BTreeMap::new());
            }
            *seen
                .get_mut(h)
                .expect("inserted above")
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

/// What the inputs tell about each host's clock.
struct HostClocks {
    /// Capture time of a host's bundle (with a year).
    anchor: BTreeMap<String, i64>,
    /// UTC offset a host's bundle names.
    tz: BTreeMap<String, i32>,
    /// Per short host name, the latest dated stamp (with a year) outside BMC records.
    dated_host: BTreeMap<String, i64>,
    /// The latest dated stamp of any host.
    dated_any: Option<i64>,
    /// The zone of each host's BMC clock (see [`bmc_zones`]).
    bmc_tz: BTreeMap<String, i32>,
}

/// Host-level facts from bundles (capture time and zone) and the dated stamps that anchor the
/// year of year-less ones: per host, else anywhere. A BMC's log keeps years of history (its last
/// alert may be long before the incident): its dates never anchor the host's year-less logs.
fn host_clocks(results: &[InputResult]) -> HostClocks {
    let mut anchor: BTreeMap<String, i64> = BTreeMap::new();
    let mut tz: BTreeMap<String, i32> = BTreeMap::new();
    for r in results {
        if let (Some(b), Some(h)) = (&r.bundle, &r.host) {
            if let Some(c) = b.captured {
                let secs = c.naive_secs - c.offset.unwrap_or(0) as i64;
                if c.has_year {
                    anchor.insert(h.clone(), secs);
                }
            }
            if let Some(off) = b.utc_offset {
                tz.insert(h.clone(), off);
            }
        }
    }
    let mut dated_host: BTreeMap<String, i64> = BTreeMap::new();
    let mut dated_any: Option<i64> = None;
    for r in results {
        for e in r.events.iter().filter(|e| !e.bmc) {
            if let Some(w) = e.stamp.wall.filter(|w| w.has_year) {
                let secs = w.naive_secs - w.offset.unwrap_or(0) as i64;
                let h = short_host_str(e.host.as_deref().or(r.host.as_deref()).unwrap_or(""));
                match dated_host.get_mut(h) {
                    Some(v) => *v = (*v).max(secs),
                    None => {
                        dated_host.insert(h.to_string(), secs);
                    }
                }
                dated_any = Some(dated_any.map_or(secs, |d| d.max(secs)));
            }
        }
    }
    HostClocks {
        anchor,
        tz,
        dated_host,
        dated_any,
        // the zone of each host's BMC clock, from its records that print one (Redfish
        // `Created`, lclog `Timestamp` with an offset): the most frequent offset
        bmc_tz: bmc_zones(results),
    }
}

/// Numbers each event's boot segment within its input: a boot marker line, or an uptime that
/// went back by more than a second, starts the next one.
pub(super) fn boot_segments(results: &mut [InputResult]) {
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
}

/// The wall time of every event of every input (in input order), with notes on BMC clocks
/// read without a zone.
pub(super) fn wall_times(
    results: &[InputResult],
    opts: &TimeOptions,
    notes: &mut Vec<String>,
) -> Vec<Vec<Pending>> {
    let facts = host_clocks(results);
    let mut bmc_hosts: BTreeMap<String, Option<i32>> = BTreeMap::new();
    let pend = results
        .iter()
        .map(|r| input_wall_times(r, opts, &facts, &mut bmc_hosts))
        .collect();
    for (h, zone) in bmc_hosts {
        notes.push(match zone {
            Some(off) => format!("{h}: BMC times without a zone are read in the zone of the BMC's own records (UTC{}); the BMC clock is not checked against the host's", offset_text(off)),
            None => format!("{h}: BMC times without a zone are read in the host's zone (--tz sets it); the BMC clock is not checked against the host's"),
        });
    }
    pend
}

/// The wall times of one input's events: the year from its anchor, the zone from the options,
/// the bundle or (for BMC records) the BMC's own records. BMC hosts whose zone-less times were
/// read are noted in `bmc_hosts`.
fn input_wall_times(
    r: &InputResult,
    opts: &TimeOptions,
    facts: &HostClocks,
    bmc_hosts: &mut BTreeMap<String, Option<i32>>,
) -> Vec<Pending> {
    let host = r.host.as_deref().unwrap_or_default();
    let (base, rolls) = infer_year(&r.events, year_anchor(r, opts, facts));
    let tz = opts
        .tz_offset
        .or_else(|| facts.tz.get(host).copied())
        .unwrap_or(0);
    let forced = opts.tz_offset.is_some() || opts.zone.is_some();
    let tz_known = forced || facts.tz.contains_key(host);
    let mut v = Vec::with_capacity(r.events.len());
    for (e, roll) in r.events.iter().zip(rolls) {
        // --year is the year the input starts in: a New Year crossed inside it still moves
        // the later lines to the next year
        let year = opts.year.map_or(base + roll, |y| y + roll);
        // a BMC's clock is its own: the zone its other records name, else the host's; only
        // `--tz` makes a zone-less BMC time exact
        let (tz, tz_known) = if e.bmc {
            let h = e.host.as_deref().or(r.host.as_deref()).map(short_host_str);
            let zone = h.and_then(|h| facts.bmc_tz.get(h).copied());
            if let (Some(h), Some(w)) = (h, e.stamp.wall) {
                if w.offset.is_none() && !forced {
                    bmc_hosts.insert(h.to_string(), zone);
                }
            }
            (opts.tz_offset.or(zone).unwrap_or(tz), forced)
        } else {
            (tz, tz_known)
        };
        v.push(pending(e, (year, tz, tz_known), opts));
    }
    v
}

/// The time that anchors the year of an input's year-less times: the end of `--year`, else
/// the host's anchor, a day after the latest date its bundle (or any bundle) names, the
/// input's modification time, or now.
fn year_anchor(r: &InputResult, opts: &TimeOptions, facts: &HostClocks) -> i64 {
    let host = r.host.as_deref().unwrap_or_default();
    opts.year
        .map(|y| crate::formats::time::civil_secs(y, 12, 31, 0).unwrap_or(opts.now))
        .or_else(|| facts.anchor.get(host).copied())
        .or_else(|| {
            facts
                .dated_host
                .get(short_host_str(host))
                .map(|d| d + 86_400)
        })
        .or(facts.dated_any.map(|d| d + 86_400))
        .or(r.mtime)
        .unwrap_or(opts.now)
}

/// One event's wall time in its `year` and zone `tz`, exact when the zone is known (or the time
/// names it), the year is known and the time is the event's own.
fn pending(e: &RawEvent, (year, tz, tz_known): (i32, i32, bool), opts: &TimeOptions) -> Pending {
    match wall_us(e, year, tz, opts.zone.as_ref()) {
        Some((us, zoned)) => {
            let has_year = e.stamp.wall.is_some_and(|w| w.has_year) || opts.year.is_some();
            // a date given to a time of day is an estimate
            let exact =
                (zoned || tz_known) && has_year && !e.borrowed_time && e.stamp.tod_us.is_none();
            Pending {
                time_us: Some(us),
                quality: if exact {
                    TimeQuality::Exact
                } else {
                    TimeQuality::Estimated
                },
            }
        }
        None => Pending {
            time_us: None,
            quality: TimeQuality::None,
        },
    }
}

/// Clocks that went backwards inside one input (a clock step, a restored snapshot, lines merged
/// out of order): said once per input, with the first place and how many times; the timeline
/// orders by time whatever the line order.
pub(super) fn warn_backwards(results: &mut [InputResult], pend: &[Vec<Pending>]) {
    for (r, pv) in results.iter_mut().zip(pend) {
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
                "clock went backwards {}: first at line {line}, {back} s earlier than line {from}; events are ordered by time",
                if times == 1 { "once".to_string() } else { format!("{times} times") }
            ));
        }
    }
}

/// Anchors: (host, body) → offsets (wall - mono) from events carrying both.
type Anchors<'r> = crate::scan::FastMap<(&'r str, &'r str), Vec<(u64, i64)>>;

/// Gives events that have only an uptime a wall time: the median offset of the lines of the same
/// host and text that carry both in their boot segment, else (for the last boot of a bundle)
/// the bundle's capture time.
pub(super) fn align_uptimes(
    results: &[InputResult],
    pend: &mut [Vec<Pending>],
    notes: &mut Vec<String>,
) {
    // needed only when some event has an uptime but no wall time
    let mono_only = results.iter().zip(pend.iter()).any(|(r, pv)| {
        r.events
            .iter()
            .zip(pv)
            .any(|(e, p)| p.time_us.is_none() && e.stamp.mono_us.is_some())
    });
    if !mono_only {
        return;
    }
    let mut anchors: Anchors = Default::default();
    for (r, pv) in results.iter().zip(pend.iter()) {
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
    for (r, pv) in results.iter().zip(pend.iter_mut()) {
        let aligned = align_input(r, pv, &anchors);
        if aligned > 0 {
            notes.push(format!("{}: {aligned} uptime stamps aligned to wall time with matching lines of the same host", r.path));
        }
    }
}

/// Aligns the uptime-only events of one input (see [`align_uptimes`]); returns how many were
/// aligned by anchors.
fn align_input(r: &InputResult, pv: &mut [Pending], anchors: &Anchors) -> usize {
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
    if let Some(c) = r.bundle.as_ref().and_then(|b| b.captured) {
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
    // the median offset per boot segment
    let median: BTreeMap<u32, i64> = seg_offsets
        .into_iter()
        .map(|(boot, mut offs)| {
            offs.sort_unstable();
            (boot, offs[offs.len() / 2])
        })
        .collect();
    let mut aligned = 0;
    for (e, p) in r.events.iter().zip(pv.iter_mut()) {
        if p.time_us.is_some() {
            continue;
        }
        let Some(m) = e.stamp.mono_us else { continue };
        if let Some(off) = median.get(&e.boot) {
            p.time_us = Some(m as i64 + off);
            p.quality = TimeQuality::Aligned;
            aligned += 1;
        } else if let Some((_, off)) = capture_bound.filter(|(b, _)| *b == e.boot) {
            p.time_us = Some(m as i64 + off);
            p.quality = TimeQuality::Estimated;
        }
    }
    aligned
}
