//! Hangs, the third outcome beside crashes and slowdowns: a job whose progress stopped while it
//! was visibly waiting. Today's evidence of waiting is a progress bar drawn at 0 before its first
//! step right after NCCL finished initializing a communicator, with nothing after it in that
//! log (no progress, no error): the job sits in its first collective. A log that simply ends
//! after normal progress is not a hang (a paste is often cut); a stall that ends in an error is
//! that error's incident.
//!
//! The stall becomes a `progress_stall` event (citing the stuck bar) and, when no failure covers
//! the same log, an incident of kind `hang` whose likely layers are ranked by the transport the
//! job's NCCL used, with what would settle it.

use crate::incidents::{Alternative, Incident};
use crate::model::{Layer, Severity};
use crate::timeline::Event;
use std::collections::BTreeMap;

/// Why a job was judged hung.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hang {
    /// What the job was waiting for (`first collective`).
    pub waiting_for: String,
    /// The marker that says it was waiting (`bar_at_zero`).
    pub evidence: String,
}

/// The `progress_stall` events of the inputs whose progress stopped while waiting: per input,
/// a bar at zero after a communicator was initialized, and after that bar no progress figure
/// and no event at warning level or above in the same input.
pub fn stall_events(progress: &[Event], events: &[Event]) -> Vec<Event> {
    let mut by_input: BTreeMap<usize, Vec<&Event>> = BTreeMap::new();
    for e in progress {
        by_input.entry(e.input).or_default().push(e);
    }
    let mut out = Vec::new();
    for (input, mut list) in by_input {
        list.sort_by_key(|e| e.source.line);
        let Some(bar) = list
            .iter()
            .rposition(|e| e.attrs.get("waiting") == Some("bar_at_zero"))
        else {
            continue;
        };
        let line = list[bar].source.line;
        let ready = list[..bar]
            .iter()
            .any(|e| e.attrs.get("waiting") == Some("collectives_ready"));
        // a figure after the bar, or later in the same line (updates glued by `\r`)
        let moved_on = list
            .iter()
            .any(|e| e.source.line >= line && e.attrs.get("waiting").is_none());
        let spoke = events
            .iter()
            .any(|e| e.input == input && e.source.line >= line && e.severity >= Severity::Warning);
        if ready && !moved_on && !spoke {
            out.push(stall_event(list[bar]));
        }
    }
    out
}

fn stall_event(bar: &Event) -> Event {
    let mut e = bar.clone();
    e.kind = "progress_stall";
    e.layer = Layer::Unknown;
    e.severity = Severity::Warning;
    let mut attrs = crate::model::Attrs::new();
    attrs.insert_str("waiting", "bar_at_zero");
    attrs.insert_str("waiting_for", "first collective");
    if let Some(d) = bar.attrs.get("desc") {
        attrs.insert_str("desc", d);
    }
    if let Some(t) = bar.attrs.get("total") {
        attrs.insert_str("total", t);
    }
    e.attrs = attrs;
    e
}

/// One `hang` incident per `progress_stall` event whose input no failure incident covers.
pub fn incidents(events: &[Event], failures: &[Incident]) -> Vec<Incident> {
    let between_hosts = events.iter().any(|e| {
        e.kind == "nccl_transport"
            && e.attrs
                .get("net")
                .is_some_and(|n| n.eq_ignore_ascii_case("IB") || n.eq_ignore_ascii_case("Socket"))
    });
    events
        .iter()
        .enumerate()
        .filter(|(_, e)| e.kind == "progress_stall")
        .filter(|(_, e)| {
            !failures
                .iter()
                .any(|f| f.events.iter().any(|&i| events[i].input == e.input))
        })
        .map(|(i, e)| hang_incident(i, e, between_hosts))
        .collect()
}

/// The layers a first-collective hang points at, most likely first: GPU peer-to-peer over PCIe
/// (ACS and IOMMU settings of the host) when the job stays on one host, the network when its
/// NCCL went between hosts; then a rank that never called the collective, then the input
/// pipeline.
fn ranked(between_hosts: bool) -> [(Layer, f64, &'static str); 4] {
    let p2p = "GPU peer-to-peer traffic over PCIe blocked or redirected by the host: PCIe ACS on the switches between the GPUs, or the IOMMU (VT-d/AMD-Vi) translating peer traffic through the root complex";
    let net = "the network between the hosts: a collective that cannot connect (firewall, wrong interface, InfiniBand/RoCE path)";
    let rank = "a rank that never reached the collective (a different code path, an exception swallowed on one rank, a rank still loading)";
    let data = "data loading or storage that never delivered the first batch";
    if between_hosts {
        [
            (Layer::NetworkStorage, 0.35, net),
            (Layer::Platform, 0.25, p2p),
            (Layer::Application, 0.2, rank),
            (Layer::Unknown, 0.1, data),
        ]
    } else {
        [
            (Layer::Platform, 0.35, p2p),
            (Layer::Interconnect, 0.25, "the GPUs' peer-to-peer path itself (PCIe switch, NVLink bridge) failing under the first transfer"),
            (Layer::Application, 0.2, rank),
            (Layer::NetworkStorage, 0.1, data),
        ]
    }
}

fn hang_incident(i: usize, e: &Event, between_hosts: bool) -> Incident {
    let [best, rest @ ..] = ranked(between_hosts);
    let bar = e
        .attrs
        .get("desc")
        .map(|d| format!("progress bar '{}'", d.trim()))
        .unwrap_or_else(|| "a progress bar".into());
    let total = e.attrs.get("total").unwrap_or("?");
    let summary = format!(
        "The job hung: {bar} stuck at 0/{total} right after NCCL initialized its communicators, and nothing followed ({}:{}); the first collective never completed. Most likely {}",
        e.source.path, e.source.line, best.2
    );
    Incident {
        id: String::new(),
        events: vec![i],
        primary: Some(i),
        rule: Some("hang-first-collective".into()),
        layer: best.0,
        confidence: best.1,
        summary,
        evidence: vec![i],
        responsibility: "operator".into(),
        alternatives: rest
            .iter()
            .map(|(layer, confidence, why)| Alternative {
                layer: *layer,
                confidence: *confidence,
                summary: why.to_string(),
            })
            .collect(),
        actions: vec![
            "While it hangs, take `py-spy dump --pid <PID>` of every rank: a rank outside the collective is the application's, all ranks inside it point at the transport".into(),
            "Rerun with NCCL_DEBUG=INFO (and NCCL_DEBUG_SUBSYS=INIT,P2P,NET); if NCCL_P2P_DISABLE=1 makes it run, the peer-to-peer path is at fault".into(),
            "Check the kernel log for IOMMU and AER messages, `lspci -vvv` for ACS enabled on the PCIe switches between the GPUs, and run nccl-tests all_reduce_perf on the same GPUs; disable ACS and the IOMMU (or set iommu=pt) if peer traffic is blocked".into(),
        ],
        hosts: e.host.iter().map(|h| h.to_string()).collect(),
        gpus: Vec::new(),
        ranks: e.rank.into_iter().collect(),
        consequences: Default::default(),
        counts: BTreeMap::from([("progress_stall".to_string(), 1)]),
        severity: Severity::Warning,
        missing: vec![
            "no stack dump of the ranks while the job hung (py-spy dump)".into(),
            "no kernel log of the host (IOMMU, AER, hung-task lines)".into(),
        ],
        slowdown: None,
        hang: Some(Hang {
            waiting_for: "first collective".into(),
            evidence: "bar_at_zero".into(),
        }),
    }
}
