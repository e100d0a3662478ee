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
    let mut w = Walker::default();
    for (i, raw) in text.lines().enumerate() {
        w.line(i, raw.trim_end_matches('\r'));
    }
    finish(&mut w.dump, w.pending, &w.link);
    w.dump
}

/// The state of a walk over a dump's lines.
#[derive(Default)]
struct Walker {
    dump: SmiDump,
    /// The sections the line is in: (indent, name), outermost first.
    stack: Vec<(usize, String)>,
    /// The GPU whose block the line is in.
    gpu: Option<usize>,
    pending: Pending,
    link: Numbers,
}

/// One `key : value` field with the sections it is in.
struct Field<'a> {
    /// 0-based line.
    line: usize,
    key: &'a str,
    value: &'a str,
    /// The section names, outermost first.
    path: &'a [&'a str],
    /// The dotted path with the key (`ECC Errors.Volatile.DRAM Correctable`).
    full: &'a str,
}

impl Field<'_> {
    /// The innermost section ("" at the top).
    fn parent(&self) -> &str {
        self.path.last().copied().unwrap_or("")
    }

    /// True when the field is inside a section named `name` (any case).
    fn within(&self, name: &str) -> bool {
        self.path.iter().any(|p| p.eq_ignore_ascii_case(name))
    }

    fn count(&self) -> f64 {
        number(self.value).unwrap_or(0.0)
    }
}

impl Walker {
    fn line(&mut self, i: usize, line: &str) {
        let t = line.trim();
        if t.is_empty() {
            return;
        }
        let indent = line.len() - line.trim_start().len();
        if indent == 0 && self.gpu_header(t) {
            return;
        }
        let (key, value) = match t
            .split_once(" : ")
            .or_else(|| t.strip_suffix(" :").map(|k| (k, "")))
        {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (t, None),
        };
        while self.stack.last().is_some_and(|(ind, _)| *ind >= indent) {
            self.stack.pop();
        }
        let Some(value) = value else {
            self.stack.push((indent, key.to_string()));
            self.dump.recognized +=
                (t.chars().next().is_some_and(|c| c.is_ascii_alphabetic())) as u64;
            return;
        };
        self.dump.recognized += 1;
        let stack = std::mem::take(&mut self.stack);
        let path: Vec<&str> = stack.iter().map(|(_, k)| k.as_str()).collect();
        let full = if path.is_empty() {
            key.to_string()
        } else {
            format!("{}.{}", path.join("."), key)
        };
        let f = Field {
            line: i,
            key,
            value,
            path: &path,
            full: &full,
        };
        if indent == 0 {
            self.header(&f);
        }
        self.describe_gpu(&f);
        self.judge(&f);
        drop(path);
        self.stack = stack;
    }

    /// A `GPU 00000000:3B:00.0` line opens a GPU's block.
    fn gpu_header(&mut self, t: &str) -> bool {
        let Some(b) = t.strip_prefix("GPU ").and_then(|r| normalize_bdf(r.trim())) else {
            return false;
        };
        self.dump.gpus.push(SmiGpu {
            bus_id: Some(b),
            ..SmiGpu::default()
        });
        self.gpu = Some(self.dump.gpus.len() - 1);
        self.stack.clear();
        self.dump.recognized += 1;
        true
    }

    /// The dump's own header fields.
    fn header(&mut self, f: &Field) {
        match f.key {
            "Timestamp" => {
                if let Some((ws, _)) = super::time::ctime_datetime(f.value.as_bytes()) {
                    self.dump.stamp.wall = Some(ws);
                }
            }
            "Driver Version" => self.dump.driver = Some(f.value.to_string()),
            "CUDA Version" => self.dump.cuda = Some(f.value.to_string()),
            _ => {}
        }
    }

    /// Every field of a GPU's block is kept by its dotted path.
    fn describe_gpu(&mut self, f: &Field) {
        if let Some(g) = self.gpu {
            let gpu = &mut self.dump.gpus[g];
            gpu.fields.insert(f.full.to_string(), f.value.to_string());
            if f.key == "Bus Id" && gpu.bus_id.is_none() {
                gpu.bus_id = normalize_bdf(f.value);
            }
        }
    }

    /// Notes an event of `kind` for the current GPU (see [`note`]).
    fn note(&mut self, line: usize, kind: &'static str, sev: Severity, reason: &str) {
        note(&mut self.pending, (self.gpu, line), kind, sev, reason);
    }

    /// The fault state a field shows, by the section it is in.
    fn judge(&mut self, f: &Field) {
        if self.unreadable(f) || self.reset_state(f) {
            return;
        }
        if f.within("Clocks Throttle Reasons")
            || f.within("Clocks Event Reasons")
            || f.within("Clocks Reasons")
        {
            self.slowdown(f);
        } else if f.within("ECC Errors") {
            self.ecc(f);
        } else if f.parent() == "Retired Pages" || f.within("Retired Pages") {
            self.retired(f);
        } else if f.parent() == "Remapped Rows" {
            self.remapped(f);
        } else {
            self.numbers(f);
        }
    }

    /// A field NVML could not read for a GPU that otherwise answers (`MIG Mode Current :
    /// Unknown Error`): the GPU is on the bus and the driver (its GSP firmware) fails the query,
    /// so the driver stack, the hardware the alternative; `GPU is lost` is the hardware's.
    fn unreadable(&mut self, f: &Field) -> bool {
        let (sev, reason) = match f.value {
            "Unknown Error" => (
                Severity::Error,
                format!("{}: Unknown Error (the GPU answers other queries)", f.full),
            ),
            "GPU is lost" => (Severity::Critical, format!("{}: GPU is lost", f.full)),
            _ => return false,
        };
        self.note(f.line, "nvml_error", sev, &reason);
        true
    }

