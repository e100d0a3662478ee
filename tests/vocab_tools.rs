//! Coverage of the tools around the driver (../shared/vocab): every row of the NVML table
//! (`nvmlReturn_t` texts as nvidia-smi prints them, pynvml's classes and texts, go-nvml's names,
//! nvidia-smi's own messages) and of the DCGM table (`DCGM_FR_*` message formats inside a
//! `dcgmi diag` table) is rendered as its emitter prints it and read; each becomes a specific
//! event, a generic one, a recorded decision (benign, with the reason), or nothing. The figures
//! are printed per table; every error row must give a specific kind or a recorded decision, and
//! the specific share must stay at or above the floors (raise them, never lower them).

use faultline::catalog::Catalog;
use faultline::events::RecognizerSet;
use faultline::formats::dcgmi;
use faultline::scan::scan_buffer;
use faultline::Knowledge;
use std::collections::BTreeMap;
use std::path::Path;

/// (table, specific % floor).
/// dcgm.tsv: the 13 rows below specific share the format `Detected %ld %s for GPU %u` (SBE, DBE,
/// PCIe replay and field violations): the field's name decides, so they read by its words (a
/// generic kind or `diag_failure`), never by one code's entry.
const FLOORS: [(&str, u32); 2] = [("nvml-errors.tsv", 94), ("dcgm.tsv", 80)];

/// nvidia-smi lines that are not a failure of their own, with the reason.
const NVIDIA_SMI_DECISIONS: [(&str, &str); 3] = [
    (
        "Please also try adding directory",
        "second line of `NVIDIA-SMI couldn't find ... library`, which gives the event",
    ),
    (
        "Are you sure you are using nvidia-smi provided",
        "second line of `Mismatch in versions between nvidia-smi and NVML`, which gives the event",
    ),
    (
        "NVML library version:",
        "detail line after `Failed to initialize NVML: Driver/library version mismatch`, which gives the event",
    ),
];

fn vocab_dir() -> Option<std::path::PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vocab");
    d.is_dir().then_some(d)
}

fn rows(dir: &Path, file: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
    text.lines()
        .skip(2)
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

/// Fills printf specifiers: `%s` from `strings` in turn (the last one repeats), numbers with
/// plausible values.
fn render(fmt: &str, strings: &[&str]) -> String {
    let mut out = String::new();
    let mut s = 0usize;
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
            if n.is_ascii_alphabetic() && !matches!(n, 'l' | 'z' | 'h') || n == '%' {
                break;
            }
        }
        match spec.chars().last() {
            Some('s') => {
                out.push_str(strings[s.min(strings.len() - 1)]);
                s += 1;
            }
            Some('d' | 'u' | 'i') => out.push('1'),
            Some('x' | 'X') => out.push_str("0x1f"),
            Some('f' | 'e') => out.push_str("12.5"),
            Some('%') => out.push('%'),
            _ => {}
        }
    }
    out
}

#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Specific,
    Generic,
    Decided,
    Nothing,
}

#[derive(Default)]
struct Tally {
    by_family: BTreeMap<String, [u32; 4]>,
    misses: Vec<String>,
}

impl Tally {
    fn add(&mut self, family: &str, o: Outcome, line: &str) {
        self.by_family.entry(family.to_string()).or_default()[o as usize] += 1;
        if o == Outcome::Nothing {
            self.misses.push(line.to_string());
        }
    }

    /// Prints the figures; returns (covered %, specific %).
    fn report(&self, table: &str) -> (u32, u32) {
        let mut all = [0u32; 4];
        for (f, c) in &self.by_family {
            let n: u32 = c.iter().sum();
            eprintln!(
                "{table} {f:<22} rows {n:>4}  specific {:>4}  generic {:>4}  decided {:>4}  none {:>4}",
                c[0], c[1], c[2], c[3]
            );
            for i in 0..4 {
                all[i] += c[i];
            }
        }
        let n = all.iter().sum::<u32>().max(1);
        let covered = (all[0] + all[2]) * 100 / n;
        let specific = all[0] * 100 / n;
        eprintln!("{table}: {n} rows, specific or decided {covered}%, specific {specific}%");
        for m in &self.misses {
            eprintln!("  none: {m}");
        }
        (covered, specific)
    }
}

fn scanned(set: &RecognizerSet, line: &str) -> Outcome {
    let buf = format!("{line}\n");
    let out = scan_buffer(buf.as_bytes(), set, false, 1000);
    let ids: Vec<&str> = out.events.iter().map(|e| e.draft.recognizer()).collect();
    if ids.iter().any(|id| !set.is_generic_id(id)) {
        Outcome::Specific
    } else if !ids.is_empty() {
        Outcome::Generic
    } else {
        Outcome::Nothing
    }
}

/// The outcome of a line that carries NVML code `name`: a code the table calls benign and that
/// gives no event is a recorded decision.
fn nvml_outcome(set: &RecognizerSet, line: &str, name: &str) -> Outcome {
    match scanned(set, line) {
        Outcome::Nothing
            if set
                .nvml
                .iter()
                .any(|e| e.name == name && e.benign.is_some()) =>
        {
            Outcome::Decided
        }
        o => o,
    }
}

