//! One candidate line: its record, the recognizers on it, and the events it gives.

use super::lines::{
    is_continuation, is_hard_wrap, lossy, next_line, prev_line, text, trim_cr, MIN_WRAPPED_WIDTH,
};
use super::memo::Known;
use super::record::{borrow_stamp, context, record_text};
use super::{kreport, longline, tally, Located, ScanOutput, MAX_MESSAGE_BYTES, MAX_RECORD_BYTES};
use crate::events::{Draft, RecognizerSet, Record};
use crate::formats::record::Scope;
use crate::formats::wrapper::{strip_ansi, FileWrappers};
use crate::formats::{parse_head_with, LineHead, Shape};
use crate::model::LineStamp;
use std::sync::Arc;

/// What reading a candidate line gave.
pub(super) struct Read {
    /// The line had no known prefix but gave an event.
    pub gave: bool,
    /// Where the record (with its continuation lines) ends.
    pub end: usize,
    /// For a simple line (one line with its own time, no context read), what the memo may keep
    /// of it; `None` otherwise.
    pub known: Option<Known>,
    /// Every event takes its host from the line's prefix (none names one of its own).
    pub hosted: bool,
}

/// A record: its lines and where its head is.
struct Walk<'a> {
    parts: Vec<&'a [u8]>,
    head_start: usize,
    head_line_no: u64,
    end: usize,
}

/// Walks from candidate line `line` (at `ls..le`, number `line_no`) back to the record head and
/// forward over its continuations (kernel continuations, a terminal's hard wraps).
fn walk<'a>(
    buf: &'a [u8],
    line: &'a [u8],
    (ls, le, line_no): (usize, usize, u64),
    fw: &FileWrappers,
) -> Walk<'a> {
    // a hard wrap continues a wrapped line as wide as a terminal (or the wrap before it)
    let learned = fw.learned.as_deref();
    let wraps = |prev: &[u8], prev_wrapped: bool, l: &[u8]| {
        prev_wrapped && prev.len() >= MIN_WRAPPED_WIDTH && is_hard_wrap(l, fw)
    };
    let is_wrapped = |l: &[u8]| fw.mostly_wrapped && parse_head_with(l, learned).wrapped;
    let mut w = Walk {
        parts: vec![line],
        head_start: ls,
        head_line_no: line_no,
        end: le,
    };
    let mut s = ls;
    for _ in 0..8 {
        let Some((ps, pe)) = prev_line(buf, s) else {
            break;
        };
        let pl = trim_cr(&buf[ps..pe]);
        if !(is_continuation(w.parts[0]) || wraps(pl, is_wrapped(pl), w.parts[0])) {
            break;
        }
        w.parts.insert(0, pl);
        w.head_start = ps;
        w.head_line_no -= 1;
        s = ps;
    }
    let mut last_wrapped = is_wrapped(w.parts[w.parts.len() - 1]);
    for _ in 0..8 {
        let Some((ns, ne)) = next_line(buf, w.end) else {
            break;
        };
        let nl = trim_cr(&buf[ns..ne]);
        if wraps(w.parts[w.parts.len() - 1], last_wrapped, nl) {
            last_wrapped = true;
        } else if is_continuation(nl) {
            last_wrapped = false;
        } else {
            break;
        }
        w.parts.push(nl);
        w.end = ne;
    }
    w
}

/// The record's message (after the head's prefix, continuations joined) and its full text.
fn texts(parts: &[&[u8]], head: &LineHead<'_>, fw: &FileWrappers) -> (String, String) {
    let head_line = parts[0];
    let mut body = lossy(&head_line[head.msg_start.min(head_line.len())..]);
    for p in &parts[1..] {
        join_part(&mut body, p, !is_continuation(p) && is_hard_wrap(p, fw));
    }
    if body.contains('\x1b') {
        body = strip_ansi(&body);
    }
    let body = crate::events::text::normalize_owned(body);
    let mut full = String::new();
    for (i, p) in parts.iter().enumerate() {
        if i > 0 {
            full.push('\n');
        }
        full.push_str(&text(&p[..p.len().min(MAX_RECORD_BYTES)]));
    }
    if full.contains('\x1b') {
        full = strip_ansi(&full);
    }
    (body, full)
}

