//! Dates for lines that print only a time of day (`[15:58:29] WARNING …`, see
//! [`crate::formats::clock`]), before the year, zone and clock of every stamp are settled.
//!
//! In each input, a time of day takes its date from the dated lines of the same file: walking
//! down the file from a dated line (and up from the first one), each time of day is put on the
//! day that brings it nearest to the reading before it, so a clock that goes back by more than
//! twelve hours has passed midnight. An input with no dated line at all is dated as a whole,
//! its days counted the same way from its first time of day: by `--date` (the day its first
//! time of day falls on), else by the dated logs of the same host (the day that puts its last
//! line nearest to the end of the host's log with the most dated lines), else by the capture
//! time of the host's bundle (the last day that puts its last line before the capture). The
//! dates are estimates (`time_quality` `estimated`), said in a note per input.
//!
//! What nothing dates keeps its time of day and the days counted from its file's first one
//! (in [`crate::model::LineStamp::tod_us`]): it is ordered and grouped within its file by
//! that time, and shown as `15:58:29, date unknown`.

use super::{short_host_str, TimeOptions};
use crate::model::{RawEvent, WallStamp, DAY_US};
use crate::pipeline::InputResult;
use crate::words::counted;

const DAY: i64 = DAY_US as i64;

/// A dated reading in the frame of the lines that print it: the printed fields read as UTC
/// (microseconds), the zone they name, and whether they name the year.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Frame {
    naive_us: i64,
    offset: Option<i32>,
    has_year: bool,
}

impl Frame {
    fn of(w: &WallStamp) -> Option<Frame> {
        let naive_us = w.naive_secs.checked_mul(1_000_000)? + i64::from(w.micros);
        Some(Frame {
            naive_us,
            offset: w.offset,
            has_year: w.has_year,
        })
    }

    /// This frame's stamp at `naive_us`.
    fn at(self, naive_us: i64) -> Option<WallStamp> {
        let mut naive_secs = naive_us.div_euclid(1_000_000);
        if !self.has_year {
            // a year-less day past New Year's Eve stays in the stand-in year: the year of
            // year-less stamps counts New Years from the file's order
            naive_secs =
                crate::formats::time::rebase_year(naive_secs, crate::formats::time::NO_YEAR)?;
        }
        Some(WallStamp {
            naive_secs,
            micros: naive_us.rem_euclid(1_000_000) as u32,
            offset: self.offset,
            has_year: self.has_year,
        })
    }
}

/// The reading with time of day `tod` nearest to `cursor`: on the cursor's day, the day before
/// or the day after (half a day either way: later on a tie).
pub(super) fn nearest(cursor: i64, tod: u64) -> i64 {
    let t = cursor.div_euclid(DAY) * DAY + (tod % DAY_US) as i64;
    [t + DAY, t, t - DAY]
        .into_iter()
        .min_by_key(|c| c.abs_diff(cursor))
        .unwrap_or(t)
}

/// A dated line's reading: an event with a wall time that was not itself dated from a time of
/// day (a BMC keeps its own clock).
fn anchor(e: &RawEvent) -> Option<Frame> {
    if e.bmc || e.stamp.tod_us.is_some() {
        return None;
    }
    Frame::of(e.stamp.wall.as_ref()?)
}

/// Dates the times of day of one input from its dated lines (see the module doc); returns how
/// many were dated.
pub(super) fn within_file(events: &mut [RawEvent]) -> usize {
    let mut dated = 0;
    let mut walk = |cursor: &mut Option<Frame>, e: &mut RawEvent| {
        if let Some(a) = anchor(e) {
            *cursor = Some(a);
        } else if let (Some(c), true) = (cursor.as_mut(), e.stamp.only_time_of_day()) {
            let t = nearest(c.naive_us, e.stamp.tod_us.unwrap_or(0));
            if let Some(w) = c.at(t) {
                e.stamp.wall = Some(w);
                c.naive_us = t;
                dated += 1;
            }
        }
    };
    let mut cursor = None;
    for e in events.iter_mut() {
        walk(&mut cursor, e);
    }
    let mut cursor = None;
    for e in events.iter_mut().rev() {
        walk(&mut cursor, e);
    }
    dated
}

