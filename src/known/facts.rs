//! The versions the inputs name, per host: the loaded driver (`NVRM: loading`, the bug report's
//! `/proc/driver/nvidia/version`, nvidia-smi), the two sides of an API mismatch, the CUDA version
//! the driver supports (nvidia-smi), the CUDA runtime and NCCL a job ran with (NCCL's `NCCL
//! version 2.x.y+cudaX` line, PyTorch's environment dump), the fabric manager and container
//! toolkit (their packages in the package history, fabric manager's version check), the kernel;
//! and the GPU products. Each fact keeps where it was read (an event, else an input).

use super::version::Version;
use crate::pipeline::InputResult;
use crate::timeline::Event;
use std::collections::BTreeMap;

/// One version and where it was read.
#[derive(Clone, Debug)]
pub struct Fact {
    /// As written.
    pub text: String,
    /// Parsed.
    pub version: Version,
    /// The event that gave it.
    pub event: Option<usize>,
    /// `path:line` (or the path of the input that gave it).
    pub origin: String,
}

/// What one host's inputs say.
#[derive(Clone, Debug, Default)]
pub struct HostFacts {
    /// Versions by name (`driver`, `driver_userspace`, `cuda_driver_api`, `cuda_runtime`,
    /// `nccl`, `fabric_manager`, `container_toolkit`, `kernel`).
    pub versions: BTreeMap<String, Fact>,
    /// GPU product names.
    pub products: Vec<String>,
}

/// The facts of every host; `""` holds what no host was named for.
#[derive(Clone, Debug, Default)]
pub struct Facts(pub BTreeMap<String, HostFacts>);

impl Facts {
    /// The facts of `host`, with what no host was named for filling the gaps; an event without
    /// a host reads the only host when there is one.
    pub fn of(&self, host: Option<&str>) -> HostFacts {
        let named: Vec<&String> = self.0.keys().filter(|k| !k.is_empty()).collect();
        let key = match host {
            Some(h) => Some(h.to_string()),
            None if named.len() == 1 => Some(named[0].clone()),
            None => None,
        };
        let mut out = key
            .and_then(|k| self.0.get(&k).cloned())
            .unwrap_or_default();
        if let Some(any) = self.0.get("") {
            for (k, f) in &any.versions {
                out.versions.entry(k.clone()).or_insert_with(|| f.clone());
            }
            out.products.extend(any.products.iter().cloned());
        }
        out
    }

    fn put(
        &mut self,
        host: Option<&str>,
        key: &str,
        text: &str,
        event: Option<usize>,
        origin: String,
    ) {
        let Some(version) = Version::parse(text) else {
            return;
        };
        let h = self.0.entry(host.unwrap_or("").to_string()).or_default();
        // the first source read wins: callers go from the most direct to the least
        h.versions.entry(key.to_string()).or_insert(Fact {
            text: text.trim().to_string(),
            version,
            event,
            origin,
        });
    }
}

/// The facts of an analysis's events and inputs.
pub fn gather(events: &[Event], inputs: &[InputResult]) -> Facts {
    let mut f = Facts::default();
    // the latest driver load of each host is the running driver
    for (i, e) in events.iter().enumerate().rev() {
        from_event(&mut f, i, e);
    }
    for r in inputs {
        let host = r.host.as_deref();
        if let Some(b) = &r.bundle {
            if let Some(d) = &b.driver {
                f.put(host, "driver", d, None, r.path.clone());
            }
            if let Some(k) = &b.kernel {
                f.put(host, "kernel", k, None, r.path.clone());
            }
        }
        if let Some(d) = &r.smi_driver {
            f.put(host, "driver", d, None, r.path.clone());
        }
        if let Some(c) = &r.smi_cuda {
            f.put(host, "cuda_driver_api", c, None, r.path.clone());
        }
        let names = r.gpus.iter().filter_map(|g| g.name.clone());
        let h = f.0.entry(host.unwrap_or("").to_string()).or_default();
        for n in names {
            if !h.products.contains(&n) {
                h.products.push(n);
            }
        }
    }
    f
}

/// The versions event `e` (at index `i`) names.
fn from_event(f: &mut Facts, i: usize, e: &Event) {
    let host = e.host.as_deref();
    let origin = format!("{}:{}", e.source.path, e.source.line);
    let mut put = |key: &str, attr: &str| {
        if let Some(v) = e.attrs.get(attr) {
            f.put(host, key, v, Some(i), origin.clone());
        }
    };
    match e.kind {
        "driver_load" => put("driver", "driver_version"),
        "driver_mismatch" => {
            put("driver", "module_version");
            put("driver_userspace", "client_version");
            put("fabric_manager", "fm_version");
        }
        "component_version" => {
            let Some(c) = e.attrs.get("component") else {
                return;
            };
            let key = match c {
                "driver" | "nccl" | "kernel" | "fabric_manager" | "container_toolkit" => c,
                "cuda" => "cuda_runtime",
                _ => return,
            };
            put(key, "version");
            put("cuda_runtime", "cuda");
            put("cuda_driver_api", "cuda_driver_api");
        }
        "package_change" => {
            let pkg = e.attrs.get("package").unwrap_or("");
            let key = if pkg.contains("fabricmanager") {
                "fabric_manager"
            } else if pkg.contains("container-toolkit") || pkg.starts_with("libnvidia-container") {
                "container_toolkit"
            } else {
                return;
            };
            put(key, "to_version");
        }
        _ => {}
    }
}
