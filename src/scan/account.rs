//! The line accounting of a chunk without a walk of every line: lines are counted as newlines
//! (SIMD, in pieces, which finds the long lines too), and only some lines are read one by one:
//! the prefilter's candidates, the lines of the sample ([`sampled`]), journal boot separators,
//! lines at uptime zero, and the chunk's first and last lines.
//!
//! - `lines` and `long_lines` are exact (a line over [`MAX_RECORD_BYTES`] holds a whole piece of
//!   [`PIECE`] bytes without a newline: the pieces without one are looked at).
//! - `recognized` counts the sampled lines a format reader understood; the input's total is
//!   scaled from the sample at the end ([`ScanOutput::settle_recognized`]). Inputs within
//!   [`SAMPLE_HEAD`] are sampled whole: their count is exact.
//! - boot lines: journal separators (`-- Boot`, `-- Reboot --`) and dmesg lines at uptime zero
//!   are searched for in each piece as it is counted (while it is in the cache); any other
//!   uptime reset shows as an uptime that went back between two lines read, and the lines
//!   between them are then read one by one to find where.
//! - `shapes` counts the prefix shapes of the sampled and the candidate lines.
//!
//! The sample is defined by offsets in the input (not in the chunk), so a chunked scan and a
//! serial one read the same lines.

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

/// Newlines are counted in pieces of this many bytes: a line over [`MAX_RECORD_BYTES`] holds at
/// least one whole piece (it spans more than four, the last one of a gap may be short).
const PIECE: usize = MAX_RECORD_BYTES / 4;

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
    hits: Vec<usize>,
    candidates: Vec<Candidate>,
}

/// Accounts for the lines of `buf[start..end]` (`abs`: the input offset of `buf[start]`) into
/// `out`, and numbers the prefilter's candidate lines `found` (region offsets). Returns the
/// candidates (buffer offsets) and the prefilter hits of the long ones.
pub(super) fn account(
    buf: &[u8],
    (start, end, abs): (usize, usize, u64),
    found: &[(usize, usize)],
    set: &RecognizerSet,
    learned: Option<&[u8]>,
    out: &mut ScanOutput,
) -> (Vec<Candidate>, Vec<usize>) {
    let region = &buf[start..end];
    let stops = stops(region);
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
        hits: Vec::new(),
        candidates: Vec::with_capacity(found.len()),
    };
    w.window = w.next_window();
    let mut cands = found.iter().copied().peekable();
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
        let at = w.skip_to(at);
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
/// resets between them and the lines read are looked for).
fn stops(region: &[u8]) -> Vec<usize> {
    let last = memchr::memrchr(b'\n', &region[..region.len().saturating_sub(1)]);
    let mut v = vec![0, last.map_or(0, |i| i + 1)];
    v.dedup();
    v
}

/// The journal's boot separators (`-- Boot …`, `-- Reboot --`), at a line start.
const BOOT_SEP: &[u8] = b"\n-- ";
static BOOT: std::sync::LazyLock<Rare> = std::sync::LazyLock::new(|| Rare::new(BOOT_SEP, (0, 1)));
/// dmesg's uptime zero (`[%5lu.%06lu]`).
const ZERO_STAMP: &[u8] = b"[    0.000000]";
static ZERO: std::sync::LazyLock<Rare> = std::sync::LazyLock::new(|| Rare::new(ZERO_STAMP, (0, 13)));

/// The search for a needle by two of its bytes chosen for their rarity in logs, where AVX2 is
/// there, else by [`memchr::memmem`] (whose own choice, made for any text, is poor here: it
/// picks `-` and space in `\n-- `, which every ` - ` of a log matches, and digits in
/// `[    0.000000]`, where a newline and a dash, and two brackets 13 bytes apart, are rare).
struct Rare {
    needle: &'static [u8],
    #[cfg(target_arch = "x86_64")]
    pair: Option<memchr::arch::x86_64::avx2::packedpair::Finder>,
    any: memchr::memmem::Finder<'static>,
}

impl Rare {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    fn new(needle: &'static [u8], (i, j): (u8, u8)) -> Rare {
        Rare {
            needle,
            #[cfg(target_arch = "x86_64")]
            pair: memchr::arch::all::packedpair::Pair::with_indices(needle, i, j)
                .and_then(|p| memchr::arch::x86_64::avx2::packedpair::Finder::with_pair(needle, p)),
            any: memchr::memmem::Finder::new(needle),
        }
    }

