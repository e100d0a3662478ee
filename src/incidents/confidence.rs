//! Confidence from the evidence, not a constant per rule: the rule's prior (how specific its
//! pattern is) moved by what the incident shows. Several routes that saw the fault (two inputs,
//! the OS and the BMC, a duplicate merged from another file) raise it; another layer's candidate,
//! a lone warning-level line or a generic event (an error recognized but not understood) lower it.
//! `tests/verdicts.rs` measures the calibration on the real cases.

use crate::model::Severity;
use crate::rules::Rule;
use crate::timeline::Event;
use std::collections::BTreeSet;

/// Kinds that say "an error was recognized but not understood".
const GENERIC: [&str; 2] = ["driver_error", "kernel_error"];

/// The confidence of a verdict named by `rule` through `events[primary]`.
pub(super) fn of_rule(
    rule: &Rule,
    primary: usize,
    members: &[usize],
    events: &[Event],
    has_alternatives: bool,
) -> f64 {
    let p = &events[primary];
    let fitting: Vec<&Event> = members
        .iter()
        .map(|&i| &events[i])
        .filter(|e| rule.pattern.fits(e))
        .collect();
    let inputs: BTreeSet<usize> = fitting.iter().map(|e| e.input).collect();
    let routes = inputs.len() + usize::from(fitting.iter().any(|e| !e.also_seen().is_empty()));
    let mut c = rule.confidence;
    if routes >= 2 {
        c += 0.05;
    }
    if has_alternatives {
        c -= 0.1;
    }
    if GENERIC.contains(&p.kind) {
        c -= 0.15;
    }
    // a code that cannot name the layer on its own: the layers it may point at stay open
    if rule.layer_from.as_deref() == Some("event") && p.layer == crate::model::Layer::Unknown {
        c = c.min(0.35);
    }
    if p.severity <= Severity::Warning && fitting.iter().map(|e| e.weight()).sum::<u64>() <= 1 {
        c -= 0.05;
    }
    c.clamp(0.05, 0.95)
}