    /// `GPU Reset Status` / `GPU Recovery Action` fields that say the GPU needs a reset, a
    /// drain or a reboot before it can be used again.
    fn reset_state(&mut self, f: &Field) -> bool {
        let needed = match (f.key, f.value) {
            ("Reset Required" | "Drain and Reset Recommended", "Yes") => true,
            ("GPU Recovery Action", v) => !matches!(v, "None" | "N/A" | "" | "Not Supported"),
            _ => false,
        };
        if needed {
            let reason = format!("{}: {}", f.full, f.value);
            self.note(f.line, "gpu_reset_required", Severity::Error, &reason);
        }
        needed
    }

    fn slowdown(&mut self, f: &Field) {
        if f.value != "Active" {
            return;
        }
        match f.key {
            "HW Thermal Slowdown" | "SW Thermal Slowdown" => {
                let reason = format!("{}: Active", f.key);
                self.note(f.line, "gpu_thermal", Severity::Error, &reason)
            }
            "HW Power Brake Slowdown" => {
                let reason = format!("{}: Active", f.key);
                self.note(f.line, "gpu_power", Severity::Error, &reason)
            }
            "HW Slowdown" => {
                self.note(f.line, "gpu_power", Severity::Warning, "HW Slowdown: Active")
            }
            // the GPU holding its power limit: normal under full load, kept as context only
            "SW Power Cap" => self.note(
                f.line,
                "gpu_power",
                Severity::Info,
                "SW Power Cap: Active (the GPU holds its power limit: normal under load, not a fault)",
            ),
            _ => {}
        }
    }

    fn ecc(&mut self, f: &Field) {
        let k = f.key.to_ascii_lowercase();
        let uncorrectable = k.contains("uncorrectable") || f.within("Double Bit");
        let correctable = !uncorrectable
            && (k.contains("correctable") || f.within("Single Bit"))
            && (k.contains("total") || k.contains("correctable"));
        if f.count() > 0.0 && !k.contains("threshold") {
            let reason = format!("{}: {}", f.full, f.value);
            if uncorrectable {
                self.note(f.line, "ecc_dbe", Severity::Critical, &reason);
            } else if correctable {
                self.note(f.line, "ecc_sbe", Severity::Warning, &reason);
            }
        }
        if k.contains("threshold exceeded") && f.value == "Yes" {
            let reason = format!("{}: Yes", f.full);
            self.note(f.line, "ecc_dbe", Severity::Error, &reason);
        }
    }

    fn retired(&mut self, f: &Field) {
        let (sev, reason) = if f.key.starts_with("Double Bit") && f.count() > 0.0 {
            (Severity::Error, format!("{}: {}", f.full, f.value))
        } else if f.key.starts_with("Pending") && f.value == "Yes" {
            (Severity::Warning, format!("{}: Yes", f.full))
        } else if f.key.starts_with("Single Bit") && f.count() > 0.0 {
            (Severity::Info, format!("{}: {}", f.full, f.value))
        } else {
            return;
        };
        self.note(f.line, "retired_page", sev, &reason);
    }

    fn remapped(&mut self, f: &Field) {
        let yes = f.value == "Yes";
        let (sev, reason) = match f.key {
            "Remapping Failure Occurred" if yes => (
                Severity::Critical,
                "Remapping Failure Occurred: Yes".to_string(),
            ),
            "Pending" if yes => (
                Severity::Warning,
                "Pending: Yes (reset the GPU to activate)".to_string(),
            ),
            "Uncorrectable Error" if f.count() > 0.0 => {
                (Severity::Error, format!("Uncorrectable Error: {}", f.value))
            }
            _ => return,
        };
        self.note(f.line, "row_remap", sev, &reason);
    }

    /// Numbers checked across fields in [`finish`]: link widths and temperatures.
    fn numbers(&mut self, f: &Field) {
        let name = match (f.parent(), f.key) {
            ("Link Width", "Max") if f.within("GPU Link Info") => "max",
            ("Link Width", "Current") if f.within("GPU Link Info") => "cur",
            ("Temperature", "GPU Current Temp") => "temp",
            ("Temperature", "GPU Slowdown Temp") => "slowdown",
            _ => return,
        };
        if let Some(n) = number(f.value) {
            self.link.insert((self.gpu, name), (f.line, n));
        }
    }
}

/// Events pending per (GPU, kind) while a dump is read.
pub(crate) type Pending = BTreeMap<(Option<usize>, &'static str), SmiEvent>;
/// Numbers kept per (GPU, field) for checks across fields: `max`/`cur` link width, `temp`/`slowdown`.
pub(crate) type Numbers = BTreeMap<(Option<usize>, &'static str), (usize, f64)>;

/// Notes an event of `kind` for GPU `gpu` seen at `line` (one per GPU and kind: the reasons
/// add up, the worst severity and its line win; shared by the text and XML readers).
pub(crate) fn note(
    pending: &mut Pending,
    (gpu, line): (Option<usize>, usize),
    kind: &'static str,
    sev: Severity,
    reason: &str,
) {
    let e = pending.entry((gpu, kind)).or_insert_with(|| SmiEvent {
        line,
        kind,
        severity: sev,
        gpu: None,
        attrs: BTreeMap::new(),
    });
    if sev > e.severity {
        e.severity = sev;
        e.line = line;
    }
    let r = e.attrs.entry("reason".into()).or_default();
    if !r.is_empty() {
        r.push_str("; ");
    }
    r.push_str(reason);
}

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
        if e.severity == Severity::Info {
            // a state normal for the machine: kept as an info event, never a fault
            e.attrs.insert("normal".into(), "true".into());
        }
        d.events.push(e);
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
