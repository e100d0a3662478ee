//! Root-cause rules as data (`data/rules.toml`, embedded; users may add files with `--rules`):
//! how incidents are grouped, which events are consequences, and the ordered rules that name an
//! incident's layer, confidence, who must act and what to do.

use crate::model::{Layer, Severity};
use crate::timeline::Event;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The rules as shipped.
pub const BUILTIN_RULES: &str = include_str!("../data/rules.toml");

/// Incident grouping.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Grouping {
    /// A quiet gap longer than this (seconds) ends an incident.
    pub gap_s: i64,
    /// Gap after a sticky code (74, 79, 95, 109, 119).
    pub sticky_gap_s: i64,
    /// Events this soon after a boot or a driver load (seconds) are the bring-up's.
    #[serde(default = "default_bring_up_s")]
    pub bring_up_s: i64,
}

fn default_bring_up_s() -> i64 {
    300
}

/// Events that are consequences of a primary fault.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Consequences {
    /// Kinds that are always consequences.
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Xid codes that are consequences (sympathetic).
    #[serde(default)]
    pub xid: Vec<i64>,
    /// Detail key=value pairs that mark an event as a follow-on (e.g. `follow_on=true`).
    #[serde(default)]
    pub attrs: BTreeMap<String, String>,
}

/// What a rule looks for.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Match {
    /// Event kinds (any of).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Xid codes (any of); implies kind `xid`.
    #[serde(default)]
    pub xid: Vec<i64>,
    /// SXid codes (any of); empty with kind `sxid` means any.
    #[serde(default)]
    pub sxid: Vec<i64>,
    /// Minimum severity of the event.
    #[serde(default)]
    pub min_severity: Option<Severity>,
    /// Details that must be equal.
    #[serde(default)]
    pub attrs: BTreeMap<String, String>,
    /// Details that must be present, whatever their value.
    #[serde(default)]
    pub has_attrs: Vec<String>,
    /// Details that must be absent (a kill with no `sent_by`: nobody in the logs says who sent it).
    #[serde(default)]
    pub lacks_attrs: Vec<String>,
    /// Matching events needed in the incident.
    #[serde(default)]
    pub min_count: Option<usize>,
    /// Distinct non-sympathetic Xid codes needed on the event's GPU.
    #[serde(default)]
    pub min_distinct_codes_on_gpu: Option<usize>,
    /// The event's own layer, as its recognizer or the catalog gave it (a CUDA error that is an
    /// ECC error is `gpu_memory`).
    #[serde(default)]
    pub event_layer: Option<Layer>,
    /// Distinct processes (pid) whose matching events on the event's GPU (same host) name the
    /// event's GPC and TPC: one compute unit faulting under different programs.
    #[serde(default)]
    pub min_processes_same_unit: Option<usize>,
    /// Incident fact that must hold: `desync` (ranks waited in different collectives), or
    /// `first_failure` (nothing went wrong before the event: no event at warning level or above,
    /// and no process ended by another signal, earlier in the incident).
    #[serde(default)]
    pub fact: Option<String>,
    /// Another event of the incident that must lie shortly before this one on the same host
    /// (a BMC power or cooling alert before a GPU falls off the bus); it becomes evidence and
    /// fills `{cause}` and `{lead}` in the summary.
    #[serde(default)]
    pub preceded_by: Option<Preceded>,
    /// Also consider consequence events (for rules about hangs and desyncs).
    #[serde(default)]
    pub on_consequences: bool,
    /// Kinds of which an event must be in the inputs on the event's host, at any severity and
    /// outside the incident too: a state of the machine that changes what the event means (a
    /// power-switching tool that controls the GPU's power).
    #[serde(default)]
    pub with_state: Vec<String>,
}

/// The earlier event a rule needs (see [`Match::preceded_by`]).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Preceded {
    /// Its kinds (any of).
    pub kinds: Vec<String>,
    /// Its minimum severity.
    #[serde(default)]
    pub min_severity: Option<Severity>,
    /// How long before the rule's event it may lie (seconds).
    pub within_s: i64,
    /// How long after it may still count (seconds): two clocks (a BMC's and the host's) that
    /// disagree by this much still put a cause before its effect.
    #[serde(default)]
    pub after_s: i64,
}

impl Preceded {
    /// Whether `cause` on the same host fits, in time, as the cause of `effect`.
    pub fn fits(&self, cause: &Event, effect: &Event) -> bool {
        let (Some(c), Some(e)) = (cause.time_us, effect.time_us) else {
            return false;
        };
        self.kinds.iter().any(|k| k == cause.kind)
            && self.min_severity.is_none_or(|s| cause.severity >= s)
            && cause.host.is_some()
            && cause.host == effect.host
            && c >= e - self.within_s * 1_000_000
            && c <= e + self.after_s * 1_000_000
    }
}

