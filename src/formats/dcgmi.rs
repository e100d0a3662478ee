//! `dcgmi diag` text tables: each test row with its result, cells wrapped over several rows
//! re-joined, failures and warnings turned into events on the GPU they name.

use crate::catalog::Catalog;
use crate::model::Severity;
use std::collections::BTreeMap;

/// True when the text is a dcgmi diag table.
pub fn looks_like(head: &[u8]) -> bool {
    let t = String::from_utf8_lossy(&head[..head.len().min(16 * 1024)]);
    t.lines().any(|l| {
        l.starts_with('|')
            && (l.contains("Pass")
                || l.contains("Fail")
                || l.contains("Warning")
                || l.contains("Diagnostic"))
    })
}

/// One test row.
#[derive(Clone, Debug)]
pub struct DiagRow {
    /// 0-based first line of the row.
    pub line: usize,
    /// Test name (or `Warning`/`Info` for detail rows).
    pub name: String,
    /// Result cell, joined across wrapped lines.
    pub result: String,
}

/// An event from a diag table.
#[derive(Clone, Debug)]
pub struct DiagEvent {
    /// 0-based line.
    pub line: usize,
    /// Kind.
    pub kind: String,
    /// Severity.
    pub severity: Severity,
    /// GPU index named by the row.
    pub gpu_index: Option<String>,
    /// Details.
    pub attrs: BTreeMap<String, String>,
}

fn cells(line: &str) -> Option<(String, String)> {
    let inner = line.strip_prefix('|')?;
    let mut parts = inner.split('|');
    let a = parts.next()?;
    let b = parts.next().unwrap_or("");
    Some((a.to_string(), b.to_string()))
}

/// The text of a cell without its one-space left margin and its right padding.
fn content(cell: &str) -> &str {
    cell.strip_prefix(' ').unwrap_or(cell).trim_end()
}

/// dcgmi wraps long results at a fixed width, mid-word: a piece that fills the cell continues
/// directly on the next row; a shorter piece ended at a space.
fn is_full(cell: &str) -> bool {
    content(cell).len() + 3 >= cell.len()
}

/// Reads the rows of a table.
pub fn rows(text: &str) -> Vec<DiagRow> {
    let mut out: Vec<DiagRow> = Vec::new();
    let mut prev_full = false;
    for (i, l) in text.lines().enumerate() {
        let Some((a, b)) = cells(l.trim_end_matches('\r')) else {
            continue;
        };
        if a.trim().starts_with('=') {
            continue;
        }
        if a.trim().starts_with('-') {
            // `|-----  Deployment  --------+---|`: the tests below belong to this section
            let name = a.split('+').next().unwrap_or("").trim_matches(['-', ' ']);
            if !name.is_empty() {
                out.push(DiagRow {
                    line: i,
                    name: name.to_string(),
                    result: String::new(),
                });
            }
            prev_full = false;
            continue;
        }
        if !a.trim().is_empty() {
            out.push(DiagRow {
                line: i,
                name: a.trim().to_string(),
                result: content(&b).trim_start().to_string(),
            });
        } else if let Some(r) = out.last_mut() {
            let piece = content(&b);
            if prev_full {
                r.result.push_str(piece);
            } else {
                if !r.result.is_empty() {
                    r.result.push(' ');
                }
                r.result.push_str(piece.trim_start());
            }
        }
        prev_full = is_full(&b);
    }
    out
}

/// The GPU a result names: the one after `Fail - GPU:` when there is a failure, else the first `GPU N`.
fn named_gpu(result: &str) -> Option<String> {
    let after = match result.find("Fail - GPU") {
        Some(p) => &result[p + "Fail - GPU".len()..],
        None => &result[result.find("GPU")? + 3..],
    };
    let n: String = after
        .trim_start_matches(['s', ':', ' '])
        .chars()
        .take_while(char::is_ascii_digit)
        .collect();
    (!n.is_empty()).then_some(n)
}

