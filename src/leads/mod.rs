//! Leads: error lines the analyzer could not read. When a run finds no incident, its inputs are
//! read again (the normal scan is not touched) for lines that look like errors by the
//! vocabulary of `data/leads.toml` ([`vocab`]) and that no recognizer turns into an event or
//! claims as benign. A few of them per input are kept (the first and the last, counts exact),
//! cited with `path:line`: with them the verdict is `unknown`, not `none`, unless the run ended
//! normally or is outside the analyzer's scope (see [`Leads::decisive`]).

pub mod vocab;

use crate::events::RecognizerSet;
use crate::formats::Format;
use crate::input::{self, Found, Limits};
use std::collections::{BTreeSet, HashMap, HashSet, VecDeque};
use vocab::{Line, Vocab};

/// Leads kept per input from its start, and as many from its end.
pub const PER_INPUT: usize = 3;
/// Leads kept over all inputs.
pub const MAX_LEADS: usize = 30;
/// Bytes of a lead's line kept.
const MAX_LINE: usize = 400;
/// A line longer than this is judged by its first [`LEAD_TEXT`] bytes, or when its first error
/// word lies further, by its head and the window around that word (see [`lead_view`]): the
/// vocabulary's phrases, the benign recognizers' anchors and the recognizers each searched the
/// whole of a 60 KB line (13 MB/s on `srun: error: ` and spaces).
const LEAD_TEXT: usize = 4096;
/// The head of a long line kept before the window around its error word, and that window's
/// bytes before and after the word.
const LEAD_HEAD: usize = 1024;
const LEAD_AROUND: (usize, usize) = (1024, 2048);

/// The text of line `raw` that is judged (see [`LEAD_TEXT`]); `hit`: where in it the search
/// found an error word.
fn lead_view(raw: &[u8], hit: usize) -> std::borrow::Cow<'_, [u8]> {
    if raw.len() <= LEAD_TEXT {
        return raw.into();
    }
    if hit + LEAD_AROUND.1 <= LEAD_TEXT {
        return raw[..LEAD_TEXT].into();
    }
    let from = hit.saturating_sub(LEAD_AROUND.0).max(LEAD_HEAD);
    let to = (hit + LEAD_AROUND.1).min(raw.len());
    [&raw[..LEAD_HEAD], b" ... ", &raw[from..to]]
        .concat()
        .into()
}

/// Bytes of an input's head searched for the scope words (its leads are searched too).
const SCOPE_HEAD: u64 = 4 << 20;
/// Block of a streamed input read at a time.
const BLOCK: usize = 8 << 20;

/// One lead: where, and the line verbatim (cut at a few hundred bytes).
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Lead {
    /// Input path as shown.
    pub path: String,
    /// 1-based line.
    pub line: u64,
    /// The line (lossy UTF-8).
    pub text: String,
}

/// What the second reading found over all inputs.
#[derive(Clone, Debug, Default)]
pub struct Leads {
    /// The leads kept, by input then line.
    pub list: Vec<Lead>,
    /// Lead lines in all (exact).
    pub total: u64,
    /// Lines a benign line explained (see `[[leads.explained]]`).
    pub explained: u64,
    /// Some input names the GPU stack or a job, or the scan found an event.
    pub in_scope: bool,
    /// A line that says the run ended normally, with no lead after it in its input.
    pub health: Option<Lead>,
    /// Inputs not read again (standard input cannot be).
    pub unread: Vec<String>,
}

impl Leads {
    /// The leads decide the verdict: there are some, the run is about GPUs or jobs, and it did
    /// not end normally.
    pub fn decisive(&self) -> bool {
        self.total > 0 && self.in_scope && self.health.is_none()
    }
}

/// What one input gave.
#[derive(Default)]
struct InputLeads {
    path: String,
    total: u64,
    first: Vec<Lead>,
    last: VecDeque<Lead>,
    /// Leads naming a service a benign recognizer may explain: (lead, the recognizers).
    maybe: Vec<(Lead, Vec<String>)>,
    /// Benign recognizers that claimed a line.
    benign: BTreeSet<String>,
    in_scope: bool,
    /// Bytes of the head searched for scope words.
    scope_read: u64,
    health: Option<Lead>,
    last_lead: u64,
}