/// Runs the recognizers whose anchors `full` holds on a record, the lines around it from
/// `around(after)` for the few parsers that read them; one event per kind per record (the first
/// recognizer wins), attachments kept. Returns the drafts and whether the context was read.
pub(super) fn recognize(
    set: &RecognizerSet,
    (full, body, rank): (&str, &str, Option<i64>),
    around: impl FnOnce(usize) -> (Vec<String>, Vec<String>),
) -> (Vec<Draft>, bool) {
    // anchors may overlap ("Killed" inside "Killed process"): collect every owner on this record
    let sorted = set.owners_in(full);
    let (mut preceding, mut following) = (Vec::new(), Vec::new());
    let used = sorted.iter().any(|&o| set.needs_context(o, full));
    if used {
        let after = sorted.iter().map(|&o| set.context_after(o)).max();
        (preceding, following) = around(after.unwrap_or(8));
    }
    let rec = Record {
        full,
        body,
        preceding: &preceding,
        following: &following,
        rank,
    };
    let mut drafts = Vec::new();
    set.apply_all_once(&sorted, &rec, &mut drafts);
    set.settle(&mut drafts);
    // one event per kind (per segment of a long line) per record: the first of each
    fn key(d: &Draft) -> (&str, Option<&str>) {
        (d.kind, d.attrs.get("segment"))
    }
    let dup = |i: usize| {
        let d = &drafts[i];
        d.attach_to().is_none()
            && drafts[..i]
                .iter()
                .any(|e| e.attach_to().is_none() && key(e) == key(d))
    };
    if (0..drafts.len()).any(dup) {
        let keep: Vec<bool> = (0..drafts.len()).map(|i| !dup(i)).collect();
        let mut i = 0;
        drafts.retain(|_| {
            i += 1;
            keep[i - 1]
        });
    }
    (drafts, used)
}

/// Runs recognizers on one candidate line (see [`Read`]). A line over [`MAX_RECORD_BYTES`] is
/// read as its head and, when `far` is given, the window around its last anchor
/// ([`longline::window`]); never copied whole. With a `tally`, events past the cap are only
/// counted ([`tally::Tally::count`]; never for a long line's window).
pub(super) fn candidate(
    buf: &[u8],
    ((ls, le, line_no), far): ((usize, usize, u64), Option<(usize, usize)>),
    own: (usize, usize),
    set: &RecognizerSet,
    out: &mut ScanOutput,
    fw: &FileWrappers,
    mut tally: Option<&mut tally::Tally>,
) -> Read {
    let line = line_view(trim_cr(&buf[ls..le]), far);
    let w = walk(buf, &line, (ls, le, line_no), fw);
    if w.head_start < own.0 || w.head_start >= own.1 {
        // the record's head is in another chunk: that chunk reads it (see `scan_chunk`)
        return Read {
            gave: false,
            end: le,
            known: None,
            hosted: false,
        };
    }
    let head = parse_head_with(w.parts[0], fw.learned.as_deref());
    let (body, full) = texts(&w.parts, &head, fw);
    let (drafts, used_context) = recognize(set, (&full, &body, head.rank), |after| {
        context(buf, w.head_start, w.end, after)
    });
    // one line with its own time or host: its events can be rebuilt from the line alone
    let simple = far.is_none() && w.parts.len() == 1 && super::memo::self_contained(&head);
    let host = head
        .prefix
        .and_then(|p| p.host)
        .or(head.host)
        .map(String::from_utf8_lossy);
    let known = match tally.as_deref_mut() {
        Some(t) if simple && !used_context => Some(known_of(t, &drafts, host.as_deref(), set)),
        _ => None,
    };
    let hosted = drafts.iter().all(|d| d.host().is_none());
    let done = |gave| Read {
        gave,
        end: w.end,
        known: known.clone(),
        hosted,
    };
    if drafts.is_empty() {
        return done(false);
    }
    if let Some(t) = tally.filter(|_| far.is_none()) {
        let at = (ls, le, line_no);
        if t.count(&drafts, host.as_deref(), simple, set.nvrm_recognizers(), at) {
            return done(head.prefix.is_none());
        }
    }
    let end = build(buf, set, out, (&w, &head), (body, drafts));
    Read {
        gave: head.prefix.is_none(),
        end,
        known,
        hosted,
    }
}

