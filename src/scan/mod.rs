//! The per-byte stage: split a buffer into newline-aligned chunks, count lines, find candidate
//! lines with the anchor automaton, and run the owning recognizers on those lines only.

pub mod journal_json;

use crate::events::{Draft, RecognizerSet, Record};
use crate::formats::{parse_head, Shape};
use crate::model::LineStamp;
use rayon::prelude::*;
use std::collections::BTreeMap;

/// Lines longer than this are cut for recognizers (the whole line is still searched for anchors).
pub const MAX_RECORD_BYTES: usize = 64 * 1024;
/// Verbatim evidence is kept up to this many bytes per line.
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// Chunk size for parallel scanning of one buffer.
pub const CHUNK_BYTES: usize = 8 << 20;

/// A draft located in its input, with its time fields and verbatim text.
#[derive(Clone, Debug)]
pub struct Located {
    /// 1-based line of the record's first line.
    pub line: u64,
    /// The recognizer's output.
    pub draft: Draft,
    /// Time fields of the line, or of a neighbour (`borrowed`).
    pub stamp: LineStamp,
    /// The stamp came from a neighbouring line.
    pub borrowed: bool,
    /// Host named by the line prefix (or the neighbour that lent the time).
    pub host: Option<String>,
    /// Verbatim record.
    pub message: String,
    /// Message after the prefix.
    pub body: String,
    /// Further occurrences of this event (same host, kind, code, GPU and rank) past the events
    /// cap: counted here, not kept (see [`cap_by_key`]).
    pub suppressed: u64,
}

/// What scanning one buffer produced.
#[derive(Clone, Debug, Default)]
pub struct ScanOutput {
    /// Lines counted (`wc -l`, plus one for a final line without newline).
    pub lines: u64,
    /// Lines whose prefix a format reader understood, or that gave an event.
    pub recognized: u64,
    /// Events.
    pub events: Vec<Located>,
    /// Captures to merge into other events or the inventory.
    pub attachments: Vec<Located>,
    /// 1-based lines where a new boot starts (journal separators, uptime zero).
    pub boot_lines: Vec<u64>,
    /// Lines longer than [`MAX_RECORD_BYTES`].
    pub long_lines: u64,
    /// Count of lines per prefix shape (for format detection and reporting).
    pub shapes: [u64; 16],
}

