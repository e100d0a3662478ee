//! The v1 JSON report (`faultline/report/v1`), field for field as in CONTRACT.md, plus optional
//! extras (`details`, `uptime_s`, `also_seen`, `consequences`, `missing_data`).

use super::iso_us;
use crate::catalog::Catalog;
use crate::model::Attrs;
use crate::timeline::Event;
use crate::Analysis;
use serde::Serialize;

mod accounting;
mod build;
mod inventory;
mod known;
mod pretty;
mod view;
mod write;

use accounting::accounting;
pub use accounting::AccountingJson;
use build::build_rest;
pub use build::{build, build_taking};
use inventory::{gpus, hosts};
use std::collections::BTreeMap;
pub use write::{to_string, write, write_rewritten, write_taking};

/// Tool identity.
#[derive(Serialize, Clone, Debug)]
pub struct Tool {
    /// Always `faultline`.
    pub name: &'static str,
    /// Crate version.
    pub version: &'static str,
}

/// One input.
#[derive(Serialize, Clone, Debug)]
pub struct InputJson {
    /// Path as given, or `archive!member`.
    pub path: String,
    /// Detected format.
    pub format: &'static str,
    /// Host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Bytes read.
    pub bytes: u64,
    /// Lines.
    pub lines: u64,
    /// Lines understood.
    pub lines_recognized: u64,
    /// Events found: occurrences, those past the events cap included.
    pub events: u64,
    /// Of `events`, the occurrences past the events cap (counted, not kept in `events` of the
    /// report).
    #[serde(skip_serializing_if = "is_zero")]
    pub events_suppressed: u64,
    /// Lines no reader understood (`lines - lines_recognized`; they were still searched for
    /// anchors).
    pub lines_unrecognized: u64,
    /// Warnings.
    pub warnings: Vec<String>,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// Evidence location.
#[derive(Serialize, Clone, Debug)]
pub struct SourceJson {
    /// Path.
    pub path: String,
    /// 1-based line.
    pub line: u64,
}

/// One event.
#[derive(Serialize, Clone, Debug)]
pub struct EventJson {
    /// Id.
    pub id: String,
    /// UTC time or null.
    pub time: Option<String>,
    /// exact | aligned | estimated | none.
    pub time_quality: &'static str,
    /// Host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Evidence.
    pub source: SourceJson,
    /// Kind.
    pub kind: String,
    /// Code.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub code: Option<i64>,
    /// GPU.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
    /// GPU UUID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu_uuid: Option<String>,
    /// Rank.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rank: Option<i64>,
    /// Layer.
    pub layer: &'static str,
    /// Severity.
    pub severity: &'static str,
    /// Short meaning.
    pub title: String,
    /// Verbatim line(s).
    pub message: String,
    /// Kernel uptime in seconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uptime_s: Option<f64>,
    /// For an event whose line printed only a time of day that nothing dated (`time` is
    /// null): that time, `15:58:29` or `15:58:29.123456`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub time_of_day: Option<String>,
    /// With `time_of_day`: the day it falls on, counted from the day of its file's first time
    /// of day (written when past that day: the file's clock passed midnight).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub day_in_file: Option<u64>,
    /// Details.
    #[serde(skip_serializing_if = "Attrs::is_empty")]
    pub details: Attrs,
    /// Other places the same event was seen.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub also_seen: Vec<SourceJson>,
    /// Further occurrences (same input, host, kind, code, GPU and rank) past the events cap that
    /// this event stands for: counted, not listed.
    #[serde(skip_serializing_if = "is_zero")]
    pub suppressed: u64,
}

/// Root cause of an incident.
#[derive(Serialize, Clone, Debug)]
pub struct RootCauseJson {
    /// Layer.
    pub layer: &'static str,
    /// Confidence 0..1.
    pub confidence: f64,
    /// Summary.
    pub summary: String,
    /// Evidence event ids.
    pub evidence: Vec<String>,
    /// vendor | operator | user.
    pub responsibility: String,
    /// Rule id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rule: Option<String>,
}

/// A runner-up.
#[derive(Serialize, Clone, Debug)]
pub struct AlternativeJson {
    /// Layer.
    pub layer: &'static str,
    /// Confidence.
    pub confidence: f64,
    /// Why.
    pub summary: String,
}

/// An event's id in a report: a number, written `e17` only when serialized or shown, so that
/// the member lists of a large incident hold no text.
///
/// ```
/// use faultline::report::json::EventId;
/// let id = EventId(17);
/// assert_eq!(id.to_string(), "e17");
/// assert!(id.is("e17") && !id.is("e170"));
/// assert_eq!(EventId::parse("e17"), Some(id));
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct EventId(pub u32);

impl EventId {
    /// The id of the event written `text` (`e17`), if it is one.
    pub fn parse(text: &str) -> Option<EventId> {
        let digits = text.strip_prefix('e')?;
        let n: u32 = digits.parse().ok()?;
        // one spelling per id: no sign, no leading zero
        (digits.bytes().all(|c| c.is_ascii_digit()) && (n == 0 || !digits.starts_with('0')))
            .then_some(EventId(n))
    }

