//! The timeline stage: settle every event's year, zone and clock (aligning kernel uptime to wall
//! time with anchors found in the inputs), fill hosts and GPU identities, drop duplicates seen
//! through two routes, and order everything.

use crate::model::{Attrs, Body, Layer, RawEvent, Severity, SourceRef, TimeQuality};
use crate::pipeline::InputResult;
use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;

mod assemble;
mod clock;
mod daytime;
mod dedupe;
pub mod filter;
mod order;
mod zone;

pub use zone::Zone;

/// Options that change how times are read.
#[derive(Clone, Debug, Default)]
pub struct TimeOptions {
    /// Year for stamps that carry none.
    pub year: Option<i32>,
    /// UTC offset (seconds) for stamps that carry no zone.
    pub tz_offset: Option<i32>,
    /// A zone for stamps that carry none (`--tz`), over `tz_offset`: a named zone gives each
    /// stamp the offset in force at its local time.
    pub zone: Option<Zone>,
    /// The day (its midnight, seconds since the epoch of the date read as UTC) that the first
    /// time of day of an input with no dated line falls on (`--date`).
    pub date: Option<i64>,
    /// The moment of the analysis (an upper bound for inferred years); seconds since the epoch.
    pub now: i64,
}

/// An event on the final timeline.
#[derive(Clone, Debug)]
pub struct Event {
    /// 1, 2, … in timeline order (written `e1`, `e2`, …: see [`Event::id_text`]).
    pub id: u32,
    /// UTC microseconds since the epoch.
    pub time_us: Option<i64>,
    /// How far the time can be trusted.
    pub quality: TimeQuality,
    /// Kernel uptime in microseconds, when known.
    pub uptime_us: Option<u64>,
    /// Host (short name): one text shared by the events of a host.
    pub host: Option<Arc<str>>,
    /// Evidence location.
    pub source: SourceRef,
    /// Input index.
    pub input: usize,
    /// Boot segment within the input.
    pub boot: u32,
    /// Kind (interned, see [`RawEvent::kind`]).
    pub kind: &'static str,
    /// Code.
    pub code: Option<i64>,
    /// GPU bus id (or index/UUID): one text shared by the events of a GPU.
    pub gpu: Option<Arc<str>>,
    /// Rank.
    pub rank: Option<i64>,
    /// Layer on its own.
    pub layer: Layer,
    /// Severity on its own.
    pub severity: Severity,
    /// Verbatim record: one text shared by the events of one record.
    pub message: Arc<str>,
    /// Message after the prefix (see [`Event::body`]).
    pub body: Body,
    /// Details.
    pub attrs: Attrs,
    /// What few events have: the GPU's UUID, other places the same event was seen (one word
    /// when there is none of it, as for nearly every event; see [`Event::gpu_uuid`],
    /// [`Event::also_seen`]).
    pub rare: Option<Box<Rare>>,
    /// Seen by the server's management controller (its times are on the BMC's clock).
    pub bmc: bool,
    /// Further occurrences past the events cap that this event stands for (counted, not kept).
    pub suppressed: u64,
}

/// The parts of an [`Event`] that few events have.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rare {
    /// GPU UUID when known: one text shared by the events of a GPU.
    pub gpu_uuid: Option<Arc<str>>,
    /// The same event seen in other places.
    pub also_seen: Vec<SourceRef>,
    /// For an event whose line printed only a time of day that nothing dated: that time, in
    /// microseconds since midnight of the day its file's first time of day falls on (a file
    /// that passes midnight counts on past a day).
    pub time_of_day_us: Option<u64>,
}

impl Event {
    /// GPU UUID when known.
    pub fn gpu_uuid(&self) -> Option<&str> {
        self.rare.as_ref()?.gpu_uuid.as_deref()
    }

    /// The same event seen in other places.
    pub fn also_seen(&self) -> &[SourceRef] {
        self.rare.as_ref().map_or(&[], |r| &r.also_seen)
    }

    /// The time of day of an event whose line printed only that and nothing dated it
    /// (microseconds since midnight of its file's first day: see [`Rare::time_of_day_us`]).
    pub fn time_of_day_us(&self) -> Option<u64> {
        self.rare.as_ref()?.time_of_day_us
    }

    /// The rare parts, made when first needed.
    pub fn rare_mut(&mut self) -> &mut Rare {
        self.rare.get_or_insert_with(Default::default)
    }

