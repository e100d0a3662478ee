//! Scenario fixtures for every root-cause rule of `data/rules.toml`: a few real-shaped lines that
//! must make the rule name the incident (its id, layer and who acts), and a near miss — lines
//! that look alike but must not — with what they give instead. A rule without both fails
//! `every_rule_has_a_positive_and_a_near_miss_scenario`.

use faultline::{Analysis, Knowledge, Options};
use std::collections::BTreeSet;
use std::sync::OnceLock;

/// What a near miss gives instead of the rule.
#[derive(Clone, Copy, Debug)]
enum Instead {
    /// Another rule names the top incident.
    Rule(&'static str),
    /// No rule fits: the most severe event decides, with this layer.
    NoRule(&'static str),
    /// Only consequences were seen: layer `unknown`, and the report says what data is missing.
    Unknown,
    /// No incident at all: verdict `none`.
    Nothing,
}

/// One rule's fixtures: files as (path under the case folder, text); the first folder is the host.
struct Scenario {
    rule: &'static str,
    layer: &'static str,
    responsibility: &'static str,
    positive: &'static [(&'static str, &'static str)],
    near_miss: &'static [(&'static str, &'static str)],
    instead: Instead,
}

const XID79: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
Mar 14 02:13:07 node-a kernel: [1795955.589913] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
";

const NVML_UNKNOWN: &str =
    "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error
";

const THREE_CODES_ONE_GPU: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:11:30 node-a kernel: [1795889.200000] NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.
Mar 14 02:12:45 node-a kernel: [1795964.300000] NVRM: Xid (PCI:0000:3b:00): 74, pid=4242, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
";

const THREE_CODES_THREE_GPUS: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:11:30 node-a kernel: [1795889.200000] NVRM: Xid (PCI:0000:5d:00): 48, pid=4243, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.
Mar 14 02:12:45 node-a kernel: [1795964.300000] NVRM: Xid (PCI:0000:9a:00): 74, pid=4244, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
";

const XID13_NODE_A: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
";

const XID48_NODE_B: &str = "Mar 14 02:11:30 node-b kernel: [1795889.200000] NVRM: Xid (PCI:0000:3b:00): 48, pid=5242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.
";

const XID74_NODE_C: &str = "Mar 14 02:12:45 node-c kernel: [1795964.300000] NVRM: Xid (PCI:0000:3b:00): 74, pid=6242, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
";

const AER_FATAL: &str = "Mar 14 02:13:01 node-a kernel: [1795950.100000] pcieport 0000:5c:00.0: AER: Uncorrected (Fatal) error received: 0000:5d:00.0
Mar 14 02:13:01 node-a kernel: [1795950.100010] pcieport 0000:5c:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)
Mar 14 02:13:01 node-a kernel: [1795950.100020] pcieport 0000:5c:00.0:   device [8086:347a] error status/mask=00000020/00000000
Mar 14 02:13:01 node-a kernel: [1795950.100030] pcieport 0000:5c:00.0:    [ 5] SDES                   (First)
";

const AER_CORRECTED: &str = "Mar 14 02:13:01 node-a kernel: [1795950.100000] pcieport 0000:5c:00.0: AER: Corrected error received: 0000:5c:00.0
Mar 14 02:13:01 node-a kernel: [1795950.100010] pcieport 0000:5c:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
Mar 14 02:13:01 node-a kernel: [1795950.100020] pcieport 0000:5c:00.0:   device [8086:347a] error status/mask=00000001/00002000
Mar 14 02:13:01 node-a kernel: [1795950.100030] pcieport 0000:5c:00.0:    [ 0] RxErr
";

const XID64: &str = "Mar 14 07:52:18 node-a kernel: [84061.351789] NVRM: Xid (PCI:0000:4e:00): 64, pid='<unknown>', name=<unknown>, Row Remapper Error: (0x0000001d3a7c4e20) - All reserved rows for bank are remapped
";

const XID63: &str = "Mar 14 07:40:05 node-a kernel: [40128.402144] NVRM: Xid (PCI:0000:4e:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x0000001c20e45ae0) marked for remapping, reset gpu to activate.
";

const SMI_REMAP_FAILED: &str = "==============NVSMI LOG==============

Timestamp                                 : Sat Mar 14 09:14:02 2026
Driver Version                            : 535.161.08
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:4E:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    Serial Number                         : 1321221008871
    GPU UUID                              : GPU-25296531-fc5b-961e-7c01-acae4ac90823
    Remapped Rows
        Correctable Error                 : 1
        Uncorrectable Error               : 2
        Pending                           : No
        Remapping Failure Occurred        : Yes
";

const SMI_REMAP_PENDING: &str = "==============NVSMI LOG==============

Timestamp                                 : Sat Mar 14 09:14:02 2026
Driver Version                            : 535.161.08
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:4E:00.0
    Product Name                          : NVIDIA A100-SXM4-80GB
    Serial Number                         : 1321221008871
    GPU UUID                              : GPU-25296531-fc5b-961e-7c01-acae4ac90823
    Remapped Rows
        Correctable Error                 : 1
        Uncorrectable Error               : 0
        Pending                           : Yes
        Remapping Failure Occurred        : No
";

const SMI_RETIRED_SBE: &str = "==============NVSMI LOG==============

Timestamp                                 : Sat Mar 14 09:14:02 2026
Driver Version                            : 470.223.02
CUDA Version                              : 11.4

Attached GPUs                             : 1
GPU 00000000:3B:00.0
    Product Name                          : Tesla V100-SXM2-32GB
    Retired Pages
        Single Bit ECC                    : 2
        Double Bit ECC                    : 0
        Pending Page Blacklist            : No
";

const XID48: &str = "Mar 14 02:11:30 node-a kernel: [1795889.200000] NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.
";

const XID92: &str = "Mar 14 02:11:30 node-a kernel: [1795889.200000] NVRM: Xid (PCI:0000:3b:00): 92, pid='<unknown>', name=<unknown>, High single-bit ECC error rate
";

const INIT_FAILED: &str = "Mar 14 02:00:03 node-a kernel: [  218.250408] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)
Mar 14 02:00:03 node-a kernel: [  218.250612] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5
";

const DRIVER_LOADS: &str = "Mar 13 08:31:22 node-a kernel: [    6.710275] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08  Tue Mar  5 22:42:18 UTC 2024
Mar 14 02:00:03 node-a kernel: [    6.812004] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Feb 20 18:12:44 UTC 2024
";

const XID74: &str = "Mar 14 02:12:45 node-a kernel: [1795964.300000] NVRM: Xid (PCI:0000:3b:00): 74, pid=4242, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
";

const XID74_THEN_GSP: &str = "Mar 14 02:12:45 node-a kernel: [1795964.300000] NVRM: Xid (PCI:0000:3b:00): 74, pid=4242, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
Mar 14 02:13:20 node-a kernel: [1795999.300000] NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).
";