impl InputLeads {
    /// Takes the findings of the lines that follow this one's (a part of the same input read
    /// apart): as if they had been read here, in order.
    fn absorb(&mut self, p: InputLeads) {
        let replayed = (p.first.len() + p.last.len()) as u64;
        for lead in p.first.into_iter().chain(p.last) {
            self.push(lead);
        }
        self.total += p.total - replayed;
        self.maybe.extend(p.maybe);
        self.benign.extend(p.benign);
        self.in_scope |= p.in_scope;
        if p.health.is_some() {
            self.health = p.health;
        }
    }

    fn push(&mut self, lead: Lead) {
        self.total += 1;
        self.last_lead = lead.line;
        if self.first.len() < PER_INPUT {
            self.first.push(lead);
            return;
        }
        if self.last.len() == PER_INPUT {
            self.last.pop_front();
        }
        self.last.push_back(lead);
    }
}

/// Reads the inputs of `found` again for leads. `lines` holds, per input path, the lines that
/// gave an event or an attachment; `formats` the format each input was read as.
pub fn collect(
    found: &[Found],
    limits: &Limits,
    exclude: &[String],
    set: &RecognizerSet,
    lines: &HashMap<String, HashSet<u64>>,
    formats: &HashMap<String, Format>,
    any_event: bool,
) -> Leads {
    let v = Vocab::builtin();
    let (stdin, files): (Vec<Found>, Vec<Found>) =
        found.iter().cloned().partition(|f| f.display == "-");
    let workers = if files.len() > 1 {
        rayon::current_num_threads()
    } else {
        1
    };
    let per = input::run(&files, limits, exclude, workers, |mut inp| {
        let skip = formats.get(&inp.path).is_some_and(|f| structured(*f));
        let mut out = InputLeads {
            path: inp.path.clone(),
            ..InputLeads::default()
        };
        if !skip {
            let none = HashSet::new();
            let seen = lines.get(&inp.path).unwrap_or(&none);
            read_input(&mut inp, Reading { v, set, seen }, &mut out);
        }
        out
    });
    let mut leads = merge(per, v);
    leads.in_scope |= any_event;
    leads.unread = stdin.into_iter().map(|f| f.display).collect();
    leads
}

/// Formats whose reader reads every line as a table or a document (their words are fields).
fn structured(f: Format) -> bool {
    matches!(f, Format::NvidiaSmi | Format::Dcgmi | Format::JournalJson)
}

/// What reading an input's lines for leads needs: the vocabulary, the recognizers, and the
/// lines the scan already read.
#[derive(Clone, Copy)]
struct Reading<'a> {
    v: &'a Vocab,
    set: &'a RecognizerSet,
    seen: &'a HashSet<u64>,
}

/// Walks one input's bytes, whole or block by block.
fn read_input(inp: &mut input::Input, r: Reading<'_>, out: &mut InputLeads) {
    let mut warnings = Vec::new();
    let (body, _) = crate::read::open(inp, &mut warnings);
    match body {
        // a collect bundle's manifest is faultline's own record of the capture: its words
        // (an item's purpose, a missing tool's message) are read by the manifest's reader
        crate::read::Body::Whole(b) if crate::collect::manifest::looks_like(&b) => {}
        crate::read::Body::Whole(b) => {
            scan(&b, 0, r, out);
        }
        crate::read::Body::Streamed(mut buf, mut stream) => {
            let mut base = 0u64;
            loop {
                let more = stream.fill(&mut buf, BLOCK);
                // whole lines only, unless the stream ended
                let cut = match (more, memchr::memrchr(b'\n', &buf)) {
                    (0, _) | (_, None) => buf.len(),
                    (_, Some(p)) => p + 1,
                };
                base += scan(&buf[..cut], base, r, out);
                buf.drain(..cut);
                if more == 0 && buf.is_empty() {
                    break;
                }
            }
        }
    }
}

/// A buffer at least this large is searched in parts, one per thread of the pool (a large bug
/// report's lines the search finds took half of its run on one core).
const SPLIT_FROM: usize = 8 << 20;

/// Reads the lines of `buf` (its first line is line `base + 1`) that the search finds, into
/// `out`; returns the lines of `buf`. A large buffer is read in parts in parallel, their
/// findings put together in order: the same as one pass.
fn scan(buf: &[u8], base: u64, r: Reading<'_>, out: &mut InputLeads) -> u64 {
    let threads = rayon::current_num_threads();
    let pooled = rayon::current_thread_index().is_some();
    let parts = if buf.len() >= SPLIT_FROM && !pooled {
        threads
    } else {
        1
    };
    scan_in_parts(buf, base, r, out, parts)
}

