//! NVML return codes as data: the `[[nvml]]` table of data/nvml.toml (each `nvmlReturn_t` with
//! its texts, pynvml class and reading) decodes the code a wrapper recognizer captured as `nvml`
//! (a text, a pynvml class, a go-nvml `ERROR_*` name) or as a number (`nvml_value`), and gives
//! the draft the code's kind, layer and severity. A code that is not a failure (`Not Supported`,
//! `Success`) drops the draft; a code the table lacks stays an `nvml_error` of layer `unknown`.

use super::Draft;
use crate::model::{Layer, Severity};
use serde::Deserialize;

/// The NVML table (and the recognizers of its wrappers) as shipped.
pub const BUILTIN_NVML: &str = include_str!("../../data/nvml.toml");

/// One `nvmlReturn_t` value.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NvmlReturn {
    /// Enum name (`NVML_ERROR_GPU_IS_LOST`).
    pub name: String,
    /// Numeric value.
    pub value: i64,
    /// The texts programs print for it (`nvmlErrorString`, then pynvml's own).
    #[serde(default)]
    pub texts: Vec<String>,
    /// pynvml's exception class (`NVMLError_GpuIsLost`).
    pub class: String,
    /// Event kind.
    pub kind: String,
    /// Layer the code points at on its own.
    pub layer: Layer,
    /// Severity on its own.
    pub severity: Severity,
    /// What the code means for the node.
    #[serde(default)]
    pub meaning: Option<String>,
    /// Other layers it may point at, when its own is `unknown`.
    #[serde(default)]
    pub candidates: Vec<Layer>,
    /// Why the code is not a failure: no event.
    #[serde(default)]
    pub benign: Option<String>,
}

/// The captures that carry a code: a text, class or name, or a number.
const WORD_KEYS: [&str; 4] = ["nvml", "nvml_name", "nvml_count", "nvml_devices"];
const NUMBER_KEYS: [&str; 2] = ["nvml_value", "nvml_number"];

/// The entry a word names: its text (any case), its pynvml class, or its enum name with or
/// without the `NVML_` prefix (go-nvml prints `ERROR_GPU_IS_LOST`).
pub fn lookup_word<'t>(table: &'t [NvmlReturn], word: &str) -> Option<&'t NvmlReturn> {
    let w = word.trim().trim_end_matches('.');
    table.iter().rev().find(|e| {
        e.texts
            .iter()
            .any(|t| t.trim_end_matches('.').eq_ignore_ascii_case(w))
            || e.class == w
            || e.name == w
            || e.name.strip_prefix("NVML_") == Some(w)
    })
}

/// Gives an `nvml_error` draft that carries a code its kind, layer and severity from the table;
/// returns false when the code is not a failure (the draft is to be dropped).
pub fn annotate(table: &[NvmlReturn], d: &mut Draft) -> bool {
    if table.is_empty() || d.kind != "nvml_error" {
        return true;
    }
    let word = WORD_KEYS
        .iter()
        .find_map(|k| d.attrs.get(k).map(str::to_string));
    let number = NUMBER_KEYS
        .iter()
        .find_map(|k| d.attrs.get(k).and_then(|v| v.parse::<i64>().ok()));
    let entry = match (&word, number) {
        (Some(w), _) => lookup_word(table, w),
        (None, Some(n)) => table.iter().rev().find(|e| e.value == n),
        (None, None) => return true,
    };
    let Some(e) = entry else {
        d.attrs.insert("nvml_code", "unknown to this table".into());
        d.layer = Some(Layer::Unknown);
        d.severity = Some(Severity::Warning);
        return true;
    };
    if e.benign.is_some() {
        return false;
    }
    d.kind = super::intern(&e.kind);
    d.code = Some(e.value);
    d.layer = Some(e.layer);
    d.severity = Some(e.severity);
    d.attrs.insert("nvml_code", e.name.clone());
    if let Some(m) = &e.meaning {
        d.attrs.insert_if_absent("reading", m);
    }
    if !e.candidates.is_empty() {
        let c: Vec<&str> = e.candidates.iter().map(|l| l.as_str()).collect();
        d.attrs.insert("candidates", c.join(", "));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn table() -> Vec<NvmlReturn> {
        #[derive(Deserialize)]
        struct F {
            nvml: Vec<NvmlReturn>,
        }
        toml::from_str::<F>(BUILTIN_NVML).unwrap().nvml
    }

    #[test]
    fn words_of_every_form_decode() {
        let t = table();
        let name = |w: &str| lookup_word(&t, w).map(|e| e.name.as_str());
        assert_eq!(name("GPU is lost"), Some("NVML_ERROR_GPU_IS_LOST"));
        assert_eq!(name("NVMLError_GpuIsLost"), Some("NVML_ERROR_GPU_IS_LOST"));
        assert_eq!(name("ERROR_GPU_IS_LOST"), Some("NVML_ERROR_GPU_IS_LOST"));
        assert_eq!(
            name("RM has detected an NVML/RM version mismatch"),
            Some("NVML_ERROR_LIB_RM_VERSION_MISMATCH")
        );
        assert_eq!(name("unknown error"), Some("NVML_ERROR_UNKNOWN"));
        assert_eq!(name("Frobnicated"), None);
        let mut seen = std::collections::BTreeSet::new();
        for e in &t {
            assert!(seen.insert(e.value), "{} twice", e.value);
            assert!(e.benign.is_some() || e.meaning.is_some(), "{}", e.name);
        }
    }
}
