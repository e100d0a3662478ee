//! BMC event logs (IPMI SEL, iDRAC Lifecycle Controller, Redfish) and cluster agents: the corpus
//! cases, the shapes that must (and must not) give events, their times on the BMC's clock, BMC
//! alerts before a GPU loss, and one assertion seen through two BMC routes.

mod common;
use common::*;
use serde_json::Value;

#[test]
fn sel_psu_failure_40s_before_the_gpu_fell_off_is_one_hardware_incident() {
    let r = analyze_json(&["corpus/bmc-sel-psu-then-gpu-lost/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    let psu = of_kind(&r, "psu_fault");
    assert_eq!(psu.len(), 2, "PS3 failure + redundancy lost: {psu:?}");
    for e in &psu {
        let m = e["message"].as_str().unwrap();
        assert!(m.ends_with("| Asserted"), "only assertions count: {m}");
        assert_eq!(e["host"], "gpu-node-14", "host from the folder: {e}");
        assert_eq!(e["layer"], "hardware");
        // the SEL's own date and time, on the BMC clock: no zone, so estimated
        assert_eq!(e["time"], "2026-03-14T02:12:27.000000Z");
        assert_eq!(e["time_quality"], "estimated");
    }
    let sev: Vec<&str> = psu
        .iter()
        .map(|e| e["severity"].as_str().unwrap())
        .collect();
    assert_eq!(sev, ["error", "warning"]);
    assert_eq!(psu[0]["details"]["event"], "Failure detected");
    assert_eq!(psu[0]["details"]["sensor"], "Power Supply PS3 Status");
    // one incident: the GPU loss, caused by the power supply
    assert_eq!(incidents(&r).len(), 1, "{}", r["incidents"]);
    let inc = by_rule(&r, "bmc-power-then-gpu-lost");
    assert_eq!(inc["root_cause"]["layer"], "hardware");
    assert_eq!(inc["root_cause"]["responsibility"], "vendor");
    assert!(inc["gpus"].to_string().contains("0000:ab:00.0"));
    let summary = inc["root_cause"]["summary"].as_str().unwrap();
    assert_eq!(
        summary,
        "GPU 0000:ab:00.0 on gpu-node-14 fell off the bus 40 s after the BMC logged: Power supply fault (Power Supply PS3 Status: Failure detected)"
    );
    assert_eq!(r["verdict"]["summary"], summary);
    // evidence: the GPU line first, the BMC line next
    let ev = inc["root_cause"]["evidence"].as_array().unwrap();
    assert_eq!(ev[1], psu[0]["id"], "{ev:?}");
    let first = events(&r).into_iter().find(|e| e["id"] == ev[0]).unwrap();
    assert_eq!(first["kind"], "fell_off_bus");
    // the PSU events precede, they do not follow
    assert!(inc["consequences"].get("psu_fault").is_none());
    assert_eq!(of_kind(&r, "fell_off_bus").len(), 2);
    assert!(r["notes"]
        .to_string()
        .contains("gpu-node-14: BMC times without a zone are read in the host's zone"));
}

#[test]
fn a_psu_fault_long_before_or_on_another_host_does_not_explain_a_gpu_loss() {
    let xid = "Mar 14 02:13:07 gpu-node-14 kernel: [1813205.442928] NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";
    let r = analyze_files(&[
        ("gpu-node-14/kern.log", xid),
        // 20 minutes before on the same host: outside the rule's 15 minutes
        (
            "gpu-node-14/sel-elist.txt",
            "   9 | 03/14/2026 | 01:53:07 | Power Supply PS3 Status | Failure detected () | Asserted\n",
        ),
        // 40 s before on another host
        (
            "gpu-node-15/sel-elist.txt",
            "   9 | 03/14/2026 | 02:12:27 | Power Supply PS3 Status | Failure detected () | Asserted\n",
        ),
    ]);
    let rules: Vec<String> = incidents(&r)
        .iter()
        .map(|i| i["root_cause"]["rule"].as_str().unwrap_or("").to_string())
        .collect();
    assert!(rules.iter().any(|x| x == "gpu-fell-off-bus"), "{rules:?}");
    assert!(
        !rules.iter().any(|x| x == "bmc-power-then-gpu-lost"),
        "{rules:?}"
    );
}

#[test]
fn a_failed_fan_before_a_gpu_loss_makes_it_thermal_power() {
    let r = analyze_files(&[
        (
            "gpu-node-21/kern.log",
            "Feb 11 03:52:40 gpu-node-21 kernel: [812345.100000] NVRM: GPU 0000:cb:00.0: GPU has fallen off the bus.\n",
        ),
        (
            "gpu-node-21/lclog.txt",
            "SeqNumber       = 18471\nMessage ID      = FAN0001\nCategory        = System Health\nAgentID         = SEL\nSeverity        = Critical\nTimestamp       = 2026-02-11 03:41:09\nMessage         = Fan 6A RPM is less than the lower critical threshold.\nMessage Arg   1 = 6A\nFQDD            = Fan.Embedded.6A\n",
        ),
    ]);
    assert_eq!(r["verdict"]["root_cause_layer"], "thermal_power");
    let inc = by_rule(&r, "bmc-cooling-then-gpu-lost");
    assert_eq!(inc["root_cause"]["responsibility"], "operator");
    assert_eq!(
        inc["root_cause"]["summary"],
        "GPU 0000:cb:00.0 on gpu-node-21 fell off the bus 12 min after the BMC logged: Fan failure (FAN0001: Fan 6A RPM is less than the lower critical threshold)"
    );
    let fan = &of_kind(&r, "fan_fault")[0];
    assert!(inc["root_cause"]["evidence"]
        .to_string()
        .contains(fan["id"].as_str().unwrap()));
    assert!(
        fan["message"]
            .as_str()
            .unwrap()
            .contains("Message         = Fan 6A RPM"),
        "the whole Lifecycle record is the evidence: {}",
        fan["message"]
    );
    assert!(inc["consequences"].get("fan_fault").is_none(), "{}", inc);
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
    // in time order now that the records' Timestamp lines are read
    assert_eq!(
        ids,
        [
            ("TMP0118", "info"),
            ("TMP0102", "warning"),
            ("TMP0103", "error")
        ]
    );
    let times: Vec<&str> = temps.iter().map(|e| e["time"].as_str().unwrap()).collect();
    assert_eq!(
        times,
        [
            "2026-01-19T06:02:18.000000Z",
            "2026-02-11T03:47:50.000000Z",
            "2026-02-11T03:58:26.000000Z"
        ]
    );
    // two rotors of one fan at 03:41:09 and :10 are two records, not one event seen twice
    let fan_times: Vec<&str> = fans.iter().map(|e| e["time"].as_str().unwrap()).collect();
    assert_eq!(
        fan_times,
        ["2026-02-11T03:41:09.000000Z", "2026-02-11T03:41:10.000000Z"]
    );
    assert!(fans[0]["message"].as_str().unwrap().contains("Fan 6A"));
    assert!(fans[1]["message"].as_str().unwrap().contains("Fan 6B"));
    let inc = by_rule(&r, "bmc-fan-failure");
    assert_eq!(inc["root_cause"]["layer"], "thermal_power");
    assert!(inc["root_cause"]["summary"]
        .as_str()
        .unwrap()
        .starts_with("Fan failure reported by the BMC of gpu-node-21"));
    assert_eq!(incidents(&r).len(), 1, "{}", r["incidents"]);
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
    // the kernel's view and the BMC's view, both at 11:07:45, are one incident citing both
    assert_eq!(incidents(&r).len(), 1, "{}", r["incidents"]);
    let inc = by_rule(&r, "host-machine-check");
    assert_eq!(inc["root_cause"]["layer"], "hardware");
    assert!(
        inc["actions"]
            .to_string()
            .contains("GPUs are not implicated"),
        "{}",
        inc["actions"]
    );
    let evidence = inc["root_cause"]["evidence"].to_string();
    assert!(
        evidence.contains(ue[0]["id"].as_str().unwrap()),
        "{evidence}"
    );
    let mce = &of_kind(&r, "mce")[0];
    assert!(evidence.contains(mce["id"].as_str().unwrap()), "{evidence}");
    assert_eq!(ue[0]["time"], "2026-04-22T11:07:45.000000Z");
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

#[test]
fn redfish_and_sel_of_a_failed_fan_before_a_gpu_loss() {
    let r = analyze_json(&["corpus/bmc-redfish-sel-fan-gpu-lost/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "thermal_power");
    // seven SEL assertions/deassertions seen twice: four events, each citing both routes
    let bmc: Vec<Value> = events(&r)
        .into_iter()
        .filter(|e| e["kind"] == "fan_fault" || e["kind"] == "bmc_thermal")
        .collect();
    assert_eq!(bmc.len(), 4, "{bmc:?}");
    for e in &bmc {
        assert!(e["source"]["path"]
            .as_str()
            .unwrap()
            .ends_with("redfish-sel-entries.json"));
        assert_eq!(e["time_quality"], "exact");
        let seen = e["also_seen"].to_string();
        assert!(seen.contains("sel-elist.txt"), "{e}");
        // the pretty-printed object is the evidence
        let m = e["message"].as_str().unwrap();
        assert!(
            m.contains("\"Created\": \"2026-02-11T03:") && m.contains("\"MessageId\""),
            "{m}"
        );
    }
    assert_eq!(bmc[0]["time"], "2026-02-11T09:41:09.000000Z");
    let inc = by_rule(&r, "bmc-cooling-then-gpu-lost");
    assert_eq!(
        inc["root_cause"]["summary"],
        "GPU 0000:cb:00.0 on gpu-node-31 fell off the bus 13 min after the BMC logged: Fan failure (FAN0001: Fan 6A RPM is less than the lower critical threshold)"
    );
    assert_eq!(inc["root_cause"]["evidence"][1], bmc[0]["id"]);
    assert!(inc.get("consequences").is_none(), "{inc}");
    assert_eq!(inc["alternatives"][0]["layer"], "hardware");
}

/// The same three BMC records through the SEL (no zone) and Redfish (`-05:00`).
const SEL_THREE: &str = "\
  e7 | 03/14/2026 | 02:12:27 | Power Supply PS2 Status | Failure detected () | Asserted
  e8 | 03/14/2026 | 02:12:27 | Power Supply PS Redundancy | Redundancy Lost | Asserted
  e9 | 03/14/2026 | 02:12:40 | Fan FAN6A | Lower Critical going low  | Asserted | Reading 0 < Threshold 600 RPM
";

const REDFISH_THREE: &str = r#"{"Created": "2026-03-14T02:12:27-05:00", "Id": "231", "Message": "Power supply 2 failed.", "MessageId": "IDRAC.2.9.PSU0001", "Severity": "Critical"}
{"Created": "2026-03-14T02:12:28-05:00", "Id": "232", "Message": "The power supplies are not redundant.", "MessageId": "IDRAC.2.9.RDU0012", "Severity": "Warning"}
{"Created": "2026-03-14T02:12:40-05:00", "Id": "233", "Message": "Fan 6A RPM is less than the lower critical threshold.", "MessageId": "IDRAC.2.9.FAN0001", "Severity": "Critical"}
"#;

#[test]
fn sel_and_redfish_of_one_assertion_are_one_event_citing_both() {
    let r = analyze_files(&[
        ("gpu-node-30/redfish-sel.jsonl", REDFISH_THREE),
        ("gpu-node-30/sel-elist.txt", SEL_THREE),
    ]);
    // Redfish names the BMC's zone: the zone-less SEL times are read in it
    let all = events(&r);
    assert_eq!(all.len(), 3, "{all:?}");
    let kinds: Vec<&str> = all.iter().map(|e| e["kind"].as_str().unwrap()).collect();
    assert_eq!(kinds, ["psu_fault", "psu_fault", "fan_fault"]);
    for e in &all {
        let seen = e["also_seen"].as_array().expect("both routes cited");
        assert_eq!(seen.len(), 1, "{e}");
        let paths = format!("{} {}", e["source"]["path"], seen[0]["path"]);
        assert!(
            paths.contains("sel-elist.txt") && paths.contains("redfish-sel.jsonl"),
            "{paths}"
        );
    }
    assert_eq!(all[0]["time"], "2026-03-14T07:12:27.000000Z");
    assert_eq!(
        all[0]["time_quality"], "exact",
        "the Redfish copy carries its zone"
    );
    assert!(r["notes"]
        .to_string()
        .contains("zone of the BMC's own records (UTC-05:00)"));
}

#[test]
fn two_supplies_failing_at_once_stay_two_events() {
    let sel = "\
  e7 | 03/14/2026 | 02:12:27 | Power Supply PS1 Status | Failure detected () | Asserted
  e8 | 03/14/2026 | 02:12:27 | Power Supply PS2 Status | Failure detected () | Asserted
";
    let redfish = r#"{"Created": "2026-03-14T02:12:27Z", "Message": "Power supply 1 failed.", "MessageId": "IDRAC.2.9.PSU0001", "Severity": "Critical"}
{"Created": "2026-03-14T02:12:27Z", "Message": "Power supply 2 failed.", "MessageId": "IDRAC.2.9.PSU0001", "Severity": "Critical"}
"#;
    let r = analyze_files(&[
        ("gpu-node-30/sel-elist.txt", sel),
        ("gpu-node-30/redfish.jsonl", redfish),
    ]);
    let psu = of_kind(&r, "psu_fault");
    assert_eq!(psu.len(), 2, "{psu:?}");
    assert!(psu
        .iter()
        .all(|e| e["also_seen"].as_array().unwrap().len() == 1));
    // the same record twice in one SEL export is not two routes
    let r = analyze_text("sel-elist.txt", &format!("{sel}{sel}"));
    assert_eq!(of_kind(&r, "psu_fault").len(), 2);
    // a minute apart is two assertions
    let later = redfish.replace("02:12:27Z", "02:13:40Z");
    let r = analyze_files(&[
        ("gpu-node-30/sel-elist.txt", sel),
        ("gpu-node-30/redfish.jsonl", &later),
    ]);
    assert_eq!(of_kind(&r, "psu_fault").len(), 4);
}

#[test]
fn bmc_time_shapes_are_read() {
    let cases = [
        // ipmitool 1.8.19: %x %X %Z
        (
            "sel.txt",
            "  1a | 09/28/26 | 14:00:00 +07 | Power Supply PS2 Status | Failure detected () | Asserted\n",
            "2026-09-28T07:00:00.000000Z",
            "exact",
        ),
        // en_US 12-hour clock
        (
            "sel.txt",
            "  1b | 11/16/2019 | 01:31:02 PM | Critical Interrupt #0x03 | Bus Fatal Error | Asserted\n",
            "2019-11-16T13:31:02.000000Z",
            "estimated",
        ),
        // sel list -c
        (
            "sel.csv",
            "7,11/16/2019,13:30:58,Power Supply #0x63,Failure detected,Asserted\n",
            "2019-11-16T13:30:58.000000Z",
            "estimated",
        ),
        // iDRAC9 lclog with an offset
        (
            "lclog.txt",
            "SeqNumber       = 4185\nMessage ID      = PSU0001\nSeverity        = Critical\nTimestamp       = 2019-11-16T13:31:02-0600\nMessage         = Power supply 2 failed.\n",
            "2019-11-16T19:31:02.000000Z",
            "exact",
        ),
    ];
    for (name, text, time, quality) in cases {
        let r = analyze_text(name, text);
        let e = &events(&r)[0];
        assert_eq!(
            (e["time"].as_str(), e["time_quality"].as_str()),
            (Some(time), Some(quality)),
            "{text}"
        );
        assert_eq!(e["host"], "gpu-node-99");
    }
}

#[test]
fn an_old_sel_alert_does_not_date_the_kernel_log() {
    // a fan alert from 2019 in the SEL next to a year-less kern.log written today
    let r = analyze_files(&[
        (
            "gpu-node-14/sel-elist.txt",
            "   9 | 11/16/2019 | 13:31:02 | Fan FAN6A | Lower Critical going low  | Asserted\n",
        ),
        (
            "gpu-node-14/kern.log",
            "Jan  2 00:00:01 gpu-node-14 kernel: [1813205.442928] NVRM: Xid (PCI:0000:ab:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n",
        ),
    ]);
    let x = &of_kind(&r, "xid")[0];
    let year: i32 = x["time"].as_str().unwrap()[..4].parse().unwrap();
    assert!(
        year > 2019,
        "the kernel log's year comes from its file date, not the SEL: {x}"
    );
    assert_eq!(
        of_kind(&r, "fan_fault")[0]["time"],
        "2019-11-16T13:31:02.000000Z"
    );
    assert_eq!(
        incidents(&r).len(),
        2,
        "seven years apart: {}",
        r["incidents"]
    );
}
