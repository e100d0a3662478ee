//! Leads (`none` needs evidence of health): when no incident is found, error lines no recognizer
//! read make the verdict `unknown` and are listed with `path:line`; a normal end of the run, or a
//! run that names no GPU or job, keeps `none`; clean logs stay `none`.

mod common;

use common::{analyze_json, shared};
use serde_json::Value;
use std::path::Path;

fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.to_string_lossy().into_owned()
}

fn verdict(r: &Value) -> (String, Vec<(String, String)>, Option<u64>) {
    let v = &r["verdict"];
    let leads = v["leads"]
        .as_array()
        .map(|a| {
            a.iter()
                .map(|l| {
                    (
                        l["source"].as_str().unwrap().to_string(),
                        l["line"].as_str().unwrap().to_string(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    (
        v["root_cause_layer"].as_str().unwrap().to_string(),
        leads,
        v["leads_total"].as_u64(),
    )
}

const JOB: &str = "[rank0]: epoch 1 step 10 loss 2.31
[rank0]: Traceback (most recent call last):
[rank0]:   File \"train.py\", line 88, in <module>
[rank0]: MyLoaderError: shard 17 of /data/train is unreadable
[rank0]: epoch 1 step 20 loss 2.29
";

#[test]
fn an_error_no_recognizer_reads_makes_the_verdict_unknown_with_its_lines() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "train.log", JOB);
    let r = analyze_json(&[&f]);
    let (layer, leads, total) = verdict(&r);
    assert_eq!(layer, "unknown", "{}", r["verdict"]);
    assert_eq!(total, Some(2));
    assert_eq!(leads[0].0, format!("{f}:2"));
    assert_eq!(
        leads[1],
        (
            format!("{f}:4"),
            "[rank0]: MyLoaderError: shard 17 of /data/train is unreadable".to_string()
        )
    );
    assert!(r["incidents"].as_array().unwrap().is_empty());
}

#[test]
fn a_normal_end_after_the_leads_keeps_none_and_still_lists_them() {
    let d = tempfile::tempdir().unwrap();
    let text = format!("{JOB}[2026-08-22 12:00:00,456] [INFO] [launch.py:367:main] Process 4242 exits successfully.\n");
    let f = write(d.path(), "train.log", &text);
    let (layer, leads, total) = verdict(&analyze_json(&[&f]));
    assert_eq!(layer, "none");
    assert_eq!((leads.len(), total), (2, Some(2)));
    // an error after the normal end is not covered by it
    let text = format!("{text}[rank0]: Exception: the evaluation crashed\n");
    let f = write(d.path(), "train2.log", &text);
    assert_eq!(verdict(&analyze_json(&[&f])).0, "unknown");
}

#[test]
fn counts_are_exact_and_the_list_is_bounded_to_the_first_and_the_last() {
    let d = tempfile::tempdir().unwrap();
    let mut text = String::from("python train.py\n");
    for i in 0..50 {
        text.push_str(&format!("worker {i}: FATAL cannot map shard {i}\n"));
    }
    let f = write(d.path(), "job.log", &text);
    let (layer, leads, total) = verdict(&analyze_json(&[&f]));
    assert_eq!((layer.as_str(), total), ("unknown", Some(50)));
    let lines: Vec<String> = leads
        .iter()
        .map(|l| l.0.rsplit(':').next().unwrap().to_string())
        .collect();
    assert_eq!(lines, ["2", "3", "4", "49", "50", "51"]);
}

#[test]
fn benign_classes_and_a_run_outside_the_scope_keep_none() {
    let d = tempfile::tempdir().unwrap();
    let f = write(
        d.path(),
        "kern.log",
        "Feb 17 07:31:53 node kernel: [    1.706749] RAS: Correctable Errors collector initialized.
Feb 17 07:31:54 node kernel: [    1.8] nvidia: loading out-of-tree module taints kernel.
Feb 17 07:31:55 node kernel: [    1.9] instruction cache parity error corrected
Feb 17 07:31:56 node app[12]: rx: packets=1200 errors=0 dropped=0
Feb 17 07:31:57 node app[12]: NCCL INFO NET/IB : No device found, error ignored
",
    );
    let (layer, _, total) = verdict(&analyze_json(&[&f]));
    assert_eq!((layer.as_str(), total), ("none", None));
    // a plain system log's errors are listed, the verdict stays none
    let f = write(d.path(), "sys.log", "Nov 9 12:10:55 admin1 sshd[1761]: error: Bind to port 22 on 0.0.0.0 failed: Address already in use.\n");
    let r = analyze_json(&[&f]);
    let (layer, leads, _) = verdict(&r);
    assert_eq!(
        (layer.as_str(), leads.len()),
        ("none", 1),
        "{}",
        r["verdict"]
    );
}

#[test]
fn a_benign_fabric_manager_line_explains_its_unit_failing() {
    let d = tempfile::tempdir().unwrap();
    let f = write(d.path(), "journal.txt", "Nov 15 14:15:47 node systemd[1]: Starting NVIDIA fabric manager service...
Nov 15 14:15:47 node nv-fabricmanager[4177]: request to query NVSwitch device information from NVSwitch driver failed with error:WARNING Nothing to do [NV_WARN_NOTHING_TO_DO]
Nov 15 14:15:47 node systemd[1]: nvidia-fabricmanager.service: Control process exited, code=exited, status=1/FAILURE
");
    let g = write(d.path(), "systemctl.txt", "Job for nvidia-fabricmanager.service failed because the control process exited with error code.\n");
    assert_eq!(verdict(&analyze_json(&[&f, &g])).0, "none");
    // without the benign reason, the unit's failure is a lead
    assert_eq!(verdict(&analyze_json(&[&g])).0, "unknown");
}

#[test]
fn real_negatives_and_noise_stay_none() {
    let Some(s) = shared() else {
        eprintln!("../shared absent: real cases skipped");
        return;
    };
    for f in [
        "BGL_2k.log",
        "HPC_2k.log",
        "Linux_2k.log",
        "Thunderbird_2k.log",
    ] {
        let p = s.join("noise").join(f);
        let r = analyze_json(&[p.to_str().unwrap()]);
        assert_eq!(verdict(&r).0, "none", "{f}");
    }
    let d = s.join("corpus-real-3/204-fabricmanager-nothing-to-do-a40-nvlink-bridge-negative");
    if d.is_dir() {
        let files = common::case_files(&d);
        let refs: Vec<&str> = files.iter().map(String::as_str).collect();
        assert_eq!(verdict(&analyze_json(&refs)).0, "none");
    }
}
