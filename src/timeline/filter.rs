//! Filters and time windows (`--since`, `--until`, `--host`, `--gpu`, `--kind`, `--layer`):
//! applied to the timeline before incidents are formed, so that an incident is judged only on
//! the events the user kept; what was kept and dropped is reported in the accounting.

use super::{finish, short_host, Event, Zone};
use crate::model::Layer;
use chrono::NaiveDateTime;

/// A bound of the time window.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeBound {
    /// An instant: UTC microseconds since the epoch.
    At(i64),
    /// This many microseconds before the last timed event of the inputs (`-2h`): the logs end
    /// where the incident was left, not at the moment of the analysis.
    BeforeEnd(i64),
    /// This many microseconds after the first timed event of the inputs (`+30m`).
    AfterStart(i64),
}

impl TimeBound {
    /// Reads `-2h`, `-1h30m`, `+30m`, `@1714564800` (epoch seconds), `2024-05-01`,
    /// `2024-05-01 12:00`, `2024-05-01 12:00:30.5`, ISO 8601 with `T` and a zone suffix. Times
    /// without a zone are read in `zone` (UTC when none).
    pub fn parse(s: &str, zone: Option<&Zone>) -> Result<TimeBound, String> {
        let t = s.trim();
        let bad = || {
            format!(
                "`{s}`: expected a time such as `2024-05-01 12:00`, `2024-05-01T12:00:00Z`, \
                 `@1714564800`, or a span from the end (`-2h`, `-30m`) or start (`+1h`) of the logs"
            )
        };
        if let Some(rest) = t.strip_prefix('-') {
            return span_us(rest).map(TimeBound::BeforeEnd).ok_or_else(bad);
        }
        if let Some(rest) = t.strip_prefix('+') {
            return span_us(rest).map(TimeBound::AfterStart).ok_or_else(bad);
        }
        if let Some(rest) = t.strip_prefix('@') {
            let secs: f64 = rest.parse().map_err(|_| bad())?;
            return Ok(TimeBound::At((secs * 1e6).round() as i64));
        }
        if let Ok(d) = chrono::DateTime::parse_from_rfc3339(&t.replacen(' ', "T", 1)) {
            return Ok(TimeBound::At(d.timestamp_micros()));
        }
        let naive = naive_time(t).ok_or_else(bad)?;
        let secs = naive.and_utc().timestamp();
        let off = zone.map_or(0, |z| z.offset_at_local(secs));
        let us = naive.and_utc().timestamp_micros() - off as i64 * 1_000_000;
        Ok(TimeBound::At(us))
    }

    /// The instant, given the first and last timed events (None: a span with nothing timed).
    fn resolve(self, span: Option<(i64, i64)>) -> Option<i64> {
        match (self, span) {
            (TimeBound::At(us), _) => Some(us),
            (TimeBound::BeforeEnd(d), Some((_, last))) => Some(last - d),
            (TimeBound::AfterStart(d), Some((first, _))) => Some(first + d),
            _ => None,
        }
    }
}

/// `2h`, `30m`, `1h30m`, `90s`, `2d`, `1w` in microseconds.
fn span_us(s: &str) -> Option<i64> {
    let mut total: i64 = 0;
    let mut num = String::new();
    let mut any = false;
    for c in s.chars() {
        if c.is_ascii_digit() {
            num.push(c);
            continue;
        }
        let unit: i64 = match c {
            's' => 1,
            'm' => 60,
            'h' => 3600,
            'd' => 86_400,
            'w' => 7 * 86_400,
            _ => return None,
        };
        let n: i64 = num.parse().ok()?;
        total = total.checked_add(n.checked_mul(unit)?.checked_mul(1_000_000)?)?;
        num.clear();
        any = true;
    }
    // a bare number is minutes, as in `-30`
    if !num.is_empty() {
        let n: i64 = num.parse().ok()?;
        total = total.checked_add(n.checked_mul(60_000_000)?)?;
        any = true;
    }
    any.then_some(total)
}

fn naive_time(t: &str) -> Option<NaiveDateTime> {
    let t = t.replacen('T', " ", 1);
    for f in [
        "%Y-%m-%d %H:%M:%S%.f",
        "%Y-%m-%d %H:%M:%S",
        "%Y-%m-%d %H:%M",
        "%Y/%m/%d %H:%M:%S",
        "%Y/%m/%d %H:%M",
    ] {
        if let Ok(d) = NaiveDateTime::parse_from_str(&t, f) {
            return Some(d);
        }
    }
    chrono::NaiveDate::parse_from_str(&t, "%Y-%m-%d")
        .ok()
        .and_then(|d| d.and_hms_opt(0, 0, 0))
}

/// What the user keeps. Empty lists keep everything; several values of one filter are
/// alternatives, different filters must all match.
#[derive(Clone, Debug, Default)]
pub struct EventFilter {
    /// Keep events at or after this time.
    pub since: Option<TimeBound>,
    /// Keep events at or before this time.
    pub until: Option<TimeBound>,
    /// Hosts (full or short names, case-insensitive).
    pub hosts: Vec<String>,
    /// GPUs: PCI bus ids (`0000:3b:00.0`, `3b:00.0`), indices (`3`) or UUIDs.
    pub gpus: Vec<String>,
    /// Event kinds (`xid`, `hung_task`).
    pub kinds: Vec<String>,
    /// Layers of the events on their own.
    pub layers: Vec<Layer>,
}

impl EventFilter {
    /// True when nothing is filtered.
    pub fn is_empty(&self) -> bool {
        self.since.is_none()
            && self.until.is_none()
            && self.hosts.is_empty()
            && self.gpus.is_empty()
            && self.kinds.is_empty()
            && self.layers.is_empty()
    }

