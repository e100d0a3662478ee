//! Suspect GPUs as plain data: the identity vendors ask for, the counters worth a look, and the
//! RMA criteria checked against the events of the report.

use crate::report::json::{EventJson, GpuJson, Report};

/// One RMA criterion checked for one GPU.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Criterion {
    /// What the criterion asks.
    pub name: &'static str,
    /// Whether these inputs meet it.
    pub met: bool,
    /// Why: the line or counter that meets it, or what was (not) seen.
    pub why: String,
}

/// A GPU named by an incident's root cause.
#[derive(Clone, Debug)]
pub struct Suspect<'a> {
    /// Identity and counters as read.
    pub gpu: &'a GpuJson,
    /// Driver version of its host, when known.
    pub driver: Option<&'a str>,
    /// Kernel release of its host, when known.
    pub kernel: Option<&'a str>,
    /// The RMA criteria, checked.
    pub criteria: Vec<Criterion>,
    /// Counters worth a look (non-zero counts, `Yes`, `Active`), in key order.
    pub raised: Vec<(&'a str, &'a str)>,
}

impl Suspect<'_> {
    /// Whether any RMA criterion is met.
    pub fn rma_met(&self) -> bool {
        self.criteria.iter().any(|c| c.met)
    }

    /// `host bus-id`, or the bus id alone.
    pub fn name(&self) -> String {
        format!(
            "{} {}",
            self.gpu.host.as_deref().unwrap_or(""),
            self.gpu.bus_id
        )
        .trim()
        .to_string()
    }
}

/// The suspect GPUs of a report, in its order.
pub fn suspects(r: &Report) -> Vec<Suspect<'_>> {
    r.gpus
        .iter()
        .filter(|g| g.suspect)
        .map(|g| {
            let h = r.hosts.iter().find(|h| Some(&h.host) == g.host.as_ref());
            Suspect {
                gpu: g,
                driver: h.and_then(|h| h.driver.as_deref()),
                kernel: h.and_then(|h| h.kernel.as_deref()),
                criteria: criteria(r, g),
                raised: g
                    .state
                    .iter()
                    .filter(|(k, v)| notable(k, v))
                    .map(|(k, v)| (k.as_str(), v.as_str()))
                    .collect(),
            }
        })
        .collect()
}

/// A counter key in one spelling (`Remapped Rows.Pending` and `remapped_rows.remapped_row_pending`).
fn norm(k: &str) -> String {
    k.to_ascii_lowercase().replace([' ', '-'], "_")
}

/// Counters worth a look: non-zero counts, `Yes`, `Active` (histograms and temperatures aside).
pub fn notable(k: &str, v: &str) -> bool {
    let k = norm(k);
    if k.contains("histogram") || k.contains("temp") {
        return false;
    }
    let first = v.split_whitespace().next().unwrap_or("");
    matches!(v, "Yes" | "Active") || first.parse::<f64>().is_ok_and(|n| n != 0.0)
}

fn on_gpu(e: &EventJson, g: &GpuJson) -> bool {
    e.gpu.as_deref() == Some(g.bus_id.as_str()) && (g.host.is_none() || e.host == g.host)
}

