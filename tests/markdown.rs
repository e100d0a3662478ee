//! The Markdown post-mortem, read back with a CommonMark/GFM parser: it agrees with the JSON
//! report on every corpus case, hostile lines change neither its tables nor its code blocks,
//! `--redact` leaves no original value and the same structure, and one report is pinned.

mod common;
use common::*;
use pulldown_cmark::{Event, Options, Parser, Tag, TagEnd};
use serde_json::Value;

fn markdown(args: &[&str]) -> String {
    let mut all = vec!["analyze", "--format", "markdown"];
    all.extend_from_slice(args);
    let (code, out, err) = run(&all);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    out
}

/// What a Markdown reader sees: headings, tables (cells as text), code blocks, list items,
/// paragraphs, and any raw HTML (which nothing from the inputs may become).
#[derive(Debug, Default)]
struct Doc {
    headings: Vec<String>,
    tables: Vec<Vec<Vec<String>>>,
    code_blocks: Vec<String>,
    items: Vec<String>,
    paragraphs: Vec<String>,
    html: Vec<String>,
    /// The sequence of block and inline tags, to compare the structure of two documents.
    shape: Vec<String>,
}

impl Doc {
    fn table_with(&self, first_header: &str) -> &Vec<Vec<String>> {
        self.tables
            .iter()
            .find(|t| t[0][0] == first_header)
            .unwrap_or_else(|| panic!("no table headed {first_header}"))
    }
}

/// `<details><summary>TEXT</summary>` or `</details>`, with no other tag in TEXT.
fn is_fold(h: &str) -> bool {
    let h = h.trim();
    h == "</details>"
        || h.strip_prefix("<details><summary>")
            .and_then(|r| r.strip_suffix("</summary>"))
            .is_some_and(|t| !t.contains(['<', '>']))
}

fn parse(md: &str) -> Doc {
    let mut d = Doc::default();
    let mut text = String::new();
    let mut row: Vec<String> = Vec::new();
    let mut in_code = false;
    let opts = Options::ENABLE_TABLES | Options::ENABLE_STRIKETHROUGH;
    for ev in Parser::new_ext(md, opts) {
        match ev {
            Event::Start(tag) => {
                d.shape.push(format!("{tag:?}").chars().take(12).collect());
                match tag {
                    Tag::Table(_) => d.tables.push(Vec::new()),
                    Tag::CodeBlock(_) => in_code = true,
                    Tag::Heading { .. } | Tag::Paragraph | Tag::TableCell | Tag::Item => {
                        text.clear()
                    }
                    _ => {}
                }
            }
            Event::End(end) => match end {
                TagEnd::Heading(_) => d.headings.push(std::mem::take(&mut text)),
                TagEnd::Paragraph => d.paragraphs.push(std::mem::take(&mut text)),
                TagEnd::Item => d.items.push(std::mem::take(&mut text)),
                TagEnd::TableCell => row.push(std::mem::take(&mut text)),
                TagEnd::TableHead | TagEnd::TableRow => {
                    d.tables.last_mut().unwrap().push(std::mem::take(&mut row))
                }
                TagEnd::CodeBlock => {
                    in_code = false;
                    d.code_blocks.push(std::mem::take(&mut text));
                }
                _ => {}
            },
            Event::Text(t) | Event::Code(t) => text.push_str(&t),
            Event::SoftBreak | Event::HardBreak if !in_code => text.push(' '),
            // the report's own folds of repeated consequences are the only HTML it writes
            Event::Html(h) | Event::InlineHtml(h) if is_fold(&h) => {}
            Event::Html(h) | Event::InlineHtml(h) => d.html.push(h.to_string()),
            _ => {}
        }
    }
    d
}

/// The evidence block of an incident as the report should write it: `path:line: message`.
fn evidence_block(r: &Value, inc: &Value) -> String {
    let events = r["events"].as_array().unwrap();
    let mut s = String::new();
    for id in inc["root_cause"]["evidence"].as_array().unwrap() {
        let e = events.iter().find(|e| e["id"] == *id).unwrap();
        s.push_str(&format!(
            "{}:{}: {}\n",
            e["source"]["path"].as_str().unwrap(),
            e["source"]["line"],
            e["message"].as_str().unwrap()
        ));
    }
    s
}

