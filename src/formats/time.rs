//! Hand-written readers for the fixed-width date and time fields that log prefixes use.
//!
//! Each reader takes a byte slice starting at the field and returns the value and the number
//! of bytes consumed. chrono is used only for calendar arithmetic.

pub use super::fields::{
    civil_secs, digits, fraction, hms, is_weekday, month_abbrev, number, NO_YEAR,
};
use crate::model::WallStamp;

/// Reads a zone suffix: `Z`, `+HH:MM`, `+HHMM`, `-HH`; returns offset seconds and length.
pub fn zone(b: &[u8]) -> Option<(i32, usize)> {
    match b.first()? {
        b'Z' | b'z' => Some((0, 1)),
        b'+' | b'-' => {
            let sign = if b[0] == b'-' { -1 } else { 1 };
            let h = digits(&b[1..], 2)? as i32;
            let rest = &b[3..];
            let (m, len) = if rest.first() == Some(&b':') {
                (digits(&rest[1..], 2)? as i32, 6)
            } else if let Some(m) = digits(rest, 2) {
                (m as i32, 5)
            } else {
                (0, 3)
            };
            (h <= 14 && m < 60).then_some((sign * (h * 3600 + m * 60), len))
        }
        _ => None,
    }
}

/// Reads a time of day with an optional 12-hour suffix: `HH:MM:SS`, `H:MM:SS PM`, `12:05:00 AM`
/// (strftime `%X`/`%r` in English locales); returns seconds of the day and the length read.
pub fn clock12(b: &[u8]) -> Option<(u32, usize)> {
    // one-digit hours ("1:31:02 PM") are read as if zero-padded
    let (sod, mut n) = if b.get(1) == Some(&b':') {
        let mut padded = [b'0'; 8];
        let src = b.get(..7)?;
        padded[1..].copy_from_slice(src);
        (hms(&padded)?, 7)
    } else {
        (hms(b)?, 8)
    };
    let mut sod = sod;
    let rest = &b[n..];
    if rest.len() >= 3 && rest[0] == b' ' {
        let half = [rest[1].to_ascii_uppercase(), rest[2].to_ascii_uppercase()];
        let boundary = rest.get(3).is_none_or(|c| !c.is_ascii_alphanumeric());
        if boundary && (half == *b"AM" || half == *b"PM") {
            let h = sod / 3600;
            if h == 0 || h > 12 {
                return None;
            }
            let h24 = match (h, half[0]) {
                (12, b'A') => 0,
                (12, _) => 12,
                (h, b'P') => h + 12,
                (h, _) => h,
            };
            sod = h24 * 3600 + sod % 3600;
            n += 3;
        }
    }
    Some((sod, n))
}

/// Reads a US-style date `MM/DD/YYYY` or `MM/DD/YY` (strftime `%x` in the C locale); returns the
/// year, month, day and the length read.
pub fn us_date(b: &[u8]) -> Option<(i32, u32, u32, usize)> {
    if b.get(2) != Some(&b'/') || b.get(5) != Some(&b'/') {
        return None;
    }
    let m = digits(b, 2)?;
    let d = digits(&b[3..], 2)?;
    let (y, n) = match digits(&b[6..], 4) {
        Some(y) => (y as i32, 10),
        None => (2000 + digits(&b[6..], 2)? as i32, 8),
    };
    if b.get(n).is_some_and(u8::is_ascii_digit) || !(1..=12).contains(&m) || !(1..=31).contains(&d)
    {
        return None;
    }
    Some((y, m, d, n))
}

/// Zone abbreviations read as fixed offsets. Ambiguous ones (`CST`, `IST`, `BST`, `AST`) are
/// left out: a stamp carrying one is read without a zone.
const ZONE_NAMES: [(&[u8], i32); 22] = [
    (b"UTC", 0),
    (b"GMT", 0),
    (b"Z", 0),
    (b"WET", 0),
    (b"WEST", 3600),
    (b"CET", 3600),
    (b"CEST", 7200),
    (b"MET", 3600),
    (b"MEST", 7200),
    (b"EET", 7200),
    (b"EEST", 10800),
    (b"MSK", 10800),
    (b"EST", -5 * 3600),
    (b"EDT", -4 * 3600),
    (b"CDT", -5 * 3600),
    (b"MST", -7 * 3600),
    (b"MDT", -6 * 3600),
    (b"PST", -8 * 3600),
    (b"PDT", -7 * 3600),
    (b"JST", 9 * 3600),
    (b"KST", 9 * 3600),
    (b"HKT", 8 * 3600),
];

