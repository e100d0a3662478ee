//! What every report says, on every case (the own corpus and ../shared/corpus-real*, all of
//! them): the JSON outputs validate against their schemas in docs/schema/, and the sentences
//! (summaries, actions, alternatives, missing data, notes) read as a person would write them,
//! with no placeholder for a part nobody named. The 64-rank sample's text report fits a screen.

mod common;

use common::schema::validate;
use common::{case_dirs, case_files, root, run, shared};
use regex::Regex;
use serde_json::Value;
use std::path::PathBuf;

fn schema(name: &str) -> Value {
    let p = root().join("docs/schema").join(name);
    serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap()
}

/// Every case: (name, inputs). The own corpus's folders, then each shared set's cases.
fn cases() -> Vec<(String, Vec<String>)> {
    let mut out = Vec::new();
    let corpus = root().join("corpus");
    let mut own: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_dir() && !p.ends_with("expected"))
        .collect();
    own.sort();
    for d in own {
        out.push((d.display().to_string(), vec![d.display().to_string()]));
    }
    let Some(shared) = shared() else {
        eprintln!("skipped: ../shared is absent (only the own corpus is checked)");
        return out;
    };
    let mut sets: Vec<PathBuf> = std::fs::read_dir(&shared)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with("corpus-real"))
        })
        .collect();
    sets.sort();
    for set in sets {
        for d in case_dirs(&set) {
            out.push((d.display().to_string(), case_files(&d)));
        }
    }
    out
}

/// Runs faultline with `args` then `inputs`; the output (exit 0 or 1).
fn output(args: &[&str], inputs: &[String]) -> String {
    let mut all: Vec<&str> = args.to_vec();
    all.push("--quiet");
    all.extend(inputs.iter().map(String::as_str));
    let (code, out, err) = run(&all);
    assert!(code == 0 || code == 1, "{all:?}: exit {code}: {err}");
    out
}

/// What no sentence of a report may contain: a placeholder for an unknown part (`unknown
/// host`, `(none)`, `?`), an empty one (`()`, a doubled space, a space before punctuation),
/// a template field left unfilled (`{host}`), a plural after one (`1 events`), or a sentence
/// ending on `on` or `by` (a place left out).
fn placeholder() -> Regex {
    Regex::new(
        r"(?i)unknown host|unknown gpu|\(none\)|\(\s*\)|\{[a-z_]+\}|  |\s[,.;:)]|\?\)|\s\?[\s,]|^\s|\s$|\b(on|by)$|\b1 (events|hosts|ranks|inputs|lines)\b",
    )
    .unwrap()
}

/// The sentences of a report a person reads.
fn sentences(r: &Value) -> Vec<String> {
    let s = |v: &Value| v.as_str().unwrap_or_default().to_string();
    let mut out = vec![s(&r["verdict"]["summary"])];
    out.extend(r["notes"].as_array().into_iter().flatten().map(s));
    for i in r["incidents"].as_array().into_iter().flatten() {
        out.push(s(&i["root_cause"]["summary"]));
        out.extend(i["actions"].as_array().into_iter().flatten().map(s));
        out.extend(i["missing_data"].as_array().into_iter().flatten().map(s));
        for a in i["alternatives"].as_array().into_iter().flatten() {
            out.push(s(&a["summary"]));
        }
    }
    out
}

