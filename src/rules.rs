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
    /// Matching events needed in the incident.
    #[serde(default)]
    pub min_count: Option<usize>,
    /// Distinct non-sympathetic Xid codes needed on the event's GPU.
    #[serde(default)]
    pub min_distinct_codes_on_gpu: Option<usize>,
    /// Incident fact that must hold: `desync`.
    #[serde(default)]
    pub fact: Option<String>,
    /// Also consider consequence events (for rules about hangs and desyncs).
    #[serde(default)]
    pub on_consequences: bool,
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
    /// Summary template: {gpu} {host} {code} {title} {count} {rank}.
    pub summary: String,
    /// Steps.
    pub actions: Vec<String>,
}

#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct RulesFile {
    #[serde(default)]
    grouping: Option<Grouping>,
    #[serde(default)]
    consequences: Option<Consequences>,
    #[serde(default)]
    rule: Vec<Rule>,
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
}

impl RuleSet {
    /// Built-in rules plus user files (same id replaces, new ids go first so they take priority).
    pub fn load(extra: &[String]) -> Result<RuleSet, toml::de::Error> {
        // the built-in rules are parsed once per process (one load per analysis or bundle)
        static BUILTIN: std::sync::OnceLock<Result<RulesFile, toml::de::Error>> =
            std::sync::OnceLock::new();
        let base: RulesFile = BUILTIN
            .get_or_init(|| toml::from_str(BUILTIN_RULES))
            .clone()?;
        let mut set = RuleSet {
            grouping: base.grouping.unwrap_or(Grouping {
                gap_s: 1800,
                sticky_gap_s: 10800,
            }),
            consequences: base.consequences.unwrap_or_default(),
            rules: base.rule,
        };
        for text in extra {
            let f: RulesFile = toml::from_str(text)?;
            if let Some(g) = f.grouping {
                set.grouping = g;
            }
            if let Some(c) = f.consequences {
                set.consequences = c;
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
        self.consequences.kinds.contains(&e.kind)
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
            self.kinds.is_empty() || self.kinds.contains(&e.kind)
        };
        kind_ok
            && self.min_severity.is_none_or(|s| e.severity >= s)
            && self.attrs.iter().all(|(k, v)| e.attrs.get(k) == Some(v))
    }
}
