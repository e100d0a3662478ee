//! The README's and the docs' (`docs/*.md`) example outputs are the real outputs: every fenced
//! block that starts with `$ faultline …` is run, and its lines must be what the binary prints. A line `[…]` in the
//! README stands for lines cut out; the parts between cuts must each appear, in order, as
//! consecutive lines of the real output (trailing blanks aside). A block whose command names a
//! path that is not in the repository (`fleet/`, made by `examples/genfleet.rs`) is left out.
//!
//! Years of the form `2026-03-14` are compared as `YYYY-03-14`: the year of a year-less syslog
//! stamp is inferred from the file's date, which is the date of the clone.
//!
//! When this test fails, the output changed: paste the new output into README.md (the failure
//! prints it), cutting with `[…]` as before.

mod common;
use common::*;

/// A README block: its command line and its expected lines.
struct Block {
    line: usize,
    args: Vec<String>,
    expected: Vec<String>,
}

fn blocks(readme: &str) -> Vec<Block> {
    let mut out = Vec::new();
    let mut lines = readme.lines().enumerate();
    while let Some((n, l)) = lines.next() {
        if !l.starts_with("```") {
            continue;
        }
        let body: Vec<&str> = lines
            .by_ref()
            .map(|(_, l)| l)
            .take_while(|l| !l.starts_with("```"))
            .collect();
        let Some(cmd) = body.first().and_then(|f| f.strip_prefix("$ faultline ")) else {
            continue;
        };
        out.push(Block {
            line: n + 2,
            args: cmd.split_whitespace().map(str::to_string).collect(),
            expected: body[1..].iter().map(|l| normalize(l)).collect(),
        });
    }
    out
}

/// A line as compared: trailing blanks dropped, years of dates masked.
fn normalize(line: &str) -> String {
    static YEAR: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = YEAR.get_or_init(|| regex::Regex::new(r"\b(?:19|20)\d\d-(\d\d)-(\d\d)\b").unwrap());
    re.replace_all(line.trim_end(), "YYYY-$1-$2").into_owned()
}

/// The problems of `actual` against the README's `expected` lines (with `[…]` cuts).
fn compare(expected: &[String], actual: &[String]) -> Option<String> {
    let parts: Vec<&[String]> = expected.split(|l| l == "[…]").collect();
    let cut = parts.len() > 1;
    let mut at = 0;
    for (i, part) in parts.iter().enumerate() {
        if part.is_empty() {
            continue;
        }
        let fits = |s: usize| {
            s + part.len() <= actual.len() && part.iter().zip(&actual[s..]).all(|(e, a)| e == a)
        };
        // without cuts, or before the first cut, the block starts the output
        let found = if i == 0 {
            fits(0).then_some(0)
        } else {
            (at..actual.len()).find(|&s| fits(s))
        };
        match found {
            Some(s) => at = s + part.len(),
            None => {
                let first = &part[0];
                return Some(format!(
                    "part {} (from `{first}`, {} line(s)) is not in the output{}",
                    i + 1,
                    part.len(),
                    actual
                        .iter()
                        .skip(at)
                        .position(|a| a == first)
                        .map(|p| format!("; its first line is at output line {}", at + p + 1))
                        .unwrap_or_default()
                ));
            }
        }
    }
    // without a cut at the end, the block ends where the output ends
    if expected.last().is_none_or(|l| l != "[…]") && at != actual.len() {
        return Some(format!(
            "the output goes on after the block's last line ({} more line(s)){}",
            actual.len() - at,
            if cut { "" } else { "; the block has no cuts" }
        ));
    }
    None
}

