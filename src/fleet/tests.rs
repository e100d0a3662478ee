//! Unit tests of the fleet summary on hand-made bundle lines: identities joined across
//! bundles, one boot captured twice counted once, driver clusters, order independence.

use super::bundle::{BundleLine, GpuLine, IncidentLine, Verdict};
use super::summary::{fold, FleetSummary};
use std::collections::BTreeMap;

fn line(bundle: &str, host: &str, driver: &str, layer: &str, gpu: Option<GpuLine>) -> BundleLine {
    let incidents = (layer != "none")
        .then(|| IncidentLine {
            id: "i1".into(),
            layer: layer.into(),
            confidence: 0.9,
            summary: String::new(),
            responsibility: "vendor".into(),
            start: None,
            end: None,
            host: Some(host.into()),
            hosts: vec![host.into()],
            gpus: vec![],
            boot: gpu.as_ref().and_then(|g| g.boots.first().cloned()),
            evidence: vec![],
            actions: vec![],
        })
        .into_iter()
        .collect();
    BundleLine {
        schema: "faultline/scan/v1".into(),
        bundle: bundle.into(),
        host: Some(host.into()),
        verdict: Verdict {
            root_cause_layer: layer.into(),
            summary: String::new(),
        },
        incidents,
        counts: BTreeMap::new(),
        inputs: 1,
        warnings: vec![],
        kind: "folder".into(),
        key: bundle.into(),
        gpus: gpu.into_iter().collect(),
        drivers: vec![driver.into()],
        bytes: 1,
        disk_bytes: 1,
        unreadable: false,
        known_issues: vec![],
        affected_by: vec![],
        coverage_gaps: vec![],
    }
}

fn gpu(serial: Option<&str>, uuid: Option<&str>, boot: &str) -> GpuLine {
    GpuLine {
        host: Some("h1".into()),
        bus_id: "0000:3b:00.0".into(),
        uuid: uuid.map(str::to_string),
        serial: serial.map(str::to_string),
        name: None,
        codes: BTreeMap::from([("xid:79".to_string(), 1)]),
        failures: 1,
        boots: vec![boot.into()],
        suspect: true,
    }
}

#[test]
fn summary_joins_identities_counts_boots_once_and_finds_driver_clusters() {
    let mut lines = vec![
        // one GPU known by serial+UUID, then by UUID only: one GPU, two boots
        line(
            "a",
            "h1",
            "550.54.15",
            "hardware",
            Some(gpu(Some("S1"), Some("U1"), "2026-03-02T00:00:00Z")),
        ),
        line(
            "b",
            "h1",
            "550.54.15",
            "hardware",
            Some(gpu(None, Some("U1"), "2026-03-09T00:00:00Z")),
        ),
        // the same boot captured twice (boot estimates 2 minutes apart): one occasion
        line(
            "c",
            "h2",
            "550.54.15",
            "gpu_memory",
            Some(gpu(Some("S2"), None, "2026-03-02T00:00:00Z")),
        ),
        line(
            "d",
            "h2",
            "550.54.15",
            "gpu_memory",
            Some(gpu(Some("S2"), None, "2026-03-02T00:02:00Z")),
        ),
    ];
    for i in 0..8 {
        lines.push(line(
            &format!("z{i}"),
            &format!("k{i}"),
            "535.161.08",
            if i == 0 { "hardware" } else { "none" },
            None,
        ));
    }
    let f = fold(&lines);
    assert_eq!(f.failing_gpus, 2);
    assert_eq!(f.gpus.len(), 1, "{:?}", f.gpus);
    assert_eq!(
        (f.gpus[0].serials.clone(), f.gpus[0].uuids.clone()),
        (vec!["S1".to_string()], vec!["U1".to_string()])
    );
    assert_eq!(
        f.nodes.iter().map(|n| n.host.as_str()).collect::<Vec<_>>(),
        ["h1"]
    );
    let d550 = f.drivers.iter().find(|d| d.version == "550.54.15").unwrap();
    assert!(d550.cluster && d550.fault_rate == 1.0, "{d550:?}");
    assert_eq!(d550.layer_clusters, ["gpu_memory", "hardware"]);
    assert!(
        !f.drivers
            .iter()
            .find(|d| d.version == "535.161.08")
            .unwrap()
            .cluster
    );
    // the order of the lines and repeated lines change nothing but the duplicate count
    let mut shuffled: Vec<BundleLine> = lines.iter().rev().cloned().collect();
    shuffled.push(lines[3].clone());
    let g = fold(&shuffled);
    assert_eq!(g.duplicates, 1);
    assert_eq!(
        serde_json::to_value(&g).unwrap()["gpus"],
        serde_json::to_value(&f).unwrap()["gpus"]
    );
    assert_eq!(FleetSummary { duplicates: 0, ..g }, f);
}
