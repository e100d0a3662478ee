//! The line accounting of a chunk without a walk of every line: lines are counted as newlines
//! (SIMD, in pieces, which finds the long lines too), and only some lines are read one by one:
//! the prefilter's candidates, the lines of the sample ([`sampled`]), journal boot separators,
//! lines at uptime zero, and the chunk's first and last lines.
//!
//! - `lines` and `long_lines` are exact (the newlines are counted per piece by the pass over the
//!   bytes; a line over [`MAX_RECORD_BYTES`] spans a run of pieces without one, looked at).
//! - `recognized` counts the sampled lines a format reader understood; the input's total is
//!   scaled from the sample at the end ([`ScanOutput::settle_recognized`]). Inputs within
//!   [`SAMPLE_HEAD`] are sampled whole: their count is exact.
//! - boot lines: journal separators (`-- Boot`, `-- Reboot --`) and dmesg lines at uptime zero
//!   are searched for by the pass over the bytes ([`super::found`]); any other uptime reset
//!   is found where it shows between two lines read, or between a line read and the line just
//!   before it: the lines skipped between the two lines read are then read one by one to find
//!   where. (A reset to a nonzero uptime inside a gap, whose boot then climbs past the uptime
//!   of the last line read before the next line read, is not seen: a dump that lost its first
//!   lines, concatenated after a boot shorter than itself, within one MiB.)
//! - `shapes` counts the prefix shapes of the sampled and the candidate lines.
//!
//! The sample is defined by offsets in the input (not in the chunk), so a chunked scan and a
//! serial one read the same lines.

use super::found::{Found, COUNT_PIECE};
use super::lines::trim_cr;
use super::{ScanOutput, MAX_RECORD_BYTES};
use crate::events::RecognizerSet;
use crate::formats::journal::is_boot_marker;
use crate::formats::{quick_shape_with, Shape};

/// Lines that start in the first bytes of an input are all read.
pub const SAMPLE_HEAD: u64 = 1 << 20;
/// Past the head, the lines that start in the first [`SAMPLE_WINDOW`] bytes of every
/// [`SAMPLE_PERIOD`] bytes of the input are read.
pub const SAMPLE_PERIOD: u64 = 1 << 20;
/// See [`SAMPLE_PERIOD`].
pub const SAMPLE_WINDOW: u64 = 64 << 10;

/// A line over [`MAX_RECORD_BYTES`] holds at least this many whole pieces without a newline.
const LONG_RUN: usize = MAX_RECORD_BYTES / COUNT_PIECE - 1;

/// An uptime that goes back by more than this (µs) starts a new boot.
const BACKWARDS_US: u64 = 1_000_000;

/// Whether the line that starts at byte `at` of an input is in the sample.
pub fn sampled(at: u64) -> bool {
    at < SAMPLE_HEAD || at % SAMPLE_PERIOD < SAMPLE_WINDOW
}

/// A candidate line: start and end (in the buffer), 1-based number in the chunk, the range of
/// its prefilter hits (kept for a line over the record cap), and whether it is sampled.
pub(super) type Candidate = (usize, usize, u64, usize, usize, bool);

/// The walk of a chunk: where it is, and what it has counted.
struct Walk<'a> {
    region: &'a [u8],
    /// Offset of the region in the buffer, and in the input.
    start: usize,
    abs: u64,
    set: &'a RecognizerSet,
    learned: Option<&'a [u8]>,
    out: &'a mut ScanOutput,
    /// Next line start not accounted for, and the lines before it.
    pos: usize,
    line_no: u64,
    /// The uptime of the last line read that had one.
    prev_mono: Option<u64>,
    /// Lines skipped since the last line read: start, and the number of the line before.
    gap: Option<(usize, u64)>,
    /// The next sample window: its first line and its end (region offsets).
    window: Option<(usize, usize)>,
    /// Newlines per piece of the region.
    newlines: &'a [u16],
    hits: Vec<usize>,
    candidates: Vec<Candidate>,
}

