//! Lines stamped with a time of day and no date: `[15:58:29] msg`, `[15:58:29.123] msg`,
//! `15:58:29 INFO msg`, `15:58:29,123 - trainer - WARNING - msg`, `15:58:29.123 | ERROR | msg`
//! (Python logging with `datefmt="%H:%M:%S"`, loguru with `{time:HH:mm:ss}`, rich's time column
//! is read by [`super::joblog::rich`] with this grammar). The stamp holds only the time of day
//! ([`LineStamp::tod_us`]): the timeline dates it from the file's context.
//!
//! A bare `HH:MM:SS` at the start of a line is also how durations and `uptime` print: without
//! brackets the time counts only when a log level follows within the next words.

use super::{Prefix, Shape};
use crate::model::LineStamp;
use nom::bytes::complete::take_while_m_n;
use nom::character::complete::{char, one_of};
use nom::combinator::{map, opt, verify};
use nom::sequence::{preceded, tuple};
use nom::IResult;

/// Level names of Python logging, loguru and the like, as they follow an unbracketed time.
const LEVELS: [&[u8]; 10] = [
    b"INFO",
    b"WARNING",
    b"WARN",
    b"ERROR",
    b"DEBUG",
    b"CRITICAL",
    b"FATAL",
    b"TRACE",
    b"NOTICE",
    b"SUCCESS",
];

/// Words after an unbracketed time searched for a level (`15:58:29 - root - INFO - msg`).
const LEVEL_WORDS: usize = 3;

fn two_digits(i: &[u8]) -> IResult<&[u8], u32> {
    map(
        take_while_m_n(2, 2, |c: u8| c.is_ascii_digit()),
        |d: &[u8]| u32::from(d[0] - b'0') * 10 + u32::from(d[1] - b'0'),
    )(i)
}

/// `.123`, `,123`, `.123456789`: microseconds (digits past the sixth are dropped).
fn fraction(i: &[u8]) -> IResult<&[u8], u64> {
    map(
        preceded(
            one_of(".,"),
            take_while_m_n(1, 9, |c: u8| c.is_ascii_digit()),
        ),
        |d: &[u8]| {
            let mut us = 0u64;
            for k in 0..6 {
                us = us * 10 + d.get(k).map_or(0, |c| u64::from(c - b'0'));
            }
            us
        },
    )(i)
}

/// `HH:MM:SS` with an optional fraction: microseconds since midnight. A leap second is read as
/// the second before it.
fn time_of_day(i: &[u8]) -> IResult<&[u8], u64> {
    let (rest, (h, _, m, _, s, f)) = tuple((
        verify(two_digits, |h| *h < 24),
        char(':'),
        verify(two_digits, |m| *m < 60),
        char(':'),
        verify(two_digits, |s| *s < 61),
        opt(fraction),
    ))(i)?;
    let secs = u64::from(h * 3600 + m * 60 + s.min(59));
    Ok((rest, secs * 1_000_000 + f.unwrap_or(0)))
}

/// A time of day filling all of `b` (rich's time column, a bracket's inside).
pub fn whole_time_of_day(b: &[u8]) -> Option<u64> {
    match time_of_day(b) {
        Ok((&[], us)) => Some(us),
        _ => None,
    }
}

/// A time of day at the start of `b` not run on by another digit or colon: microseconds since
/// midnight and the length read.
fn leading_time_of_day(b: &[u8]) -> Option<(u64, usize)> {
    let (rest, us) = time_of_day(b).ok()?;
    if rest
        .first()
        .is_some_and(|c| c.is_ascii_digit() || *c == b':')
    {
        return None;
    }
    Some((us, b.len() - rest.len()))
}

/// Whether a log level is one of the first words of `rest`.
fn level_follows(rest: &[u8]) -> bool {
    rest[..rest.len().min(64)]
        .split(|c| b" |-[]:\t".contains(c))
        .filter(|w| !w.is_empty())
        .take(LEVEL_WORDS)
        .any(|w| LEVELS.contains(&w))
}

/// A line that starts with a time of day and no date: `[HH:MM:SS(.f)] ` then anything, or
/// `HH:MM:SS(.f) ` followed by a log level among its next words.
pub fn clock_prefix(line: &[u8]) -> Option<Prefix<'_>> {
    let (tod, mut n) = if line.first() == Some(&b'[') {
        let (tod, n) = leading_time_of_day(&line[1..])?;
        if line.get(1 + n) != Some(&b']') || line.get(2 + n) != Some(&b' ') {
            return None;
        }
        (tod, 2 + n)
    } else {
        let (tod, n) = leading_time_of_day(line)?;
        if line.get(n) != Some(&b' ') || !level_follows(&line[n..]) {
            return None;
        }
        (tod, n)
    };
    while line.get(n) == Some(&b' ') {
        n += 1;
    }
    Some(Prefix {
        stamp: LineStamp::time_of_day(tod),
        host: None,
        msg_start: n,
        shape: Shape::JobBracket,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tod(line: &str) -> Option<(u64, String)> {
        let p = clock_prefix(line.as_bytes())?;
        Some((p.stamp.tod_us?, line[p.msg_start..].to_string()))
    }

    #[test]
    fn times_of_day_with_their_message() {
        let at = |h: u64, m: u64, s: u64, us: u64| ((h * 60 + m) * 60 + s) * 1_000_000 + us;
        assert_eq!(
            tod("[15:58:29] Epoch 3 done"),
            Some((at(15, 58, 29, 0), "Epoch 3 done".into()))
        );
        assert_eq!(
            tod("[00:00:01.250] step 10"),
            Some((at(0, 0, 1, 250_000), "step 10".into()))
        );
        assert_eq!(
            tod("15:58:29,123 INFO loading"),
            Some((at(15, 58, 29, 123_000), "INFO loading".into()))
        );
        assert_eq!(
            tod("23:59:59.123456789 | ERROR    | __main__:run:12 - boom").map(|t| t.0),
            Some(at(23, 59, 59, 123_456))
        );
        assert_eq!(
            tod("08:01:02 - trainer - WARNING - slow step").map(|t| t.0),
            Some(at(8, 1, 2, 0))
        );
    }

    #[test]
    fn durations_uptimes_and_near_misses_are_not_times_of_day() {
        for l in [
            " 08:38:19 up 15:34,  1 user,  load average: 6.49",
            "08:38:19 up 15:34,  1 user",
            "00:10:05 elapsed, 3 steps left",
            "15:58:29WARNING x",
            "[15:58:29]WARNING x",
            "[25:00:00] x",
            "[15:61:00] x",
            "15:58:29:12 INFO x",
            "[15:58:290] x",
            "[15:58] x",
            "2025-03-14 15:58:29 INFO x",
        ] {
            assert!(clock_prefix(l.as_bytes()).is_none(), "{l}");
        }
    }

    #[test]
    fn whole_columns() {
        assert_eq!(whole_time_of_day(b"00:00:00"), Some(0));
        assert_eq!(whole_time_of_day(b"15:58:29 "), None);
        assert_eq!(whole_time_of_day(b"01/10/25 15:58:29"), None);
    }
}
