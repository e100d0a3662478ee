//! The recognizer set at work: which recognizers own an anchor, running them on a record
//! (specific before generic) and settling the drafts of one record.

use super::needles::LONG_TEXT;
use super::{aer, cper, cuda, fabric, job, ntstatus, nvml, nvrm, regexes, signals, verbs, xid};
use super::{Draft, Needles, Prefilter, RecognizerDef, Record, TraceDef};
use crate::model::LineStamp;
use regex::Regex;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// One recognizer ready to run: its definition (borrowed from the built-in files, or the
/// user's) and its regex.
pub(super) struct Compiled {
    pub(super) def: Cow<'static, RecognizerDef>,
    pub(super) regex: Option<regexes::RegexRef>,
    /// The origin of the drafts its regex makes.
    pub(super) full: &'static super::record::Origin,
    /// The origin of the drafts its built-in parser makes (no attachment, no catalog table).
    pub(super) bare: &'static super::record::Origin,
    /// Searchers of its `exclude` words, built on its first run (a `str::contains` per word
    /// searched a long record byte by byte, and built its searcher on every call; building
    /// them all at load cost two milliseconds).
    pub(super) exclude: std::sync::OnceLock<Vec<memchr::memmem::Finder<'static>>>,
    /// Its regex gives at most one event of its kind (no parser, attachment, segment or table
    /// that changes the kind): a record that gave one already gets nothing more from it.
    pub(super) single: bool,
}

impl Compiled {
    /// The searchers of its `exclude` words.
    fn exclude(&self) -> &[memchr::memmem::Finder<'static>] {
        self.exclude.get_or_init(|| {
            let words = self.def.exclude.iter();
            words
                .map(|x| memchr::memmem::Finder::new(x.as_bytes()).into_owned())
                .collect()
        })
    }
}

/// Records whose message is longer than this are read by each recognizer through a window of
/// this many bytes around its first anchor (see [`window`]).
pub const RECORD_WINDOW: usize = 4096;
/// Bytes of the window before the recognizer's first anchor.
const WINDOW_BEFORE: usize = 1024;

thread_local! {
    /// Bytes of message the recognizers were given on this thread (see [`recognizer_bytes`]).
    static READ: std::cell::Cell<u64> = const { std::cell::Cell::new(0) };
}

/// Bytes of record messages that recognizers (their regexes, parsers and the tables read after
/// them) were given on this thread so far: one count per recognizer run, of the window it read.
/// What bounds their cost per byte of input (issue 37, finding 6); for tests.
pub fn recognizer_bytes() -> u64 {
    READ.with(|r| r.get())
}

/// The part `(start, end)` of a record's message `body` that recognizer `c` reads: all of it
/// up to [`RECORD_WINDOW`] bytes (and always for an `every_match` recognizer, whose matches run
/// along the line); else the [`RECORD_WINDOW`] bytes that begin [`WINDOW_BEFORE`] bytes before
/// its first anchor in the message (the message's head when none is there). Without it each of
/// the fifteen recognizers of `NCCL WARN` ran its regex (captures over a match as long as the
/// line), the NCCL tables' fifty-odd searches and its exclusions over the whole of a 60 KB
/// record: 3.4-20 MB/s on such lines.
fn window(c: &Compiled, body: &str) -> (usize, usize) {
    if body.len() <= RECORD_WINDOW || c.def.every_match {
        return (0, body.len());
    }
    let first = c
        .def
        .anchors
        .iter()
        .filter_map(|a| memchr::memmem::find(body.as_bytes(), a.as_bytes()))
        .min()
        .unwrap_or(0);
    let mut start = first.saturating_sub(WINDOW_BEFORE);
    while !body.is_char_boundary(start) {
        start -= 1;
    }
    let mut end = (start + RECORD_WINDOW).min(body.len());
    while !body.is_char_boundary(end) {
        end += 1;
    }
    (start, end)
}

