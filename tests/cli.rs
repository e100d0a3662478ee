//! The command line end to end: JSON fields, determinism, text report, explain, exit statuses.

mod common;
use common::*;

#[test]
fn json_report_has_the_contract_fields_and_is_byte_identical_across_runs() {
    let (c1, a, _) = run(&["analyze", "--format", "json", "corpus/xid79-aer-dmesg/"]);
    let (c2, b, _) = run(&["analyze", "--format", "json", "corpus/xid79-aer-dmesg/"]);
    assert_eq!((c1, c2), (0, 0));
    assert_eq!(a, b, "two runs differ");
    let r: serde_json::Value = serde_json::from_str(&a).unwrap();
    assert_eq!(r["schema"], "faultline/report/v1");
    assert_eq!(r["tool"]["name"], "faultline");
    let input = &r["inputs"][0];
    for k in [
        "path",
        "format",
        "lines",
        "lines_recognized",
        "events",
        "warnings",
    ] {
        assert!(!input[k].is_null(), "inputs[0].{k} missing");
    }
    assert_eq!(input["format"], "dmesg");
    let text = std::fs::read("corpus/xid79-aer-dmesg/dmesg.txt").unwrap();
    assert_eq!(
        input["lines"].as_u64().unwrap(),
        text.iter().filter(|&&c| c == b'\n').count() as u64
    );
    let events = r["events"].as_array().unwrap();
    assert!(!events.is_empty());
    for e in events {
        for k in [
            "id",
            "time_quality",
            "source",
            "kind",
            "layer",
            "severity",
            "message",
        ] {
            assert!(!e[k].is_null(), "event field {k} missing in {e}");
        }
        assert!(e["source"]["line"].as_u64().unwrap() >= 1);
    }
    let xid79 = events
        .iter()
        .find(|e| e["kind"] == "xid" && e["code"] == 79)
        .expect("Xid 79 event");
    assert_eq!(xid79["gpu"], "0000:3b:00.0");
    assert!(xid79["message"]
        .as_str()
        .unwrap()
        .contains("NVRM: Xid (PCI:0000:3b:00): 79"));
    // the cited line is the verbatim line of the file
    let line_no = xid79["source"]["line"].as_u64().unwrap() as usize;
    let line = String::from_utf8_lossy(&text)
        .lines()
        .nth(line_no - 1)
        .unwrap()
        .to_string();
    assert_eq!(xid79["message"].as_str().unwrap(), line);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    let inc = &r["incidents"][0];
    assert_eq!(inc["root_cause"]["layer"], "hardware");
    assert_eq!(inc["root_cause"]["responsibility"], "vendor");
    let ev_ids: Vec<&str> = events.iter().map(|e| e["id"].as_str().unwrap()).collect();
    for id in inc["root_cause"]["evidence"].as_array().unwrap() {
        assert!(
            ev_ids.contains(&id.as_str().unwrap()),
            "evidence {id} is not an event id"
        );
    }
    assert!(inc["actions"].as_array().is_some_and(|a| !a.is_empty()));
}

#[test]
fn text_report_names_the_gpu_the_layer_and_the_evidence() {
    let (code, out, _) = run(&["analyze", "--format", "text", "corpus/xid79-aer-dmesg/"]);
    assert_eq!(code, 0);
    insta::assert_snapshot!("text_xid79_aer_dmesg", out);
}

