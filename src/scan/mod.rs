//! The per-byte stage: split a buffer into newline-aligned chunks, count lines, find candidate
//! lines with the anchor automaton, and run the owning recognizers on those lines only.

mod cap;
pub mod journal_json;
pub mod kreport;
mod longline;
mod tally;

pub use cap::{
    cap_by_key, cap_capped, CapKey, Capped, FastBuild, FastHasher, FastMap, DEFAULT_EVENTS_PER_KIND,
};

use crate::events::{Draft, RecognizerSet, Record};
use crate::formats::record::Scope;
use crate::formats::wrapper::{strip_ansi, FileWrappers};
use crate::formats::{parse_head, parse_head_with, Shape};
use crate::model::LineStamp;
use rayon::prelude::*;

/// Lines longer than this are cut for recognizers (the whole line is still searched for anchors).
pub const MAX_RECORD_BYTES: usize = 64 * 1024;
/// Verbatim evidence is kept up to this many bytes per line.
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// Chunk size for parallel scanning of one buffer.
pub const CHUNK_BYTES: usize = 8 << 20;

/// The chunk size in use: [`CHUNK_BYTES`], or `FAULTLINE_CHUNK_BYTES` from the environment
/// (at least 256; for the tests that compare chunked and serial scanning on small inputs).
pub fn chunk_bytes() -> usize {
    static CHUNK: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CHUNK.get_or_init(|| {
        std::env::var("FAULTLINE_CHUNK_BYTES")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(CHUNK_BYTES, |n| n.max(256))
    })
}

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
    /// Anchors in long lines that recognizers did not read (neither in the head nor in the
    /// window around the line's last anchor).
    pub lost_anchors: u64,
    /// Count of lines per prefix shape (for format detection and reporting).
    pub shapes: [u64; crate::formats::SHAPES],
    /// Progress samples met while scanning, kept or not.
    progress_seen: u64,
    /// One progress sample in this many is kept (a power of two).
    progress_stride: u64,
    /// Progress samples kept.
    progress_kept: usize,
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

/// Whether `line` continues `prev` as [`candidate`] walks a record: a kernel continuation, or a
/// terminal's hard wrap of a wrapped line.
fn continues(prev: &[u8], line: &[u8], fw: &FileWrappers) -> bool {
    let prev_wrapped = fw.mostly_wrapped && parse_head_with(prev, fw.learned.as_deref()).wrapped;
    is_continuation(line)
        || (prev_wrapped && prev.len() >= MIN_WRAPPED_WIDTH && is_hard_wrap(line, fw))
}

/// A continuation line of a multi-line kernel record: indented and without a prefix of its own.
fn is_continuation(line: &[u8]) -> bool {
    line.len() > 8
        && line[..8].iter().all(|&c| c == b' ' || c == b'\t')
        && parse_head(line).prefix.is_none()
}

/// Lines shorter than this were not cut by a terminal: the next line is not their hard wrap.
const MIN_WRAPPED_WIDTH: usize = 72;

/// A terminal's hard wrap: in a file whose lines mostly carry a wrapper, a line with neither a
/// wrapper nor a prefix continues the line before it.
fn is_hard_wrap(line: &[u8], fw: &FileWrappers) -> bool {
    // `slurmstepd: error: ...`, `srun: ...`: a program's own line written next to the wrapped ones
    if !fw.mostly_wrapped
        || line.trim_ascii().is_empty()
        || crate::formats::wrapper::host_colon(line).is_some()
    {
        return false;
    }
    let h = parse_head_with(line, fw.learned.as_deref());
    !h.wrapped && h.prefix.is_none()
}