/// The kinds a failed result raises, each with its severity, and the DCGM code it matched.
pub type Classes = (Vec<(String, Severity)>, Option<String>);

/// What a failed result is. A text matching one of the DCGM failure catalog's message formats
/// takes that entry (and its `also` kinds, at their kind's severity); otherwise the test name and
/// the text's words decide, and a failure nothing names is `diag_failure`.
pub fn classify(test: &str, text: &str, catalog: &Catalog) -> Classes {
    let norm = normalize(text);
    for e in catalog.dcgm.values() {
        if e.messages.iter().any(|m| matches_format(m, &norm)) {
            let mut kinds = vec![(e.kind.clone(), e.severity)];
            let also = e
                .also_when
                .as_deref()
                .is_none_or(|w| norm.contains(&w.to_ascii_lowercase()));
            if also {
                kinds.extend(
                    e.also
                        .iter()
                        .map(|k| (k.clone(), catalog.classify(k, None).1)),
                );
            }
            return (kinds, Some(e.code.clone()));
        }
    }
    let kind = keyword_kind(&format!("{} {norm}", test.to_ascii_lowercase()));
    let severity = if kind == "diag_failure" {
        Severity::Warning
    } else {
        Severity::Error
    };
    (vec![(kind.to_string(), severity)], None)
}

/// Lower case, blanks collapsed (wrapped table cells join with odd spacing).
fn normalize(text: &str) -> String {
    text.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .to_ascii_lowercase()
}

/// Whether `text` (normalized) holds every literal piece of a printf format, in order.
pub fn matches_format(format: &str, text: &str) -> bool {
    let f = normalize(format);
    let mut at = 0usize;
    let mut any = false;
    for piece in literal_pieces(&f) {
        let piece = piece.trim();
        if piece.len() < 3 {
            continue;
        }
        match text[at..].find(piece) {
            Some(p) => {
                at += p + piece.len();
                any = true;
            }
            None => return false,
        }
    }
    any
}

/// The text between `%` specifiers (`%u`, `%.1f`, `%lld`, `%s`, `%%`).
fn literal_pieces(f: &str) -> Vec<&str> {
    let mut out = Vec::new();
    let b = f.as_bytes();
    let (mut start, mut i) = (0usize, 0usize);
    while i < b.len() {
        if b[i] == b'%' {
            out.push(f.get(start..i).unwrap_or(""));
            i += 1;
            while i < b.len() && (b[i].is_ascii_digit() || b[i] == b'.' || b"lhzj".contains(&b[i]))
            {
                i += 1;
            }
            i += 1;
            start = i.min(b.len());
            continue;
        }
        i += 1;
    }
    out.push(f.get(start..).unwrap_or(""));
    out
}

/// The kind a failure's words point at when no catalog message matches.
fn keyword_kind(lower: &str) -> &'static str {
    if lower.contains("thermal") || lower.contains("temperature") {
        "gpu_thermal"
    } else if lower.contains("power") {
        "gpu_power"
    } else if lower.contains("nvlink") {
        "nvlink_error"
    } else if lower.contains("row remap") {
        "row_remap"
    } else if lower.contains("dbe") || lower.contains("ecc") || lower.contains("uncorrectable") {
        "ecc_dbe"
    } else {
        "diag_failure"
    }
}

