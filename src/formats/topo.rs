//! `nvidia-smi topo -m`: the matrix of how GPUs and NICs reach each other, and which NIC is
//! nearest to which GPU (the NIC that NCCL uses for that GPU's traffic).
//!
//! ```text
//!         GPU0    GPU1    NIC0    NIC1    CPU Affinity    NUMA Affinity   GPU NUMA ID
//! GPU0     X      NV18    PIX     SYS     0-55,112-167    0               N/A
//! GPU1    NV18     X      SYS     PIX     56-111,168-223  1               N/A
//! NIC0    PIX     SYS      X      SYS
//! NIC1    SYS     PIX     SYS      X
//!
//! NIC Legend:
//!
//!   NIC0: mlx5_0
//!   NIC1: mlx5_1
//! ```
//! Older drivers name the NIC columns by device (`mlx5_0`) and print no NIC legend. Cells are
//! `X` (self), `NV#` (bonded NVLinks), `PIX`, `PXB`, `PHB`, `NODE`, `SYS` (nearest to farthest).

use std::collections::BTreeMap;

/// PCIe/SMP distances, nearest first.
const DISTANCES: [&str; 5] = ["PIX", "PXB", "PHB", "NODE", "SYS"];

/// One `nvidia-smi topo -m` matrix.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Topology {
    /// GPU labels in column order (`GPU0`, …).
    pub gpus: Vec<String>,
    /// NICs in column order: (label, device name); the name is the label when no legend maps it.
    pub nics: Vec<(String, String)>,
    /// Link of (row label, column label).
    pub links: BTreeMap<(String, String), String>,
    /// CPU affinity of each GPU.
    pub cpu_affinity: BTreeMap<String, String>,
}

fn is_device(tok: &str) -> bool {
    tok.starts_with("GPU") && tok[3..].bytes().all(|c| c.is_ascii_digit()) && tok.len() > 3
        || tok.starts_with("NIC") && tok[3..].bytes().all(|c| c.is_ascii_digit()) && tok.len() > 3
        || tok.starts_with("mlx")
        || tok.starts_with("bnxt")
        || tok.starts_with("irdma")
}

/// True when the text holds a topology matrix (a header with GPU columns and the legend).
pub fn looks_like(head: &[u8]) -> bool {
    let text = String::from_utf8_lossy(&head[..head.len().min(16 * 1024)]);
    text.contains("Legend:")
        && text.contains("X    = Self")
        && text
            .lines()
            .any(|l| l.trim_start().starts_with("GPU0") && l.contains("CPU Affinity"))
}

/// Reads the matrix; `None` when there is no header with device columns.
pub fn parse(text: &str) -> Option<Topology> {
    let mut lines = text.lines();
    let header = lines.find(|l| {
        let t = l.trim_start();
        t.starts_with("GPU0") && l.contains("Affinity")
    })?;
    let cols: Vec<String> = header
        .split_whitespace()
        .take_while(|t| is_device(t))
        .map(str::to_string)
        .collect();
    if cols.is_empty() {
        return None;
    }
    let mut topo = Topology::default();
    for c in &cols {
        if c.starts_with("GPU") {
            topo.gpus.push(c.clone());
        } else {
            topo.nics.push((c.clone(), c.clone()));
        }
    }
    for l in lines {
        let toks: Vec<&str> = l.split_whitespace().collect();
        if let Some((label, name)) = legend(l) {
            if let Some(n) = topo.nics.iter_mut().find(|n| n.0 == label) {
                n.1 = name;
            }
            continue;
        }
        let Some(&row) = toks.first() else { continue };
        if !cols.iter().any(|c| c == row) || toks.len() < cols.len() + 1 {
            continue;
        }
        for (c, cell) in cols.iter().zip(&toks[1..]) {
            if *cell != "X" {
                topo.links
                    .insert((row.to_string(), c.clone()), cell.to_string());
            }
        }
        if row.starts_with("GPU") {
            if let Some(aff) = toks.get(cols.len() + 1) {
                topo.cpu_affinity.insert(row.to_string(), aff.to_string());
            }
        }
    }
    Some(topo)
}

/// `  NIC0: mlx5_0` of the NIC legend.
fn legend(l: &str) -> Option<(String, String)> {
    let (label, name) = l.trim().split_once(": ")?;
    (label.starts_with("NIC") && label[3..].bytes().all(|c| c.is_ascii_digit()) && !name.is_empty())
        .then(|| (label.to_string(), name.trim().to_string()))
}