/// Reads a zone word after a time: a numeric offset (`+07`, `-0530`, `+05:30`, strftime `%Z`
/// for zones without a name) or an abbreviation. Returns the offset when it is known, and the
/// length of the word (also for unknown abbreviations of 2 to 5 capitals, so the caller can step
/// over them).
pub fn zone_word(b: &[u8]) -> Option<(Option<i32>, usize)> {
    if let Some((off, n)) = zone(b) {
        if b.get(n).is_none_or(|c| !c.is_ascii_alphanumeric()) {
            return Some((Some(off), n));
        }
    }
    let n = b
        .iter()
        .take(6)
        .take_while(|c| c.is_ascii_uppercase())
        .count();
    if !(1..=5).contains(&n) || b.get(n).is_some_and(|c| c.is_ascii_alphanumeric()) {
        return None;
    }
    let word = &b[..n];
    let known = ZONE_NAMES.iter().find(|(z, _)| *z == word).map(|(_, o)| *o);
    (known.is_some() || n >= 2).then_some((known, n))
}

/// Reads an ISO-8601 / RFC 3339 date-time: `YYYY-MM-DD[T ]HH:MM:SS[.frac][zone]`.
pub fn iso_datetime(b: &[u8]) -> Option<(WallStamp, usize)> {
    if b.len() < 19
        || b[4] != b'-'
        || b[7] != b'-'
        || !(b[10] == b'T' || b[10] == b' ' || b[10] == b'_')
    {
        return None;
    }
    let y = digits(b, 4)? as i32;
    let mo = digits(&b[5..], 2)?;
    let d = digits(&b[8..], 2)?;
    let sod = hms(&b[11..])?;
    let mut n = 19;
    let (micros, flen) = fraction(&b[n..]);
    n += flen;
    let mut offset = None;
    if let Some((off, zlen)) = zone(&b[n..]) {
        offset = Some(off);
        n += zlen;
    }
    let naive_secs = civil_secs(y, mo, d, sod)?;
    Some((
        WallStamp {
            naive_secs,
            micros,
            offset,
            has_year: true,
        },
        n,
    ))
}

/// Reads `Mmm dd HH:MM:SS[.frac]` (day space- or zero-padded, or a single digit; the month in
/// English or German); no year.
pub fn syslog_datetime(b: &[u8]) -> Option<(WallStamp, usize)> {
    let (month, ml) = super::locale::month_name(b)?;
    if b.get(ml) != Some(&b' ') {
        return None;
    }
    let mut i = ml + 1;
    if b.get(i) == Some(&b' ') {
        i += 1;
    }
    let (day, dl) = number(&b[i..])?;
    if dl > 2 || day == 0 || day > 31 {
        return None;
    }
    i += dl;
    if b.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    let sod = hms(b.get(i..)?)?;
    i += 8;
    let (micros, flen) = fraction(&b[i..]);
    i += flen;
    let naive_secs = civil_secs(NO_YEAR, month, day as u32, sod)?;
    Some((
        WallStamp {
            naive_secs,
            micros,
            offset: None,
            has_year: false,
        },
        i,
    ))
}

/// Reads a ctime stamp `Www Mmm dd HH:MM:SS YYYY` (dmesg -T, `date`; German names too), optionally
/// with a zone name before the year.
pub fn ctime_datetime(b: &[u8]) -> Option<(WallStamp, usize)> {
    let wl = super::locale::weekday_len(b)?;
    let (mut ws, mut n) = syslog_datetime(&b[wl + 1..])?;
    n += wl + 1;
    if b.get(n) != Some(&b' ') {
        return None;
    }
    n += 1;
    // optional zone word, e.g. "UTC" or "CST" (only UTC/GMT is trusted)
    let mut offset = None;
    if b.get(n).is_some_and(|c| c.is_ascii_alphabetic()) {
        let start = n;
        while n < b.len() && b[n].is_ascii_alphabetic() {
            n += 1;
        }
        if matches!(&b[start..n], b"UTC" | b"GMT") {
            offset = Some(0);
        }
        if b.get(n) != Some(&b' ') {
            return None;
        }
        n += 1;
    }
    let y = digits(&b[n..], 4)? as i32;
    n += 4;
    ws.naive_secs = rebase_year(ws.naive_secs, y)?;
    ws.has_year = true;
    ws.offset = offset;
    Some((ws, n))
}

