//! Outputs: `-o` writes only regular files (devices, FIFOs and symbolic links are refused;
//! `-o -` is stdout), the format follows the extension of `-o` unless `--format` says
//! otherwise, the temp file is removed on SIGTERM/SIGINT, a closed stdout makes no subcommand
//! panic, and an empty or closed stdin is a warning (and exit 2: nothing was recognized).

mod common;
use common::*;
use std::process::{Command, Stdio};

const CASE: &str = "corpus/xid79-aer-dmesg/";

fn bin() -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_faultline"));
    c.current_dir(root());
    c
}

fn case() -> String {
    root().join(CASE).to_string_lossy().into_owned()
}

#[test]
fn o_refuses_devices_fifos_and_symbolic_links_and_dash_is_stdout() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("fifo");
    let c = std::ffi::CString::new(fifo.to_str().unwrap()).unwrap();
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let link = dir.path().join("link");
    std::os::unix::fs::symlink("/proc/self/fd/1", &link).unwrap();
    let target = dir.path().join("real.json");
    std::fs::write(&target, "keep").unwrap();
    let link2 = dir.path().join("link-to-file.json");
    std::os::unix::fs::symlink(&target, &link2).unwrap();
    for (out, what) in [
        (fifo.to_str().unwrap(), "not a regular file"),
        ("/dev/null", "not a regular file"),
        (link.to_str().unwrap(), "symbolic link"),
        (link2.to_str().unwrap(), "symbolic link"),
        (dir.path().to_str().unwrap(), "not a regular file"),
    ] {
        let o = bin()
            .args(["analyze", "--format", "json", "-o", out, &case()])
            .output()
            .unwrap();
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{out}: {err}");
        assert!(err.contains(what), "{out}: {err}");
    }
    use std::os::unix::fs::FileTypeExt;
    assert!(std::fs::symlink_metadata(&fifo)
        .unwrap()
        .file_type()
        .is_fifo());
    assert!(std::fs::symlink_metadata(&link)
        .unwrap()
        .file_type()
        .is_symlink());
    assert!(std::fs::symlink_metadata(&link2)
        .unwrap()
        .file_type()
        .is_symlink());
    assert_eq!(std::fs::read_to_string(&target).unwrap(), "keep");
    // scan and merge refuse the same way
    let o = bin()
        .args(["scan", "--quiet", "-o", "/dev/null", &case()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    // `-o -` is stdout; a regular file is replaced
    let (code, out, _) = run(&["analyze", "--format", "json", "-o", "-", CASE]);
    assert_eq!(code, 0);
    assert!(out.starts_with('{'), "{out}");
    let t = target.to_str().unwrap();
    let (code, _, err) = run(&["analyze", "-o", t, CASE]);
    assert_eq!(code, 0, "{err}");
    assert!(std::fs::read_to_string(&target).unwrap().starts_with('{'));
    let leftovers: Vec<_> = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().contains("faultline-tmp"))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn the_format_follows_the_extension_of_o_unless_format_is_given() {
    let dir = tempfile::tempdir().unwrap();
    let p = |n: &str| dir.path().join(n).to_string_lossy().into_owned();
    let read = |n: &str| std::fs::read_to_string(dir.path().join(n)).unwrap();
    for (name, starts) in [
        ("r.json", "{"),
        ("r.md", "# "),
        ("r.MARKDOWN", "# "),
        ("r.html", "<!DOCTYPE html>"),
        ("r.txt", "faultline "),
        ("r.report", "{"),
    ] {
        let (code, _, err) = run(&["analyze", "-o", &p(name), CASE]);
        assert_eq!(code, 0, "{name}: {err}");
        assert!(
            read(name).starts_with(starts),
            "{name}: {}",
            &read(name)[..40]
        );
    }
    // --format wins over the extension
    let (code, _, _) = run(&["analyze", "--format", "json", "-o", &p("x.md"), CASE]);
    assert_eq!(code, 0);
    assert!(read("x.md").starts_with('{'));
    // timeline: text by extension
    let (code, _, _) = run(&["timeline", "-o", &p("t.txt"), CASE]);
    assert_eq!(code, 0);
    assert!(!read("t.txt").starts_with('['), "{}", read("t.txt"));
    // scan and merge: .txt is the table, .jsonl the lines
    let (code, _, _) = run(&["scan", "--quiet", "-o", &p("s.txt"), CASE]);
    assert_eq!(code, 0);
    assert!(read("s.txt").starts_with("faultline "), "{}", read("s.txt"));
    let (code, _, _) = run(&["scan", "--quiet", "-o", &p("s.jsonl"), CASE]);
    assert_eq!(code, 0);
    assert!(read("s.jsonl").starts_with('{'));
    let (code, _, _) = run(&["merge", "--quiet", "-o", &p("m.txt"), &p("s.jsonl")]);
    assert_eq!(code, 0);
    assert!(read("m.txt").starts_with("faultline "), "{}", read("m.txt"));
}

#[test]
fn a_signal_during_the_write_removes_the_temp_file() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("report.json");
    std::fs::write(&out, "old").unwrap();
    for sig in [libc::SIGTERM, libc::SIGINT] {
        let mut child = bin()
            .args(["analyze", "--format", "json", "-o"])
            .arg(&out)
            .arg(case())
            .env("FAULTLINE_TEST_HOLD_TEMP_MS", "5000")
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let temps = || -> Vec<String> {
            std::fs::read_dir(dir.path())
                .unwrap()
                .filter_map(|e| e.ok())
                .map(|e| e.file_name().to_string_lossy().into_owned())
                .filter(|n| n.contains("faultline-tmp"))
                .collect()
        };
        let t0 = std::time::Instant::now();
        while temps().is_empty() && t0.elapsed().as_secs() < 20 {
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        assert!(!temps().is_empty(), "no temp file appeared");
        unsafe { libc::kill(child.id() as i32, sig) };
        let status = child.wait().unwrap();
        use std::os::unix::process::ExitStatusExt;
        assert_eq!(status.signal(), Some(sig), "{status:?}");
        assert!(temps().is_empty(), "temp file left: {:?}", temps());
        assert_eq!(std::fs::read_to_string(&out).unwrap(), "old");
    }
}

#[test]
fn a_closed_stdout_makes_no_subcommand_panic() {
    let dir = tempfile::tempdir().unwrap();
    let shard = dir.path().join("s.jsonl");
    let (code, _, _) = run(&["scan", "--quiet", "-o", shard.to_str().unwrap(), CASE]);
    assert_eq!(code, 0);
    let s = shard.to_str().unwrap();
    let cases: Vec<Vec<&str>> = vec![
        vec!["analyze", "--format", "text", "corpus/multi-host-gpu-lost/"],
        vec!["analyze", "--format", "json", "corpus/multi-host-gpu-lost/"],
        vec!["analyze", "--format", "html", "corpus/multi-host-gpu-lost/"],
        vec![
            "analyze",
            "--format",
            "markdown",
            "corpus/multi-host-gpu-lost/",
        ],
        vec![
            "timeline",
            "--format",
            "text",
            "corpus/multi-host-gpu-lost/",
        ],
        vec!["explain", "xid", "79"],
        vec!["explain", "prefilter"],
        vec!["scan", "--quiet", "--format", "text", "corpus"],
        vec!["scan", "--quiet", "corpus"],
        vec!["scan", "--list", "corpus"],
        vec!["merge", "--format", "text", s],
        vec!["merge", s],
        vec!["completions", "bash"],
        vec!["completions", "zsh"],
        vec!["man"],
        vec!["--help"],
        vec!["analyze", "--help"],
        vec!["--version"],
    ];
    for args in cases {
        // the reading end is closed before the child writes: every write gets EPIPE
        let mut child = bin()
            .args(&args)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdout.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(
            !err.contains("panicked") && out.status.code() != Some(101),
            "{args:?}: {:?} {err}",
            out.status
        );
    }
}

#[test]
fn an_empty_or_closed_stdin_is_a_warning() {
    for (what, stdin) in [("empty", Stdio::piped()), ("null", Stdio::null())] {
        let mut child = bin()
            .args(["analyze", "--format", "json", "-"])
            .stdin(stdin)
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        drop(child.stdin.take());
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        // the report is written, with the warning; nothing was recognized: exit 2
        assert_eq!(out.status.code(), Some(2), "{what}: {err}");
        assert!(err.contains("warning: stdin: "), "{what}: {err}");
        assert!(
            err.contains("no input gave a line faultline recognizes"),
            "{what}: {err}"
        );
        let r: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        let w = r["inputs"][0]["warnings"].to_string();
        assert!(w.contains("stdin: "), "{what}: {w}");
    }
    // closed descriptor 0 (as `<&-`): a shell closes it, the runtime opens /dev/null over it
    let out = Command::new("sh")
        .arg("-c")
        .arg(format!(
            "exec '{}' analyze --format json - <&-",
            env!("CARGO_BIN_EXE_faultline")
        ))
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("stdin is closed or /dev/null"), "{err}");
    // something on stdin: no such warning
    let mut child = bin()
        .args(["analyze", "--format", "json", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut i = child.stdin.take().unwrap();
        i.write_all(b"[  12.5] NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n")
            .unwrap();
    }
    let out = child.wait_with_output().unwrap();
    assert!(!String::from_utf8_lossy(&out.stderr).contains("stdin: "));
}
