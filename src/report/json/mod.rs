//! The v1 JSON report (`faultline/report/v1`), field for field as in CONTRACT.md, plus optional
//! extras (`details`, `uptime_s`, `also_seen`, `consequences`, `missing_data`).

use super::iso_us;
use crate::catalog::Catalog;
use crate::model::Attrs;
use crate::timeline::Event;
use crate::Analysis;
use serde::Serialize;

mod accounting;
mod inventory;
mod pretty;
mod view;
mod write;

use accounting::accounting;
pub use accounting::AccountingJson;
use inventory::{gpus, hosts};
use std::collections::BTreeMap;
pub use write::{to_string, write, write_taking};

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
    /// Events in the incident.
    pub events: Vec<String>,
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
    /// What was read, recognized and skipped, over all inputs.
    pub accounting: AccountingJson,
}

/// The JSON form of an event, copied ([`event_json_taking`] on a copy).
fn event_json(e: &Event, catalog: &Catalog) -> EventJson {
    event_json_taking(&mut e.clone(), catalog)
}

/// The JSON form of an event whose own texts (message, details, other places) are moved out of
/// it (left empty): the report of a whole analysis holds them once, not a copy beside the
/// timeline's. The texts it shares with other events (host, path, kind, GPU) are copied.
pub(super) fn event_json_taking(e: &mut Event, catalog: &Catalog) -> EventJson {
    let take = std::mem::take::<String>;
    EventJson {
        id: e.id_text(),
        time: e.time_us.map(iso_us),
        time_quality: e.quality.as_str(),
        host: e.host.as_deref().map(str::to_string),
        source: SourceJson {
            path: e.source.path.to_string(),
            line: e.source.line,
        },
        title: catalog.title(e.kind, e.code),
        kind: e.kind.to_string(),
        code: e.code,
        gpu: e.gpu.as_deref().map(str::to_string),
        gpu_uuid: e.gpu_uuid.as_deref().map(str::to_string),
        rank: e.rank,
        layer: e.layer.as_str(),
        severity: e.severity.as_str(),
        message: take(&mut e.message),
        uptime_s: e.uptime_us.map(|u| u as f64 / 1e6),
        details: std::mem::take(&mut e.attrs),
        also_seen: std::mem::take(&mut e.also_seen)
            .into_iter()
            .map(|s| SourceJson {
                path: s.path.to_string(),
                line: s.line,
            })
            .collect(),
        suppressed: e.suppressed,
    }
}

/// Builds the report value.
pub fn build(a: &Analysis, catalog: &Catalog) -> Report {
    let mut r = build_rest(a);
    r.events = a.events.iter().map(|e| event_json(e, catalog)).collect();
    r
}

/// Builds the report value, moving the events' own texts (message, details, other places) into
/// it instead of copying them: afterwards `a.events` keeps their times, codes, shared texts,
/// places and counts. For a caller done with the timeline once the report is built.
pub fn build_taking(a: &mut Analysis, catalog: &Catalog) -> Report {
    let mut r = build_rest(a);
    r.events = a
        .events
        .iter_mut()
        .map(|e| event_json_taking(e, catalog))
        .collect();
    r
}