/// All recognizers, with their anchors and the prefilter.
pub struct RecognizerSet {
    pub(super) compiled: Vec<Compiled>,
    /// Every anchor, searched in candidate records (see [`RecognizerSet::owners_in`]).
    pub(super) anchor_set: Needles,
    /// The smallest set of literals that covers every anchor (anchors that contain another
    /// anchor are dropped), searched in whole buffers to find candidate lines.
    pub prefilter: Prefilter,
    /// The prefilter's literals.
    pub prefilter_literals: Vec<String>,
    /// For each anchor, the recognizers that own it.
    pub(super) anchor_owners: Vec<Vec<usize>>,
    /// The anchor literals (each once, in recognizer order).
    pub anchors: Vec<String>,
    pub(super) xid_derived: BTreeMap<i64, Vec<String>>,
    /// How call traces name layers (the last `[trace]` table given wins).
    pub trace: TraceDef,
    /// The verbs table (`ibv_wc_status`, `ibv_event_type`); later entries win.
    pub ib_verbs: Vec<verbs::VerbsEntry>,
    /// The Windows NTSTATUS table (exit statuses); later entries win.
    pub ntstatus: Vec<ntstatus::NtStatus>,
    /// The CUDA error, library status, NCCL result and crash-library tables; later entries win.
    pub cuda: cuda::CudaTables,
    /// The NVML return-code table; later entries win.
    pub nvml: Vec<nvml::NvmlReturn>,
    /// The POSIX signal table (launchers' and shells' exits); later entries win.
    pub signals: Vec<signals::Signal>,
    /// The NVRM knowledge (built-in, or with the user's `[nvrm]` tables).
    pub(super) nvrm: NvrmKnowledge,
    /// Ids of the recognizers with the `nvrm` parser.
    pub(super) nvrm_ids: Vec<&'static str>,
    /// The search that finds where anchors may lie in a long record (see
    /// [`RecognizerSet::owners_in`]), built on first use.
    pub(super) cover: std::sync::OnceLock<Option<Cover>>,
    /// The anchors only benign recognizers own (the prefilter's literals cover the others).
    pub(super) benign_only: Vec<String>,
    /// Values that are details of a line, never keys: what the scan's memo masks.
    pub details: super::details::DetailValues,
    /// Whether a line's host can touch an anchor or a context word (see [`super::host_guard`]),
    /// built on first use (see [`RecognizerSet::host_guard`]).
    pub(super) host_guard: std::sync::OnceLock<super::host_guard::HostGuard>,
}

/// Words of a record that make the `cuda_error` parser read the lines around it.
pub(super) const CUDA_CONTEXT_WORDS: [&str; 3] = ["Test CUDA failure", "call to cu", "CUDA_ERROR_"];

/// The anchors that hold no other anchor, searched at SIMD speed: every anchor holds one of
/// them, so every anchor of a text lies near one of their hits.
pub(super) struct Cover {
    search: Prefilter,
    /// Bytes around a hit that an anchor holding it may reach: before it, and after its start.
    reach: (usize, usize),
}

impl Cover {
    /// The cover of `anchors` by `literals` (the prefilter's, which cover all but the anchors
    /// only benign recognizers own) and those anchors; the anchors themselves are kept for the
    /// reach.
    pub(super) fn new(
        literals: &[String],
        benign_only: &[String],
        anchors: &[String],
    ) -> Option<Cover> {
        // without the blanks around them (`    Upgrade `: a search for blanks stops at every
        // byte of a run of them)
        let mut all: Vec<String> = literals.to_vec();
        all.extend(benign_only.iter().map(|a| match a.trim() {
            t if t.len() >= 3 => t.to_string(),
            _ => a.clone(),
        }));
        all.sort_unstable();
        all.dedup();
        let longest = |v: &[String]| v.iter().map(String::len).max().unwrap_or(0);
        let reach = (longest(anchors), longest(&all) + longest(anchors));
        Some(Cover {
            search: Prefilter::new(&all, &[]).ok()?,
            reach,
        })
    }
}

/// The NVRM knowledge a set runs with.
pub(super) enum NvrmKnowledge {
    Builtin,
    User(Box<nvrm::Nvrm>),
}

