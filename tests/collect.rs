//! `faultline collect` without a GPU: the node's commands are shims on PATH (small scripts
//! written at test time) that print recorded outputs from the corpus, hang, fail, print garbage
//! or print without end; the manifest must say what each gave, the caps and timeouts must hold,
//! and `analyze` of the bundle must give the verdict of the loose files. A second test runs
//! `collect` for real on this machine (no GPU here: the manifest says why each GPU item is
//! missing) and checks that it finishes within 30 s.

mod common;
use common::*;
use serde_json::Value;
use std::io::Read;
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

/// Writes an executable shell script `name` into `dir`.
fn shim(dir: &Path, name: &str, body: &str) {
    use std::os::unix::fs::PermissionsExt;
    let p = dir.join(name);
    std::fs::write(&p, format!("#!/bin/sh\n{body}\n")).unwrap();
    std::fs::set_permissions(&p, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// Runs `faultline collect` with PATH = the shims first; returns (exit, stderr, time).
fn collect(shims: &Path, args: &[&str]) -> (i32, String, Duration) {
    let t = Instant::now();
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .arg("collect")
        .args(args)
        .env("PATH", format!("{}:/usr/bin:/bin", shims.display()))
        .output()
        .expect("run faultline collect");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stderr).into_owned(),
        t.elapsed(),
    )
}

/// The members of a bundle (name → bytes).
fn members(bundle: &Path) -> Vec<(String, Vec<u8>)> {
    let f = std::fs::File::open(bundle).unwrap();
    let dec = zstd::stream::read::Decoder::new(f).unwrap();
    let mut a = tar::Archive::new(dec);
    let mut out = Vec::new();
    for e in a.entries().unwrap() {
        let mut e = e.unwrap();
        let mut v = Vec::new();
        e.read_to_end(&mut v).unwrap();
        out.push((e.path().unwrap().display().to_string(), v));
    }
    out
}

fn manifest(bundle: &Path) -> Value {
    let m = members(bundle);
    assert_eq!(m[0].0, "manifest.json", "the manifest is the first member");
    serde_json::from_slice(&m[0].1).unwrap()
}

fn item<'a>(m: &'a Value, name: &str) -> &'a Value {
    m["items"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["name"] == name)
        .unwrap_or_else(|| panic!("no item {name} in {m}"))
}

/// The recorded outputs: the kernel log of a GPU that fell off the bus, and an nvidia-smi -q.
fn recorded() -> (PathBuf, PathBuf) {
    let r = root().join("corpus");
    (
        r.join("xid79-aer-dmesg/dmesg.txt"),
        r.join("slowdown-megatron-thermal/gpu-a07/nvidia-smi-q.txt"),
    )
}

/// Shims of a node whose journal is empty: the kernel log comes from `dmesg`, `nvidia-smi -q`
/// prints a recorded dump, the other nvidia-smi modes fail as on a node without NVLink.
fn node_shims(dir: &Path) {
    let (kern, smi) = recorded();
    shim(
        dir,
        "journalctl",
        "echo 'No journal files were found.'; echo '-- No entries --'",
    );
    shim(dir, "dmesg", &format!("cat '{}'", kern.display()));
    shim(
        dir,
        "nvidia-smi",
        &format!(
            "if [ \"$*\" = '-q' ]; then cat '{}'; else echo 'Invalid combination of input arguments.' >&2; exit 2; fi",
            smi.display()
        ),
    );
}

