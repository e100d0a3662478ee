//! Scenario fixtures for every root-cause rule of `data/rules.toml`: a few real-shaped lines that
//! must make the rule name the incident (its id, layer and who acts), and a near miss — lines
//! that look alike but must not — with what they give instead. A rule without both fails
//! `every_rule_has_a_positive_and_a_near_miss_scenario`.

mod scenario_data;

use faultline::{Analysis, Knowledge, Options};
use scenario_data::*;
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
        rule: "bmc-power-then-gpu-lost",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[
            ("node-a/sel-elist.txt", SEL_PSU),
            ("node-a/kern.log", XID79),
        ],
        // the power supply of another server
        near_miss: &[
            ("node-b/sel-elist.txt", SEL_PSU),
            ("node-a/kern.log", XID79),
        ],
        instead: Instead::Rule("gpu-fell-off-bus"),
    },
    Scenario {
        rule: "bmc-cooling-then-gpu-lost",
        layer: "thermal_power",
        responsibility: "operator",
        positive: &[
            ("node-a/sel-elist.txt", SEL_FAN_BEFORE_XID79),
            ("node-a/kern.log", XID79),
        ],
        // a fan below its warning threshold is no cooling failure
        near_miss: &[
            ("node-a/sel-elist.txt", SEL_FAN_SLOW_BEFORE_XID79),
            ("node-a/kern.log", XID79),
        ],
        instead: Instead::Rule("gpu-fell-off-bus"),
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
        rule: "gpu-init-failure-gsp-disabled",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/kern.log", INIT_FAILED_GSP_DISABLED)],
        // GSP that was started and did not boot is the firmware's
        near_miss: &[("node-a/kern.log", INIT_FAILED_WPR2)],
        instead: Instead::Rule("gpu-init-failure-firmware"),
    },
    Scenario {
        rule: "gpu-init-failure-firmware",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/kern.log", INIT_FAILED_WPR2)],
        // a failure whose status says the memory failed is the board's
        near_miss: &[("node-a/kern.log", INIT_FAILED)],
        instead: Instead::Rule("gpu-init-failure"),
    },
    Scenario {
        rule: "gpu-init-failure-driver",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/kern.log", INIT_FAILED_NO_FIRMWARE)],
        near_miss: &[("node-a/kern.log", INIT_FAILED)],
        instead: Instead::Rule("gpu-init-failure"),
    },
    Scenario {
        rule: "gpu-init-failure-platform",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/kern.log", PROBE_FAILED_NO_IRQ)],
        near_miss: &[("node-a/kern.log", INIT_FAILED)],
        instead: Instead::Rule("gpu-init-failure"),
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
        rule: "kernel-report-in-driver",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/kern.log", HUNG_TASK_UVM)],
        // a task stuck in the page cache names no driver: the event's own layer, unknown
        near_miss: &[("node-a/kern.log", HUNG_TASK_MM)],
        instead: Instead::NoRule("unknown"),
    },
    Scenario {
        rule: "kernel-report-in-storage",
        layer: "network_storage",
        responsibility: "operator",
        positive: &[("node-a/kern.log", HUNG_TASK_NFS)],
        near_miss: &[("node-a/kern.log", HUNG_TASK_UVM)],
        instead: Instead::Rule("kernel-report-in-driver"),
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
        rule: "container-device-cgroup",
        layer: "platform",
        responsibility: "operator",
        positive: &[
            ("node-a/session.txt", NVML_INIT_UNKNOWN),
            ("node-a/strace.txt", DEVICE_EPERM),
        ],
        // NVML fails without any refused device node: a CUDA-side failure of the job
        near_miss: &[("node-a/session.txt", NVML_INIT_UNKNOWN)],
        instead: Instead::Rule("cuda-error"),
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
        rule: "xid-caused-by-previous",
        layer: "interconnect",
        responsibility: "operator",
        positive: &[("node-a/kern.log", XID45_CAUSED_BY_149)],
        // a follow-on that names another follow-on names no cause
        near_miss: &[("node-a/kern.log", XID45_CAUSED_BY_45)],
        instead: Instead::Unknown,
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
        rule: "k8s-device-plugin-xid-memory",
        layer: "gpu_memory",
        responsibility: "operator",
        positive: &[("node-a/device-plugin.log", DEVICE_PLUGIN_XID48)],
        // an Xid that is no memory fault goes to the plugin's hardware rule
        near_miss: &[("node-a/device-plugin.log", DEVICE_PLUGIN_XID79)],
        instead: Instead::Rule("k8s-device-plugin-xid"),
    },
    Scenario {
        rule: "k8s-device-plugin-xid-nvlink",
        layer: "interconnect",
        responsibility: "operator",
        positive: &[("node-a/device-plugin.log", DEVICE_PLUGIN_XID74)],
        near_miss: &[("node-a/device-plugin.log", DEVICE_PLUGIN_XID48)],
        instead: Instead::Rule("k8s-device-plugin-xid-memory"),
    },
    Scenario {
        rule: "k8s-device-plugin-xid",
        layer: "hardware",
        responsibility: "operator",
        positive: &[("node-a/device-plugin.log", DEVICE_PLUGIN_XID79)],
        // with the kernel's own Xid line, the kernel line names the fault
        near_miss: &[
            ("node-a/device-plugin.log", DEVICE_PLUGIN_XID79),
            ("node-a/kern.log", XID79),
        ],
        instead: Instead::Rule("gpu-fell-off-bus"),
    },
    Scenario {
        rule: "k8s-gpu-operator-validation",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/validator.log", VALIDATOR_DRIVER_FAILED)],
        near_miss: &[("node-a/validator.log", VALIDATOR_OK)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "k8s-gpu-unallocatable",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/kubelet.log", KUBELET_ALLOC_FAILED)],
        // the device plugin's word that names the Xid behind the missing GPU comes first
        near_miss: &[
            ("node-a/kubelet.log", KUBELET_ALLOC_FAILED),
            ("node-a/device-plugin.log", DEVICE_PLUGIN_XID79),
        ],
        instead: Instead::Rule("k8s-device-plugin-xid"),
    },
    Scenario {
        rule: "nvml-driver-stack",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[(
            "node-a/nvidia-smi.txt",
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running.\n",
        )],
        // a field the GPU does not support is not a failure
        near_miss: &[(
            "node-a/monitor.log",
            "pynvml.NVMLError_NotSupported: Not Supported\n",
        )],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "nvml-hardware",
        layer: "hardware",
        responsibility: "vendor",
        positive: &[(
            "node-a/monitor.log",
            "pynvml.NVMLError_GpuIsLost: GPU is lost\n",
        )],
        // `Unknown Error` names no layer on its own: driver (GSP) or hardware, the kernel log decides
        near_miss: &[(
            "node-a/nvidia-smi.txt",
            "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error\n",
        )],
        instead: Instead::Unknown,
    },
    Scenario {
        rule: "nvml-platform",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/nvidia-smi.txt", "$ nvidia-smi\nNo devices were found\n")],
        near_miss: &[(
            "node-a/probe.log",
            "INFO No devices found for vendor 15b3\n",
        )],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "k8s-node-not-ready",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/kubelet.log", NODE_NOT_READY)],
        near_miss: &[("node-a/kubelet.log", NODE_READY)],
        instead: Instead::Nothing,
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
        rule: "unexplained-kill-platform",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/describe-pod.txt", POD_EXIT_137)],
        // Kubernetes saying OOMKilled is the memory limit's kill
        near_miss: &[("node-a/describe-pod.txt", POD_OOMKILLED)],
        instead: Instead::Rule("host-oom"),
    },
    Scenario {
        rule: "unexplained-kill-memory",
        layer: "application",
        responsibility: "user",
        positive: &[("node-a/train.log", SHELL_KILLED)],
        // a SIGTERM before the kill: the kill ends a stop that was asked for
        near_miss: &[("node-a/train.log", SIGTERM_THEN_KILLED)],
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
    Scenario {
        rule: "nccl-error-by-result",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/train.log", NCCL_SHM_FULL)],
        // a remote error reads as the network: the transport rule's
        near_miss: &[("node-a/train.log", REMOTE_ERROR)],
        instead: Instead::Rule("network-transport"),
    },
    Scenario {
        rule: "crash-by-library",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/kern.log", SEGFAULT_LIBCUDA)],
        // the same crash right after the host ran out of memory: the OOM is the cause
        near_miss: &[("node-a/kern.log", HOST_OOM_THEN_SEGFAULT_LIBCUDA)],
        instead: Instead::Rule("host-oom"),
    },
    Scenario {
        rule: "power-switcher-gpu-lost",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/kern.log", BBSWITCH_ON), ("node-a/kern.log", XID79)],
        // without a power-switching tool on the host the same loss is the GPU's
        near_miss: &[("node-a/kern.log", XID79)],
        instead: Instead::Rule("gpu-fell-off-bus"),
    },
    Scenario {
        rule: "driver-needs-another",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/kern.log", NEEDS_OPEN_THEN_INIT_FAILURE)],
        // the failed init alone says nothing about the driver
        near_miss: &[("node-a/kern.log", INIT_FAILURE_ALONE)],
        instead: Instead::Rule("gpu-init-failure"),
    },
    Scenario {
        rule: "fabric-manager-version",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/journal.txt", FM_VERSION_MISMATCH)],
        // NVML's own mismatch is the kernel module and the libraries, not FM
        near_miss: &[("node-a/nvml.txt", NVML_MISMATCH)],
        instead: Instead::Rule("driver-mismatch"),
    },
    Scenario {
        rule: "fabric-manager-platform",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/journal.txt", FM_PRECHECK_IB_UMAD)],
        // no NVSwitch to manage is normal
        near_miss: &[("node-a/journal.txt", FM_NOTHING_TO_DO)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "fabric-manager-interconnect",
        layer: "interconnect",
        responsibility: "vendor",
        positive: &[("node-a/fabricmanager.log", FM_LOG_TOPOLOGY)],
        near_miss: &[("node-a/fabricmanager.log", FM_LOG_HEALTHY)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "fabric-manager",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/fabricmanager.log", FM_LOG_ERROR)],
        // a warning of the log is no failure
        near_miss: &[("node-a/fabricmanager.log", FM_LOG_WARNING)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "driver-build-failure",
        layer: "driver_stack",
        responsibility: "operator",
        positive: &[("node-a/dkms.log", DKMS_BUILD_FAILED)],
        near_miss: &[("node-a/dkms.log", DKMS_OK)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "cloud-metadata-unreachable",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/journal.txt", IMDS_UNREACHABLE)],
        // the script's echoed call is no failure
        near_miss: &[("node-a/journal.txt", IMDS_CALL)],
        instead: Instead::Nothing,
    },
    Scenario {
        rule: "container-runtime-gpu",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/journal.txt", CONTAINER_CLI_MOUNT)],
        // a driver that is not loaded is the driver stack's, whatever the runtime prints
        near_miss: &[("node-a/journal.txt", CONTAINER_CLI_NO_DRIVER)],
        instead: Instead::NoRule("driver_stack"),
    },
    Scenario {
        rule: "slurm-gres-config",
        layer: "platform",
        responsibility: "operator",
        positive: &[("node-a/scontrol.txt", SLURM_GRES_LOW)],
        near_miss: &[("node-a/scontrol.txt", SLURM_GRES_OK)],
        instead: Instead::Nothing,
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
        // a rule that reads its layer from the catalog (`layer_from`) names the scenario's
        let layer = if r.layer_from.is_some() {
            s.layer
        } else {
            r.layer.as_str()
        };
        // one that reads it from its event (`layer_from = "event"`) also takes who acts from it
        let acts = if r.layer_from.as_deref() == Some("event") {
            s.responsibility
        } else {
            r.responsibility.as_str()
        };
        assert_eq!((layer, acts), (s.layer, s.responsibility), "{}", s.rule);
    }
}

/// Cause before consequence: a rule earlier in the file (a GPU that failed to initialize) does not
/// decide when another candidate's event explains its event (the driver versions differ on that
/// host before it), and the summary says why.
#[test]
fn an_explaining_event_outranks_an_earlier_rule() {
    let a = analyze(&[("node-a/kern.log", API_MISMATCH_THEN_INIT_FAILURE)]);
    let top = a.top().expect("an incident");
    assert_eq!(
        top.rule.as_deref(),
        Some("driver-mismatch"),
        "{:?}",
        causes(&a)
    );
    assert_eq!(top.layer.as_str(), "driver_stack");
    assert!(
        top.summary.contains("its parts have different versions"),
        "{}",
        top.summary
    );
    // without the mismatch the same failure keeps the rule order's verdict
    let b = analyze(&[("node-a/kern.log", INIT_FAILURE_ALONE)]);
    assert_eq!(
        b.top().and_then(|t| t.rule.as_deref()),
        Some("gpu-init-failure")
    );
}
