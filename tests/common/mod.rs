//! Helpers shared by the integration tests.
#![allow(dead_code)]

pub mod schema;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The project root.
pub fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// `../shared` when it exists (a user's clone will not have it).
pub fn shared() -> Option<PathBuf> {
    let p = root().join("../shared");
    p.is_dir().then_some(p)
}

/// Runs the binary; returns (status, stdout, stderr).
pub fn run(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(root())
        .output()
        .expect("run faultline");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Runs `analyze --format json` and parses the report.
pub fn analyze_json(paths: &[&str]) -> Value {
    let mut args = vec!["analyze", "--format", "json"];
    args.extend_from_slice(paths);
    let (code, out, err) = run(&args);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out}"))
}

/// Checks a report against an expectation file of the corpus schema; returns the problems.
pub fn check_expected(report: &Value, expected: &Value) -> Vec<String> {
    let mut problems = Vec::new();
    let events = report["events"].as_array().cloned().unwrap_or_default();
    for want in expected["events"].as_array().cloned().unwrap_or_default() {
        let kind = want["kind"].as_str().unwrap_or("");
        let code = want.get("code").and_then(Value::as_i64);
        let need = want
            .get("count_at_least")
            .and_then(Value::as_u64)
            .unwrap_or(1) as usize;
        // `kinds`: any of these kinds counts (an expectation that accepts a generic kind)
        let kinds: Vec<&str> = want["kinds"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_str).collect())
            .unwrap_or_else(|| vec![kind]);
        let got = events
            .iter()
            .filter(|e| {
                kinds.iter().any(|k| e["kind"] == *k)
                    && (code.is_none() || e["code"].as_i64() == code)
            })
            .count();
        if got < need {
            problems.push(format!(
                "{kind}{} found {got}, want at least {need}",
                code.map(|c| format!(":{c}")).unwrap_or_default()
            ));
        }
    }
    let layer = report["verdict"]["root_cause_layer"].as_str().unwrap_or("");
    let want = expected["root_cause_layer"].as_str().unwrap_or("");
    let acceptable: Vec<&str> = expected["acceptable_layers"]
        .as_array()
        .map(|a| a.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    if layer != want && !acceptable.contains(&layer) {
        problems.push(format!("verdict {layer}, want {want}"));
    }
    if let Some(ff) = expected.get("first_fault") {
        let ok = report["incidents"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| i["root_cause"]["layer"] == layer)
            .is_some_and(|inc| {
                inc["root_cause"]["evidence"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .any(|id| {
                        events.iter().any(|e| {
                            e["id"] == *id
                                && e["host"] == ff["host"]
                                && (ff.get("gpu").is_none() || e["gpu"] == ff["gpu"])
                        })
                    })
            });
        if !ok {
            problems.push(format!("first fault not cited on {}", ff));
        }
    }
    problems
}

/// Log files of a case folder (without its notes and expectations).
pub fn case_files(dir: &Path) -> Vec<String> {
    let mut files: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            !matches!(
                p.file_name().and_then(|n| n.to_str()),
                Some("SOURCE.md" | "expected.json")
            )
        })
        .map(|p| p.display().to_string())
        .collect();
    files.sort();
    files
}

/// The report's events.
pub fn events(r: &Value) -> Vec<Value> {
    r["events"].as_array().cloned().unwrap_or_default()
}

/// The report's events of one kind.
pub fn of_kind(r: &Value, kind: &str) -> Vec<Value> {
    events(r)
        .into_iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

/// The report's incidents.
pub fn incidents(r: &Value) -> Vec<Value> {
    r["incidents"].as_array().cloned().unwrap_or_default()
}

/// The incident whose cause a given rule named.
pub fn by_rule(r: &Value, rule: &str) -> Value {
    incidents(r)
        .into_iter()
        .find(|i| i["root_cause"]["rule"] == rule)
        .unwrap_or_else(|| panic!("no incident named by {rule}: {}", r["incidents"]))
}

/// Writes `text` to `name` in a fresh folder and analyzes the folder.
pub fn analyze_text(name: &str, text: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("gpu-node-99");
    std::fs::create_dir(&host).unwrap();
    std::fs::write(host.join(name), text).unwrap();
    analyze_json(&[dir.path().to_str().unwrap()])
}

/// Writes (path under a fresh folder, text) files and analyzes the folder; the first folder of
/// each path is its host.
pub fn analyze_files(files: &[(&str, &str)]) -> Value {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(&p, text).unwrap();
    }
    analyze_json(&[dir.path().to_str().unwrap()])
}

/// Megatron iteration lines every 20 iterations from 2026-02-10 08:00:00 with the given step
/// times (ms); each `insert` line goes in front of the sample of its index (0-based).
pub fn megatron_log(step_ms: &[f64], insert: &[(usize, &str)]) -> String {
    use std::fmt::Write as _;
    let mut t = chrono::NaiveDate::from_ymd_opt(2026, 2, 10)
        .unwrap()
        .and_hms_opt(8, 0, 0)
        .unwrap();
    let mut out = String::new();
    for (i, ms) in step_ms.iter().enumerate() {
        for (at, line) in insert {
            if *at == i {
                let _ = writeln!(out, "{line}");
            }
        }
        t += chrono::Duration::milliseconds((ms * 20.0) as i64);
        let _ = writeln!(
            out,
            " [{}] iteration {:>8}/   10000 | consumed samples: {:>10} | elapsed time per iteration (ms): {ms:.1} | learning rate: 1.0E-04 | global batch size:   256 | lm loss: 3.1E+00 |",
            t.format("%Y-%m-%d %H:%M:%S"),
            (i + 1) * 20,
            (i + 1) * 20 * 256
        );
    }
    out
}

/// The case folders (those with an `expected.json`) under `root`, sorted; none when `root` is
/// absent.
pub fn case_dirs(root: &Path) -> Vec<PathBuf> {
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(root)
        .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
        .unwrap_or_default();
    dirs.retain(|p| p.join("expected.json").is_file());
    dirs.sort();
    dirs
}

/// The real-case releases under `../shared` (`corpus-real`, `corpus-real-next`,
/// `corpus-real-3`, and any later `corpus-real-N`), sorted by name: every release is scored
/// without a code change. Empty when `../shared` is absent.
pub fn real_case_folders() -> Vec<String> {
    let Some(shared) = shared() else {
        return Vec::new();
    };
    let mut names: Vec<String> = std::fs::read_dir(shared)
        .map(|r| r.filter_map(|e| e.ok()).collect::<Vec<_>>())
        .unwrap_or_default()
        .into_iter()
        .filter(|e| e.path().is_dir())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("corpus-real"))
        .collect();
    names.sort();
    names
}