/// The text of a candidate line that the recognizers read: the line up to
/// [`MAX_RECORD_BYTES`], or for a long line (`far`: the window around its last anchor) its head,
/// ` ... ` and that window.
fn line_view(whole: &[u8], far: Option<(usize, usize)>) -> std::borrow::Cow<'_, [u8]> {
    match far {
        Some((ws, we)) => [&whole[..longline::LONG_HEAD], b" ... ", &whole[ws..we]]
            .concat()
            .into(),
        None => whole[..whole.len().min(MAX_RECORD_BYTES)].into(),
    }
}

/// What the tally remembers of a simple line (one line with its own time, read without
/// context), for the next line of the same signature: that it gave nothing, its events' keys,
/// or that its events must be built.
fn known_of(
    t: &mut tally::Tally,
    drafts: &[Draft],
    host: Option<&str>,
    set: &RecognizerSet,
) -> Known {
    if drafts.is_empty() {
        return Known::Nothing;
    }
    match t.plain_ids(drafts, host, set.nvrm_recognizers()) {
        Some(ids) => Known::Keys(ids),
        None => Known::Full,
    }
}

/// The time of a record: its prefix's, or its key/value record's (with that record's span), or
/// a neighbour's (borrowed, with the lender's host).
fn stamp_of(
    buf: &[u8],
    head: &LineHead<'_>,
    (head_start, e): (usize, usize),
) -> (LineStamp, bool, Option<String>, Option<(usize, usize)>) {
    match head.prefix {
        Some(p) if !p.stamp.is_empty() => (p.stamp, false, None, None),
        Some(p) if p.shape == Shape::DmesgDelta => {
            let wall = crate::formats::kernel::reltime_stamp(buf, head_start);
            let stamp = LineStamp {
                wall,
                mono_us: None,
                tod_us: None,
            };
            (stamp, false, None, None)
        }
        _ => match crate::formats::record::record_stamp(buf, head_start, e) {
            Some(r) => {
                let span = (r.scope == Scope::Record).then_some(r.span);
                (r.stamp, r.scope == Scope::File, None, span)
            }
            None => {
                let (s, b, h) = borrow_stamp(buf, head_start, e);
                (s, b, h, None)
            }
        },
    }
}

/// Builds the events of a record's drafts into `out`; returns where the record ends (past a
/// kernel report's trace lines).
fn build(
    buf: &[u8],
    set: &RecognizerSet,
    out: &mut ScanOutput,
    (w, head): (&Walk<'_>, &LineHead<'_>),
    (body, drafts): (String, Vec<Draft>),
) -> usize {
    let mut e = w.end;
    // a kernel report: its trace lines, each with its own prefix, belong to this event
    let report = drafts
        .iter()
        .any(|d| d.report())
        .then(|| kreport::read(buf, e, head.prefix.map(|p| p.shape)));
    let (stamp, borrowed, lender_host, record) = stamp_of(buf, head, (w.head_start, e));
    let host = head
        .prefix
        .and_then(|p| p.host)
        .or(head.host)
        .map(lossy)
        .or(lender_host)
        .map(|h| out.share_host(h));
    if let Some(r) = &report {
        e = e.max(r.end);
    }
    let (message, body, record_message) =
        record_texts(buf, w, (body, report.as_ref()), (record, e));
    let parts = Shared {
        line: w.head_line_no,
        stamp,
        borrowed,
        host,
        // the events of one record (an Xid and the kinds derived from it) share its text
        message,
        body,
        record_message,
    };
    place(set, out, &parts, report.as_ref(), drafts);
    e
}

/// What the events of one record share.
struct Shared {
    /// The record's first line.
    line: u64,
    /// Its time, and whether it is a neighbour's.
    stamp: LineStamp,
    borrowed: bool,
    /// The host its prefix (or the lender of its time) names.
    host: Option<Arc<str>>,
    /// Its verbatim text.
    message: Arc<str>,
    /// Its message after the prefix.
    body: String,
    /// The message of its key/value record, if it is one.
    record_message: Option<String>,
}

