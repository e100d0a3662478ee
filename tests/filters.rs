//! Filters and windows: `--since`/`--until` (absolute, zoned and relative to the logs' ends),
//! `--host`, `--gpu`, `--kind`, `--layer` applied before incidents are formed and echoed in the
//! accounting; `--tz` with IANA zone names, abbreviations and offsets.

mod common;
use common::*;
use serde_json::Value;

const MULTI: &str = "corpus/multi-host-gpu-lost/";

fn json(args: &[&str]) -> Value {
    let mut all = vec!["analyze", "--format", "json"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert!(code == 0 || code == 1, "{args:?}: exit {code}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {err}"))
}

fn kept(r: &Value) -> (u64, u64) {
    let f = &r["accounting"]["filter"];
    (
        f["events_kept"].as_u64().unwrap(),
        f["events_before"].as_u64().unwrap(),
    )
}

#[test]
fn no_filter_no_filter_field() {
    let r = json(&[MULTI]);
    assert!(r["accounting"].get("filter").is_none());
}

#[test]
fn a_time_window_keeps_only_events_inside_it_and_the_verdict_follows() {
    let all = json(&[MULTI]);
    let times: Vec<&str> = all["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["time"].as_str())
        .collect();
    assert!(times.len() > 20);
    // relative to the last event of the logs
    let r = json(&["--since", "-10m", MULTI]);
    let (k, b) = kept(&r);
    assert!(k < b && k > 0, "{k} of {b}");
    let since = r["accounting"]["filter"]["since"].as_str().unwrap();
    assert_eq!(since, "2025-03-14T02:13:41.000000Z");
    for e in r["events"].as_array().unwrap() {
        assert!(e["time"].as_str().unwrap() >= since, "{e}");
    }
    // the fault is before the window: only consequences are left
    assert_ne!(
        r["verdict"]["root_cause_layer"],
        all["verdict"]["root_cause_layer"]
    );
    // absolute bounds, ISO and "date time"; the window is inclusive
    let first = times[0];
    let r = json(&["--until", first, MULTI]);
    let (k, _) = kept(&r);
    assert!(k >= 1);
    for e in r["events"].as_array().unwrap() {
        assert_eq!(e["time"].as_str(), Some(first));
    }
    let r = json(&[
        "--since",
        "2025-03-14 02:00",
        "--until",
        "2025-03-14T02:10:00Z",
        MULTI,
    ]);
    for e in r["events"].as_array().unwrap() {
        let t = e["time"].as_str().unwrap();
        assert!(
            ("2025-03-14T02:00".."2025-03-14T02:10:00.000001Z").contains(&t),
            "{t}"
        );
    }
    // a naive bound is read in --tz: 03:00 in Berlin (winter) is 02:00 UTC
    let utc = json(&["--since", "2025-03-14 02:00", MULTI]);
    let berlin = json(&[
        "--tz",
        "Europe/Berlin",
        "--since",
        "2025-03-14 03:00",
        MULTI,
    ]);
    assert_eq!(
        utc["accounting"]["filter"]["since"],
        berlin["accounting"]["filter"]["since"]
    );
    // the text report says what was filtered
    let (_, text, _) = run(&["analyze", "--format", "text", "--since", "-10m", MULTI]);
    assert!(
        text.contains("\nfilter: since 2025-03-14T02:13:41"),
        "{text}"
    );
}

#[test]
fn host_gpu_kind_and_layer_filters_compose() {
    let r = json(&["--host", "gpu-node-03", MULTI]);
    let hosts: std::collections::BTreeSet<&str> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["host"].as_str())
        .collect();
    assert_eq!(hosts.into_iter().collect::<Vec<_>>(), ["gpu-node-03"]);
    // layers in any case, comma lists and repeats
    let r = json(&[
        "--layer",
        "HARDWARE,driver-stack",
        "--layer",
        "Interconnect",
        MULTI,
    ]);
    for e in r["events"].as_array().unwrap() {
        let l = e["layer"].as_str().unwrap();
        assert!(
            ["hardware", "driver_stack", "interconnect"].contains(&l),
            "{l}"
        );
    }
    assert_eq!(
        r["accounting"]["filter"]["layers"],
        serde_json::json!(["hardware", "driver_stack", "interconnect"])
    );
    // a GPU by short bus id keeps that GPU's events
    let r = json(&[
        "--gpu",
        "3b:00.0",
        "--kind",
        "xid,fell_off_bus",
        "corpus/xid79-aer-dmesg/",
    ]);
    let ev = r["events"].as_array().unwrap();
    assert!(!ev.is_empty());
    for e in ev {
        assert_eq!(e["gpu"], "0000:3b:00.0");
        assert!(["xid", "fell_off_bus"].contains(&e["kind"].as_str().unwrap()));
    }
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    // a host no input has: nothing kept, still a report, exit 0
    let r = json(&["--host", "nosuch", MULTI]);
    assert_eq!(kept(&r).0, 0);
    assert!(r["incidents"].as_array().unwrap().is_empty());
}

#[test]
fn bad_filter_values_are_usage_errors_that_say_what_is_expected() {
    for (args, expect) in [
        (vec!["--since", "yesterday"], "expected a time such as"),
        (vec!["--until", "-3x"], "expected a time such as"),
        (vec!["--layer", "gpu"], "one of: hardware, thermal_power"),
        (vec!["--tz", "Mars/Olympus"], "IANA name"),
    ] {
        let mut all = vec!["analyze", "--format", "json"];
        all.extend(args.iter());
        all.push(MULTI);
        let (code, out, err) = run(&all);
        assert_eq!(code, 2, "{args:?}: {err}");
        assert!(out.is_empty());
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

/// Zone-less syslog stamps in winter and summer, read in a named zone: each gets the offset in
/// force at its own date.
#[test]
fn tz_takes_iana_names_and_abbreviations_and_follows_daylight_saving_time() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("kern.log");
    std::fs::write(
        &log,
        "Jan 15 12:00:00 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n\
         Jul 15 12:00:00 node1 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n",
    )
    .unwrap();
    let log = log.to_str().unwrap();
    let times = |tz: &str| -> Vec<String> {
        let r = json(&["--year", "2024", "--tz", tz, log]);
        r["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| e["kind"] == "xid")
            .map(|e| e["time"].as_str().unwrap().to_string())
            .collect()
    };
    let berlin = times("Europe/Berlin");
    assert_eq!(
        berlin,
        ["2024-01-15T11:00:00.000000Z", "2024-07-15T10:00:00.000000Z"]
    );
    assert_eq!(times("europe/berlin"), berlin);
    // the database's CET zone observes summer time too
    assert_eq!(times("CET"), berlin);
    assert_eq!(
        times("America/New_York"),
        ["2024-01-15T17:00:00.000000Z", "2024-07-15T16:00:00.000000Z"]
    );
    // an abbreviation outside the database is its fixed offset; offsets as before
    assert_eq!(
        times("PST"),
        ["2024-01-15T20:00:00.000000Z", "2024-07-15T20:00:00.000000Z"]
    );
    assert_eq!(times("+08:00")[0], "2024-01-15T04:00:00.000000Z");
    // the times are exact: the zone was given
    let r = json(&["--year", "2024", "--tz", "Europe/Berlin", log]);
    assert_eq!(r["events"][0]["time_quality"], "exact");
}