/// The most drafts one `every_match` recognizer takes from one record.
pub const MAX_MATCHES_PER_RECORD: usize = 256;

/// The name a capture stands for: a regex cannot name two groups alike, so the alternatives of
/// one field in a recognizer's regex are numbered from 2 (`path`, `path2`, `path3`); each is
/// read as the field itself (`rank2` is the rank, `iteration2` the iteration).
fn alternative_of(name: &str) -> &str {
    match name.as_bytes() {
        [.., b, b'2'..=b'9'] if b.is_ascii_alphabetic() || *b == b'_' => &name[..name.len() - 1],
        _ => name,
    }
}

/// A draft from one regex match: named captures fill the draft's fields or its details.
fn draft_from(c: &Compiled, re: &Regex, caps: &regex::Captures<'_>) -> Draft {
    let def = &c.def;
    let mut d = Draft::new(&def.kind);
    d.origin = c.full;
    // the details made at once, one block: the fixed ones first, so that a capture of the same
    // name wins (they are added only when absent)
    let mut attrs: Vec<(&str, &str)> = def.details.iter().map(|(k, v)| (&**k, &**v)).collect();
    // each group by its index, with its name (a lookup by name hashed the name)
    let named = re.capture_names().zip(caps.iter());
    for (name, m) in named.filter_map(|(n, m)| Some((n?, m?))) {
        let v = m.as_str().trim();
        match alternative_of(name) {
            "gpu" => {
                d.gpu = Some(crate::ids::normalize_bdf(v).map_or_else(|| v.into(), Into::into))
            }
            "busid" => d.gpu = crate::ids::nccl_bus_id(v).map(Into::into),
            "code" => d.code = v.parse().ok(),
            "rank" => d.rank = v.parse().ok(),
            "host" => d.set_host(v),
            // a time written inside the message (`CANCELLED AT 2024-05-01T12:00:00`)
            "stamp" => {
                if let Some((ws, _)) = crate::formats::time::iso_datetime(v.as_bytes()) {
                    d.set_stamp(LineStamp {
                        wall: Some(ws),
                        mono_us: None,
                        tod_us: None,
                    });
                }
                attrs.push(("at", v));
            }
            field => attrs.push((field, v)),
        }
    }
    if d.code.is_none() {
        d.code = def.code;
    }
    d.attrs = attrs.into_iter().collect();
    d
}

impl RecognizerSet {
    /// Number of recognizers.
    pub fn len(&self) -> usize {
        self.compiled.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.compiled.is_empty()
    }

    /// True when recognizer `idx` reads the lines around the record `full` (its parser needs
    /// them: AER headers, torchrun reports, NVRM initialization failures).
    pub fn needs_context(&self, idx: usize, full: &str) -> bool {
        match self.compiled[idx].def.parser.as_deref() {
            Some("aer" | "torchrun_failure" | "cper" | "first_failed_process") => true,
            Some("nvrm") => self.nvrm().needs_context(full),
            // the text on the next line, or the announcing line above
            Some("cuda_error") => CUDA_CONTEXT_WORDS.iter().any(|l| full.contains(l)),
            _ => false,
        }
    }

    /// The NVRM knowledge the `nvrm` parser runs with.
    pub fn nvrm(&self) -> &nvrm::Nvrm {
        match &self.nvrm {
            NvrmKnowledge::Builtin => nvrm::Nvrm::builtin(),
            NvrmKnowledge::User(k) => k,
        }
    }

    /// Whether a line's host can touch an anchor or a context word (see [`super::host_guard`]):
    /// built when first asked (a run of short logs never pays for it).
    pub fn host_guard(&self) -> &super::host_guard::HostGuard {
        self.host_guard.get_or_init(|| {
            let terminal = self.nvrm().terminal_words();
            let words = self.anchors.iter().map(String::as_str);
            let context = CUDA_CONTEXT_WORDS.iter().copied();
            super::host_guard::HostGuard::new(
                words
                    .chain(context)
                    .chain(terminal.iter().map(String::as_str)),
            )
        })
    }

