//! `nvidia-smi -q -x` XML dumps, read with a small tag scanner (the DTD varies by driver; every
//! element is optional). Produces the same [`SmiDump`] as the text reader.

use super::nvidia_smi::{note, Numbers, Pending, SmiDump, SmiGpu};
use crate::ids::normalize_bdf;
use crate::model::Severity;
use std::collections::BTreeMap;

/// True when the text is an nvidia-smi XML log.
pub fn looks_like(head: &[u8]) -> bool {
    memchr::memmem::find(&head[..head.len().min(4096)], b"<nvidia_smi_log").is_some()
}

/// One leaf element: its 0-based line, ancestor path, tag and text.
struct Leaf {
    line: usize,
    path: Vec<String>,
    tag: String,
    value: String,
}

fn leaves(text: &str) -> (Vec<Leaf>, Vec<(usize, String)>) {
    let mut out = Vec::new();
    let mut gpu_starts = Vec::new();
    let mut stack: Vec<String> = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let mut rest = line.trim();
        while let Some(open) = rest.find('<') {
            let after = &rest[open + 1..];
            let Some(close) = after.find('>') else { break };
            let inner = &after[..close];
            rest = &after[close + 1..];
            if inner.starts_with('?') || inner.starts_with('!') {
                continue;
            }
            if let Some(name) = inner.strip_prefix('/') {
                if stack.last().is_some_and(|t| t == name.trim()) {
                    stack.pop();
                }
                continue;
            }
            let self_closing = inner.ends_with('/');
            let inner = inner.trim_end_matches('/');
            let name = inner.split_whitespace().next().unwrap_or("").to_string();
            if name == "gpu" {
                if let Some(id) = inner
                    .split("id=\"")
                    .nth(1)
                    .and_then(|v| v.split('"').next())
                {
                    gpu_starts.push((i, id.to_string()));
                }
            }
            if self_closing {
                continue;
            }
            // a leaf: `<tag>value</tag>` on one line
            let end = format!("</{name}>");
            if let Some(e) = rest.find(&end) {
                out.push(Leaf {
                    line: i,
                    path: stack.clone(),
                    tag: name.clone(),
                    value: rest[..e].trim().to_string(),
                });
                rest = &rest[e + end.len()..];
            } else {
                stack.push(name);
            }
        }
    }
    (out, gpu_starts)
}

fn number(v: &str) -> Option<f64> {
    v.split_whitespace()
        .next()?
        .trim_end_matches('x')
        .parse()
        .ok()
}

/// Parses an XML dump.
pub fn parse(text: &str) -> SmiDump {
    let (leaves, gpu_starts) = leaves(text);
    let mut d = SmiDump::default();
    for (_, id) in &gpu_starts {
        d.gpus.push(SmiGpu {
            bus_id: normalize_bdf(id),
            ..SmiGpu::default()
        });
    }
    let gpu_of = |line: usize| gpu_starts.iter().rposition(|(l, _)| *l <= line);
    let mut pending: Pending = BTreeMap::new();
    let mut nums: Numbers = BTreeMap::new();
    for l in &leaves {
        d.recognized += 1;
        let g = gpu_of(l.line).filter(|_| l.path.iter().any(|p| p == "gpu"));
        match g {
            None => header(&mut d, l),
            Some(gi) => {
                let key = if l.path.len() > 2 {
                    format!("{}.{}", l.path[2..].join("."), l.tag)
                } else {
                    l.tag.clone()
                };
                d.gpus[gi].fields.insert(key, l.value.clone());
            }
        }
        if let Some((kind, sev, reason)) = fault(l) {
            note(&mut pending, (g, l.line), kind, sev, &reason);
        } else if let Some(n) = number(&l.value) {
            let k = match l.tag.as_str() {
                "max_link_width" => "max",
                "current_link_width" => "cur",
                "gpu_temp" => "temp",
                "gpu_temp_slow_threshold" => "slowdown",
                _ => continue,
            };
            nums.insert((g, k), (l.line, n));
        }
    }
    super::nvidia_smi::finish(&mut d, pending, &nums);
    d
}

/// The dump's own header fields (outside every GPU).
fn header(d: &mut SmiDump, l: &Leaf) {
    match l.tag.as_str() {
        "timestamp" => {
            if let Some((ws, _)) = super::time::ctime_datetime(l.value.as_bytes()) {
                d.stamp.wall = Some(ws);
            }
        }
        "driver_version" => d.driver = Some(l.value.clone()),
        "cuda_version" => d.cuda = Some(l.value.clone()),
        _ => {}
    }
}