    /// Whether `text` is this id as written.
    pub fn is(&self, text: &str) -> bool {
        self.with_text(|t| t == text)
    }

    /// `f` of the id as written (`e17`), made on the stack: a lookup by text allocates nothing.
    pub fn with_text<R>(&self, f: impl FnOnce(&str) -> R) -> R {
        let mut buf = [0u8; crate::timeline::NUMBERED];
        f(crate::timeline::numbered_into(
            b'e',
            u64::from(self.0),
            &mut buf,
        ))
    }
}

impl std::fmt::Display for EventId {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        self.with_text(|t| f.write_str(t))
    }
}

impl Serialize for EventId {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.with_text(|t| s.serialize_str(t))
    }
}

/// One incident.
#[derive(Serialize, Clone, Debug)]
pub struct IncidentJson {
    /// Id.
    pub id: String,
    /// First event time.
    pub start: Option<String>,
    /// Last event time.
    pub end: Option<String>,
    /// failure | slowdown.
    pub kind: &'static str,
    /// Hosts.
    pub hosts: Vec<String>,
    /// GPUs.
    pub gpus: Vec<String>,
    /// Ranks.
    pub ranks: Vec<i64>,
    /// Root cause.
    pub root_cause: RootCauseJson,
    /// Alternatives.
    pub alternatives: Vec<AlternativeJson>,
    /// Actions.
    pub actions: Vec<String>,
    /// Events in the incident (written `e17`: see [`EventId`]).
    pub events: Vec<EventId>,
    /// Consequence counts by kind.
    #[serde(skip_serializing_if = "BTreeMap::is_empty")]
    pub consequences: BTreeMap<String, u64>,
    /// Occurrences by `kind` or `kind:code` (exact: those past the events cap included).
    pub counts: BTreeMap<String, u64>,
    /// What data would settle the cause.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub missing_data: Vec<String>,
    /// For kind `slowdown`: the regression in the trainer's progress lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub slowdown: Option<SlowdownJson>,
    /// For kind `hang`: what the job was waiting for and the marker that says so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hang: Option<HangJson>,
    /// Published bugs and version rules this incident matches (`data/known-issues.toml`).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub known_issues: Vec<KnownIssueJson>,
}

/// A hang: what the job was waiting for when its progress stopped.
#[derive(Serialize, Clone, Debug)]
pub struct HangJson {
    /// `first collective`.
    pub waiting_for: String,
    /// The marker that says it was waiting (`bar_at_zero`: a progress bar drawn at 0 after
    /// NCCL initialized its communicators, nothing after it).
    pub evidence: String,
}

