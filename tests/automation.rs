//! The habits of automation and reference use: `explain` as a reference of the catalog (every
//! form, JSON, ranges of unknown codes, a closed stdout), strict exits (`--fail-on any`, no
//! recognizable input, `merge --expect`), capped warnings, tagged timeline JSON, and the
//! OpenMetrics output of `scan`.

mod common;
use common::*;
use std::process::{Command, Stdio};

fn ok(args: &[&str]) -> String {
    let (code, out, err) = run(args);
    assert_eq!(code, 0, "{args:?}: {err}");
    out
}

#[test]
fn explain_lists_families_codes_and_explains_every_form() {
    let fams = ok(&["explain"]);
    for f in ["xid", "sxid", "dcgm", "kind", "layer"] {
        assert!(fams.contains(&format!("  {f} ")), "{fams}");
    }
    // every catalog code, one line each
    let catalog = faultline::catalog::Catalog::builtin();
    let xids = ok(&["explain", "xid"]);
    assert_eq!(xids.lines().count(), catalog.xid.len());
    assert!(xids
        .lines()
        .any(|l| l.trim_start().starts_with("79 ") && l.contains("fallen off the bus")));
    let sxids = ok(&["explain", "sxid"]);
    assert_eq!(sxids.lines().count(), catalog.sxid.len());
    // one entry, many spellings
    let xid79 = ok(&["explain", "xid", "79"]);
    for form in [
        vec!["79"],
        vec!["xid79"],
        vec!["Xid 79"],
        vec!["XID", "79"],
        vec!["Xid", "79"],
    ] {
        let mut a = vec!["explain"];
        a.extend(form.iter());
        assert_eq!(ok(&a), xid79, "{form:?}");
    }
    assert!(ok(&["explain", "sxid", "20034"]).starts_with("SXid 20034"));
    assert!(ok(&["explain", "sxid20034"]).starts_with("SXid 20034"));
    let (name, d) = catalog.dcgm.iter().next().unwrap();
    let t = ok(&["explain", "dcgm", name]);
    assert!(t.starts_with(name.as_str()) && t.contains(&d.title), "{t}");
    assert_eq!(ok(&["explain", &name.to_lowercase()]), t);
    assert!(ok(&["explain", "kind", "hung_task"]).starts_with("hung_task — "));
    let l = ok(&["explain", "layer", "interconnect"]);
    assert!(
        l.starts_with("interconnect — ") && l.contains("Xid codes: 74"),
        "{l}"
    );
    assert_eq!(ok(&["explain", "layer", "INTERCONNECT"]), l);
}

#[test]
fn explain_json_carries_a_schema_and_the_entry() {
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["explain", "xid", "--format", "json"])).unwrap();
    assert_eq!(v["schema"], "faultline/explain/v1");
    assert_eq!(v["family"], "xid");
    let n = faultline::catalog::Catalog::builtin().xid.len();
    assert_eq!(v["entries"].as_array().unwrap().len(), n);
    let v: serde_json::Value =
        serde_json::from_str(&ok(&["explain", "--format", "json", "Xid 79"])).unwrap();
    assert_eq!(v["entry"]["code"], 79);
    assert_eq!(v["entry"]["layer"], "hardware");
    let v: serde_json::Value = serde_json::from_str(&ok(&["explain", "--format", "json"])).unwrap();
    assert_eq!(v["families"].as_array().unwrap().len(), 5);
}

#[test]
fn an_unknown_code_says_what_is_known_about_its_range() {
    let catalog = faultline::catalog::Catalog::builtin();
    // a gap inside NVIDIA's numbering, past the edition, an NVSwitch family, nothing at all
    let gap = (1..173).find(|c| !catalog.xid.contains_key(c)).unwrap();
    for (args, expect) in [
        (
            vec!["explain".to_string(), gap.to_string()],
            "NVIDIA's Xid catalog numbers its codes 1 to 173",
        ),
        (
            vec!["explain".into(), "xid".into(), "175".into()],
            "newer driver",
        ),
        (
            vec!["explain".into(), "sxid".into(), "20099".into()],
            "NVLink data-link errors",
        ),
        (
            vec!["explain".into(), "xid".into(), "99999".into()],
            "no range of known Xid codes",
        ),
        (
            vec!["explain".into(), "no_such_kind".into()],
            "not a kind, a family or a layer",
        ),
        (
            vec!["explain".into(), "layer".into(), "gpu".into()],
            "one of hardware",
        ),
    ] {
        let a: Vec<&str> = args.iter().map(String::as_str).collect();
        let (code, out, err) = run(&a);
        assert_eq!(code, 2, "{args:?}");
        assert!(out.is_empty());
        assert!(err.contains(expect), "{args:?}: {err}");
    }
}

