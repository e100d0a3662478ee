//! Dates as other locales print them: German month and weekday abbreviations (`Mär 14 02:13:07`,
//! `[Sa Mär 14 02:13:07 2026]`), and CJK dates (`12月 19 15:21:07`, Japanese ` 5月 01 12:00:00`,
//! `2024年5月1日 12:00:00`, bug-report `Date:` lines such as `2024年 12月 20日 星期五 18:35:26 CST`).
//! English is read first; a name that is in no table leaves the line without a time (its event
//! is still raised).

use super::fields::{civil_secs, hms, is_weekday, month_abbrev, number, NO_YEAR};
use crate::model::WallStamp;

/// German month abbreviations (glibc `de_DE` `%b`; `Mrz` from older tables). Where they equal
/// the English ones they are read as English.
const GERMAN_MONTHS: [(&str, u32); 13] = [
    ("Jan", 1),
    ("Feb", 2),
    ("Mär", 3),
    ("Mrz", 3),
    ("Apr", 4),
    ("Mai", 5),
    ("Jun", 6),
    ("Jul", 7),
    ("Aug", 8),
    ("Sep", 9),
    ("Okt", 10),
    ("Nov", 11),
    ("Dez", 12),
];

/// German weekday abbreviations (glibc `de_DE` `%a`).
const GERMAN_WEEKDAYS: [&[u8]; 7] = [b"Mo", b"Di", b"Mi", b"Do", b"Fr", b"Sa", b"So"];

/// Reads a month abbreviation, English or German; returns 1..=12 and its length in bytes.
pub fn month_name(b: &[u8]) -> Option<(u32, usize)> {
    if let Some(m) = month_abbrev(b) {
        return Some((m, 3));
    }
    GERMAN_MONTHS
        .iter()
        .find(|(name, _)| b.starts_with(name.as_bytes()))
        .map(|(name, m)| (*m, name.len()))
}

/// Length of a weekday abbreviation followed by a space: English (3) or German (2).
pub fn weekday_len(b: &[u8]) -> Option<usize> {
    if is_weekday(b) && b.get(3) == Some(&b' ') {
        return Some(3);
    }
    (GERMAN_WEEKDAYS.iter().any(|w| b.starts_with(w)) && b.get(2) == Some(&b' ')).then_some(2)
}

/// Reads digits followed by a CJK unit character (`年`, `月`, `日`); returns the value and the
/// length read.
fn unit(b: &[u8], ch: char) -> Option<(u64, usize)> {
    let (v, n) = number(b)?;
    let mut buf = [0u8; 4];
    let u = ch.encode_utf8(&mut buf).as_bytes();
    b[n..].starts_with(u).then_some((v, n + u.len()))
}

