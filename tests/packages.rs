//! Package history (apt history.log, dpkg.log, dnf/yum logs and `history info`,
//! nvidia-installer.log): which lines give events, their times and hosts, and how a driver or
//! CUDA change before the first fault feeds the verdict (version drift, an upgrade without a
//! reload of the kernel module).

mod common;
use common::*;
use serde_json::Value;

#[test]
fn apt_upgrade_without_a_module_reload_is_named_in_the_verdict() {
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
    // the transaction's Start-Date, no zone: estimated; the transaction is the evidence
    assert_eq!(up["time"], "2025-06-11T06:25:14.000000Z");
    assert_eq!(up["time_quality"], "estimated");
    assert_eq!(up["host"], "gpu-node-07");
    // the line first, then the rest of its transaction
    let msg = up["message"].as_str().unwrap();
    assert!(
        msg.starts_with("Upgrade: libnvidia-cfg1-535:amd64 ("),
        "{msg}"
    );
    assert!(
        msg.contains(
            "\nStart-Date: 2025-06-11  06:25:14\nCommandline: /usr/bin/unattended-upgrade\n"
        ),
        "{msg}"
    );
    assert!(msg.ends_with("\nEnd-Date: 2025-06-11  06:27:02"), "{msg}");
    let inc = by_rule(&r, "driver-mismatch");
    assert_eq!(inc["root_cause"]["layer"], "driver_stack");
    let summary = r["verdict"]["summary"].as_str().unwrap();
    assert!(
        summary.contains("; the driver was upgraded 21 min before the first fault without reloading the kernel module (libnvidia-cfg1-535 from 535.161.08-0ubuntu2.22.04.1 to 535.183.01-0ubuntu0.22.04.1"),
        "{summary}"
    );
    assert!(inc["root_cause"]["evidence"]
        .as_array()
        .unwrap()
        .contains(&up["id"]));
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
    assert_eq!(pkgs[1]["time"], "2025-06-11T06:25:40.000000Z");
    // the word after the time is dpkg's action, not a host
    assert!(pkgs.iter().all(|e| e["host"] == "gpu-node-99"), "{pkgs:?}");
    assert_eq!(r["inputs"][0]["host"], "gpu-node-99");
    assert_eq!(r["inputs"][0]["lines_recognized"], 6);
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
    assert_eq!(pkgs[0]["time_quality"], "exact", "dnf prints the offset");
    assert!(pkgs.iter().all(|e| e["host"] == "gpu-node-99"), "{pkgs:?}");
    assert_eq!(r["inputs"][0]["format"], "unknown");

    let yum = "Apr 02 09:14:51 Installed: cuda-toolkit-12-4-12.4.1-1.x86_64\n";
    let r = analyze_text("yum.log", yum);
    let e = &of_kind(&r, "package_change")[0];
    assert_eq!(e["host"], "gpu-node-99");
    assert!(e["time"]
        .as_str()
        .unwrap()
        .ends_with("-04-02T09:14:51.000000Z"));

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
    // the file's creation time, lent to its lines
    for e in &pkgs {
        assert_eq!(e["time"], "2025-04-02T09:20:11.000000Z");
        assert_eq!(e["time_quality"], "estimated");
    }
}

