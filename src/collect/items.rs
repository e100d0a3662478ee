//! What `faultline collect` captures, as data: one row per item, with the sources tried in
//! order (a command, else files), its timeout and size cap, whether it needs root to say
//! everything, what it is for, and what the report says when it is missing.

/// Where an item's data comes from.
#[derive(Clone, Copy, Debug)]
pub enum Src {
    /// A command (looked up on PATH, never through a shell) whose stdout becomes `member`.
    /// `since`: `--since` is passed to it (journalctl). `unit`: a systemd unit whose absence
    /// means "not installed" when the command gives nothing.
    Cmd {
        argv: &'static [&'static str],
        member: &'static str,
        since: bool,
        unit: Option<&'static str>,
    },
    /// Files matching any of the patterns (at most one `*`, inside one component), each its own
    /// member named by its path; symbolic links are never followed. `once`: skipped when an
    /// earlier item of the run already took these files.
    Files {
        globs: &'static [&'static str],
        once: bool,
    },
    /// The AER counters in sysfs of the NVIDIA PCI devices and their upstream ports, in one member.
    Aer,
    /// The job logs named with `--job-log`.
    JobLogs,
}

/// An opt-in item, captured only with `--with`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum OptIn {
    /// `--with dcgm`: `dcgmi diag -r 1`.
    Dcgm,
    /// `--with bug-report`: `nvidia-bug-report.sh`.
    BugReport,
}

/// One item of the capture.
#[derive(Clone, Copy, Debug)]
pub struct Item {
    /// Its name in the manifest.
    pub name: &'static str,
    /// What it is for (the manifest's `purpose`).
    pub purpose: &'static str,
    /// What the report says when it is missing.
    pub gap: &'static str,
    /// Sources tried in order; the first that gives data is kept.
    pub sources: &'static [Src],
    /// Seconds each command may run.
    pub timeout_s: u64,
    /// Bytes kept (per member).
    pub cap: u64,
    /// Says everything only as root (ipmitool, dmesg where restricted, lspci's capabilities).
    pub root: bool,
    /// Runs in the same worker right after the previous item (it may skip files that one took).
    pub after_previous: bool,
    /// Captured only when asked with `--with`.
    pub opt_in: Option<OptIn>,
}

const MIB: u64 = 1 << 20;

/// journalctl's flags for a plain text log with wall-clock times and years.
macro_rules! journal {
    ($($a:literal),*) => {
        &["journalctl", "--no-pager", "-q", "-o", "short-iso", $($a),*]
    };
}

const fn item(
    name: &'static str,
    purpose: &'static str,
    gap: &'static str,
    sources: &'static [Src],
) -> Item {
    Item {
        name,
        purpose,
        gap,
        sources,
        timeout_s: 10,
        cap: 16 * MIB,
        root: false,
        after_previous: false,
        opt_in: None,
    }
}

const fn cmd(argv: &'static [&'static str], member: &'static str) -> Src {
    Src::Cmd {
        argv,
        member,
        since: false,
        unit: None,
    }
}

const fn unit(argv: &'static [&'static str], member: &'static str, unit: &'static str) -> Src {
    Src::Cmd {
        argv,
        member,
        since: true,
        unit: Some(unit),
    }
}

const fn files(globs: &'static [&'static str]) -> Src {
    Src::Files { globs, once: false }
}