/// NVIDIA's replacement criteria as far as logs and counters show them: a failed row remapping or
/// page retirement, falling off the bus on two or more occasions, uncorrectable memory errors on
/// two or more occasions (an occasion is an incident).
pub fn criteria(r: &Report, g: &GpuJson) -> Vec<Criterion> {
    let mine: Vec<&EventJson> = r.events.iter().filter(|e| on_gpu(e, g)).collect();
    let failed_remap: Vec<&&EventJson> = mine
        .iter()
        .filter(|e| {
            (e.kind == "xid" && matches!(e.code, Some(64) | Some(157)))
                || (e.kind == "row_remap" && e.severity == "critical")
        })
        .collect();
    let counter = g
        .state
        .iter()
        .find(|(k, v)| {
            let k = norm(k);
            k.contains("remap") && k.contains("fail") && v.as_str() == "Yes"
        })
        .map(|(k, v)| format!("counter {k}: {v}"));
    let remap = Criterion {
        name: "Row remapping or resource retirement failed",
        met: !failed_remap.is_empty() || counter.is_some(),
        why: match (failed_remap.first(), counter) {
            (Some(e), _) => format!("{} at {}:{}", e.title, e.source.path, e.source.line),
            (None, Some(c)) => c,
            (None, None) => "no Xid 64/157 and no remapping failure in the inputs".into(),
        },
    };
    let incidents_with = |kinds: &[&str]| -> Vec<&str> {
        r.incidents
            .iter()
            .filter(|i| {
                i.events.iter().any(|id| {
                    mine.iter()
                        .any(|e| id.is(&e.id) && kinds.contains(&e.kind.as_str()))
                })
            })
            .map(|i| i.id.as_str())
            .collect()
    };
    let off = incidents_with(&["fell_off_bus"]);
    let dbe = incidents_with(&["ecc_dbe"]);
    let repeat = |name, v: Vec<&str>| Criterion {
        name,
        met: v.len() >= 2,
        why: match v.len() {
            0 => "not in these inputs".to_string(),
            1 => format!("once (incident {}); a second occasion would meet it", v[0]),
            _ => format!("in incidents {}", v.join(", ")),
        },
    };
    vec![
        remap,
        repeat("Fell off the bus on two or more occasions", off),
        repeat("Uncorrectable memory errors on two or more occasions", dbe),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn raised_counters_are_counts_flags_and_active_reasons() {
        assert!(notable("ECC Errors.Volatile.DRAM Uncorrectable", "2"));
        assert!(notable("Remapped Rows.Remapping Failure Occurred", "Yes"));
        assert!(notable("Clocks Event Reasons.HW Slowdown", "Active"));
        assert!(!notable("ECC Errors.Volatile.DRAM Uncorrectable", "0"));
        assert!(!notable("Clocks Event Reasons.HW Slowdown", "Not Active"));
        assert!(!notable("Temperature.GPU Current Temp", "83 C"));
        assert!(!notable("Remapped Rows.Histogram.Max", "640 bank(s)"));
        assert!(!notable("Product Name", "NVIDIA A100"));
    }
}

/// One row of the hosts table: what runs on a host and which GPUs it has.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HostRow {
    /// Host name.
    pub host: String,
    /// Driver version (bug report, driver load line, or `nvidia-smi -q`), `-` when unknown.
    pub driver: String,
    /// Kernel release, `-` when unknown.
    pub kernel: String,
    /// GPU models with their count (`8 × NVIDIA H100 80GB HBM3`), `-` when none is named.
    pub models: String,
}

/// The hosts that name a driver, a kernel or a GPU model, in name order.
pub fn host_rows(r: &Report) -> Vec<HostRow> {
    let mut names: std::collections::BTreeSet<&str> =
        r.hosts.iter().map(|h| h.host.as_str()).collect();
    names.extend(
        r.gpus
            .iter()
            .filter(|g| g.name.is_some())
            .filter_map(|g| g.host.as_deref()),
    );
    names
        .into_iter()
        .filter_map(|name| {
            let h = r.hosts.iter().find(|h| h.host == name);
            let mut models: std::collections::BTreeMap<&str, usize> = Default::default();
            for g in r.gpus.iter().filter(|g| g.host.as_deref() == Some(name)) {
                if let Some(m) = g.name.as_deref() {
                    *models.entry(m).or_default() += 1;
                }
            }
            let driver = h.and_then(|h| h.driver.clone());
            let kernel = h.and_then(|h| h.kernel.clone());
            if driver.is_none() && kernel.is_none() && models.is_empty() {
                return None;
            }
            Some(HostRow {
                host: name.to_string(),
                driver: driver.unwrap_or_else(|| "-".into()),
                kernel: kernel.unwrap_or_else(|| "-".into()),
                models: if models.is_empty() {
                    "-".into()
                } else {
                    models
                        .iter()
                        .map(|(m, n)| format!("{n} × {m}"))
                        .collect::<Vec<_>>()
                        .join(", ")
                },
            })
        })
        .collect()
}
