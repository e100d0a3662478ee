//! `dcgmi diag` text tables: each test row with its result, cells wrapped over several rows
//! re-joined, failures and warnings turned into events on the GPU they name.

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
    pub kind: &'static str,
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
        if a.trim().starts_with('-') || a.trim().starts_with('=') {
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

/// Turns failures and warnings into events.
pub fn events(text: &str) -> (Vec<DiagEvent>, u64) {
    let rows = rows(text);
    let mut out = Vec::new();
    let mut current_test = String::new();
    for r in &rows {
        if r.name != "Warning" && r.name != "Info" {
            current_test = r.name.clone();
        }
        let lower = r.result.to_ascii_lowercase();
        let gpu_index = named_gpu(&r.result);
        let mut attrs = BTreeMap::new();
        attrs.insert("test".to_string(), current_test.clone());
        attrs.insert("result".to_string(), r.result.clone());
        if lower.contains("thermal violation")
            || lower.contains("temperature") && lower.contains("exceed")
        {
            out.push(DiagEvent {
                line: r.line,
                kind: "gpu_thermal",
                severity: Severity::Error,
                gpu_index,
                attrs,
            });
        } else if lower.contains("power")
            && (lower.contains("violation") || lower.contains("exceed"))
        {
            out.push(DiagEvent {
                line: r.line,
                kind: "gpu_power",
                severity: Severity::Error,
                gpu_index,
                attrs,
            });
        } else if lower.contains("fail") {
            let kind = match current_test.to_ascii_lowercase() {
                t if t.contains("pcie") => "pcie_aer",
                t if t.contains("nvlink") => "nvlink_error",
                _ => "diag_failure",
            };
            out.push(DiagEvent {
                line: r.line,
                kind,
                severity: Severity::Warning,
                gpu_index,
                attrs,
            });
        }
    }
    (out, rows.len() as u64)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wrapped_warning_is_joined() {
        let t = "| GPU Memory                | Pass - GPUs: 1, 2                              |\n|                           | Fail - GPU: 0                                  |\n| Warning                   | GPU 0 Thermal violations totaling 13.3 second  |\n|                           | s started at 9.7 seconds into the test for GP  |\n|                           | U 0 Verify.                                    |";
        let (ev, _) = events(t);
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
pub fn json_events(text: &str) -> (Vec<DiagEvent>, u64) {
    let Ok(v) = serde_json::from_str::<serde_json::Value>(text) else {
        return (Vec::new(), 0);
    };
    let mut out = Vec::new();
    let mut seen = 0u64;
    walk(&v, "", text, &mut out, &mut seen);
    (out, seen)
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

fn walk(v: &serde_json::Value, test: &str, text: &str, out: &mut Vec<DiagEvent>, seen: &mut u64) {
    match v {
        serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, test, text, out, seen)),
        serde_json::Value::Object(o) => {
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
                *seen += 1;
            }
            let lower_status = status.to_ascii_lowercase();
            if lower_status.starts_with("fail") || lower_status.starts_with("warn") {
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
                let lower = format!(
                    "{} {}",
                    name.to_ascii_lowercase(),
                    detail.to_ascii_lowercase()
                );
                let kind = if lower.contains("thermal") || lower.contains("temperature") {
                    "gpu_thermal"
                } else if lower.contains("power") {
                    "gpu_power"
                } else if lower.contains("pcie") || lower.contains("pci ") {
                    "pcie_aer"
                } else if lower.contains("nvlink") {
                    "nvlink_error"
                } else if lower.contains("row remap")
                    || lower.contains("dbe")
                    || lower.contains("ecc")
                {
                    "ecc_dbe"
                } else {
                    "diag_failure"
                };
                let needle = format!("\"{status}\"");
                let line = text
                    .lines()
                    .position(|l| l.contains(&needle) && l.contains("status"))
                    .unwrap_or(0);
                let severity = if kind == "diag_failure" {
                    Severity::Warning
                } else {
                    Severity::Error
                };
                for g in gpus
                    .split([',', ';', ' '])
                    .map(str::trim)
                    .filter(|g| !g.is_empty())
                    .take(16)
                    .chain(gpus.is_empty().then_some(""))
                {
                    let mut attrs = BTreeMap::new();
                    attrs.insert("test".to_string(), name.clone());
                    attrs.insert("result".to_string(), format!("{status}: {detail}"));
                    out.push(DiagEvent {
                        line,
                        kind,
                        severity,
                        gpu_index: (!g.is_empty()).then(|| g.to_string()),
                        attrs,
                    });
                }
            }
            for (k, x) in o {
                if x.is_array() || x.is_object() {
                    walk(
                        x,
                        if k == "tests" || k == "results" {
                            &name
                        } else {
                            test
                        },
                        text,
                        out,
                        seen,
                    );
                }
            }
        }
        _ => {}
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
        let (ev, seen) = json_events(t);
        assert_eq!(seen, 2);
        assert_eq!(ev.len(), 1);
        assert_eq!(
            (ev[0].kind, ev[0].gpu_index.as_deref()),
            ("gpu_thermal", Some("0"))
        );
        assert_eq!(ev[0].line, 2);
    }
}