#[test]
fn shims_hang_fail_and_flood_within_their_caps_and_the_verdict_is_the_loose_files() {
    let tmp = tempfile::tempdir().unwrap();
    let shims = tmp.path().join("bin");
    std::fs::create_dir(&shims).unwrap();
    node_shims(&shims);
    // hangs (with a child of its own, killed with its process group)
    shim(&shims, "ibstat", "sleep 60 & sleep 60");
    // fails for lack of privilege, and fails for another reason
    shim(
        &shims,
        "ibv_devinfo",
        "echo 'Failed to get IB devices list: Permission denied' >&2; exit 1",
    );
    shim(
        &shims,
        "lspci",
        "echo 'lspci: Cannot find any working access method.' >&2; exit 1",
    );
    // garbage
    shim(
        &shims,
        "ipmitool",
        "head -c 3000 /dev/urandom; printf '\\033[31m\\n'",
    );
    // output without end: cut at the item's cap (16 MiB)
    shim(&shims, "nvidia-smi", &{
        let (_, smi) = recorded();
        format!(
            "case \"$*\" in '-q') cat '{}';; 'nvlink -s') exec yes 'GPU 0: link 0: <garbage>';; *) echo 'Invalid combination of input arguments.' >&2; exit 2;; esac",
            smi.display()
        )
    });
    // a job log behind a symbolic link is refused
    let job = tmp.path().join("job.out");
    std::fs::write(&job, "step 10 loss 2.0\n").unwrap();
    let link = tmp.path().join("link.out");
    std::os::unix::fs::symlink("/etc/passwd", &link).unwrap();
    let bundle = tmp.path().join("node.tar.zst");
    let (code, err, took) = collect(
        &shims,
        &[
            "-o",
            bundle.to_str().unwrap(),
            "--budget",
            "3",
            "--job-log",
            job.to_str().unwrap(),
            "--job-log",
            link.to_str().unwrap(),
        ],
    );
    assert_eq!(code, 0, "{err}");
    // the hang is killed at the 3 s budget; the rest is quick
    assert!(took < Duration::from_secs(10), "collect took {took:?}");
    let m = manifest(&bundle);
    assert_eq!(m["schema"], "faultline/collect/v1");
    let kernel = item(&m, "kernel");
    assert_eq!(kernel["command"], "dmesg -T");
    assert_eq!(kernel["members"][0], "dmesg.txt");
    let kern_len = std::fs::metadata(recorded().0).unwrap().len();
    assert_eq!(kernel["bytes"], kern_len, "{kernel}");
    assert!(
        kernel["detail"].as_str().unwrap().contains("no entries"),
        "{kernel}"
    );
    assert_eq!(item(&m, "ibstat")["missing"], "timeout", "{m}");
    assert_eq!(item(&m, "ibv-devinfo")["missing"], "permission");
    assert_eq!(item(&m, "lspci")["missing"], "failed");
    assert_eq!(item(&m, "lspci")["exit_status"], 1);
    assert!(item(&m, "lspci")["detail"]
        .as_str()
        .unwrap()
        .contains("exit 1: lspci: Cannot find"));
    assert_eq!(item(&m, "nvidia-smi-topo")["missing"], "failed");
    let ipmi = item(&m, "ipmi-sel");
    assert!(
        ipmi["missing"].is_null() && ipmi["bytes"].as_u64().unwrap() >= 3000,
        "{ipmi}"
    );
    let flood = item(&m, "nvidia-smi-nvlink");
    assert_eq!(flood["truncated"], true, "{flood}");
    assert_eq!(flood["bytes"], 16u64 << 20, "{flood}");
    let jobs = item(&m, "job-logs");
    assert_eq!(
        jobs["members"],
        serde_json::json!(["job/job.out"]),
        "{jobs}"
    );
    assert!(
        jobs["detail"].as_str().unwrap().contains("symbolic link"),
        "{jobs}"
    );
    let all = members(&bundle);
    assert!(
        !all.iter()
            .any(|(_, d)| String::from_utf8_lossy(d).contains("root:x:0:0")),
        "a file behind a link was read"
    );
    // the item durations are bounded by the budget
    for i in m["items"].as_array().unwrap() {
        assert!(i["duration_ms"].as_u64().unwrap() < 6000, "{i}");
    }
    // the hostile bundle is read without trouble
    let r = analyze_json(&[bundle.to_str().unwrap()]);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
}

