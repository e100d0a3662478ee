//! Log lines for the rule scenarios of `tests/rules_scenarios.rs`: real-shaped kernel, SEL,
//! nvidia-smi, job and scheduler lines (year 2026, the hosts `node-a`, `node-b`, `node-c`).
#![allow(dead_code)]

pub const XID79: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
Mar 14 02:13:07 node-a kernel: [1795955.589913] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.
";

/// NVML cannot start inside a container, and strace shows why: EPERM on the device nodes.
pub const NVML_INIT_UNKNOWN: &str = "Failed to initialize NVML: Unknown Error
";
pub const DEVICE_EPERM: &str =
    "open(\"/dev/nvidiactl\", O_RDWR)          = -1 EPERM (Operation not permitted)
";

pub const NVML_UNKNOWN: &str =
    "Unable to determine the device handle for GPU0000:3B:00.0: Unknown Error
";

pub const THREE_CODES_ONE_GPU: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:11:30 node-a kernel: [1795889.200000] NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.
Mar 14 02:12:45 node-a kernel: [1795964.300000] NVRM: Xid (PCI:0000:3b:00): 74, pid=4242, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
";

pub const THREE_CODES_THREE_GPUS: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:11:30 node-a kernel: [1795889.200000] NVRM: Xid (PCI:0000:5d:00): 48, pid=4243, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.
Mar 14 02:12:45 node-a kernel: [1795964.300000] NVRM: Xid (PCI:0000:9a:00): 74, pid=4244, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
";

pub const XID13_NODE_A: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
";

pub const XID48_NODE_B: &str = "Mar 14 02:11:30 node-b kernel: [1795889.200000] NVRM: Xid (PCI:0000:3b:00): 48, pid=5242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.
";

pub const XID74_NODE_C: &str = "Mar 14 02:12:45 node-c kernel: [1795964.300000] NVRM: Xid (PCI:0000:3b:00): 74, pid=6242, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
";

pub const AER_FATAL: &str = "Mar 14 02:13:01 node-a kernel: [1795950.100000] pcieport 0000:5c:00.0: AER: Uncorrected (Fatal) error received: 0000:5d:00.0
Mar 14 02:13:01 node-a kernel: [1795950.100010] pcieport 0000:5c:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)
Mar 14 02:13:01 node-a kernel: [1795950.100020] pcieport 0000:5c:00.0:   device [8086:347a] error status/mask=00000020/00000000
Mar 14 02:13:01 node-a kernel: [1795950.100030] pcieport 0000:5c:00.0:    [ 5] SDES                   (First)
";

pub const AER_CORRECTED: &str = "Mar 14 02:13:01 node-a kernel: [1795950.100000] pcieport 0000:5c:00.0: AER: Corrected error received: 0000:5c:00.0
Mar 14 02:13:01 node-a kernel: [1795950.100010] pcieport 0000:5c:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)
Mar 14 02:13:01 node-a kernel: [1795950.100020] pcieport 0000:5c:00.0:   device [8086:347a] error status/mask=00000001/00002000
Mar 14 02:13:01 node-a kernel: [1795950.100030] pcieport 0000:5c:00.0:    [ 0] RxErr
";

pub const XID64: &str = "Mar 14 07:52:18 node-a kernel: [84061.351789] NVRM: Xid (PCI:0000:4e:00): 64, pid='<unknown>', name=<unknown>, Row Remapper Error: (0x0000001d3a7c4e20) - All reserved rows for bank are remapped
";

pub const XID63: &str = "Mar 14 07:40:05 node-a kernel: [40128.402144] NVRM: Xid (PCI:0000:4e:00): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x0000001c20e45ae0) marked for remapping, reset gpu to activate.
";

pub const SMI_REMAP_FAILED: &str = "==============NVSMI LOG==============

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

pub const SMI_REMAP_PENDING: &str = "==============NVSMI LOG==============

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

pub const SMI_RETIRED_SBE: &str = "==============NVSMI LOG==============

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