#[test]
fn canonical_multi_host_case_names_the_gpu_not_the_network() {
    let r = analyze_json(&["corpus/multi-host-gpu-lost/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    let summary = r["verdict"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("0000:3b:00.0") && summary.contains("gpu-node-03"),
        "{summary}"
    );
    assert!(
        summary.contains("nccl_timeout"),
        "the chain of consequences is shown: {summary}"
    );
}

#[test]
fn explain_prints_meaning_layer_and_resolution() {
    let (code, out, _) = run(&["explain", "xid", "79"]);
    assert_eq!(code, 0);
    assert!(out.contains("layer: hardware"), "{out}");
    assert!(out.contains("RESTART_BM"), "{out}");
    let (code, out, _) = run(&["explain", "kind", "fell_off_bus"]);
    assert_eq!(code, 0, "{out}");
    let (code, _, err) = run(&["explain", "xid", "99999"]);
    assert_eq!(code, 2, "{err}");
}

#[test]
fn exit_statuses_follow_the_contract() {
    let (code, _, err) = run(&["analyze", "--format", "json", "no/such/file.log"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = run(&[
        "analyze",
        "--format",
        "json",
        "--fail-on",
        "hardware",
        "corpus/xid79-aer-dmesg/",
    ]);
    assert_eq!(code, 1);
    let (code, _, _) = run(&[
        "analyze",
        "--format",
        "json",
        "--fail-on",
        "application",
        "corpus/xid79-aer-dmesg/",
    ]);
    assert_eq!(code, 0);
    let (code, _, _) = run(&[
        "analyze",
        "--format",
        "json",
        "--fail-on",
        "nonsense",
        "corpus/xid79-aer-dmesg/",
    ]);
    assert_eq!(code, 2);
}

#[test]
fn markdown_report_cites_evidence_and_suspect_gpu() {
    let (code, out, _) = run(&["analyze", "--format", "markdown", "corpus/bug-report-a100/"]);
    assert_eq!(code, 0);
    assert!(out.starts_with("# GPU incident report"));
    assert!(
        out.contains("nvidia-bug-report.log:"),
        "evidence with path:line"
    );
    assert!(out.contains("## Suspect GPUs"), "{out}");
}

#[test]
fn output_file_is_written_and_never_over_an_input() {
    let dir = tempfile::tempdir().unwrap();
    let report = dir.path().join("r.json");
    let (code, _, err) = run(&[
        "analyze",
        "--format",
        "json",
        "-o",
        report.to_str().unwrap(),
        "corpus/xid79-aer-dmesg/dmesg.txt",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&report).unwrap()).unwrap();
    assert_eq!(v["schema"], "faultline/report/v1");
    let victim = dir.path().join("in.log");
    std::fs::write(&victim, "hello\n").unwrap();
    let (code, _, _) = run(&[
        "analyze",
        "--format",
        "json",
        "-o",
        victim.to_str().unwrap(),
        victim.to_str().unwrap(),
    ]);
    assert_eq!(code, 2);
    assert_eq!(std::fs::read_to_string(&victim).unwrap(), "hello\n");
}

#[test]
fn redact_leaves_no_original_value_in_any_format() {
    let secrets = ["gpu-node-03", "gpu-node-01", "gpu-node-08"];
    let mut aliases = Vec::new();
    for fmt in ["json", "text", "markdown", "html"] {
        // one key for every format (without one, each run draws its own)
        let (code, out, err) = run(&[
            "analyze",
            "--redact-key",
            "k",
            "--format",
            fmt,
            "corpus/multi-host-gpu-lost/",
        ]);
        assert_eq!(code, 0, "{err}");
        for s in secrets {
            assert!(!out.contains(s), "{fmt} output still holds {s}");
        }
        // the suspect host's alias is the same in every format
        let line = out
            .lines()
            .find(|l| l.contains("fell off the bus") && l.contains("host-"))
            .unwrap_or_else(|| panic!("{fmt}: no verdict line"));
        let alias = line
            .split_whitespace()
            .find(|w| w.starts_with("host-"))
            .unwrap()
            .trim_matches(|c: char| !c.is_ascii_alphanumeric() && c != '-')
            .to_string();
        aliases.push(alias);
    }
    assert!(aliases.windows(2).all(|w| w[0] == w[1]), "{aliases:?}");
    let (_, plain, _) = run(&["analyze", "--format", "json", "corpus/xid79-aer-dmesg/"]);
    assert!(plain.contains("GPU-b3f1ad1d") && plain.contains("1324021076543"));
    // serials and UUIDs are redacted by --redact (--redact-serials is kept as its synonym)
    for (fmt, flag) in [
        ("json", "--redact"),
        ("text", "--redact"),
        ("markdown", "--redact-serials"),
        ("html", "--redact"),
    ] {
        let (_, hidden, _) = run(&["analyze", flag, "--format", fmt, "corpus/xid79-aer-dmesg/"]);
        // the GPU table holds the serial with no `serial` word before it
        assert!(
            !hidden.contains("GPU-b3f1ad1d") && !hidden.contains("1324021076543"),
            "{fmt}: serials and UUIDs hidden"
        );
        if fmt == "json" {
            serde_json::from_str::<serde_json::Value>(&hidden).expect("still valid JSON");
        }
    }
}

#[cfg(unix)]
#[test]
fn output_never_replaces_an_input_through_links_and_leaves_no_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path();
    let input = p.join("in.log");
    std::fs::write(&input, "hello\n").unwrap();
    let analyze_to = |out: &std::path::Path, inputs: &[&std::path::Path]| {
        let mut args = vec!["analyze", "--format", "json", "-o", out.to_str().unwrap()];
        args.extend(inputs.iter().map(|i| i.to_str().unwrap()));
        run(&args)
    };
    // a symbolic link to the input, and a hard link to it
    std::os::unix::fs::symlink(&input, p.join("soft.json")).unwrap();
    std::fs::hard_link(&input, p.join("hard.json")).unwrap();
    for name in ["soft.json", "hard.json"] {
        let (code, _, err) = analyze_to(&p.join(name), &[&input]);
        assert_eq!(code, 2, "{name}: {err}");
        assert!(err.contains("refusing to write over an input"), "{err}");
        assert_eq!(std::fs::read_to_string(&input).unwrap(), "hello\n");
    }
    assert!(std::fs::symlink_metadata(p.join("soft.json"))
        .unwrap()
        .file_type()
        .is_symlink());
    // a file inside an input folder
    let folder = p.join("logs");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("a.log"), "x\n").unwrap();
    let (code, _, err) = analyze_to(&folder.join("a.log"), &[&folder]);
    assert_eq!(code, 2, "{err}");
    assert_eq!(
        std::fs::read_to_string(folder.join("a.log")).unwrap(),
        "x\n"
    );
    // a folder that does not exist: an error, and nothing is created
    let (code, _, err) = analyze_to(&p.join("missing/r.json"), &[&input]);
    assert_eq!(code, 2, "{err}");
    assert!(!p.join("missing").exists());
    // an old report is replaced whole, and no temp file is left beside it
    let out = p.join("out");
    std::fs::create_dir(&out).unwrap();
    std::fs::write(out.join("r.json"), "old").unwrap();
    let (code, _, err) = analyze_to(&out.join("r.json"), &[&input]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("r.json")).unwrap()).unwrap();
    assert_eq!(v["schema"], "faultline/report/v1");
    let names: Vec<String> = std::fs::read_dir(&out)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(names, vec!["r.json".to_string()]);
}