    /// The message part after the line prefix (empty once the message was taken for a report).
    pub fn body(&self) -> &str {
        self.body.text(&self.message)
    }

    /// The event's id as reports write it: `e17`.
    pub fn id_text(&self) -> String {
        numbered(b'e', u64::from(self.id))
    }

    /// How many occurrences this event stands for: itself and those past the cap.
    pub fn weight(&self) -> u64 {
        1 + self.suppressed
    }
}

/// Result of the timeline stage.
pub struct Timeline {
    /// Ordered events.
    pub events: Vec<Event>,
    /// Per-host notes on clock alignment.
    pub notes: Vec<String>,
    /// BDF → UUID/serial per host.
    pub identities: BTreeMap<(String, String), (Option<String>, Option<String>)>,
    /// Trainer progress samples (kind `progress`), timed like events but kept off the timeline:
    /// the throughput stage builds its series from them.
    pub progress: Vec<Event>,
}

/// A host's short name: the first label of a fully qualified name (NCCL prints only that), IP
/// addresses as they are.
pub fn short_host(h: &str) -> String {
    short_host_str(h).to_string()
}

/// [`short_host`], borrowed.
fn short_host_str(h: &str) -> &str {
    let is_ip = h.bytes().all(|c| c.is_ascii_digit() || c == b'.') || h.contains(':');
    if is_ip {
        h
    } else {
        h.split('.').next().unwrap_or(h)
    }
}

/// Builds the timeline from all inputs.
pub fn build(results: &mut [InputResult], opts: &TimeOptions) -> Timeline {
    let mut notes = Vec::new();
    clock::boot_segments(results);
    daytime::date_times_of_day(results, opts, &mut notes);
    let mut pend = clock::wall_times(results, opts, &mut notes);
    clock::warn_backwards(results, &pend);
    clock::align_uptimes(results, &mut pend, &mut notes);
    let identities = assemble::identities(results);
    let events = assemble::assemble(results, pend, &identities);
    if events.len() >= crate::pipeline::LARGE_LIST {
        crate::alloc::give_back();
    }
    // split only when there is progress to split off (no second copy of a long timeline)
    let (progress, events): (Vec<Event>, Vec<Event>) =
        if events.iter().any(|e| e.kind == "progress") {
            events.into_iter().partition(|e| e.kind == "progress")
        } else {
            (Vec::new(), events)
        };
    // a bug report holds the kernel log twice (dmesg and syslog sections): one input, two routes
    let bundles: BTreeSet<usize> = results
        .iter()
        .filter(|r| r.format == crate::formats::Format::BugReport)
        .map(|r| r.index)
        .collect();
    let events = finish(dedupe::process_routes(dedupe::bmc_routes(dedupe::dedupe(
        events, &bundles,
    ))));
    Timeline {
        events,
        notes,
        identities,
        progress,
    }
}

/// Orders events (see [`order::order`]) and numbers them 1, 2, … (`e1`, `e2`, …) in that order.
pub fn finish(events: Vec<Event>) -> Vec<Event> {
    let mut events = order::order(events);
    for (i, e) in events.iter_mut().enumerate() {
        e.id = u32::try_from(i + 1).unwrap_or(u32::MAX);
    }
    events
}

/// `e17`: a prefix and a number, written without the formatting machinery (one per event).
pub(crate) fn numbered(prefix: u8, n: u64) -> String {
    let mut buf = [0u8; NUMBERED];
    numbered_into(prefix, n, &mut buf).to_string()
}

/// Bytes [`numbered_into`] needs: an ASCII prefix and up to 20 digits.
pub(crate) const NUMBERED: usize = 21;

/// `e17`: an ASCII prefix and a number, written at the end of `buf` (no allocation).
pub(crate) fn numbered_into(prefix: u8, n: u64, buf: &mut [u8; NUMBERED]) -> &str {
    let (mut k, mut n) = (buf.len(), n);
    loop {
        k -= 1;
        buf[k] = b'0' + (n % 10) as u8;
        n /= 10;
        if n == 0 {
            break;
        }
    }
    k -= 1;
    buf[k] = prefix;
    std::str::from_utf8(&buf[k..]).unwrap_or("")
}

/// How many lines after its timeout a watchdog progress line may come to be merged into it.
const PROGRESS_LINES: u64 = 50;