pub const XID48: &str = "Mar 14 02:11:30 node-a kernel: [1795889.200000] NVRM: Xid (PCI:0000:3b:00): 48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 1, subpartition 0.
";

pub const XID92: &str = "Mar 14 02:11:30 node-a kernel: [1795889.200000] NVRM: Xid (PCI:0000:3b:00): 92, pid='<unknown>', name=<unknown>, High single-bit ECC error rate
";

pub const INIT_FAILED: &str = "Mar 14 02:00:03 node-a kernel: [  218.250408] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x24:0x72:1568)
Mar 14 02:00:03 node-a kernel: [  218.250612] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 5
";

/// A GSP boot that failed because WPR2 was left up: the init failure carries reason wpr2_up.
pub const INIT_FAILED_WPR2: &str = "Mar 14 02:00:03 node-a kernel: [  115.083711] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP
Mar 14 02:00:03 node-a kernel: [  115.083720] NVRM: GPU6 _kgspBootGspRm: (the GPU is likely in a bad state and may need to be reset)
Mar 14 02:00:03 node-a kernel: [  115.083750] NVRM: GPU6 RmInitAdapter: Cannot initialize GSP firmware RM
Mar 14 02:00:03 node-a kernel: [  115.084348] NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)
Mar 14 02:00:03 node-a kernel: [  115.086406] NVRM: GPU 0000:a1:00.0: rm_init_adapter failed, device minor number 7
";

/// The driver disabled GSP offload for a GPU (its chip id was not one that runs GSP-RM), then
/// the GPU failed to attach: the init failure carries reason gsp_disabled.
pub const INIT_FAILED_GSP_DISABLED: &str = "Mar 14 02:00:03 node-a kernel: [   79.211893] NVRM: gpumgrCheckRmFirmwarePolicy: Disabling GSP offload -- GPU not supported
Mar 14 02:00:03 node-a kernel: [   79.211954] NVRM: osInitNvMapping: *** Cannot attach gpu
Mar 14 02:00:03 node-a kernel: [   79.212013] NVRM: GPU 0000:05:00.0: RmInitAdapter failed! (0x22:0x56:763)
Mar 14 02:00:03 node-a kernel: [   79.213907] NVRM: GPU 0000:05:00.0: rm_init_adapter failed, device minor number 4
";

/// The GSP firmware file is missing: the init failure carries reason firmware_missing.
pub const INIT_FAILED_NO_FIRMWARE: &str = "Mar 14 02:00:03 node-a kernel: [   12.500100] NVRM: GPU0 RmFetchGspRmImages: No firmware image found
Mar 14 02:00:03 node-a kernel: [   12.500200] NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x61:0x56:1829)
Mar 14 02:00:03 node-a kernel: [   12.500300] NVRM: GPU 0000:0a:00.0: rm_init_adapter failed, device minor number 0
";

/// The probe found no IRQ for the GPU: the probe failure carries reason platform.
pub const PROBE_FAILED_NO_IRQ: &str =
    "Mar 14 02:00:03 node-a kernel: [    6.900100] NVRM: Can't find an IRQ for your NVIDIA card!
Mar 14 02:00:03 node-a kernel: [    6.900110] NVRM: Please check your BIOS settings.
Mar 14 02:00:03 node-a kernel: [    6.900120] NVRM: [Plug & Play OS] should be set to NO
Mar 14 02:00:03 node-a kernel: [    6.900130] NVRM: [Assign IRQ to VGA] should be set to YES
Mar 14 02:00:03 node-a kernel: [    6.900200] nvidia: probe of 0000:0a:00.0 failed with error -1
";

pub const DRIVER_LOADS: &str = "Mar 13 08:31:22 node-a kernel: [    6.710275] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08  Tue Mar  5 22:42:18 UTC 2024
Mar 14 02:00:03 node-a kernel: [    6.812004] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Feb 20 18:12:44 UTC 2024
";