/// Turns failures and the Error/Warning rows of a test into events, one classifier for all.
pub fn events(text: &str, catalog: &Catalog) -> (Vec<DiagEvent>, u64) {
    let rows = rows(text);
    let mut out = Vec::new();
    let mut current_test = String::new();
    for r in &rows {
        let detail = matches!(r.name.as_str(), "Error" | "Warning" | "Info");
        if !detail {
            current_test = r.name.clone();
        }
        let lower = r.result.to_ascii_lowercase();
        let failed = lower.contains("fail");
        let raised = match r.name.as_str() {
            "Info" => false,
            "Error" => true,
            "Warning" => true,
            _ => failed,
        };
        if !raised || r.result.is_empty() {
            continue;
        }
        // a test row's own `Fail - GPU: 0` is the diagnostic's verdict on that test (its kind
        // is `diag_failure`, judged by its test); detail rows by their text and DCGM code
        let (kinds, code) = if detail {
            classify(&current_test, &r.result, catalog)
        } else {
            (vec![("diag_failure".to_string(), Severity::Warning)], None)
        };
        let generic = code.is_none() && kinds.len() == 1 && kinds[0].0 == "diag_failure";
        if r.name == "Warning" && generic && !failed {
            continue;
        }
        let unwired = (code.as_deref() == Some("DCGM_FR_NVLINK_DOWN"))
            .then(|| every_link_down(&r.result))
            .flatten();
        for (kind, severity) in kinds {
            let mut attrs = BTreeMap::new();
            attrs.insert("test".to_string(), current_test.clone());
            attrs.insert("result".to_string(), r.result.clone());
            if let Some(c) = &code {
                attrs.insert("dcgm_code".to_string(), c.clone());
            }
            let severity = match &unwired {
                Some(note) => {
                    attrs.insert("reason".to_string(), note.clone());
                    attrs.insert("normal".to_string(), "true".to_string());
                    Severity::Info
                }
                None => severity,
            };
            out.push(DiagEvent {
                line: r.line,
                kind,
                severity,
                gpu_index: named_gpu(&r.result),
                attrs,
            });
        }
    }
    discount_tests(&mut out);
    (out, rows.len() as u64)
}

/// When every NVLink a result names for a GPU is down, links 0 to N all of them and none up,
/// the GPU has no NVLink wired (a PCIe card without a bridge, a model without NVLink): DCGM's
/// PCIe test checks link status unless told not to. The note saying so, else None.
fn every_link_down(result: &str) -> Option<String> {
    let lower = normalize(result);
    let mut links: Vec<u32> = lower
        .match_indices("nvlink link ")
        .filter_map(|(p, m)| {
            let after = &lower[p + m.len()..];
            let n: String = after.chars().take_while(char::is_ascii_digit).collect();
            let tail = after[n.len()..].trim_start();
            tail.starts_with("is currently down")
                .then(|| n.parse().ok())
                .flatten()
        })
        .collect();
    links.sort_unstable();
    links.dedup();
    let contiguous = links.iter().enumerate().all(|(i, &l)| l == i as u32);
    (links.len() >= 2 && contiguous && !lower.contains(" up")).then(|| {
        format!(
            "every NVLink the diagnostic checked ({} links from 0) is down and none is up: a GPU \
             without NVLink wired (a PCIe card without a bridge), where DCGM's PCIe test checks \
             link status by default; discounted",
            links.len()
        )
    })
}