fn spaces(b: &[u8], mut i: usize) -> usize {
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// Reads a CJK date-time at the start of a line: `12月 19 15:21:07` (zh journal short),
/// ` 5月 01 12:00:00` (ja: the month is space-padded), `2024年5月1日 12:00:00`,
/// `2024年 5月  1日 水曜日 12:00:00` (one weekday word may stand before the time).
pub fn cjk_syslog_prefix(b: &[u8]) -> Option<(WallStamp, usize)> {
    let mut i = spaces(b, 0);
    let mut year = None;
    if let Some((y, n)) = unit(&b[i..], '年') {
        year = Some(y as i32);
        i = spaces(b, i + n);
    }
    let (m, n) = unit(&b[i..], '月')?;
    i = spaces(b, i + n);
    let (d, n) = number(&b[i..])?;
    i += n;
    if b[i..].starts_with("日".as_bytes()) {
        i += "日".len();
    }
    if b.get(i) != Some(&b' ') {
        return None;
    }
    i = spaces(b, i);
    if b.get(i).is_some_and(|c| !c.is_ascii()) {
        // a weekday word (`水曜日`, `星期五`)
        let end = i + b[i..].iter().take(32).position(|&c| c == b' ')?;
        i = spaces(b, end);
    }
    let sod = hms(b.get(i..)?)?;
    i += 8;
    let naive_secs = civil_secs(year.unwrap_or(NO_YEAR), m as u32, d as u32, sod)?;
    Some((
        WallStamp {
            naive_secs,
            micros: 0,
            offset: None,
            has_year: year.is_some(),
        },
        i,
    ))
}

/// Reads a CJK-locale `date` output anywhere in a value: `2024年 12月 20日 星期五 18:35:26 CST`,
/// `2024年  5月  1日 水曜日 12:00:00 JST`, `2024年5月1日 12:00:00`. No zone is trusted.
pub fn cjk_datetime(b: &[u8]) -> Option<WallStamp> {
    let s = std::str::from_utf8(b).ok()?;
    // `2024年5月1日` is one token: split after each unit character
    let spaced = s
        .replace('年', "年 ")
        .replace('月', "月 ")
        .replace('日', "日 ");
    let (mut year, mut month, mut day, mut sod) = (None, None, None, None);
    for tok in spaced.split_whitespace() {
        if let Some(y) = tok.strip_suffix('年') {
            year = y.parse::<i32>().ok().or(year);
        } else if let Some(m) = tok.strip_suffix('月') {
            month = m.parse::<u32>().ok().or(month);
        } else if let Some(d) = tok.strip_suffix('日') {
            // a weekday such as `水曜日` ends in 日 too: it is no day of the month
            day = d.parse::<u32>().ok().or(day);
        } else if month.is_some() && day.is_none() && tok.bytes().all(|c| c.is_ascii_digit()) {
            day = tok.parse().ok();
        } else if let Some(t) = hms(tok.as_bytes()) {
            sod = Some(t);
            break;
        }
    }
    let (m, d, t) = (month?, day?, sod?);
    let naive_secs = civil_secs(year.unwrap_or(NO_YEAR), m, d, t)?;
    Some(WallStamp {
        naive_secs,
        micros: 0,
        offset: None,
        has_year: year.is_some(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> i64 {
        civil_secs(y, mo, d, h * 3600 + mi * 60 + s).unwrap()
    }

    #[test]
    fn german_months_and_weekdays() {
        assert_eq!(month_name("Mär 14".as_bytes()), Some((3, 4)));
        assert_eq!(month_name(b"Mrz 14"), Some((3, 3)));
        assert_eq!(month_name(b"Mai 1"), Some((5, 3)));
        assert_eq!(month_name(b"Okt 1"), Some((10, 3)));
        assert_eq!(month_name(b"Dez 1"), Some((12, 3)));
        assert_eq!(month_name(b"May 1"), Some((5, 3)));
        assert_eq!(month_name(b"Foo 1"), None);
        assert_eq!(weekday_len(b"Sa M"), Some(2));
        assert_eq!(weekday_len(b"Sat M"), Some(3));
        assert_eq!(weekday_len(b"Sam M"), None);
    }

    #[test]
    fn cjk_line_prefixes() {
        let (w, n) = cjk_syslog_prefix("12月 19 15:21:07 host kernel: x".as_bytes()).unwrap();
        assert_eq!(w.naive_secs, t(NO_YEAR, 12, 19, 15, 21, 7));
        assert!(!w.has_year);
        assert_eq!(&"12月 19 15:21:07 host"[n..], " host");
        let ja = " 5月 01 12:00:00 gpu-node-05 kernel: x";
        let (w, n) = cjk_syslog_prefix(ja.as_bytes()).unwrap();
        assert_eq!(w.naive_secs, t(NO_YEAR, 5, 1, 12, 0, 0));
        assert_eq!(&ja[n..], " gpu-node-05 kernel: x");
        let (w, _) = cjk_syslog_prefix("2024年5月1日 12:00:00 host kernel: x".as_bytes()).unwrap();
        assert_eq!(w.naive_secs, t(2024, 5, 1, 12, 0, 0));
        assert!(w.has_year);
        let (w, _) =
            cjk_syslog_prefix("2024年 5月  1日 水曜日 12:00:00 host kernel: x".as_bytes()).unwrap();
        assert_eq!(w.naive_secs, t(2024, 5, 1, 12, 0, 0));
        assert!(cjk_syslog_prefix("5月 x".as_bytes()).is_none());
        assert!(cjk_syslog_prefix(b"12 19 15:21:07").is_none());
    }

    #[test]
    fn cjk_date_lines() {
        let zh = cjk_datetime("2024年 12月 20日 星期五 18:35:26 CST".as_bytes()).unwrap();
        assert_eq!(zh.naive_secs, t(2024, 12, 20, 18, 35, 26));
        // the weekday 水曜日 ends in 日 and must not erase the day
        let ja = cjk_datetime("2024年  5月  1日 水曜日 12:00:00 JST".as_bytes()).unwrap();
        assert_eq!(ja.naive_secs, t(2024, 5, 1, 12, 0, 0));
        let compact = cjk_datetime("2024年5月1日 12:00:00".as_bytes()).unwrap();
        assert_eq!(compact.naive_secs, t(2024, 5, 1, 12, 0, 0));
        assert!(cjk_datetime(b"Sat Mar 14 02:13:07 2026").is_none());
    }
}
