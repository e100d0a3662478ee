//! Per-input processing: open the input (its bytes whole, or a stream of blocks), pick the
//! reader of its format once ([`crate::read`]), then the steps every input shares: warnings about
//! what the scan met, classification of every draft with the catalog, the events cap, the host.

use crate::catalog::Catalog;
use crate::events::RecognizerSet;
use crate::formats::{self, bug_report, Format};
use crate::input::Input;
use crate::model::RawEvent;
use crate::read::{self, Parsed, Reader};
use crate::scan::{self, Located, ScanOutput};
use crate::words::counted;
use std::collections::BTreeMap;

pub use crate::read::GpuRecord;

/// Everything one input contributed.
pub struct InputResult {
    /// Index in the analysis.
    pub index: usize,
    /// Path as shown.
    pub path: String,
    /// Detected format.
    pub format: Format,
    /// Host of the input (hint, bundle or most common line host).
    pub host: Option<String>,
    /// Bytes read (decompressed size for containers).
    pub bytes: u64,
    /// Lines counted.
    pub lines: u64,
    /// Lines understood.
    pub lines_recognized: u64,
    /// Warnings.
    pub warnings: Vec<String>,
    /// Events.
    pub events: Vec<RawEvent>,
    /// Attachments (rank maps, GPU identities, watchdog progress).
    pub attachments: Vec<RawEvent>,
    /// Lines where a boot starts.
    pub boot_lines: Vec<u64>,
    /// File modification time.
    pub mtime: Option<i64>,
    /// Bug report metadata.
    pub bundle: Option<bug_report::BundleInfo>,
    /// Driver version from an nvidia-smi dump.
    pub smi_driver: Option<String>,
    /// CUDA version from an nvidia-smi dump.
    pub smi_cuda: Option<String>,
    /// GPUs described by nvidia-smi dumps.
    pub gpus: Vec<GpuRecord>,
    /// The GPU/NIC matrix of `nvidia-smi topo -m`.
    pub topology: Option<formats::topo::Topology>,
}

/// Classifies located drafts with the catalog into raw events of input `index`, in the list's
/// own memory: the list is first cut to its length (the scan's merges leave it up to twice as
/// long), then the raw events are written over it and the rest given back (both are a
/// reallocation of a large block in place, not a copy).
fn classify(index: usize, mut list: Vec<Located>, catalog: &Catalog) -> Vec<RawEvent> {
    list.shrink_to_fit();
    let mut gpus = Shared::default();
    let mut raw: Vec<RawEvent> = list
        .into_iter()
        .map(|l| to_raw(index, l, catalog, &mut gpus))
        .collect();
    raw.shrink_to_fit();
    raw
}

/// One shared text per distinct GPU id of an input (its events name a few GPUs many times).
#[derive(Default)]
struct Shared {
    last: Option<std::sync::Arc<str>>,
    made: crate::scan::FastMap<std::sync::Arc<str>, ()>,
}

impl Shared {
    fn get(&mut self, s: std::sync::Arc<str>) -> std::sync::Arc<str> {
        if let Some(l) = self.last.as_ref().filter(|l| **l == s) {
            return l.clone();
        }
        let a = match self.made.get_key_value(&*s) {
            Some((a, _)) => a.clone(),
            None => {
                self.made.insert(s.clone(), ());
                s
            }
        };
        self.last = Some(a.clone());
        a
    }
}

fn to_raw(index: usize, loc: Located, catalog: &Catalog, gpus: &mut Shared) -> RawEvent {
    let d = loc.draft;
    let (layer, severity) = match d.code_table() {
        Some(table @ ("xid" | "sxid")) if d.code.is_some() => catalog.classify(table, d.code),
        _ => catalog.classify(d.kind, d.code),
    };
    RawEvent {
        input: index,
        line: loc.line,
        layer: d.layer.unwrap_or(layer),
        severity: d.severity.unwrap_or(severity),
        kind: d.kind,
        code: d.code,
        gpu: d.gpu.map(|g| gpus.get(g)),
        rank: d.rank,
        host: loc.host,
        body: loc.body,
        message: loc.message,
        stamp: loc.stamp,
        borrowed_time: loc.borrowed,
        boot: 0,
        recognizer: d.origin.recognizer,
        attrs: d.attrs,
        bmc: d.origin.bmc,
        suppressed: loc.suppressed,
    }
}

/// The events cap's key of a raw event ([`scan::CapKey`] with the kind borrowed from it).
type RawKey<'a> = (
    Option<&'a str>,
    &'a str,
    Option<i64>,
    Option<&'a str>,
    Option<i64>,
);