/// A known issue matched: the published bug or version rule, and what matched it.
#[derive(Serialize, Clone, Debug)]
pub struct KnownIssueJson {
    /// Entry id.
    pub id: String,
    /// driver | gsp_firmware | fabric_manager | cuda | nccl | container_toolkit | kernel.
    pub component: String,
    /// What goes wrong.
    pub summary: String,
    /// The versions affected.
    pub affected: String,
    /// The first version with the fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fixed_in: Option<String>,
    /// Where it is published.
    pub source: String,
    /// confirmed (line and version read) | probable (no version in the inputs) | incompatible
    /// (versions that break a version rule).
    pub status: &'static str,
    /// The version read, or why none was.
    pub version: String,
    /// Where the version was read (`path:line`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub version_source: Option<String>,
    /// What to do until the fix.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub workaround: Option<String>,
    /// The events that match (the line, then the version line).
    pub evidence: Vec<String>,
}

/// A sustained slowdown, as measured.
#[derive(Serialize, Clone, Debug)]
pub struct SlowdownJson {
    /// `step_time_ms`, `samples_per_s` or `busbw_gb_s`.
    pub metric: &'static str,
    /// Unit of `baseline` and `degraded`.
    pub unit: &'static str,
    /// Which progress figure (`iteration`, a progress bar, `samples`, …).
    pub series: String,
    /// Level before the slowdown.
    pub baseline: f64,
    /// Level during it.
    pub degraded: f64,
    /// Throughput during the slowdown relative to before (0.6 = 60 %).
    pub ratio: f64,
    /// First slow sample.
    pub start: Option<String>,
    /// Last slow sample.
    pub end: Option<String>,
    /// First sample back at the old level.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub recovered_at: Option<String>,
    /// Still slow at the end of the log.
    pub ongoing: bool,
    /// Samples in the slow phase.
    pub samples: usize,
    /// Iteration of the first slow sample.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub start_iteration: Option<i64>,
    /// Samples left out as known pauses (checkpoint, evaluation, warmup).
    pub pauses: BTreeMap<String, usize>,
    /// The series, thinned: `[time or null, value]`.
    pub curve: Vec<(Option<String>, f64)>,
    /// `[from, to)` indices of the slow phase in `curve`.
    pub curve_slow: (usize, usize),
}

/// The JSON form of a slowdown.
pub fn slowdown_json(s: &crate::throughput::Slowdown) -> SlowdownJson {
    SlowdownJson {
        metric: s.metric.as_str(),
        unit: s.metric.unit(),
        series: s.label.clone(),
        baseline: s.baseline,
        degraded: s.degraded,
        ratio: s.ratio,
        start: s.start_us.map(iso_us),
        end: s.end_us.map(iso_us),
        recovered_at: s.recovered_us.map(iso_us),
        ongoing: s.ongoing,
        samples: s.samples,
        start_iteration: s.start_iter,
        pauses: s.pauses.clone(),
        curve: s.curve.iter().map(|&(t, v)| (t.map(iso_us), v)).collect(),
        curve_slow: s.curve_slow,
    }
}

/// The verdict.
#[derive(Serialize, Clone, Debug)]
pub struct VerdictJson {
    /// Top incident's layer or `none`.
    pub root_cause_layer: &'static str,
    /// Summary.
    pub summary: String,
    /// Error lines no recognizer read, when no incident was found (bounded: the first and the
    /// last of each input).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub leads: Vec<LeadJson>,
    /// How many such lines there are in all (exact).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub leads_total: Option<u64>,
}

/// One lead: an error line the analyzer could not read.
#[derive(Serialize, Clone, Debug)]
pub struct LeadJson {
    /// `path:line`.
    pub source: String,
    /// The line, verbatim (cut at 400 bytes).
    pub line: String,
}

/// A boot of a host.
#[derive(Serialize, Clone, Debug)]
pub struct BootJson {
    /// When the driver loaded (null when only uptime is known).
    pub start: Option<String>,
    /// Driver version loaded.
    pub driver: Option<String>,
    /// Evidence.
    pub source: SourceJson,
}

/// A host.
#[derive(Serialize, Clone, Debug)]
pub struct HostJson {
    /// Name.
    pub host: String,
    /// Kernel release.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub kernel: Option<String>,
    /// Driver version.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub driver: Option<String>,
    /// Capture time of a bundle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub captured_at: Option<String>,
    /// Driver loads seen.
    pub boots: Vec<BootJson>,
    /// Gaps in coverage.
    pub coverage_gaps: Vec<String>,
}

