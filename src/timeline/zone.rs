//! Zones for stamps that carry none (`--tz`): a fixed offset (`UTC`, `+08:00`, `-0500`), an
//! IANA name from the zone database (`Europe/Berlin`, `America/New_York`, also the database's
//! own `CET`, `EST5EDT`, ...), or a common abbreviation read as its fixed offset (`PST`, `CEST`).
//! A named zone gives each stamp the offset in force at that local time (daylight saving time
//! included).

use chrono::{NaiveDateTime, Offset, TimeZone};
use chrono_tz::Tz;

/// The zone `--tz` names.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Zone {
    /// A fixed offset from UTC, in seconds east.
    Fixed(i32),
    /// A zone of the IANA database.
    Named(Tz),
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
        let named = s.parse::<Tz>().ok().or_else(|| {
            chrono_tz::TZ_VARIANTS
                .iter()
                .find(|z| z.name().eq_ignore_ascii_case(s))
                .copied()
        });
        if let Some(tz) = named {
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
            Zone::Named(tz) => {
                let Some(naive) =
                    chrono::DateTime::from_timestamp(naive_secs, 0).map(|d| d.naive_utc())
                else {
                    return 0;
                };
                local_offset(tz, naive)
            }
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
            Zone::Named(tz) => tz.name().to_string(),
        }
    }
}

fn local_offset(tz: &Tz, naive: NaiveDateTime) -> i32 {
    use chrono::LocalResult;
    match tz.offset_from_local_datetime(&naive) {
        LocalResult::Single(o) | LocalResult::Ambiguous(o, _) => o.fix().local_minus_utc(),
        // in a gap: the offset an hour before (the one in force until the clocks moved)
        LocalResult::None => {
            let before = naive - chrono::Duration::hours(3);
            match tz.offset_from_local_datetime(&before) {
                LocalResult::Single(o) | LocalResult::Ambiguous(o, _) => o.fix().local_minus_utc(),
                LocalResult::None => 0,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(s: &str) -> i64 {
        NaiveDateTime::parse_from_str(s, "%Y-%m-%d %H:%M:%S")
            .unwrap()
            .and_utc()
            .timestamp()
    }

    #[test]
    fn names_offsets_and_abbreviations_are_read() {
        assert_eq!(Zone::parse("UTC"), Some(Zone::Fixed(0)));
        assert_eq!(Zone::parse("+08:00"), Some(Zone::Fixed(8 * 3600)));
        assert_eq!(Zone::parse("-0500"), Some(Zone::Fixed(-5 * 3600)));
        assert_eq!(
            Zone::parse("Europe/Berlin"),
            Some(Zone::Named(Tz::Europe__Berlin))
        );
        assert_eq!(
            Zone::parse("america/new_york"),
            Some(Zone::Named(Tz::America__New_York))
        );
        assert_eq!(Zone::parse("CET"), Some(Zone::Named(Tz::CET)));
        assert_eq!(Zone::parse("EST"), Some(Zone::Named(Tz::EST)));
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