/// Scans a whole buffer; uses rayon over chunks when it is large and `parallel` is set. At most
/// `cap` events (and attachments) per host, kind, code, GPU and rank are kept; the others are
/// counted in the `suppressed` field of the last one kept. Progress samples are not capped but
/// thinned (see [`ScanOutput::thin_progress`]).
pub fn scan_buffer(buf: &[u8], set: &RecognizerSet, parallel: bool, cap: u64) -> ScanOutput {
    let fw = FileWrappers::learn(buf, |t| set.prefilter.find(t).is_some());
    let chunk = chunk_bytes();
    if !parallel || buf.len() <= chunk * 2 {
        return scan_chunk(buf, (0, buf.len()), set, cap, &fw);
    }
    let mut bounds = vec![0usize];
    let mut pos = chunk;
    while pos < buf.len() {
        match memchr::memchr(b'\n', &buf[pos..]) {
            Some(p) => {
                bounds.push(pos + p + 1);
                pos = pos + p + 1 + chunk;
            }
            None => break,
        }
    }
    if *bounds.last().unwrap_or(&0) < buf.len() {
        bounds.push(buf.len());
    }
    // each chunk keeps its share of the progress samples, and a few chunks run at a time, capped
    // as they are appended, so that memory stays bounded
    let share = (MAX_PROGRESS_SAMPLES / bounds.len().max(1)).max(500);
    let windows: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    let mut out = ScanOutput::default();
    for batch in windows.chunks(rayon::current_num_threads().max(1) * 2) {
        let parts: Vec<ScanOutput> = batch
            .par_iter()
            .map(|&(s, e)| {
                let mut part = scan_chunk(buf, (s, e), set, cap, &fw);
                part.thin_progress_to(share);
                part
            })
            .collect();
        for p in parts {
            out.append(p);
            out.cap(cap);
        }
    }
    out
}

impl ScanOutput {
    /// Applies the events cap ([`cap_by_key`]) to the events (progress samples are never
    /// capped) and the attachments.
    pub fn cap(&mut self, cap: u64) {
        cap_capped(&mut self.events, cap);
        cap_capped(&mut self.attachments, cap);
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
        self.lost_anchors += p.lost_anchors;
        for (a, b) in self.shapes.iter_mut().zip(p.shapes) {
            *a += b;
        }
        self.thin_progress();
    }

    /// Keeps memory bounded on endless progress output: past [`MAX_PROGRESS_SAMPLES`] trainer
    /// progress samples, every other one is dropped (repeatedly, so at most the cap remain, spread
    /// evenly over the input and always keeping the last); the series keep their shape.
    pub fn thin_progress(&mut self) {
        self.thin_progress_to(MAX_PROGRESS_SAMPLES);
    }

    /// Whether the next progress sample is kept: one in `progress_stride`; when more than
    /// [`CHUNK_PROGRESS_SAMPLES`] are kept, every other kept one goes and the stride doubles, so
    /// the kept samples stay evenly spread over the text scanned so far.
    pub fn admit_progress(&mut self) -> bool {
        let stride = self.progress_stride.max(1);
        let keep = self.progress_seen % stride == 0;
        self.progress_seen += 1;
        if !keep {
            return false;
        }
        if self.progress_kept + 1 > CHUNK_PROGRESS_SAMPLES {
            let mut ordinal = 0usize;
            self.events.retain(|e| {
                if e.draft.kind != "progress" {
                    return true;
                }
                ordinal += 1;
                ordinal % 2 == 1
            });
            self.progress_kept = ordinal.div_ceil(2);
            self.progress_stride = stride * 2;
            self.events.shrink_to_fit();
            // the sample at hand was admitted under the old stride: keep it only if the new one does
            let keep_now = (self.progress_seen - 1) % self.progress_stride == 0;
            if keep_now {
                self.progress_kept += 1;
            }
            return keep_now;
        }
        self.progress_kept += 1;
        true
    }

    /// Thins the progress samples to at most `cap` (see [`ScanOutput::thin_progress`]).
    pub fn thin_progress_to(&mut self, cap: usize) {
        let count = self
            .events
            .iter()
            .filter(|e| e.draft.kind == "progress")
            .count();
        if count <= cap.max(1) {
            return;
        }
        let stride = count.div_ceil(cap.max(1)).next_power_of_two();
        let mut ordinal = 0usize;
        self.events.retain(|e| {
            if e.draft.kind != "progress" {
                return true;
            }
            ordinal += 1;
            ordinal % stride == 0 || ordinal == count
        });
        self.events.shrink_to_fit();
    }
}

/// Progress samples one chunk holds at most while scanning (see [`ScanOutput::admit_progress`]).
const CHUNK_PROGRESS_SAMPLES: usize = 8192;

/// The most trainer progress samples kept per input (see [`ScanOutput::thin_progress`]).
pub const MAX_PROGRESS_SAMPLES: usize = 20_000;