fn scan_in_parts(buf: &[u8], base: u64, r: Reading<'_>, out: &mut InputLeads, parts: usize) -> u64 {
    let v = r.v;
    scope_head(buf, v, out);
    if parts < 2 {
        search_lines(buf, base, r, out);
    } else {
        let cuts = line_cuts(buf, parts);
        let mut bases = vec![base];
        for w in cuts.windows(2).take(cuts.len().saturating_sub(2)) {
            let last = *bases.last().unwrap_or(&base);
            bases.push(last + bytecount::count(&buf[w[0]..w[1]], b'\n') as u64);
        }
        let found: Vec<InputLeads> = {
            use rayon::prelude::*;
            (0..cuts.len() - 1)
                .into_par_iter()
                .map(|i| {
                    let mut p = InputLeads::default();
                    search_lines(&buf[cuts[i]..cuts[i + 1]], bases[i], r, &mut p);
                    p
                })
                .collect()
        };
        for p in found {
            out.absorb(p);
        }
    }
    let lines = bytecount::count(buf, b'\n') as u64;
    lines + u64::from(!buf.is_empty() && !buf.ends_with(b"\n"))
}

/// Where `buf` is cut into `parts` of about equal size, at line starts: 0, …, `buf.len()`.
fn line_cuts(buf: &[u8], parts: usize) -> Vec<usize> {
    let mut cuts = vec![0];
    for k in 1..parts {
        let at = buf.len() / parts * k;
        let c = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |p| at + p + 1);
        if c > cuts[cuts.len() - 1] && c < buf.len() {
            cuts.push(c);
        }
    }
    cuts.push(buf.len());
    cuts
}

/// The scope words are looked for in the input's head (a boot log names its driver, a job log
/// its launcher early) and in its leads: a case-insensitive search of a whole large input would
/// cost more than the rest of this reading.
fn scope_head(buf: &[u8], v: &Vocab, out: &mut InputLeads) {
    if !out.in_scope && out.scope_read < SCOPE_HEAD {
        let n = buf.len().min((SCOPE_HEAD - out.scope_read) as usize);
        out.in_scope = v.scope.is_match(&buf[..n]);
        out.scope_read += n as u64;
    }
}

/// Reads the lines of `buf` that the search finds (its first line is line `base + 1`).
fn search_lines(buf: &[u8], base: u64, r: Reading<'_>, out: &mut InputLeads) {
    let v = r.v;
    let mut line_no = base;
    let mut counted = 0usize;
    let mut next = 0usize;
    for m in v.search.find_iter(buf) {
        if m.start() < next {
            continue;
        }
        let start = memchr::memrchr(b'\n', &buf[..m.start()]).map_or(0, |p| p + 1);
        let end = memchr::memchr(b'\n', &buf[m.start()..]).map_or(buf.len(), |p| m.start() + p);
        line_no += bytecount::count(&buf[counted..start], b'\n') as u64;
        counted = start;
        next = end + 1;
        let raw = &buf[start..end];
        let raw = raw.strip_suffix(b"\r").unwrap_or(raw);
        let raw = lead_view(raw, m.start() - start);
        let text = String::from_utf8_lossy(&raw);
        one_line(&text, line_no + 1, r, out);
    }
}

/// Decides one line that the search found.
fn one_line(text: &str, line: u64, r: Reading<'_>, out: &mut InputLeads) {
    let Reading { v, set, seen } = r;
    let kind = v.line(text);
    let lead = || Lead {
        path: out.path.clone(),
        line,
        text: cut(text),
    };
    match kind {
        Line::Other => return,
        Line::Health(_) => {
            out.health = Some(lead());
            return;
        }
        Line::Lead if seen.contains(&line) => return,
        Line::Lead => {}
    }
    let lead = lead();
    // a line a recognizer reads (a repeat merged into an earlier event, a benign mark) is read
    if !set.probe(text).is_empty() {
        return;
    }
    if let Some(id) = benign_id(set, text) {
        out.benign.insert(id);
        return;
    }
    out.in_scope |= v.scope.is_match(text);
    let by: Vec<String> = v
        .explained
        .iter()
        .filter(|(_, names)| names.iter().any(|n| text.contains(n.as_str())))
        .map(|(b, _)| b.clone())
        .collect();
    if by.is_empty() {
        out.push(lead);
    } else {
        out.maybe.push((lead, by));
    }
}

/// The benign recognizer claiming `text`, if any (matched on the message after its prefix).
fn benign_id(set: &RecognizerSet, text: &str) -> Option<String> {
    let head = crate::formats::parse_head(text.as_bytes());
    let body = &text[head.msg_start.min(text.len())..];
    set.benign_for(body)
        .or_else(|| set.benign_for(text))
        .map(str::to_string)
}

