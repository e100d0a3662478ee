//! The smallest fields of a date: English month and weekday names, fixed-width digits, clock
//! times and fractions, and the civil-date arithmetic. Both the English readers (`time`) and
//! the other locales' readers (`locale`) are built on these, so neither needs the other's parts.

use chrono::NaiveDate;

/// English month abbreviations, as strftime `%b` prints them in the C locale.
const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

/// Reads a three-letter English month name; returns 1..=12.
pub fn month_abbrev(b: &[u8]) -> Option<u32> {
    if b.len() < 3 {
        return None;
    }
    let m = [b[0], b[1].to_ascii_lowercase(), b[2].to_ascii_lowercase()];
    MONTHS
        .iter()
        .position(|name| name[0] == m[0] && name[1] == m[1] && name[2] == m[2])
        .map(|i| i as u32 + 1)
}

/// True for the three-letter English weekday names.
pub fn is_weekday(b: &[u8]) -> bool {
    b.len() >= 3
        && matches!(
            &b[..3],
            b"Mon" | b"Tue" | b"Wed" | b"Thu" | b"Fri" | b"Sat" | b"Sun"
        )
}

/// Reads exactly `n` ASCII digits.
pub fn digits(b: &[u8], n: usize) -> Option<u32> {
    if b.len() < n {
        return None;
    }
    let mut v: u32 = 0;
    for &c in &b[..n] {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + (c - b'0') as u32;
    }
    Some(v)
}

/// Reads one or more ASCII digits (at most 18); returns value and length.
pub fn number(b: &[u8]) -> Option<(u64, usize)> {
    let mut v: u64 = 0;
    let mut n = 0;
    while n < b.len() && n < 18 && b[n].is_ascii_digit() {
        v = v * 10 + (b[n] - b'0') as u64;
        n += 1;
    }
    (n > 0).then_some((v, n))
}

/// Reads `HH:MM:SS`; returns seconds of the day.
pub fn hms(b: &[u8]) -> Option<u32> {
    if b.len() < 8 || b[2] != b':' || b[5] != b':' {
        return None;
    }
    let h = digits(b, 2)?;
    let m = digits(&b[3..], 2)?;
    let s = digits(&b[6..], 2)?;
    (h < 24 && m < 60 && s < 61).then_some(h * 3600 + m * 60 + s.min(59))
}

/// Reads a fraction of a second after `.` or `,` (1 to 9 digits); returns micros and length incl. separator.
pub fn fraction(b: &[u8]) -> (u32, usize) {
    if b.len() < 2 || !(b[0] == b'.' || b[0] == b',') || !b[1].is_ascii_digit() {
        return (0, 0);
    }
    let mut n = 1;
    let mut micros: u64 = 0;
    let mut scale = 0;
    while n < b.len() && b[n].is_ascii_digit() && n <= 9 {
        if scale < 6 {
            micros = micros * 10 + (b[n] - b'0') as u64;
            scale += 1;
        }
        n += 1;
    }
    while scale < 6 {
        micros *= 10;
        scale += 1;
    }
    (micros as u32, n)
}

/// Seconds since the epoch for a civil date and a second of the day, read as UTC; `None` for a
/// date that does not exist. Days 1 to 28 of years 1 to 9999 (every month has them) are counted
/// by hand, every other date through chrono, which also judges it.
pub fn civil_secs(year: i32, month: u32, day: u32, sod: u32) -> Option<i64> {
    if (1..=9999).contains(&year) && (1..=12).contains(&month) && (1..=28).contains(&day) {
        return Some(days_from_civil(year, month, day) * 86_400 + sod as i64);
    }
    let d = NaiveDate::from_ymd_opt(year, month, day)?;
    Some(d.and_hms_opt(0, 0, 0)?.and_utc().timestamp() + sod as i64)
}

/// Days from 1970-01-01 to a proleptic Gregorian date (years counted from March, so the leap
/// day ends a year).
fn days_from_civil(year: i32, month: u32, day: u32) -> i64 {
    let y = year as i64 - (month <= 2) as i64;
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let m = month as i64;
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + day as i64 - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The stand-in year given to year-less stamps until the timeline settles it (a leap year, so Feb 29 parses).
pub const NO_YEAR: i32 = 2000;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_secs_counted_by_hand_agree_with_chrono() {
        let by_chrono = |y: i32, m: u32, d: u32, sod: u32| {
            NaiveDate::from_ymd_opt(y, m, d)
                .and_then(|d| d.and_hms_opt(0, 0, 0))
                .map(|t| t.and_utc().timestamp() + sod as i64)
        };
        for y in [
            1, 2, 99, 100, 400, 1600, 1899, 1900, 1969, 1970, 1999, 2000, 2024, 2100, 9999,
        ] {
            for m in 0..=13 {
                for d in 0..=32 {
                    assert_eq!(
                        civil_secs(y, m, d, 3723),
                        by_chrono(y, m, d, 3723),
                        "{y}-{m}-{d}"
                    );
                }
            }
        }
        for y in [-1, 0, 10_000, 262_143] {
            assert_eq!(civil_secs(y, 3, 1, 0), by_chrono(y, 3, 1, 0), "{y}");
        }
    }
}