const XID119: &str = "Mar 14 02:13:20 node-a kernel: [1795999.300000] NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).
";

const SXID_FATAL: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 63 LTSSM Fault Up
";

const SXID_NONFATAL: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20009, Non-fatal, Link 28 RX Short Error Rate
";

const NVML_MISMATCH: &str = "Failed to initialize NVML: Driver/library version mismatch
";

const SEL_PSU: &str =
    "  20 | 03/14/2026 | 02:12:27 | Power Supply PS Redundancy | Redundancy Lost | Asserted
  21 | 03/14/2026 | 02:12:29 | Power Supply PS2 Status | Failure detected () | Asserted
";

const SEL_PSU_CLEARED: &str =
    "  24 | 03/14/2026 | 03:40:11 | Power Supply PS2 Status | Failure detected () | Deasserted
  25 | 03/14/2026 | 03:40:12 | Power Supply PS Redundancy | Redundancy Lost | Deasserted
  26 | 03/14/2026 | 03:40:12 | Power Supply PS Redundancy | Fully Redundant | Asserted
";

const SEL_FAN: &str = "  31 | 02/11/2026 | 03:40:52 | Fan FAN6A | Lower Non-critical going low  | Asserted | Reading 840 < Threshold 1080 RPM
  34 | 02/11/2026 | 03:41:09 | Fan FAN6A | Lower Critical going low  | Asserted | Reading 0 < Threshold 600 RPM
