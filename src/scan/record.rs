//! What a record borrows from the lines around it: context, key/value records, a time.

use super::lines::{lossy, next_line, prev_line, trim_cr};
use super::MAX_MESSAGE_BYTES;
use crate::formats::parse_head;
use crate::model::LineStamp;

/// Up to 8 lines before the record starting at `head_start` and `after` after the record ending
pub(super) fn context(
    buf: &[u8],
    head_start: usize,
    e: usize,
    after: usize,
) -> (Vec<String>, Vec<String>) {
    let mut preceding = Vec::new();
    let mut s = head_start;
    for _ in 0..8 {
        let Some((ps, pe)) = prev_line(buf, s) else {
            break;
        };
        preceding.insert(
            0,
            lossy(trim_cr(&buf[ps..pe][..(pe - ps).min(MAX_MESSAGE_BYTES)])),
        );
        s = ps;
    }
    let mut following = Vec::new();
    let mut e2 = e;
    for _ in 0..after {
        let Some((ns, ne)) = next_line(buf, e2) else {
            break;
        };
        following.push(lossy(trim_cr(
            &buf[ns..ne][..(ne - ns).min(MAX_MESSAGE_BYTES)],
        )));
        e2 = ne;
    }
    (preceding, following)
}

/// Records longer than this many lines keep only the lines that named the event as evidence.
const MAX_RECORD_LINES: usize = 24;

/// The other lines of a key/value record (lclog, getsel, Redfish object, apt transaction)
/// around `own` (the lines that named the event), verbatim and in file order.
pub(super) fn record_text(
    buf: &[u8],
    (start, end): (usize, usize),
    own: (usize, usize),
) -> Option<String> {
    let mut lines: Vec<&[u8]> = Vec::new();
    for part in [&buf[start..own.0.max(start)], &buf[own.1.min(end)..end]] {
        lines.extend(
            part.split(|&c| c == b'\n')
                .map(trim_cr)
                .filter(|l| !l.is_empty()),
        );
    }
    if lines.is_empty() || lines.len() >= MAX_RECORD_LINES {
        return None;
    }
    let cut: Vec<String> = lines
        .iter()
        .map(|l| lossy(&l[..l.len().min(MAX_MESSAGE_BYTES)]))
        .collect();
    Some(cut.join("\n"))
}

/// Finds the nearest line with a time: up to 256 lines back, then up to 256 lines forward.
pub(super) fn borrow_stamp(
    buf: &[u8],
    start: usize,
    end: usize,
) -> (LineStamp, bool, Option<String>) {
    let mut s = start;
    for _ in 0..256 {
        let Some((ps, pe)) = prev_line(buf, s) else {
            break;
        };
        if let Some(p) = parse_head(trim_cr(&buf[ps..pe])).prefix {
            if !p.stamp.is_empty() {
                return (p.stamp, true, p.host.map(lossy));
            }
        }
        s = ps;
    }
    let mut e = end;
    for _ in 0..256 {
        let Some((ns, ne)) = next_line(buf, e) else {
            break;
        };
        if let Some(p) = parse_head(trim_cr(&buf[ns..ne])).prefix {
            if !p.stamp.is_empty() {
                return (p.stamp, true, p.host.map(lossy));
            }
        }
        e = ne;
    }
    (LineStamp::default(), false, None)
}