/// The table, in the order of the manifest.
pub const ITEMS: &[Item] = &[
    Item {
        cap: 64 * MIB,
        root: true,
        ..item(
            "kernel",
            "kernel log of the current boot with wall-clock times (Xid, AER, NVRM, OOM, hung tasks)",
            "no kernel log",
            &[
                Src::Cmd { argv: journal!("-k", "-b", "0"), member: "kern.log", since: true, unit: None },
                cmd(&["dmesg", "-T"], "dmesg.txt"),
                files(&["/var/log/kern.log*"]),
            ],
        )
    },
    Item {
        cap: 64 * MIB,
        after_previous: true,
        ..item(
            "kernel-previous-boot",
            "kernel log of the previous boot (a node that rebooted after the fault)",
            "no kernel log of the previous boot",
            &[
                Src::Cmd { argv: journal!("-k", "-b", "-1"), member: "kern-previous-boot.log", since: true, unit: None },
                Src::Files {
                    globs: &["/var/log/kern.log*"],
                    once: true,
                },
            ],
        )
    },
    item(
        "fabric-manager",
        "NVIDIA Fabric Manager (NVSwitch systems): training failures, NVLink and switch errors",
        "no fabric manager log",
        &[
            unit(journal!("-b", "0", "-u", "nvidia-fabricmanager"), "journal-nvidia-fabricmanager.log", "nvidia-fabricmanager"),
            files(&["/var/log/fabricmanager.log*"]),
        ],
    ),
    item(
        "persistenced",
        "nvidia-persistenced: driver kept loaded, GPU initialization failures",
        "no nvidia-persistenced log",
        &[unit(journal!("-b", "0", "-u", "nvidia-persistenced"), "journal-nvidia-persistenced.log", "nvidia-persistenced")],
    ),
    item(
        "dcgm",
        "DCGM host engine: health watches and diagnostics",
        "no DCGM log",
        &[
            unit(journal!("-b", "0", "-u", "nvidia-dcgm"), "journal-nvidia-dcgm.log", "nvidia-dcgm"),
            files(&["/var/log/nv-hostengine.log*"]),
        ],
    ),
    item(
        "kubelet",
        "kubelet: device plugin, pod evictions and GPU allocation",
        "no kubelet log",
        &[unit(journal!("-b", "0", "-u", "kubelet"), "journal-kubelet.log", "kubelet")],
    ),
    item(
        "slurmd",
        "slurmd: job steps, GRES, node drain reasons",
        "no slurmd log",
        &[
            unit(journal!("-b", "0", "-u", "slurmd"), "journal-slurmd.log", "slurmd"),
            files(&["/var/log/slurm/slurmd.log*", "/var/log/slurmd.log*"]),
        ],
    ),
    item(
        "nvidia-smi-q",
        "every GPU's state, counters, retired pages and what is normal for the model",
        "no nvidia-smi -q",
        &[cmd(&["nvidia-smi", "-q"], "nvidia-smi-q.txt")],
    ),
    item(
        "nvidia-smi-q-xml",
        "the same as XML (exact field names)",
        "no nvidia-smi -q -x",
        &[cmd(&["nvidia-smi", "-q", "-x"], "nvidia-smi-q.xml")],
    ),
    item(
        "nvidia-smi-topo",
        "GPU/NIC topology matrix",
        "no nvidia-smi topo -m",
        &[cmd(&["nvidia-smi", "topo", "-m"], "nvidia-smi-topo.txt")],
    ),
    item(
        "nvidia-smi-nvlink",
        "NVLink link state and speed",
        "no nvidia-smi nvlink -s",
        &[cmd(&["nvidia-smi", "nvlink", "-s"], "nvidia-smi-nvlink.txt")],
    ),
    item(
        "driver-version",
        "the loaded NVIDIA kernel module's version",
        "no NVIDIA driver version",
        &[files(&["/proc/driver/nvidia/version"])],
    ),
    item(
        "gpu-information",
        "per-GPU information from the driver (model, bus, firmware)",
        "no per-GPU driver information",
        &[files(&["/proc/driver/nvidia/gpus/*/information"])],
    ),
    Item {
        root: true,
        ..item(
            "lspci",
            "NVIDIA PCI devices: link speed and width, AER status",
            "no lspci of the NVIDIA devices",
            &[cmd(&["lspci", "-vvv", "-d", "10de:"], "lspci-nvidia.txt")],
        )
    },
    item(
        "aer-counters",
        "PCIe AER counters in sysfs of the NVIDIA devices and their upstream ports",
        "no AER counters",
        &[Src::Aer],
    ),
    item(
        "ibstat",
        "InfiniBand port state, rate and link layer",
        "no InfiniBand state (ibstat)",
        &[cmd(&["ibstat"], "ibstat.txt")],
    ),
    item(
        "ibv-devinfo",
        "RDMA devices and their ports",
        "no RDMA device list (ibv_devinfo)",
        &[cmd(&["ibv_devinfo"], "ibv_devinfo.txt")],
    ),
    Item {
        root: true,
        ..item(
            "ipmi-sel",
            "the BMC's system event log: power, thermal, PCIe and memory events",
            "no BMC event log",
            &[cmd(&["ipmitool", "sel", "elist"], "ipmitool-sel.txt")],
        )
    },
    item(
        "packages",
        "package history: driver, CUDA and kernel upgrades",
        "no package history",
        &[
            files(&[
                "/var/log/dpkg.log*",
                "/var/log/apt/history.log*",
                "/var/log/dnf.rpm.log*",
                "/var/log/yum.log*",
            ]),
            cmd(&["dnf", "-q", "history", "list"], "dnf-history.txt"),
        ],
    ),
    item(
        "cmdline",
        "kernel command line (iommu, pci=, nvidia options)",
        "no kernel command line",
        &[files(&["/proc/cmdline"])],
    ),
    item(
        "module-versions",
        "versions of the loaded nvidia* modules",
        "no NVIDIA module versions",
        &[files(&["/sys/module/nvidia*/version"])],
    ),
    item(
        "job-logs",
        "the job logs named with --job-log",
        "no job log",
        &[Src::JobLogs],
    ),
    Item {
        timeout_s: 180,
        opt_in: Some(OptIn::Dcgm),
        ..item(
            "dcgmi-diag",
            "DCGM's quick diagnostic (dcgmi diag -r 1)",
            "no DCGM diagnostic",
            &[cmd(&["dcgmi", "diag", "-r", "1"], "dcgmi-diag.txt")],
        )
    },
    Item {
        timeout_s: 600,
        cap: 256 * MIB,
        root: true,
        opt_in: Some(OptIn::BugReport),
        ..item(
            "nvidia-bug-report",
            "NVIDIA's own capture (nvidia-bug-report.sh)",
            "no nvidia-bug-report",
            &[cmd(&["nvidia-bug-report.sh"], "nvidia-bug-report.log.gz")],
        )
    },
];

/// The item named `name`.
pub fn find(name: &str) -> Option<&'static Item> {
    ITEMS.iter().find(|i| i.name == name)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_is_sound() {
        let mut names = std::collections::BTreeSet::new();
        let mut members = std::collections::BTreeSet::new();
        for (k, i) in ITEMS.iter().enumerate() {
            assert!(names.insert(i.name), "{} twice", i.name);
            assert!(!i.sources.is_empty() && !i.purpose.is_empty() && !i.gap.is_empty());
            assert!(!i.after_previous || k > 0);
            for s in i.sources {
                if let Src::Cmd { argv, member, .. } = s {
                    assert!(!argv.is_empty() && !argv[0].contains('/'));
                    assert!(members.insert(*member), "member {member} twice");
                    assert!(!member.contains('/') && *member != crate::collect::manifest::MEMBER);
                }
                if let Src::Files { globs, .. } = s {
                    for g in *globs {
                        assert!(g.starts_with('/') && g.matches('*').count() <= 1);
                    }
                }
            }
        }
        assert!(find("kernel").is_some());
    }
}
