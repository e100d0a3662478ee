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

/// How far [`borrow_stamp`] looks, in lines, each way.
const BORROW_LINES: usize = 256;

/// A stamp lent by a neighbour line: its time and host.
type Lent = (LineStamp, Option<String>);

/// The last searches of [`borrow_stamp`] in one buffer, so that the next candidate line does not
/// read the same 512 lines again: in a file whose lines carry no time (NCCL's untimed lines),
/// each untimed candidate used to parse 512 neighbours (issue 37: 20,000 lines/s).
#[derive(Default)]
struct StampMemo {
    /// The buffer searched: its address and length.
    buf: (usize, usize),
    /// Backward: the line start searched from, and the stamp found at that many lines before it
    /// (`None`: none within [`BORROW_LINES`]).
    back: Option<(usize, Option<(usize, Lent)>)>,
    /// Forward: the line end searched from, and what was found after it.
    fwd: Option<(usize, Ahead)>,
}

/// What lies after a line end.
enum Ahead {
    /// A stamp at the n-th line after it.
    Found(usize, Lent),
    /// No stamp in the `n` lines after it; `at` is the end of the last of them; `end` when the
    /// buffer ended there.
    Clean { n: usize, at: usize, end: bool },
}

thread_local! {
    static MEMO: std::cell::RefCell<StampMemo> = std::cell::RefCell::new(StampMemo::default());
}

/// Forgets the searches of [`borrow_stamp`]: called when a scan starts on a buffer (a buffer's
/// memory is reused for the next block of a stream).
pub(super) fn forget_stamps() {
    MEMO.with(|m| *m.borrow_mut() = StampMemo::default());
    crate::formats::record::forget_file_time();
}

/// The stamp and host of one line, if it has a time.
fn stamp_at(buf: &[u8], s: usize, e: usize) -> Option<Lent> {
    let p = parse_head(trim_cr(&buf[s..e])).prefix?;
    (!p.stamp.is_empty()).then(|| (p.stamp, p.host.map(lossy)))
}

/// Finds the nearest line with a time: up to 256 lines back, then up to 256 lines forward.
/// Each search starts from the last one in this buffer when it can (candidates come in order),
/// with the same result as a search from scratch.
pub(super) fn borrow_stamp(
    buf: &[u8],
    start: usize,
    end: usize,
) -> (LineStamp, bool, Option<String>) {
    MEMO.with(|m| {
        let mut m = m.borrow_mut();
        let id = (buf.as_ptr() as usize, buf.len());
        if m.buf != id {
            *m = StampMemo {
                buf: id,
                ..StampMemo::default()
            };
        }
        let back = search_back(buf, start, m.back.take());
        m.back = Some((start, back.clone()));
        if let Some((_, (stamp, host))) = back {
            return (stamp, true, host);
        }
        let ahead = search_ahead(buf, end, m.fwd.take());
        let found = match &ahead {
            Ahead::Found(_, (stamp, host)) => (*stamp, true, host.clone()),
            Ahead::Clean { .. } => (LineStamp::default(), false, None),
        };
        m.fwd = Some((end, ahead));
        found
    })
}

/// The nearest stamp within [`BORROW_LINES`] lines before `start`, and how many lines back.
fn search_back(
    buf: &[u8],
    start: usize,
    last: Option<(usize, Option<(usize, Lent)>)>,
) -> Option<(usize, Lent)> {
    let last = last.filter(|(q, _)| *q <= start);
    let mut s = start;
    for k in 1..=BORROW_LINES {
        if let Some((q, found)) = &last {
            if s == *q {
                // the lines before `q` were searched from `q`: k - 1 lines lie between
                return found
                    .as_ref()
                    .filter(|(d, _)| k - 1 + d <= BORROW_LINES)
                    .map(|(d, lent)| (k - 1 + d, lent.clone()));
            }
        }
        let (ps, pe) = prev_line(buf, s)?;
        if let Some(lent) = stamp_at(buf, ps, pe) {
            return Some((k, lent));
        }
        s = ps;
    }
    None
}

/// What lies within [`BORROW_LINES`] lines after `end` (a line end).
fn search_ahead(buf: &[u8], end: usize, last: Option<(usize, Ahead)>) -> Ahead {
    // the lines between the last search's start and this one's
    let skipped = last.as_ref().and_then(|(e0, _)| {
        let line_end = |p: usize| p == buf.len() || buf.get(p) == Some(&b'\n');
        (*e0 <= end && line_end(*e0) && line_end(end))
            .then(|| memchr::memchr_iter(b'\n', &buf[*e0..end]).count())
    });
    let (mut n, mut at) = (0, end);
    match (last, skipped) {
        (Some((_, Ahead::Found(i, lent))), Some(j)) if i > j => {
            return Ahead::Found(i - j, lent);
        }
        (Some((_, Ahead::Clean { n: c, at: a, end })), Some(j)) if j <= c => {
            if end {
                return Ahead::Clean {
                    n: c - j,
                    at: a,
                    end,
                };
            }
            (n, at) = (c - j, a);
        }
        _ => {}
    }
    while n < BORROW_LINES {
        let Some((ns, ne)) = next_line(buf, at) else {
            return Ahead::Clean { n, at, end: true };
        };
        n += 1;
        if let Some(lent) = stamp_at(buf, ns, ne) {
            return Ahead::Found(n, lent);
        }
        at = ne;
    }
    Ahead::Clean { n, at, end: false }
}
