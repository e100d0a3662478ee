//! A NIC fault and the GPUs it serves: when an incident's NIC (InfiniBand/RoCE device named by
//! its `ib_link` events) appears in the `nvidia-smi topo -m` of its host, the summary names the
//! GPUs for which that NIC is the nearest one — the GPUs whose NCCL traffic it carries.

use super::Incident;
use crate::formats::topo::Topology;
use crate::pipeline::InputResult;
use crate::timeline::{short_host, Event};
use std::collections::BTreeMap;

/// A NIC's device name from an event's details: `hca` (NCCL), `device` when it is no PCI address
/// (`mlx5_0:1`).
fn nic_of(e: &Event) -> Option<&str> {
    let name = e.attrs.get("hca").or_else(|| e.attrs.get("device"))?;
    let name = name.split(':').next().unwrap_or(name);
    let pci = name.len() >= 7 && name.bytes().all(|c| c.is_ascii_hexdigit() || c == b'.');
    (!name.is_empty() && !pci).then_some(name)
}

/// Adds "mlx5_0 serves GPU0 (PIX) and GPU1 (PXB)" to the summary of incidents whose primary
/// fault is a NIC's, when the topology of its host is among the inputs.
pub fn add_nic_gpus(incidents: &mut [Incident], events: &[Event], inputs: &[InputResult]) {
    let topos: BTreeMap<String, &Topology> = inputs
        .iter()
        .filter_map(|r| Some((short_host(r.host.as_ref()?), r.topology.as_ref()?)))
        .collect();
    if topos.is_empty() {
        return;
    }
    for inc in incidents.iter_mut() {
        let Some(p) = inc.primary.filter(|&p| events[p].kind == "ib_link") else {
            continue;
        };
        let Some(host) = events[p].host.clone() else {
            continue;
        };
        let Some(topo) = topos.get(&*host) else {
            continue;
        };
        let mut nics: Vec<&str> = inc
            .events
            .iter()
            .map(|&i| &events[i])
            .filter(|e| e.kind == "ib_link" && e.host.as_deref() == Some(&*host))
            .filter_map(nic_of)
            .collect();
        nics.dedup();
        nics.sort_unstable();
        nics.dedup();
        for nic in nics {
            let served = topo.gpus_served_by(nic);
            if served.is_empty() {
                continue;
            }
            let list: Vec<String> = served.iter().map(|(g, l)| format!("{g} ({l})")).collect();
            inc.summary.push_str(&format!(
                "; {nic} on {host} serves {} (nvidia-smi topo -m)",
                join_and(&list)
            ));
        }
    }
}

/// `a`, `a and b`, `a, b and c`.
fn join_and(items: &[String]) -> String {
    match items {
        [] => String::new(),
        [one] => one.clone(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}
