//! Issue 37, finding 5: the events cap kept up to N events per host, kind, code, GPU and rank,
//! so memory grew with the number of distinct keys (1 M Xid lines from 1 M hosts: 1.07 GB).
//! Now each kind keeps a key of its own for a sample of 4096 keys (by hash); the events of the
//! other keys are counted together. This light test (100 000 distinct hosts and a storm on one
//! GPU among them) checks that the number of kept events is bounded, that the counts stay
//! exact, and that the result is the same whatever the chunking and `--jobs`. The heavy
//! figures (1 M hosts, 1 M bus ids) are in `scripts/hostile-bench.sh`.

use std::process::Command;

fn run(log: &str, jobs: &str, chunk: Option<&str>) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_faultline"));
    c.args(["analyze", "--format", "json", "--jobs", jobs, log]);
    if let Some(b) = chunk {
        c.env("FAULTLINE_CHUNK_BYTES", b);
    }
    let out = c.output().unwrap();
    assert!(out.status.code().is_some_and(|c| c <= 1), "{out:?}");
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn a_hundred_thousand_distinct_hosts_keep_a_bounded_number_of_events_with_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("hosts.log");
    let mut text = String::with_capacity(100_000 * 125);
    let (hosts, storm) = (100_000u64, 3_000u64);
    for i in 0..hosts + storm {
        // every 34th line is the storm of one GPU of one host; the others one host each
        let host = if i % 34 == 33 {
            "gpu-storm-01".to_string()
        } else {
            format!("gpu-n{i:07}")
        };
        text.push_str(&format!(
            "Mar 14 02:{:02}:{:02} {host} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid={}, name=python, GPU has fallen off the bus.\n",
            (i / 60) % 60,
            i % 60,
            1000 + i % 5000
        ));
    }
    std::fs::write(&log, &text).unwrap();
    let lines = text.lines().count() as u64;
    let log = log.to_str().unwrap();
    let one = run(log, "1", None);
    let json: serde_json::Value = serde_json::from_str(&one).unwrap();
    let events = json["events"].as_array().unwrap();
    let mut per_kind: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
    for e in events {
        let k = per_kind.entry(e["kind"].as_str().unwrap()).or_default();
        k.0 += 1;
        k.1 += 1 + e["suppressed"].as_u64().unwrap_or(0);
    }
    assert!(!per_kind.is_empty());
    for (kind, (kept, total)) in &per_kind {
        // a sample of 4096 keys of their own (the storm's up to 1000 events), one key for the
        // others (up to 1000); before, one event per host: 103 000
        assert!(*kept <= 4096 + 3 * 1000, "{kind}: {kept} events kept");
        assert_eq!(*total, lines, "{kind}: every line counted once");
    }
    let warnings = json["inputs"][0]["warnings"].to_string();
    assert!(warnings.contains("counted together"), "{warnings}");
    // the storm host is listed whether its key is sampled or folded: its first events are early
    assert!(one.contains("gpu-storm-01"));
    // the same whatever the chunking and the number of jobs
    assert_eq!(one, run(log, "2", Some("400000")), "chunked, 2 jobs");
}

/// Issue 37, finding 5, the total per kind: 4,000 hosts under the key budget, each with six
/// NCCL IB completion errors (under the cap of 1000 per key), kept all 48,000 events. Now a kind
/// keeps at most 16,384, shared over the hosts: every host keeps its first and last, the counts
/// stay exact per host, and the chunking and `--jobs` change nothing.
#[test]
fn a_kind_over_its_total_keeps_a_few_events_of_every_host_with_exact_counts() {
    let dir = tempfile::tempdir().unwrap();
    let log = dir.path().join("nccl.log");
    let (hosts, per) = (4_000u64, 6u64);
    let mut text = String::with_capacity((hosts * per * 230) as usize);
    for round in 0..per {
        for h in 0..hosts {
            text.push_str(&format!(
                "gpu-n{h:04}:{}:{} [{}] transport/net_ib.cc:1951 NCCL WARN NET/IB : Got completion from peer 10.{}.{}.{}<5{round}> with error 12, opcode 0, len 0, vendor err 129 (Send) localGid ::ffff:10.5.20.182 remoteGids::ffff:10.9.8.7 hca mlx5_{}\n",
                1000 + h,
                2000 + round,
                h % 8,
                h % 250,
                round,
                h % 200,
                h % 8
            ));
        }
    }
    std::fs::write(&log, &text).unwrap();
    let log = log.to_str().unwrap();
    let one = run(log, "1", None);
    let json: serde_json::Value = serde_json::from_str(&one).unwrap();
    let events = json["events"].as_array().unwrap();
    let mut per_kind: std::collections::BTreeMap<&str, (u64, u64)> = Default::default();
    let mut per_host: std::collections::BTreeMap<(&str, &str), (u64, u64)> = Default::default();
    for e in events {
        let n = 1 + e["suppressed"].as_u64().unwrap_or(0);
        let kind = e["kind"].as_str().unwrap();
        let k = per_kind.entry(kind).or_default();
        k.0 += 1;
        k.1 += n;
        let h = per_host
            .entry((kind, e["host"].as_str().unwrap()))
            .or_default();
        h.0 += 1;
        h.1 += n;
    }
    assert!(per_kind.contains_key("nccl_error"), "{per_kind:?}");
    for (kind, (kept, total)) in &per_kind {
        assert!(*kept <= 16_384, "{kind}: {kept} kept");
        assert_eq!(*total, hosts * per, "{kind}: every line counted once");
    }
    for ((kind, host), (kept, total)) in &per_host {
        // 16384 / 4000 hosts: four each, the first three and the last
        assert_eq!(*kept, 4, "{kind} on {host}");
        assert_eq!(*total, per, "{kind} on {host}: its own count");
    }
    assert_eq!(
        per_host.len(),
        per_kind.len() * hosts as usize,
        "every host keeps examples"
    );
    let warnings = json["inputs"][0]["warnings"].to_string();
    assert!(
        warnings.contains("kept at most 16384 events over all hosts and GPUs"),
        "{warnings}"
    );
    assert_eq!(one, run(log, "2", Some("400000")), "chunked, 2 jobs");
}