    /// Ids of the recognizers with the `nvrm` parser.
    pub fn nvrm_recognizers(&self) -> &[&'static str] {
        &self.nvrm_ids
    }

    /// Specific before generic, for the drafts of one record: an `nvrm` draft of the generic kind
    /// is dropped when another recognizer said something about the record (an event or an
    /// attachment), and an `nvrm` draft of a kind another recognizer already gave adds its
    /// details to that draft instead of standing alone.
    pub fn settle(&self, drafts: &mut Vec<Draft>) {
        if self.nvrm_ids.is_empty() || drafts.len() < 2 {
            return;
        }
        let is_nvrm = |d: &Draft| self.nvrm_ids.contains(&d.recognizer());
        if !drafts.iter().any(is_nvrm) || !drafts.iter().any(|d| !is_nvrm(d)) {
            return;
        }
        let mut i = 0;
        while i < drafts.len() {
            if !is_nvrm(&drafts[i]) {
                i += 1;
                continue;
            }
            if drafts[i].kind == nvrm::GENERIC_KIND {
                drafts.remove(i);
                continue;
            }
            let kind = drafts[i].kind;
            if let Some(j) = drafts
                .iter()
                .position(|d| !is_nvrm(d) && d.kind == kind && d.attach_to().is_none())
            {
                let d = drafts.remove(i);
                let target = if j > i { j - 1 } else { j };
                let t = &mut drafts[target];
                for (k, v) in &d.attrs {
                    t.attrs.insert_if_absent(k, v);
                }
                if t.gpu.is_none() {
                    t.gpu = d.gpu;
                }
                continue;
            }
            i += 1;
        }
    }

    /// How many lines after a record recognizer `idx` reads (a firmware error record spans many,
    /// with other lines between them).
    pub fn context_after(&self, idx: usize) -> usize {
        match self.compiled[idx].def.parser.as_deref() {
            Some("cper") => cper::MAX_RECORD_LINES,
            _ => 8,
        }
    }

    /// The recognizers owning anchor `p` (of [`RecognizerSet::anchors`]).
    pub fn owners(&self, p: usize) -> &[usize] {
        &self.anchor_owners[p]
    }