#[test]
fn a_bundle_reads_like_the_loose_files_with_host_capture_time_and_gaps() {
    let tmp = tempfile::tempdir().unwrap();
    let shims = tmp.path().join("bin");
    std::fs::create_dir(&shims).unwrap();
    node_shims(&shims);
    let bundle = tmp.path().join("node.tar.zst");
    let (code, err, _) = collect(&shims, &["-o", bundle.to_str().unwrap(), "--quiet"]);
    assert_eq!(code, 0, "{err}");
    assert!(err.is_empty(), "--quiet: {err}");
    let m = manifest(&bundle);
    let (kern, smi) = recorded();
    let loose = analyze_json(&[kern.to_str().unwrap(), smi.to_str().unwrap()]);
    let packed = analyze_json(&[bundle.to_str().unwrap()]);
    let layer = |r: &Value| r["verdict"]["root_cause_layer"].clone();
    assert_eq!(layer(&packed), layer(&loose));
    assert_eq!(layer(&packed), "hardware");
    let kinds = |r: &Value| -> Vec<String> {
        let mut k: Vec<String> = incidents(r)
            .iter()
            .map(|i| {
                format!(
                    "{} {}",
                    i["layer"],
                    i["summary"]
                        .as_str()
                        .unwrap_or("")
                        .split(" on ")
                        .next()
                        .unwrap_or("")
                )
            })
            .collect();
        k.sort();
        k
    };
    assert_eq!(
        kinds(&packed).len(),
        kinds(&loose).len(),
        "{:?} vs {:?}",
        kinds(&packed),
        kinds(&loose)
    );
    // the host and capture time are the manifest's
    let host = m["host"].as_str().unwrap();
    let hosts = packed["hosts"].as_array().unwrap();
    let h = hosts
        .iter()
        .find(|h| h["host"] == host)
        .unwrap_or_else(|| panic!("{hosts:?}"));
    let captured = m["captured_at"].as_str().unwrap().trim_end_matches('Z');
    assert!(
        h["captured_at"].as_str().unwrap().starts_with(captured),
        "{h}"
    );
    for i in packed["inputs"].as_array().unwrap() {
        assert_eq!(i["host"], host, "{i}");
    }
    // the missing items are named in the notes
    let notes: Vec<&str> = packed["notes"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|n| n.as_str())
        .collect();
    assert!(
        notes
            .iter()
            .any(|n| n.contains("no fabric manager log: nvidia-fabricmanager is not installed")),
        "{notes:?}"
    );
    assert!(
        notes
            .iter()
            .any(|n| n.contains("faultline collect bundle of")),
        "{notes:?}"
    );
    // scan's line of the bundle names its gaps too
    let (code, out, err) = run(&["scan", "--format", "jsonl", tmp.path().to_str().unwrap()]);
    assert!(code <= 1, "{err}");
    let line: Value = out
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|l| {
            l["bundle"]
                .as_str()
                .is_some_and(|b| b.ends_with("node.tar.zst"))
        })
        .unwrap_or_else(|| panic!("no line of node.tar.zst: {out}"));
    let gaps = line["coverage_gaps"].as_array().expect("coverage_gaps");
    assert!(
        gaps.iter().any(|g| g
            .as_str()
            .unwrap()
            .contains("no fabric manager log: nvidia-fabricmanager is not installed")),
        "{line}"
    );
}