fn nvml(set: &RecognizerSet, dir: &Path) -> Tally {
    let mut t = Tally::default();
    let all = rows(dir, "nvml-errors.tsv");
    let class_of: BTreeMap<&str, &str> = all
        .iter()
        .filter(|r| r.first().map(String::as_str) == Some("pynvml_class"))
        .filter_map(|r| Some((r.get(1)?.as_str(), r.get(3)?.as_str())))
        .collect();
    for r in &all {
        let (Some(kind), Some(name), Some(text)) = (r.first(), r.get(1), r.get(3)) else {
            continue;
        };
        let (line, family) = match kind.as_str() {
            "nvmlReturn_t" => (
                format!("Failed to initialize NVML: {text}"),
                "nvmlErrorString",
            ),
            "pynvml_class" => (
                format!("pynvml.nvml.{text}: the code's text"),
                "pynvml class",
            ),
            "pynvml" if !name.is_empty() => (
                format!(
                    "pynvml.{}: {text}",
                    class_of.get(name.as_str()).unwrap_or(&"NVMLError")
                ),
                "pynvml text",
            ),
            "pynvml" => (format!("pynvml.nvml.NVMLError: {}", render(text, &[])), "pynvml text"),
            "go-nvml_fallback" if !name.is_empty() => (
                format!("E0101 12:00:00.000000       1 factory.go:99] Failed to initialize NVML: {text}."),
                "go-nvml name",
            ),
            "go-nvml_fallback" => (
                format!("failed to get device count: nvml: {}", render(text, &[])),
                "go-nvml name",
            ),
            "nvidia-smi" => {
                if let Some((_, why)) = NVIDIA_SMI_DECISIONS.iter().find(|(p, _)| text.starts_with(p)) {
                    eprintln!("decided: {text} ({why})");
                    t.add("nvidia-smi", Outcome::Decided, text);
                    continue;
                }
                if text == "ERR!" {
                    let line = "| N/A   ERR!    P0    ERR! / 300W |  1MiB / 16160MiB |".to_string();
                    t.add("nvidia-smi", nvml_outcome(set, &line, name), &line);
                    continue;
                }
                let strings: &[&str] = if text.contains("couldn't find %s library") {
                    &["libnvidia-ml.so"]
                } else if text.contains("NVML: %s") || text.contains("GPUs: %s") || text.contains("devices: %s") {
                    &["Driver Not Loaded"]
                } else {
                    &["0000:3B:00.0", "Unknown Error"]
                };
                (render(text, strings), "nvidia-smi")
            }
            _ => continue,
        };
        let o = nvml_outcome(set, &line, name);
        t.add(family, o, &line);
    }
    t
}

fn dcgm(catalog: &Catalog, dir: &Path) -> Tally {
    let mut t = Tally::default();
    for r in rows(dir, "dcgm.tsv") {
        let (Some(kind), Some(name), Some(fmt)) = (r.first(), r.get(1), r.get(3)) else {
            continue;
        };
        if kind != "dcgmError_t" {
            continue;
        }
        if name == "DCGM_FR_OK" {
            t.add("DCGM_FR (ok)", Outcome::Decided, name);
            continue;
        }
        if fmt.trim().is_empty() {
            // codes whose message is built at run time (EUD, retest): only their JSON error_id
            // names them, and a failed test row still gives `diag_failure`
            t.add("DCGM_FR (no text)", Outcome::Decided, name);
            continue;
        }
        let msg = render(fmt, &["nvlink_crc"]);
        let table = format!(
            "| Diagnostic                | Fail - GPU: 0                                  |\n| Warning                   | GPU 0 {msg} |\n"
        );
        let (events, _) = dcgmi::events(&table, catalog);
        let detail: Vec<_> = events.iter().filter(|e| e.line == 1).collect();
        let o = if detail.iter().any(|e| e.attrs.contains_key("dcgm_code")) {
            Outcome::Specific
        } else if detail.iter().any(|e| e.kind != "diag_failure") {
            Outcome::Generic
        } else {
            Outcome::Nothing
        };
        t.add("DCGM_FR message", o, &format!("{name}: {msg}"));
    }
    t
}

#[test]
fn tools_vocabularies_are_read() {
    let Some(dir) = vocab_dir() else {
        eprintln!(
            "SKIPPED: ../shared/vocab is absent; the NVML and DCGM coverage was not measured"
        );
        return;
    };
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    let set = &k.recognizers;
    let mut failed = Vec::new();
    for (table, tally) in [
        ("nvml-errors.tsv", nvml(set, &dir)),
        ("dcgm.tsv", dcgm(&k.catalog, &dir)),
    ] {
        let (_, specific) = tally.report(table);
        let floor = FLOORS.iter().find(|(t, _)| *t == table).map_or(0, |f| f.1);
        if specific < floor {
            failed.push(format!("{table}: specific {specific}% < {floor}%"));
        }
        if !tally.misses.is_empty() {
            failed.push(format!("{table}: {} rows give nothing", tally.misses.len()));
        }
    }
    assert!(failed.is_empty(), "{failed:?}");
}
