//! nvidia-bug-report bundles and nvidia-smi dumps: sections, host facts, inventory, gz bundles.

mod common;
use common::*;
use std::io::Write;

#[test]
fn gzip_bundle_of_many_members_reads_like_the_plain_one() {
    let plain = std::fs::read_to_string(
        root().join("corpus/bug-report-v100-gz-driver-update/nvidia-bug-report.log"),
    )
    .unwrap();
    // nvidia-bug-report.sh appends every section as its own gzip member
    let mut gz = Vec::new();
    for part in plain.split_inclusive("____________________________________________\n") {
        let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        e.write_all(part.as_bytes()).unwrap();
        gz.extend(e.finish().unwrap());
    }
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("nvidia-bug-report.log.gz");
    std::fs::write(&f, &gz).unwrap();
    let a = analyze_json(&[f.to_str().unwrap()]);
    let b = analyze_json(&["corpus/bug-report-v100-gz-driver-update/nvidia-bug-report.log"]);
    assert_eq!(a["inputs"][0]["format"], "bug_report");
    assert_eq!(a["inputs"][0]["lines"], b["inputs"][0]["lines"]);
    assert_eq!(a["verdict"], b["verdict"]);
    assert_eq!(
        a["events"].as_array().unwrap().len(),
        b["events"].as_array().unwrap().len()
    );
    let ev = a["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "xid" && e["code"] == 79)
        .expect("Xid 79");
    assert!(ev["source"]["path"]
        .as_str()
        .unwrap()
        .ends_with("nvidia-bug-report.log.gz"));
    let line = ev["source"]["line"].as_u64().unwrap() as usize;
    assert_eq!(
        plain.lines().nth(line - 1).unwrap(),
        ev["message"].as_str().unwrap().lines().next().unwrap(),
        "the line number points into the decompressed bundle"
    );
}

#[test]
fn bundle_gives_host_facts_inventory_and_suspect_gpu() {
    let r = analyze_json(&["corpus/bug-report-a100/"]);
    let host = &r["hosts"][0];
    assert_eq!(host["host"], "dgx-07");
    assert!(
        host["driver"]
            .as_str()
            .is_some_and(|d| d.starts_with("535.")),
        "{host}"
    );
    assert!(host["captured_at"].as_str().is_some(), "{host}");
    let gpus = r["gpus"].as_array().unwrap();
    assert!(gpus.len() >= 2);
    let suspect: Vec<&serde_json::Value> = gpus.iter().filter(|g| g["suspect"] == true).collect();
    assert_eq!(suspect.len(), 1);
    assert_eq!(suspect[0]["bus_id"], "0000:4e:00.0");
    assert!(suspect[0]["uuid"]
        .as_str()
        .is_some_and(|u| u.starts_with("GPU-")));
}

#[test]
fn cut_short_bundle_reports_coverage_gaps() {
    let r = analyze_json(&["corpus/bug-report-truncated/"]);
    let gaps = r["hosts"][0]["coverage_gaps"].to_string();
    assert!(gaps.contains("End of NVIDIA bug report"), "{gaps}");
    assert!(gaps.contains("nvidia-smi"), "{gaps}");
}

#[test]
fn driver_change_before_the_fault_is_an_alternative() {
    let r = analyze_json(&["corpus/bug-report-v100-gz-driver-update/"]);
    let inc = &r["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["root_cause"]["layer"] == "hardware")
        .expect("hardware incident")
        .clone();
    let alts = inc["alternatives"].to_string();
    assert!(
        alts.contains("driver_stack") && alts.contains("470.199.02") && alts.contains("535.183.01"),
        "{alts}"
    );
}

#[test]
fn counters_alone_make_a_gpu_memory_finding() {
    let r = analyze_json(&["corpus/bug-report-h100-rotated-counters/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "gpu_memory");
    let xids = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|e| e["kind"] == "xid")
        .count();
    assert_eq!(xids, 0, "no Xid survived in the logs");
}
