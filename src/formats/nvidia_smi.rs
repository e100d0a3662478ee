//! `nvidia-smi -q` text dumps: GPU identity and the persisted fault state (ECC counters, retired
//! pages, remapped rows, clock slowdown reasons, temperatures, PCIe link width) as events.

use crate::ids::normalize_bdf;
use crate::model::{LineStamp, Severity};
use std::collections::BTreeMap;

/// Keys that only nvidia-smi prints.
const KEYS: [&str; 9] = [
    "Product Name",
    "HW Slowdown",
    "Remapped Rows",
    "ECC Errors",
    "Retired Pages",
    "Clocks Throttle Reasons",
    "Clocks Event Reasons",
    "NVSMI LOG",
    "Attached GPUs",
];

/// True when the text is (a part of) an `nvidia-smi -q` dump.
pub fn looks_like(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(16 * 1024)]);
    let mut kv = 0;
    let mut total = 0;
    for l in text.lines().take(200) {
        if l.trim().is_empty() {
            continue;
        }
        total += 1;
        if l.contains(" : ") {
            kv += 1;
        }
    }
    let hits = KEYS.iter().filter(|k| text.contains(*k)).count();
    total > 0 && hits >= 1 && (text.contains("NVSMI LOG") || kv * 10 >= total * 4)
}

/// One GPU as nvidia-smi describes it.
#[derive(Clone, Debug, Default)]
pub struct SmiGpu {
    /// Normalized bus id.
    pub bus_id: Option<String>,
    /// Other identity fields and counters, by dotted path.
    pub fields: BTreeMap<String, String>,
}

/// An event found in a dump, with its 0-based line in the text.
#[derive(Clone, Debug)]
pub struct SmiEvent {
    /// 0-based line.
    pub line: usize,
    /// Kind.
    pub kind: &'static str,
    /// Severity.
    pub severity: Severity,
    /// GPU bus id.
    pub gpu: Option<String>,
    /// Details.
    pub attrs: BTreeMap<String, String>,
}

/// The parsed dump.
#[derive(Clone, Debug, Default)]
pub struct SmiDump {
    /// `Timestamp` header (local time, no zone).
    pub stamp: LineStamp,
    /// Driver version header.
    pub driver: Option<String>,
    /// CUDA version header.
    pub cuda: Option<String>,
    /// GPUs.
    pub gpus: Vec<SmiGpu>,
    /// Events.
    pub events: Vec<SmiEvent>,
    /// Lines understood.
    pub recognized: u64,
}

fn number(v: &str) -> Option<f64> {
    v.split_whitespace()
        .next()?
        .trim_end_matches('x')
        .parse()
        .ok()
}