";

const SEL_FAN_CLEARED: &str = "  35 | 02/11/2026 | 04:02:51 | Fan FAN6A | Lower Critical going low  | Deasserted | Reading 7800 < Threshold 600 RPM
";

const SEL_TEMP: &str = "  50 | 03/14/2026 | 02:13:55 | Temperature Inlet Temp | Upper Non-critical going high | Asserted | Reading 38 > Threshold 37 degrees C
";

const SEL_TEMP_CLEARED: &str = "  56 | 03/14/2026 | 02:31:40 | Temperature Inlet Temp | Upper Non-critical going high | Deasserted | Reading 30 < Threshold 37 degrees C
";

/// An nvidia-smi -q dump of one GPU with the given clock event reasons.
macro_rules! smi_clocks {
    ($thermal:literal, $brake:literal, $cap:literal) => {
        concat!(
            "==============NVSMI LOG==============

Timestamp                                 : Sat Mar 14 02:20:00 2026
Driver Version                            : 535.161.08
CUDA Version                              : 12.2

Attached GPUs                             : 1
GPU 00000000:81:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    Clocks Event Reasons
        Idle                              : Not Active
        Applications Clocks Setting       : Not Active
        SW Power Cap                      : ",
            $cap,
            "
        HW Slowdown                       : Not Active
            HW Thermal Slowdown           : ",
            $thermal,
            "
            HW Power Brake Slowdown       : ",
            $brake,
            "
        Sync Boost                        : Not Active
        SW Thermal Slowdown               : Not Active
"
        )
    };
}

const SMI_THERMAL: &str = smi_clocks!("Active", "Not Active", "Not Active");
const SMI_COOL: &str = smi_clocks!("Not Active", "Not Active", "Not Active");
const SMI_BRAKE: &str = smi_clocks!("Not Active", "Active", "Not Active");
const SMI_POWER_CAP: &str = smi_clocks!("Not Active", "Not Active", "Active");

const CABLE_UNPLUGGED: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] mlx5_core 0000:5c:00.0: port_module:255:(pid 0): Port module event: module 0, Cable unplugged
";

const CABLE_PLUGGED: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] mlx5_core 0000:5c:00.0: port_module:255:(pid 0): Port module event: module 0, Cable plugged
";

const EDAC_UE: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x0 offset:0x0 grain:32 syndrome:0x0)
";

const EDAC_CE: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x0 offset:0x0 grain:32 syndrome:0x0)
";

const CUDA_OOM: &str = "[rank5]:[E314 02:13:07.412000000 train.py:212] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 56.00 MiB. GPU 5 has a total capacity of 79.33 GiB of which 49.81 MiB is free. Process 415557 has 79.27 GiB memory in use.
";

const HOST_OOM: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] Out of memory: Killed process 4242 (python) total-vm:1000000kB, anon-rss:900000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:10kB oom_score_adj:0
";

const OOM_REAPER: &str = "Mar 14 02:13:08 node-a kernel: [1795956.589904] oom_reaper: reaped process 4242 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
";

const ILLEGAL_ADDRESS: &str = "[rank3]:[E314 02:13:08.123456789 ProcessGroupNCCL.cpp:1515] [PG 0 Rank 3] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered
";

const CUDA_ECC: &str = "[rank3]:[E314 02:13:08.123456789 ProcessGroupNCCL.cpp:1515] [PG 0 Rank 3] Process group watchdog thread terminated with exception: CUDA error: uncorrectable ECC error encountered
";