pub const XID74: &str = "Mar 14 02:12:45 node-a kernel: [1795964.300000] NVRM: Xid (PCI:0000:3b:00): 74, pid=4242, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
";

pub const XID74_THEN_GSP: &str = "Mar 14 02:12:45 node-a kernel: [1795964.300000] NVRM: Xid (PCI:0000:3b:00): 74, pid=4242, name=python, NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)
Mar 14 02:13:20 node-a kernel: [1795999.300000] NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).
";

pub const XID119: &str = "Mar 14 02:13:20 node-a kernel: [1795999.300000] NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python, Timeout after 6s of waiting for RPC response from GPU0 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20802a02 0x8).
";

pub const SXID_FATAL: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 63 LTSSM Fault Up
";

pub const SXID_NONFATAL: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 20009, Non-fatal, Link 28 RX Short Error Rate
";

pub const NVML_MISMATCH: &str = "Failed to initialize NVML: Driver/library version mismatch
";

pub const SEL_PSU: &str =
    "  20 | 03/14/2026 | 02:12:27 | Power Supply PS Redundancy | Redundancy Lost | Asserted
  21 | 03/14/2026 | 02:12:29 | Power Supply PS2 Status | Failure detected () | Asserted
";

pub const SEL_PSU_CLEARED: &str =
    "  24 | 03/14/2026 | 03:40:11 | Power Supply PS2 Status | Failure detected () | Deasserted
  25 | 03/14/2026 | 03:40:12 | Power Supply PS Redundancy | Redundancy Lost | Deasserted
  26 | 03/14/2026 | 03:40:12 | Power Supply PS Redundancy | Fully Redundant | Asserted
";

pub const SEL_FAN: &str = "  31 | 02/11/2026 | 03:40:52 | Fan FAN6A | Lower Non-critical going low  | Asserted | Reading 840 < Threshold 1080 RPM
  34 | 02/11/2026 | 03:41:09 | Fan FAN6A | Lower Critical going low  | Asserted | Reading 0 < Threshold 600 RPM
";

pub const SEL_FAN_CLEARED: &str = "  35 | 02/11/2026 | 04:02:51 | Fan FAN6A | Lower Critical going low  | Deasserted | Reading 7800 < Threshold 600 RPM
";

pub const SEL_TEMP: &str = "  50 | 03/14/2026 | 02:13:55 | Temperature Inlet Temp | Upper Non-critical going high | Asserted | Reading 38 > Threshold 37 degrees C
";

pub const SEL_TEMP_CLEARED: &str = "  56 | 03/14/2026 | 02:31:40 | Temperature Inlet Temp | Upper Non-critical going high | Deasserted | Reading 30 < Threshold 37 degrees C
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

pub const SMI_THERMAL: &str = smi_clocks!("Active", "Not Active", "Not Active");
pub const SMI_COOL: &str = smi_clocks!("Not Active", "Not Active", "Not Active");
pub const SMI_BRAKE: &str = smi_clocks!("Not Active", "Active", "Not Active");
pub const SMI_POWER_CAP: &str = smi_clocks!("Not Active", "Not Active", "Active");

pub const CABLE_UNPLUGGED: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] mlx5_core 0000:5c:00.0: port_module:255:(pid 0): Port module event: module 0, Cable unplugged
";

pub const CABLE_PLUGGED: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] mlx5_core 0000:5c:00.0: port_module:255:(pid 0): Port module event: module 0, Cable plugged
";

pub const EDAC_UE: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x0 offset:0x0 grain:32 syndrome:0x0)
";

pub const EDAC_CE: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x0 offset:0x0 grain:32 syndrome:0x0)
";

pub const CUDA_OOM: &str = "[rank5]:[E314 02:13:07.412000000 train.py:212] torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 56.00 MiB. GPU 5 has a total capacity of 79.33 GiB of which 49.81 MiB is free. Process 415557 has 79.27 GiB memory in use.
";

pub const HOST_OOM: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] Out of memory: Killed process 4242 (python) total-vm:1000000kB, anon-rss:900000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:10kB oom_score_adj:0
";