#[test]
fn redacted_bundles_hold_no_host_name() {
    let tmp = tempfile::tempdir().unwrap();
    let shims = tmp.path().join("bin");
    std::fs::create_dir(&shims).unwrap();
    node_shims(&shims);
    // the recorded kernel log names its host in systemd's line
    let bundle = tmp.path().join("r.tar.zst");
    let (code, err, _) = collect(
        &shims,
        &[
            "-o",
            bundle.to_str().unwrap(),
            "--quiet",
            "--redact-key",
            "k",
        ],
    );
    assert_eq!(code, 0, "{err}");
    let m = manifest(&bundle);
    assert_eq!(m["redacted"], true);
    let host = faultline::collect::host_name();
    assert!(
        m["host"].as_str().unwrap().starts_with("host-") || host == "localhost",
        "{m}"
    );
    for (name, data) in members(&bundle).iter().skip(1) {
        let t = String::from_utf8_lossy(data);
        assert!(!t.contains("hgx-a100-14"), "{name} names the host");
        if host.len() >= 4 && host.bytes().any(|c| c.is_ascii_alphabetic()) {
            assert!(!t.contains(&host), "{name} names this machine");
        }
    }
}

#[test]
fn collect_for_real_on_this_machine_within_30_seconds() {
    let tmp = tempfile::tempdir().unwrap();
    let bundle = tmp.path().join("real.tar.zst");
    let t = Instant::now();
    let (code, _, err) = run(&["collect", "-o", bundle.to_str().unwrap()]);
    let took = t.elapsed();
    assert_eq!(code, 0, "{err}");
    assert!(took < Duration::from_secs(30), "collect took {took:?}");
    let m = manifest(&bundle);
    let size = std::fs::metadata(&bundle).unwrap().len();
    eprintln!("collect on this machine: {took:?}, {size} bytes; {err}");
    // every item is there, and says why it is missing when it is
    for i in m["items"].as_array().unwrap() {
        let got = !i["members"].as_array().unwrap().is_empty();
        assert!(
            got || !i["missing"].is_null() || !i["detail"].as_str().unwrap_or("").is_empty(),
            "{i}"
        );
        if !i["missing"].is_null() {
            assert!(
                !i["detail"].as_str().unwrap_or("").is_empty(),
                "no reason: {i}"
            );
        }
    }
    if faultline::collect::exec::which("nvidia-smi").is_none() {
        let smi = item(&m, "nvidia-smi-q");
        assert_eq!(smi["missing"], "not_installed");
        assert!(
            smi["detail"]
                .as_str()
                .unwrap()
                .contains("nvidia-smi: not found"),
            "{smi}"
        );
    } else {
        eprintln!("nvidia-smi is installed here: its item is what it printed");
    }
    if !Path::new("/proc/driver/nvidia/version").exists() {
        assert_eq!(item(&m, "driver-version")["missing"], "not_installed");
    }
    let kernel = item(&m, "kernel");
    assert!(
        !kernel["members"].as_array().unwrap().is_empty() || !kernel["missing"].is_null(),
        "{kernel}"
    );
    let pk = item(&m, "packages");
    let have_history = [
        "/var/log/dpkg.log",
        "/var/log/apt/history.log",
        "/var/log/dnf.rpm.log",
    ]
    .iter()
    .any(|p| Path::new(p).is_file());
    if have_history {
        assert!(!pk["members"].as_array().unwrap().is_empty(), "{pk}");
    } else {
        eprintln!("SKIPPED the package history check: no dpkg/apt/dnf log on this machine");
    }
    // analyze reads it with the manifest's host
    let r = analyze_json(&[bundle.to_str().unwrap()]);
    let notes = r["notes"].as_array().unwrap();
    assert!(
        notes.iter().any(|n| n
            .as_str()
            .unwrap_or("")
            .contains("faultline collect bundle of")),
        "{notes:?}"
    );
    // the capture's own words are no leads: the manifest (an item's purpose), the package
    // history (`libgpg-error-dev`), the kernel command line (`panic=1`); a clean machine read
    // `unknown` from them
    let leads = r["verdict"]["leads"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    for l in &leads {
        let src = l["source"].as_str().unwrap();
        assert!(
            !src.contains("manifest.json") && !src.contains("dpkg.log") && !src.contains("cmdline"),
            "a lead from the capture itself: {l}"
        );
    }
}