/// A GPU.
#[derive(Serialize, Clone, Debug)]
pub struct GpuJson {
    /// Host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Bus id.
    pub bus_id: String,
    /// UUID.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub uuid: Option<String>,
    /// Serial.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub serial: Option<String>,
    /// Product name.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
    /// VBIOS.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub vbios: Option<String>,
    /// Counters as read.
    pub state: BTreeMap<String, String>,
    /// Named by an incident's root cause.
    pub suspect: bool,
}

/// One rank of the job table.
#[derive(Serialize, Clone, Debug)]
pub struct RankJson {
    /// Global rank.
    pub rank: i64,
    /// Host.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub host: Option<String>,
    /// Process id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pid: Option<u64>,
    /// GPU bus id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub gpu: Option<String>,
}

/// The distributed job.
#[derive(Serialize, Clone, Debug)]
pub struct JobJson {
    /// World size.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub world_size: Option<i64>,
    /// Rank table.
    pub ranks: Vec<RankJson>,
    /// Ranks no line names.
    pub missing_ranks: Vec<i64>,
    /// Ranks that logged no timeout while the others did.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub silent_ranks: Vec<i64>,
    /// The rank behind all others: [rank, last completed collective].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub straggler: Option<(i64, i64)>,
    /// Estimated clock offset per host, seconds.
    pub skew_s: BTreeMap<String, f64>,
    /// Seconds lost since the last checkpoint before the first fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub work_lost_s: Option<i64>,
    /// The last checkpoint saved before the first fault.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_checkpoint: Option<String>,
}

/// The whole report.
#[derive(Clone, Debug)]
/// Serialized field for field in this order, the optional lists and the job left out when
/// empty (see `serialize_report`).
pub struct Report {
    /// `faultline/report/v1`.
    pub schema: &'static str,
    /// Tool.
    pub tool: Tool,
    /// Inputs.
    pub inputs: Vec<InputJson>,
    /// Events.
    pub events: Vec<EventJson>,
    /// Incidents.
    pub incidents: Vec<IncidentJson>,
    /// Verdict.
    pub verdict: VerdictJson,
    /// Hosts.
    pub hosts: Vec<HostJson>,
    /// GPUs.
    pub gpus: Vec<GpuJson>,
    /// The distributed job.
    pub job: Option<JobJson>,
    /// Warnings not tied to one input, and clock notes.
    pub notes: Vec<String>,
    /// Known issues matched outside any incident (a message known to be harmless, a version
    /// rule read from a dump).
    pub known_issues: Vec<KnownIssueJson>,
    /// What was read, recognized and skipped, over all inputs.
    pub accounting: AccountingJson,
}

/// A time of day nothing dated (microseconds since midnight of its file's first day): its text
/// (`15:58:29`, `15:58:29.123456`) and its day in the file when past the first.
pub fn time_of_day_parts(us: u64) -> (String, Option<u64>) {
    let day = us / crate::model::DAY_US;
    let t = us % crate::model::DAY_US;
    let secs = t / 1_000_000;
    let micros = t % 1_000_000;
    let mut text = format!("{:02}:{:02}:{:02}", secs / 3600, secs / 60 % 60, secs % 60);
    if micros > 0 {
        text.push_str(&format!(".{micros:06}"));
    }
    (text, (day > 0).then_some(day))
}

/// `15:58:29, date unknown` (`00:10:02 (+1 day), date unknown` past the file's first day) for an
/// event whose line printed only a time of day that nothing dated.
pub fn undated_time_text(e: &EventJson) -> Option<String> {
    let t = e.time_of_day.as_deref()?;
    Some(match e.day_in_file {
        Some(d) => format!(
            "{t} (+{d} day{}), date unknown",
            if d == 1 { "" } else { "s" }
        ),
        None => format!("{t}, date unknown"),
    })
}