/// What counts as a change of the driver stack before a fault (package names are matched as
/// substrings).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct DriftParams {
    /// Packages of the driver (`nvidia`: libnvidia-*, nvidia-driver-*, nvidia-dkms-*, …).
    pub driver_packages: Vec<String>,
    /// Packages of CUDA (`cuda`: cuda-toolkit-*, cuda-libraries-*, …).
    pub cuda_packages: Vec<String>,
    /// Changes longer ago than this (seconds) before the first fault are not counted.
    pub window_s: i64,
}

impl Default for DriftParams {
    fn default() -> Self {
        DriftParams {
            driver_packages: vec!["nvidia".into(), "cuda-drivers".into()],
            cuda_packages: vec!["cuda".into()],
            window_s: 7 * 86_400,
        }
    }
}

/// One root-cause rule.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Rule {
    /// Stable id.
    pub id: String,
    /// What the rule encodes.
    pub description: String,
    /// Pattern.
    #[serde(rename = "match")]
    pub pattern: Match,
    /// Layer named.
    pub layer: Layer,
    /// Confidence 0..1.
    pub confidence: f64,
    /// vendor | operator | user.
    pub responsibility: String,
    /// Summary template: {gpu} {host} {code} {title} {count} {rank}, and {cause} {lead} with
    /// `preceded_by`.
    pub summary: String,
    /// Steps.
    pub actions: Vec<String>,
    /// Take the layer from the catalog instead of `layer`: `caused_by_xid` is the layer of the
    /// Xid that the event names as its cause (`Xid 45 ... caused by previous Xid 149`).
    #[serde(default)]
    pub layer_from: Option<String>,
}

/// One "cause explains effect" relation (see [`RuleSet::explains`]).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Explains {
    /// Kinds of the explaining event (any of).
    pub cause: Vec<String>,
    /// Kinds of the explained event (any of).
    pub effect: Vec<String>,
    /// Minimum severity of the cause.
    #[serde(default)]
    pub cause_min_severity: Option<Severity>,
    /// How long after the effect the cause may still lie (seconds; two clocks that disagree).
    #[serde(default)]
    pub after_s: i64,
    /// Why, in words, for the summary ("the kernel module and the library versions differ").
    pub reason: String,
}

/// How sustained slowdowns are told from noise in trainer progress series.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlowdownParams {
    /// Step time must grow by at least this factor (1.2 = throughput down by a sixth).
    pub min_ratio: f64,
    /// Samples the degraded level must last.
    pub min_samples: usize,
    /// A level shift must exceed this many times the series' own step-to-step noise.
    pub min_noise_multiple: f64,
    /// Causes are looked for this long before the slowdown starts (seconds).
    pub window_before_s: i64,
    /// … and this long after it started (a dump taken while the job was slow).
    pub window_after_s: i64,
    /// A series too short for segmentation (fewer than `2 * min_samples` samples, at least
    /// three) counts a step when every later sample is at least this many times slower than
    /// the level before it.
    #[serde(default = "default_short_min_ratio")]
    pub short_min_ratio: f64,
    /// … and the slow phase took at least this many intervals of the earlier level (two slow
    /// samples at 2× are four intervals; a cumulative average's one slow interval may suffice).
    #[serde(default = "default_short_min_held")]
    pub short_min_held: f64,
}

fn default_short_min_ratio() -> f64 {
    1.5
}

fn default_short_min_held() -> f64 {
    3.0
}

impl Default for SlowdownParams {
    fn default() -> Self {
        SlowdownParams {
            min_ratio: 1.2,
            min_samples: 5,
            min_noise_multiple: 4.0,
            window_before_s: 3600,
            window_after_s: 1800,
            short_min_ratio: default_short_min_ratio(),
            short_min_held: default_short_min_held(),
        }
    }
}

/// A cause a slowdown can be attributed to: events that match, the layer they point at.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SlowdownCause {
    /// Stable id.
    pub id: String,
    /// What the cause is.
    pub description: String,
    /// Events that show it (in the window around the slowdown's start).
    #[serde(rename = "match")]
    pub pattern: Match,
    /// An earlier event of the same kind with these details must exist on the host (a change,
    /// such as NCCL moving from `IB` to `Socket`).
    #[serde(default)]
    pub changed_from: BTreeMap<String, String>,
    /// How far back (seconds) the evidence may lie, when not the default: a state that lasts
    /// until the next reset (a PCIe link that trained narrow at boot) counts from long before.
    #[serde(default)]
    pub window_before_s: Option<i64>,
    /// Layer named.
    pub layer: Layer,
    /// Confidence 0..1 when the evidence is on the slowed host within the window.
    pub confidence: f64,
    /// vendor | operator | user.
    pub responsibility: String,
    /// Summary template: {gpu} {host} {code} {title} {count} {rank}.
    pub summary: String,
    /// Steps.
    pub actions: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RulesFile {
    #[serde(default)]
    grouping: Option<Grouping>,
    #[serde(default)]
    consequences: Option<Consequences>,
    #[serde(default)]
    rule: Vec<Rule>,
    #[serde(default)]
    slowdown: Option<SlowdownParams>,
    #[serde(default)]
    slowdown_cause: Vec<SlowdownCause>,
    #[serde(default)]
    drift: Option<DriftParams>,
    #[serde(default)]
    explains: Vec<Explains>,
}

