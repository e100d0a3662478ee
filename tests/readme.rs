//! The README's example outputs are the real outputs: every fenced block that starts with
//! `$ faultline …` is run, and its lines must be what the binary prints. A line `[…]` in the
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

#[test]
fn readme_example_outputs_are_what_the_binary_prints() {
    let readme = std::fs::read_to_string(root().join("README.md")).unwrap();
    let mut checked = Vec::new();
    let mut failures = Vec::new();
    for b in blocks(&readme) {
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
            "README line {}: exit {code}: {err}",
            b.line
        );
        let actual: Vec<String> = out.lines().map(normalize).collect();
        if let Some(p) = compare(&b.expected, &actual) {
            failures.push(format!(
                "README.md line {}: `faultline {}`: {p}\n--- real output:\n{out}",
                b.line,
                b.args.join(" ")
            ));
        }
        checked.push(b.args.join(" "));
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
    for want in [
        "analyze corpus/multi-host-gpu-lost/",
        "explain xid 79",
        "--help",
    ] {
        assert!(
            checked.iter().any(|c| c.starts_with(want)),
            "the README has no checked `faultline {want}` block (checked: {checked:?})"
        );
    }
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
