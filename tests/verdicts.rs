//! How good the verdicts are on every release of real public cases under `../shared`
//! (`corpus-real`, `corpus-real-next`, `corpus-real-3`, and any later `corpus-real-N`, found by
//! name): top-1 and top-2 accuracy of the root-cause layer per release, the naive baseline (the
//! layer of the first Xid, `unknown` without one) beside them, and the calibration of the
//! confidence over all of them (per bucket: how often a verdict of that confidence was right,
//! and the Brier score). A release listed in [`FLOORS`] is held to its floors, which only go up;
//! a release not yet listed is scored and printed, and held only to beating the naive reading.

mod common;
use common::*;
use serde_json::Value;

/// Per release: (folder, top-1 floor, top-2 floor). Top-2 counts the verdict or its first
/// alternative of another layer.
const FLOORS: [(&str, f64, f64); 3] = [
    ("corpus-real", 0.95, 0.97),
    ("corpus-real-next", 0.95, 0.97),
    ("corpus-real-3", 0.95, 0.97),
];
/// A confidence bucket may claim at most this much more than its accuracy.
const MAX_OVERCONFIDENCE: f64 = 0.1;
/// Buckets with fewer verdicts than this are printed but not held to the bound.
const MIN_BUCKET: usize = 4;

struct Scored {
    folder: String,
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

fn score(folder: &str, name: &str, report: &Value, expected: &Value) -> Scored {
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
        folder: folder.to_string(),
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
    let folders = real_case_folders();
    for folder in &folders {
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
    let mut below = Vec::new();
    for folder in &folders {
        let part: Vec<&Scored> = all.iter().filter(|s| &s.folder == folder).collect();
        let m = part.len().max(1) as f64;
        let frac = |f: &dyn Fn(&&Scored) -> bool| part.iter().filter(|s| f(s)).count() as f64 / m;
        let (t1, t2, nv) = (frac(&|s| s.ok), frac(&|s| s.top2), frac(&|s| s.naive));
        let floor = FLOORS.iter().find(|(f, _, _)| f == folder);
        eprintln!(
            "  {folder}: {} cases, top-1 {:.1}%, top-2 {:.1}%, naive {:.1}%{}",
            part.len(),
            100.0 * t1,
            100.0 * t2,
            100.0 * nv,
            match floor {
                Some((_, f1, f2)) => format!(" (floors {:.0}% / {:.0}%)", 100.0 * f1, 100.0 * f2),
                None => " (a new release: no floor yet, add it to FLOORS)".to_string(),
            }
        );
        if let Some((_, f1, f2)) = floor {
            if t1 < *f1 || t2 < *f2 {
                below.push(format!(
                    "{folder}: top-1 {t1:.3} / top-2 {t2:.3} below the floors {f1} / {f2}"
                ));
            }
        }
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
    assert!(below.is_empty(), "{}", below.join("; "));
    assert!(
        top1 > naive,
        "the verdicts do no better than the first Xid's layer"
    );
    assert!(over.is_empty(), "over-confident: {}", over.join("; "));
}