/// Counts the days of an input's times of day from its first one: each becomes microseconds
/// since midnight of the first one's day (earlier days, when the clock steps back just after
/// midnight, move that day earlier). Returns the last one's.
pub(super) fn count_days(events: &mut [RawEvent]) -> Option<u64> {
    let mut rel: Vec<(usize, i64)> = Vec::new();
    let mut cursor: Option<i64> = None;
    for (i, e) in events.iter().enumerate() {
        if !e.stamp.only_time_of_day() {
            continue;
        }
        let tod = e.stamp.tod_us.unwrap_or(0);
        let t = cursor.map_or((tod % DAY_US) as i64, |c| nearest(c, tod));
        rel.push((i, t));
        cursor = Some(t);
    }
    let low = rel.iter().map(|r| r.1).min()?;
    let shift = if low < 0 {
        low.div_euclid(DAY) * -DAY
    } else {
        0
    };
    for &(i, t) in &rel {
        events[i].stamp.tod_us = Some((t + shift) as u64);
    }
    rel.last().map(|r| (r.1 + shift) as u64)
}

/// Where the date of an undated input came from.
enum Source {
    Option,
    HostLog(String),
    Capture(String),
}

/// Dates every time of day of the inputs (see the module doc); notes what was dated from what,
/// and what nothing dates.
pub(super) fn date_times_of_day(
    results: &mut [InputResult],
    opts: &TimeOptions,
    notes: &mut Vec<String>,
) {
    let has_tod = |r: &InputResult| r.events.iter().any(|e| e.stamp.only_time_of_day());
    if !results.iter().any(has_tod) {
        return;
    }
    for r in results.iter_mut().filter(|r| has_tod(r)) {
        let n = within_file(&mut r.events);
        if n > 0 {
            notes.push(format!(
                "{}: {} of day dated from the dated lines of the same file (estimated)",
                r.path,
                counted(n as u64, "time")
            ));
        }
    }
    let refs = host_logs(results);
    let captures = captures(results);
    for r in results.iter_mut() {
        if !has_tod(r) {
            continue;
        }
        let Some(last) = count_days(&mut r.events) else {
            continue;
        };
        let host = r.host.as_deref().map(short_host_str);
        let chosen = external(opts, (r.index, host), last, (&refs, &captures));
        let undated = r
            .events
            .iter()
            .filter(|e| e.stamp.only_time_of_day())
            .count();
        match chosen {
            Some((midnight, frame, source)) => {
                for e in r.events.iter_mut().filter(|e| e.stamp.only_time_of_day()) {
                    let rel = e.stamp.tod_us.unwrap_or(0) as i64;
                    e.stamp.wall = frame.at(midnight + rel);
                }
                let from = match source {
                    Source::Option => "--date".to_string(),
                    Source::HostLog(p) => format!("the dated lines of {p} (same host)"),
                    Source::Capture(h) => format!("the capture time of {h}'s bundle"),
                };
                notes.push(format!(
                    "{}: {} of day dated from {from} (estimated)",
                    r.path,
                    counted(undated as u64, "time")
                ));
            }
            None => notes.push(format!(
                "{}: {} with only a time of day that nothing dates: ordered within the file by that time (--date YYYY-MM-DD dates them)",
                r.path,
                counted(undated as u64, "event")
            )),
        }
    }
}

/// Per input with dated lines: its index, short host, how many dated lines and the last one.
type HostLog = (usize, Option<String>, usize, Frame, String);

fn host_logs(results: &[InputResult]) -> Vec<HostLog> {
    results
        .iter()
        .filter_map(|r| {
            let mut n = 0;
            let mut last: Option<Frame> = None;
            for a in r.events.iter().filter_map(anchor) {
                n += 1;
                if last.is_none_or(|l| a.naive_us > l.naive_us) {
                    last = Some(a);
                }
            }
            let host = r.host.as_deref().map(|h| short_host_str(h).to_string());
            Some((r.index, host, n, last?, r.path.clone()))
        })
        .collect()
}