/// A failed test whose detail events are all discounted (normal for the machine) is discounted
/// too: the failure is the diagnostic's, not the GPU's.
fn discount_tests(out: &mut [DiagEvent]) {
    let mut tests: BTreeMap<String, (bool, bool)> = BTreeMap::new();
    for e in out.iter().filter(|e| e.kind != "diag_failure") {
        let t = tests.entry(e.attrs["test"].clone()).or_default();
        t.0 |= e.attrs.contains_key("normal");
        t.1 |= !e.attrs.contains_key("normal");
    }
    for e in out.iter_mut().filter(|e| e.kind == "diag_failure") {
        if tests.get(&e.attrs["test"]) == Some(&(true, false)) {
            e.severity = Severity::Info;
            e.attrs.insert("normal".to_string(), "true".to_string());
            e.attrs.insert(
                "reason".to_string(),
                "every finding of this test was discounted as normal for the GPU".to_string(),
            );
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_warning_is_joined() {
        let t = "| GPU Memory                | Pass - GPUs: 1, 2                              |\n|                           | Fail - GPU: 0                                  |\n| Warning                   | GPU 0 Thermal violations totaling 13.3 second  |\n|                           | s started at 9.7 seconds into the test for GP  |\n|                           | U 0 Verify.                                    |";
        let (ev, _) = events(t, &Catalog::builtin());
        let th = ev.iter().find(|e| e.kind == "gpu_thermal").unwrap();
        assert_eq!(th.gpu_index.as_deref(), Some("0"));
        assert!(
            th.attrs["result"].contains("13.3 seconds started"),
            "{}",
            th.attrs["result"]
        );
        assert!(
            th.attrs["result"].contains("for GPU 0"),
            "{}",
            th.attrs["result"]
        );
        let fail = ev.iter().find(|e| e.kind == "diag_failure").unwrap();
        assert_eq!(fail.gpu_index.as_deref(), Some("0"));
    }

    #[test]
    fn error_rows_of_a_section_take_the_catalog_entry_of_their_message() {
        let t = "+---------------------------+------------------------------------------------+\n\
| Diagnostic                | Result                                         |\n\
+===========================+================================================+\n\
|-----  Deployment  --------+------------------------------------------------|\n\
| Error                     | GPU 3 has uncorrectable memory errors and row  |\n\
|                           |  remappings are pending                        |\n\
| Info                      | GPU 3 had memory errors and row remappings are |\n\
|                           |  pending                                       |";
        let (ev, _) = events(t, &Catalog::builtin());
        let kinds: Vec<(&str, Option<&str>)> = ev
            .iter()
            .map(|e| (e.kind.as_str(), e.gpu_index.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            vec![("row_remap", Some("3")), ("ecc_dbe", Some("3"))]
        );
        assert_eq!(ev[0].attrs["test"], "Deployment");
        assert_eq!(ev[0].attrs["dcgm_code"], "DCGM_FR_PENDING_ROW_REMAP");
        assert_eq!(ev[1].severity, Severity::Critical);
    }

    #[test]
    fn newer_wording_without_uncorrectable_is_a_remap_only() {
        let (kinds, code) = classify(
            "Memory",
            "GPU 1 had memory errors and row remappings are pending",
            &Catalog::builtin(),
        );
        assert_eq!(kinds.len(), 1);
        assert_eq!(kinds[0].0, "row_remap");
        assert_eq!(code.as_deref(), Some("DCGM_FR_PENDING_ROW_REMAP"));
        assert!(matches_format(
            "Detected %d volatile double-bit ECC error(s) in GPU %u.",
            "detected 2 volatile double-bit ecc error(s) in gpu 0."
        ));
        assert!(!matches_format(
            "Detected %d volatile double-bit ECC error(s) in GPU %u.",
            "detected 2 gpus"
        ));
    }
}

/// True when the text is `dcgmi diag -j` JSON.
pub fn looks_like_json(head: &[u8]) -> bool {
    let h = &head[..head.len().min(8192)];
    h.iter().find(|c| !c.is_ascii_whitespace()) == Some(&b'{')
        && memchr::memmem::find(h, b"DCGM").is_some()
        && memchr::memmem::find(h, b"test").is_some()
}

/// Events from `dcgmi diag -j`: every result whose status is a failure or warning, on the GPUs it
/// names, classified by its test name and text. Line numbers point at the result's status line.
pub fn json_events(text: &str, catalog: &Catalog) -> (Vec<DiagEvent>, u64) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return (Vec::new(), 0);
    };
    let mut w = Walk {
        text,
        catalog,
        out: Vec::new(),
        seen: 0,
    };
    w.value(&v, "");
    (w.out, w.seen)
}

fn text_of(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        serde_json::Value::Array(a) => a
            .iter()
            .map(text_of)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; "),
        serde_json::Value::Object(o) => o
            .iter()
            .filter(|(k, _)| matches!(k.as_str(), "warning" | "info" | "message" | "msg"))
            .map(|(_, v)| text_of(v))
            .collect::<Vec<_>>()
            .join("; "),
        serde_json::Value::Number(n) => n.to_string(),
        _ => String::new(),
    }
}

/// A walk over a `dcgmi diag -j` document.
struct Walk<'a> {
    text: &'a str,
    catalog: &'a Catalog,
    out: Vec<DiagEvent>,
    /// Results with a status.
    seen: u64,
}

