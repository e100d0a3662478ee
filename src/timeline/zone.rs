//! Zones for stamps that carry none (`--tz`): a fixed offset (`UTC`, `+08:00`, `-0500`), an
//! IANA name from the zone database (`Europe/Berlin`, `America/New_York`, also the database's
//! own `CET`, `EST5EDT`, ...), or a common abbreviation read as its fixed offset (`PST`, `CEST`).
//! A named zone gives each stamp the offset in force at that local time (daylight saving time
//! included).
//!
//! The database is jiff's bundled copy (the same on every machine, so the same input gives the
//! same report anywhere). It is a few compact byte tables read only when `--tz` names a zone;
//! chrono-tz's tables, before, held some 29,000 pointers that the loader fixed up on every run,
//! a millisecond of every start-up.

use jiff::tz::{AmbiguousOffset, TimeZone};

/// The zone `--tz` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A fixed offset from UTC, in seconds east.
    Fixed(i32),
    /// A zone of the IANA database (loaded once per process; a run names one zone).
    Named(&'static TimeZone),
}

impl Zone {
    /// Reads a zone: `UTC`/`Z`/`GMT`, a numeric offset, an IANA name (case-insensitive), or an
    /// abbreviation of the built-in table. None when it is none of these.
    pub fn parse(s: &str) -> Option<Zone> {
        let s = s.trim();
        if let Some((off, n)) = crate::formats::time::zone(s.as_bytes()) {
            if n == s.len() {
                return Some(Zone::Fixed(off));
            }
        }
        if matches!(s.to_ascii_uppercase().as_str(), "UTC" | "GMT" | "Z") {
            return Some(Zone::Fixed(0));
        }
        if let Some(tz) = named(s) {
            return Some(Zone::Named(tz));
        }
        let upper = s.to_ascii_uppercase();
        match crate::formats::time::zone_word(upper.as_bytes()) {
            Some((Some(off), n)) if n == upper.len() => Some(Zone::Fixed(off)),
            _ => None,
        }
    }

    /// The offset (seconds east of UTC) in force at local time `naive_secs` (seconds since the
    /// epoch of the local wall clock). A time that occurs twice (clocks set back) takes the
    /// earlier offset; a time that never occurs (clocks set forward) the offset before the gap.
    pub fn offset_at_local(&self, naive_secs: i64) -> i32 {
        match self {
            Zone::Fixed(o) => *o,
            Zone::Named(tz) => local_offset(tz, naive_secs).unwrap_or(0),
        }
    }

    /// The zone as the user would write it.
    pub fn name(&self) -> String {
        match self {
            Zone::Fixed(0) => "UTC".to_string(),
            Zone::Fixed(o) => {
                let sign = if *o < 0 { '-' } else { '+' };
                let a = o.unsigned_abs();
                format!("{sign}{:02}:{:02}", a / 3600, a % 3600 / 60)
            }
            Zone::Named(tz) => tz.iana_name().unwrap_or("UTC").to_string(),
        }
    }
}

/// The database's zone named `s` (any case), kept for the rest of the process: the zones asked
/// for are few (one per `--tz`), and a `&'static` keeps [`Zone`] a plain value.
fn named(s: &str) -> Option<&'static TimeZone> {
    use std::sync::Mutex;
    static LOADED: Mutex<Vec<&'static TimeZone>> = Mutex::new(Vec::new());
    if s.is_empty() || !s.is_ascii() {
        return None;
    }
    let tz = jiff::tz::db().get(s).ok()?;
    let mut loaded = LOADED.lock().unwrap_or_else(|e| e.into_inner());
    if let Some(&known) = loaded.iter().find(|&&z| *z == tz) {
        return Some(known);
    }
    let kept: &'static TimeZone = Box::leak(Box::new(tz));
    loaded.push(kept);
    Some(kept)
}

/// The offset in force at the local wall-clock time `naive_secs` in `tz`: the earlier one at a
/// time that occurs twice, the one before the gap at a time that never occurs.
fn local_offset(tz: &TimeZone, naive_secs: i64) -> Option<i32> {
    let civil = TimeZone::UTC.to_datetime(jiff::Timestamp::from_second(naive_secs).ok()?);
    let offset = match tz.to_ambiguous_timestamp(civil).offset() {
        AmbiguousOffset::Unambiguous { offset } => offset,
        AmbiguousOffset::Gap { before, .. } | AmbiguousOffset::Fold { before, .. } => before,
    };
    Some(offset.seconds())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &str) -> i64 {
        chrono::NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
            .unwrap()
            .and_utc()
            .timestamp()
    }

    fn is_named(z: Option<Zone>, name: &str) -> bool {
        matches!(z, Some(Zone::Named(tz)) if tz.iana_name() == Some(name))
    }

    #[test]
    fn names_offsets_and_abbreviations_are_read() {
        assert_eq!(Zone::parse("UTC"), Some(Zone::Fixed(0)));
        assert_eq!(Zone::parse("+08:00"), Some(Zone::Fixed(8 * 3600)));
        assert_eq!(Zone::parse("-0500"), Some(Zone::Fixed(-5 * 3600)));
        assert!(is_named(Zone::parse("Europe/Berlin"), "Europe/Berlin"));
        assert!(is_named(
            Zone::parse("america/new_york"),
            "America/New_York"
        ));
        assert!(is_named(Zone::parse("CET"), "CET"));
        assert!(is_named(Zone::parse("EST"), "EST"));
        assert!(is_named(Zone::parse("EST5EDT"), "EST5EDT"));
        // one zone asked for twice is one value
        assert_eq!(Zone::parse("Asia/Tokyo"), Zone::parse("ASIA/TOKYO"));
        assert_eq!(Zone::parse("PST"), Some(Zone::Fixed(-8 * 3600)));
        assert_eq!(Zone::parse("cest"), Some(Zone::Fixed(7200)));
        assert_eq!(Zone::parse("Mars/Olympus"), None);
        assert_eq!(Zone::parse("+25:00"), None);
    }

    #[test]
    fn a_named_zone_follows_daylight_saving_time() {
        let berlin = Zone::parse("Europe/Berlin").unwrap();
        assert_eq!(berlin.offset_at_local(secs("2024-01-15 12:00:00")), 3600);
        assert_eq!(berlin.offset_at_local(secs("2024-07-15 12:00:00")), 7200);
        // 02:30 on 31 March 2024 does not exist in Berlin: the offset before the gap
        assert_eq!(berlin.offset_at_local(secs("2024-03-31 02:30:00")), 3600);
        // 02:30 on 27 October 2024 occurs twice: the earlier (summer) offset
        assert_eq!(berlin.offset_at_local(secs("2024-10-27 02:30:00")), 7200);
        let ny = Zone::parse("America/New_York").unwrap();
        assert_eq!(ny.offset_at_local(secs("2024-07-04 09:00:00")), -4 * 3600);
        assert_eq!(ny.name(), "America/New_York");
        assert_eq!(Zone::Fixed(-5 * 3600).name(), "-05:00");
    }
}