pub const OOM_REAPER: &str = "Mar 14 02:13:08 node-a kernel: [1795956.589904] oom_reaper: reaped process 4242 (python), now anon-rss:0kB, file-rss:0kB, shmem-rss:0kB
";

pub const ILLEGAL_ADDRESS: &str = "[rank3]:[E314 02:13:08.123456789 ProcessGroupNCCL.cpp:1515] [PG 0 Rank 3] Process group watchdog thread terminated with exception: CUDA error: an illegal memory access was encountered
";

pub const CUDA_ECC: &str = "[rank3]:[E314 02:13:08.123456789 ProcessGroupNCCL.cpp:1515] [PG 0 Rank 3] Process group watchdog thread terminated with exception: CUDA error: uncorrectable ECC error encountered
";

pub const XID13_SPREAD: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:10:01 node-a kernel: [1795800.100300] NVRM: Xid (PCI:0000:5d:00): 13, pid=4243, name=python, Graphics SM Warp Exception on (GPC 4, TPC 0, SM 1): Out Of Range Address
Mar 14 02:10:02 node-a kernel: [1795800.900000] NVRM: Xid (PCI:0000:9a:00): 13, pid=4244, name=python, Graphics SM Warp Exception on (GPC 0, TPC 5, SM 0): Out Of Range Address
";

pub const XID13_ONE_UNIT: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:10:01 node-a kernel: [1795800.100100] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics Exception: ESR 0x51a730=0x20d 0x51a734=0x0 0x51a728=0xc81eb60 0x51a72c=0x1174
Mar 14 02:16:30 node-a kernel: [1796190.200000] NVRM: Xid (PCI:0000:3b:00): 13, pid=5151, name=pt_main_thread, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 1): Out Of Range Address
";

pub const XID13_ONE_JOB_RETRIED: &str = "Mar 14 02:10:01 node-a kernel: [1795800.100000] NVRM: Xid (PCI:0000:3b:00): 13, pid=4242, name=python, Graphics SM Warp Exception on (GPC 1, TPC 2, SM 0): Out Of Range Address
Mar 14 02:16:30 node-a kernel: [1796190.200000] NVRM: Xid (PCI:0000:3b:00): 13, pid=5151, name=python, Graphics SM Warp Exception on (GPC 6, TPC 4, SM 1): Out Of Range Address
";

pub const PREEMPTED: &str = "slurmstepd: error: *** STEP 1234.0 ON node-a CANCELLED AT 2026-03-14T02:13:07 DUE TO PREEMPTION ***
";

pub const TIME_LIMIT: &str = "slurmstepd: error: *** JOB 991 ON node-a CANCELLED AT 2026-03-14T02:13:07 DUE TO TIME LIMIT ***
";

pub const TASK_EXITED: &str = "srun: error: node-a: task 3: Exited with exit code 1
";

pub const REMOTE_ERROR: &str = "[rank0]:[E314 02:23:07.408271257 ProcessGroupNCCL.cpp:1515] [PG 0 Rank 0] Process group watchdog thread terminated with exception: NCCL error: remote process exited or there was a network error, NCCL version 2.19.3
";

pub const SOCKET_WARN: &str = "node-a:4242:4300 [0] NCCL WARN socketProgressOpt: Call to recv from 10.0.0.2<33759> failed : Connection reset by peer
";

/// A fan stops eight minutes before the GPU of [`XID79`] falls off the bus.
pub const SEL_FAN_BEFORE_XID79: &str = "  34 | 03/14/2026 | 02:05:12 | Fan FAN6A | Lower Critical going low  | Asserted | Reading 0 < Threshold 600 RPM
";

/// The same fan only slower than its warning threshold: no cooling failure.
pub const SEL_FAN_SLOW_BEFORE_XID79: &str = "  31 | 03/14/2026 | 02:05:12 | Fan FAN6A | Lower Non-critical going low  | Asserted | Reading 840 < Threshold 1080 RPM
";