#[test]
fn report_agrees_with_the_json_report_on_every_corpus_case() {
    let mut cases: Vec<_> = std::fs::read_dir(root().join("corpus"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir() && !p.ends_with("expected"))
        .collect();
    cases.sort();
    assert!(cases.len() >= 10);
    for dir in &cases {
        let case = dir.to_str().unwrap();
        let r = analyze_json(&[case]);
        let d = parse(&markdown(&[case]));
        assert!(d.html.is_empty(), "{case}: raw HTML {:?}", d.html);
        assert_eq!(d.headings[0], "GPU incident report", "{case}");
        let verdict = format!(
            "Verdict: {} — {}",
            r["verdict"]["root_cause_layer"].as_str().unwrap(),
            r["verdict"]["summary"].as_str().unwrap()
        );
        assert_eq!(d.paragraphs[0], verdict, "{case}");
        for section in [
            "Impact",
            "Timeline",
            "Incidents",
            "Inputs",
            "What to attach",
        ] {
            assert!(d.headings.iter().any(|h| h == section), "{case}: {section}");
        }
        // every table row has its header's cells
        for t in &d.tables {
            assert!(t.iter().all(|row| row.len() == t[0].len()), "{case}: {t:?}");
        }
        let incidents = r["incidents"].as_array().unwrap();
        for inc in incidents {
            let id = inc["id"].as_str().unwrap();
            let layer = inc["root_cause"]["layer"].as_str().unwrap();
            assert!(
                d.headings
                    .iter()
                    .any(|h| h.starts_with(&format!("Incident {id} — {layer} · "))),
                "{case}: heading of {id}"
            );
            let root = format!(
                "Root cause: {}",
                inc["root_cause"]["summary"].as_str().unwrap()
            );
            assert!(d.paragraphs.contains(&root), "{case}: {root}");
            assert!(
                d.code_blocks.contains(&evidence_block(&r, inc)),
                "{case}: evidence of {id} verbatim"
            );
            for a in inc["actions"].as_array().unwrap() {
                let a = a.as_str().unwrap().replace('`', "");
                assert!(d.items.contains(&a), "{case}: action {a}");
            }
            for m in inc["missing_data"].as_array().into_iter().flatten() {
                let m = m.as_str().unwrap();
                assert!(d.items.iter().any(|i| i == m), "{case}: missing {m}");
            }
        }
        // the first fault is marked once, on the verdict incident's primary event
        let timeline_rows = d
            .tables
            .iter()
            .find(|t| t[0][0] == "mark")
            .map_or(0, |t| t.len() - 1);
        let marked: Vec<&Vec<String>> = d
            .tables
            .iter()
            .filter(|t| t[0][0] == "mark")
            .flat_map(|t| t.iter().skip(1))
            .filter(|row| {
                row[0].starts_with("▶ first fault") || row[0].starts_with("◇ state observed at")
            })
            .collect();
        if incidents.is_empty() {
            assert!(marked.is_empty(), "{case}");
        } else {
            let top = incidents
                .iter()
                .find(|i| i["root_cause"]["summary"] == r["verdict"]["summary"])
                .unwrap();
            assert_eq!(marked.len(), 1, "{case}: {timeline_rows} rows");
            assert_eq!(marked[0][1], top["root_cause"]["evidence"][0], "{case}");
        }
        // every suspect GPU's identity is in the table vendors read
        for g in r["gpus"].as_array().into_iter().flatten() {
            if g["suspect"] != true {
                continue;
            }
            let t = d.table_with("host");
            let row = t
                .iter()
                .find(|row| row[1] == g["bus_id"].as_str().unwrap())
                .unwrap_or_else(|| panic!("{case}: no row for {}", g["bus_id"]));
            for (col, key) in [(2, "uuid"), (3, "serial"), (4, "name"), (5, "vbios")] {
                let want = g[key].as_str().unwrap_or("-");
                assert_eq!(row[col], want, "{case}: {key}");
            }
        }
    }
}

/// A case whose file name, and lines, hold Markdown and HTML syntax, fences, pipes and controls.
fn hostile_case(dir: &std::path::Path) -> (String, Vec<String>) {
    let host = dir.join("node-a");
    std::fs::create_dir(&host).unwrap();
    let lines = vec![
        "Mar 14 02:13:05 node-a kernel: [1795950.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=```` | <b>x</b> [y](http://e.invalid) ~~z~~ # h, Graphics Exception: ESR 0x504648=0x2000".to_string(),
        "Mar 14 02:13:07 node-a kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 79, pid='</td>|\\', name=\u{1b}[31mpy\u{202e}txt, GPU has fallen off the bus.".to_string(),
        "Mar 14 02:13:07 node-a kernel: [1795955.589913] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\r```\r# injected\r| a | b |".to_string(),
    ];
    let file = host.join("ker|n`l <i>[y](x)~~z~~ #.log");
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    (file.to_str().unwrap().to_string(), lines)
}

#[test]
fn hostile_lines_change_neither_tables_nor_code_blocks() {
    let dir = tempfile::tempdir().unwrap();
    let (path, lines) = hostile_case(dir.path());
    let md = markdown(&[dir.path().to_str().unwrap()]);
    let d = parse(&md);
    assert!(
        d.html.is_empty(),
        "raw HTML reached the document: {:?}",
        d.html
    );
    let r = analyze_json(&[dir.path().to_str().unwrap()]);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    // the path is one cell, read back as it is
    let inputs = d.table_with("path");
    assert_eq!(inputs.len(), 2, "{inputs:?}");
    assert_eq!(inputs[1][0], path);
    assert_eq!(inputs[1][2], "node-a");
    for t in &d.tables {
        assert!(t.iter().all(|row| row.len() == t[0].len()), "{t:?}");
    }
    let timeline = d.table_with("mark");
    for row in timeline.iter().skip(1) {
        assert!(
            row[10].starts_with(&format!("{path}:")),
            "source cell {:?}",
            row[10]
        );
    }
    // the verbatim lines sit whole in the evidence block (controls shown, not obeyed)
    let shown = |l: &str| {
        l.replace('\u{1b}', "\u{241b}")
            .replace('\u{202e}', "⟨U+202E⟩")
            .replace('\r', "\u{240d}")
    };
    let block = d
        .code_blocks
        .iter()
        .find(|b| b.contains("fallen off the bus"))
        .expect("evidence block");
    for (n, l) in lines.iter().enumerate().skip(1) {
        let cited = format!("{path}:{}: {}\n", n + 1, shown(l));
        assert!(block.contains(&cited), "{cited:?} not in {block:?}");
    }
    assert!(!md.contains('\u{1b}') && !md.contains('\u{202e}') && !md.contains('\r'));
    // no heading, link or strikethrough came from the lines or the file name
    let ours = [
        "GPU incident report",
        "Impact",
        "Timeline",
        "Incidents",
        "Incident i",
        "Chain",
        "Evidence (verbatim, path:line)",
        "NVIDIA resolution bucket",
        "Alternatives",
        "Missing data that would settle it",
        "What to do",
        "Suspect GPUs",
        "GPU node-a 0000:3b:00.0",
        "Inputs",
        "What to attach",
    ];
    for h in &d.headings {
        assert!(ours.iter().any(|o| h.starts_with(o)), "heading {h:?}");
    }
    assert!(
        !d.shape
            .iter()
            .any(|s| s.starts_with("Link") || s.starts_with("Strikethroug")),
        "{:?}",
        d.shape
    );
}

#[test]
fn redacted_report_holds_no_original_value_and_keeps_its_structure() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("gpu-node-17");
    std::fs::create_dir(&host).unwrap();
    // a secret in the file name lands in table cells and prose, not only in code blocks
    std::fs::write(
        host.join("kern-token=s3cr3t.log"),
        "Mar 14 02:13:06 gpu-node-17 kernel: [1795955.100000] NVRM: GPU 0000:3b:00.0: GPU serial number is 1324021076543.\n\
         Mar 14 02:13:07 gpu-node-17 kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python token=hunter2 peer 10.20.30.40 mac 0c:42:a1:5e:77:10 cwd /home/alice/run, GPU has fallen off the bus.\n\
         Mar 14 02:13:08 gpu-node-17 kernel: [1795955.589913] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n",
    )
    .unwrap();
    let case = dir.path().to_str().unwrap();
    let plain = markdown(&[case]);
    let hidden = markdown(&["--redact-key", "k", case]);
    let secrets = [
        "gpu-node-17",
        "hunter2",
        "s3cr3t",
        "10.20.30.40",
        "0c:42:a1:5e:77:10",
        "alice",
        "1324021076543",
    ];
    for s in secrets {
        assert!(plain.contains(s), "{s} is in the plain report");
        assert!(!hidden.contains(s), "{s} survived --redact");
    }
    // the redacted report says how stable its aliases are, in a note of its own
    let note = "**Notes:**\n\n- redaction: aliases are stable across runs that use the same key \
                (given by --redact-key or FAULTLINE_REDACT_KEY)\n\n";
    assert!(hidden.contains(note), "{hidden}");
    let hidden = hidden.replacen(note, "", 1);
    // the same structure: same headings count, tables, cells per row, code blocks, items
    let (a, b) = (parse(&plain), parse(&hidden));
    assert_eq!(a.shape, b.shape);
    assert!(b.html.is_empty(), "no raw HTML: {:?}", b.html);
    let inputs = b.table_with("path");
    assert!(inputs[1][0].contains("kern-token=secret-"), "{inputs:?}");
    let rows = |d: &Doc| -> Vec<usize> { d.tables.iter().flatten().map(Vec::len).collect() };
    assert_eq!(rows(&a), rows(&b));
    assert_eq!(a.code_blocks.len(), b.code_blocks.len());
    // the host's alias is the one the JSON report gives it
    let json = run(&["analyze", "--redact-key", "k", "--format", "json", case]).1;
    let r: Value = serde_json::from_str(&json).unwrap();
    let alias = r["incidents"][0]["hosts"][0].as_str().unwrap();
    assert!(alias.starts_with("host-"), "{alias}");
    assert!(
        hidden.contains(&format!("on {alias} 0000:3b:00.0")),
        "{hidden}"
    );
}

