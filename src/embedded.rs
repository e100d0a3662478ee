//! The built-in knowledge as the build embedded it: `build.rs` parses each `data/*.toml` (the
//! source of truth) and writes it as compact JSON, which a run deserializes into the same types
//! the TOML would give, at a fraction of the cost of parsing TOML. The TOML texts stay embedded
//! too (`BUILTIN_*` constants) for what shows or tests the data as written; a test checks that
//! both forms of every file deserialize to the same values.

use serde::de::DeserializeOwned;

/// `data/recognizers.toml` as JSON.
pub(crate) const RECOGNIZERS: &str = include_str!(concat!(env!("OUT_DIR"), "/recognizers.json"));
/// `data/jobs.toml` as JSON.
pub(crate) const JOBS: &str = include_str!(concat!(env!("OUT_DIR"), "/jobs.json"));
/// `data/verbs.toml` as JSON.
pub(crate) const VERBS: &str = include_str!(concat!(env!("OUT_DIR"), "/verbs.json"));
/// `data/ntstatus.toml` as JSON.
pub(crate) const NTSTATUS: &str = include_str!(concat!(env!("OUT_DIR"), "/ntstatus.json"));
/// `data/catalog.toml` as JSON.
pub(crate) const CATALOG: &str = include_str!(concat!(env!("OUT_DIR"), "/catalog.json"));
/// `data/rules.toml` as JSON.
pub(crate) const RULES: &str = include_str!(concat!(env!("OUT_DIR"), "/rules.json"));
/// `data/nvrm.toml` as JSON.
pub(crate) const NVRM: &str = include_str!(concat!(env!("OUT_DIR"), "/nvrm.json"));

/// The embedded form of a built-in file, deserialized. The schema is checked on the TOML by the
/// knowledge tests (and on this form by [`tests::same_as_toml`]), so a failure here is a build
/// defect, not a user error.
pub(crate) fn load<T: DeserializeOwned>(json: &str, what: &str) -> T {
    serde_json::from_str(json)
        .unwrap_or_else(|e| panic!("the embedded {what} does not fit its schema: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::fmt::Debug;

    /// The embedded JSON and the TOML of one file give the same values (floats, strings and
    /// every default included).
    fn same<T: DeserializeOwned + Debug>(json: &str, toml_text: &str, what: &str) {
        let a: T = load(json, what);
        let b: T = toml::from_str(toml_text).unwrap_or_else(|e| panic!("{what}: {e}"));
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "{what}: JSON and TOML differ"
        );
    }

    #[test]
    fn same_as_toml() {
        use crate::events::{self, RecognizerFile};
        same::<RecognizerFile>(RECOGNIZERS, events::BUILTIN_RECOGNIZERS, "recognizers");
        same::<RecognizerFile>(JOBS, events::BUILTIN_JOB_RECOGNIZERS, "jobs");
        same::<RecognizerFile>(VERBS, events::verbs::BUILTIN_VERBS, "verbs");
        same::<RecognizerFile>(NTSTATUS, events::ntstatus::BUILTIN_NTSTATUS, "ntstatus");
        same::<crate::catalog::CatalogFile>(CATALOG, crate::catalog::BUILTIN_CATALOG, "catalog");
        same::<crate::rules::RulesFile>(RULES, crate::rules::BUILTIN_RULES, "rules");
        same::<events::nvrm::NvrmFile>(NVRM, events::nvrm::BUILTIN_NVRM, "nvrm");
    }
}
