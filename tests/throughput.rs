//! Slowdowns: progress series from each trainer's format, sustained regressions told from known
//! pauses and from stops, and the cause named with its evidence.

mod common;

use common::{analyze_json, run};
use serde_json::Value;
use std::fmt::Write as _;
use std::path::Path;

fn slowdowns(report: &Value) -> Vec<Value> {
    report["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == "slowdown")
        .cloned()
        .collect()
}

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

/// Megatron iteration lines every 20 iterations from 08:00:00 with the given step times (ms).
fn megatron(step_ms: &[f64]) -> String {
    common::megatron_log(step_ms, &[])
}

fn steady(n: usize, level: f64) -> Vec<f64> {
    (0..n)
        .map(|i| level * (1.0 + 0.004 * ((i * 7 % 5) as f64 - 2.0)))
        .collect()
}

#[test]
fn thermal_slowdown_names_the_hot_gpu_and_the_moment() {
    let r = analyze_json(&["corpus/slowdown-megatron-thermal"]);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1, "{:#}", r["incidents"]);
    let inc = &s[0];
    assert_eq!(inc["root_cause"]["layer"], "thermal_power");
    assert_eq!(inc["gpus"], serde_json::json!(["0000:3b:00.0"]));
    assert_eq!(inc["hosts"], serde_json::json!(["gpu-a07"]));
    let sd = &inc["slowdown"];
    assert_eq!(sd["metric"], "step_time_ms");
    assert_eq!(sd["start_iteration"], 1600);
    assert_eq!(sd["start"], "2026-05-12T09:11:04.000000Z");
    assert_eq!(sd["ongoing"], true);
    let ratio = sd["ratio"].as_f64().unwrap();
    assert!((0.66..0.74).contains(&ratio), "{ratio}");
    assert!((1140.0..1160.0).contains(&sd["baseline"].as_f64().unwrap()));
    assert_eq!(sd["pauses"]["checkpoint"], 3);
    // the drop event cites the first slow iteration line verbatim
    let drop = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .find(|e| e["kind"] == "throughput_drop")
        .unwrap();
    assert_eq!(drop["source"]["line"], 95);
    assert!(drop["message"]
        .as_str()
        .unwrap()
        .contains("iteration     1600/    5000"));
    // a slowdown loses no work: the job did not stop
    assert!(r["job"]["work_lost_s"].is_null());
}

#[test]
fn pcie_link_trained_narrow_at_boot_explains_the_slower_restart() {
    let r = analyze_json(&["corpus/slowdown-deepspeed-pcie-x8"]);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["root_cause"]["layer"], "hardware");
    assert_eq!(s[0]["root_cause"]["rule"], "slow-pcie-degraded");
    assert_eq!(s[0]["slowdown"]["metric"], "samples_per_s");
    assert_eq!(s[0]["slowdown"]["start_iteration"], 1010);
    // the PCIe incident on its own is folded into the slowdown it explains
    assert_eq!(r["incidents"].as_array().unwrap().len(), 1);
}

#[test]
fn nccl_fallback_to_sockets_is_the_cause_and_glued_bars_are_read() {
    let r = analyze_json(&["corpus/slowdown-ib-socket-fallback"]);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["root_cause"]["layer"], "network_storage");
    assert_eq!(s[0]["root_cause"]["rule"], "slow-nccl-socket-fallback");
    let sd = &s[0]["slowdown"];
    // every update glued into the bar's one line counts (256 at most per line)
    assert!(sd["samples"].as_u64().unwrap() > 200);
    let it = sd["start_iteration"].as_i64().unwrap();
    assert!((601..=606).contains(&it), "{it}");
    assert!(s[0]["missing_data"]
        .as_array()
        .unwrap()
        .iter()
        .any(|m| m.as_str().unwrap().contains("no kernel log from node-c01")));
}

#[test]
fn storage_stall_that_recovered() {
    let r = analyze_json(&["corpus/slowdown-nfs-dataloader-stall"]);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1);
    assert_eq!(s[0]["root_cause"]["layer"], "network_storage");
    let sd = &s[0]["slowdown"];
    assert_eq!(sd["ongoing"], false);
    assert!(sd["recovered_at"].is_string());
    assert_eq!(s[0]["alternatives"][0]["layer"], "application");
}

#[test]
fn healthy_run_with_checkpoint_pauses_raises_nothing() {
    let r = analyze_json(&["corpus/job-healthy-checkpoints"]);
    assert!(r["incidents"].as_array().unwrap().is_empty());
    assert!(!r["events"]
        .as_array()
        .unwrap()
        .iter()
        .any(|e| e["kind"] == "throughput_drop"));
}

