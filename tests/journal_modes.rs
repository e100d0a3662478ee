//! Every `journalctl -o` mode, written by the real journalctl: a journal is built from a small
//! export-format fixture with `systemd-journal-remote`, exported in each mode, and each export must
//! give the same events, with the time and host where the mode prints them. The binary file
//! itself is read through `journalctl --file`, and without journalctl a warning says how to
//! export it. Skips (with a message) where systemd's tools are absent.

mod common;
use common::*;
use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::Command;

const T0: i64 = 1_711_000_000_123_456;

/// One journal entry in the export format; a MESSAGE with a newline is a binary field.
fn entry(out: &mut Vec<u8>, i: i64, host: &str, ident: &str, pid: Option<u32>, msg: &str) {
    let mut field = |k: &str, v: &str| {
        if v.contains('\n') {
            out.extend_from_slice(format!("{k}\n").as_bytes());
            out.extend_from_slice(&(v.len() as u64).to_le_bytes());
            out.extend_from_slice(v.as_bytes());
            out.push(b'\n');
        } else {
            out.extend_from_slice(format!("{k}={v}\n").as_bytes());
        }
    };
    field("__CURSOR", &format!("s=faultline;i={i}"));
    field("__REALTIME_TIMESTAMP", &(T0 + i * 1_000_000).to_string());
    field(
        "__MONOTONIC_TIMESTAMP",
        &(5_000_000 + i * 1_000_000).to_string(),
    );
    field("_BOOT_ID", "0123456789abcdef0123456789abcdef");
    field("_HOSTNAME", host);
    field("SYSLOG_IDENTIFIER", ident);
    field("PRIORITY", "3");
    if let Some(pid) = pid {
        field("_PID", &pid.to_string());
        field("_TRANSPORT", "syslog");
    } else {
        field("_TRANSPORT", "kernel");
        field(
            "_SOURCE_MONOTONIC_TIMESTAMP",
            &(5_000_000 + i * 1_000_000).to_string(),
        );
    }
    field("MESSAGE", msg);
    out.push(b'\n');
}

fn fixture() -> Vec<u8> {
    let mut b = Vec::new();
    entry(
        &mut b,
        0,
        "gpu-node7",
        "kernel",
        None,
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.",
    );
    entry(
        &mut b,
        1,
        "gpu-node7",
        "kernel",
        None,
        "pcieport 0000:3a:00.0: AER: Uncorrected (Fatal) error received: 0000:3a:00.0",
    );
    entry(
        &mut b,
        2,
        "gpu-node8",
        "python3",
        Some(4242),
        "Traceback (most recent call last):\n  File \"train.py\", line 1",
    );
    entry(&mut b, 3, "gpu-node8", "kernel", None,
        "NVRM: Xid (PCI:0000:86:00): 48, pid=4242, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.");
    b
}

fn journal_remote() -> Option<PathBuf> {
    [
        "/usr/lib/systemd/systemd-journal-remote",
        "/lib/systemd/systemd-journal-remote",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists())
}

fn tools() -> Option<PathBuf> {
    let journalctl = Command::new("journalctl").arg("--version").output();
    if !journalctl.is_ok_and(|o| o.status.success()) {
        eprintln!("skipped: journalctl is not installed (Debian: systemd)");
        return None;
    }
    let remote = journal_remote();
    if remote.is_none() {
        eprintln!(
            "skipped: systemd-journal-remote is absent (apt-get install systemd-journal-remote)"
        );
    }
    remote
}

/// Writes the fixture to a binary journal in `dir`.
fn write_journal(remote: &Path, dir: &Path) -> PathBuf {
    let export = dir.join("fixture.export");
    std::fs::write(&export, fixture()).unwrap();
    let journal = dir.join("fixture.journal");
    let out = Command::new(remote)
        .arg(format!("--output={}", journal.display()))
        .arg(&export)
        .output()
        .expect("systemd-journal-remote ran");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    journal
}

/// (kind, host, time to the second, uptime) of each event, in order.
fn summary(r: &Value) -> Vec<(String, Value, Value, Value)> {
    let mut v: Vec<_> = events(r)
        .iter()
        .map(|e| {
            let t = e["time"].as_str().map(|t| Value::from(&t[..19]));
            (
                e["kind"].as_str().unwrap().to_string(),
                e["host"].clone(),
                t.unwrap_or(Value::Null),
                e["uptime_s"].clone(),
            )
        })
        .collect();
    v.sort_by(|a, b| {
        (&a.0, a.1.to_string(), a.2.to_string()).cmp(&(&b.0, b.1.to_string(), b.2.to_string()))
    });
    v
}

