//! Fleet scans end to end: bundle discovery rules, per-bundle lines, broken bundles, exit
//! statuses, byte-identical output, repeat offenders, and four shards run as separate processes
//! whose merge equals the unsharded scan.

use faultline::fleet::{discover, BundleKind, Shard};
use serde_json::Value;
use std::collections::BTreeMap;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};

/// 2026-03-01T00:00:00Z.
const BASE: i64 = 1_772_323_200;
const DAY: i64 = 86_400;

fn stamp(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .unwrap()
        .format("%b %e %H:%M:%S")
        .to_string()
}

/// A kernel line in syslog form, `up` seconds after the boot that started at `boot`.
fn kline(host: &str, boot: i64, up: i64, msg: &str) -> String {
    format!(
        "{} {host} kernel: [{up:>5}.000100] {msg}\n",
        stamp(boot + up)
    )
}

fn boot_lines(host: &str, boot: i64, driver: &str) -> String {
    kline(host, boot, 0, "Linux version 5.15.0-105-generic (buildd@lcy02) #115-Ubuntu SMP")
        + &kline(host, boot, 6, &format!("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {driver}  Tue Mar  5 22:42:18 UTC 2024"))
        + &kline(host, boot, 60, "EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro")
}

/// An Xid on bus `bus` with the identity lines the driver prints before it.
fn xid(host: &str, boot: i64, up: i64, bus: &str, serial: &str, code: u32, text: &str) -> String {
    let uuid = format!("GPU-{serial:0>8}-0000-0000-0000-000000000000");
    let pid = "pid='<unknown>', name=<unknown>";
    [
        format!("NVRM: GPU at PCI:0000:{bus}:00: {uuid}"),
        format!("NVRM: GPU Board Serial Number: {serial}"),
        format!("NVRM: Xid (PCI:0000:{bus}:00): {code}, {pid}, {text}"),
    ]
    .iter()
    .map(|m| kline(host, boot, up, m))
    .collect()
}

const FELL_OFF: &str = "GPU has fallen off the bus.";
const DBE: &str = "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x3a1c5b2e0 partition 9, subpartition 1.";
const NVLINK: &str =
    "NVLink: fatal error detected on link 5(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)";

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    e.write_all(data).unwrap();
    e.finish().unwrap()
}

fn tar(name: &str, data: &[u8]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    let mut h = tar::Header::new_gnu();
    h.set_size(data.len() as u64);
    h.set_mode(0o644);
    h.set_mtime(BASE as u64);
    b.append_data(&mut h, name, data).unwrap();
    b.into_inner().unwrap()
}

fn bug_report(host: &str, captured: i64, driver: &str, kern: &str) -> String {
    let sep = "____________________________________________";
    let date = chrono::DateTime::from_timestamp(captured, 0)
        .unwrap()
        .format("%a %b %e %H:%M:%S UTC %Y");
    format!(
        "{sep}\n\nStart of NVIDIA bug report log file.\n\nnvidia-bug-report.sh Version: 34380455\n\nDate: {date}\nuname: Linux {host} 5.15.0-105-generic #115-Ubuntu SMP x86_64 GNU/Linux\n\n{sep}\n\n*** /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  {driver}  Tue Mar  5 22:42:18 UTC 2024\n\n{sep}\n\nScanning kernel log files for NVIDIA kernel messages:\n  /var/log/kern.log:\n{kern}\n{sep}\n\nEnd of NVIDIA bug report log file.\n"
    )
}

fn put(root: &Path, rel: &str, data: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, data).unwrap();
}