pub const DEVICE_PLUGIN_XID79: &str = "I0314 02:10:01.120551       1 server.go:125] Registered device plugin for 'nvidia.com/gpu' with Kubelet
I0314 02:13:08.214551       1 health.go:159] XidCriticalError: Xid=79 on Device=GPU-1d245342-6f2f-9b4e-c713-1ef9c187d290; marking device as unhealthy.
I0314 02:13:08.214602       1 server.go:281] 'nvidia.com/gpu' device marked unhealthy: GPU-1d245342-6f2f-9b4e-c713-1ef9c187d290
";

pub const VALIDATOR_DRIVER_FAILED: &str = "time=\"2026-03-14T02:13:07Z\" level=info msg=\"Attempting to validate a driver container installation\"
time=\"2026-03-14T02:13:07Z\" level=warning msg=\"failed to validate the driver, retrying after 5 seconds\"
time=\"2026-03-14T02:13:12Z\" level=warning msg=\"failed to validate the driver, retrying after 5 seconds\"
";

pub const VALIDATOR_OK: &str = "time=\"2026-03-14T02:13:07Z\" level=info msg=\"Attempting to validate a driver container installation\"
time=\"2026-03-14T02:13:08Z\" level=info msg=\"Driver is validated\"
";

pub const KUBELET_ALLOC_FAILED: &str = "Mar 14 02:20:02 node-a kubelet[2211]: E0314 02:20:02.553120    2211 manager.go:512] \"Failed to allocate device plugin resource for pod\" err=\"requested number of devices unavailable for nvidia.com/gpu. Requested: 8, Available: 7\" pod=\"train/llm-worker-3\"
";

pub const NODE_NOT_READY: &str = "Mar 14 02:15:40 node-a kubelet[2211]: I0314 02:15:40.101822    2211 event.go:307] \"Event occurred\" object=\"node-a\" kind=\"Node\" apiVersion=\"\" type=\"Normal\" reason=\"NodeNotReady\" message=\"Node node-a status is now: NodeNotReady\"
";

pub const NODE_READY: &str = "Mar 14 02:15:40 node-a kubelet[2211]: I0314 02:15:40.101822    2211 event.go:307] \"Event occurred\" object=\"node-a\" kind=\"Node\" apiVersion=\"\" type=\"Normal\" reason=\"NodeReady\" message=\"Node node-a status is now: NodeReady\"
";

pub const DEVICE_PLUGIN_XID48: &str = "I0314 02:13:08.214551       1 health.go:159] XidCriticalError: Xid=48 on Device=GPU-1d245342-6f2f-9b4e-c713-1ef9c187d290; marking device as unhealthy.
";

pub const DEVICE_PLUGIN_XID74: &str = "I0314 02:13:08.214551       1 health.go:159] XidCriticalError: Xid=74 on Device=GPU-1d245342-6f2f-9b4e-c713-1ef9c187d290; marking device as unhealthy.
";

/// Follow-on Xid 45 lines that name the NVLink Xid that caused them (the cause's own lines are
/// not in the excerpt).
pub const XID45_CAUSED_BY_149: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 45, pid=4242, name=python3, Ch 00000001 caused by previous Xid 149
Mar 14 02:13:07 node-a kernel: [1795955.589954] NVRM: Xid (PCI:0000:3c:00): 45, pid=4243, name=python3, Ch 0000000c caused by previous Xid 145
";

/// Follow-on Xid 45 lines that name another Xid 45: no cause is named.
pub const XID45_CAUSED_BY_45: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 45, pid=4242, name=python3, channel 0x00000010 caused by previous Xid 45
";

/// A GPU that fails to initialize on a host whose kernel module and user-space driver differ.
pub const API_MISMATCH_THEN_INIT_FAILURE: &str = "Mar 14 02:13:00 node-a kernel: [   27.950245] NVRM: API mismatch: the client has the version 550.90.07, but
Mar 14 02:13:00 node-a kernel: [   27.950246] NVRM: this kernel module has the version 550.54.15.  Please
Mar 14 02:13:05 node-a kernel: [   32.250408] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x24:0x72:1568)
";