    /// The recognizers owning an anchor that `text` holds (anchors may overlap: "Killed" inside
    /// "Killed process"), sorted, each once.
    ///
    /// A text longer than [`LONG_TEXT`] is searched for anchors only around the hits of the
    /// anchors' cover ([`Cover`]: a SIMD search of the whole text), so that its cost per byte
    /// is that search's, not a step of the anchors' automaton per byte.
    pub fn owners_in(&self, text: &str) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        let mut add = |_, p: usize| {
            for &o in &self.anchor_owners[p] {
                if !out.contains(&o) {
                    out.push(o);
                }
            }
        };
        let b = text.as_bytes();
        let cover = || Cover::new(&self.prefilter_literals, &self.benign_only, &self.anchors);
        // built only when a long text comes: a run of short records never pays for it
        match (b.len() > LONG_TEXT).then(|| self.cover.get_or_init(cover)) {
            Some(Some(c)) => {
                let (before, after) = c.reach;
                let mut region: Option<(usize, usize)> = None;
                let mut hits = c.search.hits(b);
                hits.sort_unstable();
                for h in hits {
                    let (s, e) = (h.saturating_sub(before), (h + after).min(b.len()));
                    match &mut region {
                        Some((_, re)) if s <= *re => *re = e.max(*re),
                        _ => {
                            if let Some((rs, re)) = region.replace((s, e)) {
                                self.anchor_set.each(&b[rs..re], &mut add);
                            }
                        }
                    }
                }
                if let Some((rs, re)) = region {
                    self.anchor_set.each(&b[rs..re], &mut add);
                }
            }
            _ => self.anchor_set.each(b, &mut add),
        }
        out.sort_unstable();
        out
    }

    /// True when recognizer `idx` is a catch-all ([`RecognizerDef::generic`]).
    pub fn is_generic(&self, idx: usize) -> bool {
        self.compiled[idx].def.generic
    }

    /// True when the recognizer with this id is a catch-all.
    pub fn is_generic_id(&self, id: &str) -> bool {
        self.compiled
            .iter()
            .any(|c| c.def.id == id && c.def.generic)
    }

    /// The id of a benign recognizer whose anchor and regex match `text`, if any.
    pub fn benign_for(&self, text: &str) -> Option<&str> {
        self.compiled
            .iter()
            .filter(|c| c.def.benign.is_some())
            .find(|c| {
                c.def.anchors.iter().any(|a| text.contains(a.as_str()))
                    && c.regex
                        .as_ref()
                        .and_then(|r| r.for_text(text))
                        .is_some_and(|re| re.is_match(text))
            })
            .map(|c| c.def.id.as_str())
    }

    /// Runs every recognizer of `owners` on a record, the specific ones first; the generic ones
    /// only when no specific one gave an event or claimed the record as benign.
    pub fn apply_all(&self, owners: &[usize], rec: &Record<'_>, out: &mut Vec<Draft>) {
        self.run_all(owners, rec, out, false);
    }

    /// [`RecognizerSet::apply_all`] as the scan runs it, where a record keeps one event per
    /// kind (the first): a recognizer whose only draft would be a second event of a kind the
    /// record gave already is not run (on an NCCL WARN line of the IB family, the family's
    /// regex and its captures after the verbs parser: a fifth of the line's cost).
    pub fn apply_all_once(&self, owners: &[usize], rec: &Record<'_>, out: &mut Vec<Draft>) {
        self.run_all(owners, rec, out, true);
    }

    fn run_all(&self, owners: &[usize], rec: &Record<'_>, out: &mut Vec<Draft>, once: bool) {
        let mut claimed = false;
        for &o in owners.iter().filter(|&&o| !self.is_generic(o)) {
            if !(once && self.given(o, out)) {
                claimed |= self.apply(o, rec, out);
            }
        }
        if claimed || out.iter().any(|d| d.attach_to().is_none()) {
            return;
        }
        for &o in owners.iter().filter(|&&o| self.is_generic(o)) {
            self.apply(o, rec, out);
        }
    }

    /// True when recognizer `idx` gives at most one event of its kind and `out` holds one of
    /// that kind already, which the record's settling keeps before it: the first event of a
    /// kind, not an attachment, no segment, not an `nvrm` draft (settling may merge those).
    fn given(&self, idx: usize, out: &[Draft]) -> bool {
        let c = &self.compiled[idx];
        c.single
            && out.iter().any(|d| {
                d.kind == c.def.kind
                    && d.attach_to().is_none()
                    && !d.attrs.contains_key("segment")
                    && !self.nvrm_ids.contains(&d.recognizer())
            })
    }

    /// Runs recognizer `idx` on a record; returns whether it claimed the record as benign.
    pub fn apply(&self, idx: usize, rec: &Record<'_>, out: &mut Vec<Draft>) -> bool {
        let c = &self.compiled[idx];
        let def = &c.def;
        if !def.anchors.iter().any(|a| rec.full.contains(a.as_str())) {
            return false;
        }
        // a long message is read through a window around the recognizer's anchor: its regex is
        // given the message up to the window's end and starts at the window's start (so that
        // `^` and `\b` see the text before it), its exclusions, parsers and tables the window
        let (ws, we) = window(c, rec.body);
        let seen = &rec.body.as_bytes()[ws..we];
        if c.exclude().iter().any(|x| x.find(seen).is_some()) {
            return false;
        }
        READ.with(|r| r.set(r.get() + (we - ws) as u64));
        let (upto, windowed);
        let rec = if (ws, we) == (0, rec.body.len()) {
            upto = rec.body;
            rec
        } else {
            upto = &rec.body[..we];
            windowed = Record {
                body: &rec.body[ws..we],
                ..*rec
            };
            &windowed
        };
        if def.benign.is_some() {
            return c
                .regex
                .as_ref()
                .and_then(|r| r.for_text(rec.body))
                .is_some_and(|re| re.is_match_at(upto, ws));
        }
        let start = out.len();
        match def.parser.as_deref() {
            Some("xid") => {
                xid::xid_drafts(rec.body, &self.xid_derived, out);
            }
            Some("sxid") => {
                xid::sxid_drafts(rec.body, out);
            }
            Some("aer") => {
                aer::aer_drafts(rec, out);
            }
            Some("torchrun_failure") => {
                job::torchrun_failure(rec, out);
            }
            Some("first_failed_process") => {
                job::first_failed_process(rec, out);
            }
            Some("nccl_ib" | "ib_verbs") => {
                verbs::ib_drafts(rec, &self.ib_verbs, out);
            }
            Some("cper") => {
                cper::cper_drafts(rec, out);
            }
            Some("nvrm") => {
                nvrm::nvrm_drafts(self.nvrm(), rec, out);
            }
            Some("cuda_error") => {
                cuda::cuda_drafts(&self.cuda, rec, out);
            }
            Some("fabric_manager") => {
                fabric::fm_drafts(rec, out);
            }
            _ => regex_drafts(c, (upto, ws), out),
        }
        let mut i = start;
        while i < out.len() {
            if nvml::annotate(&self.nvml, &mut out[i]) {
                i += 1;
            } else {
                out.remove(i);
            }
        }
        for d in &mut out[start..] {
            if !std::ptr::eq(d.origin, c.full) {
                d.origin = c.bare;
            }
            if d.rank.is_none() {
                d.rank = rec.rank;
            }
            ntstatus::annotate(&self.ntstatus, d);
            signals::annotate(&self.signals, d);
            if !d.derived {
                if d.layer.is_none() {
                    d.layer = def.layer;
                }
                if d.severity.is_none() {
                    d.severity = def.severity;
                }
            }
            // after the recognizer's own layer, which stands over the tables' readings
            cuda::nccl::annotate(&self.cuda, d, rec.body);
            cuda::annotate_crash(&self.cuda, d);
        }
        false
    }
}

