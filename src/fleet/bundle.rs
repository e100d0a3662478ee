//! One bundle's result: the `faultline/scan/v1` line. It carries everything the fleet summary
//! needs (GPU identities with their failure codes and boots, driver versions, incident layers
//! and hosts), so that `merge` can rebuild the summary from the lines alone.

use super::discovery::{Bundle, BundleKind};
use crate::model::{Layer, Severity};
use crate::report::json::Report;
use crate::timeline::Event;
use crate::Analysis;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, BTreeSet};

/// The `schema` of a bundle line.
pub const SCAN_SCHEMA: &str = "faultline/scan/v1";

/// Two boot starts closer than this (seconds) are taken as the same boot: estimates of one
/// boot from different logs differ by seconds, real reboots are minutes to days apart.
pub const BOOT_GAP_S: i64 = 600;

/// The layers whose faults are charged to a GPU (its board, memory, links or power).
pub const GPU_LAYERS: [Layer; 4] = [
    Layer::Hardware,
    Layer::ThermalPower,
    Layer::GpuMemory,
    Layer::Interconnect,
];

/// A bundle's verdict, as in the v1 report.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq, Default)]
pub struct Verdict {
    /// The top incident's layer, `none` when nothing was found.
    pub root_cause_layer: String,
    /// One sentence.
    pub summary: String,
}

/// One incident of a bundle, cut down to what a fleet operator acts on.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct IncidentLine {
    /// `i1`, `i2`, … as in `analyze`.
    pub id: String,
    /// Root-cause layer.
    pub layer: String,
    /// Confidence 0..1.
    pub confidence: f64,
    /// One sentence.
    pub summary: String,
    /// vendor | operator | user.
    pub responsibility: String,
    /// First event time (UTC).
    #[serde(default)]
    pub start: Option<String>,
    /// Last event time (UTC).
    #[serde(default)]
    pub end: Option<String>,
    /// Host of the primary event: the node at fault.
    #[serde(default)]
    pub host: Option<String>,
    /// Every host involved.
    #[serde(default)]
    pub hosts: Vec<String>,
    /// GPUs involved.
    #[serde(default)]
    pub gpus: Vec<String>,
    /// Start of the boot the primary event happened in (UTC, to the second), when known.
    #[serde(default)]
    pub boot: Option<String>,
    /// Evidence as `path:line`.
    #[serde(default)]
    pub evidence: Vec<String>,
    /// What to do.
    #[serde(default)]
    pub actions: Vec<String>,
}

/// A GPU that logged faults in a bundle, with its identity.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct GpuLine {
    /// Host.
    #[serde(default)]
    pub host: Option<String>,
    /// PCI bus id (or the index/UUID the logs used).
    pub bus_id: String,
    /// UUID, when the bundle tells it.
    #[serde(default)]
    pub uuid: Option<String>,
    /// Board serial, when the bundle tells it.
    #[serde(default)]
    pub serial: Option<String>,
    /// Product name.
    #[serde(default)]
    pub name: Option<String>,
    /// Events of severity warning or worse on this GPU, by `kind` or `kind:code`.
    pub codes: BTreeMap<String, u64>,
    /// Failures: events of severity error or worse in a GPU layer (hardware, thermal/power,
    /// GPU memory, interconnect).
    pub failures: u64,
    /// Starts of the boots with failures (UTC, to the second), when known.
    #[serde(default)]
    pub boots: Vec<String>,
    /// Named by an incident's primary event.
    #[serde(default)]
    pub suspect: bool,
}

