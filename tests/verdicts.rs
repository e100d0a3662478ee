//! How good the verdicts are on the real public cases of `../shared/corpus-real` and
//! `../shared/corpus-real-next`: top-1 and top-2 accuracy of the root-cause layer, the naive
//! baseline (the layer of the first Xid, `unknown` without one) on the same cases, and the
//! calibration of the confidence (per bucket: how often a verdict of that confidence was right,
//! and the Brier score). The floors only go up.

mod common;
use common::*;
use serde_json::Value;

/// Top-1 layer accuracy over both folders may not fall below this share.
const FLOOR_TOP1: f64 = 0.95;
/// Top-2 (the verdict or its first alternative of another layer) may not fall below this share.
const FLOOR_TOP2: f64 = 0.97;
/// A confidence bucket may claim at most this much more than its accuracy.
const MAX_OVERCONFIDENCE: f64 = 0.1;
/// Buckets with fewer verdicts than this are printed but not held to the bound.
const MIN_BUCKET: usize = 4;

struct Scored {
    folder: &'static str,
    name: String,
    layer: String,
    ok: bool,
    top2: bool,
    naive: bool,
    confidence: Option<f64>,
}

/// The layers an expectation accepts.
fn accepted(expected: &Value) -> Vec<String> {
    let mut ok = vec![expected["root_cause_layer"]
        .as_str()
        .unwrap_or("")
        .to_string()];
    for a in expected["acceptable_layers"]
        .as_array()
        .into_iter()
        .flatten()
    {
        ok.extend(a.as_str().map(str::to_string));
    }
    ok
}

fn score(folder: &'static str, name: &str, report: &Value, expected: &Value) -> Scored {
    let ok_layers = accepted(expected);
    let layer = report["verdict"]["root_cause_layer"]
        .as_str()
        .unwrap_or("")
        .to_string();
    let incident = report["incidents"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|i| i["root_cause"]["layer"] == layer.as_str());
    let second = incident.and_then(|i| {
        i["alternatives"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a["layer"].as_str())
            .find(|l| *l != layer)
    });
    let first_xid = report["events"]
        .as_array()
        .into_iter()
        .flatten()
        .find(|e| e["kind"] == "xid")
        .and_then(|e| e["layer"].as_str())
        .unwrap_or("unknown");
    let ok = ok_layers.contains(&layer);
    Scored {
        folder,
        name: name.to_string(),
        ok,
        top2: ok || second.is_some_and(|s| ok_layers.iter().any(|l| l == s)),
        naive: ok_layers.iter().any(|l| l == first_xid),
        confidence: incident.and_then(|i| i["root_cause"]["confidence"].as_f64()),
        layer,
    }
}

#[test]
fn verdicts_beat_the_naive_reading_and_their_confidence_is_calibrated() {
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared (real cases) is absent");
        return;
    };
    let mut all = Vec::new();
    for folder in ["corpus-real", "corpus-real-next"] {
        for dir in case_dirs(&shared.join(folder)) {
            let expected: Value =
                serde_json::from_str(&std::fs::read_to_string(dir.join("expected.json")).unwrap())
                    .unwrap();
            let files = case_files(&dir);
            let refs: Vec<&str> = files.iter().map(String::as_str).collect();
            let name = format!("{folder}/{}", dir.file_name().unwrap().to_string_lossy());
            all.push(score(folder, &name, &analyze_json(&refs), &expected));
        }
    }
    if all.is_empty() {
        eprintln!("skipped: no real case under ../shared");
        return;
    }
    let n = all.len() as f64;
    let share = |f: &dyn Fn(&Scored) -> bool| all.iter().filter(|s| f(s)).count() as f64 / n;
    let (top1, top2, naive) = (share(&|s| s.ok), share(&|s| s.top2), share(&|s| s.naive));
    eprintln!(
        "verdicts on {} real cases: top-1 {:.1}%, top-2 {:.1}%; naive first-Xid reading {:.1}%",
        all.len(),
        100.0 * top1,
        100.0 * top2,
        100.0 * naive
    );
    for folder in ["corpus-real", "corpus-real-next"] {
        let part: Vec<&Scored> = all.iter().filter(|s| s.folder == folder).collect();
        let m = part.len().max(1) as f64;
        let pct =
            |f: &dyn Fn(&&Scored) -> bool| 100.0 * part.iter().filter(|s| f(s)).count() as f64 / m;
        eprintln!(
            "  {folder}: {} cases, top-1 {:.1}%, top-2 {:.1}%, naive {:.1}%",
            part.len(),
            pct(&|s| s.ok),
            pct(&|s| s.top2),
            pct(&|s| s.naive)
        );
    }
    for s in all.iter().filter(|s| !s.ok) {
        eprintln!(
            "  wrong: {} gave {} (top-2 {})",
            s.name,
            s.layer,
            if s.top2 { "right" } else { "wrong" }
        );
    }
    // calibration: verdicts with an incident, bucketed by their confidence
    let rated: Vec<&Scored> = all.iter().filter(|s| s.confidence.is_some()).collect();
    let brier = rated
        .iter()
        .map(|s| (s.confidence.unwrap() - f64::from(u8::from(s.ok))).powi(2))
        .sum::<f64>()
        / rated.len().max(1) as f64;
    eprintln!(
        "calibration ({} verdicts with an incident; Brier score {brier:.3}):",
        rated.len()
    );
    eprintln!("  bucket     n  mean-conf  right");
    let mut over = Vec::new();
    for b in 0..5 {
        let (lo, hi) = (b as f64 * 0.2, (b + 1) as f64 * 0.2);
        let inb: Vec<&&Scored> = rated
            .iter()
            .filter(|s| {
                let c = s.confidence.unwrap();
                c >= lo && (c < hi || (b == 4 && c <= 1.0))
            })
            .collect();
        if inb.is_empty() {
            continue;
        }
        let mean = inb.iter().map(|s| s.confidence.unwrap()).sum::<f64>() / inb.len() as f64;
        let right = inb.iter().filter(|s| s.ok).count() as f64 / inb.len() as f64;
        eprintln!(
            "  {lo:.1}-{hi:.1}  {:3}  {mean:9.2}  {right:5.2}",
            inb.len()
        );
        if inb.len() >= MIN_BUCKET && mean - right > MAX_OVERCONFIDENCE {
            over.push(format!(
                "bucket {lo:.1}-{hi:.1} claims {mean:.2} but is right {right:.2}"
            ));
        }
    }
    assert!(
        top1 >= FLOOR_TOP1,
        "top-1 {top1:.3} is below the floor {FLOOR_TOP1}"
    );
    assert!(
        top2 >= FLOOR_TOP2,
        "top-2 {top2:.3} is below the floor {FLOOR_TOP2}"
    );
    assert!(
        top1 > naive,
        "the verdicts do no better than the first Xid's layer"
    );
    assert!(over.is_empty(), "over-confident: {}", over.join("; "));
}