    /// The first occurrence in `hay`.
    fn find(&self, hay: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self.pair.as_ref().filter(|f| hay.len() >= f.min_haystack_len()) {
            return f.find(hay, self.needle);
        }
        self.any.find(hay)
    }

    /// Every occurrence in `hay`, in order.
    fn find_iter<'h>(&'h self, hay: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
        let mut at = 0usize;
        std::iter::from_fn(move || {
            let h = at + self.find(hay.get(at..)?)?;
            at = h + 1;
            Some(h)
        })
    }
}

impl Walk<'_> {
    /// The first line and the end of the sample window at or after `pos`, if it starts in the
    /// region.
    fn next_window(&self) -> Option<(usize, usize)> {
        let at = self.abs + self.pos as u64;
        let (ws, we) = if sampled(at) {
            let ws = at - at % SAMPLE_PERIOD;
            let we = if at < SAMPLE_HEAD { SAMPLE_HEAD } else { ws + SAMPLE_WINDOW };
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
    /// them: newlines in pieces, and the long lines among them; stops early at a line that
    /// must be read (a boot separator, a line at uptime zero). Returns where it stopped.
    fn skip_to(&mut self, at: usize) -> usize {
        if at <= self.pos {
            return at;
        }
        let r = self.region;
        let (mut p, mut n, mut long) = (self.pos, 0u64, 0u64);
        let mut stop = at;
        while p < at {
            let q = (p + PIECE).min(at);
            if let Some(s) = self.marked(p, q, at) {
                n += bytecount::count(&r[p..s.max(p)], b'\n') as u64;
                stop = s;
                break;
            }
            let c = bytecount::count(&r[p..q], b'\n') as u64;
            n += c;
            if c == 0 && q - p == PIECE {
                // a line spans the whole piece: where it starts and ends
                let from = self.pos;
                let ls = memchr::memrchr(b'\n', &r[from..p]).map_or(from, |i| from + i + 1);
                let le = memchr::memchr(b'\n', &r[q..at]).map_or(at, |i| q + i);
                long += (trim_cr(&r[ls..le]).len() > MAX_RECORD_BYTES) as u64;
                p = le;
                continue;
            }
            p = q;
        }
        if stop == r.len() && r.last() != Some(&b'\n') {
            n += 1;
        }
        self.gap = Some((self.pos, self.line_no));
        self.line_no += n;
        self.out.long_lines += long;
        self.pos = stop;
        stop
    }

    /// The first line start in the gap from `pos` to `at` of a boot separator that starts in
    /// the piece `p..q`, or of a line whose uptime zero starts there.
    fn marked(&self, p: usize, q: usize, at: usize) -> Option<usize> {
        let r = self.region;
        let is_boot = |s: usize| r[s..].starts_with(b"-- Boot ") || r[s..].starts_with(b"-- Reboot --");
        let lo = p.saturating_sub(1);
        let hay = &r[lo..(q + BOOT_SEP.len() - 1).min(at)];
        let first = (p == 0).then_some(0);
        let boot = first
            .into_iter()
            .chain(BOOT.find_iter(hay).map(|h| lo + h + 1))
            .filter(|&s| s >= p && s < q)
            .find(|&s| is_boot(s));
        let hay = &r[p..(q + ZERO_STAMP.len() - 1).min(at)];
        let zero = ZERO.find(hay).map(|h| p + h).filter(|&h| h < q).map(|h| {
            memchr::memrchr(b'\n', &r[self.pos..h]).map_or(self.pos, |i| self.pos + i + 1)
        });
        boot.into_iter().chain(zero).min()
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
        let le = cand_end
            .unwrap_or_else(|| memchr::memchr(b'\n', &r[ls..]).map_or(r.len(), |i| ls + i));
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
            if self.prev_mono.is_some_and(|pm| m + BACKWARDS_US < pm) {
                self.boots_in_gap(ls);
            }
            self.uptime(s, m, self.line_no);
        }
        self.gap = None;
        self.pos = (le + 1).min(r.len());
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