/// The `faultline/scan/v1` line of one bundle.
#[derive(Serialize, Deserialize, Clone, Debug, PartialEq)]
pub struct BundleLine {
    /// `faultline/scan/v1`.
    pub schema: String,
    /// The bundle's path as shown.
    pub bundle: String,
    /// Its host (host folder name, bug report, log lines, archive name), null when unknown.
    pub host: Option<String>,
    /// Verdict.
    pub verdict: Verdict,
    /// Incidents.
    pub incidents: Vec<IncidentLine>,
    /// Events of severity warning or worse, by `kind` or `kind:code` (`xid:79`).
    pub counts: BTreeMap<String, u64>,
    /// Inputs read (files and archive members).
    pub inputs: usize,
    /// Problems met, each prefixed with the input it concerns.
    pub warnings: Vec<String>,
    /// folder | bug_report | archive | file | unreadable.
    pub kind: String,
    /// Path relative to the scan root: the shard key.
    pub key: String,
    /// GPUs with faults.
    #[serde(default)]
    pub gpus: Vec<GpuLine>,
    /// Driver versions seen (bug report, nvidia-smi, driver loads).
    #[serde(default)]
    pub drivers: Vec<String>,
    /// Bytes analyzed (after decompression).
    #[serde(default)]
    pub bytes: u64,
    /// Bytes on disk.
    #[serde(default)]
    pub disk_bytes: u64,
    /// Nothing in the bundle could be read, or its analysis failed.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub unreadable: bool,
    /// Known issues matched (entry ids, see `faultline explain known-issues`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub known_issues: Vec<String>,
    /// Known issues whose affected versions this bundle runs, whether or not they fired
    /// (`id: version`).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub affected_by: Vec<String>,
    /// What a capture lacks, as its manifest says (`faultline collect` bundles: "no fabric
    /// manager log: the service is not installed").
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub coverage_gaps: Vec<String>,
}

impl BundleLine {
    /// True when the verdict names a fault.
    pub fn failing(&self) -> bool {
        !self.unreadable && self.verdict.root_cause_layer != "none"
    }

    /// The line of a bundle that could not be analyzed at all.
    pub fn failed(b: &Bundle, why: &str) -> BundleLine {
        BundleLine {
            schema: SCAN_SCHEMA.into(),
            bundle: b.name.clone(),
            host: b.host_hint.clone(),
            verdict: Verdict {
                root_cause_layer: "none".into(),
                summary: format!("no data: {why}"),
            },
            incidents: Vec::new(),
            counts: BTreeMap::new(),
            inputs: 0,
            warnings: vec![format!("{}: {why}", b.name)],
            kind: b.kind.as_str().into(),
            key: b.key.clone(),
            gpus: Vec::new(),
            drivers: Vec::new(),
            bytes: 0,
            disk_bytes: b.disk_bytes,
            unreadable: true,
            known_issues: Vec::new(),
            affected_by: Vec::new(),
            coverage_gaps: Vec::new(),
        }
    }
}

/// Formats Unix seconds as `2026-03-14T02:13:07Z`.
pub fn iso_s(secs: i64) -> String {
    chrono::DateTime::from_timestamp(secs, 0).map_or_else(
        || secs.to_string(),
        |d| d.format("%Y-%m-%dT%H:%M:%SZ").to_string(),
    )
}

/// Reads a time written by [`iso_s`] (or any RFC 3339 time) back as Unix seconds.
pub fn parse_iso_s(s: &str) -> Option<i64> {
    chrono::DateTime::parse_from_rfc3339(s)
        .ok()
        .map(|d| d.timestamp())
}

/// Groups boot starts into boots: sorted, and a gap above [`BOOT_GAP_S`] starts a new one.
/// Returns the earliest start of each boot. The result does not depend on the input order.
pub fn boot_clusters(starts: &[i64]) -> Vec<i64> {
    let mut s = starts.to_vec();
    s.sort_unstable();
    s.dedup();
    let mut out: Vec<i64> = Vec::new();
    let mut last: Option<i64> = None;
    for t in s {
        if last.is_none_or(|l| t - l > BOOT_GAP_S) {
            out.push(t);
        }
        last = Some(t);
    }
    out
}

fn code_key(kind: &str, code: Option<i64>) -> String {
    match code {
        Some(c) => format!("{kind}:{c}"),
        None => kind.to_string(),
    }
}

/// Boot starts (Unix seconds) by host, from the driver loads on the timeline.
fn driver_loads(events: &[Event]) -> BTreeMap<String, Vec<i64>> {
    let mut m: BTreeMap<String, Vec<i64>> = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == "driver_load") {
        if let Some(t) = e.time_us {
            let start = e.uptime_us.map_or(t, |u| t - u as i64);
            m.entry(e.host.as_deref().unwrap_or_default().to_string())
                .or_default()
                .push(start.div_euclid(1_000_000));
        }
    }
    for v in m.values_mut() {
        v.sort_unstable();
    }
    m
}