#[test]
fn every_report_validates_and_reads_without_placeholders() {
    let report = schema("report.schema.json");
    let bad = placeholder();
    let mut problems = Vec::new();
    let all = cases();
    for (name, inputs) in &all {
        let out = output(&["analyze", "--format", "json"], inputs);
        let r: Value = serde_json::from_str(&out).unwrap();
        for p in validate(&report, &r).into_iter().take(5) {
            problems.push(format!("{name}: report{p}"));
        }
        for s in sentences(&r) {
            if bad.is_match(&s) {
                problems.push(format!("{name}: placeholder in {s:?}"));
            }
        }
    }
    assert!(all.len() >= 30, "{} cases", all.len());
    eprintln!("{} cases checked", all.len());
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn timelines_validate_in_json_and_json_lines() {
    let doc = schema("timeline.schema.json");
    let line = schema("timeline-line.schema.json");
    let mut problems = Vec::new();
    // the events are the report's own objects (checked on every case above); the documents
    // around them on the own corpus
    for (name, inputs) in cases().iter().filter(|(n, _)| n.contains("/corpus/")) {
        let out = output(&["timeline", "--format", "json"], inputs);
        let v: Value = serde_json::from_str(&out).unwrap();
        problems.extend(
            validate(&doc, &v)
                .into_iter()
                .map(|p| format!("{name}: {p}")),
        );
        let out = output(&["timeline", "--format", "jsonl"], inputs);
        for l in out.lines() {
            let v: Value = serde_json::from_str(l).unwrap();
            problems.extend(
                validate(&line, &v)
                    .into_iter()
                    .map(|p| format!("{name}: {p}")),
            );
        }
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn scan_lines_merge_and_explain_validate() {
    let dir = tempfile::tempdir().unwrap();
    let jsonl = dir.path().join("scan.jsonl");
    let (code, _, err) = run(&[
        "scan",
        "--quiet",
        "--format",
        "jsonl",
        "-o",
        jsonl.to_str().unwrap(),
        "corpus/",
    ]);
    assert!(code == 0 || code == 1, "{err}");
    let text = std::fs::read_to_string(&jsonl).unwrap();
    let line = schema("scan-line.schema.json");
    let fleet = schema("fleet.schema.json");
    let mut problems = Vec::new();
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines.len() > 20, "{} lines", lines.len());
    for (n, l) in lines.iter().enumerate() {
        let v: Value = serde_json::from_str(l).unwrap();
        problems.extend(
            validate(&line, &v)
                .into_iter()
                .map(|p| format!("scan line {n}: {p}")),
        );
    }
    let last: Value = serde_json::from_str(lines[lines.len() - 1]).unwrap();
    assert_eq!(last["schema"], "faultline/fleet/v1");
    let (_, merged, err) = run(&["merge", "--format", "jsonl", jsonl.to_str().unwrap()]);
    let merged: Value = serde_json::from_str(merged.lines().last().unwrap_or("")).expect(&err);
    problems.extend(
        validate(&fleet, &merged)
            .into_iter()
            .map(|p| format!("merge: {p}")),
    );
    let explain = schema("explain.schema.json");
    let queries: &[&[&str]] = &[
        &[],
        &["xid"],
        &["sxid"],
        &["dcgm"],
        &["kind"],
        &["layer"],
        &["79"],
        &["sxid", "20034"],
        &["dcgm", "DCGM_FR_XID_ERROR"],
        &["kind", "hung_task"],
        &["layer", "interconnect"],
    ];
    for q in queries {
        let mut args = vec!["explain", "--format", "json"];
        args.extend_from_slice(q);
        let (code, out, err) = run(&args);
        assert_eq!(code, 0, "{q:?}: {err}");
        let v: Value = serde_json::from_str(&out).unwrap();
        problems.extend(
            validate(&explain, &v)
                .into_iter()
                .map(|p| format!("explain {q:?}: {p}")),
        );
    }
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}

#[test]
fn the_validator_rejects_what_the_schema_forbids() {
    let report = schema("report.schema.json");
    let out = output(
        &["analyze", "--format", "json"],
        &["corpus/xid79-aer-dmesg".into()],
    );
    let mut r: Value = serde_json::from_str(&out).unwrap();
    assert!(validate(&report, &r).is_empty());
    r["verdict"]["root_cause_layer"] = "gpu".into();
    r["events"][0]["time_quality"] = Value::Null;
    r["incidents"][0]["root_cause"]
        .as_object_mut()
        .unwrap()
        .remove("evidence");
    let p = validate(&report, &r).join("\n");
    assert!(p.contains("/verdict/root_cause_layer"), "{p}");
    assert!(p.contains("/events/0/time_quality"), "{p}");
    assert!(p.contains("required property evidence"), "{p}");
    assert!(!validate(&serde_json::json!({"oneOf": []}), &r).is_empty());
}

/// Lines `text` takes on a terminal of `width` columns, wrapped as `analyze` wraps (a
/// continuation hangs at most a third of the width in).
fn screen_lines(text: &str, width: usize) -> Vec<usize> {
    text.lines()
        .map(|l| {
            let n = l.chars().count();
            if n <= width {
                1
            } else {
                let room = width - width / 3;
                1 + (n - width).div_ceil(room)
            }
        })
        .collect()
}

#[test]
fn the_64_rank_sample_fits_a_screen_with_the_evidence_on_top() {
    let out = output(
        &["analyze", "--format", "text", "--color", "never"],
        &["corpus/multi-host-gpu-lost/".into()],
    );
    let rows = screen_lines(&out, 120);
    let total: usize = rows.iter().sum();
    assert!(total <= 40, "{total} lines at 120 columns:\n{out}");
    let evidence = out.lines().position(|l| l == "  evidence:").unwrap();
    let last = evidence + 2; // the heading and both lines of the fault
    let through: usize = rows[..=last].iter().sum();
    assert!(
        through <= 20,
        "evidence ends at screen line {through}:\n{out}"
    );
    assert!(
        out.contains("nccl_timeout ×63 on 8 hosts, 02:23:07–02:23:12"),
        "{out}"
    );
    assert!(
        !out.contains("Inputs ("),
        "the inputs table is for -v:\n{out}"
    );
    let verbose = output(
        &["analyze", "--format", "text", "-v"],
        &["corpus/multi-host-gpu-lost/".into()],
    );
    assert!(verbose.contains("Inputs (16):") && verbose.contains("Events (196,"));
}