/// Per host (short name), a bundle's capture time with its year.
fn captures(results: &[InputResult]) -> Vec<(String, Frame)> {
    let mut out: Vec<(String, Frame)> = Vec::new();
    for r in results {
        let (Some(b), Some(h)) = (&r.bundle, &r.host) else {
            continue;
        };
        if let Some(f) = b
            .captured
            .filter(|c| c.has_year)
            .as_ref()
            .and_then(Frame::of)
        {
            out.push((short_host_str(h).to_string(), f));
        }
    }
    out
}

/// The midnight (in the chosen frame) of the first day of an undated input `k` of `host` whose
/// last time of day lies `last` after its first day's midnight, the frame and where they came
/// from. An input that names no host takes the logs of the only host the others name.
fn external(
    opts: &TimeOptions,
    (k, host): (usize, Option<&str>),
    last: u64,
    (refs, captures): (&[HostLog], &[(String, Frame)]),
) -> Option<(i64, Frame, Source)> {
    if let Some(d) = opts.date {
        let frame = Frame {
            naive_us: d.checked_mul(1_000_000)?,
            offset: None,
            has_year: true,
        };
        return Some((frame.naive_us, frame, Source::Option));
    }
    let others: Vec<&HostLog> = refs.iter().filter(|r| r.0 != k).collect();
    let host: Option<String> = match host {
        Some(h) => Some(h.to_string()),
        None => {
            let mut hosts: Vec<&Option<String>> = others.iter().map(|r| &r.1).collect();
            hosts.sort();
            hosts.dedup();
            match hosts.as_slice() {
                [one] => (*one).clone(),
                _ => return None,
            }
        }
    };
    let best = others
        .iter()
        .filter(|r| r.1 == host)
        .max_by_key(|r| (r.2, std::cmp::Reverse(r.0)));
    let last = last as i64;
    if let Some(r) = best {
        let end = nearest(r.3.naive_us, last as u64);
        return Some((end - last, r.3, Source::HostLog(r.4.clone())));
    }
    let h = host?;
    let (_, cap) = captures.iter().find(|c| c.0 == h)?;
    let mut end = nearest(cap.naive_us, last as u64);
    if end > cap.naive_us {
        end -= DAY;
    }
    Some((end - last, *cap, Source::Capture(h)))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::{Attrs, Body, Layer, LineStamp, Severity};
    use std::sync::Arc;

    const H: u64 = 3_600_000_000;

    fn event(line: u64, stamp: LineStamp) -> RawEvent {
        RawEvent {
            input: 0,
            line,
            kind: "xid",
            code: None,
            gpu: None,
            rank: None,
            host: None,
            layer: Layer::Hardware,
            severity: Severity::Error,
            message: Arc::from("x"),
            body: Body::default(),
            stamp,
            borrowed_time: false,
            boot: 0,
            recognizer: "t",
            attrs: Attrs::new(),
            bmc: false,
            suppressed: 0,
        }
    }

    fn dated(line: u64, y: i32, mo: u32, d: u32, sod: u32) -> RawEvent {
        let w = WallStamp {
            naive_secs: crate::formats::time::civil_secs(y, mo, d, sod).unwrap(),
            micros: 0,
            offset: None,
            has_year: true,
        };
        event(
            line,
            LineStamp {
                wall: Some(w),
                mono_us: None,
                tod_us: None,
            },
        )
    }

    fn secs(e: &RawEvent) -> Option<i64> {
        e.stamp.wall.map(|w| w.naive_secs)
    }

    fn civil(y: i32, mo: u32, d: u32, sod: u32) -> i64 {
        crate::formats::time::civil_secs(y, mo, d, sod).unwrap()
    }

    #[test]
    fn nearest_reading_crosses_midnight_when_the_clock_goes_back_far() {
        let day = DAY;
        let at = |h: i64| h * 3_600_000_000;
        // 23:50 then 00:10: the next day
        assert_eq!(
            nearest(10 * day + at(23), H / 6),
            11 * day + at(0) + at(1) / 6
        );
        // 15:00 then 14:59: the same day, a minute back
        assert_eq!(
            nearest(10 * day + at(15), 14 * H + 59 * 60_000_000),
            10 * day + at(15) - 60_000_000
        );
        // 00:05 then 23:59: the day before
        assert_eq!(
            nearest(10 * day + 300_000_000, 23 * H + 59 * 60_000_000),
            10 * day - 60_000_000
        );
    }

    #[test]
    fn times_of_day_take_the_date_of_the_dated_lines_around_them() {
        let mut ev = vec![
            event(1, LineStamp::time_of_day(22 * H)),
            dated(2, 2025, 3, 14, 23 * 3600),
            event(3, LineStamp::time_of_day(23 * H + 30 * 60_000_000)),
            event(4, LineStamp::time_of_day(H / 2)),
            event(5, LineStamp::time_of_day(2 * H)),
        ];
        assert_eq!(within_file(&mut ev), 4);
        assert_eq!(secs(&ev[0]), Some(civil(2025, 3, 14, 22 * 3600)));
        assert_eq!(secs(&ev[2]), Some(civil(2025, 3, 14, 23 * 3600 + 1800)));
        assert_eq!(secs(&ev[3]), Some(civil(2025, 3, 15, 1800)));
        assert_eq!(secs(&ev[4]), Some(civil(2025, 3, 15, 2 * 3600)));
        assert!(ev.iter().all(|e| e.stamp.wall.is_some_and(|w| w.has_year)));
    }

    #[test]
    fn an_undated_file_counts_its_days_from_its_first_time_of_day() {
        let mut ev = vec![
            event(1, LineStamp::time_of_day(23 * H)),
            event(2, LineStamp::time_of_day(H)),
            event(3, LineStamp::time_of_day(H - 1)),
        ];
        assert_eq!(within_file(&mut ev), 0);
        assert_eq!(count_days(&mut ev), Some(DAY_US + H - 1));
        assert_eq!(ev[0].stamp.tod_us, Some(23 * H));
        assert_eq!(ev[1].stamp.tod_us, Some(DAY_US + H));
        // a clock that steps back just after midnight moves the first day earlier
        let mut ev = vec![
            event(1, LineStamp::time_of_day(60_000_000)),
            event(2, LineStamp::time_of_day(DAY_US - 60_000_000)),
        ];
        count_days(&mut ev);
        assert_eq!(ev[0].stamp.tod_us, Some(DAY_US + 60_000_000));
        assert_eq!(ev[1].stamp.tod_us, Some(DAY_US - 60_000_000));
    }

    #[test]
    fn an_undated_file_is_dated_by_the_option_the_host_log_or_the_capture() {
        let log = |n, host: &str| {
            let f = Frame::of(&dated(1, 2025, 3, 14, 16 * 3600).stamp.wall.unwrap()).unwrap();
            (1usize, Some(host.to_string()), n, f, "kern.log".to_string())
        };
        let opts = TimeOptions::default();
        // last line at 15:58 of its first day, the host's log ends at 16:00 on 14 March
        let last = 15 * H + 58 * 60_000_000;
        let (mid, f, _) = external(&opts, (0, Some("n1")), last, (&[log(3, "n1")], &[])).unwrap();
        assert_eq!(mid, civil(2025, 3, 14, 0) * 1_000_000);
        assert!(f.has_year);
        // another host's log does not date it; a file naming no host takes the only host's
        assert!(external(&opts, (0, Some("n2")), last, (&[log(3, "n1")], &[])).is_none());
        assert!(external(&opts, (0, None), last, (&[log(3, "n1")], &[])).is_some());
        assert!(external(&opts, (0, None), last, (&[log(3, "n1"), log(2, "n3")], &[])).is_none());
        // the capture at 10:00 on 15 March: the last line before it is 14 March 15:58
        let cap = Frame::of(&dated(1, 2025, 3, 15, 10 * 3600).stamp.wall.unwrap()).unwrap();
        let (mid, _, _) =
            external(&opts, (0, Some("n2")), last, (&[], &[("n2".into(), cap)])).unwrap();
        assert_eq!(mid, civil(2025, 3, 14, 0) * 1_000_000);
        // --date names the first day
        let opts = TimeOptions {
            date: Some(civil(2024, 1, 2, 0)),
            ..TimeOptions::default()
        };
        let (mid, _, _) = external(&opts, (0, Some("n1")), last, (&[log(3, "n1")], &[])).unwrap();
        assert_eq!(mid, civil(2024, 1, 2, 0) * 1_000_000);
    }
}