/// The start of the boot an event happened in: wall time minus kernel uptime when both are
/// known, else the last driver load on its host before it.
fn boot_of(e: &Event, loads: &BTreeMap<String, Vec<i64>>) -> Option<i64> {
    let t = e.time_us?;
    if let Some(u) = e.uptime_us {
        return Some((t - u as i64).div_euclid(1_000_000));
    }
    let secs = t.div_euclid(1_000_000);
    let l = loads.get(e.host.as_deref().unwrap_or(""))?;
    l.iter().rev().find(|&&s| s <= secs).copied()
}

fn bundle_host(b: &Bundle, a: &Analysis) -> Option<String> {
    if b.kind == BundleKind::Folder && b.host_hint.is_some() {
        return b.host_hint.clone();
    }
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for i in &a.inputs {
        if let Some(h) = &i.host {
            *counts.entry(h.as_str()).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|(h, c)| (*c, std::cmp::Reverse(*h)))
        .map(|(h, _)| h.to_string())
        .or_else(|| b.host_hint.clone())
}

fn gpu_lines(a: &Analysis, rep: &Report, loads: &BTreeMap<String, Vec<i64>>) -> Vec<GpuLine> {
    let mut by_bus: BTreeMap<(Option<&str>, &str), usize> = BTreeMap::new();
    let mut by_uuid: BTreeMap<&str, usize> = BTreeMap::new();
    for (i, g) in rep.gpus.iter().enumerate() {
        by_bus.insert((g.host.as_deref(), g.bus_id.as_str()), i);
        if let Some(u) = &g.uuid {
            by_uuid.insert(u.as_str(), i);
        }
    }
    let suspects: BTreeSet<(Option<&str>, &str)> = a
        .incidents
        .iter()
        .filter_map(|inc| inc.primary.map(|p| &a.events[p]))
        .filter_map(|e| Some((e.host.as_deref(), e.gpu.as_deref()?)))
        .collect();
    let mut out: BTreeMap<(Option<String>, String), (GpuLine, Vec<i64>)> = BTreeMap::new();
    for e in &a.events {
        let Some(gpu) = &e.gpu else { continue };
        if e.severity < Severity::Warning {
            continue;
        }
        let key = (e.host.as_deref().map(str::to_string), gpu.to_string());
        let (line, boots) = out.entry(key).or_insert_with(|| {
            let known = by_bus
                .get(&(e.host.as_deref(), &**gpu))
                .or_else(|| by_uuid.get(e.gpu_uuid().unwrap_or(gpu)))
                .map(|&i| &rep.gpus[i]);
            let uuid = e
                .gpu_uuid()
                .map(str::to_string)
                .or_else(|| known.and_then(|g| g.uuid.clone()))
                .or_else(|| gpu.starts_with("GPU-").then(|| gpu.to_string()));
            let line = GpuLine {
                host: e.host.as_deref().map(str::to_string),
                bus_id: gpu.to_string(),
                uuid,
                serial: known.and_then(|g| g.serial.clone()),
                name: known.and_then(|g| g.name.clone()),
                codes: BTreeMap::new(),
                failures: 0,
                boots: Vec::new(),
                suspect: suspects.contains(&(e.host.as_deref(), &**gpu)),
            };
            (line, Vec::new())
        });
        *line.codes.entry(code_key(e.kind, e.code)).or_default() += 1;
        if e.severity >= Severity::Error && GPU_LAYERS.contains(&e.layer) {
            line.failures += 1;
            boots.extend(boot_of(e, loads));
        }
    }
    out.into_values()
        .map(|(mut line, boots)| {
            line.boots = boot_clusters(&boots).into_iter().map(iso_s).collect();
            line
        })
        .collect()
}

fn incident_lines(
    a: &Analysis,
    rep: &Report,
    loads: &BTreeMap<String, Vec<i64>>,
) -> Vec<IncidentLine> {
    a.incidents
        .iter()
        .zip(&rep.incidents)
        .map(|(inc, j)| {
            let primary = inc.primary.or(inc.evidence.first().copied());
            let pe = primary.map(|p| &a.events[p]);
            IncidentLine {
                id: inc.id.clone(),
                layer: inc.layer.as_str().into(),
                confidence: inc.confidence,
                summary: inc.summary.clone(),
                responsibility: inc.responsibility.clone(),
                start: j.start.clone(),
                end: j.end.clone(),
                host: pe.and_then(|e| e.host.as_deref().map(str::to_string)),
                hosts: inc.hosts.clone(),
                gpus: inc.gpus.clone(),
                boot: pe.and_then(|e| boot_of(e, loads)).map(iso_s),
                evidence: inc
                    .evidence
                    .iter()
                    .map(|&i| format!("{}:{}", a.events[i].source.path, a.events[i].source.line))
                    .collect(),
                actions: inc.actions.clone(),
            }
        })
        .collect()
}

/// Builds the line of a bundle from its analysis and the v1 report of that analysis.
pub fn build(b: &Bundle, a: &Analysis, rep: &Report) -> BundleLine {
    let loads = driver_loads(&a.events);
    let mut counts: BTreeMap<String, u64> = BTreeMap::new();
    for e in a.events.iter().filter(|e| e.severity >= Severity::Warning) {
        *counts.entry(code_key(e.kind, e.code)).or_default() += e.weight();
    }
    let mut drivers: BTreeSet<String> = BTreeSet::new();
    for h in &rep.hosts {
        drivers.extend(h.driver.clone());
        drivers.extend(h.boots.iter().filter_map(|x| x.driver.clone()));
    }
    for i in &a.inputs {
        drivers.extend(i.smi_driver.clone());
        drivers.extend(i.bundle.as_ref().and_then(|x| x.driver.clone()));
    }
    let mut warnings: Vec<String> = a.warnings.clone();
    for i in &a.inputs {
        warnings.extend(i.warnings.iter().map(|w| format!("{}: {w}", i.path)));
    }
    BundleLine {
        schema: SCAN_SCHEMA.into(),
        bundle: b.name.clone(),
        host: bundle_host(b, a),
        verdict: Verdict {
            root_cause_layer: rep.verdict.root_cause_layer.into(),
            summary: rep.verdict.summary.clone(),
        },
        incidents: incident_lines(a, rep, &loads),
        counts,
        inputs: a.inputs.len(),
        warnings,
        kind: b.kind.as_str().into(),
        key: b.key.clone(),
        gpus: gpu_lines(a, rep, &loads),
        drivers: drivers.into_iter().collect(),
        bytes: a.inputs.iter().map(|i| i.bytes).sum(),
        disk_bytes: b.disk_bytes,
        unreadable: a.nothing_read() || (a.inputs.is_empty() && !b.files.is_empty()),
        known_issues: a
            .known
            .iter()
            .map(|m| m.id.clone())
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        affected_by: a
            .known_affected
            .iter()
            .map(|x| format!("{}: {}", x.id, x.version))
            .collect::<BTreeSet<_>>()
            .into_iter()
            .collect(),
        coverage_gaps: rep
            .hosts
            .iter()
            .flat_map(|h| h.coverage_gaps.iter().cloned())
            .collect(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boots_cluster_within_the_gap_whatever_the_order() {
        let a = boot_clusters(&[1000, 1003, 50_000, 1598, 50_100, 90_000]);
        let b = boot_clusters(&[90_000, 50_100, 1598, 1000, 50_000, 1003]);
        assert_eq!(a, vec![1000, 50_000, 90_000]);
        assert_eq!(a, b);
        assert!(boot_clusters(&[]).is_empty());
        // a chain of close starts stays one boot
        assert_eq!(boot_clusters(&[0, 500, 1000, 1500]), vec![0]);
    }

    #[test]
    fn iso_round_trips() {
        let t = 1_741_595_482;
        assert_eq!(iso_s(t), "2025-03-10T08:31:22Z");
        assert_eq!(parse_iso_s(&iso_s(t)), Some(t));
    }
}
