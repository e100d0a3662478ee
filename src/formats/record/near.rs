//! Whether the lines around a candidate could give its record a time, answered from a window of
//! classified lines that moves forward with the candidates (they come in order): each line is
//! read once for the lines it neighbours, not once per candidate (issue 37: distinct untimed
//! NCCL lines read the 128 lines around each of them, braces counted byte by byte, at about
//! 7,000 lines/s).

use super::{is_boundary, time_line, trim_cr, Scope};
use std::cell::RefCell;
use std::collections::VecDeque;

/// What a line is to the record bounds.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Class {
    /// A blank or dashed line: a record ends there.
    Boundary,
    /// No brace, no record time: the bounds pass over it and it gives nothing.
    Plain,
    /// Anything else (a brace, a time line): the bounds must read it.
    Other,
}

/// One classified line: start, end (its `\n` or the buffer's end) and class.
#[derive(Clone, Copy, Debug)]
struct Line {
    ls: usize,
    le: usize,
    class: Class,
}

/// The window: consecutive lines of one buffer (identified by address and length).
#[derive(Default)]
struct Window {
    id: (usize, usize),
    lines: VecDeque<Line>,
}

thread_local! {
    static WINDOW: RefCell<Window> = RefCell::new(Window::default());
}

/// Forgets the window (a buffer's memory is reused for the next block).
pub(super) fn forget() {
    WINDOW.with(|w| {
        let mut w = w.borrow_mut();
        w.id = (0, 0);
        w.lines.clear();
    });
}

fn classify(buf: &[u8], ls: usize, le: usize) -> Line {
    let t = trim_cr(&buf[ls..le]).trim_ascii_start();
    // only a boundary (or a blank line) needs its end trimmed: a rule of `-` or `=`
    let t = match t.first() {
        Some(b'-' | b'=') | None => t.trim_ascii_end(),
        _ => t,
    };
    let class = if is_boundary(t) {
        Class::Boundary
    } else if memchr::memchr2(b'{', b'}', t).is_none()
        && !matches!(time_line(t), Some((_, Scope::Record)))
    {
        Class::Plain
    } else {
        Class::Other
    };
    Line { ls, le, class }
}

/// The line that ends just before `pos` (a line start above 0).
fn line_before(buf: &[u8], pos: usize) -> Line {
    let le = pos - 1;
    let ls = memchr::memrchr(b'\n', &buf[..le]).map_or(0, |p| p + 1);
    classify(buf, ls, le)
}

/// The line that starts at `ls`.
fn line_at(buf: &[u8], ls: usize) -> Line {
    let le = memchr::memchr(b'\n', &buf[ls..]).map_or(buf.len(), |p| ls + p);
    classify(buf, ls, le)
}

/// True when every line the record bounds of `buf[start..end]` would read (up to `reach` lines
/// before `start` and after `end`, each side up to a boundary) is [`Class::Plain`]: then no
/// line near the record gives it a time. False when one may (the caller reads them).
pub(super) fn plain_around(buf: &[u8], start: usize, end: usize, reach: usize) -> bool {
    if end >= buf.len() || (start > 0 && buf.get(start - 1) != Some(&b'\n')) {
        return false;
    }
    WINDOW.with(|w| {
        let mut w = w.borrow_mut();
        let id = (buf.as_ptr() as usize, buf.len());
        let w = &mut *w;
        let fits = w.id == id
            && w.lines.front().is_some_and(|f| f.ls <= start)
            && w.lines.back().is_some_and(|b| start <= b.le + 1);
        if !fits {
            w.id = id;
            w.lines.clear();
        }
        w.fill(buf, start, end, reach)
    })
}