/// Parses a dump.
pub fn parse(text: &str) -> SmiDump {
    let mut d = SmiDump::default();
    let mut stack: Vec<(usize, String)> = Vec::new();
    let mut gpu: Option<usize> = None;
    let mut pending: Pending = BTreeMap::new();
    let mut link: Numbers = BTreeMap::new();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() {
            continue;
        }
        let indent = line.len() - line.trim_start().len();
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("GPU ") {
            if indent == 0 {
                if let Some(b) = normalize_bdf(rest.trim()) {
                    d.gpus.push(SmiGpu {
                        bus_id: Some(b),
                        ..SmiGpu::default()
                    });
                    gpu = Some(d.gpus.len() - 1);
                    stack.clear();
                    d.recognized += 1;
                    continue;
                }
            }
        }
        let (key, value) = match t
            .split_once(" : ")
            .or_else(|| t.strip_suffix(" :").map(|k| (k, "")))
        {
            Some((k, v)) => (k.trim().to_string(), Some(v.trim().to_string())),
            None => (t.to_string(), None),
        };
        while stack.last().is_some_and(|(ind, _)| *ind >= indent) {
            stack.pop();
        }
        let path: Vec<&str> = stack.iter().map(|(_, k)| k.as_str()).collect();
        let Some(value) = value else {
            stack.push((indent, key));
            d.recognized += (t.chars().next().is_some_and(|c| c.is_ascii_alphabetic())) as u64;
            continue;
        };
        d.recognized += 1;
        let parent = path.last().copied().unwrap_or("");
        let full = if path.is_empty() {
            key.clone()
        } else {
            format!("{}.{}", path.join("."), key)
        };
        match (indent, key.as_str()) {
            (0, "Timestamp") => {
                if let Some((ws, _)) = super::time::ctime_datetime(value.as_bytes()) {
                    d.stamp.wall = Some(ws);
                }
            }
            (0, "Driver Version") => d.driver = Some(value.clone()),
            (0, "CUDA Version") => d.cuda = Some(value.clone()),
            _ => {}
        }
        if let Some(g) = gpu {
            d.gpus[g].fields.insert(full.clone(), value.clone());
            if key == "Bus Id" && d.gpus[g].bus_id.is_none() {
                d.gpus[g].bus_id = normalize_bdf(&value);
            }
        }
        let in_path = |name: &str| path.iter().any(|p| p.eq_ignore_ascii_case(name));
        let active = value == "Active";
        let yes = value == "Yes";
        let count = number(&value).unwrap_or(0.0);
        let mut ev = |kind: &'static str, sev: Severity, reason: &str| {
            let e = pending.entry((gpu, kind)).or_insert_with(|| SmiEvent {
                line: i,
                kind,
                severity: sev,
                gpu: None,
                attrs: BTreeMap::new(),
            });
            if sev > e.severity {
                e.severity = sev;
                e.line = i;
            }
            let r = e.attrs.entry("reason".into()).or_default();
            if !r.is_empty() {
                r.push_str("; ");
            }
            r.push_str(reason);
        };
        if in_path("Clocks Throttle Reasons")
            || in_path("Clocks Event Reasons")
            || in_path("Clocks Reasons")
        {
            match key.as_str() {
                "HW Thermal Slowdown" | "SW Thermal Slowdown" if active => {
                    ev("gpu_thermal", Severity::Error, &format!("{key}: Active"))
                }
                "HW Power Brake Slowdown" if active => {
                    ev("gpu_power", Severity::Error, &format!("{key}: Active"))
                }
                "SW Power Cap" if active => ev("gpu_power", Severity::Info, "SW Power Cap: Active"),
                _ => {}
            }
        } else if in_path("ECC Errors") {
            let k = key.to_ascii_lowercase();
            let uncorrectable = k.contains("uncorrectable") || in_path("Double Bit");
            let correctable = !uncorrectable
                && (k.contains("correctable") || in_path("Single Bit"))
                && (k.contains("total") || k.contains("correctable"));
            if count > 0.0 && !k.contains("threshold") {
                if uncorrectable {
                    ev("ecc_dbe", Severity::Critical, &format!("{full}: {value}"));
                } else if correctable {
                    ev("ecc_sbe", Severity::Warning, &format!("{full}: {value}"));
                }
            }
            if k.contains("threshold exceeded") && yes {
                ev("ecc_dbe", Severity::Error, &format!("{full}: Yes"));
            }
        } else if parent == "Retired Pages" || in_path("Retired Pages") {
            if key.starts_with("Double Bit") && count > 0.0 {
                ev("retired_page", Severity::Error, &format!("{full}: {value}"));
            } else if key.starts_with("Pending") && yes {
                ev("retired_page", Severity::Warning, &format!("{full}: Yes"));
            } else if key.starts_with("Single Bit") && count > 0.0 {
                ev("retired_page", Severity::Info, &format!("{full}: {value}"));
            }
        } else if parent == "Remapped Rows" {
            match key.as_str() {
                "Remapping Failure Occurred" if yes => ev(
                    "row_remap",
                    Severity::Critical,
                    "Remapping Failure Occurred: Yes",
                ),
                "Pending" if yes => ev(
                    "row_remap",
                    Severity::Warning,
                    "Pending: Yes (reset the GPU to activate)",
                ),
                "Uncorrectable Error" if count > 0.0 => ev(
                    "row_remap",
                    Severity::Error,
                    &format!("Uncorrectable Error: {value}"),
                ),
                _ => {}
            }
        } else if parent == "Link Width" && in_path("GPU Link Info") {
            if let Some(n) = number(&value) {
                if key == "Max" {
                    link.insert((gpu, "max"), (i, n));
                } else if key == "Current" {
                    link.insert((gpu, "cur"), (i, n));
                }
            }
        } else if parent == "Temperature" && key == "GPU Current Temp" {
            if let Some(n) = number(&value) {
                link.insert((gpu, "temp"), (i, n));
            }
        } else if parent == "Temperature" && key == "GPU Slowdown Temp" {
            if let Some(n) = number(&value) {
                link.insert((gpu, "slowdown"), (i, n));
            }
        }
    }
    finish(&mut d, pending, &link);
    d
}

