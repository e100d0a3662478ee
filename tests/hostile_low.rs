//! Issue 37, the low findings: invisible characters escaped in text output, `--rules` paths
//! escaped in errors, the `-o` temp file removed when a write passes `ulimit -f`, generic folder
//! names never taken as hosts, and `scan` stopping when its reader is gone. Each failed before.

mod common;
use common::*;

const XID: &str = "[ 100.000000] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n";

#[test]
fn invisible_characters_are_escaped_in_text_output() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("kern\u{200b}.log");
    std::fs::write(&f, XID).unwrap();
    let (_, out, _) = run(&["analyze", "--format", "text", f.to_str().unwrap()]);
    assert!(out.contains("kern\\u{200b}.log"), "{out}");
    assert!(!out.contains('\u{200b}'));
    for fmt in ["markdown", "html"] {
        let (_, out, _) = run(&["analyze", "--format", fmt, f.to_str().unwrap()]);
        assert!(!out.contains('\u{200b}'), "{fmt}");
        assert!(out.contains("U+200B"), "{fmt}");
    }
}

#[test]
fn a_rules_path_is_escaped_in_its_error() {
    let (code, _, err) = run(&["analyze", "--rules", "/nonexistent/\u{1b}[2Jx.toml", "x"]);
    assert_eq!(code, 2);
    assert!(!err.contains('\u{1b}') && err.contains("\\e[2J"), "{err}");
}

#[test]
fn generic_folder_names_are_never_hosts() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("case");
    for folder in ["slurm", "logs", "nodes", "var", "tmp"] {
        std::fs::create_dir_all(case.join(folder)).unwrap();
        std::fs::write(
            case.join(folder).join("job.out"),
            format!("SLURM_JOB_NODELIST=gpu-node-[01-02]\n{XID}"),
        )
        .unwrap();
    }
    let c = case.to_str().unwrap();
    let (_, out, _) = run(&["analyze", "--format", "json", c]);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    for e in v["events"].as_array().unwrap() {
        let h = e["host"].as_str().unwrap_or("");
        assert!(
            !["slurm", "logs", "nodes", "var", "tmp"].contains(&h),
            "{h} taken as a host"
        );
    }
    let (_, out, _) = run(&["analyze", "--redact-key", "k", "--format", "json", c]);
    assert!(
        out.contains("/slurm/job.out"),
        "a generic folder was aliased"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn the_temp_file_is_removed_when_a_write_passes_the_file_size_limit() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("kern.log");
    std::fs::write(&log, XID.repeat(20_000)).unwrap();
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let report = out.join("report.json");
    let status = std::process::Command::new("sh")
        .arg("-c")
        .arg(format!(
            "ulimit -f 8; exec \"$0\" analyze --format json --max-events-per-kind 100000 -o '{}' '{}'",
            report.display(),
            log.display()
        ))
        .arg(env!("CARGO_BIN_EXE_faultline"))
        .status()
        .unwrap();
    assert!(!status.success());
    let left: Vec<_> = std::fs::read_dir(&out).unwrap().flatten().collect();
    assert!(
        left.is_empty(),
        "left behind: {:?}",
        left.iter().map(|e| e.path()).collect::<Vec<_>>()
    );
}

#[cfg(unix)]
#[test]
fn scan_stops_when_its_reader_is_gone() {
    use std::process::{Command, Stdio};
    let dir = tempfile::tempdir().unwrap();
    // enough to scan for a while
    let log = dir.path().join("kern.log");
    let line = "Mar 14 02:10:00 gpu-node-07 kernel: NVRM: Xid (PCI:0000:3b:00): 13, pid=1, name=python, Graphics Exception\n";
    std::fs::write(&log, line.repeat(3_000_000)).unwrap();
    let mut child = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args([
            "scan",
            "--jobs",
            "1",
            "--format",
            "jsonl",
            dir.path().to_str().unwrap(),
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    // the reader goes away at once
    drop(child.stdout.take());
    let t0 = std::time::Instant::now();
    loop {
        if child.try_wait().unwrap().is_some() {
            break;
        }
        if t0.elapsed().as_secs() > 20 {
            child.kill().unwrap();
            panic!("scan went on for 20 s after its reader closed");
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    eprintln!(
        "scan stopped {} ms after its reader closed",
        t0.elapsed().as_millis()
    );
    assert!(t0.elapsed().as_millis() < 2_000);
}