/// The same failure to initialize with no mismatch anywhere.
pub const INIT_FAILURE_ALONE: &str = "Mar 14 02:13:05 node-a kernel: [   32.250408] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x24:0x72:1568)
";

/// A hung task blocked inside nvidia_uvm (5.x task line, frames without addresses).
pub const HUNG_TASK_UVM: &str = "Mar 14 02:13:07 node-a kernel: [70081.927348] INFO: task conda:11003 blocked for more than 120 seconds.
Mar 14 02:13:07 node-a kernel: [70081.927350]       Tainted: P           OE     5.3.0-51-generic #44~18.04.2-Ubuntu
Mar 14 02:13:07 node-a kernel: [70081.927351] \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.
Mar 14 02:13:07 node-a kernel: [70081.927352] conda           D    0 11003   2638 0x80004002
Mar 14 02:13:07 node-a kernel: [70081.927353] Call Trace:
Mar 14 02:13:07 node-a kernel: [70081.927356]  __schedule+0x2a8/0x670
Mar 14 02:13:07 node-a kernel: [70081.927357]  schedule+0x33/0xa0
Mar 14 02:13:07 node-a kernel: [70081.927361]  down+0x41/0x50
Mar 14 02:13:07 node-a kernel: [70081.927374]  uvm_gpu_replayable_faults_isr_lock+0x7d/0x90 [nvidia_uvm]
Mar 14 02:13:07 node-a kernel: [70081.927384]  uvm_gpu_fault_buffer_flush+0x17/0x40 [nvidia_uvm]
Mar 14 02:13:07 node-a kernel: [70081.927419]  mmput+0x57/0x140
";

/// A hung task blocked in NFS (sunrpc frames).
pub const HUNG_TASK_NFS: &str = "Mar 14 02:13:07 node-a kernel: [70081.927348] INFO: task python:4242 blocked for more than 120 seconds.
Mar 14 02:13:07 node-a kernel: [70081.927350]       Not tainted 5.15.0-97-generic #107-Ubuntu
Mar 14 02:13:07 node-a kernel: [70081.927351] \"echo 0 > /proc/sys/kernel/hung_task_timeout_secs\" disables this message.
Mar 14 02:13:07 node-a kernel: [70081.927352] task:python          state:D stack:    0 pid: 4242 ppid:  4200 flags:0x00004000
Mar 14 02:13:07 node-a kernel: [70081.927353] Call Trace:
Mar 14 02:13:07 node-a kernel: [70081.927354]  <TASK>
Mar 14 02:13:07 node-a kernel: [70081.927356]  __schedule+0x2a8/0x670
Mar 14 02:13:07 node-a kernel: [70081.927357]  schedule+0x33/0xa0
Mar 14 02:13:07 node-a kernel: [70081.927358]  rpc_wait_bit_killable+0x25/0xb0 [sunrpc]
Mar 14 02:13:07 node-a kernel: [70081.927359]  __wait_on_bit+0x33/0xa0
Mar 14 02:13:07 node-a kernel: [70081.927360]  nfs_wait_on_request+0x3a/0x50 [nfs]
Mar 14 02:13:07 node-a kernel: [70081.927361]  </TASK>
";

/// A hung task in the page cache only: no frame names a driver or a file system.
pub const HUNG_TASK_MM: &str = "Mar 14 02:13:07 node-a kernel: [70081.927348] INFO: task python:4242 blocked for more than 120 seconds.
Mar 14 02:13:07 node-a kernel: [70081.927352] task:python          state:D stack:    0 pid: 4242 ppid:  4200 flags:0x00004000
Mar 14 02:13:07 node-a kernel: [70081.927353] Call Trace:
Mar 14 02:13:07 node-a kernel: [70081.927356]  __schedule+0x2a8/0x670
Mar 14 02:13:07 node-a kernel: [70081.927357]  io_schedule+0x46/0x70
Mar 14 02:13:07 node-a kernel: [70081.927358]  folio_wait_bit_common+0x13d/0x350
Mar 14 02:13:07 node-a kernel: [70081.927359]  filemap_fault+0x6a4/0x9e0
";