/// A small fleet with one bundle of every kind, two repeat-offender GPUs (two boots in one
/// bundle; two bundles of one node) and two broken bundles.
fn fleet(root: &Path) {
    let b1 = BASE + 3600;
    let b2 = BASE + 4 * DAY;
    let n01 = boot_lines("n01", b1, "535.161.08")
        + &xid("n01", b1, 2 * DAY, "3b", "1650000000011", 79, FELL_OFF)
        + &boot_lines("n01", b2, "535.161.08")
        + &xid("n01", b2, DAY, "3b", "1650000000011", 79, FELL_OFF);
    put(root, "hosts/n01/kern.log", n01.as_bytes());
    let n02 = boot_lines("n02", b1, "535.161.08");
    put(root, "hosts/n02/logs/kern.log.gz", &gz(n02.as_bytes()));
    let n03 =
        boot_lines("n03", b1, "535.161.08") + &xid("n03", b1, DAY, "5d", "1650000000033", 48, DBE);
    put(
        root,
        "hosts/n03/kern.log.zst",
        &zstd::stream::encode_all(n03.as_bytes(), 3).unwrap(),
    );
    let b3 = BASE + 18 * DAY;
    let n03_later =
        boot_lines("n03", b3, "535.161.08") + &xid("n03", b3, DAY, "5d", "1650000000033", 48, DBE);
    let rep = bug_report("n03", b3 + 2 * DAY, "535.161.08", &n03_later);
    put(
        root,
        "reports/2026-03-21/nvidia-bug-report-n03.log.gz",
        &gz(rep.as_bytes()),
    );
    let mut junk = gz(b"Start of NVIDIA bug report log file.\n")[..12].to_vec();
    junk.extend((0..2048u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 11) as u8));
    put(
        root,
        "reports/2026-03-21/nvidia-bug-report-n04.log.gz",
        &junk,
    );
    let n05 = boot_lines("n05", b1, "550.54.15")
        + &xid("n05", b1, DAY, "18", "1650000000055", 74, NVLINK);
    put(
        root,
        "archives/n05.tgz",
        &gz(&tar("n05/var/log/kern.log", n05.as_bytes())),
    );
    let n06 = boot_lines("n06", b1, "550.54.15");
    let raw = tar("var/log/kern.log", n06.as_bytes());
    put(
        root,
        "archives/n06.tar.zst",
        &zstd::stream::encode_all(&raw[..], 3).unwrap(),
    );
    let mut n07 = boot_lines("n07", b1, "535.161.08")
        + &xid("n07", b1, DAY, "ab", "1650000000077", 79, FELL_OFF);
    for i in 0..4000 {
        n07 += &kline(
            "n07",
            b1,
            DAY + i,
            &format!("EXT4-fs (nvme0n1p2): mounted filesystem {i:08x}"),
        );
    }
    let n07 = gz(&tar("var/log/kern.log", n07.as_bytes()));
    put(root, "archives/n07.tgz", &n07[..n07.len() / 2]);
    put(root, "n08.dmesg", b"[    0.000000] Linux version 5.15.0-105-generic\n[    6.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08  Tue Mar  5 22:42:18 UTC 2024\n");
    std::fs::create_dir_all(root.join("empty")).unwrap();
}

fn bin() -> Command {
    Command::new(env!("CARGO_BIN_EXE_faultline"))
}

