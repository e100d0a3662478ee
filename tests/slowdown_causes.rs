//! One scenario per `[[slowdown_cause]]` of `data/rules.toml`: a Megatron run on host gpu-a07
//! that slows from 1000 to 1500 ms per iteration at about 08:33:20, plus the one line that
//! explains it, placed twenty seconds before. Each must name the slowdown after its own cause,
//! with the layer the rules give it. The same server line nine days earlier must not name it (a
//! cause is looked for in a window before the slowdown; job-log lines carry no time of their own
//! and have no such near miss). A cause without a scenario fails
//! `every_slowdown_cause_has_a_scenario`.

mod common;

use common::run;
use serde_json::Value;

/// Megatron iteration lines every 20 iterations from 2026-02-10 08:00:00: 100 at 1000 ms, then
/// 100 at 1500 ms. `insert` lines go in front of sample `at` (0-based).
fn megatron(insert: &[(usize, &str)]) -> String {
    let steps: Vec<f64> = (0..200usize)
        .map(|i| {
            let level = if i < 100 { 1000.0 } else { 1500.0 };
            level * (1.0 + 0.004 * ((i * 7 % 5) as f64 - 2.0))
        })
        .collect();
    common::megatron_log(&steps, insert)
}

/// A kernel line of `host` at 08:33:00.
fn kern(host: &str, msg: &str) -> String {
    format!("Feb 10 08:33:00 {host} kernel: {msg}\n")
}

/// Where the explaining line goes: a file of the slow host's folder, or a line of the trainer log.
enum Place {
    /// (file name, text with `{host}` for the host).
    File(&'static str, fn(&str) -> String),
    /// Lines inserted in the trainer log before a sample.
    TrainLog(&'static [(usize, &'static str)]),
}

struct Case {
    cause: &'static str,
    layer: &'static str,
    place: Place,
}

const CASES: &[Case] = &[
    Case {
        cause: "slow-thermal",
        layer: "thermal_power",
        place: Place::File("sel-elist.txt", |_| {
            "  51 | 02/10/2026 | 08:33:00 | Temperature GPU3 Temp | Upper Critical going high | Asserted | Reading 91 > Threshold 90 degrees C\n".into()
        }),
    },
    Case {
        cause: "slow-power",
        layer: "thermal_power",
        place: Place::File("sel-elist.txt", |_| {
            "  21 | 02/10/2026 | 08:33:00 | Power Supply PS2 Status | Failure detected () | Asserted\n".into()
        }),
    },
    Case {
        cause: "slow-pcie-degraded",
        layer: "hardware",
        place: Place::File("kern.log", |h| {
            kern(h, "pci 0000:3b:00.0: 63.008 Gb/s available PCIe bandwidth, limited by 8.0 GT/s PCIe x8 link at 0000:3a:00.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)")
        }),
    },
    Case {
        cause: "slow-nvlink-xid74",
        layer: "interconnect",
        place: Place::File("kern.log", |h| {
            kern(h, "NVRM: Xid (PCI:0000:3b:00): 74, pid=2211, name=python, NVLink: fatal error detected on link 4(0x10000, 0x0, 0x0, 0x0, 0x0, 0x0, 0x0)")
        }),
    },
    Case {
        cause: "slow-nvlink-events",
        layer: "interconnect",
        place: Place::File("fabricmanager.log", |_| {
            "[Feb 10 2026 08:33:00] [ERROR] [tid 12] NVLink training failed for NVSwitch pci bus id 00000000:86:00.0 port 12\n".into()
        }),
    },
    Case {
        cause: "slow-nccl-socket-fallback",
        layer: "network_storage",
        place: Place::TrainLog(&[
            (1, "gpu-a07:1234:1234 [0] NCCL INFO Using network IB"),
            (99, "gpu-a07:5678:5678 [0] NCCL INFO Using network Socket"),
        ]),
    },
    Case {
        cause: "slow-nccl-no-ib",
        layer: "network_storage",
        place: Place::TrainLog(&[(
            99,
            "gpu-a07:5678:5678 [0] NCCL INFO NET/IB : No device found.",
        )]),
    },
    Case {
        cause: "slow-ib-link",
        layer: "network_storage",
        place: Place::File("kern.log", |h| {
            kern(h, "mlx5_core 0000:5c:00.0 ens1f0np0: Link down")
        }),
    },
    Case {
        cause: "slow-ecc-storm",
        layer: "gpu_memory",
        place: Place::File("kern.log", |h| {
            // a storm: three lines some seconds apart (identical lines within two seconds are
            // taken as one line seen through two routes)
            let line = kern(h, "NVRM: Xid (PCI:0000:3b:00): 92, pid=2211, name=python, High single-bit ECC error rate");
            ["08:32:50", "08:32:55", "08:33:00"]
                .iter()
                .map(|t| line.replace("08:33:00", t))
                .collect()
        }),
    },
    Case {
        cause: "slow-ecc-sbe",
        layer: "gpu_memory",
        place: Place::File("kern.log", |h| {
            kern(h, "NVRM: Xid (PCI:0000:3b:00): 92, pid=2211, name=python, High single-bit ECC error rate")
        }),
    },
    Case {
        cause: "slow-storage",
        layer: "network_storage",
        place: Place::File("kern.log", |h| {
            kern(h, "nfs: server fs01.example not responding, still trying")
        }),
    },
    Case {
        cause: "slow-dataloader",
        layer: "application",
        place: Place::TrainLog(&[(
            99,
            "RuntimeError: DataLoader worker (pid 21345) is killed by signal: Killed. ",
        )]),
    },
    Case {
        cause: "slow-hung-task",
        layer: "application",
        place: Place::File("kern.log", |h| {
            kern(
                h,
                "INFO: task python:4242 blocked for more than 120 seconds.",
            )
        }),
    },
    Case {
        cause: "slow-driver-change",
        layer: "driver_stack",
        place: Place::File("dpkg.log", |_| {
            "2026-02-10 08:33:00 upgrade nvidia-driver-535:amd64 535.161.08-0ubuntu2.22.04.1 535.183.01-0ubuntu0.22.04.1\n".into()
        }),
    },
];

