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