/// The drafts of a recognizer defined by its regex: one per match with `every_match` (at most
/// [`MAX_MATCHES_PER_RECORD`], spread evenly, the last one always kept, each with its segment
/// and matched text), else one of the first match. `body` is searched from `from` on (the
/// start of the recognizer's window, see [`window`]).
fn regex_drafts(c: &Compiled, (body, from): (&str, usize), out: &mut Vec<Draft>) {
    let Some(re) = c.regex.as_ref().and_then(|r| r.for_text(&body[from..])) else {
        return;
    };
    if c.def.every_match {
        let all: Vec<regex::Captures<'_>> = re.captures_iter(body).collect();
        let n = all.len();
        let keep = n.min(MAX_MATCHES_PER_RECORD);
        for k in 0..keep {
            // spread evenly, always keeping the last match
            let i = if keep == n { k } else { (k + 1) * n / keep - 1 };
            let mut d = draft_from(c, re, &all[i]);
            d.attrs.insert("segment", i.to_string());
            if let Some(m) = all[i].get(0) {
                d.attrs.insert("text", m.as_str().trim().to_string());
            }
            out.push(d);
        }
    } else if let Some(caps) = re.captures_at(body, from) {
        out.push(draft_from(c, re, &caps));
    }
}

#[cfg(test)]
mod tests {
    /// The numbered alternatives of a field are read as the field; other names are left alone.
    #[test]
    fn numbered_alternatives_are_their_field() {
        for (name, field) in [
            ("path2", "path"),
            ("path5", "path"),
            ("rank2", "rank"),
            ("tokens_per_s2", "tokens_per_s"),
            ("rank", "rank"),
            ("x", "x"),
            ("2", "2"),
            ("path1", "path1"),
            ("path10", "path10"),
        ] {
            assert_eq!(super::alternative_of(name), field, "{name}");
        }
    }
}