fn scan(args: &[&str]) -> (i32, String, String) {
    let out = bin().arg("scan").args(args).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8(out.stdout).unwrap(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn jsonl(text: &str) -> Vec<Value> {
    text.lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

#[test]
fn discovery_groups_files_into_bundles_by_the_documented_rules() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    fleet(root);
    let d = discover(&[root.to_string_lossy().into_owned()]);
    let got: Vec<(&str, BundleKind, Option<&str>, usize)> = d
        .bundles
        .iter()
        .map(|b| {
            (
                b.key.as_str(),
                b.kind,
                b.host_hint.as_deref(),
                b.files.len(),
            )
        })
        .collect();
    use BundleKind::{Archive, BugReport, File, Folder};
    let want = vec![
        ("n08.dmesg", File, None, 1),
        ("archives/n05.tgz", Archive, Some("n05"), 1),
        ("archives/n06.tar.zst", Archive, Some("n06"), 1),
        ("archives/n07.tgz", Archive, Some("n07"), 1),
        ("hosts/n01", Folder, Some("n01"), 1),
        // hosts/n02/logs/kern.log.gz: `logs` is no host name, so n02 is the host folder
        ("hosts/n02", Folder, Some("n02"), 1),
        ("hosts/n03", Folder, Some("n03"), 1),
        (
            "reports/2026-03-21/nvidia-bug-report-n03.log.gz",
            BugReport,
            None,
            1,
        ),
        // corrupt: the name keeps it a bundle of its own, the folder stays a folder of reports
        (
            "reports/2026-03-21/nvidia-bug-report-n04.log.gz",
            BugReport,
            None,
            1,
        ),
    ];
    assert_eq!(got, want);
    // --list prints the same grouping, files included, and honours --shard
    let r = root.to_string_lossy();
    let (code, out, err) = scan(&["--list", &r]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("hosts/n02/logs/kern.log.gz"), "{out}");
    assert!(out.contains("9 bundles, 9 files"), "{out}");
    let mut listed = 0;
    for k in 0..3 {
        let (_, out, _) = scan(&["--list", "--shard", &format!("{k}/3"), &r]);
        listed += out
            .lines()
            .filter(|l| !l.starts_with(' ') && l.contains("\tkey="))
            .count();
    }
    assert_eq!(
        listed, 9,
        "every bundle is listed in exactly one of 3 shards"
    );
}

#[test]
fn every_bundle_gets_a_line_and_broken_ones_do_not_sink_the_scan() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    let r = dir.path().to_string_lossy().into_owned();
    let missing = dir
        .path()
        .join("no-such-dir")
        .to_string_lossy()
        .into_owned();
    let (code, out, err) = scan(&["--format", "jsonl", "--year", "2026", &r, &missing]);
    assert_eq!(code, 0, "{err}");
    let lines = jsonl(&out);
    assert_eq!(lines.len(), 11, "10 bundles and the fleet line");
    let by_key: BTreeMap<&str, &Value> = lines[..10]
        .iter()
        .map(|l| (l["key"].as_str().unwrap(), l))
        .collect();
    for l in &lines[..10] {
        assert_eq!(l["schema"], "faultline/scan/v1");
        for k in [
            "bundle",
            "verdict",
            "incidents",
            "counts",
            "inputs",
            "warnings",
        ] {
            assert!(l.get(k).is_some(), "{k} missing in {l}");
        }
    }
    let n01 = by_key["hosts/n01"];
    assert_eq!(n01["host"], "n01");
    assert_eq!(n01["verdict"]["root_cause_layer"], "hardware");
    assert_eq!(n01["counts"]["xid:79"], 2);
    assert_eq!(n01["gpus"][0]["serial"], "1650000000011");
    assert_eq!(
        n01["gpus"][0]["boots"].as_array().unwrap().len(),
        2,
        "{n01}"
    );
    assert_eq!(n01["drivers"], serde_json::json!(["535.161.08"]));
    assert_eq!(by_key["hosts/n02"]["verdict"]["root_cause_layer"], "none");
    assert_eq!(by_key["archives/n05.tgz"]["host"], "n05");
    assert_eq!(
        by_key["archives/n05.tgz"]["verdict"]["root_cause_layer"],
        "interconnect"
    );
    let report = by_key["reports/2026-03-21/nvidia-bug-report-n03.log.gz"];
    assert_eq!(
        report["host"], "n03",
        "the bug report's uname names the host"
    );
    // broken bundles: their own warnings, never the others'
    let n04 = by_key["reports/2026-03-21/nvidia-bug-report-n04.log.gz"];
    assert_eq!(n04["unreadable"], true);
    assert!(
        n04["warnings"][0].as_str().unwrap().contains("gzip"),
        "{n04}"
    );
    let n07 = by_key["archives/n07.tgz"];
    assert!(
        n07["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("truncated")),
        "{n07}"
    );
    assert_eq!(
        n07["verdict"]["root_cause_layer"], "hardware",
        "the part before the cut is analyzed"
    );
    let gone = by_key["no-such-dir"];
    assert_eq!(gone["unreadable"], true);
    assert!(
        gone["warnings"][0]
            .as_str()
            .unwrap()
            .contains("cannot read"),
        "{gone}"
    );
    for (k, l) in &by_key {
        if ![
            "reports/2026-03-21/nvidia-bug-report-n04.log.gz",
            "archives/n07.tgz",
            "no-such-dir",
        ]
        .contains(k)
        {
            assert_eq!(l["warnings"], serde_json::json!([]), "{k}");
        }
    }
    let f = &lines[10];
    assert_eq!(f["schema"], "faultline/fleet/v1");
    assert_eq!(
        (f["bundles"].as_u64(), f["unreadable"].as_u64()),
        (Some(10), Some(2))
    );
    // only unreadable paths: exit status 2; --fail-on: 1
    assert_eq!(scan(&["--format", "jsonl", &missing]).0, 2);
    assert_eq!(
        scan(&[
            "--format",
            "jsonl",
            "--quiet",
            "--fail-on",
            "interconnect",
            &r
        ])
        .0,
        1
    );
    assert_eq!(scan(&["--shard", "3/3", &r]).0, 2, "K counts from 0");
}

#[test]
fn repeat_offender_gpus_and_nodes_across_boots_and_bundles() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    let r = dir.path().to_string_lossy().into_owned();
    let (_, out, _) = scan(&["--format", "jsonl", "--year", "2026", &r]);
    let f = jsonl(&out).pop().unwrap();
    assert_eq!(f["failing_gpus"], 4, "{f}");
    let gpus = f["gpus"].as_array().unwrap();
    let serials: Vec<&str> = gpus
        .iter()
        .map(|g| g["serials"][0].as_str().unwrap())
        .collect();
    // n01: two boots in one bundle; n03: two bundles; n05 failed once and is no offender
    assert_eq!(serials, ["1650000000011", "1650000000033"], "{f}");
    assert_eq!(gpus[0]["bundles"].as_array().unwrap().len(), 1);
    assert_eq!(gpus[1]["bundles"].as_array().unwrap().len(), 2);
    assert!(gpus.iter().all(|g| g["occasions"] == 2));
    let nodes: Vec<&str> = f["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .map(|n| n["host"].as_str().unwrap())
        .collect();
    // n03 failed in two bundles, n01 in two boots of one: both repeat, n03 ranks first
    assert_eq!(nodes, ["n03", "n01"]);
    let text = scan(&["--format", "text", "--quiet", "--year", "2026", &r]).1;
    assert!(text.contains("serial 1650000000011"), "{text}");
    assert!(text.contains("Repeat-offender nodes"), "{text}");
}

#[test]
fn output_is_byte_identical_across_runs_and_thread_counts() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    let r = dir.path().to_string_lossy().into_owned();
    let a = scan(&["--format", "jsonl", "--year", "2026", &r]).1;
    let b = scan(&["--format", "jsonl", "--year", "2026", "--jobs", "1", &r]).1;
    assert_eq!(a, b);
}

#[test]
fn four_shards_as_separate_processes_merge_to_the_unsharded_summary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().join("archive");
    fleet(&root);
    // more bundles, so that every shard has some
    for i in 10..40 {
        let host = format!("n{i:02}");
        let mut log = boot_lines(&host, BASE + i * 600, "535.161.08");
        if i % 5 == 0 {
            log += &xid(
                &host,
                BASE + i * 600,
                DAY,
                "9a",
                &format!("16500000001{i}"),
                48,
                DBE,
            );
        }
        put(&root, &format!("hosts/{host}/kern.log"), log.as_bytes());
    }
    let r = root.to_string_lossy().into_owned();
    let whole = scan(&["--format", "jsonl", "--year", "2026", &r]).1;
    let children: Vec<_> = (0..4)
        .map(|k| {
            let out = dir.path().join(format!("shard-{k}.jsonl"));
            let child = bin()
                .args([
                    "scan",
                    "--quiet",
                    "--year",
                    "2026",
                    "--shard",
                    &format!("{k}/4"),
                ])
                .arg("-o")
                .arg(&out)
                .arg(&r)
                .stdout(Stdio::null())
                .spawn()
                .unwrap();
            (child, out)
        })
        .collect();
    let mut files = Vec::new();
    let mut shard_lines: Vec<String> = Vec::new();
    for (mut child, out) in children {
        assert!(child.wait().unwrap().success());
        let text = std::fs::read_to_string(&out).unwrap();
        let mut lines: Vec<&str> = text.lines().collect();
        let fleet_line: Value = serde_json::from_str(lines.pop().unwrap()).unwrap();
        assert!(fleet_line["shard"].as_str().unwrap().ends_with("/4"));
        assert!(!lines.is_empty(), "shard {} is empty", fleet_line["shard"]);
        shard_lines.extend(lines.iter().map(|s| s.to_string()));
        files.push(out.to_string_lossy().into_owned());
    }
    // exactly once: the shards' bundle lines are the unsharded scan's, each once
    let mut whole_lines: Vec<String> = whole.lines().map(str::to_string).collect();
    let whole_fleet = whole_lines.pop().unwrap();
    whole_lines.sort();
    shard_lines.sort();
    assert_eq!(whole_lines.len(), 39);
    assert_eq!(shard_lines, whole_lines);
    // the merged fleet line is the unsharded one, whatever the order of the files
    files.reverse();
    let out = bin().arg("merge").args(&files).output().unwrap();
    assert!(out.status.success());
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8(out.stdout).unwrap(),
        format!("{whole_fleet}\n")
    );
    // a missing shard and a cut file are reported
    let cut = dir.path().join("cut.jsonl");
    let first = std::fs::read_to_string(&files[0]).unwrap();
    std::fs::write(&cut, first.lines().next().unwrap()).unwrap();
    let out = bin()
        .arg("merge")
        .args(&files[1..])
        .arg(&cut)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    // the summary is still written, but a missing shard fails the merge
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(!out.stdout.is_empty());
    assert!(err.contains("incomplete: missing shard output"), "{err}");
    assert!(err.contains("no faultline/fleet/v1 line"), "{err}");
    let out = bin()
        .arg("merge")
        .arg(dir.path().join("nothing.jsonl"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn shard_assignment_is_pinned() {
    // the split must never change between versions or machines: these values were computed
    // with an independent implementation of FNV-1a 64 and the MurmurHash3 finalizer
    assert_eq!(
        faultline::fleet::shard::fnv1a64(b"hosts/node-0001"),
        0xc902_2499_3ada_283f
    );
    let owners: Vec<u64> = [
        "hosts/node-0001",
        "archives/node-0002.tgz",
        "a/b/nvidia-bug-report.log.gz",
    ]
    .iter()
    .map(|k| Shard::of(k, 4))
    .collect();
    assert_eq!(owners, [2, 1, 0]);
}

#[test]
fn exclude_drops_files_bundles_and_archive_members_from_a_scan() {
    let dir = tempfile::tempdir().unwrap();
    fleet(dir.path());
    let r = dir.path().to_string_lossy().into_owned();
    // `*.zst` removes the two bundles that are one zstd file each; `var/log/kern.log` inside
    // n05.tgz is a member, so that bundle stays but reads nothing
    let args = [
        "--format",
        "jsonl",
        "--year",
        "2026",
        "--exclude",
        "*.zst",
        "--exclude",
        "n05/var/log/*",
        &r,
    ];
    let (code, out, err) = scan(&args);
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("--exclude skipped 2 files; 2 bundles had"),
        "{err}"
    );
    let lines = jsonl(&out);
    let keys: Vec<&str> = lines.iter().filter_map(|l| l["key"].as_str()).collect();
    assert!(!keys.contains(&"hosts/n03"), "{keys:?}");
    assert!(!keys.contains(&"archives/n06.tar.zst"), "{keys:?}");
    assert!(keys.contains(&"hosts/n01"), "{keys:?}");
    let n05 = lines
        .iter()
        .find(|l| l["key"] == "archives/n05.tgz")
        .unwrap();
    assert_eq!(n05["verdict"]["root_cause_layer"], "none", "{n05}");
    // --list shows the same selection
    let mut list_args = args.to_vec();
    list_args.insert(0, "--list");
    let (code, listed, _) = scan(&list_args);
    assert_eq!(code, 0);
    assert!(!listed.contains("kern.log.zst"), "{listed}");
    assert!(listed.contains("hosts/n01"), "{listed}");
}