#[test]
fn a_few_slow_steps_before_a_crash_are_a_stop_not_a_slowdown() {
    let d = tempfile::tempdir().unwrap();
    let mut ms = steady(40, 900.0);
    ms.extend([2400.0, 5100.0, 9000.0]);
    let mut log = megatron(&ms);
    log.push_str("[rank3]:[E210 08:15:40.408271257 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=4661, NumelOut=4661, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n");
    let p = write(d.path(), "node-a/train.log", &log);
    let r = analyze_json(&[&p]);
    assert!(slowdowns(&r).is_empty(), "{:#}", r["incidents"]);
    assert!(!r["incidents"].as_array().unwrap().is_empty());
}

#[test]
fn a_slow_phase_that_ends_in_a_crash_says_the_job_stopped() {
    let d = tempfile::tempdir().unwrap();
    let mut ms = steady(40, 900.0);
    ms.extend(steady(20, 1500.0));
    let mut log = megatron(&ms);
    log.push_str("[rank3]:[E210 08:23:50.408271257 ProcessGroupNCCL.cpp:607] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1580, OpType=ALLREDUCE, NumelIn=4661, NumelOut=4661, Timeout(ms)=600000) ran for 600060 milliseconds before timing out.\n");
    let p = write(d.path(), "node-a/train.log", &log);
    let r = analyze_json(&[&p]);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1, "{:#}", r["incidents"]);
    assert_eq!(s[0]["slowdown"]["ongoing"], false);
    assert!(s[0]["root_cause"]["summary"]
        .as_str()
        .unwrap()
        .contains("then the job stopped"));
    assert_eq!(r["incidents"].as_array().unwrap().len(), 2);
}

#[test]
fn slow_evaluation_bars_are_pauses_not_slowdowns() {
    let d = tempfile::tempdir().unwrap();
    let mut log = String::from("[2026-02-10 08:00:00,001][train][INFO] - start\n");
    let mut glued = Vec::new();
    for n in 1..=300 {
        let el = n;
        glued.push(format!(
            "Epoch 0:  {:>2}%|#         | {n}/300 [00:{:02}:{:02}<00:10, 1.00it/s, loss=2.1]",
            n / 3,
            el / 60,
            el % 60
        ));
        if n % 100 == 0 {
            // a validation bar at a tenth of the speed, in the same line
            for v in 1..=20 {
                glued.push(format!(
                    "Validation DataLoader 0: {:>3}%|#         | {v}/20 [00:{:02}<00:10, 10.00s/it]",
                    v * 5,
                    v
                ));
            }
        }
    }
    log.push_str(&glued.join("\r"));
    log.push('\n');
    let p = write(d.path(), "node-a/train.log", &log);
    let r = analyze_json(&[&p]);
    assert!(slowdowns(&r).is_empty(), "{:#}", r["incidents"]);
}

#[test]
fn nccl_tests_bus_bandwidth_regression_is_found() {
    let d = tempfile::tempdir().unwrap();
    let mut log = String::new();
    for day in 1..=20 {
        let bw = if day <= 12 {
            182.0 + (day % 3) as f64
        } else {
            96.0 + (day % 2) as f64
        };
        let _ = writeln!(
            log,
            "[2026-06-{day:02} 02:00:00] nightly all_reduce_perf -b 8 -e 8G -f 2 -g 8\n#  Out of bounds values : 0 OK\n# Avg bus bandwidth    : {bw:.3} \n#"
        );
    }
    let p = write(d.path(), "node-n1/nccl-tests.log", &log);
    let r = analyze_json(&[&p]);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1, "{:#}", r["incidents"]);
    assert_eq!(s[0]["slowdown"]["metric"], "busbw_gb_s");
    assert_eq!(s[0]["slowdown"]["start"], "2026-06-13T02:00:00.000000Z");
    assert_eq!(s[0]["root_cause"]["layer"], "unknown");
}

#[test]
fn text_and_markdown_show_the_curve() {
    let (code, out, _) = run(&[
        "analyze",
        "--format",
        "text",
        "corpus/slowdown-megatron-thermal",
    ]);
    assert_eq!(code, 0);
    assert!(out.contains("slowdown: Megatron iteration time"), "{out}");
    let speed = out
        .lines()
        .find(|l| l.trim_start().starts_with("speed"))
        .unwrap();
    assert!(speed.contains('█') && speed.contains('▄'), "{speed}");
    let (_, md, _) = run(&[
        "analyze",
        "--format",
        "markdown",
        "corpus/slowdown-megatron-thermal",
    ]);
    assert!(md.contains("- **Series:** Megatron iteration time"), "{md}");
    assert!(
        md.contains("- **Levels:** 1150 ms/step before, 1653 ms/step during the slowdown (70% of the earlier throughput)"),
        "{md}"
    );
    let speed = md.lines().find(|l| l.starts_with("speed ")).unwrap();
    assert!(speed.contains('█') && speed.contains('▄'), "{speed}");
    // what it cost: 55 minutes at 70% throughput
    assert!(
        md.contains("≈ 17 min of training time in incident i1: a slow phase of 55 min at 70% throughput, still slow at the end of the log"),
        "{md}"
    );
}

