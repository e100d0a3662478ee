//! Lines that print only a time of day (`[15:58:29] WARNING …`, `15:57:10,120 INFO …`), end to end
//! from the command line: dated from the host's kernel log beside them, from `--date`, or kept
//! undated (ordered within their file by that time and shown as `15:58:29, date unknown`).

mod common;
use common::*;
use serde_json::Value;

const CASE: &str = "tests/data/times-of-day";
const TRAIN: &str = "tests/data/times-of-day/gpu-node-3/train.log";

fn from(r: &Value, file: &str) -> Vec<Value> {
    events(r)
        .into_iter()
        .filter(|e| e["source"]["path"].as_str().unwrap().ends_with(file))
        .collect()
}

fn json(args: &[&str]) -> Value {
    let mut all = vec!["analyze", "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    serde_json::from_str(&out).unwrap()
}

#[test]
fn a_trainer_log_takes_its_dates_from_the_kernel_log_of_its_host() {
    let r = json(&["--year", "2025", CASE]);
    let train = from(&r, "train.log");
    assert_eq!(train.len(), 3, "{train:?}");
    for e in &train {
        assert_eq!(e["time_quality"], "estimated", "{e}");
        assert!(e.get("time_of_day").is_none(), "{e}");
    }
    let cuda = &of_kind(&r, "cuda_error")[0];
    assert_eq!(cuda["time"], "2025-03-14T15:58:28.000000Z");
    // on one timeline with the kernel's lines: the Xid first, the job's error a second later
    let ids: Vec<String> = events(&r)
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect();
    let xid = ids.iter().position(|k| *k == "xid").unwrap();
    let err = ids.iter().position(|k| *k == "cuda_error").unwrap();
    assert!(xid < err, "{ids:?}");
    // the job's error belongs to the incident of the GPU that fell off the bus
    let inc = &incidents(&r)[0];
    assert_eq!(inc["root_cause"]["layer"], "hardware");
    assert!(inc["events"]
        .as_array()
        .unwrap()
        .contains(&cuda["id"].clone()));
    let notes = r["notes"].to_string();
    assert!(
        notes.contains("train.log: 3 times of day dated from the dated lines of"),
        "{notes}"
    );
}

#[test]
fn an_undated_trainer_log_is_ordered_by_its_times_of_day_and_says_so() {
    let r = json(&[TRAIN]);
    let train = from(&r, "train.log");
    assert_eq!(train.len(), 3);
    for e in &train {
        assert!(e["time"].is_null(), "{e}");
        assert_eq!(e["time_quality"], "none");
    }
    let tods: Vec<&str> = train
        .iter()
        .map(|e| e["time_of_day"].as_str().unwrap())
        .collect();
    assert_eq!(tods, ["15:58:28", "15:58:29", "15:58:29"]);
    // the events are judged, not dropped: one incident holds the job's error
    let inc = &incidents(&r)[0];
    assert!(inc["events"]
        .as_array()
        .unwrap()
        .contains(&of_kind(&r, "cuda_error")[0]["id"].clone()));
    assert!(r["notes"]
        .to_string()
        .contains("with only a time of day that nothing dates"));
    let (_, text, _) = run(&["analyze", "--format", "text", "-v", TRAIN]);
    assert!(text.contains("15:58:28, date unknown"), "{text}");
    let (_, md, _) = run(&["analyze", "--format", "markdown", TRAIN]);
    assert!(md.contains("15:58:28, date unknown"), "{md}");
}

#[test]
fn the_date_option_dates_an_undated_log() {
    let r = json(&["--date", "2025-03-14", TRAIN]);
    let cuda = &of_kind(&r, "cuda_error")[0];
    assert_eq!(cuda["time"], "2025-03-14T15:58:28.000000Z");
    assert_eq!(cuda["time_quality"], "estimated");
    let (code, _, err) = run(&["analyze", "--date", "2025-13-01", TRAIN]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn a_log_that_passes_midnight_counts_the_next_day() {
    let log =
        "[23:59:58] ERROR    RuntimeError: CUDA error: an illegal memory access was encountered\n\
               [00:00:02] WARNING  Sending process 197 closing signal SIGTERM   api.py:699\n";
    let r = analyze_text("train.log", log);
    let ev = events(&r);
    assert_eq!(ev.len(), 2, "{ev:?}");
    assert_eq!(ev[0]["time_of_day"], "23:59:58");
    assert!(ev[0].get("day_in_file").is_none());
    assert_eq!(ev[1]["time_of_day"], "00:00:02");
    assert_eq!(ev[1]["day_in_file"], 1);
    let schema: Value = serde_json::from_str(
        &std::fs::read_to_string(root().join("docs/schema/report.schema.json")).unwrap(),
    )
    .unwrap();
    let problems = common::schema::validate(&schema, &r);
    assert!(problems.is_empty(), "{problems:?}");
    // dated, the second line falls on the next day
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("train.log");
    std::fs::write(&p, log).unwrap();
    let r = json(&["--date", "2025-12-31", p.to_str().unwrap()]);
    let times: Vec<String> = events(&r)
        .iter()
        .map(|e| e["time"].as_str().unwrap().to_string())
        .collect();
    assert_eq!(
        times,
        ["2025-12-31T23:59:58.000000Z", "2026-01-01T00:00:02.000000Z"]
    );
}