impl Window {
    /// Brings the window to cover the record and `reach` lines each side, then answers
    /// [`plain_around`].
    fn fill(&mut self, buf: &[u8], start: usize, end: usize, reach: usize) -> bool {
        // the lines up to the record's end (the record's own lines included)
        if self.lines.is_empty() {
            self.lines.push_back(line_at(buf, start));
        }
        while let Some(b) = self.lines.back().copied() {
            if b.le >= end || b.le >= buf.len() {
                break;
            }
            self.lines.push_back(line_at(buf, b.le + 1));
        }
        // the record's first line
        let first = self.lines.partition_point(|l| l.ls < start);
        if self.lines.get(first).is_none_or(|l| l.ls != start) {
            self.lines.clear();
            return false;
        }
        // lines before it: drop those out of reach, read back those missing
        let drop = first.saturating_sub(reach);
        self.lines.drain(..drop);
        let mut first = first - drop;
        while first < reach {
            let f = self.lines[0];
            if f.ls == 0 || f.class == Class::Boundary && first > 0 {
                break;
            }
            self.lines.push_front(line_before(buf, f.ls));
            first += 1;
        }
        // the line after the record's end, and the lines after it
        let Some(last) = self.lines.iter().rposition(|l| l.ls <= end) else {
            return false;
        };
        if self.lines[last].le != end {
            return false;
        }
        let mut after = self.lines.len() - last - 1;
        while after < reach {
            let b = self.lines[self.lines.len() - 1];
            if b.le >= buf.len() || b.class == Class::Boundary && after > 0 {
                break;
            }
            self.lines.push_back(line_at(buf, b.le + 1));
            after += 1;
        }
        let plain = |l: &Line| l.class == Class::Plain;
        let stop = |l: &&Line| l.class != Class::Boundary;
        let before_ok = self
            .lines
            .range(..first)
            .rev()
            .take(reach)
            .take_while(stop)
            .all(plain);
        let after_ok = self
            .lines
            .range(last + 1..)
            .take(reach)
            .take_while(stop)
            .all(plain);
        before_ok && after_ok
    }
}

#[cfg(test)]
mod tests {
    use super::super::{bounds, time_line, Scope};
    use super::*;

    /// Whether the bounds of the line starting at `s` reach a time line (the slow answer).
    fn slow(buf: &[u8], s: usize, e: usize) -> bool {
        let b = bounds(buf, s, e);
        b.before
            .iter()
            .chain(&b.after)
            .filter(|l| l.2)
            .any(|&(ls, le, _)| {
                let t = trim_cr(&buf[ls..le]).trim_ascii();
                let t = t.strip_prefix(b"{").map_or(t, <[u8]>::trim_ascii_start);
                matches!(time_line(t), Some((_, Scope::Record)))
            })
    }

    /// Over texts mixing plain lines, boundaries, braces and time lines, taken candidate by
    /// candidate in order (and with gaps), a `true` is never given where the bounds find a time.
    #[test]
    fn the_window_never_hides_a_time() {
        let kinds: [&str; 6] = [
            "NCCL INFO comm 0x1 rank 3 nranks 8 - Init COMPLETE",
            "",
            "Timestamp = 2026-02-11 03:41:09",
            "{ \"a\": 1",
            "}",
            "--------",
        ];
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        for round in 0..40 {
            let mut text = String::new();
            for _ in 0..400 {
                x ^= x << 13;
                x ^= x >> 7;
                x ^= x << 17;
                // mostly plain lines; rarer others, rarer still in later rounds
                let k = if x % (3 + round as u64) == 0 {
                    (x >> 8) as usize % kinds.len()
                } else {
                    0
                };
                text.push_str(kinds[k]);
                text.push('\n');
            }
            let buf = text.as_bytes();
            forget();
            let mut s = 0;
            let mut step = 0u64;
            while s < buf.len() {
                let e = s + buf[s..].iter().position(|&c| c == b'\n').unwrap();
                step += 1;
                if step % (1 + round as u64 % 5) == 0 {
                    let fast = plain_around(buf, s, e, 64);
                    assert!(!(fast && slow(buf, s, e)), "round {round}, line at {s}");
                }
                s = e + 1;
            }
        }
    }

    /// In a text of plain lines only, every candidate gets the fast answer.
    #[test]
    fn plain_text_is_answered_from_the_window() {
        let text = "a b c\n".repeat(1000);
        let buf = text.as_bytes();
        forget();
        for i in 0..999 {
            assert!(plain_around(buf, i * 6, i * 6 + 5, 64), "line {i}");
        }
    }
}