/// The report without its event list.
pub(super) fn build_rest(a: &Analysis) -> Report {
    // occurrences per input: (all, past the cap)
    let mut per_input = vec![(0u64, 0u64); a.inputs.len()];
    for e in &a.events {
        if let Some(c) = per_input.get_mut(e.input) {
            c.0 += e.weight();
            c.1 += e.suppressed;
        }
    }
    let inputs: Vec<InputJson> = a
        .inputs
        .iter()
        .map(|r| InputJson {
            path: r.path.clone(),
            format: r.format.as_str(),
            host: r.host.clone(),
            bytes: r.bytes,
            lines: r.lines,
            lines_recognized: r.lines_recognized,
            events: per_input.get(r.index).map_or(0, |c| c.0),
            events_suppressed: per_input.get(r.index).map_or(0, |c| c.1),
            lines_unrecognized: r.lines.saturating_sub(r.lines_recognized),
            warnings: r.warnings.clone(),
        })
        .collect();
    let mut suspects: Vec<(Option<String>, String)> = Vec::new();
    let incidents: Vec<IncidentJson> = a
        .incidents
        .iter()
        .map(|inc| {
            let mut times: Vec<i64> = inc
                .events
                .iter()
                .filter_map(|&i| a.events[i].time_us)
                .collect();
            if let Some(s) = &inc.slowdown {
                times.extend(s.start_us.into_iter().chain(s.end_us));
            }
            if let Some(p) = inc.primary {
                if let Some(g) = &a.events[p].gpu {
                    suspects.push((
                        a.events[p].host.as_deref().map(str::to_string),
                        g.to_string(),
                    ));
                }
            }
            IncidentJson {
                id: inc.id.clone(),
                start: times.iter().min().copied().map(iso_us),
                end: times.iter().max().copied().map(iso_us),
                kind: if inc.slowdown.is_some() {
                    "slowdown"
                } else {
                    "failure"
                },
                hosts: inc.hosts.clone(),
                gpus: inc.gpus.clone(),
                ranks: inc.ranks.clone(),
                root_cause: RootCauseJson {
                    layer: inc.layer.as_str(),
                    confidence: inc.confidence,
                    summary: inc.summary.clone(),
                    evidence: inc
                        .evidence
                        .iter()
                        .map(|&i| a.events[i].id_text())
                        .collect(),
                    responsibility: inc.responsibility.clone(),
                    rule: inc.rule.clone(),
                },
                alternatives: inc
                    .alternatives
                    .iter()
                    .map(|x| AlternativeJson {
                        layer: x.layer.as_str(),
                        confidence: x.confidence,
                        summary: x.summary.clone(),
                    })
                    .collect(),
                actions: inc.actions.clone(),
                events: inc.events.iter().map(|&i| a.events[i].id_text()).collect(),
                consequences: inc.consequences.clone(),
                counts: inc.counts.clone(),
                missing_data: inc.missing.clone(),
                slowdown: inc.slowdown.as_ref().map(slowdown_json),
            }
        })
        .collect();
    let verdict = match a.top() {
        Some(t) => VerdictJson {
            root_cause_layer: t.layer.as_str(),
            summary: t.summary.clone(),
        },
        None => {
            let read: u64 = a.inputs.iter().map(|i| i.lines).sum();
            let summary = if read == 0 {
                "no data: no input line could be read".to_string()
            } else {
                format!("no finding: {} lines in {} input(s) read, no GPU, driver, host or job fault recognized", read, a.inputs.len())
            };
            VerdictJson {
                root_cause_layer: "none",
                summary,
            }
        }
    };
    let job = a.job.as_ref().map(|j| JobJson {
        world_size: j.world_size,
        ranks: j
            .ranks
            .iter()
            .map(|r| RankJson {
                rank: r.rank,
                host: r.host.clone(),
                pid: r.pid,
                gpu: r.gpu.clone(),
            })
            .collect(),
        missing_ranks: j.missing_ranks.clone(),
        silent_ranks: j.silent_ranks.clone(),
        straggler: j.straggler,
        skew_s: j.skew_s.clone(),
        work_lost_s: j.work_lost_s,
        last_checkpoint: j.last_checkpoint.map(|i| a.events[i].id_text()),
    });
    let hosts = hosts(a);
    let gpus = gpus(a, &suspects);
    let mut notes: Vec<String> = a.warnings.clone();
    notes.extend(a.notes.iter().cloned());
    let accounting = accounting(a, &inputs);
    Report {
        schema: "faultline/report/v1",
        tool: Tool {
            name: "faultline",
            version: env!("CARGO_PKG_VERSION"),
        },
        inputs,
        events: Vec::new(),
        incidents,
        verdict,
        hosts,
        gpus,
        job,
        notes,
        accounting,
    }
}