impl scan::Capped for RawEvent {
    type Key<'a> = RawKey<'a>;
    fn cap_key(&self) -> Option<RawKey<'_>> {
        // progress samples are thinned by the scanner, never capped: a slowdown needs the series
        (self.kind != "progress").then_some((
            self.host.as_deref(),
            self.kind,
            self.code,
            self.gpu.as_deref(),
            self.rank,
        ))
    }
    fn weight(&mut self) -> &mut u64 {
        &mut self.suppressed
    }
    fn cap_kind(&self) -> Option<&'static str> {
        (self.kind != "progress").then_some(self.kind)
    }
}

/// Applies the events cap to an input's events and says in a warning what it counted but did not
/// keep (the keys with the most suppressed occurrences first); `capped`: the events are known to
/// be within the cap already.
fn cap_events(events: &mut Vec<RawEvent>, (cap, capped): (u64, bool), warnings: &mut Vec<String>) {
    if !capped {
        scan::cap_capped(events, cap);
    }
    let total: u64 = events.iter().map(|e| e.suppressed).sum();
    if total == 0 {
        return;
    }
    let mut per: BTreeMap<String, u64> = BTreeMap::new();
    for e in events.iter().filter(|e| e.suppressed > 0) {
        let what = format!(
            "{}{}{}",
            e.kind,
            e.code.map(|c| format!(" {c}")).unwrap_or_default(),
            e.gpu
                .as_ref()
                .map(|g| format!(" on {g}"))
                .unwrap_or_default()
        );
        *per.entry(what).or_default() += e.suppressed;
    }
    let mut top: Vec<(String, u64)> = per.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let list: Vec<String> = top
        .iter()
        .take(5)
        .map(|(w, n)| format!("{w} +{n}"))
        .collect();
    let more = if top.len() > 5 {
        format!(", and {} more", top.len() - 5)
    } else {
        String::new()
    };
    let shared = over_kind_total(events, cap);
    let shared = if shared.is_empty() {
        String::new()
    } else {
        format!(
            "; {} kept at most {} events over all hosts and GPUs, a few per key",
            shared.join(", "),
            scan::kind_total(cap)
        )
    };
    warnings.push(format!(
        "{} past the cap of {cap} per kind per GPU were counted but not kept ({}{more}); counts stay exact{shared}",
        counted(total, "event"),
        list.join(", ")
    ));
}

/// The kinds whose keys' occurrences, each up to `cap`, add up to more than a kind keeps in all
/// ([`scan::kind_total`]): the kinds whose keys shared that budget (sorted).
fn over_kind_total(events: &[RawEvent], cap: u64) -> Vec<&'static str> {
    use scan::Capped;
    let mut per_key: scan::FastMap<_, (u64, &'static str)> = scan::FastMap::default();
    for e in events {
        if let Some(k) = e.cap_key() {
            per_key.entry(k).or_insert((0, e.kind)).0 += 1 + e.suppressed;
        }
    }
    let mut per_kind: BTreeMap<&'static str, u64> = BTreeMap::new();
    for (n, kind) in per_key.into_values() {
        *per_kind.entry(kind).or_default() += n.min(cap);
    }
    let total = scan::kind_total(cap);
    per_kind
        .into_iter()
        .filter(|&(_, n)| n > total)
        .map(|(k, _)| k)
        .collect()
}

/// Processes one input; at most `cap` events per host, kind, code, GPU and rank are kept (the
/// others are counted in the `suppressed` field of the last one kept, and a warning says so).
pub fn process(
    index: usize,
    mut input: Input,
    set: &RecognizerSet,
    catalog: &Catalog,
    parallel: bool,
    cap: u64,
) -> InputResult {
    let mut warnings = std::mem::take(&mut input.warnings);
    let (mut body, mut format) = read::open(&mut input, &mut warnings);
    if matches!(&body, read::Body::Whole(b) if crate::collect::manifest::looks_like(b)) {
        // JSON, but no journal: the kernel-input checks must not count it
        format = Format::Unknown;
    }
    let ctx = read::Ctx {
        index,
        set,
        catalog,
        parallel,
        cap,
    };
    let parsed = Reader::pick(format, &body).read(&mut body, &ctx, &mut warnings);
    scan_warnings(&parsed.out, &mut warnings);
    if body.shrunk() {
        warnings.push(format!(
            "file shrank while being read: it was {} bytes when mapped; the part past its new end read as NUL bytes, the part before is analyzed",
            parsed.bytes
        ));
    }
    release(body);
    settle(index, input, format, parsed, warnings, catalog, cap)
}

