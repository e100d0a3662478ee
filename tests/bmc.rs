//! BMC event logs (IPMI SEL, iDRAC Lifecycle Controller, Redfish), package history and cluster
//! agents: the corpus cases and the shapes that must (and must not) give events.

mod common;
use common::*;
use serde_json::Value;

fn events(r: &Value) -> Vec<Value> {
    r["events"].as_array().cloned().unwrap_or_default()
}

fn of_kind(r: &Value, kind: &str) -> Vec<Value> {
    events(r)
        .into_iter()
        .filter(|e| e["kind"] == kind)
        .collect()
}

fn incidents(r: &Value) -> Vec<Value> {
    r["incidents"].as_array().cloned().unwrap_or_default()
}

/// The incident whose cause a given rule named.
fn by_rule(r: &Value, rule: &str) -> Value {
    incidents(r)
        .into_iter()
        .find(|i| i["root_cause"]["rule"] == rule)
        .unwrap_or_else(|| panic!("no incident named by {rule}: {}", r["incidents"]))
}

/// Writes `text` to `name` in a fresh folder and analyzes the folder.
fn analyze_text(name: &str, text: &str) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("gpu-node-99");
    std::fs::create_dir(&host).unwrap();
    std::fs::write(host.join(name), text).unwrap();
    analyze_json(&[dir.path().to_str().unwrap()])
}

