//! Coverage of the container stack's vocabulary (../shared/vocab/container-gpu.tsv): every row
//! of nvidia-container-cli (libnvidia-container), the NVIDIA container toolkit, the k8s device
//! plugin (with go-nvlib) and the GPU operator's validator is rendered into the line that reaches
//! a log (the program's own prefix or the wrapper that carries its error out) and scanned. Each
//! error row becomes a specific event, a generic one, a benign mark of the data, a decision
//! recorded below (with its reason), or nothing. Figures are printed per component and must stay
//! at or above the floors (raise them, never lower them).

use faultline::events::RecognizerSet;
use faultline::scan::scan_buffer;
use faultline::Knowledge;
use std::collections::BTreeMap;
use std::path::Path;

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Specific,
    Generic,
    Benign,
    Decided,
    Nothing,
}

/// Floors per component, in percent of its error rows: (component prefix, specific+decided).
const FLOORS: [(&str, u32); 4] = [
    ("libnvidia-container", 100),
    ("nvidia-container-toolkit", 100),
    ("k8s-device-plugin", 100),
    ("gpu-operator validator", 100),
];

/// Rows that give no event by decision, with the reason: (words of the format, reason).
const DECISIONS: [(&[&str], &str); 5] = [
    (
        &["flag", "usage", "must not be empty", "invalid <", "unsupported flag type"],
        "a command-line usage error of the tool itself, printed when it is started by hand before any GPU is touched",
    ),
    (
        &["version: ", "Exiting due to signal"],
        "the tool's own banner and orderly exit",
    ),
    (
        &["skipping", "terminating rpc service"],
        "the tool says what it skips or stops on purpose",
    ),
    (
        &["unable to open: %s", "unexpected line in mig-monitors", "invalid map file"],
        "a MIG capability file the CLI reads while building the container: reported through its `nvidia-container-cli: <stage> error:` line, which is read",
    ),
    (
        &["No %s label found", "invalid workload config"],
        "the validator falls back to its default workload configuration",
    ),
];

fn vocab_dir() -> Option<std::path::PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vocab");
    d.is_dir().then_some(d)
}

/// Fills printf and Go verbs with plausible values (`%s` and `%v` with a library's text).
fn render(fmt: &str) -> String {
    let fmt = fmt.replace("\\n", " ").replace("\\\"", "\"");
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        let mut spec = String::new();
        while let Some(&n) = chars.peek() {
            chars.next();
            spec.push(n);
            if n.is_ascii_alphabetic() && !matches!(n, 'l' | 'z' | 'h' | 'j' | 't' | '+' | '#')
                || n == '%'
            {
                break;
            }
            if n == '"' {
                // `%"PRId32"`: the macro's conversion
                for m in chars.by_ref() {
                    if m == '"' {
                        break;
                    }
                }
                spec.push('d');
                break;
            }
        }
        out.push_str(match spec.chars().last() {
            Some('d' | 'u' | 'i') => "3",
            Some('x' | 'X') => "1f",
            Some('s' | 'v' | 'w' | 'q') => "unknown error",
            Some('T') => "string",
            Some('%') => "%",
            _ => "",
        });
    }
    out
}

/// The line a row reaches a log as.
fn line_of(component: &str, file: &str, call: &str, fmt: &str) -> String {
    let msg = render(fmt);
    if call == "example" {
        return msg;
    }
    if component.starts_with("libnvidia-container") {
        return if fmt.contains(" error: %s") {
            format!(
                "nvidia-container-cli: {}",
                fmt.replace("%s", "nvml error: unknown error")
            )
        } else if call.starts_with("log_") {
            format!("W0101 12:00:00.000000 4242 {file}:1] {msg}")
        } else {
            format!("nvidia-container-cli: initialization error: {msg}: unknown.")
        };
    }
    if component.starts_with("nvidia-container-toolkit") {
        return format!(
            "docker: Error response from daemon: failed to create task for container: failed to create shim task: OCI runtime create failed: nvidia-container-runtime did not terminate successfully: exit status 1: {msg}: unknown."
        );
    }
    if component.starts_with("gpu-operator") {
        return format!(
            "time=\"2025-01-01T00:00:00Z\" level=fatal msg=\"error validating driver installation: {msg}\""
        );
    }
    // the device plugin and go-nvlib: errors end in the plugin's start error
    format!("F0101 12:00:00.000000       1 main.go:1] error starting plugins: {msg}")
}

