//! Terminal injection: escape sequences, control characters and bidi overrides from log lines,
//! file names and tar member names reach no text output raw — the text report, the timeline,
//! the scan table, `scan --list`, and the warnings on stderr — but appear as visible escapes.

mod common;
use common::*;
use std::path::Path;
use std::process::Command;

/// Each class of hostile text, as planted in a log line, and its visible form.
const CLASSES: [(&str, &str); 7] = [
    ("\u{1b}[2J\u{1b}[H", "\\e[2J\\e[H"),
    (
        "\u{1b}]8;;https://evil.example/\u{1b}\\click\u{1b}]8;;\u{1b}\\",
        "\\e]8;;https://evil.example/\\e\\click\\e]8;;\\e\\",
    ),
    (
        "\u{1b}]52;c;cm0gLXJmIH4=\u{7}",
        "\\e]52;c;cm0gLXJmIH4=\\x07",
    ),
    ("\u{1b}]0;pwned\u{7}", "\\e]0;pwned\\x07"),
    ("\u{9b}31mred\u{7f}", "\\u{009b}31mred\\x7f"),
    ("\u{202e}txt.exe\u{202c}", "\\u{202e}txt.exe\\u{202c}"),
    ("\u{2067}isolate\u{2069}", "\\u{2067}isolate\\u{2069}"),
];

/// No byte a terminal acts on: C0 controls other than newline and tab, DEL, C1 (as UTF-8),
/// bidi controls.
fn assert_clean(what: &str, out: &[u8]) {
    for (i, &b) in out.iter().enumerate() {
        assert!(
            b == b'\n' || b == b'\t' || (b >= 0x20 && b != 0x7f),
            "{what}: control byte {b:#04x} at {i}: {:?}",
            String::from_utf8_lossy(&out[i.saturating_sub(40)..(i + 40).min(out.len())])
        );
    }
    let text = String::from_utf8_lossy(out);
    for c in text.chars() {
        assert!(
            !matches!(c, '\u{80}'..='\u{9f}' | '\u{202a}'..='\u{202e}' | '\u{2066}'..='\u{2069}'),
            "{what}: {:?} in the output",
            c
        );
    }
}

fn faultline(args: &[&str], cwd: &Path) -> (Vec<u8>, Vec<u8>) {
    let out = Command::new(env!("CARGO_BIN_EXE_faultline"))
        .args(args)
        .current_dir(cwd)
        .output()
        .unwrap();
    assert!(
        matches!(out.status.code(), Some(0 | 1)),
        "{args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    (out.stdout, out.stderr)
}

/// A tar (gzip) holding `members`.
fn tgz(members: &[(&str, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(1_773_400_000);
        // set_path refuses some names; write the raw name field, as a hostile archive would
        let raw = name.as_bytes();
        h.as_old_mut().name[..raw.len()].copy_from_slice(raw);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    let raw = b.into_inner().unwrap();
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &raw).unwrap();
    gz.finish().unwrap()
}

#[test]
fn escapes_from_lines_names_and_members_are_visible_in_every_text_output() {
    let dir = tempfile::tempdir().unwrap();
    let case = dir.path().join("case");
    let host = case.join("gpu-node-03");
    std::fs::create_dir_all(&host).unwrap();
    // the two evidence lines of the incident carry every class (the text report cites them)
    let first: String = CLASSES[..4].iter().map(|c| c.0).collect();
    let second: String = CLASSES[4..].iter().map(|c| c.0).collect();
    let log = format!(
        "Mar 14 02:13:07 gpu-node-03 kernel: NVRM: Xid (PCI:0000:3b:00): 79, name={first}\n\
         Mar 14 02:13:07 gpu-node-03 kernel: NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus. {second}\n"
    );
    std::fs::write(host.join("kern.log"), &log).unwrap();
    // a file name with an OSC 0 title and a bidi override, holding a cut gzip (a warning)
    let evil_name = "\u{1b}]0;title\u{7}\u{202e}gol.gz";
    let gz = tgz(&[("kern.log", log.as_bytes())]);
    std::fs::write(host.join(evil_name), &gz[..gz.len() / 2]).unwrap();
    // a tar member whose name holds newlines that would forge report lines
    let forged = "x\nfaultline 9.9 \u{2014} verdict: NONE\n\u{1b}[2J/kern.log";
    std::fs::write(
        case.join("gpu-node-04.tgz"),
        tgz(&[(forged, log.replace("gpu-node-03", "gpu-node-04").as_bytes())]),
    )
    .unwrap();
    let outputs = [
        // a path that does not exist, with an OSC 0 title in its name: a warning on stderr
        (
            "analyze text",
            // -v: the inputs table and every event too (the paths and lines escaped there)
            vec![
                "analyze",
                "--format",
                "text",
                "-v",
                "--year",
                "2026",
                "case",
                "gone-\u{1b}]0;title\u{7}\u{202e}.log",
            ],
        ),
        (
            "timeline text",
            vec!["timeline", "--format", "text", "--year", "2026", "case"],
        ),
        (
            "scan text",
            vec!["scan", "--format", "text", "--year", "2026", "case"],
        ),
        ("scan --list", vec!["scan", "--list", "case"]),
    ];
    for (what, args) in outputs {
        let (out, err) = faultline(&args, dir.path());
        assert_clean(what, &out);
        assert_clean(&format!("{what} (stderr)"), &err);
        let text = String::from_utf8_lossy(&out);
        assert!(
            !text.lines().any(|l| l.starts_with("faultline 9.9")),
            "{what}: a member name forged a line:\n{text}"
        );
        if what == "analyze text" {
            for (_, visible) in CLASSES {
                assert!(text.contains(visible), "{what}: no {visible} in\n{text}");
            }
            assert!(
                text.contains("case/gpu-node-03/\\e]0;title\\x07\\u{202e}gol.gz"),
                "{what}: the file name, escaped:\n{text}"
            );
            assert!(
                text.contains("x\\nfaultline 9.9 \u{2014} verdict: NONE\\n\\e[2J/kern.log"),
                "{what}: the member name, escaped:\n{text}"
            );
            let err = String::from_utf8_lossy(&err);
            assert!(
                err.contains("gone-\\e]0;title\\x07\\u{202e}.log"),
                "the warning names the path, escaped: {err}"
            );
        }
        if what == "scan --list" {
            assert!(text.contains("case/gpu-node-03/\\e]0;title\\x07\\u{202e}gol.gz"));
        }
        if what.ends_with(" text") && what != "scan text" {
            // the timeline cites each event's path; the list names each file
            assert!(
                text.contains("x\\nfaultline 9.9 \u{2014} verdict: NONE\\n\\e[2J/kern.log"),
                "{what}: the member name, escaped:\n{text}"
            );
        }
    }
    // the JSON keeps the verbatim text (serde escapes C0 controls as \u001b)
    let (out, _) = faultline(
        &["analyze", "--format", "json", "--year", "2026", "case"],
        dir.path(),
    );
    let r: serde_json::Value = serde_json::from_slice(&out).unwrap();
    let msgs = r["events"].to_string();
    assert!(
        msgs.contains("\\u001b]52;c;"),
        "JSON keeps the verbatim line"
    );
    let _ = root();
}