#[test]
fn thresholds_come_from_the_rules_and_can_be_overridden() {
    let d = tempfile::tempdir().unwrap();
    let rules = write(d.path(), "strict.toml", "[slowdown]\nmin_ratio = 2.0\nmin_samples = 5\nmin_noise_multiple = 4.0\nwindow_before_s = 3600\nwindow_after_s = 1800\n");
    let (code, out, err) = run(&[
        "analyze",
        "--format",
        "json",
        "--rules",
        &rules,
        "corpus/slowdown-megatron-thermal",
    ]);
    assert_eq!(code, 0, "{err}");
    let r: Value = serde_json::from_str(&out).unwrap();
    assert!(slowdowns(&r).is_empty());
    // the thermal state alone is still a finding
    assert_eq!(r["verdict"]["root_cause_layer"], "thermal_power");
}

#[test]
fn html_draws_the_curve_with_the_slow_phase_shaded() {
    let (code, html, err) = run(&[
        "analyze",
        "--format",
        "html",
        "corpus/slowdown-nfs-dataloader-stall",
    ]);
    assert_eq!(code, 0, "{err}");
    let svg_start = html.find(r#"<svg class="curve""#).expect("curve chart");
    let svg = &html[svg_start..svg_start + html[svg_start..].find("</svg>").unwrap()];
    assert!(svg.contains(r#"<rect class="slow""#));
    assert!(
        svg.contains("before 410") && svg.contains("slow 741"),
        "{svg}"
    );
    // one point per curve value, each with its time and value on hover
    let r = analyze_json(&["corpus/slowdown-nfs-dataloader-stall"]);
    let points = r["incidents"][0]["slowdown"]["curve"]
        .as_array()
        .unwrap()
        .len();
    assert_eq!(svg.matches(r#"<circle class="pt""#).count(), points);
}

#[test]
fn endless_progress_output_is_thinned_not_lost() {
    // 250 000 Megatron lines (more than the per-input cap of samples), slow for the last 28 %
    let d = tempfile::tempdir().unwrap();
    let mut ms = steady(180_000, 900.0);
    ms.extend(steady(70_000, 1400.0));
    let p = write(d.path(), "node-a/train.log", &megatron(&ms));
    let r = analyze_json(&[&p]);
    assert_eq!(r["inputs"][0]["lines"], 250_000);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1, "{:#}", r["incidents"]);
    let it = s[0]["slowdown"]["start_iteration"].as_i64().unwrap();
    // thinned samples place the start within a few strides of iteration 3 600 020
    assert!((it - 3_600_020).abs() <= 20 * 64, "{it}");
}

fn of_kind(report: &Value, kind: &str) -> Vec<Value> {
    report["incidents"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|i| i["kind"] == kind)
        .cloned()
        .collect()
}

/// Epoch times of one run split over two files (invented values, nnU-Net v1 wording): three
/// epochs at ~900 s, then two at ~1500-1900 s: a short series with a clear held step.
#[test]
fn epoch_times_split_over_two_files_make_one_short_series() {
    let d = tempfile::tempdir().unwrap();
    let a = "2025-03-01 10:00:00.000001: This epoch took 910.5 s\n2025-03-01 10:15:00.000001: This epoch took 880.2 s\n2025-03-01 10:30:00.000001: This epoch took 902.7 s\n";
    let b = "2025-03-04 08:00:00.000001: This epoch took 1850.0 s\n2025-03-04 08:30:00.000001: saving checkpoint...\n2025-03-04 08:30:01.000001: This epoch took 1504.3 s\n";
    let pa = write(d.path(), "run/log.part1.txt", a);
    let pb = write(d.path(), "run/log.part2.txt", b);
    let r = analyze_json(&[&pa, &pb]);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1, "{:#}", r["incidents"]);
    assert_eq!(s[0]["slowdown"]["metric"], "epoch_time_s");
    assert!(s[0]["root_cause"]["confidence"].as_f64().unwrap() < 0.3);
    let summary = s[0]["root_cause"]["summary"].as_str().unwrap();
    assert!(summary.contains("only 5 samples"), "{summary}");
    let kinds: Vec<&str> = r["events"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|e| e["kind"].as_str())
        .collect();
    assert!(kinds.contains(&"checkpoint_saved"), "{kinds:?}");
}

/// The same shape at 1.3x, and a warm-up followed by a steady level, are not slowdowns.
#[test]
fn small_steps_and_warm_up_in_short_series_are_not_slowdowns() {
    let d = tempfile::tempdir().unwrap();
    let small = "This epoch took 900.0 s\nThis epoch took 910.0 s\nThis epoch took 890.0 s\nThis epoch took 1170.0 s\nThis epoch took 1180.0 s\n";
    let warm = " iteration        1/     100 | consumed samples: 128 | elapsed time per iteration (ms): 52000.0 |\n iteration        2/     100 | consumed samples: 256 | elapsed time per iteration (ms): 5400.0 |\n iteration        3/     100 | consumed samples: 384 | elapsed time per iteration (ms): 5500.0 |\n iteration        4/     100 | consumed samples: 512 | elapsed time per iteration (ms): 5350.0 |\n";
    let p1 = write(d.path(), "a/train.log", small);
    let p2 = write(d.path(), "b/train.log", warm);
    for p in [p1, p2] {
        let r = analyze_json(&[&p]);
        assert!(slowdowns(&r).is_empty(), "{:#}", r["incidents"]);
    }
}

/// A cumulative average (tf_cnn_benchmarks) that dips slightly after many steps hides a long
/// stall of the last interval; a steady one is not a slowdown.
#[test]
fn a_cumulative_average_that_dips_shows_the_stall() {
    let d = tempfile::tempdir().unwrap();
    let mut stalled = String::new();
    for (step, avg) in [
        (980, "201.3"),
        (990, "201.3"),
        (1000, "201.3"),
        (1010, "191.7"),
    ] {
        for _ in 0..4 {
            let _ = writeln!(
                stalled,
                "{step}\timages/sec: {avg} +/- 0.4 (jitter = 9.1)\t6.912"
            );
        }
    }
    let p = write(d.path(), "hvd/train.log", &stalled);
    let r = analyze_json(&[&p]);
    let s = slowdowns(&r);
    assert_eq!(s.len(), 1, "{:#}", r["incidents"]);
    assert_eq!(s[0]["slowdown"]["metric"], "samples_per_s");
    let steady = stalled.replace("191.7", "201.2");
    let p = write(d.path(), "hvd2/train.log", &steady);
    assert!(slowdowns(&analyze_json(&[&p])).is_empty());
}

const NCCL_INIT: &str = "box:100:200 [0] NCCL INFO comm 0x1a2b rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 1000 commId 0x99 - Init COMPLETE\nbox:101:201 [1] NCCL INFO Channel 00 : 1[1] -> 0[0] via P2P/IPC\n";

/// A bar drawn at 0 right after NCCL init, then nothing: a hang, platform first on one host.
#[test]
fn a_bar_stuck_at_zero_after_nccl_init_is_a_hang() {
    let d = tempfile::tempdir().unwrap();
    let log = format!("{NCCL_INIT}Processed prompts:   0%|          | 0/8 [00:00<?, ?it/s]\n");
    let p = write(d.path(), "srv/run.log", &log);
    let r = analyze_json(&[&p]);
    let h = of_kind(&r, "hang");
    assert_eq!(h.len(), 1, "{:#}", r["incidents"]);
    assert_eq!(h[0]["root_cause"]["layer"], "platform");
    assert_eq!(h[0]["hang"]["waiting_for"], "first collective");
    assert_eq!(r["verdict"]["root_cause_layer"], "platform");
}

/// Near misses: a log cut after normal progress, a bar at zero with no collective before it,
/// and a bar at zero that moved on are not hangs.
#[test]
fn a_log_that_simply_ends_is_not_a_hang() {
    let d = tempfile::tempdir().unwrap();
    let cut =
        format!("{NCCL_INIT}Processed prompts:  50%|#####     | 4/8 [00:04<00:04,  1.00it/s]\n");
    let no_init = "Processed prompts:   0%|          | 0/8 [00:00<?, ?it/s]\n".to_string();
    let moved = format!("{NCCL_INIT}Processed prompts:   0%|          | 0/8 [00:00<?, ?it/s]\rProcessed prompts:  50%|#####     | 4/8 [00:04<00:04,  1.00it/s]\n");
    for (i, log) in [cut, no_init, moved].iter().enumerate() {
        let p = write(d.path(), &format!("c{i}/run.log"), log);
        let r = analyze_json(&[&p]);
        assert!(of_kind(&r, "hang").is_empty(), "{i}: {:#}", r["incidents"]);
        assert_eq!(r["verdict"]["root_cause_layer"], "none", "{i}");
    }
}