/// The merged rule set.
#[derive(Clone, Debug)]
pub struct RuleSet {
    /// Grouping.
    pub grouping: Grouping,
    /// Consequences.
    pub consequences: Consequences,
    /// Ordered rules (first match wins).
    pub rules: Vec<Rule>,
    /// Slowdown detection thresholds.
    pub slowdown: SlowdownParams,
    /// Causes slowdowns are attributed to (the most confident match wins).
    pub slowdown_causes: Vec<SlowdownCause>,
    /// Version drift before a fault.
    pub drift: DriftParams,
    /// Cause before consequence: an event of a `cause` kind on the same host (and GPU, when both
    /// name one), no later than an event of an `effect` kind, keeps the latter from naming the
    /// incident's cause whatever the order of the rules.
    pub explains: Vec<Explains>,
}

impl RuleSet {
    /// Built-in rules plus user files (same id replaces, new ids go first so they take priority).
    pub fn load(extra: &[String]) -> Result<RuleSet, toml::de::Error> {
        // the built-in rules are parsed once per process (one load per analysis or bundle)
        static BUILTIN: std::sync::OnceLock<RulesFile> = std::sync::OnceLock::new();
        let base: RulesFile = BUILTIN
            .get_or_init(|| crate::embedded::load(crate::embedded::RULES, "data/rules.toml"))
            .clone();
        let mut set = RuleSet {
            grouping: base.grouping.unwrap_or(Grouping {
                gap_s: 1800,
                sticky_gap_s: 10800,
                bring_up_s: default_bring_up_s(),
            }),
            consequences: base.consequences.unwrap_or_default(),
            rules: base.rule,
            slowdown: base.slowdown.unwrap_or_default(),
            slowdown_causes: base.slowdown_cause,
            drift: base.drift.unwrap_or_default(),
            explains: base.explains,
        };
        for text in extra {
            let f: RulesFile = toml::from_str(text)?;
            if let Some(g) = f.grouping {
                set.grouping = g;
            }
            if let Some(c) = f.consequences {
                set.consequences = c;
            }
            if let Some(p) = f.slowdown {
                set.slowdown = p;
            }
            if let Some(d) = f.drift {
                set.drift = d;
            }
            set.explains.extend(f.explains);
            for c in f.slowdown_cause {
                match set.slowdown_causes.iter_mut().find(|x| x.id == c.id) {
                    Some(slot) => *slot = c,
                    None => set.slowdown_causes.push(c),
                }
            }
            let mut front = Vec::new();
            for r in f.rule {
                if let Some(slot) = set.rules.iter_mut().find(|x| x.id == r.id) {
                    *slot = r;
                } else {
                    front.push(r);
                }
            }
            front.append(&mut set.rules);
            set.rules = front;
        }
        Ok(set)
    }

    /// True when an event is a consequence of some other fault.
    pub fn is_consequence(&self, e: &Event) -> bool {
        self.consequences.kinds.iter().any(|k| k == e.kind)
            || (e.kind == "xid" && e.code.is_some_and(|c| self.consequences.xid.contains(&c)))
            || self
                .consequences
                .attrs
                .iter()
                .any(|(k, v)| e.attrs.get(k) == Some(v))
    }
}

impl Match {
    /// Whether one event fits the per-event part of the pattern.
    pub fn fits(&self, e: &Event) -> bool {
        let kind_ok = if !self.xid.is_empty() {
            e.kind == "xid" && e.code.is_some_and(|c| self.xid.contains(&c))
        } else if !self.sxid.is_empty() {
            e.kind == "sxid" && e.code.is_some_and(|c| self.sxid.contains(&c))
        } else {
            self.kinds.is_empty() || self.kinds.iter().any(|k| k == e.kind)
        };
        kind_ok
            && self.min_severity.is_none_or(|s| e.severity >= s)
            && self.event_layer.is_none_or(|l| e.layer == l)
            && self.attrs.iter().all(|(k, v)| e.attrs.get(k) == Some(v))
            && self.has_attrs.iter().all(|k| e.attrs.contains_key(k))
            && !self.lacks_attrs.iter().any(|k| e.attrs.contains_key(k))
    }
}