/// A row that names a failure (the table also holds info and progress texts).
fn names_error(call: &str, fmt: &str) -> bool {
    let l = fmt.to_ascii_lowercase();
    let error_call = [
        "Errorf",
        "errors.New",
        "error_set",
        "errmsg",
        "errx",
        "log_err",
        "Error",
    ]
    .iter()
    .any(|c| call.contains(c));
    error_call
        || [
            "error",
            "fail",
            "unable",
            "could not",
            "cannot",
            "invalid",
            "unsatisfied",
        ]
        .iter()
        .any(|w| l.contains(w))
}

fn decided(fmt: &str) -> Option<&'static str> {
    DECISIONS
        .iter()
        .find(|(words, _)| words.iter().any(|w| fmt.contains(w)))
        .map(|(_, why)| *why)
}

fn outcome(set: &RecognizerSet, line: &str, fmt: &str) -> Outcome {
    let buf = format!("{line}\n");
    let out = scan_buffer(buf.as_bytes(), set, false, 1000);
    let ids: Vec<&str> = out.events.iter().map(|e| e.draft.recognizer()).collect();
    if ids.iter().any(|id| !set.is_generic_id(id)) {
        Outcome::Specific
    } else if !ids.is_empty() {
        Outcome::Generic
    } else if set.benign_for(line).is_some() {
        Outcome::Benign
    } else if decided(fmt).is_some() {
        Outcome::Decided
    } else {
        Outcome::Nothing
    }
}

#[test]
fn container_vocabulary_is_covered() {
    let Some(dir) = vocab_dir() else {
        eprintln!("SKIPPED: ../shared/vocab is absent; container vocabulary coverage not measured");
        return;
    };
    let text = std::fs::read_to_string(dir.join("container-gpu.tsv")).unwrap_or_default();
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    let set = &k.recognizers;
    let mut by: BTreeMap<String, [u32; 5]> = BTreeMap::new();
    let mut misses = Vec::new();
    for row in text.lines().skip(2) {
        let r: Vec<&str> = row.split('\t').collect();
        let (Some(component), Some(file), Some(call), Some(fmt)) =
            (r.first(), r.get(2), r.get(5), r.get(6))
        else {
            continue;
        };
        if !names_error(call, fmt) {
            continue;
        }
        let line = line_of(component, file, call, fmt);
        let o = outcome(set, &line, fmt);
        by.entry(component.to_string()).or_default()[o as usize] += 1;
        if o == Outcome::Nothing {
            misses.push(format!("{component}: {line}"));
        }
    }
    let mut failures = Vec::new();
    for (c, n) in &by {
        let total: u32 = n.iter().sum();
        let good = (n[0] + n[3]) * 100 / total.max(1);
        eprintln!(
            "container-gpu.tsv {c:<55} rows {total:>4}  specific {:>4}  generic {:>4}  benign {:>4}  decided {:>4}  none {:>4}  ({good}% specific or decided)",
            n[0], n[1], n[2], n[3], n[4]
        );
        if let Some((_, floor)) = FLOORS.iter().find(|(p, _)| c.starts_with(p)) {
            if good < *floor {
                failures.push(format!("{c}: {good}% specific or decided (floor {floor}%)"));
            }
        }
    }
    for m in &misses {
        eprintln!("  none: {m}");
    }
    assert!(!by.is_empty(), "no rows read from container-gpu.tsv");
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn rendering_fills_go_and_c_verbs() {
    assert_eq!(
        render("failed to open %s: %v (%d, %T)"),
        "failed to open unknown error: unknown error (3, string)"
    );
    assert_eq!(
        render("process reaping failed (pid %\"PRId32\")"),
        "process reaping failed (pid 3)"
    );
}

#[test]
fn every_decision_has_a_reason() {
    for (words, why) in DECISIONS {
        assert!(!words.is_empty() && why.len() > 20, "{words:?}");
    }
}