/// The record's verbatim text (its lines, a kernel report's trace lines, the rest of its
/// key/value record), its body with that rest, and the key/value record's own message.
fn record_texts(
    buf: &[u8],
    w: &Walk<'_>,
    (body, report): (String, Option<&kreport::Report>),
    (record, e): (Option<(usize, usize)>, usize),
) -> (Arc<str>, String, Option<String>) {
    let traced = report.is_some_and(|r| !r.lines.is_empty());
    if let ([line], false, None) = (&w.parts[..], traced, record) {
        // one line, nothing around it (nearly always): its text shared as it is, not a copy
        let cut = &line[..line.len().min(MAX_MESSAGE_BYTES)];
        let message = match String::from_utf8_lossy(cut) {
            std::borrow::Cow::Borrowed(t) => Arc::from(t),
            std::borrow::Cow::Owned(t) => Arc::from(t),
        };
        return (message, body, None);
    }
    let (message, body, record_message) = joined_texts(buf, w, (body, report), (record, e));
    (Arc::from(message), body, record_message)
}

/// [`record_texts`] of a record of several lines, a kernel report or a key/value record.
fn joined_texts(
    buf: &[u8],
    w: &Walk<'_>,
    (mut body, report): (String, Option<&kreport::Report>),
    (record, e): (Option<(usize, usize)>, usize),
) -> (String, String, Option<String>) {
    let mut message = String::new();
    for (i, p) in w.parts.iter().enumerate() {
        if i > 0 {
            message.push('\n');
        }
        let cut = &p[..p.len().min(MAX_MESSAGE_BYTES)];
        message.push_str(&String::from_utf8_lossy(cut));
    }
    for l in report.iter().flat_map(|r| &r.lines) {
        message.push('\n');
        message.push_str(l);
    }
    let mut record_message = None;
    if let Some(span) = record {
        record_message = crate::formats::record::record_message(&buf[span.0..span.1]);
        if let Some(text) = record_text(buf, span, (w.head_start, e)) {
            // the line that named the event first, then the rest of its record: the evidence,
            // and what tells apart two records that name the same id
            body = format!("{body}\n{text}");
            message = format!("{message}\n{text}");
        }
    }
    (message, body, record_message)
}

/// Turns the drafts of one record into located events (or attachments) of `out`.
fn place(
    set: &RecognizerSet,
    out: &mut ScanOutput,
    rec: &Shared,
    report: Option<&kreport::Report>,
    drafts: Vec<Draft>,
) {
    // the details as a recognizer made them, and as kept: the drafts of one record share a block
    let mut last: Option<(crate::model::Attrs, crate::model::Attrs)> = None;
    for mut d in drafts {
        if let (Some(r), true) = (report, d.report()) {
            r.annotate(&mut d, &set.trace);
        }
        if let Some(m) = &rec.record_message {
            d.attrs.insert_if_absent("message", m);
        }
        // one update of a progress bar glued into a long line: its own text is the evidence
        let segment_text = if d.attrs.contains_key("segment") {
            d.attrs.remove("text")
        } else {
            None
        };
        let (message, body) = match segment_text {
            Some(t) => (Arc::from(t), crate::model::Body::Own(Box::default())),
            None => {
                let body = crate::model::Body::cut(&rec.message, &rec.body, MAX_MESSAGE_BYTES);
                // a long value that is part of the record (an Xid's text) is held as a place in it
                match &last {
                    Some((made, kept)) if made.same_block(&d.attrs) => d.attrs = kept.clone(),
                    _ => {
                        let made = d.attrs.clone();
                        d.attrs.share(&rec.message);
                        last = Some((made, d.attrs.clone()));
                    }
                }
                (rec.message.clone(), body)
            }
        };
        d.gpu = d.gpu.take().map(|g| out.share_gpu(g));
        let at_line = (rec.stamp, rec.borrowed, rec.host.clone());
        let loc = Located::new(d, rec.line, at_line, (message, body));
        if loc.draft.attach_to().is_some() {
            out.attachments.push(loc);
        } else if loc.draft.kind != "progress" || out.admit_progress() {
            out.events.push(loc);
        }
    }
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