#[test]
fn dnf_history_info_lines_take_the_transaction_time() {
    let text = "\
Transaction ID : 7
Begin time     : Wed 02 Apr 2025 09:14:48 AM UTC
Begin rpmdb    : 1234:0a1b2c
End time       : Wed 02 Apr 2025 09:15:10 AM UTC (22 seconds)
User           : root <root>
Return-Code    : Success
Command Line   : upgrade nvidia-driver
Packages Altered:
    Upgrade  nvidia-driver-3:550.54.15-1.el8.x86_64               @cuda-rhel8-x86_64
    Upgraded nvidia-driver-3:545.23.08-1.el8.x86_64               @@System
    Upgrade  kernel-core-4.18.0-513.24.1.el8_9.x86_64             @baseos
";
    let r = analyze_text("dnf-history.txt", text);
    let pkgs = of_kind(&r, "package_change");
    let got: Vec<(&str, &str, &str)> = pkgs
        .iter()
        .map(|e| {
            let d = &e["details"];
            (
                d["action"].as_str().unwrap(),
                d["to_version"]
                    .as_str()
                    .or(d["from_version"].as_str())
                    .unwrap(),
                e["time"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        got,
        [
            ("Upgrade", "550.54.15-1.el8", "2025-04-02T09:14:48.000000Z"),
            ("Upgraded", "545.23.08-1.el8", "2025-04-02T09:14:48.000000Z"),
        ]
    );
    assert!(pkgs.iter().all(|e| e["time_quality"] == "exact"));
}

const XID79: &str = "Jun 11 14:25:01 gpu-node-07 kernel: [1340012.882104] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n";

fn driver_alternative(r: &Value) -> Option<String> {
    incidents(r)[0]["alternatives"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["layer"] == "driver_stack")
        .map(|a| a["summary"].as_str().unwrap().to_string())
}

#[test]
fn a_driver_upgrade_before_a_gpu_loss_is_the_driver_stack_alternative() {
    let dpkg = "2025-06-11 06:25:40 upgrade nvidia-driver-535:amd64 535.161.08-0ubuntu2.22.04.1 535.183.01-0ubuntu0.22.04.1\n";
    let r = analyze_files(&[
        ("gpu-node-07/kern.log", XID79),
        ("gpu-node-07/dpkg.log", dpkg),
    ]);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    let alt = driver_alternative(&r).expect("a driver_stack alternative");
    assert!(
        alt.starts_with("the driver packages on gpu-node-07 changed 8.0 h before the first fault (nvidia-driver-535 from 535.161.08-0ubuntu2.22.04.1 to 535.183.01-0ubuntu0.22.04.1, "),
        "{alt}"
    );
    // no mismatch: nothing says the module was not reloaded
    assert!(!alt.contains("without reloading"));
    // a CUDA toolkit upgrade is named as such
    let cuda = "2025-06-11 06:25:40 upgrade cuda-toolkit-12-4:amd64 12.4.0-1 12.4.1-1\n";
    let r = analyze_files(&[
        ("gpu-node-07/kern.log", XID79),
        ("gpu-node-07/dpkg.log", cuda),
    ]);
    let alt = driver_alternative(&r).expect("a driver_stack alternative");
    assert!(
        alt.starts_with("the CUDA packages on gpu-node-07 changed"),
        "{alt}"
    );
    // eight days before is outside the drift window; another host's upgrade is not this host's
    let old = dpkg.replace("2025-06-11", "2025-06-03");
    let r = analyze_files(&[
        ("gpu-node-07/kern.log", XID79),
        ("gpu-node-07/dpkg.log", &old),
    ]);
    assert_eq!(driver_alternative(&r), None);
    let r = analyze_files(&[
        ("gpu-node-07/kern.log", XID79),
        ("gpu-node-08/dpkg.log", dpkg),
    ]);
    assert_eq!(driver_alternative(&r), None);
}

#[test]
fn a_reload_after_the_upgrade_is_not_called_a_missing_reload() {
    let dpkg = "2025-06-11 06:25:40 upgrade nvidia-driver-535:amd64 535.161.08-0ubuntu2.22.04.1 535.183.01-0ubuntu0.22.04.1\n";
    let kern = "\
Jun 11 06:40:02 gpu-node-07 kernel: [   12.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  Wed Jun  5 10:00:00 UTC 2025
Jun 11 06:45:58 gpu-node-07 kernel: [  368.406221] NVRM: API mismatch: the client has the version 535.161.08, but#012NVRM: this kernel module has the version 535.183.01.  Please#012NVRM: make sure that this kernel module and all NVIDIA driver#012NVRM: components have the same version.
";
    let r = analyze_files(&[
        ("gpu-node-07/kern.log", kern),
        ("gpu-node-07/dpkg.log", dpkg),
    ]);
    assert_eq!(r["verdict"]["root_cause_layer"], "driver_stack");
    let summary = r["verdict"]["summary"].as_str().unwrap();
    assert!(!summary.contains("without reloading"), "{summary}");
    assert!(
        summary
            .contains("; the driver packages on gpu-node-07 changed 20 min before the first fault"),
        "{summary}"
    );
}

#[test]
fn a_different_driver_loaded_before_the_fault_is_an_alternative() {
    let kern = "\
Jun 10 22:00:02 gpu-node-07 kernel: [   12.100000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.161.08  Tue Feb 20 10:00:00 UTC 2024
Jun 11 10:25:02 gpu-node-07 kernel: [   12.300000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  535.183.01  Wed Jun  5 10:00:00 UTC 2025
";
    let r = analyze_files(&[("gpu-node-07/kern.log", &format!("{kern}{XID79}"))]);
    assert_eq!(r["verdict"]["root_cause_layer"], "hardware");
    let alt = driver_alternative(&r).expect("a driver_stack alternative");
    assert!(
        alt.starts_with("the driver on gpu-node-07 changed from 535.161.08 to 535.183.01 4.0 h before the first fault"),
        "{alt}"
    );
}