impl Topology {
    /// The GPUs a NIC serves: those for which it is the nearest NIC (ties included), with the
    /// link between them. `nic` is a device name (`mlx5_0`, also `mlx5_0:1`) or a label.
    pub fn gpus_served_by(&self, nic: &str) -> Vec<(String, String)> {
        let nic = nic.split(':').next().unwrap_or(nic);
        let Some((label, _)) = self.nics.iter().find(|(l, n)| n == nic || l == nic) else {
            return Vec::new();
        };
        let rank = |link: &str| DISTANCES.iter().position(|d| *d == link);
        let mut out = Vec::new();
        for g in &self.gpus {
            let link = |n: &str| {
                self.links
                    .get(&(g.clone(), n.to_string()))
                    .map(String::as_str)
            };
            let Some(mine) = link(label).and_then(rank) else {
                continue;
            };
            let best = self
                .nics
                .iter()
                .filter_map(|(l, _)| link(l).and_then(rank))
                .min();
            if best == Some(mine) && mine <= 1 {
                out.push((g.clone(), DISTANCES[mine].to_string()));
            }
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const H100: &str = "\tGPU0\tGPU1\tGPU2\tGPU3\tNIC0\tNIC1\tNIC2\tCPU Affinity\tNUMA Affinity\tGPU NUMA ID
GPU0\t X \tNV18\tNV18\tNV18\tPIX\tSYS\tNODE\t0-55,112-167\t0\t\tN/A
GPU1\tNV18\t X \tNV18\tNV18\tPXB\tSYS\tNODE\t0-55,112-167\t0\t\tN/A
GPU2\tNV18\tNV18\t X \tNV18\tSYS\tPIX\tSYS\t56-111,168-223\t1\t\tN/A
GPU3\tNV18\tNV18\tNV18\t X \tSYS\tPIX\tSYS\t56-111,168-223\t1\t\tN/A
NIC0\tPIX\tPXB\tSYS\tSYS\t X \tSYS\tNODE
NIC1\tSYS\tSYS\tPIX\tPIX\tSYS\t X \tSYS
NIC2\tNODE\tNODE\tSYS\tSYS\tNODE\tSYS\t X

Legend:

  X    = Self
  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes (e.g., QPI/UPI)
  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges within a NUMA node
  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)
  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host Bridge)
  PIX  = Connection traversing at most a single PCIe bridge
  NV#  = Connection traversing a bonded set of # NVLinks

NIC Legend:

  NIC0: mlx5_0
  NIC1: mlx5_1
  NIC2: mlx5_2
";

    #[test]
    fn reads_the_matrix_and_the_nic_legend() {
        assert!(looks_like(H100.as_bytes()));
        let t = parse(H100).unwrap();
        assert_eq!(t.gpus, ["GPU0", "GPU1", "GPU2", "GPU3"]);
        assert_eq!(t.nics[1], ("NIC1".to_string(), "mlx5_1".to_string()));
        assert_eq!(t.links[&("GPU2".into(), "NIC1".into())], "PIX");
        assert_eq!(t.links[&("GPU0".into(), "GPU1".into())], "NV18");
        assert_eq!(t.cpu_affinity["GPU3"], "56-111,168-223");
    }

    #[test]
    fn a_nic_serves_the_gpus_it_is_nearest_to() {
        let t = parse(H100).unwrap();
        let names = |v: Vec<(String, String)>| {
            v.into_iter()
                .map(|(g, l)| format!("{g}:{l}"))
                .collect::<Vec<_>>()
        };
        assert_eq!(names(t.gpus_served_by("mlx5_0")), ["GPU0:PIX", "GPU1:PXB"]);
        assert_eq!(
            names(t.gpus_served_by("mlx5_1:1")),
            ["GPU2:PIX", "GPU3:PIX"]
        );
        // the storage NIC is nearest to no GPU
        assert!(t.gpus_served_by("mlx5_2").is_empty());
        assert!(t.gpus_served_by("mlx5_9").is_empty());
    }

    #[test]
    fn older_headers_name_the_devices() {
        let old = "        GPU0    GPU1    mlx5_0  mlx5_1  CPU Affinity    NUMA Affinity
GPU0     X      NV12    PIX     SYS     0-23    0
GPU1    NV12     X      SYS     PIX     24-47   1
mlx5_0  PIX     SYS      X      SYS
mlx5_1  SYS     PIX     SYS      X

Legend:

  X    = Self
";
        let t = parse(old).unwrap();
        assert_eq!(t.nics[0], ("mlx5_0".to_string(), "mlx5_0".to_string()));
        assert_eq!(
            t.gpus_served_by("mlx5_1"),
            [("GPU1".to_string(), "PIX".to_string())]
        );
        assert!(parse("GPU0 is fine\n").is_none());
    }
}