#[test]
fn every_journalctl_mode_gives_the_same_events() {
    let Some(remote) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let journal = write_journal(&remote, dir.path());
    let want_kinds = ["fell_off_bus", "pcie_aer", "xid", "xid"];
    // the truth: the binary journal read through journalctl
    let truth = summary(&analyze_json(&[journal.to_str().unwrap()]));
    let kinds: Vec<&str> = truth.iter().map(|t| t.0.as_str()).collect();
    assert!(want_kinds.iter().all(|k| kinds.contains(k)), "{truth:?}");
    for t in &truth {
        assert!(t.1.is_string() && t.2.is_string(), "time and host: {t:?}");
    }
    // mode, carries a wall time, carries a year, carries a host, carries an uptime
    let modes = [
        ("short", true, false, true, false),
        ("short-iso", true, true, true, false),
        ("short-iso-precise", true, true, true, false),
        ("short-precise", true, false, true, false),
        ("short-full", true, true, true, false),
        ("short-unix", true, true, true, false),
        ("short-monotonic", false, false, true, true),
        ("short-delta", false, false, true, true),
        ("with-unit", true, true, true, false),
        ("json", true, true, true, false),
        ("json-pretty", true, true, true, false),
        ("json-seq", true, true, true, false),
        ("json-sse", true, true, true, false),
        ("export", true, true, true, false),
        ("verbose", true, true, true, false),
        ("cat", false, false, false, false),
    ];
    for (mode, wall, year, host, uptime) in modes {
        let out = Command::new("journalctl")
            .args([
                "--file",
                journal.to_str().unwrap(),
                "--no-pager",
                "-o",
                mode,
            ])
            .env("TZ", "UTC")
            .output()
            .expect("journalctl ran");
        assert!(
            out.status.success(),
            "{mode}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let case = dir.path().join(mode);
        std::fs::create_dir_all(&case).unwrap();
        let file = case.join("journal.txt");
        std::fs::write(&file, &out.stdout).unwrap();
        let mut args = vec![file.to_str().unwrap()];
        if !year {
            args.splice(0..0, ["--year", "2024"]);
        }
        let got = summary(&analyze_json(&args));
        assert_eq!(got.len(), truth.len(), "{mode}: {got:?}");
        for (g, t) in got.iter().zip(&truth) {
            assert_eq!(g.0, t.0, "{mode}: kind");
            if host {
                assert_eq!(g.1, t.1, "{mode}: host of {}", g.0);
            }
            if wall {
                assert_eq!(g.2, t.2, "{mode}: time of {}", g.0);
            }
            if uptime {
                assert!(g.3.is_number(), "{mode}: uptime of {}", g.0);
            }
        }
    }
}

#[test]
fn a_binary_journal_without_journalctl_says_how_to_export_it() {
    let Some(remote) = tools() else { return };
    let dir = tempfile::tempdir().unwrap();
    let journal = write_journal(&remote, dir.path());
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(["analyze", "--format", "json", journal.to_str().unwrap()])
        .env("PATH", dir.path())
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(
        err.contains("journalctl --file")
            && err.contains("-o export")
            && err.contains("not installed"),
        "{err}"
    );
}

/// Issue 37: a gigantic MESSAGE in `journalctl -o json` (or `json-pretty`) is cut before it is
/// decoded (it was decoded whole: 2 GiB for a 1 GiB field), with the long-line warning; the Xid at
/// its start and the entries after it are still read.
#[test]
fn a_huge_json_field_is_cut_with_a_warning_and_the_rest_read() {
    let huge = format!(
        "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus. {}",
        "x\\\"y\\u00e9".repeat(400_000)
    );
    let entry = |t: u64, msg: &str| {
        format!(
            "{{\"__REALTIME_TIMESTAMP\":\"{t}\",\"_HOSTNAME\":\"gpu-node-7\",\"_BOOT_ID\":\"b1\",\"MESSAGE\":\"{msg}\"}}\n"
        )
    };
    let text = entry(1_710_382_387_000_000, "kernel: booted")
        + &entry(1_710_382_388_000_000, &huge)
        + &entry(
            1_710_382_389_000_000,
            "NVRM: Xid (PCI:0000:5e:00): 48, pid=2, name=python, An uncorrectable double bit error",
        );
    let r = common::analyze_text("journal.json", &text);
    let input = &r["inputs"][0];
    assert_eq!(input["lines"], 3, "{input}");
    let warned = input["warnings"].as_array().unwrap().iter().any(|w| {
        w.as_str()
            .unwrap()
            .contains("1 line longer than 65536 bytes")
    });
    assert!(warned, "{input}");
    let xids: Vec<String> = common::events(&r)
        .iter()
        .filter(|e| e["kind"] == "xid")
        .map(|e| e["code"].to_string())
        .collect();
    assert_eq!(xids, ["79", "48"], "{r}");
}