    fn host_matches(&self, e: &Event) -> bool {
        self.hosts.is_empty()
            || e.host.as_deref().is_some_and(|h| {
                self.hosts.iter().any(|want| {
                    h.eq_ignore_ascii_case(want)
                        || short_host(h).eq_ignore_ascii_case(&short_host(want))
                })
            })
    }

    fn gpu_matches(&self, e: &Event) -> bool {
        self.gpus.is_empty() || self.gpus.iter().any(|want| gpu_is(e, want))
    }

    fn kind_layer_match(&self, e: &Event) -> bool {
        (self.kinds.is_empty() || self.kinds.iter().any(|k| k.eq_ignore_ascii_case(e.kind)))
            && (self.layers.is_empty() || self.layers.contains(&e.layer))
    }
}

/// True when event `e` is of GPU `want` (a bus id, an index or a UUID).
fn gpu_is(e: &Event, want: &str) -> bool {
    let want = want.trim();
    if let Some(bdf) = crate::ids::normalize_bdf(want) {
        let of = |g: &str| crate::ids::normalize_bdf(g).is_some_and(|x| x == bdf);
        return e.gpu.as_deref().is_some_and(of);
    }
    if want.bytes().all(|b| b.is_ascii_digit()) {
        return e.gpu.as_deref() == Some(want) || e.attrs.get("gpu_index") == Some(want);
    }
    let same = |g: Option<&str>| g.is_some_and(|g| g.eq_ignore_ascii_case(want));
    same(e.gpu.as_deref()) || same(e.gpu_uuid())
}

/// What a filter did: the resolved window, the values, and the event occurrences before and
/// after.
#[derive(Clone, Debug, Default)]
pub struct FilterOutcome {
    /// The window's start, resolved (UTC microseconds).
    pub since_us: Option<i64>,
    /// The window's end, resolved.
    pub until_us: Option<i64>,
    /// The filter as given.
    pub filter: EventFilter,
    /// Event occurrences on the timeline before filtering.
    pub events_before: u64,
    /// Event occurrences kept.
    pub events_kept: u64,
    /// Of those dropped, occurrences without a time (a time window cannot place them).
    pub untimed_dropped: u64,
    /// A relative bound (`-2h`) that could not be placed: no event has a wall-clock time.
    pub unplaced: bool,
}

/// Keeps the events (and throughput samples) the filter selects, renumbered in timeline order.
pub fn apply(
    f: &EventFilter,
    events: Vec<Event>,
    progress: Vec<Event>,
) -> (Vec<Event>, Vec<Event>, FilterOutcome) {
    let timed = || events.iter().filter_map(|e| e.time_us);
    let span = timed().min().zip(timed().max());
    let since = f.since.and_then(|b| b.resolve(span));
    let until = f.until.and_then(|b| b.resolve(span));
    // a span from the logs' ends with no timed event: nothing can be in the window
    let windowed = f.since.is_some() || f.until.is_some();
    let in_window = |t: Option<i64>| {
        !windowed || t.is_some_and(|t| since.is_none_or(|s| t >= s) && until.is_none_or(|u| t <= u))
    };
    let mut out = FilterOutcome {
        since_us: since,
        until_us: until,
        filter: f.clone(),
        events_before: events.iter().map(Event::weight).sum(),
        unplaced: span.is_none() && windowed,
        ..FilterOutcome::default()
    };
    let mut kept = Vec::with_capacity(events.len());
    for e in events {
        if in_window(e.time_us) && f.host_matches(&e) && f.gpu_matches(&e) && f.kind_layer_match(&e)
        {
            out.events_kept += e.weight();
            kept.push(e);
        } else if windowed && e.time_us.is_none() {
            out.untimed_dropped += e.weight();
        }
    }
    let progress = progress
        .into_iter()
        .filter(|e| in_window(e.time_us) && f.host_matches(e))
        .collect();
    (finish(kept), progress, out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bounds_read_absolute_relative_and_zoned_times() {
        let at = |s: &str| TimeBound::parse(s, None).unwrap();
        assert_eq!(at("-2h"), TimeBound::BeforeEnd(7_200_000_000));
        assert_eq!(at("-1h30m"), TimeBound::BeforeEnd(5_400_000_000));
        assert_eq!(at("+30m"), TimeBound::AfterStart(1_800_000_000));
        assert_eq!(at("-30"), TimeBound::BeforeEnd(1_800_000_000));
        let noon = 1_714_564_800_000_000; // 2024-05-01 12:00:00 UTC
        assert_eq!(at("2024-05-01 12:00"), TimeBound::At(noon));
        assert_eq!(at("2024-05-01T12:00:00Z"), TimeBound::At(noon));
        assert_eq!(at("2024-05-01T14:00:00+02:00"), TimeBound::At(noon));
        assert_eq!(at("2024-05-01 12:00:00.5"), TimeBound::At(noon + 500_000));
        assert_eq!(at("@1714564800"), TimeBound::At(noon));
        assert_eq!(at("2024-05-01"), TimeBound::At(noon - 12 * 3_600_000_000));
        let berlin = Zone::parse("Europe/Berlin").unwrap();
        assert_eq!(
            TimeBound::parse("2024-05-01 14:00", Some(&berlin)).unwrap(),
            TimeBound::At(noon)
        );
        for bad in ["yesterday", "-2x", "2024-13-01", "", "-"] {
            assert!(TimeBound::parse(bad, None).is_err(), "{bad}");
        }
    }
}