type Object = serde_json::Map<String, serde_json::Value>;

impl Walk<'_> {
    /// Walks `v`, a part of the results of test `test`.
    fn value(&mut self, v: &serde_json::Value, test: &str) {
        match v {
            serde_json::Value::Array(a) => a.iter().for_each(|x| self.value(x, test)),
            serde_json::Value::Object(o) => self.object(o, test),
            _ => {}
        }
    }

    /// An object: a result when it has a status (its own test's name, else `test`), then what
    /// it holds (the results under `tests`/`results` belong to its name).
    fn object(&mut self, o: &Object, test: &str) {
        let name = o
            .get("name")
            .or_else(|| o.get("test_name"))
            .and_then(|n| n.as_str())
            .unwrap_or(test)
            .to_string();
        let status = o
            .get("status")
            .or_else(|| o.get("result"))
            .and_then(|s| s.as_str())
            .unwrap_or("");
        if !status.is_empty() {
            self.seen += 1;
        }
        let lower_status = status.to_ascii_lowercase();
        if lower_status.starts_with("fail") || lower_status.starts_with("warn") {
            self.failure(o, &name, status);
        }
        for (k, x) in o {
            if x.is_array() || x.is_object() {
                let inner = if k == "tests" || k == "results" {
                    &name
                } else {
                    test
                };
                self.value(x, inner);
            }
        }
    }

    /// A failed or warning result of test `name`: one event per kind its text tells, on each GPU
    /// it names (at most 16), at the line of its status.
    fn failure(&mut self, o: &Object, name: &str, status: &str) {
        let detail = ["warnings", "warning", "info", "message"]
            .iter()
            .filter_map(|k| o.get(*k))
            .map(text_of)
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("; ");
        let gpus = o
            .get("gpu_ids")
            .or_else(|| o.get("gpu_id"))
            .or_else(|| o.get("gpu"))
            .map(text_of)
            .unwrap_or_default();
        let (kinds, code) = classify(name, &detail, self.catalog);
        let needle = format!("\"{status}\"");
        let line = self
            .text
            .lines()
            .position(|l| l.contains(&needle) && l.contains("status"))
            .unwrap_or(0);
        let mut attrs = BTreeMap::new();
        attrs.insert("test".to_string(), name.to_string());
        attrs.insert("result".to_string(), format!("{status}: {detail}"));
        if let Some(c) = &code {
            attrs.insert("dcgm_code".to_string(), c.clone());
        }
        for g in gpus
            .split([',', ';', ' '])
            .map(str::trim)
            .filter(|g| !g.is_empty())
            .take(16)
            .chain(gpus.is_empty().then_some(""))
        {
            for (kind, severity) in &kinds {
                self.out.push(DiagEvent {
                    line,
                    kind: kind.clone(),
                    severity: *severity,
                    gpu_index: (!g.is_empty()).then(|| g.to_string()),
                    attrs: attrs.clone(),
                });
            }
        }
    }
}

#[cfg(test)]
mod json_tests {
    use super::*;

    #[test]
    fn json_failures_become_events_on_their_gpus() {
        let t = r#"{"DCGM GPU Diagnostic": {"test_categories": [{"category": "Hardware", "tests": [
  {"name": "Diagnostic", "results": [{"gpu_id": "0",
    "status": "Fail", "warnings": [{"warning": "GPU 0 Thermal violations totaling 13.3 seconds", "error_id": 37}]},
    {"gpu_id": "1", "status": "Pass"}]}]}]}}"#;
        assert!(looks_like_json(t.as_bytes()));
        let (ev, seen) = json_events(t, &Catalog::builtin());
        assert_eq!(seen, 2);
        assert_eq!(ev.len(), 1);
        assert_eq!(
            (ev[0].kind.as_str(), ev[0].gpu_index.as_deref()),
            ("gpu_thermal", Some("0"))
        );
        assert_eq!(ev[0].line, 2);
    }
}
