//! The event's own reading as the verdict's layer: a rule with `layer_from = "event"` names the
//! layer its event's code points at (data/cuda.toml: a CUDA error's, an NCCL result's, a crash
//! library's), who acts follows from that layer, the other layers the code may point at
//! (`candidates`) become the alternatives, and a reading that cannot name the layer on its own
//! (`unknown`) is settled by the incident's context when another fault of the incident lies in
//! one of its candidate layers (a busy GPU after the driver said the GPU needs a reset).

use super::Alternative;
use crate::catalog::Catalog;
use crate::model::{Layer, Severity};
use crate::rules::Rule;
use crate::timeline::Event;

/// Whether a rule takes its layer from its event's reading.
pub(super) fn by_event(rule: &Rule) -> bool {
    rule.layer_from.as_deref() == Some("event")
}

/// The other layers an event's code may point at, likeliest first.
pub(super) fn candidates(e: &Event) -> Vec<Layer> {
    e.attrs
        .get("candidates")
        .map(|c| c.split(',').filter_map(Layer::parse).collect())
        .unwrap_or_default()
}

/// Who acts on a fault of `layer`: the job owner for the job's code, the vendor for the parts,
/// the operator for the rest.
pub(super) fn responsibility(layer: Layer) -> &'static str {
    match layer {
        Layer::Application => "user",
        Layer::Hardware | Layer::GpuMemory => "vendor",
        _ => "operator",
    }
}

/// The event's candidate layers (other than `chosen`) as alternatives, first one likelier.
pub(super) fn alternatives(e: &Event, chosen: Layer) -> Vec<Alternative> {
    let what = e
        .attrs
        .get("error")
        .or(e.attrs.get("nccl_result"))
        .or(e.attrs.get("library"))
        .unwrap_or(e.kind);
    candidates(e)
        .into_iter()
        .filter(|&l| l != chosen && l != Layer::Unknown)
        .enumerate()
        .map(|(k, l)| Alternative {
            layer: l,
            confidence: if k == 0 { 0.25 } else { 0.15 },
            summary: format!(
                "{what} may also point at {}: {} ({}:{})",
                l.as_str(),
                e.attrs.get("reading").unwrap_or("see its meaning"),
                e.source.path,
                e.source.line
            ),
        })
        .collect()
}

/// For a reading that cannot name the layer (`unknown`): the first other fault of the incident
/// (not a consequence, at least a warning, on the same host or none named) whose layer is one of
/// the reading's candidates.
pub(super) fn context_for(
    primary: usize,
    members: &[usize],
    events: &[Event],
    conseq: &[bool],
) -> Option<usize> {
    let p = &events[primary];
    let wanted = candidates(p);
    if p.layer != Layer::Unknown || wanted.is_empty() {
        return None;
    }
    members.iter().copied().find(|&i| {
        let e = &events[i];
        i != primary
            && !conseq[i]
            && e.severity >= Severity::Warning
            && wanted.contains(&e.layer)
            && (e.host.is_none() || p.host.is_none() || e.host == p.host)
    })
}

/// The summary clause that says which fault settled an unknown reading.
pub(super) fn settled_by(c: &Event, catalog: &Catalog) -> String {
    format!(
        "; {} in the same incident points at {} ({}:{})",
        catalog.title(c.kind, c.code),
        c.layer.as_str(),
        c.source.path,
        c.source.line
    )
}
