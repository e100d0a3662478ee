//! `nvidia-smi -q -x` XML dumps, read with a small tag scanner (the DTD varies by driver; every
//! element is optional). Produces the same [`SmiDump`] as the text reader.

use super::nvidia_smi::{SmiDump, SmiEvent, SmiGpu};
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
    let mut pending: super::nvidia_smi::Pending = BTreeMap::new();
    let mut nums: super::nvidia_smi::Numbers = BTreeMap::new();
    for l in &leaves {
        d.recognized += 1;
        let g = gpu_of(l.line).filter(|_| l.path.iter().any(|p| p == "gpu"));
        match l.tag.as_str() {
            "timestamp" if g.is_none() => {
                if let Some((ws, _)) = super::time::ctime_datetime(l.value.as_bytes()) {
                    d.stamp.wall = Some(ws);
                }
            }
            "driver_version" if g.is_none() => d.driver = Some(l.value.clone()),
            "cuda_version" if g.is_none() => d.cuda = Some(l.value.clone()),
            _ => {}
        }
        if let Some(gi) = g {
            let key = if l.path.len() > 2 {
                format!("{}.{}", l.path[2..].join("."), l.tag)
            } else {
                l.tag.clone()
            };
            d.gpus[gi].fields.insert(key, l.value.clone());
        }
        let mut ev = |kind: &'static str, sev: Severity, reason: String| {
            let e = pending.entry((g, kind)).or_insert_with(|| SmiEvent {
                line: l.line,
                kind,
                severity: sev,
                gpu: None,
                attrs: BTreeMap::new(),
            });
            if sev > e.severity {
                e.severity = sev;
                e.line = l.line;
            }
            let r = e.attrs.entry("reason".into()).or_default();
            if !r.is_empty() {
                r.push_str("; ");
            }
            r.push_str(&reason);
        };
        let t = l.tag.as_str();
        let v = l.value.as_str();
        let in_path = |p: &str| l.path.iter().any(|x| x == p);
        let count = number(v).unwrap_or(0.0);
        if (t.ends_with("hw_thermal_slowdown") || t.ends_with("sw_thermal_slowdown"))
            && v == "Active"
        {
            ev("gpu_thermal", Severity::Error, format!("{t}: Active"));
        } else if t.ends_with("hw_power_brake_slowdown") && v == "Active" {
            ev("gpu_power", Severity::Error, format!("{t}: Active"));
        } else if in_path("ecc_errors") && count > 0.0 {
            let dbe = t.contains("uncorrectable") || in_path("double_bit");
            if dbe {
                ev(
                    "ecc_dbe",
                    Severity::Critical,
                    format!("{}.{t}: {v}", l.path.last().cloned().unwrap_or_default()),
                );
            } else if t.contains("correctable") || in_path("single_bit") {
                ev(
                    "ecc_sbe",
                    Severity::Warning,
                    format!("{}.{t}: {v}", l.path.last().cloned().unwrap_or_default()),
                );
            }
        } else if in_path("remapped_rows") {
            match t {
                "remapped_row_failure" if v == "Yes" => ev(
                    "row_remap",
                    Severity::Critical,
                    "remapped_row_failure: Yes".into(),
                ),
                "remapped_row_pending" if v == "Yes" => ev(
                    "row_remap",
                    Severity::Warning,
                    "remapped_row_pending: Yes (reset the GPU to activate)".into(),
                ),
                "remapped_row_unc" if count > 0.0 => ev(
                    "row_remap",
                    Severity::Error,
                    format!("remapped_row_unc: {v}"),
                ),
                _ => {}
            }
        } else if in_path("retired_pages") {
            if in_path("double_bit_retirement") && t == "retired_count" && count > 0.0 {
                ev(
                    "retired_page",
                    Severity::Error,
                    format!("double_bit_retirement: {v}"),
                );
            } else if (t == "pending_retirement" || t == "pending_blacklist") && v == "Yes" {
                ev("retired_page", Severity::Warning, format!("{t}: Yes"));
            }
        } else if t == "max_link_width"
            || t == "current_link_width"
            || t == "gpu_temp"
            || t == "gpu_temp_slow_threshold"
        {
            if let Some(n) = number(v) {
                let k: &'static str = match t {
                    "max_link_width" => "max",
                    "current_link_width" => "cur",
                    "gpu_temp" => "temp",
                    _ => "slowdown",
                };
                nums.insert((g, k), (l.line, n));
            }
        }
    }
    super::nvidia_smi::finish(&mut d, pending, &nums);
    d
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