#[test]
fn sel_psu_failure_then_gpu_lost_is_hardware_with_a_psu_incident() {
    let r = analyze_json(&["corpus/bmc-sel-psu-then-gpu-lost/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    assert!(
        r["verdict"]["summary"]
            .as_str()
            .unwrap()
            .contains("0000:ab:00.0"),
        "{}",
        r["verdict"]
    );
    let psu = of_kind(&r, "psu_fault");
    assert_eq!(psu.len(), 2, "PS3 failure + redundancy lost: {psu:?}");
    for e in &psu {
        let m = e["message"].as_str().unwrap();
        assert!(m.ends_with("| Asserted"), "only assertions count: {m}");
        assert_eq!(e["host"], "gpu-node-14", "host from the folder: {e}");
        assert_eq!(e["layer"], "hardware");
    }
    let sev: Vec<&str> = psu
        .iter()
        .map(|e| e["severity"].as_str().unwrap())
        .collect();
    assert_eq!(sev, ["error", "warning"]);
    assert_eq!(psu[0]["details"]["event"], "Failure detected");
    assert_eq!(psu[0]["details"]["sensor"], "Power Supply PS3 Status");
    let inc = by_rule(&r, "bmc-psu-fault");
    assert_eq!(inc["root_cause"]["layer"], "hardware");
    assert_eq!(inc["root_cause"]["responsibility"], "vendor");
    let summary = inc["root_cause"]["summary"].as_str().unwrap();
    assert!(
        summary.starts_with("Power supply fault reported by the BMC of gpu-node-14"),
        "{summary}"
    );
    assert!(!inc["root_cause"]["evidence"].as_array().unwrap().is_empty());
    let gpu = by_rule(&r, "gpu-fell-off-bus");
    assert!(gpu["gpus"].to_string().contains("0000:ab:00.0"));
    assert_eq!(of_kind(&r, "fell_off_bus").len(), 2);
}

#[test]
fn idrac_fan_failure_is_thermal_power_and_a_cold_inlet_is_no_fault() {
    let r = analyze_json(&["corpus/idrac-thermal-fan/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "thermal_power");
    let fans = of_kind(&r, "fan_fault");
    assert_eq!(fans.len(), 2, "{fans:?}");
    assert!(fans.iter().all(|e| e["details"]["message_id"] == "FAN0001"));
    let temps = of_kind(&r, "bmc_thermal");
    let ids: Vec<(&str, &str)> = temps
        .iter()
        .map(|e| {
            (
                e["details"]["message_id"].as_str().unwrap(),
                e["severity"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        ids,
        [
            ("TMP0103", "error"),
            ("TMP0102", "warning"),
            ("TMP0118", "info")
        ]
    );
    let inc = by_rule(&r, "bmc-fan-failure");
    assert_eq!(inc["root_cause"]["layer"], "thermal_power");
    assert!(inc["root_cause"]["summary"]
        .as_str()
        .unwrap()
        .starts_with("Fan failure reported by the BMC of gpu-node-21"));
    assert_eq!(incidents(&r).len(), 1, "{}", r["incidents"]);
}

#[test]
fn apt_driver_upgrade_then_api_mismatch_is_driver_stack() {
    let r = analyze_json(&["corpus/apt-upgrade-mismatch/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "driver_stack");
    assert_eq!(of_kind(&r, "driver_mismatch").len(), 3);
    let pkgs = of_kind(&r, "package_change");
    assert_eq!(pkgs.len(), 2, "nvtop and openssl give nothing: {pkgs:?}");
    assert!(pkgs.iter().all(|e| e["severity"] == "info"));
    let up = pkgs
        .iter()
        .find(|e| e["details"]["action"] == "Upgrade")
        .expect("the Upgrade line");
    assert!(up["details"]["package"]
        .as_str()
        .unwrap()
        .starts_with("libnvidia-"));
    assert_eq!(up["details"]["from_version"], "535.161.08-0ubuntu2.22.04.1");
    assert_eq!(up["details"]["to_version"], "535.183.01-0ubuntu0.22.04.1");
    let inc = by_rule(&r, "driver-mismatch");
    assert_eq!(inc["root_cause"]["layer"], "driver_stack");
}

#[test]
fn host_dimm_ue_without_gpu_fault_is_hardware_and_spares_the_gpus() {
    let r = analyze_json(&["corpus/bmc-dimm-ue-no-gpu/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    for kind in ["xid", "fell_off_bus", "ecc_dbe", "pcie_aer"] {
        assert!(of_kind(&r, kind).is_empty(), "no {kind} expected");
    }
    let mem = of_kind(&r, "memory_error");
    let sel: Vec<&Value> = mem
        .iter()
        .filter(|e| {
            e["source"]["path"]
                .as_str()
                .unwrap()
                .ends_with("sel-list.txt")
        })
        .collect();
    assert_eq!(sel.len(), 5, "{sel:?}");
    let ue: Vec<&&Value> = sel.iter().filter(|e| e["severity"] == "error").collect();
    assert_eq!(ue.len(), 1);
    assert_eq!(ue[0]["details"]["event"], "Uncorrectable ECC");
    let kill = of_kind(&r, "process_exit");
    assert_eq!(kill.len(), 1);
    assert_eq!(kill[0]["code"], 135);
    assert_eq!(kill[0]["details"]["pid"], "48213");
    // both the kernel's view and the BMC's view are named by the host rule
    let host_incidents: Vec<Value> = incidents(&r)
        .into_iter()
        .filter(|i| i["root_cause"]["rule"] == "host-machine-check")
        .collect();
    assert_eq!(host_incidents.len(), 2, "{}", r["incidents"]);
    for inc in &host_incidents {
        assert_eq!(inc["root_cause"]["layer"], "hardware");
        assert!(
            inc["actions"]
                .to_string()
                .contains("GPUs are not implicated"),
            "{}",
            inc["actions"]
        );
    }
    assert!(r["verdict"]["summary"]
        .as_str()
        .unwrap()
        .contains("followed by process_exit"));
}

#[test]
fn deasserted_and_benign_sel_lines_raise_nothing() {
    let text = "\
   1 | 03/14/2026 | 03:40:11 | Power Supply PS2 Status | Failure detected () | Deasserted
   2 | 03/14/2026 | 03:40:11 | Power Supply #0x63 | Power Supply AC lost | Deasserted
   3 | 03/14/2026 | 03:40:12 | Power Supply PS Redundancy | Redundancy Lost | Deasserted
   4 | 03/14/2026 | 03:40:12 | Power Unit #0xca | Redundancy Lost | Deasserted
   5 | 03/14/2026 | 03:40:12 | Power Supply PS Redundancy | Fully Redundant | Asserted
   6 | 03/14/2026 | 03:41:00 | Fan FAN6A | Lower Critical going low  | Deasserted | Reading 7800 < Threshold 600 RPM
   7 | 03/14/2026 | 03:41:00 | Fan #0x75 | Redundancy Lost | Deasserted
   8 | 03/14/2026 | 03:42:00 | Temperature Exhaust Temp | Upper Critical going high | Deasserted | Reading 65 < Threshold 70 degrees C
   9 | 03/14/2026 | 03:42:00 | Temperature Inlet Temp | Upper Non-critical going high | Deasserted | Reading 30 < Threshold 37 degrees C
   a | 03/14/2026 | 03:43:00 | Critical Interrupt #0x03 | Bus Fatal Error | Deasserted
   b | 03/14/2026 | 03:43:00 | Critical Interrupt #0x04 | PCI SERR | Deasserted
   c | 03/14/2026 | 03:43:00 | Critical Interrupt #0x04 | Bus Uncorrectable error | Deasserted
   d | 03/14/2026 | 03:44:00 | Memory #0x02 | Uncorrectable ECC | Deasserted
   e | 03/14/2026 | 03:44:00 | Memory #0x02 | Correctable ECC | Deasserted
   f | 03/14/2026 | 03:45:00 | Processor #0x60 | IERR | Deasserted
  10 | 03/14/2026 | 03:45:00 | Watchdog2 #0x81 | Hard reset | Deasserted
  11 | 03/14/2026 | 03:46:00 | Event Logging Disabled #0x07 | Log area reset/cleared | Asserted
  12 | 03/14/2026 | 03:46:00 | System Event #0x83 | Timestamp Clock Sync | Asserted
  13 | 03/14/2026 | 03:46:01 | Power Supply PS1 Status | Presence detected | Asserted
  14 | 03/14/2026 | 03:46:02 | Processor #0x60 | Correctable machine check error | Asserted
  15 | 03/14/2026 | 03:46:03 | Temperature Inlet Temp | Lower Critical going low  | Asserted | Reading 2 < Threshold 3 degrees C
";
    let r = analyze_text("sel-elist.txt", text);
    assert!(events(&r).is_empty(), "{}", r["events"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "none");
    // the same file with the conditions asserted gives one event per family
    let asserted = text.replace("| Deasserted", "| Asserted");
    let r = analyze_text("sel-elist.txt", &asserted);
    let mut kinds: Vec<String> = events(&r)
        .iter()
        .map(|e| e["kind"].as_str().unwrap().to_string())
        .collect();
    kinds.sort();
    kinds.dedup();
    assert_eq!(
        kinds,
        [
            "bmc_thermal",
            "fan_fault",
            "hung_task",
            "mce",
            "memory_error",
            "pcie_aer",
            "psu_fault"
        ]
    );
    let fatal: Vec<Value> = of_kind(&r, "pcie_aer")
        .into_iter()
        .filter(|e| e["severity"] == "critical")
        .collect();
    assert_eq!(fatal.len(), 1, "Bus Fatal Error is critical");
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
}

#[test]
fn redfish_and_lclog_message_ids_map_to_kinds() {
    let text = r#"{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries/231", "Created": "2026-03-14T02:12:27-05:00", "EntryType": "SEL", "Id": "231", "Message": "The power input for power supply 2 is lost.", "MessageId": "IDRAC.2.9.PSU0003", "Severity": "Critical"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries/232", "Created": "2026-03-14T02:12:27-05:00", "EntryType": "SEL", "Id": "232", "Message": "The power supplies are not redundant.", "MessageId": "IDRAC.2.9.RDU0012", "Severity": "Warning"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries/233", "Created": "2026-03-14T02:12:40-05:00", "EntryType": "SEL", "Id": "233", "Message": "Fan 6A RPM is less than the lower critical threshold.", "MessageId": "IDRAC.2.9.FAN0001", "Severity": "Critical"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries/234", "Created": "2026-03-14T02:13:02-05:00", "EntryType": "SEL", "Id": "234", "Message": "The system inlet temperature is greater than the upper warning threshold.", "MessageId": "IDRAC.2.9.TMP0120", "Severity": "Warning"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries/235", "Created": "2026-03-14T02:13:05-05:00", "EntryType": "SEL", "Id": "235", "Message": "A bus fatal error was detected on a component at bus 171 device 0 function 0.", "MessageId": "IDRAC.2.9.PCI1320", "Severity": "Critical"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries/236", "Created": "2026-03-14T02:13:05-05:00", "EntryType": "SEL", "Id": "236", "Message": "Multi-bit memory errors detected on a memory device at location(s) DIMM_B3.", "MessageId": "IDRAC.2.9.MEM0001", "Severity": "Critical"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries/237", "Created": "2026-03-14T02:13:06-05:00", "EntryType": "SEL", "Id": "237", "Message": "CPU 2 has an internal error (IERR).", "MessageId": "IDRAC.2.9.CPU0000", "Severity": "Critical"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries/238", "Created": "2026-03-14T02:13:07-05:00", "Id": "238", "Message": "The system performance degraded because power capacity has changed.", "MessageId": "IDRAC.2.9.PWR1004", "Severity": "Warning"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Sel/Entries/239", "Created": "2026-03-15T10:14:52-05:00", "EntryType": "SEL", "Id": "239", "Message": "The power supply 2 is operating normally.", "MessageId": "IDRAC.2.9.PSU0017", "Severity": "OK"}
{"@odata.id": "/redfish/v1/Managers/iDRAC.Embedded.1/LogServices/Lclog/Entries/240", "Created": "2026-03-15T10:20:01-05:00", "Id": "240", "Message": "Successfully logged in using root, from 10.20.0.15 and REDFISH.", "MessageId": "IDRAC.2.9.USR0030", "Severity": "OK"}
"#;
    let r = analyze_text("sel-entries.jsonl", text);
    let got: Vec<(String, String, String)> = events(&r)
        .iter()
        .map(|e| {
            (
                e["details"]["message_id"].as_str().unwrap().to_string(),
                e["kind"].as_str().unwrap().to_string(),
                e["severity"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let want = [
        ("PSU0003", "psu_fault", "error"),
        ("RDU0012", "psu_fault", "warning"),
        ("FAN0001", "fan_fault", "error"),
        ("TMP0120", "bmc_thermal", "warning"),
        ("PCI1320", "pcie_aer", "critical"),
        ("MEM0001", "memory_error", "error"),
        ("CPU0000", "mce", "error"),
        ("PWR1004", "gpu_power", "warning"),
    ];
    let want: Vec<(String, String, String)> = want
        .iter()
        .map(|(a, b, c)| (a.to_string(), b.to_string(), c.to_string()))
        .collect();
    assert_eq!(got, want, "PSU0017 and USR0030 give nothing");
    // the same ids in `racadm lclog view` records
    let lclog = "SeqNumber       = 4185\nMessage ID      = PSU0001\nCategory        = System Health\nAgentID         = SEL\nSeverity        = Critical\nTimestamp       = 2026-03-14 02:12:29\nMessage         = Power supply 2 failed.\nMessage Arg   1 = 2\nFQDD            = PSU.Slot.2\n--------------------------------------------------------------------------------\nSeqNumber       = 4186\nMessage ID      = PSU0017\nCategory        = System Health\nAgentID         = SEL\nSeverity        = Information\nTimestamp       = 2026-03-15 10:14:52\nMessage         = The power supply 2 is operating normally.\nMessage Arg   1 = 2\nFQDD            = PSU.Slot.2\n";
    let r = analyze_text("lclog.txt", lclog);
    let psu = of_kind(&r, "psu_fault");
    assert_eq!(events(&r).len(), 1);
    assert_eq!(psu[0]["details"]["message_id"], "PSU0001");
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
}

#[test]
fn package_logs_give_versions_for_nvidia_packages_only() {
    let dpkg = "\
2025-06-11 06:25:31 install libnvidia-cfg1-535:amd64 <none> 535.183.01-0ubuntu0.22.04.1
2025-06-11 06:25:31 status half-installed libnvidia-cfg1-535:amd64 535.183.01-0ubuntu0.22.04.1
2025-06-11 06:25:40 upgrade nvidia-driver-535:amd64 535.161.08-0ubuntu2.22.04.1 535.183.01-0ubuntu0.22.04.1
2025-06-11 06:25:40 upgrade openssl:amd64 3.0.2-0ubuntu1.15 3.0.2-0ubuntu1.19
2025-06-11 06:26:02 configure nvidia-driver-535:amd64 535.183.01-0ubuntu0.22.04.1 <none>
2025-06-11 06:26:02 status installed nvidia-driver-535:amd64 535.183.01-0ubuntu0.22.04.1
";
    let r = analyze_text("dpkg.log", dpkg);
    let pkgs = of_kind(&r, "package_change");
    assert_eq!(pkgs.len(), 2, "{pkgs:?}");
    assert_eq!(pkgs[1]["details"]["package"], "nvidia-driver-535");
    assert_eq!(
        pkgs[1]["details"]["from_version"],
        "535.161.08-0ubuntu2.22.04.1"
    );
    assert_eq!(
        pkgs[1]["details"]["to_version"],
        "535.183.01-0ubuntu0.22.04.1"
    );
    assert_eq!(pkgs[0]["details"]["from_version"], "<none>");
    assert!(
        pkgs.iter().all(|e| !e["time"].is_null()),
        "dpkg.log is timed"
    );
    assert_eq!(r["verdict"]["root_cause_layer"], "none", "info only");

    let rpm = "\
2025-04-02T09:14:51+0000 SUBDEBUG Upgrade: nvidia-driver-3:550.54.15-1.el8.x86_64
2025-04-02T09:14:52+0000 SUBDEBUG Upgrade: kernel-core-4.18.0-513.24.1.el8_9.x86_64
2025-04-02T09:14:58+0000 SUBDEBUG Upgraded: nvidia-driver-3:545.23.08-1.el8.x86_64
";
    let r = analyze_text("dnf.rpm.log", rpm);
    let pkgs = of_kind(&r, "package_change");
    assert_eq!(pkgs.len(), 2, "{pkgs:?}");
    assert_eq!(pkgs[0]["details"]["package"], "nvidia-driver");
    assert_eq!(pkgs[0]["details"]["to_version"], "550.54.15-1.el8");
    assert_eq!(pkgs[1]["details"]["from_version"], "545.23.08-1.el8");

    let installer = "\
nvidia-installer log file '/var/log/nvidia-installer.log'
creation time: Wed Apr  2 09:20:11 2025
installer version: 550.54.15

-> Installing NVIDIA driver version 550.54.15.
-> There appears to already be a driver installed on your system (version: 535.183.01).  As part of installing this driver (version: 550.54.15), the existing driver will be uninstalled.  Are you sure you want to continue? (Answer: Continue installation)
-> Installing 'NVIDIA Accelerated Graphics Driver for Linux-x86_64' (550.54.15):
";
    let r = analyze_text("nvidia-installer.log", installer);
    let pkgs = of_kind(&r, "package_change");
    assert_eq!(pkgs.len(), 2, "{pkgs:?}");
    assert_eq!(pkgs[0]["details"]["driver_version"], "550.54.15");
    assert_eq!(pkgs[1]["details"]["from_version"], "535.183.01");
    assert_eq!(pkgs[1]["details"]["to_version"], "550.54.15");
}

#[test]
fn device_plugin_unhealthy_gpu_follows_the_kernel_xid() {
    let dir = tempfile::tempdir().unwrap();
    let host = dir.path().join("gpu-node-03");
    std::fs::create_dir(&host).unwrap();
    std::fs::write(
        host.join("kern.log"),
        "Mar 14 02:13:07 gpu-node-03 kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n",
    )
    .unwrap();
    std::fs::write(
        host.join("nvidia-device-plugin.log"),
        "I0314 02:13:08.214551       1 health.go:159] XidCriticalError: Xid=79 on Device=GPU-1d245342-6f2f-9b4e-c713-1ef9c187d290; marking device as unhealthy.\n\
         I0314 02:13:08.214602       1 server.go:281] 'nvidia.com/gpu' device marked unhealthy: GPU-1d245342-6f2f-9b4e-c713-1ef9c187d290\n",
    )
    .unwrap();
    let r = analyze_json(&[dir.path().to_str().unwrap()]);
    let nvml = of_kind(&r, "nvml_error");
    assert_eq!(nvml.len(), 2, "{nvml:?}");
    assert_eq!(nvml[0]["code"], 79);
    assert_eq!(nvml[0]["gpu"], "GPU-1d245342-6f2f-9b4e-c713-1ef9c187d290");
    assert_eq!(of_kind(&r, "xid").len(), 1, "the Xid is not counted twice");
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    let inc = by_rule(&r, "gpu-fell-off-bus");
    let ev = inc["root_cause"]["evidence"].to_string();
    assert!(
        nvml.iter()
            .all(|e| !ev.contains(&format!("\"{}\"", e["id"].as_str().unwrap()))),
        "a consequence is never the evidence of the cause: {ev}"
    );
}