#[test]
fn explain_into_a_closed_pipe_does_not_panic() {
    let bin = env!("CARGO_BIN_EXE_faultline");
    for args in ["explain", "explain xid", "explain sxid --format json"] {
        let out = Command::new("sh")
            .arg("-c")
            .arg(format!("'{bin}' {args} | head -1"))
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        assert!(out.status.success());
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(!err.contains("panicked"), "{args}: {err}");
        assert_eq!(String::from_utf8_lossy(&out.stdout).lines().count(), 1);
    }
}

/// Checks text against the exposition grammar: `# HELP name text`, `# TYPE name type` before
/// a family's samples, samples `name{label="value",...} number`, families contiguous, no
/// series twice, a final `# EOF`. Returns the samples (name with labels → value).
fn parse_exposition(text: &str) -> std::collections::BTreeMap<String, f64> {
    let ident = |s: &str, colon: bool| {
        let mut cs = s.chars();
        cs.next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || (colon && c == ':'))
            && cs.all(|c| c.is_ascii_alphanumeric() || c == '_' || (colon && c == ':'))
    };
    let mut typed: Vec<String> = Vec::new();
    let mut samples = std::collections::BTreeMap::new();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.last(), Some(&"# EOF"), "no # EOF at the end");
    assert!(text.ends_with("# EOF\n"));
    for line in &lines[..lines.len() - 1] {
        if let Some(rest) = line.strip_prefix("# ") {
            let mut w = rest.splitn(3, ' ');
            let (kw, name) = (w.next().unwrap(), w.next().unwrap_or(""));
            assert!(ident(name, true), "bad name: {line}");
            match kw {
                "HELP" => assert!(!w.next().unwrap_or("").is_empty(), "{line}"),
                "TYPE" => {
                    let t = w.next().unwrap_or("");
                    assert!(
                        ["gauge", "counter", "info", "stateset", "unknown"].contains(&t),
                        "{line}"
                    );
                    assert!(!typed.contains(&name.to_string()), "family twice: {name}");
                    typed.push(name.to_string());
                }
                _ => panic!("unknown comment: {line}"),
            }
            continue;
        }
        // name, labels, value
        let (series, value) = line.rsplit_once(' ').unwrap_or_else(|| panic!("{line}"));
        let v: f64 = value
            .parse()
            .unwrap_or_else(|_| panic!("bad value: {line}"));
        let (name, labels) = match series.split_once('{') {
            Some((n, l)) => (
                n,
                Some(l.strip_suffix('}').unwrap_or_else(|| panic!("{line}"))),
            ),
            None => (series, None),
        };
        assert!(ident(name, true), "bad metric name: {line}");
        assert_eq!(
            typed.last().map(String::as_str),
            Some(name),
            "sample outside its family: {line}"
        );
        if let Some(mut l) = labels {
            while !l.is_empty() {
                let (k, rest) = l.split_once("=\"").unwrap_or_else(|| panic!("{line}"));
                assert!(ident(k, false), "bad label name: {line}");
                // the value runs to the first unescaped quote
                let mut end = None;
                let mut esc = false;
                for (i, c) in rest.char_indices() {
                    match (esc, c) {
                        (true, '\\' | '"' | 'n') => esc = false,
                        (true, _) => panic!("bad escape: {line}"),
                        (false, '\\') => esc = true,
                        (false, '"') => {
                            end = Some(i);
                            break;
                        }
                        (false, '\n') => panic!("raw newline: {line}"),
                        _ => {}
                    }
                }
                let end = end.unwrap_or_else(|| panic!("unterminated value: {line}"));
                l = rest[end + 1..]
                    .strip_prefix(',')
                    .unwrap_or(&rest[end + 1..]);
            }
        }
        assert!(
            samples.insert(series.to_string(), v).is_none(),
            "series twice: {line}"
        );
    }
    samples
}

