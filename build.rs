//! Build step: the knowledge in `data/*.toml` (the source of truth, written and reviewed by
//! humans) is parsed here, once per build, and embedded as compact JSON in `OUT_DIR`. A run then
//! deserializes the built-in knowledge with `serde_json` (already a dependency) into the same
//! types, several times faster than parsing the TOML text; user files (`--rules`) are still TOML
//! parsed at run time. A data file that does not parse fails the build with the parser's message.
//! The recognizers' `samples` and `rejects` go to `samples.json` (only the self-test reads them).
//! Beside them, `regex_gates.rs`: the literals every built-in regex's matches begin and end with
//! (see `src/events/regex_gate.rs`).

use std::collections::BTreeSet;
use std::fmt::Write as _;
use std::path::{Path, PathBuf};

#[path = "src/events/regex_gate.rs"]
mod regex_gate;

/// The data files whose `[[recognizer]]` regexes are built in (see [`write_regex_gates`]).
const RECOGNIZER_FILES: [&str; 9] = [
    "recognizers",
    "jobs",
    "progress",
    "verbs",
    "ntstatus",
    "cuda",
    "nvml",
    "stack",
    "versions",
];

/// The data files embedded, by stem (`data/STEM.toml` → `OUT_DIR/STEM.json`).
const FILES: [&str; 14] = [
    "recognizers",
    "jobs",
    "progress",
    "verbs",
    "ntstatus",
    "cuda",
    "nvml",
    "stack",
    "versions",
    "known-issues",
    "catalog",
    "rules",
    "nvrm",
    "leads",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    println!("cargo:rerun-if-changed=src/events/regex_gate.rs");
    let mut regexes = BTreeSet::new();
    let mut samples = Vec::new();
    for stem in FILES {
        let path = format!("data/{stem}.toml");
        println!("cargo:rerun-if-changed={path}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut value: toml::Value =
            toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        if let Some(at) = datetime_in(&value, stem) {
            // JSON has no date type: a TOML datetime would reach the run as a private table
            panic!("{path}: {at} is a TOML datetime; knowledge data writes times as strings");
        }
        if RECOGNIZER_FILES.contains(&stem) {
            regexes.extend(regexes_of(&value));
            samples.push(take_samples(&mut value));
        }
        let json = serde_json::to_string(&value).unwrap_or_else(|e| panic!("{path}: {e}"));
        std::fs::write(out.join(format!("{stem}.json")), json)
            .unwrap_or_else(|e| panic!("{stem}.json: {e}"));
    }
    let json = serde_json::to_string(&samples).unwrap_or_else(|e| panic!("samples: {e}"));
    std::fs::write(out.join("samples.json"), json).unwrap_or_else(|e| panic!("samples.json: {e}"));
    write_regex_gates(&out, &regexes);
}

/// The `samples` and `rejects` of every `[[recognizer]]` of a recognizer file, taken out of it
/// (in recognizer order, `[samples, rejects]` each): only the knowledge's self-test reads them,
/// so a run does not deserialize them (they are two fifths of the recognizer files).
fn take_samples(v: &mut toml::Value) -> Vec<[toml::Value; 2]> {
    let Some(list) = v.get_mut("recognizer").and_then(toml::Value::as_array_mut) else {
        return Vec::new();
    };
    let take = |r: &mut toml::Value, key: &str| {
        r.as_table_mut()
            .and_then(|t| t.remove(key))
            .unwrap_or_else(|| toml::Value::Array(Vec::new()))
    };
    list.iter_mut()
        .map(|r| [take(r, "samples"), take(r, "rejects")])
        .collect()
}

/// The `regex` of every `[[recognizer]]` of a recognizer file.
fn regexes_of(v: &toml::Value) -> Vec<String> {
    let Some(list) = v.get("recognizer").and_then(toml::Value::as_array) else {
        return Vec::new();
    };
    list.iter()
        .filter_map(|r| r.get("regex").and_then(toml::Value::as_str))
        .map(str::to_string)
        .collect()
}

/// `OUT_DIR/regex_gates.rs`: every built-in regex with the literals its matches begin and end
/// with (see `src/events/regex_gate.rs`), as a static table the run reads without parsing. A
/// regex that does not parse gets no entry (the knowledge tests compile every one).
fn write_regex_gates(out: &Path, regexes: &BTreeSet<String>) {
    let mut rs = String::from(
        "/// (regex source, prefix literals, suffix literals) of every built-in regex, sorted\n\
         /// (written by build.rs).\n\
         pub(super) static REGEX_GATES: &[(&str, Gate, Gate)] = &[\n",
    );
    for src in regexes {
        let Some((pre, suf)) = regex_gate::gate(src) else {
            continue;
        };
        let _ = writeln!(rs, "    ({src:?}, &[{}], &[{}]),", bytes(&pre), bytes(&suf));
    }
    rs.push_str("];\n");
    std::fs::write(out.join("regex_gates.rs"), rs)
        .unwrap_or_else(|e| panic!("regex_gates.rs: {e}"));
}

/// Byte strings as Rust literals, comma-separated.
fn bytes(lits: &[Vec<u8>]) -> String {
    let one = |l: &Vec<u8>| {
        let mut s = String::from("b\"");
        for &b in l {
            if b.is_ascii_graphic() && b != b'"' && b != b'\\' || b == b' ' {
                s.push(char::from(b));
            } else {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
        s.push('"');
        s
    };
    lits.iter().map(one).collect::<Vec<_>>().join(", ")
}

/// The key path of the first TOML datetime in `v`, if any.
fn datetime_in(v: &toml::Value, at: &str) -> Option<String> {
    match v {
        toml::Value::Datetime(_) => Some(at.to_string()),
        toml::Value::Array(a) => a
            .iter()
            .enumerate()
            .find_map(|(i, x)| datetime_in(x, &format!("{at}[{i}]"))),
        toml::Value::Table(t) => t
            .iter()
            .find_map(|(k, x)| datetime_in(x, &format!("{at}.{k}"))),
        _ => None,
    }
}
