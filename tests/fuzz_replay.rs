//! Replays every fuzz target's committed corpus (`fuzz/corpus/<target>/`) and its crash
//! regressions (`fuzz/regressions/<target>/`) through the same harness functions the fuzzers
//! call (`fuzz/src/lib.rs`, included here as a module), so that `cargo test` catches a regression without cargo-fuzz or
//! a nightly compiler. A harness panics on a crash or a broken invariant; each file runs under
//! `catch_unwind` so that one report lists every failing file.

#[path = "../fuzz/src/lib.rs"]
#[allow(dead_code)]
mod harness;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

fn files(dir: &Path) -> Vec<PathBuf> {
    let mut v: Vec<PathBuf> = std::fs::read_dir(dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .map(|e| e.path())
                .filter(|p| p.is_file())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

/// Runs every file of both folders of `target`; returns (files run, failures, slowest).
fn replay(target: &str) -> (usize, Vec<String>, (Duration, PathBuf)) {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("fuzz");
    let mut n = 0;
    let mut failures = Vec::new();
    let mut slowest = (Duration::ZERO, PathBuf::new());
    for sub in ["corpus", "regressions"] {
        for f in files(&root.join(sub).join(target)) {
            let data = std::fs::read(&f).unwrap();
            let t = Instant::now();
            let r = std::panic::catch_unwind(|| harness::run(target, &data));
            let took = t.elapsed();
            if took > slowest.0 {
                slowest = (took, f.clone());
            }
            match r {
                Ok(true) => {}
                Ok(false) => failures.push(format!("unknown target {target}")),
                Err(p) => {
                    let why = p
                        .downcast_ref::<&str>()
                        .map(|s| s.to_string())
                        .or_else(|| p.downcast_ref::<String>().cloned())
                        .unwrap_or_default();
                    failures.push(format!("{}: {why}", f.display()));
                }
            }
            n += 1;
        }
    }
    (n, failures, slowest)
}

fn check(target: &str) {
    let (n, failures, slowest) = replay(target);
    assert!(
        n > 0,
        "fuzz/corpus/{target}/ and fuzz/regressions/{target}/ hold no file to replay"
    );
    eprintln!(
        "{target}: {n} file(s) replayed, slowest {:?} ({})",
        slowest.0,
        slowest.1.display()
    );
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn every_target_has_a_test_here() {
    let here = include_str!("fuzz_replay.rs");
    for t in harness::TARGETS {
        assert!(
            here.contains(&format!("fn {t}() {{\n    check(\"{t}\");")),
            "no replay test for the fuzz target {t}"
        );
        let target = Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fuzz/fuzz_targets")
            .join(format!("{t}.rs"));
        let src = std::fs::read_to_string(&target)
            .unwrap_or_else(|e| panic!("{}: {e}", target.display()));
        assert!(
            src.contains(&format!("faultline_fuzz::{t}(data)")),
            "{} does not call faultline_fuzz::{t}",
            target.display()
        );
    }
    assert!(!harness::run("no-such-target", b""));
}

#[test]
fn container() {
    check("container");
}

#[test]
fn kernel() {
    check("kernel");
}

#[test]
fn server() {
    check("server");
}

#[test]
fn syslog() {
    check("syslog");
}

#[test]
fn journal() {
    check("journal");
}

#[test]
fn joblog() {
    check("joblog");
}

#[test]
fn bug_report() {
    check("bug_report");
}

#[test]
fn nvidia_smi() {
    check("nvidia_smi");
}

#[test]
fn nvidia_smi_xml() {
    check("nvidia_smi_xml");
}

#[test]
fn dcgmi() {
    check("dcgmi");
}

#[test]
fn knowledge() {
    check("knowledge");
}

#[test]
fn analyze() {
    check("analyze");
}
