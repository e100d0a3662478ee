//! The inventory parts of the report: hosts (driver, boots, coverage) and GPUs (identity,
//! counters, suspect or not), gathered from every input.

use super::{BootJson, GpuJson, HostJson, SourceJson};
use crate::report::iso_us;
use crate::Analysis;
use std::collections::BTreeMap;

/// The hosts of the analysis, one entry per host name.
pub(super) fn hosts(a: &Analysis) -> Vec<HostJson> {
    let mut map: BTreeMap<String, HostJson> = BTreeMap::new();
    for r in &a.inputs {
        let Some(h) = &r.host else { continue };
        // an `nvidia-smi -q` alone names the driver too
        if r.bundle.is_none() && r.smi_driver.is_some() {
            let e = map.entry(h.to_string()).or_insert_with(|| bare_host(h));
            e.driver = e.driver.clone().or(r.smi_driver.clone());
        }
        let Some(b) = &r.bundle else { continue };
        let e = map.entry(h.to_string()).or_insert_with(|| bare_host(h));
        e.kernel = e.kernel.clone().or(b.kernel.clone());
        e.driver = e
            .driver
            .clone()
            .or(b.driver.clone())
            .or(r.smi_driver.clone());
        if let Some(c) = b.captured {
            e.captured_at = Some(iso_us(
                (c.naive_secs - c.offset.unwrap_or(0) as i64) * 1_000_000,
            ));
        }
        e.coverage_gaps
            .extend(b.coverage_gaps.iter().map(|g| format!("{}: {g}", r.path)));
    }
    for ev in a.events.iter().filter(|e| e.kind == "driver_load") {
        let Some(h) = &ev.host else { continue };
        let e = map.entry(h.to_string()).or_insert_with(|| bare_host(h));
        let v = ev.attrs.get("driver_version").map(str::to_string);
        if e.driver.is_none() {
            e.driver = v.clone();
        }
        e.boots.push(BootJson {
            start: ev.time_us.map(iso_us),
            driver: v,
            source: SourceJson {
                path: ev.source.path.to_string(),
                line: ev.source.line,
            },
        });
    }
    map.into_values().collect()
}

/// The GPUs of the analysis, one entry per host and bus id; `suspects` are marked.
pub(super) fn gpus(a: &Analysis, suspects: &[(Option<String>, String)]) -> Vec<GpuJson> {
    let mut map: BTreeMap<(Option<String>, String), GpuJson> = BTreeMap::new();
    for r in &a.inputs {
        for g in &r.gpus {
            let Some(b) = &g.bus_id else { continue };
            let host = g.host.clone().or_else(|| r.host.clone());
            let e = map
                .entry((host.clone(), b.clone()))
                .or_insert_with(|| bare_gpu(host, b));
            e.uuid = e.uuid.clone().or(g.uuid.clone());
            e.serial = e.serial.clone().or(g.serial.clone());
            e.name = e.name.clone().or(g.name.clone());
            e.vbios = e.vbios.clone().or(g.vbios.clone());
            e.state.extend(g.state.clone());
        }
    }
    for ((h, b), (uuid, serial)) in &a.identities {
        let host = (!h.is_empty()).then(|| h.clone());
        let e = map
            .entry((host.clone(), b.clone()))
            .or_insert_with(|| bare_gpu(host, b));
        e.uuid = e.uuid.clone().or(uuid.clone());
        e.serial = e.serial.clone().or(serial.clone());
    }
    for (h, g) in suspects {
        if let Some(e) = map.get_mut(&(h.clone(), g.clone())) {
            e.suspect = true;
        }
    }
    map.into_values().collect()
}

/// A GPU known only by its host and bus id (the other facts are filled in as they are found).
fn bare_gpu(host: Option<String>, bus_id: &str) -> GpuJson {
    GpuJson {
        host,
        bus_id: bus_id.to_string(),
        uuid: None,
        serial: None,
        name: None,
        vbios: None,
        state: BTreeMap::new(),
        suspect: false,
    }
}

/// A host known only by its name (the other facts are filled in as they are found).
fn bare_host(name: &str) -> HostJson {
    HostJson {
        host: name.to_string(),
        kernel: None,
        driver: None,
        captured_at: None,
        boots: vec![],
        coverage_gaps: vec![],
    }
}
