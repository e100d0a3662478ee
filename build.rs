//! Build step: the knowledge in `data/*.toml` (the source of truth, written and reviewed by
//! humans) is parsed here, once per build, and embedded as compact JSON in `OUT_DIR`. A run then
//! deserializes the built-in knowledge with `serde_json` (already a dependency) into the same
//! types, several times faster than parsing the TOML text; user files (`--rules`) are still TOML
//! parsed at run time. A data file that does not parse fails the build with the parser's message.

use std::path::PathBuf;

/// The data files embedded, by stem (`data/STEM.toml` → `OUT_DIR/STEM.json`).
const FILES: [&str; 7] = [
    "recognizers",
    "jobs",
    "verbs",
    "ntstatus",
    "catalog",
    "rules",
    "nvrm",
];

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for stem in FILES {
        let path = format!("data/{stem}.toml");
        println!("cargo:rerun-if-changed={path}");
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let value: toml::Value = toml::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
        if let Some(at) = datetime_in(&value, stem) {
            // JSON has no date type: a TOML datetime would reach the run as a private table
            panic!("{path}: {at} is a TOML datetime; knowledge data writes times as strings");
        }
        let json = serde_json::to_string(&value).unwrap_or_else(|e| panic!("{path}: {e}"));
        std::fs::write(out.join(format!("{stem}.json")), json)
            .unwrap_or_else(|e| panic!("{stem}.json: {e}"));
    }
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