#[test]
fn scan_writes_openmetrics_that_parses_by_the_grammar() {
    let (code, out, err) = run(&["scan", "--format", "openmetrics", "--quiet", "corpus"]);
    assert_eq!(code, 0, "{err}");
    let m = parse_exposition(&out);
    let bundles = m["faultline_bundles_scanned"];
    assert!(bundles > 30.0);
    let by_result: f64 = ["failing", "clean", "unreadable"]
        .iter()
        .map(|r| m[&format!("faultline_bundles{{result=\"{r}\"}}")])
        .sum();
    assert_eq!(by_result, bundles);
    assert!(m["faultline_incidents{layer=\"hardware\"}"] >= 1.0);
    assert!(m
        .keys()
        .any(|k| k.starts_with("faultline_code_events{kind=\"xid\"")
            || k.starts_with("faultline_code_events{kind=\"fell_off_bus\",code=\"79\"}")));
    assert!(m.contains_key("faultline_scan_duration_seconds"));
    // the same numbers as the JSON fleet line
    let (_, jsonl, _) = run(&["scan", "--format", "jsonl", "--quiet", "corpus"]);
    let fleet: serde_json::Value = serde_json::from_str(jsonl.lines().last().unwrap()).unwrap();
    assert_eq!(fleet["bundles"].as_f64(), Some(bundles));
    assert_eq!(
        fleet["failing"].as_f64(),
        Some(m["faultline_bundles{result=\"failing\"}"])
    );
    // the extension .prom chooses it; merge writes it too (without a scan duration)
    let dir = tempfile::tempdir().unwrap();
    let prom = dir.path().join("faultline.prom");
    let (code, _, err) = run(&["scan", "--quiet", "-o", prom.to_str().unwrap(), "corpus"]);
    assert_eq!(code, 0, "{err}");
    parse_exposition(&std::fs::read_to_string(&prom).unwrap());
    let lines = dir.path().join("scan.jsonl");
    std::fs::write(&lines, &jsonl).unwrap();
    let (code, out, err) = run(&["merge", "--format", "openmetrics", lines.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    let merged = parse_exposition(&out);
    assert_eq!(merged["faultline_bundles_scanned"], bundles);
    assert!(!merged.contains_key("faultline_scan_duration_seconds"));
}

#[test]
fn fail_on_takes_any_and_any_case_and_lists_its_values() {
    let case = "corpus/xid79-aer-dmesg/";
    for v in ["any", "ANY", "HARDWARE", "Hardware", "application,hardware"] {
        let (code, _, err) = run(&["analyze", "--format", "json", "--fail-on", v, case]);
        assert_eq!(code, 1, "{v}: {err}");
    }
    let (code, _, _) = run(&[
        "analyze",
        "--format",
        "json",
        "--fail-on",
        "any",
        "corpus/clean-node/",
    ]);
    assert_eq!(code, 0);
    let (code, _, err) = run(&["analyze", "--format", "json", "--fail-on", "gpu", case]);
    assert_eq!(code, 2);
    assert!(
        err.contains("one of: any, hardware, thermal_power, gpu_memory"),
        "{err}"
    );
    let (_, help, _) = run(&["analyze", "--help"]);
    assert!(help.contains("any, hardware, thermal_power"), "{help}");
}

#[test]
fn no_recognizable_input_exits_2_with_a_message() {
    let dir = tempfile::tempdir().unwrap();
    let empty = dir.path().join("empty");
    std::fs::create_dir(&empty).unwrap();
    let (code, out, err) = run(&["analyze", "--format", "json", empty.to_str().unwrap()]);
    assert_eq!(code, 2);
    assert!(out.is_empty());
    assert!(err.contains("no file to analyze"), "{err}");
    // empty files and binaries only: the report is written, and exit 2
    let junk = dir.path().join("junk");
    std::fs::create_dir(&junk).unwrap();
    std::fs::write(junk.join("empty.log"), "").unwrap();
    std::fs::write(
        junk.join("blob.bin"),
        [0u8, 1, 2, 0, 0xff, 0, 7, 0].repeat(64),
    )
    .unwrap();
    let (code, out, err) = run(&["analyze", "--format", "json", junk.to_str().unwrap()]);
    assert_eq!(code, 2, "{err}");
    assert!(
        err.contains("no input gave a line faultline recognizes"),
        "{err}"
    );
    assert!(serde_json::from_str::<serde_json::Value>(&out).is_ok());
    // text that no reader knows: a warning, exit 0
    let notes = dir.path().join("notes");
    std::fs::create_dir(&notes).unwrap();
    std::fs::write(notes.join("notes.txt"), "shopping list\nmilk\n").unwrap();
    let (code, _, err) = run(&["analyze", "--format", "json", notes.to_str().unwrap()]);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("warning: no input gave a line faultline recognizes"),
        "{err}"
    );
}

fn shards(dir: &std::path::Path) -> Vec<String> {
    (0..3)
        .map(|k| {
            let out = dir.join(format!("shard-{k}.jsonl"));
            let shard = format!("{k}/3");
            let (code, _, err) = run(&[
                "scan",
                "--quiet",
                "--format",
                "jsonl",
                "--shard",
                &shard,
                "-o",
                out.to_str().unwrap(),
                "corpus",
            ]);
            assert_eq!(code, 0, "{err}");
            out.to_string_lossy().into_owned()
        })
        .collect()
}

#[test]
fn merge_fails_when_shards_are_missing_or_repeated_and_caps_warnings() {
    let dir = tempfile::tempdir().unwrap();
    let files = shards(dir.path());
    let merge = |extra: &[&str], files: &[&String]| {
        let mut a = vec!["merge", "--format", "jsonl"];
        a.extend_from_slice(extra);
        a.extend(files.iter().map(|s| s.as_str()));
        run(&a)
    };
    let all: Vec<&String> = files.iter().collect();
    assert_eq!(merge(&[], &all).0, 0);
    assert_eq!(merge(&["--expect", "3"], &all).0, 0);
    // missing, by the recorded N and by --expect
    let (code, out, err) = merge(&[], &all[..2]);
    assert_eq!(code, 2, "{err}");
    assert!(!out.is_empty());
    assert!(
        err.contains("incomplete: missing shard output: 2/3"),
        "{err}"
    );
    let (code, _, err) = merge(&["--expect", "3"], &all[1..]);
    assert_eq!(code, 2);
    assert!(err.contains("missing shard output: 0/3"), "{err}");
    let (code, _, err) = merge(&["--expect", "4"], &all);
    assert_eq!(code, 2);
    assert!(
        err.contains("--expect 4: shard outputs of a split into 3"),
        "{err}"
    );
    // repeated
    let twice = vec![all[0], all[1], all[2], all[1]];
    let (code, _, err) = merge(&[], &twice);
    assert_eq!(code, 2);
    assert!(err.contains("shard 1/3 given more than once"), "{err}");
    // a file that is not JSON Lines: a few warnings and one count, not one per line
    let junk = dir.path().join("junk.log");
    std::fs::write(&junk, "not json\n".repeat(5000)).unwrap();
    let junk = junk.to_string_lossy().into_owned();
    let (_, _, err) = merge(&[], &[&junk, all[0], all[1], all[2]]);
    assert!(err.lines().count() < 10, "{err}");
    assert!(err.contains("4997 more lines skipped as not JSON"), "{err}");
}

#[test]
fn timeline_json_carries_a_schema_and_refuses_report_formats() {
    let case = "corpus/xid79-aer-dmesg/";
    let (code, out, _) = run(&["timeline", "--format", "json", case]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["schema"], "faultline/timeline/v1");
    assert!(v["events"].as_array().unwrap().len() >= 5);
    let (code, out, _) = run(&["timeline", "--format", "jsonl", case]);
    assert_eq!(code, 0);
    for l in out.lines() {
        let e: serde_json::Value = serde_json::from_str(l).unwrap();
        assert_eq!(e["schema"], "faultline/timeline/v1");
        assert!(e["kind"].is_string());
    }
    for f in ["markdown", "html"] {
        let (code, out, err) = run(&["timeline", "--format", f, case]);
        assert_eq!(code, 2);
        assert!(out.is_empty());
        assert!(err.contains("timeline does not write"), "{err}");
    }
    let (code, _, err) = run(&["analyze", "--format", "jsonl", case]);
    assert_eq!(code, 2);
    assert!(err.contains("analyze does not write jsonl"), "{err}");
}

#[test]
fn color_follows_the_flag_the_terminal_and_no_color() {
    let case = "corpus/xid79-aer-dmesg/";
    let esc = |args: &[&str], no_color: bool| {
        let mut c = Command::new(env!("CARGO_BIN_EXE_faultline"));
        c.args(args).current_dir(root());
        if no_color {
            c.env("NO_COLOR", "1");
        } else {
            c.env_remove("NO_COLOR");
        }
        let out = c.output().unwrap();
        (
            String::from_utf8_lossy(&out.stdout).into_owned(),
            out.stderr,
        )
    };
    let (always, err) = esc(
        &[
            "analyze", "--format", "text", "-v", "--color", "always", case,
        ],
        false,
    );
    assert!(
        always.starts_with("faultline ")
            && always
                .lines()
                .next()
                .unwrap()
                .contains("verdict: \x1b[1;31mHARDWARE\x1b[0m"),
        "{always}"
    );
    // the chain row of the primary fault is critical: bold red
    assert!(
        always
            .lines()
            .any(|l| l.starts_with("\x1b[1;31m    e") && l.contains("primary")),
        "{always}"
    );
    // the Xid 79 row of the event list (-v) is critical: bold red
    assert!(
        always
            .lines()
            .any(|l| l.starts_with("\x1b[1;31m  e") && l.contains("xid 79")),
        "{always}"
    );
    // no progress drawn when stderr is not a terminal
    assert!(err.is_empty(), "{}", String::from_utf8_lossy(&err));
    for (args, no_color) in [
        (vec!["analyze", "--format", "text", case], false),
        (
            vec!["analyze", "--format", "text", "--color", "never", case],
            false,
        ),
        (vec!["timeline", "--format", "text", case], true),
    ] {
        let (out, _) = esc(&args, no_color);
        assert!(!out.contains('\x1b'), "{args:?}");
    }
    // JSON is never coloured
    let (json, _) = esc(
        &["analyze", "--format", "json", "--color", "always", case],
        false,
    );
    assert!(!json.contains('\x1b'));
}

/// On a terminal the text report fits its width (COLUMNS, else the terminal's size); into a pipe
/// it keeps one line per row. The terminal is a real pty from util-linux's `script`.
#[test]
fn text_report_wraps_to_the_terminal_width_only_on_a_terminal() {
    let has_script = Command::new("script")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !has_script {
        eprintln!("SKIPPED text_report_wraps_to_the_terminal_width_only_on_a_terminal: `script` (util-linux) is not installed");
        return;
    }
    let bin = env!("CARGO_BIN_EXE_faultline");
    let case = root().join("corpus/multi-host-gpu-lost");
    let cmd = format!(
        "COLUMNS=72 '{bin}' analyze --color never '{}'",
        case.display()
    );
    let out = Command::new("script")
        .args(["-qec", &cmd, "/dev/null"])
        .stdin(Stdio::null())
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).replace('\r', "");
    assert!(text.contains("verdict: HARDWARE"), "{text}");
    let widest = text.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(
        widest <= 72,
        "a line of {widest} columns on a 72-column terminal"
    );
    let piped = Command::new(bin)
        .args(["analyze", "--format", "text"])
        .arg(&case)
        .env("COLUMNS", "72")
        .output()
        .unwrap();
    let piped = String::from_utf8_lossy(&piped.stdout);
    let widest = piped.lines().map(|l| l.chars().count()).max().unwrap_or(0);
    assert!(widest > 72, "a pipe is not wrapped (widest line {widest})");
}