/// A job process crashes inside the CUDA driver library.
pub const SEGFAULT_LIBCUDA: &str = "Mar 14 02:13:07 node-a kernel: [1795955.589904] python[4242]: segfault at 7f797fe00000 ip 00007f7c7ac69996 sp 00007f7c12fd7c30 error 4 in libcuda.so.535.104.05[7f7c7ac00000+d3d3000]
";

/// The same crash right after the host ran out of memory (the OOM explains it).
pub const HOST_OOM_THEN_SEGFAULT_LIBCUDA: &str = "Mar 14 02:13:06 node-a kernel: [1795954.589904] Out of memory: Killed process 4243 (python) total-vm:1000000kB, anon-rss:900000kB, file-rss:0kB, shmem-rss:0kB, UID:1000 pgtables:10kB oom_score_adj:0
Mar 14 02:13:07 node-a kernel: [1795955.589904] python[4242]: segfault at 7f797fe00000 ip 00007f7c7ac69996 sp 00007f7c12fd7c30 error 4 in libcuda.so.535.104.05[7f7c7ac00000+d3d3000]
";

/// NCCL cannot extend its shared-memory segment: the container's /dev/shm is full.
pub const NCCL_SHM_FULL: &str = "[2026-03-14 02:13:07] node-a:4242:4300 [0] misc/shmutils.cc:88 NCCL WARN Error: failed to extend /dev/shm/nccl-WU88OE to 9637892 bytes, error: No space left on device (28)
node-a:4242:4300 [0] NCCL INFO transport/shm.cc:551 -> 2
";

/// bbswitch switches the discrete GPU on a laptop before it falls off the bus.
pub const BBSWITCH_ON: &str =
    "Mar 14 02:12:58 node-a kernel: [1795946.100000] bbswitch: enabling discrete graphics
";

/// The proprietary module on a GPU that needs the open kernel modules, then the failed init.
pub const NEEDS_OPEN_THEN_INIT_FAILURE: &str = "Mar 14 02:13:05 node-a kernel: [   32.250100] NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:2c3a)
Mar 14 02:13:05 node-a kernel: [   32.250101] NVRM: installed in this system requires use of the NVIDIA open kernel modules.
Mar 14 02:13:05 node-a kernel: [   32.250408] NVRM: GPU 0000:3b:00.0: RmInitAdapter failed! (0x22:0x56:897)
";

/// The Fabric Manager of another driver version refuses to start.
pub const FM_VERSION_MISMATCH: &str = "Mar 14 02:13:05 node-a nv-fabricmanager[104230]: fabric manager NVIDIA GPU driver interface version 550.127.05 don't match with driver version 550.120. Please update with matching NVIDIA driver package.
Mar 14 02:13:05 node-a systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE
";

/// The FM start script's precheck on an NVLink5 system without ib_umad.
pub const FM_PRECHECK_IB_UMAD: &str = "Mar 14 02:13:05 node-a nvidia-fabricmanager-start.sh[2211]: Detected NVL5+ system
Mar 14 02:13:05 node-a nvidia-fabricmanager-start.sh[2211]: Kernel module \"ib_umad\" has not been loaded, fabric manager cannot be started
";

/// FM on a machine without NVSwitches: nothing to do (normal).
pub const FM_NOTHING_TO_DO: &str = "Mar 14 02:13:05 node-a nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]
";

/// fabricmanager.log: fewer NVSwitches than the topology needs.
pub const FM_LOG_TOPOLOGY: &str = "[Mar 14 2026 02:13:05] [INFO] [tid 12] Fabric Manager version 550.54.15 is running with the following configuration options
[Mar 14 2026 02:13:06] [ERROR] [tid 12] detected number of NVSwitches don't match with any supported system topology, aborting fabric manager
";