/// How many lines before its timeout a progress line may come (newer torch prints `Timeout at
/// NCCL work` just before `Some NCCL operations have failed or timed out`).
const PROGRESS_LINES_BEFORE: u64 = 3;

/// Whether a watchdog progress line `a` belongs to a timeout on `line` with `rank`.
fn progress_of(a: &RawEvent, line: u64, rank: Option<i64>) -> bool {
    line + PROGRESS_LINES >= a.line
        && line <= a.line + PROGRESS_LINES_BEFORE
        && (a.rank.is_none() || rank == a.rank)
}

/// Watchdog progress lines with no timeout of their own rank before them (`Timeout at NCCL
/// work: 15734, last enqueued ...` printed alone when the watchdog line itself is not in the
/// excerpt, or a version prints no other) are the rank's timeout: they leave `attachments` and
/// join `events` as `nccl_timeout` events, with the progress as details.
pub(crate) fn orphan_progress(
    events: &mut Vec<RawEvent>,
    attachments: &mut Vec<RawEvent>,
    catalog: &crate::catalog::Catalog,
) {
    // `events` is in line order: only the few lines before each progress line are looked at
    let orphan = |a: &RawEvent| {
        let from = events.partition_point(|e| e.line + PROGRESS_LINES < a.line);
        a.kind == "nccl_progress"
            && !events[from..]
                .iter()
                .take_while(|e| e.line <= a.line + PROGRESS_LINES_BEFORE)
                .any(|e| e.kind == "nccl_timeout" && progress_of(a, e.line, e.rank))
    };
    if !attachments.iter().any(orphan) {
        return;
    }
    let (orphans, kept): (Vec<RawEvent>, Vec<RawEvent>) =
        std::mem::take(attachments).into_iter().partition(orphan);
    *attachments = kept;
    for mut a in orphans {
        a.kind = crate::events::intern("nccl_timeout");
        (a.layer, a.severity) = catalog.classify(a.kind, None);
        a.attrs.insert_if_absent("via", "watchdog_progress");
        events.push(a);
    }
    events.sort_by_key(|e| e.line);
}

/// Merges watchdog progress lines into the nearest earlier timeout of the same input and rank
/// (else the one just after), and NCCL's return trace into the NCCL error above it
/// ([`merge_return`]).
fn merge_attachments(events: &mut [Event], input: usize, attachments: &[RawEvent]) {
    merge_return(events, input, attachments);
    for a in attachments.iter().filter(|a| a.kind == "nccl_progress") {
        let fits = |e: &Event| {
            e.input == input && e.kind == "nccl_timeout" && progress_of(a, e.source.line, e.rank)
        };
        let at = events
            .iter()
            .rposition(|e| fits(e) && e.source.line <= a.line)
            .or_else(|| events.iter().position(fits));
        let target = at.map(|i| &mut events[i]);
        if let Some(t) = target {
            for (k, v) in &a.attrs {
                t.attrs.insert_if_absent(k, v);
            }
        }
    }
}

/// NCCL's return trace (`NCCL INFO init.cc:840 -> 5`) read into the nearest NCCL error above it
/// (same input and rank, at most 20 lines up) that has no result yet: the result, and its layer
/// when no family of the error reads it already (see [`crate::events::cuda::nccl`]).
fn merge_return(events: &mut [Event], input: usize, attachments: &[RawEvent]) {
    use crate::events::cuda::nccl;
    for a in attachments.iter().filter(|a| a.kind == nccl::RETURN_KIND) {
        let target = events.iter_mut().rfind(|e| {
            e.input == input
                && e.kind == "nccl_error"
                && e.source.line <= a.line
                && a.line - e.source.line <= 20
                && (a.rank.is_none() || e.rank == a.rank)
        });
        let Some(t) = target else { continue };
        if t.attrs.contains_key("nccl_result") {
            continue;
        }
        if nccl::takes_traced_result(t.attrs.get("family"), false) {
            if let Some(l) = a.attrs.get("result_layer").and_then(Layer::parse) {
                t.layer = l;
            }
            for k in ["reading", "candidates"] {
                if let Some(v) = a.attrs.get(k) {
                    t.attrs.insert_str(k, v);
                }
            }
        }
        for k in ["nccl_result", "nccl_code"] {
            if let Some(v) = a.attrs.get(k) {
                t.attrs.insert_str(k, v);
            }
        }
    }
}