#[test]
fn every_input_accounts_for_its_lines_and_the_report_says_what_was_skipped() {
    let (code, out, err) = run(&["analyze", "--format", "json", "corpus/multi-host-gpu-lost/"]);
    assert_eq!(code, 0, "{err}");
    let r: serde_json::Value = serde_json::from_str(&out).unwrap();
    let mut lines = 0;
    for i in r["inputs"].as_array().unwrap() {
        let n = i["lines"].as_u64().unwrap();
        let rec = i["lines_recognized"].as_u64().unwrap();
        let un = i["lines_unrecognized"].as_u64().unwrap();
        assert_eq!(n, rec + un, "{}", i["path"]);
        lines += n;
    }
    let acc = &r["accounting"];
    assert_eq!(acc["lines"], lines);
    assert_eq!(
        acc["lines"].as_u64().unwrap(),
        acc["lines_recognized"].as_u64().unwrap() + acc["lines_unrecognized"].as_u64().unwrap()
    );
    assert_eq!(acc["skipped"].as_array().unwrap().len(), 0);
    assert!(
        acc["summary"]
            .as_str()
            .unwrap()
            .ends_with("nothing skipped"),
        "{acc}"
    );
    let (_, text, _) = run(&["analyze", "--format", "text", "corpus/multi-host-gpu-lost/"]);
    assert!(
        text.contains("Read 16 inputs from 8 hosts: ") && text.contains("nothing skipped"),
        "{text}"
    );
}