/// fabricmanager.log: a healthy start.
pub const FM_LOG_HEALTHY: &str = "[Mar 14 2026 02:13:05] [INFO] [tid 12] Connected to 1 node.
[Mar 14 2026 02:13:06] [INFO] [tid 12] Successfully configured all the available NVSwitches to route GPU NVLink traffic.
";

/// fabricmanager.log: an error the data does not know.
pub const FM_LOG_ERROR: &str = "[Mar 14 2026 02:13:06] [ERROR] [tid 12] failed to open NVSwitch device node, error: No such file or directory
";

/// fabricmanager.log: a warning (not an error).
pub const FM_LOG_WARNING: &str =
    "[Mar 14 2026 02:13:06] [WARNING] [tid 12] failed to set NVSwitch port attribute, retrying
";

/// DKMS could not build the module.
pub const DKMS_BUILD_FAILED: &str =
    "Error! Bad return status for module build on kernel: 6.8.0-45-generic (x86_64)
Consult /var/lib/dkms/nvidia/550.54.15/build/make.log for more information.
";

/// DKMS built and installed the module.
pub const DKMS_OK: &str = "DKMS: install completed.
";

/// A cloud boot script cannot reach the instance metadata service.
pub const IMDS_UNREACHABLE: &str = "Mar 14 02:13:00 node-a configure-nvidia.sh[2177]: curl: (7) Failed to connect to 169.254.169.254 port 80 after 0 ms: Connection refused
";

/// The same script's command line, echoed (no failure).
pub const IMDS_CALL: &str = "Mar 14 02:13:00 node-a configure-nvidia.sh[2177]: + curl -s http://169.254.169.254/latest/meta-data/instance-type
";

/// nvidia-container-cli cannot mount into the container (the node's runtime configuration).
pub const CONTAINER_CLI_MOUNT: &str = "Mar 14 02:13:05 node-a dockerd[911]: nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/x/merged/run/nvidia-persistenced/socket: no such device or address: unknown.
";

/// nvidia-container-cli finds no driver loaded (the driver stack, not the runtime).
pub const CONTAINER_CLI_NO_DRIVER: &str = "Mar 14 02:13:05 node-a dockerd[911]: nvidia-container-cli: initialization error: nvml error: driver not loaded: unknown.
";

/// Slurm drained a node with fewer GPUs than configured.
pub const SLURM_GRES_LOW: &str = "NodeName=node-a Arch=x86_64 CoresPerSocket=32
   Gres=gpu:8(S:0-1)
   State=IDLE+DRAIN ThreadsPerCore=1
   Reason=gres/gpu count reported lower than configured (7 < 8) [slurm@2026-03-14T02:13:05]
";

/// A healthy node's GRES line.
pub const SLURM_GRES_OK: &str = "NodeName=node-a Arch=x86_64 CoresPerSocket=32
   Gres=gpu:8(S:0-1)
   State=IDLE ThreadsPerCore=1
";

/// A job killed by the shell with no word before it.
pub const SHELL_KILLED: &str = "[2026-03-14 02:10:00,000] [INFO] [engine.py:1] step 100 loss 2.31
/var/spool/slurmd/job991/slurm_script: line 12: 45678 Killed                  python train.py
";

/// The job was asked to stop before the kill (the scheduler's SIGTERM, then SIGKILL after the
/// grace period): the kill ends the stop, it is no memory kill.
pub const SIGTERM_THEN_KILLED: &str = "[rank: 0] Received SIGTERM: 15
/var/spool/slurmd/job991/slurm_script: line 12: 45678 Killed                  python train.py
";

pub const POD_EXIT_137: &str = "Name:         trainer-0
    State:          Terminated
      Reason:       Error
      Exit Code:    137
";

pub const POD_OOMKILLED: &str = "Name:         trainer-0
    State:          Terminated
      Reason:       OOMKilled
      Exit Code:    137
";