#[test]
fn snapshot_of_one_report() {
    insta::assert_snapshot!(
        "markdown_bug_report_a100",
        markdown(&["corpus/bug-report-a100/"])
    );
}

/// Repeated consequences fold per kind and host, a 64-rank job counts 64 exits (one per host and
/// pid whatever route reported it), a later `nvidia-smi -q` is the state observed then, and the
/// driver and model it names are in the GPU table.
#[test]
fn reports_read_at_a_glance() {
    let r = analyze_json(&["corpus/multi-host-gpu-lost/"]);
    let exits = of_kind(&r, "process_exit");
    assert_eq!(exits.len(), 64, "one exit per rank");
    let pids: std::collections::BTreeSet<(String, String)> = exits
        .iter()
        .map(|e| (e["host"].to_string(), e["details"]["pid"].to_string()))
        .collect();
    assert_eq!(pids.len(), 64);
    let md = markdown(&["corpus/multi-host-gpu-lost/"]);
    let d = parse(&md);
    assert!(d.html.is_empty(), "{:?}", d.html);
    let folds = md.matches("<details><summary>").count();
    assert!(folds >= 8, "{folds} folds");
    assert!(md.contains("<details><summary>8 × process_exit -6 on gpu-node-01</summary>"));
    let t = d.tables.iter().find(|t| t[0][0] == "mark").unwrap();
    assert!(t.len() < 40, "{} rows in the timeline table", t.len());

    let md = markdown(&["corpus/slowdown-megatron-thermal/"]);
    let d = parse(&md);
    assert!(
        !md.contains("▶ first fault** ("),
        "the snapshot is not the first fault"
    );
    assert!(md.contains("**◇ state observed at** (i1) | e6 |"));
    assert!(md.contains("- **State observed at:** 2026-05-12 10:05:41"));
    let gpus = d.table_with("host");
    let row = gpus.iter().find(|row| row[1] == "0000:3b:00.0").unwrap();
    assert_eq!(
        (row[4].as_str(), row[6].as_str()),
        ("NVIDIA H100 80GB HBM3", "550.90.07")
    );
}