/// Events pending per (GPU, kind) while a dump is read.
pub(crate) type Pending = BTreeMap<(Option<usize>, &'static str), SmiEvent>;
/// Numbers kept per (GPU, field) for checks across fields: `max`/`cur` link width, `temp`/`slowdown`.
pub(crate) type Numbers = BTreeMap<(Option<usize>, &'static str), (usize, f64)>;

/// Checks across fields (link narrower than its maximum, temperature at the slowdown limit), then
/// puts the pending events on their GPUs, in line order (shared by the text and XML readers).
pub(crate) fn finish(d: &mut SmiDump, mut pending: Pending, link: &Numbers) {
    let gpus: Vec<Option<usize>> = std::iter::once(None)
        .chain((0..d.gpus.len()).map(Some))
        .collect();
    for g in gpus {
        if let (Some(&(_, max)), Some(&(line, cur))) =
            (link.get(&(g, "max")), link.get(&(g, "cur")))
        {
            if cur < max {
                let mut attrs = BTreeMap::new();
                attrs.insert("reason".into(), format!("link width x{cur} of x{max}"));
                pending.insert(
                    (g, "pcie_link_degraded"),
                    SmiEvent {
                        line,
                        kind: "pcie_link_degraded",
                        severity: Severity::Warning,
                        gpu: None,
                        attrs,
                    },
                );
            }
        }
        if let (Some(&(line, t)), Some(&(_, s))) =
            (link.get(&(g, "temp")), link.get(&(g, "slowdown")))
        {
            if t > 0.0 && s > 0.0 && t >= s {
                let mut attrs = BTreeMap::new();
                attrs.insert(
                    "reason".into(),
                    format!("temperature {t} C at or above the slowdown limit {s} C"),
                );
                pending.entry((g, "gpu_thermal")).or_insert(SmiEvent {
                    line,
                    kind: "gpu_thermal",
                    severity: Severity::Error,
                    gpu: None,
                    attrs,
                });
            }
        }
    }
    for ((g, _), mut e) in pending {
        e.gpu = g.and_then(|g| d.gpus[g].bus_id.clone());
        if e.severity > Severity::Info {
            d.events.push(e);
        }
    }
    d.events.sort_by_key(|e| e.line);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remap_pending_and_sbe() {
        let t = "Timestamp : Wed Jun  7 19:32:16 2023\nDriver Version : 510.73.08\n\nGPU 00000000:10:1C.0\n    Product Name : NVIDIA A100\n    ECC Errors\n        Volatile\n            DRAM Correctable : 177\n            DRAM Uncorrectable : 0\n    Remapped Rows\n        Correctable Error : 1\n        Pending : Yes\n        Remapping Failure Occurred : No\n";
        let d = parse(t);
        assert_eq!(d.driver.as_deref(), Some("510.73.08"));
        assert_eq!(d.gpus[0].bus_id.as_deref(), Some("0000:10:1c.0"));
        let kinds: Vec<&str> = d.events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec!["ecc_sbe", "row_remap"]);
        assert!(d.stamp.wall.is_some());
    }

    #[test]
    fn power_brake_is_power_not_thermal() {
        let t = "Clocks Throttle Reasons\n    Idle : Not Active\n    HW Slowdown : Active\n        HW Thermal Slowdown : Not Active\n        HW Power Brake Slowdown : Active\n";
        let d = parse(t);
        let kinds: Vec<&str> = d.events.iter().map(|e| e.kind).collect();
        assert_eq!(kinds, vec!["gpu_power"]);
        assert!(looks_like(t.as_bytes()));
    }
}