/// The fault a leaf shows, by its tag and the elements it is in: kind, severity and reason.
fn fault(l: &Leaf) -> Option<(&'static str, Severity, String)> {
    let t = l.tag.as_str();
    let v = l.value.as_str();
    let within = |p: &str| l.path.iter().any(|x| x == p);
    let count = number(v).unwrap_or(0.0);
    if (t.ends_with("hw_thermal_slowdown") || t.ends_with("sw_thermal_slowdown")) && v == "Active" {
        Some(("gpu_thermal", Severity::Error, format!("{t}: Active")))
    } else if t.ends_with("hw_power_brake_slowdown") && v == "Active" {
        Some(("gpu_power", Severity::Error, format!("{t}: Active")))
    } else if within("ecc_errors") && count > 0.0 {
        let reason = || format!("{}.{t}: {v}", l.path.last().cloned().unwrap_or_default());
        if t.contains("uncorrectable") || within("double_bit") {
            Some(("ecc_dbe", Severity::Critical, reason()))
        } else if t.contains("correctable") || within("single_bit") {
            Some(("ecc_sbe", Severity::Warning, reason()))
        } else {
            None
        }
    } else if within("remapped_rows") {
        remapped(t, v, count)
    } else if within("retired_pages") {
        if within("double_bit_retirement") && t == "retired_count" && count > 0.0 {
            let reason = format!("double_bit_retirement: {v}");
            Some(("retired_page", Severity::Error, reason))
        } else if (t == "pending_retirement" || t == "pending_blacklist") && v == "Yes" {
            Some(("retired_page", Severity::Warning, format!("{t}: Yes")))
        } else {
            None
        }
    } else {
        None
    }
}

/// The row remapper's state.
fn remapped(t: &str, v: &str, count: f64) -> Option<(&'static str, Severity, String)> {
    let (sev, reason) = match t {
        "remapped_row_failure" if v == "Yes" => {
            (Severity::Critical, "remapped_row_failure: Yes".to_string())
        }
        "remapped_row_pending" if v == "Yes" => (
            Severity::Warning,
            "remapped_row_pending: Yes (reset the GPU to activate)".to_string(),
        ),
        "remapped_row_unc" if count > 0.0 => (Severity::Error, format!("remapped_row_unc: {v}")),
        _ => return None,
    };
    Some(("row_remap", sev, reason))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn thermal_and_narrow_link_on_one_gpu() {
        let x = r#"<?xml version="1.0" ?>
<nvidia_smi_log>
  <timestamp>Mon Oct 13 00:25:36 2025</timestamp>
  <driver_version>550.54.14</driver_version>
  <gpu id="00000000:81:00.0">
    <uuid>GPU-1111</uuid>
    <pci>
      <pci_gpu_link_info>
        <link_widths>
          <max_link_width>16x</max_link_width>
          <current_link_width>8x</current_link_width>
        </link_widths>
      </pci_gpu_link_info>
    </pci>
    <clocks_event_reasons>
      <clocks_event_reason_hw_thermal_slowdown>Active</clocks_event_reason_hw_thermal_slowdown>
    </clocks_event_reasons>
  </gpu>
  <gpu id="00000000:82:00.0">
    <clocks_event_reasons>
      <clocks_event_reason_hw_thermal_slowdown>Not Active</clocks_event_reason_hw_thermal_slowdown>
    </clocks_event_reasons>
  </gpu>
</nvidia_smi_log>"#;
        assert!(looks_like(x.as_bytes()));
        let d = parse(x);
        assert_eq!(d.driver.as_deref(), Some("550.54.14"));
        let kinds: Vec<(&str, Option<&str>)> = d
            .events
            .iter()
            .map(|e| (e.kind, e.gpu.as_deref()))
            .collect();
        assert_eq!(
            kinds,
            vec![
                ("pcie_link_degraded", Some("0000:81:00.0")),
                ("gpu_thermal", Some("0000:81:00.0"))
            ]
        );
        assert_eq!(
            d.gpus[0].fields.get("uuid").map(String::as_str),
            Some("GPU-1111")
        );
    }
}