fn cut(s: &str) -> String {
    if s.len() <= MAX_LINE {
        return s.to_string();
    }
    let mut i = MAX_LINE;
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    format!("{}…", &s[..i])
}

/// Puts the inputs' findings together: the leads a benign line of the run explains are dropped
/// (counted apart), the others kept within the bounds.
fn merge(per: Vec<InputLeads>, _v: &Vocab) -> Leads {
    let fired: BTreeSet<String> = per.iter().flat_map(|p| p.benign.iter().cloned()).collect();
    let mut leads = Leads::default();
    for mut p in per {
        leads.in_scope |= p.in_scope;
        let mut extra = Vec::new();
        for (lead, by) in std::mem::take(&mut p.maybe) {
            if by.iter().any(|b| fired.contains(b)) {
                leads.explained += 1;
            } else {
                p.last_lead = p.last_lead.max(lead.line);
                extra.push(lead);
            }
        }
        p.total += extra.len() as u64;
        leads.total += p.total;
        let mut all: Vec<Lead> = p.first.into_iter().chain(p.last).chain(extra).collect();
        all.sort();
        all.dedup();
        let n = all.len();
        let keep: Vec<Lead> = all
            .into_iter()
            .enumerate()
            .filter(|(i, _)| *i < PER_INPUT || *i + PER_INPUT >= n)
            .map(|(_, l)| l)
            .collect();
        leads.list.extend(keep);
        if let Some(h) = p.health.filter(|h| p.total == 0 || h.line > p.last_lead) {
            leads.health.get_or_insert(h);
        }
    }
    leads.list.truncate(MAX_LEADS);
    leads
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Read in parts, an input gives what one pass gives: the same first and last leads,
    /// counts, health line, explained and benign lines, line numbers.
    #[test]
    fn parts_read_as_one_pass() {
        let k = crate::Knowledge::load(&[]).unwrap();
        let v = Vocab::builtin();
        let mut buf = String::new();
        for i in 0..4000 {
            let line = match i % 97 {
                3 => format!("job {i}: RuntimeError: CUDA error: unspecified launch failure\n"),
                40 => format!("[{i}] Process {i} exits successfully.\n"),
                55 => format!("step {i}: Traceback (most recent call last):\n"),
                70 if i > 3000 => "ERROR: nhc: Health check failed: disk\n".to_string(),
                _ => format!("ordinary line {i} of the log, nothing to see\n"),
            };
            buf.push_str(&line);
        }
        let seen: HashSet<u64> = [4, 250].into_iter().collect();
        let read = |parts: usize| {
            let mut out = InputLeads::default();
            let n = scan_in_parts(
                buf.as_bytes(),
                10,
                Reading {
                    v,
                    set: &k.recognizers,
                    seen: &seen,
                },
                &mut out,
                parts,
            );
            let maybe: Vec<u64> = out.maybe.iter().map(|m| m.0.line).collect();
            let health = out.health.map(|h| h.line);
            (
                n,
                out.total,
                out.first,
                out.last,
                maybe,
                out.benign,
                out.in_scope,
                health,
                out.last_lead,
            )
        };
        let one = read(1);
        assert!(
            one.1 > 20 && one.2.len() == PER_INPUT && one.7.is_some(),
            "{:?}",
            one.1
        );
        for parts in [2, 3, 7, 64] {
            assert!(read(parts) == one, "{parts} parts");
        }
    }

    /// A long line is judged by a bounded text that keeps its head and its error word.
    #[test]
    fn a_long_line_is_judged_by_its_head_and_the_window_around_its_error_word() {
        let near = format!("srun: error: {}", " ".repeat(60_000));
        let v = lead_view(near.as_bytes(), 6);
        assert_eq!(&v[..], &near.as_bytes()[..LEAD_TEXT]);
        let far = format!(
            "job 12: {} task failed: error 5{}",
            "x".repeat(30_000),
            "y".repeat(30_000)
        );
        let hit = far.find("error").unwrap();
        let v = lead_view(far.as_bytes(), hit);
        assert!(v.len() <= LEAD_HEAD + 5 + LEAD_AROUND.0 + LEAD_AROUND.1);
        let v = String::from_utf8_lossy(&v);
        assert!(
            v.starts_with("job 12: ") && v.contains("task failed: error 5"),
            "{v}"
        );
        let short = "kernel: error 5";
        assert_eq!(&lead_view(short.as_bytes(), 8)[..], short.as_bytes());
    }
}