/// Undoes rsyslog/kmsg escapes of newlines and cuts overly long text.
pub fn normalize_body(s: &str) -> String {
    let s = if s.len() > MAX_RECORD_BYTES {
        &s[..floor_char(s, MAX_RECORD_BYTES)]
    } else {
        s
    };
    if s.contains("#012") || s.contains("\\012") || s.contains("\\x0a") {
        s.replace("#012", "\n")
            .replace("\\012", "\n")
            .replace("\\x0a", "\n")
    } else {
        s.to_string()
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn lossy(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

fn trim_cr(l: &[u8]) -> &[u8] {
    l.strip_suffix(b"\r").unwrap_or(l)
}

fn prev_line(buf: &[u8], start: usize) -> Option<(usize, usize)> {
    if start == 0 {
        return None;
    }
    let end = start - 1;
    let s = memchr::memrchr(b'\n', &buf[..end]).map_or(0, |p| p + 1);
    Some((s, end))
}

fn next_line(buf: &[u8], end: usize) -> Option<(usize, usize)> {
    if end >= buf.len() {
        return None;
    }
    let s = end + 1;
    if s >= buf.len() {
        return None;
    }
    let e = memchr::memchr(b'\n', &buf[s..]).map_or(buf.len(), |p| s + p);
    Some((s, e))
}

/// A continuation line of a multi-line kernel record: indented and without a prefix of its own.
fn is_continuation(line: &[u8]) -> bool {
    line.len() > 8
        && line[..8].iter().all(|&c| c == b' ' || c == b'\t')
        && parse_head(line).prefix.is_none()
}

/// Events kept per kind per GPU of one input by default (see
/// [`crate::input::Limits::max_events_per_kind`]).
pub const DEFAULT_EVENTS_PER_KIND: u64 = 1000;

/// Keeps at most `cap` items (at least 1) per key, in order, and counts the others: with a cap of
/// 1 the first item of a key is kept, else the first `cap - 1` and the last (so that the span of a
/// storm stays known). Every dropped item adds `1 + its own weight` to the weight of the kept item
/// that stands for the rest (the last kept one; the first when the cap is 1), so
/// `kept + sum of weights` stays the exact number of occurrences whatever the number of passes.
pub fn cap_by_key<T, K: Ord>(
    items: &mut Vec<T>,
    cap: u64,
    key: impl Fn(&T) -> K,
    weight: impl Fn(&mut T) -> &mut u64,
) {
    let cap = cap.max(1);
    if items.len() as u64 <= cap {
        return;
    }
    let keys: Vec<K> = items.iter().map(&key).collect();
    // per key: occurrences, first index, last index
    let mut count: BTreeMap<&K, (u64, usize, usize)> = BTreeMap::new();
    for (i, k) in keys.iter().enumerate() {
        let e = count.entry(k).or_insert((0, i, i));
        e.0 += 1;
        e.2 = i;
    }
    if count.values().all(|c| c.0 <= cap) {
        return;
    }
    let mut seen: BTreeMap<&K, u64> = BTreeMap::new();
    let mut carry: BTreeMap<&K, u64> = BTreeMap::new();
    let mut keep = vec![true; items.len()];
    for (i, k) in keys.iter().enumerate() {
        let (total, _, last) = count[k];
        if total <= cap {
            continue;
        }
        let s = seen.entry(k).or_default();
        *s += 1;
        let kept = if cap == 1 {
            *s == 1
        } else {
            *s < cap || i == last
        };
        if !kept {
            keep[i] = false;
            *carry.entry(k).or_default() += 1 + *weight(&mut items[i]);
        }
    }
    for (k, c) in carry {
        let (_, first, last) = count[k];
        let at = if cap == 1 { first } else { last };
        *weight(&mut items[at]) += c;
    }
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// The key of the events cap for a located event: host, kind, code, GPU, rank.
type LocatedKey = (
    Option<String>,
    String,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

fn located_key(l: &Located) -> LocatedKey {
    (
        l.host.clone(),
        l.draft.kind.clone(),
        l.draft.code,
        l.draft.gpu.clone(),
        l.draft.rank,
    )
}

/// Scans a whole buffer; uses rayon over chunks when it is large and `parallel` is set. At most
/// `cap` events (and attachments) per host, kind, code, GPU and rank are kept; the others are
/// counted in the `suppressed` field of the last one kept.
pub fn scan_buffer(buf: &[u8], set: &RecognizerSet, parallel: bool, cap: u64) -> ScanOutput {
    if !parallel || buf.len() <= CHUNK_BYTES * 2 {
        return scan_chunk(buf, 0, buf.len(), set, cap);
    }
    let mut bounds = vec![0usize];
    let mut pos = CHUNK_BYTES;
    while pos < buf.len() {
        match memchr::memchr(b'\n', &buf[pos..]) {
            Some(p) => {
                bounds.push(pos + p + 1);
                pos = pos + p + 1 + CHUNK_BYTES;
            }
            None => break,
        }
    }
    if *bounds.last().unwrap_or(&0) < buf.len() {
        bounds.push(buf.len());
    }
    // a few chunks at a time, capped as they are appended, so that memory stays bounded
    let windows: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let mut out = ScanOutput::default();
    for batch in windows.chunks(rayon::current_num_threads().max(1) * 2) {
        let parts: Vec<ScanOutput> = batch
            .par_iter()
            .map(|&(s, e)| scan_chunk(buf, s, e, set, cap))
            .collect();
        for p in parts {
            out.append(p);
            out.cap(cap);
        }
    }
    out
}

impl ScanOutput {
    /// Applies the events cap ([`cap_by_key`]) to the events and the attachments.
    pub fn cap(&mut self, cap: u64) {
        cap_by_key(&mut self.events, cap, located_key, |l| &mut l.suppressed);
        cap_by_key(&mut self.attachments, cap, located_key, |l| {
            &mut l.suppressed
        });
    }

    /// Total occurrences past the cap, over all events.
    pub fn suppressed(&self) -> u64 {
        self.events.iter().map(|e| e.suppressed).sum()
    }

    /// Appends the output of the text that follows this one (line numbers shift by our lines).
    pub fn append(&mut self, mut p: ScanOutput) {
        let base = self.lines;
        for e in p.events.iter_mut().chain(p.attachments.iter_mut()) {
            e.line += base;
        }
        self.events.append(&mut p.events);
        self.attachments.append(&mut p.attachments);
        self.boot_lines
            .extend(p.boot_lines.iter().map(|l| l + base));
        self.lines += p.lines;
        self.recognized += p.recognized;
        self.long_lines += p.long_lines;
        for (a, b) in self.shapes.iter_mut().zip(p.shapes) {
            *a += b;
        }
    }
}

/// Scans `buf[start..end]` (newline aligned); line numbers are relative to `start`; at most `cap`
/// events per host, kind, code, GPU and rank are kept (the cap is applied as events accumulate).
pub fn scan_chunk(
    buf: &[u8],
    start: usize,
    end: usize,
    set: &RecognizerSet,
    cap: u64,
) -> ScanOutput {
    let mut out = ScanOutput::default();
    let region = &buf[start..end];
    // Pass 1: the prefilter finds the candidate positions (few) in the whole region.
    let hits: Vec<usize> = set.prefilter.find_iter(region).map(|m| m.start()).collect();
    let mut next_hit = 0usize;
    let mut candidates: Vec<(usize, usize, u64)> = Vec::new();
    // Pass 2: count lines and recognized prefixes without allocating; number the candidate lines.
    let mut line_no = 0u64;
    let mut ls = 0usize;
    let mut prev_mono: Option<u64> = None;
    while ls < region.len() {
        let le = memchr::memchr(b'\n', &region[ls..]).map_or(region.len(), |p| ls + p);
        let line = trim_cr(&region[ls..le]);
        line_no += 1;
        if hits.get(next_hit).is_some_and(|&h| h <= le) {
            candidates.push((start + ls, start + le, line_no));
            while hits.get(next_hit).is_some_and(|&h| h <= le) {
                next_hit += 1;
            }
        }
        if line.len() > MAX_RECORD_BYTES {
            out.long_lines += 1;
        }
        if let Some((shape, mono)) = crate::formats::quick_shape(line) {
            out.recognized += 1;
            out.shapes[shape as usize] += 1;
            if let Some(m) = mono {
                if matches!(shape, Shape::DmesgRaw | Shape::Kmsg)
                    && (m == 0 || prev_mono.is_some_and(|pm| m + 1_000_000 < pm))
                {
                    out.boot_lines.push(line_no);
                }
                prev_mono = Some(m);
            }
        } else if line.starts_with(b"-- ") && crate::formats::journal::is_boot_marker(line) {
            out.boot_lines.push(line_no);
            out.recognized += 1;
        }
        ls = le + 1;
    }
    out.lines = line_no;
    // Pass 3: recognizers on the candidate lines.
    let mut event_lines = 0u64;
    let mut record_end = 0usize;
    let mut next_cap = cap.saturating_mul(2).max(4096);
    for (ls, le, no) in candidates {
        // a hit inside the continuation lines of the record just read belongs to that record
        if ls < record_end {
            continue;
        }
        let (gave, end) = candidate(buf, ls, le, no, set, &mut out);
        event_lines += gave as u64;
        record_end = end;
        let held = (out.events.len() + out.attachments.len()) as u64;
        if held >= next_cap {
            out.cap(cap);
            let after = (out.events.len() + out.attachments.len()) as u64;
            next_cap = after.saturating_mul(2).max(next_cap);
        }
    }
    out.cap(cap);
    // event lines whose prefix was not understood still count as recognized
    out.recognized = (out.recognized + event_lines).min(out.lines);
    out
}

/// Runs recognizers on one candidate line; returns whether the line had no known prefix but gave
/// an event, and where the record (with its continuation lines) ends.
fn candidate(
    buf: &[u8],
    ls: usize,
    le: usize,
    line_no: u64,
    set: &RecognizerSet,
    out: &mut ScanOutput,
) -> (bool, usize) {
    let line = trim_cr(&buf[ls..le]);
    // Multi-line kernel records: walk back to the record head, then forward over continuations.
    let mut head_start = ls;
    let mut head_line_no = line_no;
    let mut parts: Vec<&[u8]> = vec![line];
    if is_continuation(line) {
        let mut s = ls;
        for _ in 0..8 {
            let Some((ps, pe)) = prev_line(buf, s) else {
                break;
            };
            let pl = trim_cr(&buf[ps..pe]);
            parts.insert(0, pl);
            head_start = ps;
            head_line_no -= 1;
            s = ps;
            if !is_continuation(pl) {
                break;
            }
        }
    }
    let mut e = le;
    for _ in 0..8 {
        let Some((ns, ne)) = next_line(buf, e) else {
            break;
        };
        let nl = trim_cr(&buf[ns..ne]);
        if !is_continuation(nl) {
            break;
        }
        parts.push(nl);
        e = ne;
    }
    let head_line = parts[0];
    let head = parse_head(head_line);
    let mut body = lossy(&head_line[head.msg_start.min(head_line.len())..]);
    for p in &parts[1..] {
        body.push('\n');
        body.push_str(String::from_utf8_lossy(p).trim_start());
    }
    let body = normalize_body(&body);
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
    for _ in 0..8 {
        let Some((ns, ne)) = next_line(buf, e2) else {
            break;
        };
        following.push(lossy(trim_cr(
            &buf[ns..ne][..(ne - ns).min(MAX_MESSAGE_BYTES)],
        )));
        e2 = ne;
    }
    let mut full = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            full.push('\n');
        }
        full.push_str(&String::from_utf8_lossy(
            &p[..p.len().min(MAX_RECORD_BYTES)],
        ));
    }
    let rec = Record {
        full: &full,
        body: &body,
        preceding: &preceding,
        following: &following,
        rank: head.rank,
    };
    let mut drafts = Vec::new();
    // anchors may overlap ("Killed" inside "Killed process"): collect every owner on this record
    let mut sorted: Vec<usize> = Vec::new();
    for m in set.automaton.find_overlapping_iter(full.as_str()) {
        for &o in set.owners(m.pattern().as_usize()) {
            if !sorted.contains(&o) {
                sorted.push(o);
            }
        }
    }
    sorted.sort_unstable();
    for o in sorted {
        set.apply(o, &rec, &mut drafts);
    }
    if drafts.is_empty() {
        return (false, e);
    }
    // one event per kind per record (the first recognizer wins), attachments kept
    let mut seen: Vec<String> = Vec::new();
    drafts.retain(|d| {
        if d.attach_to.is_some() {
            return true;
        }
        let key = d.kind.clone();
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    let (stamp, borrowed, lender_host) = match head.prefix {
        Some(p) if !p.stamp.is_empty() => (p.stamp, false, None),
        _ => borrow_stamp(buf, head_start, e),
    };
    let host = head.prefix.and_then(|p| p.host).map(lossy).or(lender_host);
    let mut message = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            message.push('\n');
        }
        let cut = &p[..p.len().min(MAX_MESSAGE_BYTES)];
        message.push_str(&String::from_utf8_lossy(cut));
    }
    let had_prefix = head.prefix.is_some();
    for d in drafts {
        let loc = Located {
            line: head_line_no,
            stamp: d.stamp.unwrap_or(stamp),
            borrowed: d.stamp.is_none() && borrowed,
            host: d.host.clone().or_else(|| host.clone()),
            message: message.clone(),
            body: body.chars().take(MAX_MESSAGE_BYTES).collect(),
            draft: d,
            suppressed: 0,
        };
        if loc.draft.attach_to.is_some() {
            out.attachments.push(loc);
        } else {
            out.events.push(loc);
        }
    }
    (!had_prefix, e)
}

/// Finds the nearest line with a time: up to 256 lines back, then up to 256 lines forward.
fn borrow_stamp(buf: &[u8], start: usize, end: usize) -> (LineStamp, bool, Option<String>) {
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

#[cfg(test)]
mod tests {
    use super::cap_by_key;

    /// (key, weight) items; the weight is what the cap adds dropped occurrences to.
    fn items(keys: &[u8]) -> Vec<(u8, u64)> {
        keys.iter().map(|&k| (k, 0)).collect()
    }

    fn total(v: &[(u8, u64)], k: u8) -> u64 {
        v.iter().filter(|i| i.0 == k).map(|i| 1 + i.1).sum()
    }

    #[test]
    fn cap_keeps_the_first_and_the_last_and_counts_the_rest() {
        let mut v = items(&[1, 2, 1, 1, 1, 2, 1]);
        cap_by_key(&mut v, 3, |i| i.0, |i| &mut i.1);
        // key 1 (five items): the first two and the last; key 2 (two items): untouched
        assert_eq!(v, vec![(1, 0), (2, 0), (1, 0), (2, 0), (1, 2)]);
        assert_eq!(total(&v, 1), 5);
        assert_eq!(total(&v, 2), 2);
    }

    #[test]
    fn a_cap_of_one_keeps_the_first() {
        let mut v = items(&[7, 7, 7, 7]);
        cap_by_key(&mut v, 1, |i| i.0, |i| &mut i.1);
        assert_eq!(v, vec![(7, 3)]);
        let mut w = items(&[7, 7]);
        cap_by_key(&mut w, 0, |i| i.0, |i| &mut i.1);
        assert_eq!(w, vec![(7, 1)], "a cap of 0 is taken as 1");
    }

    #[test]
    fn repeated_passes_keep_the_counts_exact() {
        // as the scanner does: cap, append more, cap again
        let mut v = Vec::new();
        for round in 0..10u8 {
            v.extend(items(&[round % 2; 25]));
            cap_by_key(&mut v, 4, |i| i.0, |i| &mut i.1);
            assert!(v.len() <= 8);
        }
        assert_eq!(total(&v, 0), 125);
        assert_eq!(total(&v, 1), 125);
    }
}