/// README.md, then every `docs/*.md` in name order: (path, text).
fn documents() -> Vec<(String, String)> {
    let mut names: Vec<String> = std::fs::read_dir(root().join("docs"))
        .map(|d| {
            d.filter_map(|e| e.ok())
                .map(|e| format!("docs/{}", e.file_name().to_string_lossy()))
                .filter(|n| n.ends_with(".md"))
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    names.insert(0, "README.md".to_string());
    names
        .into_iter()
        .map(|n| {
            let text = std::fs::read_to_string(root().join(&n)).unwrap();
            (n, text)
        })
        .collect()
}

#[test]
fn readme_example_outputs_are_what_the_binary_prints() {
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for (doc, text) in documents() {
        check_blocks(&doc, &text, &mut checked, &mut failures);
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for want in [
        "analyze corpus/multi-host-gpu-lost/",
        "explain xid 79",
        "--help",
    ] {
        assert!(
            checked.iter().any(|c| c.starts_with(want)),
            "the docs have no checked `faultline {want}` block (checked: {checked:?})"
        );
    }
}

/// Runs the `$ faultline …` blocks of one document.
fn check_blocks(doc: &str, text: &str, checked: &mut Vec<String>, failures: &mut Vec<String>) {
    for b in blocks(text) {
        let missing = b
            .args
            .iter()
            .filter(|a| a.contains('/'))
            .any(|a| !root().join(a).exists());
        if missing {
            continue;
        }
        let mut args: Vec<&str> = b.args.iter().map(String::as_str).collect();
        // the README shows what a terminal gets; the test's stdout is a pipe
        let wants_text = matches!(
            args.first(),
            Some(&("analyze" | "timeline" | "scan" | "merge"))
        );
        if wants_text && !args.contains(&"--format") && !args.contains(&"--list") {
            args.insert(1, "--format");
            args.insert(2, "text");
        }
        let (code, out, err) = run(&args);
        assert!(
            code == 0 || code == 1,
            "{doc} line {}: exit {code}: {err}",
            b.line
        );
        let actual: Vec<String> = out.lines().map(normalize).collect();
        if let Some(p) = compare(&b.expected, &actual) {
            failures.push(format!(
                "{doc} line {}: `faultline {}`: {p}\n--- real output:\n{out}",
                b.line,
                b.args.join(" ")
            ));
        }
        checked.push(b.args.join(" "));
    }
}

/// Chapters other parts of the work write: linked from README before they land, so a link to
/// one is checked only when the file is there.
const CHAPTERS_TO_COME: &[&str] = &[
    "docs/cuda-and-nccl.md",
    "docs/nvidia-smi-nvml-dcgm.md",
    "docs/driver-fabric-container-stack.md",
    "docs/launchers-and-kills.md",
    "docs/progress-hangs-slowdowns.md",
    "docs/untrusted-input.md",
    "docs/known-issues.md",
];

/// The relative link targets of a Markdown text (`[x](docs/usage.md#anchor)` → `docs/usage.md`),
/// outside fenced blocks.
fn links(text: &str) -> Vec<String> {
    static LINK: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = LINK.get_or_init(|| regex::Regex::new(r"\]\(([^)\s]+)\)").unwrap());
    let mut fence = false;
    let mut out = Vec::new();
    for line in text.lines() {
        if line.starts_with("```") {
            fence = !fence;
        }
        if fence {
            continue;
        }
        for c in re.captures_iter(line) {
            let target = c[1].split('#').next().unwrap_or("").to_string();
            if !target.is_empty() && !target.contains("://") {
                out.push(target);
            }
        }
    }
    out
}

#[test]
fn the_readme_is_short_and_links_every_chapter() {
    let docs = documents();
    let readme = &docs[0].1;
    let n = readme.lines().count();
    assert!(n <= 250, "README.md has {n} lines: move sections to docs/");
    let linked = links(readme);
    for (name, _) in &docs[1..] {
        assert!(
            linked.iter().any(|l| l == name),
            "README.md does not link {name}"
        );
    }
    for c in CHAPTERS_TO_COME {
        assert!(linked.iter().any(|l| l == c), "README.md does not link {c}");
    }
    // every relative link of every document leads to a file (the chapters to come once there)
    let mut broken = Vec::new();
    for (name, text) in &docs {
        let dir = std::path::Path::new(name)
            .parent()
            .unwrap_or(std::path::Path::new(""));
        for l in links(text) {
            let path = dir.join(&l);
            let rel = path.to_string_lossy().replace("docs/../", "");
            if !root().join(&path).exists() && !CHAPTERS_TO_COME.contains(&rel.as_str()) {
                broken.push(format!("{name}: {l}"));
            }
        }
    }
    assert!(broken.is_empty(), "broken links:\n{}", broken.join("\n"));
}

#[test]
fn the_comparison_fails_on_drift() {
    let exp = |s: &[&str]| s.iter().map(|l| l.to_string()).collect::<Vec<_>>();
    let out = exp(&["a", "b", "c", "d"]);
    assert!(compare(&exp(&["a", "b", "c", "d"]), &out).is_none());
    assert!(compare(&exp(&["a", "[…]", "c", "[…]"]), &out).is_none());
    assert!(compare(&exp(&["a", "[…]", "d"]), &out).is_none());
    assert!(compare(&exp(&["a", "b", "c"]), &out).is_some(), "cut end");
    assert!(compare(&exp(&["b", "[…]"]), &out).is_some(), "start");
    assert!(
        compare(&exp(&["a", "[…]", "x", "[…]"]), &out).is_some(),
        "drift"
    );
    assert!(
        compare(&exp(&["a", "[…]", "c", "b", "[…]"]), &out).is_some(),
        "order"
    );
}