/// Scans `buf[start..end]` (newline aligned); line numbers are relative to `start`; at most `cap`
/// events per host, kind, code, GPU and rank are kept (the cap is applied as events accumulate).
/// `fw` is what the file's first lines said about wrappers.
pub fn scan_chunk(
    buf: &[u8],
    (start, end): (usize, usize),
    set: &RecognizerSet,
    cap: u64,
    fw: &FileWrappers,
) -> ScanOutput {
    let mut out = ScanOutput::default();
    let region = &buf[start..end];
    // Pass 1: the prefilter finds the candidate positions (few) in the whole region.
    let hits: Vec<usize> = set.prefilter.starts(region);
    let mut next_hit = 0usize;
    let mut candidates: Vec<(usize, usize, u64, usize, usize)> = Vec::new();
    // Pass 2: count lines and recognized prefixes without allocating; number the candidate lines.
    let mut line_no = 0u64;
    let mut ls = 0usize;
    let mut prev_mono: Option<u64> = None;
    while ls < region.len() {
        let le = memchr::memchr(b'\n', &region[ls..]).map_or(region.len(), |p| ls + p);
        let line = trim_cr(&region[ls..le]);
        line_no += 1;
        if hits.get(next_hit).is_some_and(|&h| h <= le) {
            let first = next_hit;
            while hits.get(next_hit).is_some_and(|&h| h <= le) {
                next_hit += 1;
            }
            candidates.push((start + ls, start + le, line_no, first, next_hit));
        }
        if line.len() > MAX_RECORD_BYTES {
            out.long_lines += 1;
        }
        if let Some((shape, mono)) = crate::formats::quick_shape_with(line, fw.learned.as_deref()) {
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
    let mut tally = tally::Tally::new(cap);
    for (ls, le, no, h0, h1) in candidates {
        // a hit inside the continuation lines of the record just read belongs to that record
        if ls < record_end {
            continue;
        }
        let far = longline::window(buf, (ls, le), &hits[h0..h1], start, &mut out);
        let (gave, end) = candidate(
            buf,
            ((ls, le, no), far),
            (start, end),
            set,
            &mut out,
            fw,
            tally.as_mut(),
        );
        event_lines += gave as u64;
        record_end = end;
        let held = (out.events.len() + out.attachments.len()) as u64;
        if held >= next_cap {
            crate::events::nvrm::collapse_bursts(&mut out.events, set.nvrm_recognizers());
            out.cap(cap);
            let after = (out.events.len() + out.attachments.len()) as u64;
            next_cap = after.saturating_mul(2).max(next_cap);
        }
    }
    if let Some(t) = tally {
        t.finish(&mut out, |at| {
            let mut one = ScanOutput::default();
            candidate(buf, (at, None), (start, end), set, &mut one, fw, None);
            one.events
        });
    }
    // a record whose head is in this chunk is this chunk's, even where its continuation lines
    // (the ones with the anchor) lie past its end: the next chunk leaves it alone
    let mut prev = prev_line(buf, end).unwrap_or((start, start));
    let mut at = end.saturating_sub(1);
    for k in 1..=8u64 {
        let Some((ns, ne)) = next_line(buf, at).filter(|_| end < buf.len()) else {
            break;
        };
        let (pl, nl) = (trim_cr(&buf[prev.0..prev.1]), trim_cr(&buf[ns..ne]));
        if !continues(pl, nl, fw) {
            break;
        }
        let hits = set.prefilter.starts(&buf[ns..ne]);
        if !hits.is_empty() && ns >= record_end {
            let far = longline::window(buf, (ns, ne), &hits, ns, &mut out);
            let no = out.lines + k;
            let (gave, e) = candidate(
                buf,
                ((ns, ne, no), far),
                (start, end),
                set,
                &mut out,
                fw,
                None,
            );
            event_lines += gave as u64;
            record_end = e;
        }
        prev = (ns, ne);
        at = ne;
    }
    crate::events::nvrm::collapse_bursts(&mut out.events, set.nvrm_recognizers());
    out.cap(cap);
    // event lines whose prefix was not understood still count as recognized
    out.recognized = (out.recognized + event_lines).min(out.lines);
    out.thin_progress();
    out
}

/// Runs recognizers on one candidate line; returns whether the line had no known prefix but gave
/// an event, and where the record (with its continuation lines) ends. A line over
/// [`MAX_RECORD_BYTES`] is read as its head and, when `far` is given, the window around its last
/// anchor ([`longline::window`]); never copied whole. With a `tally`, events past the cap are
/// only counted ([`tally::Tally::count`]; never for a long line's window).
fn candidate(
    buf: &[u8],
    ((ls, le, line_no), far): ((usize, usize, u64), Option<(usize, usize)>),
    own: (usize, usize),
    set: &RecognizerSet,
    out: &mut ScanOutput,
    fw: &FileWrappers,
    tally: Option<&mut tally::Tally>,
) -> (bool, usize) {
    let whole = trim_cr(&buf[ls..le]);
    let view: Vec<u8>;
    let line = match far {
        Some((ws, we)) => {
            view = [&whole[..longline::LONG_HEAD], b" ... ", &whole[ws..we]].concat();
            &view[..]
        }
        None => &whole[..whole.len().min(MAX_RECORD_BYTES)],
    };
    // a hard wrap continues a wrapped line as wide as a terminal (or the wrap before it)
    let learned = fw.learned.as_deref();
    let wraps = |prev: &[u8], prev_wrapped: bool, l: &[u8]| {
        prev_wrapped && prev.len() >= MIN_WRAPPED_WIDTH && is_hard_wrap(l, fw)
    };
    let is_wrapped = |l: &[u8]| fw.mostly_wrapped && parse_head_with(l, learned).wrapped;
    // Multi-line records: walk back to the record head, then forward over continuations.
    let mut head_start = ls;
    let mut head_line_no = line_no;
    let mut parts: Vec<&[u8]> = vec![line];
    let mut s = ls;
    for _ in 0..8 {
        let Some((ps, pe)) = prev_line(buf, s) else {
            break;
        };
        let pl = trim_cr(&buf[ps..pe]);
        if !(is_continuation(parts[0]) || wraps(pl, is_wrapped(pl), parts[0])) {
            break;
        }
        parts.insert(0, pl);
        head_start = ps;
        head_line_no -= 1;
        s = ps;
    }
    if head_start < own.0 || head_start >= own.1 {
        // the record's head is in another chunk: that chunk reads it (see `scan_chunk`)
        return (false, le);
    }
    let mut e = le;
    let mut last_wrapped = is_wrapped(parts[parts.len() - 1]);
    for _ in 0..8 {
        let Some((ns, ne)) = next_line(buf, e) else {
            break;
        };
        let nl = trim_cr(&buf[ns..ne]);
        if wraps(parts[parts.len() - 1], last_wrapped, nl) {
            last_wrapped = true;
        } else if is_continuation(nl) {
            last_wrapped = false;
        } else {
            break;
        }
        parts.push(nl);
        e = ne;
    }
    let head_line = parts[0];
    let head = parse_head_with(head_line, fw.learned.as_deref());
    let mut body = lossy(&head_line[head.msg_start.min(head_line.len())..]);
    for p in &parts[1..] {
        join_part(&mut body, p, !is_continuation(p) && is_hard_wrap(p, fw));
    }
    if body.contains('\x1b') {
        body = strip_ansi(&body);
    }
    let body = normalize_body(&body);
    let mut full = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            full.push('\n');
        }
        full.push_str(&String::from_utf8_lossy(
            &p[..p.len().min(MAX_RECORD_BYTES)],
        ));
    }
    if full.contains('\x1b') {
        full = strip_ansi(&full);
    }
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
    // the lines around the record, only for the few parsers that read them
    let (mut preceding, mut following) = (Vec::new(), Vec::new());
    if sorted.iter().any(|&o| set.needs_context(o, &full)) {
        let after = sorted.iter().map(|&o| set.context_after(o)).max();
        (preceding, following) = context(buf, head_start, e, after.unwrap_or(8));
    }
    let rec = Record {
        full: &full,
        body: &body,
        preceding: &preceding,
        following: &following,
        rank: head.rank,
    };
    let mut drafts = Vec::new();
    set.apply_all(&sorted, &rec, &mut drafts);
    set.settle(&mut drafts);
    if drafts.is_empty() {
        return (false, e);
    }
    // one event per kind per record (the first recognizer wins), attachments kept
    let mut seen: Vec<String> = Vec::new();
    drafts.retain(|d| {
        if d.attach_to.is_some() {
            return true;
        }
        let key = match d.attrs.get("segment") {
            Some(seg) => format!("{}#{seg}", d.kind),
            None => d.kind.clone(),
        };
        if seen.contains(&key) {
            false
        } else {
            seen.push(key);
            true
        }
    });
    if let Some(t) = tally.filter(|_| far.is_none()) {
        // one line with its own time: its events can be rebuilt from the line alone
        let simple = parts.len() == 1 && head.prefix.is_some_and(|p| !p.stamp.is_empty());
        let host = head
            .prefix
            .and_then(|p| p.host)
            .or(head.host)
            .map(String::from_utf8_lossy);
        let at = (ls, le, line_no);
        if t.count(&drafts, host.as_deref(), simple, set.nvrm_recognizers(), at) {
            return (head.prefix.is_none(), e);
        }
    }
    // a kernel report: its trace lines, each with its own prefix, belong to this event
    let report = drafts
        .iter()
        .any(|d| d.report)
        .then(|| kreport::read(buf, e, head.prefix.map(|p| p.shape)));
    let mut record = None;
    let (stamp, borrowed, lender_host) = match head.prefix {
        Some(p) if !p.stamp.is_empty() => (p.stamp, false, None),
        Some(p) if p.shape == Shape::DmesgDelta => {
            let wall = crate::formats::kernel::reltime_stamp(buf, head_start);
            (
                LineStamp {
                    wall,
                    mono_us: None,
                },
                false,
                None,
            )
        }
        _ => match crate::formats::record::record_stamp(buf, head_start, e) {
            Some(r) => {
                record = (r.scope == Scope::Record).then_some(r.span);
                (r.stamp, r.scope == Scope::File, None)
            }
            None => borrow_stamp(buf, head_start, e),
        },
    };
    let host = head
        .prefix
        .and_then(|p| p.host)
        .or(head.host)
        .map(lossy)
        .or(lender_host);
    let mut message = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            message.push('\n');
        }
        let cut = &p[..p.len().min(MAX_MESSAGE_BYTES)];
        message.push_str(&String::from_utf8_lossy(cut));
    }
    if let Some(r) = &report {
        for l in &r.lines {
            message.push('\n');
            message.push_str(l);
        }
        e = e.max(r.end);
    }
    let mut body = body;
    let mut record_message = None;
    if let Some(span) = record {
        record_message = crate::formats::record::record_message(&buf[span.0..span.1]);
        if let Some(text) = record_text(buf, span, (head_start, e)) {
            // the line that named the event first, then the rest of its record: the evidence,
            // and what tells apart two records that name the same id
            body = format!("{body}\n{text}");
            message = format!("{message}\n{text}");
        }
    }
    let had_prefix = head.prefix.is_some();
    for mut d in drafts {
        if let (Some(r), true) = (&report, d.report) {
            r.annotate(&mut d, &set.trace);
        }
        if let Some(m) = &record_message {
            d.attrs.entry("message".into()).or_insert_with(|| m.clone());
        }
        // one update of a progress bar glued into a long line: its own text is the evidence
        let segment_text = if d.attrs.contains_key("segment") {
            d.attrs.remove("text")
        } else {
            None
        };
        let (message, body) = match segment_text {
            Some(t) => (t, String::new()),
            None => (
                message.clone(),
                body.chars().take(MAX_MESSAGE_BYTES).collect(),
            ),
        };
        let loc = Located {
            line: head_line_no,
            stamp: d.stamp.unwrap_or(stamp),
            borrowed: d.stamp.is_none() && borrowed,
            host: d.host.clone().or_else(|| host.clone()),
            message,
            body,
            draft: d,
            suppressed: 0,
        };
        if loc.draft.attach_to.is_some() {
            out.attachments.push(loc);
        } else if loc.draft.kind != "progress" || out.admit_progress() {
            out.events.push(loc);
        }
    }
    (!had_prefix, e)
}

/// Appends a continuation line to a record's text: a kernel continuation on its own line, a
/// terminal's hard wrap glued back (with a space when the wrap ate the one between two words).
fn join_part(body: &mut String, part: &[u8], hard_wrap: bool) {
    let text = String::from_utf8_lossy(part);
    if hard_wrap {
        if !body.ends_with(char::is_whitespace) {
            body.push(' ');
        }
        body.push_str(&text);
    } else {
        body.push('\n');
        body.push_str(text.trim_start());
    }
}

/// Up to 8 lines before the record starting at `head_start` and `after` after the record ending
/// at `e`.
fn context(buf: &[u8], head_start: usize, e: usize, after: usize) -> (Vec<String>, Vec<String>) {
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
fn record_text(buf: &[u8], (start, end): (usize, usize), own: (usize, usize)) -> Option<String> {
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