/// Lets go of an input's bytes once it is read. A large map is unmapped on a thread of its own,
/// while the analysis goes on: tearing down the page tables of a few hundred MB takes the kernel
/// some 20 ms, which would otherwise be serial time after a parallel scan.
fn release(body: read::Body) {
    const LARGE: usize = 32 << 20;
    if matches!(&body, read::Body::Whole(b) if b.len() >= LARGE) {
        // if no thread can be started, the closure (and the body with it) is dropped here
        let _ = std::thread::Builder::new()
            .name("unmap".into())
            .spawn(move || drop(body));
    }
}

/// Past this many events, the memory a stage freed is given back to the system after it.
pub(crate) const LARGE_LIST: usize = 1 << 16;

/// The steps after reading that every input shares: classification, the events cap, the host.
fn settle(
    index: usize,
    input: Input,
    format: Format,
    p: Parsed,
    mut warnings: Vec<String>,
    catalog: &Catalog,
    cap: u64,
) -> InputResult {
    let format = refine_format(format, &p.out);
    // the scan's own cap already holds for its events: nothing to count again
    let capped = p.extra.is_empty() && p.out.events_within_cap(cap);
    let mut events = classify(index, p.out.events, catalog);
    events.extend(p.extra);
    // nearly always in line order already (the sort's scratch would be half the list)
    if !events.is_sorted_by_key(|e| e.line) {
        events.sort_by_key(|e| e.line);
    }
    cap_events(&mut events, (cap, capped), &mut warnings);
    if events.len() >= LARGE_LIST {
        crate::alloc::give_back();
    }
    let mut attachments = classify(index, p.out.attachments, catalog);
    crate::timeline::orphan_progress(&mut events, &mut attachments, catalog);
    let host = input
        .host_hint
        .clone()
        .or_else(|| {
            p.bundle
                .as_ref()
                .and_then(|b: &bug_report::BundleInfo| b.host.clone())
        })
        .or_else(|| most_common_host(&events));
    InputResult {
        index,
        path: input.path,
        format,
        host,
        bytes: p.bytes,
        lines: p.out.lines,
        lines_recognized: p.out.recognized.min(p.out.lines),
        warnings,
        events,
        attachments,
        boot_lines: p.out.boot_lines,
        mtime: input.mtime,
        bundle: p.bundle,
        smi_driver: p.smi_driver,
        smi_cuda: p.smi_cuda,
        gpus: p.gpus,
        topology: p.topology,
    }
}

/// A file of other text that still carries job lines is a trainer log.
fn refine_format(format: Format, out: &ScanOutput) -> Format {
    let job = out.events.iter().any(|e| {
        matches!(
            e.draft.kind,
            "nccl_timeout" | "nccl_error" | "cuda_oom" | "process_exit" | "cuda_error"
        )
    });
    if format == Format::Unknown && job {
        Format::Trainer
    } else {
        format
    }
}

/// Says what the scan met in lines too long for recognizers.
fn scan_warnings(out: &ScanOutput, warnings: &mut Vec<String>) {
    if out.long_lines > 0 {
        warnings.push(format!(
            "{} longer than {} bytes: cut for recognizers, still searched for anchors",
            counted(out.long_lines, "line"),
            scan::MAX_RECORD_BYTES
        ));
    }
    lost_anchor_warning(out, warnings);
    let folded = out.folded_kinds();
    if !folded.is_empty() {
        warnings.push(format!(
            "more than {} distinct host/code/GPU/rank keys of {} {}: the events of the keys past a sample of {} (chosen by hash, the same on every run) were counted together, their first and last kept; counts stay exact",
            scan::SAMPLED_KEYS,
            if folded.len() == 1 { "kind" } else { "kinds" },
            folded.join(", "),
            scan::SAMPLED_KEYS
        ));
    }
}

/// Says how many anchors in long lines recognizers could not read (their events may be lost).
fn lost_anchor_warning(out: &ScanOutput, warnings: &mut Vec<String>) {
    if out.lost_anchors > 0 {
        warnings.push(format!(
            "{} inside lines longer than {} bytes lay past the parts recognizers read (the line's head and the window around its last anchor): their events, if any, are lost",
            counted(out.lost_anchors, "anchor"),
            scan::MAX_RECORD_BYTES
        ));
    }
}

fn most_common_host(events: &[RawEvent]) -> Option<String> {
    // one host is the most common (the tie is broken by name): a hash map counts as well
    let mut counts: crate::scan::FastMap<&str, usize> = Default::default();
    for e in events {
        if let Some(h) = &e.host {
            *counts.entry(h).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|(h, c)| (*c, std::cmp::Reverse(*h)))
        .map(|(h, _)| h.to_string())
}