/// Accounts for the lines of `buf[start..end]` (`abs`: the input offset of `buf[start]`) into
/// `out`, from what the pass over them found (see [`super::found`]), and numbers the
/// prefilter's candidate lines. Returns the candidates (buffer offsets) and the prefilter hits
/// of the long ones.
pub(super) fn account(
    buf: &[u8],
    (start, end, abs): (usize, usize, u64),
    found: &Found,
    set: &RecognizerSet,
    learned: Option<&[u8]>,
    out: &mut ScanOutput,
) -> (Vec<Candidate>, Vec<usize>) {
    let region = &buf[start..end];
    let stops = stops(region, &found.marks);
    let mut w = Walk {
        region,
        start,
        abs,
        set,
        learned,
        out,
        pos: 0,
        line_no: 0,
        prev_mono: None,
        gap: None,
        window: None,
        newlines: &found.newlines,
        hits: Vec::new(),
        candidates: Vec::with_capacity(found.lines.len()),
    };
    w.window = w.next_window();
    let mut cands = found.lines.iter().copied().peekable();
    let mut extra = stops.iter().copied().peekable();
    while w.pos < region.len() {
        while extra.next_if(|&s| s < w.pos).is_some() {}
        while cands.next_if(|c| c.0 < w.pos).is_some() {}
        let at = [cands.peek().map(|c| c.0), extra.peek().copied()]
            .into_iter()
            .flatten()
            .chain(w.window.map(|(s, _)| s))
            .min();
        let Some(at) = at else { break };
        w.skip_to(at);
        match w.window {
            Some((s, e)) if s == at => w.walk_window(e, &mut cands, &mut extra),
            _ => {
                let cand = cands.next_if(|c| c.0 == at);
                extra.next_if(|&s| s == at);
                w.read_line(cand.map(|c| c.1), false);
            }
        }
    }
    w.skip_to(region.len());
    w.out.lines += w.line_no;
    (w.candidates, w.hits)
}

/// Line starts of `region` to read whatever the sample: its first and last lines (the uptime
/// resets between them and the lines read are looked for), and the `marks` of the pass.
fn stops(region: &[u8], marks: &[usize]) -> Vec<usize> {
    let last = memchr::memrchr(b'\n', &region[..region.len().saturating_sub(1)]);
    let mut v = vec![0, last.map_or(0, |i| i + 1)];
    v.extend_from_slice(marks);
    v.sort_unstable();
    v.dedup();
    v
}