const XID13_SPREAD: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:10:01 node-a kernel: [1795800.100300] NVRM: Xid (PCI:0000:5d:00): 13, pid=4243, name=python, Graphics SM Warp Exception on (GPC 4, TPC 0, SM 1): Out Of Range Address
Mar 14 02:10:02 node-a kernel: [1795800.900000] NVRM: Xid (PCI:0000:9a:00): 13, pid=4244, name=python, Graphics SM Warp Exception on (GPC 0, TPC 5, SM 0): Out Of Range Address
";

const XID13_ONE_UNIT: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:10:01 node-a kernel: [1795800.100100] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics Exception: ESR 0x51a730=0x20d 0x51a734=0x0 0x51a728=0xc81eb60 0x51a72c=0x1174
Mar 14 02:16:30 node-a kernel: [1796190.200000] NVRM: Xid (PCI:0000:3b:00): 13, pid=5151, name=pt_main_thread, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 1): Out Of Range Address
";

const XID13_ONE_JOB_RETRIED: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:16:30 node-a kernel: [1796190.200000] NVRM: Xid (PCI:0000:3b:00): 13, pid=5151, name=python, Graphics SM Warp Exception on (GPC 6, TPC 4, SM 1): Out Of Range Address
";

const PREEMPTED: &str = "slurmstepd: error: *** STEP 1234.0 ON node-a CANCELLED AT 2026-03-14T02:13:07 DUE TO PREEMPTION ***
";

const TIME_LIMIT: &str = "slurmstepd: error: *** JOB 991 ON node-a CANCELLED AT 2026-03-14T02:13:07 DUE TO TIME LIMIT ***
";

const TASK_EXITED: &str = "srun: error: node-a: task 3: Exited with exit code 1
";

const REMOTE_ERROR: &str = "[rank0]:[E314 02:23:07.408271257 ProcessGroupNCCL.cpp:1515] [PG 0 Rank 0] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.19.3
";

const SOCKET_WARN: &str = "node-a:4242:4300 [0] NCCL WARN socketProgressOpt: Call to recv from 10.0.0.2<33759> failed : Connection reset by peer
";