/// Writes the case into a fresh folder: the slow host's trainer log, and the explaining file
/// in the folder of `cause_host`, dated `days_before` days before the slowdown; returns the
/// report.
fn analyze(case: &Case, cause_host: &str, days_before: u32) -> Value {
    let dir = tempfile::tempdir().unwrap();
    let write = |rel: &str, text: &str| {
        let p = dir.path().join(rel);
        std::fs::create_dir_all(p.parent().unwrap()).unwrap();
        std::fs::write(p, text).unwrap();
    };
    match &case.place {
        Place::File(name, text) => {
            write("gpu-a07/train.log", &megatron(&[]));
            let day = 10 - days_before;
            let text = text(cause_host)
                // Fabric Manager pads the day with a zero, syslog with a space
                .replace("[Feb 10 2026", &format!("[Feb {day:02} 2026"))
                .replace("Feb 10", &format!("Feb {day:>2}"))
                .replace("02/10/2026", &format!("02/{day:02}/2026"))
                .replace("2026-02-10", &format!("2026-02-{day:02}"));
            write(&format!("{cause_host}/{name}"), &text);
        }
        Place::TrainLog(lines) => {
            let lines: Vec<(usize, String)> = lines
                .iter()
                .map(|(at, l)| (*at, l.replace("gpu-a07", cause_host)))
                .collect();
            let refs: Vec<(usize, &str)> = lines.iter().map(|(a, l)| (*a, l.as_str())).collect();
            // the host of the job lines is the folder's
            write(&format!("{cause_host}/train.log"), &megatron(&refs));
            if cause_host != "gpu-a07" {
                write("gpu-a07/train.log", &megatron(&[]));
            }
        }
    }
    let path = dir.path().to_string_lossy().into_owned();
    let (code, out, err) = run(&[
        "analyze", "--format", "json", "--year", "2026", "--tz", "+00:00", &path,
    ]);
    assert!(code == 0 || code == 1, "exit {code}: {err}");
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("bad JSON ({e}): {out}"))
}

fn slowdown(r: &Value, host: &str) -> Value {
    let all: Vec<&Value> = r["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| {
            i["kind"] == "slowdown" && i["hosts"].as_array().unwrap().iter().any(|h| h == host)
        })
        .collect();
    assert_eq!(all.len(), 1, "one slowdown on {host}: {:#}", r["incidents"]);
    all[0].clone()
}

#[test]
fn each_cause_names_the_slowdown_it_explains() {
    let mut wrong = Vec::new();
    for case in CASES {
        let r = analyze(case, "gpu-a07", 0);
        let s = slowdown(&r, "gpu-a07");
        let rule = s["root_cause"]["rule"].as_str().unwrap_or("-");
        let layer = s["root_cause"]["layer"].as_str().unwrap_or("-");
        if rule != case.cause || layer != case.layer {
            wrong.push(format!(
                "{}: got rule {rule} layer {layer} ({})",
                case.cause, s["root_cause"]["summary"]
            ));
            continue;
        }
        // the slow phase starts where the data says, whatever the cause
        let it = s["slowdown"]["start_iteration"].as_i64().unwrap();
        assert!((2001..=2041).contains(&it), "{}: start {it}", case.cause);
        // the explaining line is the evidence
        let evidence: Vec<&str> = s["root_cause"]["evidence"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let cited = r["events"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|e| evidence.contains(&e["id"].as_str().unwrap()))
            .any(|e| e["kind"] != "throughput_drop");
        assert!(cited, "{}: no cause line in the evidence", case.cause);
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}

#[test]
fn a_server_line_days_before_does_not_name_the_slowdown() {
    for case in CASES {
        if matches!(case.place, Place::TrainLog(_)) {
            continue;
        }
        let r = analyze(case, "gpu-a07", 9);
        let s = slowdown(&r, "gpu-a07");
        assert_ne!(
            s["root_cause"]["rule"], case.cause,
            "{}: a line nine days before named the slowdown ({})",
            case.cause, s["root_cause"]["summary"]
        );
    }
}

#[test]
fn every_slowdown_cause_has_a_scenario() {
    let rules: toml::Value =
        toml::from_str(include_str!("../data/rules.toml")).expect("rules.toml parses");
    let ids: Vec<&str> = rules["slowdown_cause"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|c| c["id"].as_str())
        .collect();
    assert!(ids.len() >= 14);
    for id in &ids {
        assert!(
            CASES.iter().any(|c| c.cause == *id),
            "slowdown cause {id} has no scenario here"
        );
    }
}