/// Moves a stamp read with the stand-in year into `year`.
pub fn rebase_year(naive_secs: i64, year: i32) -> Option<i64> {
    let dt = chrono::DateTime::from_timestamp(naive_secs, 0)?.naive_utc();
    use chrono::{Datelike, Timelike};
    let sod = dt.num_seconds_from_midnight();
    civil_secs(year, dt.month(), dt.day(), sod)
}

/// Reads a bracketed uptime `[  123.456789]`; returns micros and length incl. brackets.
pub fn bracket_uptime(b: &[u8]) -> Option<(u64, usize)> {
    if b.first() != Some(&b'[') {
        return None;
    }
    let mut i = 1;
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    let (secs, sl) = number(&b[i..])?;
    i += sl;
    if b.get(i) != Some(&b'.') {
        return None;
    }
    i += 1;
    let (frac, fl) = number(&b[i..])?;
    if !(3..=9).contains(&fl) {
        return None;
    }
    i += fl;
    if b.get(i) != Some(&b']') {
        return None;
    }
    let mut micros = frac;
    for _ in fl..6 {
        micros *= 10;
    }
    for _ in 6..fl {
        micros /= 10;
    }
    if secs > MAX_UPTIME_S {
        return None;
    }
    Some((secs * 1_000_000 + micros, i + 1))
}

/// The largest kernel uptime taken as one, in seconds (about 31,700 years): a larger number in
/// brackets is not an uptime, and bounding it keeps every sum of times far from overflowing.
pub const MAX_UPTIME_S: u64 = 999_999_999_999;

/// The largest wall time taken as one, in microseconds since the epoch (the end of year 9999);
/// the earliest is its negative.
pub const MAX_WALL_US: i64 = 253_402_300_799_999_999;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn iso_with_comma_and_offset() {
        let (ws, n) = iso_datetime(b"2025-01-21T04:41:44,283302+00:00 NVRM").unwrap();
        assert_eq!(n, 32);
        assert_eq!(ws.micros, 283302);
        assert_eq!(ws.offset, Some(0));
        assert_eq!(ws.naive_secs, 1737434504);
    }

    #[test]
    fn iso_nanos_and_z() {
        let (ws, n) = iso_datetime(b"2026-04-22T21:26:20.599488292Z]").unwrap();
        assert_eq!(n, 30);
        assert_eq!(ws.micros, 599488);
        assert_eq!(ws.offset, Some(0));
    }

    #[test]
    fn syslog_padded_and_single_digit_days() {
        let (a, n) = syslog_datetime(b"Jan  5 06:18:52 atom").unwrap();
        assert_eq!(n, 15);
        let (b, _) = syslog_datetime(b"Jan 05 06:18:52 atom").unwrap();
        assert_eq!(a, b);
        assert!(!a.has_year);
        assert!(syslog_datetime(b"Jan 5 06:18:52").is_some());
        assert!(syslog_datetime(b"Foo  5 06:18:52").is_none());
        assert!(syslog_datetime(b"Jan 35 06:18:52").is_none());
    }

    #[test]
    fn ctime_with_year() {
        let (ws, n) = ctime_datetime(b"Sun Feb 23 16:24:18 2025] x").unwrap();
        assert_eq!(n, 24);
        assert!(ws.has_year);
        assert_eq!(ws.offset, None);
        let (ws, _) = ctime_datetime(b"Tue Oct 27 14:31:50 UTC 2009").unwrap();
        assert_eq!(ws.offset, Some(0));
    }

    #[test]
    fn uptime_brackets() {
        assert_eq!(bracket_uptime(b"[    5.123456] x"), Some((5_123_456, 14)));
        assert_eq!(
            bracket_uptime(b"[6781741.548768]"),
            Some((6_781_741_548_768, 16))
        );
        assert_eq!(bracket_uptime(b"[UFW BLOCK]"), None);
    }

    #[test]
    fn zones() {
        assert_eq!(zone(b"-0300"), Some((-10800, 5)));
        assert_eq!(zone(b"+05:30"), Some((19800, 6)));
        assert_eq!(zone(b"x"), None);
    }
}
