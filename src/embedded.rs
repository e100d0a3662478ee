//! The built-in knowledge as the build embedded it: `build.rs` parses each `data/*.toml` (the
//! source of truth) and writes it as compact JSON, which a run deserializes into the same types
//! the TOML would give, at a fraction of the cost of parsing TOML. The TOML texts stay embedded
//! too (`BUILTIN_*` constants) for what shows or tests the data as written; a test checks that
//! both forms of every file deserialize to the same values. The recognizers' samples and rejects
//! are embedded apart ([`SAMPLES`]): only the knowledge's self-test reads them.

use serde::de::DeserializeOwned;

/// `data/recognizers.toml` as JSON.
pub(crate) const RECOGNIZERS: &str = include_str!(concat!(env!("OUT_DIR"), "/recognizers.json"));
/// `data/jobs.toml` as JSON.
pub(crate) const JOBS: &str = include_str!(concat!(env!("OUT_DIR"), "/jobs.json"));
/// `data/progress.toml` as JSON.
pub(crate) const PROGRESS: &str = include_str!(concat!(env!("OUT_DIR"), "/progress.json"));
/// `data/verbs.toml` as JSON.
pub(crate) const VERBS: &str = include_str!(concat!(env!("OUT_DIR"), "/verbs.json"));
/// `data/ntstatus.toml` as JSON.
pub(crate) const NTSTATUS: &str = include_str!(concat!(env!("OUT_DIR"), "/ntstatus.json"));
/// `data/cuda.toml` as JSON.
pub(crate) const CUDA: &str = include_str!(concat!(env!("OUT_DIR"), "/cuda.json"));
/// `data/nvml.toml` as JSON.
pub(crate) const NVML: &str = include_str!(concat!(env!("OUT_DIR"), "/nvml.json"));
/// `data/stack.toml` as JSON.
pub(crate) const STACK: &str = include_str!(concat!(env!("OUT_DIR"), "/stack.json"));
/// `data/catalog.toml` as JSON.
pub(crate) const CATALOG: &str = include_str!(concat!(env!("OUT_DIR"), "/catalog.json"));
/// `data/rules.toml` as JSON.
pub(crate) const RULES: &str = include_str!(concat!(env!("OUT_DIR"), "/rules.json"));
/// `data/nvrm.toml` as JSON.
pub(crate) const NVRM: &str = include_str!(concat!(env!("OUT_DIR"), "/nvrm.json"));
/// `data/versions.toml` as JSON.
pub(crate) const VERSIONS: &str = include_str!(concat!(env!("OUT_DIR"), "/versions.json"));
/// `data/known-issues.toml` as JSON.
pub(crate) const KNOWN: &str = include_str!(concat!(env!("OUT_DIR"), "/known-issues.json"));
/// `data/leads.toml` as JSON.
pub(crate) const LEADS: &str = include_str!(concat!(env!("OUT_DIR"), "/leads.json"));
/// The `[samples, rejects]` of every built-in recognizer, per recognizer file in load order and
/// per recognizer in file order: taken out of the files above, since only the self-test reads
/// them.
pub(crate) const SAMPLES: &str = include_str!(concat!(env!("OUT_DIR"), "/samples.json"));

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

    /// A recognizer file's two forms: the samples the JSON lacks are those of [`SAMPLES`].
    fn same_recognizers(json: &str, toml_text: &str, what: &str, at: usize) {
        use crate::events::RecognizerFile;
        let a: RecognizerFile = load(json, what);
        let mut b: RecognizerFile =
            toml::from_str(toml_text).unwrap_or_else(|e| panic!("{what}: {e}"));
        let samples: Vec<Vec<(Vec<String>, Vec<String>)>> = load(SAMPLES, "samples");
        assert_eq!(
            samples[at].len(),
            b.recognizer.len(),
            "{what}: samples per recognizer"
        );
        for (d, (s, r)) in b.recognizer.iter_mut().zip(&samples[at]) {
            assert_eq!((&d.samples, &d.rejects), (s, r), "{what}: {}", d.id);
            (d.samples, d.rejects) = (Vec::new(), Vec::new());
        }
        assert_eq!(
            format!("{a:?}"),
            format!("{b:?}"),
            "{what}: JSON and TOML differ"
        );
    }

    #[test]
    fn same_as_toml() {
        use crate::events;
        same_recognizers(RECOGNIZERS, events::BUILTIN_RECOGNIZERS, "recognizers", 0);
        same_recognizers(JOBS, events::BUILTIN_JOB_RECOGNIZERS, "jobs", 1);
        same_recognizers(
            PROGRESS,
            events::BUILTIN_PROGRESS_RECOGNIZERS,
            "progress",
            2,
        );
        same_recognizers(VERBS, events::verbs::BUILTIN_VERBS, "verbs", 3);
        same_recognizers(NTSTATUS, events::ntstatus::BUILTIN_NTSTATUS, "ntstatus", 4);
        same_recognizers(CUDA, events::cuda::BUILTIN_CUDA, "cuda", 5);
        same_recognizers(NVML, events::nvml::BUILTIN_NVML, "nvml", 6);
        same_recognizers(STACK, events::BUILTIN_STACK_RECOGNIZERS, "stack", 7);
        same_recognizers(VERSIONS, events::BUILTIN_VERSIONS, "versions", 8);
        same::<crate::known::KnownFile>(KNOWN, crate::known::BUILTIN_KNOWN, "known issues");
        same::<crate::catalog::CatalogFile>(CATALOG, crate::catalog::BUILTIN_CATALOG, "catalog");
        same::<crate::rules::RulesFile>(RULES, crate::rules::BUILTIN_RULES, "rules");
        same::<events::nvrm::NvrmFile>(NVRM, events::nvrm::BUILTIN_NVRM, "nvrm");
        same::<crate::leads::vocab::LeadsFile>(LEADS, crate::leads::vocab::BUILTIN_LEADS, "leads");
    }
}