impl Walk<'_> {
    /// The first line and the end of the sample window at or after `pos`, if it starts in the
    /// region.
    fn next_window(&self) -> Option<(usize, usize)> {
        let at = self.abs + self.pos as u64;
        let (ws, we) = if sampled(at) {
            let ws = at - at % SAMPLE_PERIOD;
            let we = if at < SAMPLE_HEAD {
                SAMPLE_HEAD
            } else {
                ws + SAMPLE_WINDOW
            };
            (at, we)
        } else {
            let ws = at - at % SAMPLE_PERIOD + SAMPLE_PERIOD;
            (ws, ws + SAMPLE_WINDOW)
        };
        let rel = |a: u64| usize::try_from(a - self.abs).unwrap_or(usize::MAX);
        let (s, e) = (rel(ws), rel(we).min(self.region.len()));
        if s >= self.region.len() {
            return None;
        }
        // the first line that starts in the window
        let first = if s == self.pos {
            s
        } else {
            memchr::memchr(b'\n', &self.region[s - 1..]).map_or(self.region.len(), |i| s + i)
        };
        (first < e).then_some((first, e))
    }

    /// Counts the lines from `pos` to `at` (a line start, or the region's end) without reading
    /// them: from the newlines counted per piece (the pieces at the ends in part), and the long
    /// lines among them (a run of pieces without a newline is looked at).
    fn skip_to(&mut self, at: usize) {
        if at <= self.pos {
            return;
        }
        let r = self.region;
        let (mut p, mut n, mut long, mut run) = (self.pos, 0u64, 0u64, 0usize);
        while p < at {
            let i = p / COUNT_PIECE;
            let pe = ((i + 1) * COUNT_PIECE).min(at);
            let full = p == i * COUNT_PIECE && pe == (i + 1) * COUNT_PIECE;
            let c = if full {
                self.newlines[i] as u64
            } else {
                bytecount::count(&r[p..pe], b'\n') as u64
            };
            n += c;
            run = if c == 0 && full { run + 1 } else { 0 };
            if run == LONG_RUN {
                // a line may be over the cap: where it starts and ends
                let from = self.pos;
                let ls = memchr::memrchr(b'\n', &r[from..p]).map_or(from, |i| from + i + 1);
                let le = memchr::memchr(b'\n', &r[pe..at]).map_or(at, |i| pe + i);
                long += (trim_cr(&r[ls..le]).len() > MAX_RECORD_BYTES) as u64;
                (p, run) = (le, 0);
                continue;
            }
            p = pe;
        }
        if at == r.len() && r.last() != Some(&b'\n') {
            n += 1;
        }
        self.gap = Some((self.pos, self.line_no));
        self.line_no += n;
        self.out.long_lines += long;
        self.pos = at;
    }

    /// Reads every line that starts in the sample window that starts at `pos` and ends at `end`.
    fn walk_window(
        &mut self,
        end: usize,
        cands: &mut std::iter::Peekable<impl Iterator<Item = (usize, usize)>>,
        extra: &mut std::iter::Peekable<impl Iterator<Item = usize>>,
    ) {
        while self.pos < end && self.pos < self.region.len() {
            let at = self.pos;
            let cand = cands.next_if(|c| c.0 == at);
            extra.next_if(|&s| s == at);
            self.read_line(cand.map(|c| c.1), true);
        }
        self.window = self.next_window();
    }

    /// Reads the line at `pos` (a candidate when its end `cand_end` is given): its number, its
    /// length, its shape and uptime.
    fn read_line(&mut self, cand_end: Option<usize>, sampled: bool) {
        let (r, ls) = (self.region, self.pos);
        let le =
            cand_end.unwrap_or_else(|| memchr::memchr(b'\n', &r[ls..]).map_or(r.len(), |i| ls + i));
        let line = trim_cr(&r[ls..le]);
        self.line_no += 1;
        let long = line.len() > MAX_RECORD_BYTES;
        self.out.long_lines += long as u64;
        if cand_end.is_some() {
            let first = self.hits.len();
            if long {
                let at = self.start + ls;
                self.hits
                    .extend(self.set.prefilter.starts(line).into_iter().map(|h| at + h));
            }
            let (s, e) = (self.start + ls, self.start + le);
            self.candidates
                .push((s, e, self.line_no, first, self.hits.len(), sampled));
        }
        let shape = quick_shape_with(line, self.learned);
        let marker = shape.is_none() && line.starts_with(b"-- ") && is_boot_marker(line);
        if sampled {
            self.out.walked += 1;
            self.out.recognized += (shape.is_some() || marker) as u64;
        }
        if let Some((s, _)) = shape.filter(|_| sampled || cand_end.is_some()) {
            self.out.shapes[s as usize] += 1;
        }
        if marker {
            self.out.boot_lines.push(self.line_no);
        }
        if let Some((s, Some(m))) = shape {
            if self.went_back(ls, m) {
                self.boots_in_gap(ls);
            }
            self.uptime(s, m, self.line_no);
        }
        self.gap = None;
        self.pos = (le + 1).min(r.len());
    }

    /// Whether the uptime went back before the line at `ls` (uptime `m`) since the last line
    /// read: from that line's uptime, or from the line just before (skipped).
    fn went_back(&self, ls: usize, m: u64) -> bool {
        if self.prev_mono.is_some_and(|pm| m + BACKWARDS_US < pm) {
            return true;
        }
        let Some((from, _)) = self.gap.filter(|&(from, _)| from < ls) else {
            return false;
        };
        let r = self.region;
        let ps = memchr::memrchr(b'\n', &r[from..ls - 1]).map_or(from, |i| from + i + 1);
        let before = quick_shape_with(trim_cr(&r[ps..ls - 1]), self.learned);
        before.is_some_and(|(_, pm)| pm.is_some_and(|pm| m + BACKWARDS_US < pm))
    }

    /// A dmesg line at uptime `m` (line `no`): a new boot at zero, or when the uptime went back.
    fn uptime(&mut self, s: Shape, m: u64, no: u64) {
        if matches!(s, Shape::DmesgRaw | Shape::Kmsg)
            && (m == 0 || self.prev_mono.is_some_and(|pm| m + BACKWARDS_US < pm))
        {
            self.out.boot_lines.push(no);
        }
        self.prev_mono = Some(m);
    }

    /// The uptime went back between the last line read and the line at `to`: reads the lines
    /// skipped between them one by one, for the boots that start there.
    fn boots_in_gap(&mut self, to: usize) {
        let Some((mut ls, mut no)) = self.gap.take() else {
            return;
        };
        let r = self.region;
        while ls < to {
            let le = memchr::memchr(b'\n', &r[ls..to]).map_or(to, |i| ls + i);
            no += 1;
            if let Some((s, Some(m))) = quick_shape_with(trim_cr(&r[ls..le]), self.learned) {
                self.uptime(s, m, no);
            }
            ls = le + 1;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::super::{scan_buffer, scan_chunk, ScanOutput, DEFAULT_EVENTS_PER_KIND};
    use super::*;
    use crate::formats::quick_shape;
    use crate::formats::wrapper::FileWrappers;

    fn set() -> RecognizerSet {
        RecognizerSet::load(&[]).expect("builtin recognizers")
    }

    /// About 3.5 MiB of dmesg: three boots (one from zero, one from an uptime that went back,
    /// one after a journal separator), lines over the record cap (and one just within it), a
    /// last line without a newline; the events far from the sample windows.
    fn log() -> Vec<u8> {
        let mut t = Vec::new();
        let line = |t: &mut Vec<u8>, us: u64, msg: &str| {
            t.extend_from_slice(
                format!("[{:>5}.{:06}] {msg}\n", us / 1_000_000, us % 1_000_000).as_bytes(),
            )
        };
        let mut us = 0u64;
        while t.len() < 1_400_000 {
            line(&mut t, us, "systemd[1]: Started Session of user root.");
            us += 3_000_000;
        }
        t.extend(std::iter::repeat_n(b'x', 100_000));
        t.push(b'\n');
        t.extend(std::iter::repeat_n(b'y', MAX_RECORD_BYTES));
        t.push(b'\n');
        t.extend(std::iter::repeat_n(b'z', MAX_RECORD_BYTES + 1));
        t.extend_from_slice(b"\r\n");
        t.extend(std::iter::repeat_n(b'w', MAX_RECORD_BYTES + 1));
        t.push(b'\n');
        // a boot from zero, then a boot that starts at 12 s (its first lines lost, its first
        // line a candidate), both between two sample windows
        line(&mut t, 0, "Linux version 6.1.0");
        let mut us = 2_000;
        while t.len() < 2_000_000 {
            line(&mut t, us, "usb 1-1: new device");
            us += 20_000;
        }
        let mut us = 12_001_000;
        line(
            &mut t,
            12_000_000,
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.",
        );
        while t.len() < 2_900_000 {
            line(&mut t, us, "usb 1-2: new device");
            us += 1_000;
        }
        t.extend_from_slice(b"-- Boot 0123456789abcdef0123456789abcdef --\n");
        let mut us = 5_000_000;
        while t.len() < 3_600_000 {
            line(&mut t, us, "eth0: link up");
            us += 10;
        }
        t.extend_from_slice(b"[    9.000000] last line without a newline");
        t
    }

    /// What the walk of every line that the scan made before gave: lines, long lines, boot
    /// lines, recognized lines.
    fn walk_every_line(buf: &[u8]) -> (u64, u64, Vec<u64>, u64) {
        let (mut long, mut boots, mut rec, mut prev) = (0, Vec::new(), 0, None::<u64>);
        let text = buf.strip_suffix(b"\n").unwrap_or(buf);
        let mut n = 0u64;
        for l in text.split(|&c| c == b'\n') {
            let l = trim_cr(l);
            n += 1;
            long += (l.len() > MAX_RECORD_BYTES) as u64;
            if let Some((s, m)) = quick_shape(l) {
                rec += 1;
                if let Some(m) = m {
                    if matches!(s, Shape::DmesgRaw | Shape::Kmsg)
                        && (m == 0 || prev.is_some_and(|p| m + BACKWARDS_US < p))
                    {
                        boots.push(n);
                    }
                    prev = Some(m);
                }
            } else if is_boot_marker(l) {
                boots.push(n);
                rec += 1;
            }
        }
        (n, long, boots, rec)
    }

    fn scanned(o: &ScanOutput) -> (u64, u64, Vec<u64>) {
        (o.lines, o.long_lines, o.boot_lines.clone())
    }

    #[test]
    fn lines_long_lines_and_boots_are_those_of_a_walk_of_every_line() {
        let (set, buf) = (set(), log());
        let (lines, long, boots, rec) = walk_every_line(&buf);
        // the first line, uptime zero, the reset to 12 s, the separator and the reset after it
        assert_eq!(boots.len(), 5, "{boots:?}");
        assert_eq!(long, 3);
        let out = scan_buffer(&buf, &set, false, DEFAULT_EVENTS_PER_KIND);
        assert_eq!(scanned(&out), (lines, long, boots.clone()));
        assert!(out.events.iter().any(|e| e.draft.kind == "xid"));
        // the sample's share: every line here has a prefix but the four long ones (outside it)
        assert!(
            out.recognized.abs_diff(rec) < 100,
            "{} {rec}",
            out.recognized
        );
        assert!(out.recognized <= out.lines);
        // within the head, every line is read: exact
        let head = &buf[..memchr::memrchr(b'\n', &buf[..900_000]).unwrap() + 1];
        let (hl, _, hb, hr) = walk_every_line(head);
        let out = scan_buffer(head, &set, false, DEFAULT_EVENTS_PER_KIND);
        assert_eq!(
            (out.lines, out.recognized, out.boot_lines.clone()),
            (hl, hr, hb)
        );
    }

    #[test]
    fn chunks_read_the_sample_of_the_whole_input() {
        let (set, buf) = (set(), log());
        let whole = scan_buffer(&buf, &set, false, DEFAULT_EVENTS_PER_KIND);
        let fw = FileWrappers::learn(&buf, |t| set.prefilter.find(t).is_some());
        for size in [300_000usize, 1 << 20, 1_234_567] {
            let mut out = ScanOutput::default();
            let mut s = 0;
            while s < buf.len() {
                let to = (s + size).min(buf.len());
                let e = memchr::memchr(b'\n', &buf[to - 1..]).map_or(buf.len(), |p| to + p);
                out.append(scan_chunk(
                    &buf,
                    (s, e, 0),
                    &set,
                    DEFAULT_EVENTS_PER_KIND,
                    &fw,
                ));
                s = e;
            }
            out.settle_recognized();
            assert_eq!(scanned(&out), scanned(&whole), "chunks of {size}");
            assert_eq!(out.recognized, whole.recognized, "chunks of {size}");
        }
        // in a pool, the pass over the bytes runs in halves: the same
        let pool = rayon::ThreadPoolBuilder::new()
            .num_threads(2)
            .build()
            .unwrap();
        let pooled = pool.install(|| scan_buffer(&buf, &set, false, DEFAULT_EVENTS_PER_KIND));
        assert_eq!(scanned(&pooled), scanned(&whole));
        assert_eq!(pooled.recognized, whole.recognized);
    }
}
