//! Line prefixes of BMC event logs: `ipmitool sel list` / `sel elist` / `sel list -c` (CSV).
//!
//! ```text
//!    9 | 03/14/2026 | 02:12:27 | Power Supply PS3 Status | Failure detected () | Asserted   (ipmitool ≤ 1.8.18)
//!   1a | 09/28/26 | 14:00:00 +07 | Power Supply PS2 Status | ...                         (≥ 1.8.19: %x, %X %Z)
//!   1b | 11/16/2019 | 01:31:02 PM | Critical Interrupt #0x03 | Bus Fatal Error | Asserted (en_US %X)
//!   7,11/16/2019,13:30:58,Power Supply #0x63,Failure detected,Asserted                      (-c)
//!    2 |  Pre-Init  |0000000012| System Event #0x10 | ...                                  (clock not set yet)
//! ```
//! The time is the BMC's clock: it has a year, and a zone only when ipmitool ≥ 1.8.19 printed
//! one. The message starts at the separator before the sensor column, so that recognizers can
//! anchor on `| sensor | event | Asserted`.

use super::time::{civil_secs, clock12, us_date, zone_word};
use super::{Prefix, Shape};
use crate::model::{LineStamp, WallStamp};

fn spaces(b: &[u8], mut i: usize) -> usize {
    while b.get(i) == Some(&b' ') {
        i += 1;
    }
    i
}

/// Reads an `ipmitool sel` line prefix: record id, date and time columns.
pub fn sel(line: &[u8]) -> Option<Prefix<'_>> {
    let mut i = spaces(line, 0);
    let id_len = line[i..]
        .iter()
        .take(9)
        .take_while(|c| c.is_ascii_hexdigit())
        .count();
    if id_len == 0 || id_len > 8 {
        return None;
    }
    i = spaces(line, i + id_len);
    let sep = *line.get(i)?;
    if sep != b'|' && sep != b',' {
        return None;
    }
    i = spaces(line, i + 1);
    let rest = &line[i..];
    if rest.starts_with(b"Pre-Init") || rest.starts_with(b"Unspecified") {
        return before_clock(line, i, sep);
    }
    let (y, mo, d, dl) = us_date(rest)?;
    i = spaces(line, i + dl);
    if line.get(i) != Some(&sep) {
        return None;
    }
    i = spaces(line, i + 1);
    let (sod, tl) = clock12(&line[i..])?;
    i += tl;
    let mut offset = None;
    if line.get(i) == Some(&b' ') {
        if let Some((off, zl)) = zone_word(&line[i + 1..]) {
            offset = off;
            i += 1 + zl;
        }
    }
    i = spaces(line, i);
    if line.get(i) != Some(&sep) {
        return None;
    }
    Some(Prefix {
        stamp: LineStamp {
            wall: Some(WallStamp {
                naive_secs: civil_secs(y, mo, d, sod)?,
                micros: 0,
                offset,
                has_year: true,
            }),
            mono_us: None,
            tod_us: None,
        },
        host: None,
        msg_start: i,
        shape: Shape::Sel,
    })
}

/// A SEL record logged before the BMC's clock was set (`Pre-Init`, with seconds since the
/// BMC's start, or `Unspecified`), from `line[i..]`: no date, the message after the time
/// column's separator(s).
fn before_clock(line: &[u8], i: usize, sep: u8) -> Option<Prefix<'_>> {
    let want = if line[i..].starts_with(b"Pre-Init") {
        2
    } else {
        1
    };
    let mut seps = 0;
    let mut j = i;
    while j < line.len() && j < i + 40 {
        if line[j] == sep {
            seps += 1;
            if seps == want {
                break;
            }
        }
        j += 1;
    }
    if seps != want {
        return None;
    }
    Some(Prefix {
        stamp: LineStamp::default(),
        host: None,
        msg_start: j,
        shape: Shape::Sel,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(l: &[u8]) -> (i64, Option<i32>, usize) {
        let p = sel(l).expect("a SEL prefix");
        let w = p.stamp.wall.expect("a time");
        (w.naive_secs, w.offset, p.msg_start)
    }

    #[test]
    fn list_and_elist_lines() {
        let l = b"   9 | 03/14/2026 | 02:12:27 | Power Supply PS3 Status | Failure detected () | Asserted";
        let (s, off, m) = secs(l);
        assert_eq!(s, civil_secs(2026, 3, 14, 2 * 3600 + 12 * 60 + 27).unwrap());
        assert_eq!(off, None);
        assert!(l[m..].starts_with(b"| Power Supply PS3"));
        let l =
            b"  1a | 11/16/2019 | 13:31:02 | Critical Interrupt #0x03 | Bus Fatal Error | Asserted";
        assert_eq!(
            secs(l).0,
            civil_secs(2019, 11, 16, 13 * 3600 + 31 * 60 + 2).unwrap()
        );
    }

    #[test]
    fn twelve_hour_clock_and_zones() {
        let pm = b"  1b | 11/16/2019 | 01:31:02 PM | Critical Interrupt #0x03 | Bus Fatal Error | Asserted";
        let h24 =
            b"  1b | 11/16/2019 | 13:31:02 | Critical Interrupt #0x03 | Bus Fatal Error | Asserted";
        assert_eq!(secs(pm).0, secs(h24).0);
        let am =
            b"   2 | 11/16/2019 | 12:05:00 AM | Fan #0x30 | Lower Critical going low | Asserted";
        assert_eq!(secs(am).0, civil_secs(2019, 11, 16, 300).unwrap());
        // ipmitool 1.8.19: two-digit year, %X %Z
        let z = b"  1a | 09/28/26 | 14:00:00 +07 | Power Supply PS2 Status | Failure detected | Asserted";
        let (s, off, m) = secs(z);
        assert_eq!(s, civil_secs(2026, 9, 28, 14 * 3600).unwrap());
        assert_eq!(off, Some(7 * 3600));
        assert!(z[m..].starts_with(b"| Power Supply PS2"));
        let utc = b"  1a | 09/28/26 | 14:00:00 UTC | Power Supply PS2 Status | Failure detected | Asserted";
        assert_eq!(secs(utc).1, Some(0));
        // an ambiguous abbreviation is stepped over, the zone stays unknown
        let ist = b"  1a | 09/28/26 | 14:00:00 IST | Power Supply PS2 Status | Failure detected | Asserted";
        assert_eq!(secs(ist).1, None);
    }

    #[test]
    fn csv_and_clock_not_set() {
        let l = b"7,11/16/2019,13:30:58,Power Supply #0x63,Failure detected,Asserted";
        let (_, _, m) = secs(l);
        assert!(l[m..].starts_with(b",Power Supply"));
        let l =
            b"   2 |  Pre-Init  |0000000012| System Event #0x10 | Timestamp Clock Sync | Asserted";
        let p = sel(l).unwrap();
        assert!(p.stamp.is_empty());
        assert!(l[p.msg_start..].starts_with(b"| System Event"));
    }

    #[test]
    fn other_lines_are_not_sel() {
        for l in [
            &b"Mar 14 02:13:07 gpu-node-14 kernel: x"[..],
            b"   1 | not a date | 02:12:27 | x",
            b"  1a | 13/16/2019 | 13:31:02 | x | y | Asserted",
            b"  1a | 11/16/2019 | 25:31:02 | x | y | Asserted",
            b"123456789 | 11/16/2019 | 13:31:02 | x",
            b"2025-06-11 06:25:40 upgrade x",
        ] {
            assert!(sel(l).is_none(), "{}", String::from_utf8_lossy(l));
        }
    }
}