const SCENARIOS: &[Scenario] = &[
    Scenario {
        rule: "gpu-fell-off-bus",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", XID79)],
        // NVML's "Unknown Error" alone is a consequence of a lost GPU, not the loss itself
        near_miss: &[("node-a/nvml.txt", NVML_UNKNOWN)],
        instead: Instead::Unknown,
    },
    Scenario {
        rule: "gpu-repeat-offender",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", THREE_CODES_ONE_GPU)],
        // the same three codes on three GPUs: no board keeps failing
        near_miss: &[("node-a/kern.log", THREE_CODES_THREE_GPUS)],
        instead: Instead::Rule("uncorrectable-ecc"),
    },
    Scenario {
        rule: "gpu-repeat-offender",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", THREE_CODES_ONE_GPU)],
        // one bus id on three identical servers is three GPUs
        near_miss: &[
            ("node-a/kern.log", XID13_NODE_A),
            ("node-b/kern.log", XID48_NODE_B),
            ("node-c/kern.log", XID74_NODE_C),
        ],
        instead: Instead::Rule("uncorrectable-ecc"),
    },
    Scenario {
        rule: "gpu-exception-same-unit",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", XID13_ONE_UNIT)],
        // Xid 13 spread over different GPUs: the program
        near_miss: &[("node-a/kern.log", XID13_SPREAD)],
        instead: Instead::Rule("app-xid"),
    },
    Scenario {
        rule: "gpu-exception-same-unit",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", XID13_ONE_UNIT)],
        // the same GPU twice, but on different units: a retried buggy job
        near_miss: &[("node-a/kern.log", XID13_ONE_JOB_RETRIED)],
        instead: Instead::Rule("app-xid"),
    },
    Scenario {
        rule: "pcie-fatal",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", AER_FATAL)],
        // corrected errors only: no fatal link error
        near_miss: &[("node-a/kern.log", AER_CORRECTED)],
        instead: Instead::NoRule("hardware"),
    },
    Scenario {
        rule: "row-remap-failure",
        layer: "gpu_memory",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", XID64)],
        // a row marked for remapping is the mechanism working, not failing
        near_miss: &[("node-a/kern.log", XID63)],
        instead: Instead::Rule("memory-retirement"),
    },
    Scenario {
        rule: "row-remap-failure-counter",
        layer: "gpu_memory",
        responsibility: "vendor",
        positive: &[("node-a/nvidia-smi.txt", SMI_REMAP_FAILED)],
        near_miss: &[("node-a/nvidia-smi.txt", SMI_REMAP_PENDING)],
        instead: Instead::Rule("memory-retirement"),
    },
    Scenario {
        rule: "uncorrectable-ecc",
        layer: "gpu_memory",
        responsibility: "operator",
        positive: &[("node-a/kern.log", XID48)],
        // a high single-bit rate is corrected, not uncorrectable
        near_miss: &[("node-a/kern.log", XID92)],
        instead: Instead::Rule("memory-retirement"),
    },
    Scenario {
        rule: "memory-retirement",
        layer: "gpu_memory",
        responsibility: "operator",
        positive: &[("node-a/kern.log", XID63)],
        // pages retired for single-bit errors are routine bookkeeping
        near_miss: &[("node-a/nvidia-smi.txt", SMI_RETIRED_SBE)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "cuda-ecc-error",
        layer: "gpu_memory",
        responsibility: "operator",
        positive: &[("node-a/train.log", CUDA_ECC)],
        // another CUDA error: the program's
        near_miss: &[("node-a/train.log", ILLEGAL_ADDRESS)],
        instead: Instead::Rule("cuda-error"),
    },
    Scenario {
        rule: "gpu-init-failure",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", INIT_FAILED)],
        near_miss: &[("node-a/kern.log", DRIVER_LOADS)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "nvlink-fatal",
        layer: "interconnect",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", XID74)],
        near_miss: &[("node-a/kern.log", SXID_NONFATAL)],
        instead: Instead::Rule("nvswitch-nonfatal"),
    },
    Scenario {
        rule: "nvswitch-fatal",
        layer: "interconnect",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", SXID_FATAL)],
        near_miss: &[("node-a/kern.log", SXID_NONFATAL)],
        instead: Instead::Rule("nvswitch-nonfatal"),
    },
    Scenario {
        rule: "nvswitch-nonfatal",
        layer: "interconnect",
        responsibility: "operator",
        positive: &[("node-a/kern.log", SXID_NONFATAL)],
        near_miss: &[("node-a/kern.log", SXID_FATAL)],
        instead: Instead::Rule("nvswitch-fatal"),
    },
    Scenario {
        rule: "gsp-timeout",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/kern.log", XID119)],
        // GSP timeouts after a fatal NVLink error follow it
        near_miss: &[("node-a/kern.log", XID74_THEN_GSP)],
        instead: Instead::Rule("nvlink-fatal"),
    },
    Scenario {
        rule: "driver-mismatch",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/nvml.txt", NVML_MISMATCH)],
        // a driver update between two boots is no mismatch while nothing fails
        near_miss: &[("node-a/kern.log", DRIVER_LOADS)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "bmc-psu-fault",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/sel-elist.txt", SEL_PSU)],
        near_miss: &[("node-a/sel-elist.txt", SEL_PSU_CLEARED)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "bmc-fan-failure",
        layer: "thermal_power",
        responsibility: "vendor",
        positive: &[("node-a/sel-elist.txt", SEL_FAN)],
        near_miss: &[("node-a/sel-elist.txt", SEL_FAN_CLEARED)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "thermal-slowdown",
        layer: "thermal_power",
        responsibility: "operator",
        positive: &[("node-a/nvidia-smi.txt", SMI_THERMAL)],
        near_miss: &[("node-a/nvidia-smi.txt", SMI_COOL)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "bmc-temperature",
        layer: "thermal_power",
        responsibility: "operator",
        positive: &[("node-a/sel-elist.txt", SEL_TEMP)],
        near_miss: &[("node-a/sel-elist.txt", SEL_TEMP_CLEARED)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "power-brake",
        layer: "thermal_power",
        responsibility: "operator",
        positive: &[("node-a/nvidia-smi.txt", SMI_BRAKE)],
        // running at the software power cap is the GPU doing its job
        near_miss: &[("node-a/nvidia-smi.txt", SMI_POWER_CAP)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "ib-link",
        layer: "network_storage",
        responsibility: "operator",
        positive: &[("node-a/kern.log", CABLE_UNPLUGGED)],
        near_miss: &[("node-a/kern.log", CABLE_PLUGGED)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "host-machine-check",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[("node-a/kern.log", EDAC_UE)],
        // a corrected DIMM error is a warning the rule leaves alone
        near_miss: &[("node-a/kern.log", EDAC_CE)],
        instead: Instead::NoRule("hardware"),
    },
    Scenario {
        rule: "cuda-oom",
        layer: "application",
        responsibility: "user",
        positive: &[("node-a/train.log", CUDA_OOM)],
        // out of host memory, not GPU memory
        near_miss: &[("node-a/kern.log", HOST_OOM)],
        instead: Instead::Rule("host-oom"),
    },
    Scenario {
        rule: "host-oom",
        layer: "application",
        responsibility: "user",
        positive: &[("node-a/kern.log", HOST_OOM)],
        near_miss: &[("node-a/kern.log", OOM_REAPER)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "nccl-desync",
        layer: "application",
        responsibility: "user",
        positive: &[(
            "node-a/train.log",
            "[rank0]:[E314 02:23:07.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.
[rank1]:[E314 02:23:07.409271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=BROADCAST, NumelIn=1024, NumelOut=1024, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.
",
        )],
        // every rank waits in the same collective and nothing lies beneath: unknown, say so
        near_miss: &[(
            "node-a/train.log",
            "[rank0]:[E314 02:23:07.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.
[rank1]:[E314 02:23:07.409271257 ProcessGroupNCCL.cpp:607] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=466119168, NumelOut=466119168, Timeout(ms)=600000) ran for 600012 milliseconds before timing out.
",
        )],
        instead: Instead::Unknown,
    },
    Scenario {
        rule: "cuda-error",
        layer: "application",
        responsibility: "user",
        positive: &[("node-a/train.log", ILLEGAL_ADDRESS)],
        // the same error while the GPU falls off the bus: the GPU is the cause
        near_miss: &[("node-a/train.log", ILLEGAL_ADDRESS), ("node-a/kern.log", XID79)],
        instead: Instead::Rule("gpu-fell-off-bus"),
    },
    Scenario {
        rule: "app-xid",
        layer: "application",
        responsibility: "user",
        positive: &[("node-a/kern.log", XID13_SPREAD)],
        // one GPU, one compute unit, two different programs: the GPU
        near_miss: &[("node-a/kern.log", XID13_ONE_UNIT)],
        instead: Instead::Rule("gpu-exception-same-unit"),
    },
    Scenario {
        rule: "job-time-limit",
        layer: "platform",
        responsibility: "user",
        positive: &[("node-a/slurm.log", TIME_LIMIT)],
        near_miss: &[("node-a/slurm.log", PREEMPTED)],
        instead: Instead::Rule("preemption"),
    },
    Scenario {
        rule: "preemption",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/slurm.log", PREEMPTED)],
        // a task that exited on its own tells nothing about the platform
        near_miss: &[("node-a/slurm.log", TASK_EXITED)],
        instead: Instead::Unknown,
    },
    Scenario {
        rule: "network-transport",
        layer: "network_storage",
        responsibility: "operator",
        positive: &[("node-a/train.log", REMOTE_ERROR)],
        // a socket warning that NCCL retried is no transport failure
        near_miss: &[("node-a/train.log", SOCKET_WARN)],
        instead: Instead::Unknown,
    },
];

fn knowledge() -> &'static Knowledge {
    static K: OnceLock<Knowledge> = OnceLock::new();
    K.get_or_init(|| Knowledge::load(&[]).expect("built-in knowledge"))
}

/// Writes the files into a fresh folder and analyzes it (year 2026, UTC, as `--year --tz`).
fn analyze(files: &[(&str, &str)]) -> Analysis {
    let dir = tempfile::tempdir().unwrap();
    for (path, text) in files {
        let p = dir.path().join(path);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        let mut old = std::fs::read_to_string(&p).unwrap_or_default();
        old.push_str(text);
        std::fs::write(&p, old).unwrap();
    }
    let mut opts = Options {
        paths: vec![dir.path().display().to_string()],
        ..Options::default()
    };
    opts.time.year = Some(2026);
    opts.time.tz_offset = Some(0);
    opts.time.now = 1_800_000_000;
    faultline::analyze(&opts, knowledge())
}

/// What named each incident: (rule, layer, who acts).
fn causes(a: &Analysis) -> Vec<(Option<String>, &'static str, String)> {
    a.incidents
        .iter()
        .map(|i| (i.rule.clone(), i.layer.as_str(), i.responsibility.clone()))
        .collect()
}

#[test]
fn every_rule_fires_on_its_scenario() {
    let mut failures = Vec::new();
    for s in SCENARIOS {
        let a = analyze(s.positive);
        let top = a.top();
        let got = top.map(|t| {
            (
                t.rule.as_deref(),
                t.layer.as_str(),
                t.responsibility.as_str(),
            )
        });
        if got != Some((Some(s.rule), s.layer, s.responsibility)) {
            failures.push(format!(
                "{}: want ({}, {}, {}), got {:?} (all incidents {:?})",
                s.rule,
                s.rule,
                s.layer,
                s.responsibility,
                got,
                causes(&a)
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn near_misses_do_not_fire_the_rule() {
    let mut failures = Vec::new();
    for s in SCENARIOS {
        let a = analyze(s.near_miss);
        let all = causes(&a);
        if all.iter().any(|c| c.0.as_deref() == Some(s.rule)) {
            failures.push(format!("{}: fired on its near miss: {all:?}", s.rule));
            continue;
        }
        let top = a.top();
        let ok = match s.instead {
            Instead::Rule(r) => top.is_some_and(|t| t.rule.as_deref() == Some(r)),
            Instead::NoRule(l) => top.is_some_and(|t| t.rule.is_none() && t.layer.as_str() == l),
            Instead::Unknown => top.is_some_and(|t| {
                t.rule.is_none() && t.layer.as_str() == "unknown" && !t.missing.is_empty()
            }),
            Instead::Nothing => a.incidents.is_empty(),
        };
        if !ok {
            failures.push(format!(
                "{}: near miss should give {:?}, got {all:?}",
                s.rule, s.instead
            ));
        }
    }
    assert!(failures.is_empty(), "\n{}", failures.join("\n"));
}

#[test]
fn every_rule_has_a_positive_and_a_near_miss_scenario() {
    let rules = faultline::rules::RuleSet::load(&[]).expect("built-in rules");
    let ids: BTreeSet<&str> = rules.rules.iter().map(|r| r.id.as_str()).collect();
    let covered: BTreeSet<&str> = SCENARIOS
        .iter()
        .filter(|s| !s.positive.is_empty() && !s.near_miss.is_empty())
        .map(|s| s.rule)
        .collect();
    let missing: Vec<&&str> = ids.difference(&covered).collect();
    assert!(missing.is_empty(), "rules without scenarios: {missing:?}");
    let stale: Vec<&&str> = covered.difference(&ids).collect();
    assert!(
        stale.is_empty(),
        "scenarios of rules that no longer exist: {stale:?}"
    );
    // each rule's scenario says what the rule itself says
    for s in SCENARIOS {
        let r = rules.rules.iter().find(|r| r.id == s.rule).unwrap();
        assert_eq!(
            (r.layer.as_str(), r.responsibility.as_str()),
            (s.layer, s.responsibility),
            "{}",
            s.rule
        );
    }
}
