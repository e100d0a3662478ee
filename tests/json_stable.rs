//! The JSON report stays byte for byte what it was on every case: the project's corpus, the real
//! cases of every release under ../shared (corpus-real, corpus-real-next, corpus-real-3, and any
//! later corpus-real-N: a release with no digest yet is printed, not failed, until it is blessed)
//! and the clean logs of ../shared/noise. Each
//! report is normalized only in the tool's version, then digested (FNV-1a, 64 bits); the digests
//! are in tests/snapshots/json_digests.txt. A change of output that is meant is blessed with
//! `FAULTLINE_BLESS=1 cargo test --profile fast --test json_stable` (and reviewed in the diff of
//! the reports it names); `FAULTLINE_STABLE_BIN=path` runs another build (the one before a change,
//! to bless what it printed).
//!
//! A log without a year gets the year of its file's modification time, and a checkout or a copy
//! of ../shared gives its files the time they were written: so each case is copied into the
//! test's own folder with one fixed modification time before it is analysed, and the report is
//! the same on every machine and every day.

mod common;
use common::*;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= b as u64;
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

/// The modification time every copied file gets: 2026-06-15T00:00:00Z.
const PINNED_MTIME: u64 = 1_781_481_600;

/// Where the pinned copies live; the reports cite paths relative to it.
fn pinned_root() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("json-stable")
}

/// Copies `from` (a file or a folder, recursively) to `to`, every file with [`PINNED_MTIME`].
fn copy_pinned(from: &Path, to: &Path) {
    if from.is_dir() {
        std::fs::create_dir_all(to).unwrap();
        let mut entries: Vec<_> = std::fs::read_dir(from)
            .unwrap()
            .filter_map(|e| e.ok())
            .map(|e| e.path())
            .collect();
        entries.sort();
        for e in entries {
            copy_pinned(&e, &to.join(e.file_name().unwrap()));
        }
        return;
    }
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).unwrap();
    }
    std::fs::copy(from, to).unwrap_or_else(|e| panic!("copy {}: {e}", from.display()));
    let when = std::time::UNIX_EPOCH + std::time::Duration::from_secs(PINNED_MTIME);
    // ../shared is read-only and the copy keeps its mode: the time is set through a read handle
    std::fs::File::open(to)
        .and_then(|f| f.set_modified(when))
        .unwrap_or_else(|e| panic!("set the time of {}: {e}", to.display()));
}

/// The path of a case's copy, relative to [`pinned_root`]: `../shared/x` becomes `shared/x`.
fn pinned_path(path: &str) -> String {
    path.strip_prefix("../").unwrap_or(path).to_string()
}

/// The digest of `analyze --format json` over `paths` (relative to the project root), run on
/// their pinned copies with paths relative to the copies' root, so that the paths the report
/// cites and the years it infers are the same in every checkout.
fn digest(paths: &[String]) -> String {
    let bin = std::env::var("FAULTLINE_STABLE_BIN")
        .unwrap_or_else(|_| env!("CARGO_BIN_EXE_faultline").to_string());
    let base = pinned_root();
    let copies: Vec<String> = paths.iter().map(|p| pinned_path(p)).collect();
    for (p, c) in paths.iter().zip(&copies) {
        copy_pinned(&root().join(p), &base.join(c));
    }
    let out = Command::new(bin)
        .args(["analyze", "--format", "json"])
        .args(&copies)
        .current_dir(&base)
        .output()
        .expect("run faultline");
    let mut v: serde_json::Value =
        serde_json::from_slice(&out.stdout).unwrap_or_else(|e| panic!("{paths:?}: bad JSON ({e})"));
    v["tool"]["version"] = serde_json::Value::Null;
    format!("{:016x}", fnv1a(v.to_string().as_bytes()))
}

/// Paths of a case relative to the root: its log files (without notes and expectations).
fn relative(files: Vec<String>) -> Vec<String> {
    let root = root().display().to_string();
    files
        .into_iter()
        .map(|f| {
            f.strip_prefix(&format!("{root}/"))
                .unwrap_or(&f)
                .to_string()
        })
        .collect()
}

/// Every case: name → its paths.
fn cases() -> BTreeMap<String, Vec<String>> {
    let mut m = BTreeMap::new();
    let mut own: Vec<_> = std::fs::read_dir(root().join("corpus"))
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| p.is_dir() && !p.ends_with("expected"))
        .collect();
    own.sort();
    for d in own {
        let name = d.file_name().unwrap().to_string_lossy().into_owned();
        m.insert(format!("corpus/{name}"), vec![format!("corpus/{name}")]);
    }
    if shared().is_some() {
        for set in real_case_folders() {
            for d in case_dirs(&root().join("../shared").join(&set)) {
                let name = d.file_name().unwrap().to_string_lossy().into_owned();
                m.insert(format!("{set}/{name}"), relative(case_files(&d)));
            }
        }
        let noise = root().join("../shared/noise");
        let mut logs: Vec<_> = std::fs::read_dir(&noise)
            .map(|r| r.filter_map(|e| e.ok()).map(|e| e.path()).collect())
            .unwrap_or_default();
        logs.retain(|p: &std::path::PathBuf| p.extension().is_some_and(|x| x == "log"));
        logs.sort();
        for p in logs {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            m.insert(
                format!("noise/{name}"),
                vec![format!("../shared/noise/{name}")],
            );
        }
    }
    m
}

#[test]
fn json_reports_stay_byte_identical() {
    let file = root().join("tests/snapshots/json_digests.txt");
    if shared().is_none() {
        eprintln!("skipped for ../shared: it is absent; only the project's corpus is compared");
    }
    let _ = std::fs::remove_dir_all(pinned_root());
    let got: BTreeMap<String, String> = cases()
        .into_iter()
        .map(|(name, paths)| {
            let d = digest(&paths);
            (name, d)
        })
        .collect();
    if std::env::var_os("FAULTLINE_BLESS").is_some() {
        let text: String = got.iter().map(|(n, d)| format!("{n} {d}\n")).collect();
        std::fs::write(&file, text).unwrap();
        return;
    }
    let want: BTreeMap<String, String> = std::fs::read_to_string(&file)
        .unwrap_or_default()
        .lines()
        .filter_map(|l| l.split_once(' '))
        .map(|(n, d)| (n.to_string(), d.to_string()))
        .collect();
    let mut problems = Vec::new();
    let release = |n: &str| n.split('/').next().unwrap_or("").to_string();
    let blessed: std::collections::BTreeSet<String> = want.keys().map(|n| release(n)).collect();
    for (name, d) in &got {
        match want.get(name) {
            Some(w) if w == d => {}
            Some(w) => problems.push(format!("{name}: report changed ({w} -> {d})")),
            None if !blessed.contains(&release(name)) => {
                eprintln!("{name}: a release not yet blessed: no digest compared")
            }
            None => problems.push(format!("{name}: no digest (bless to add it)")),
        }
    }
    let own = got.keys().filter(|n| n.starts_with("corpus/")).count();
    assert!(own >= 10, "corpus has {own} cases");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
