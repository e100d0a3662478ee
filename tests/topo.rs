//! `nvidia-smi topo -m` next to a NIC fault: the incident names the GPUs the failed NIC serves.

mod common;
use common::*;

#[test]
fn a_nic_fault_names_the_gpus_the_nic_serves() {
    let r = analyze_json(&["corpus/roce-link-flap-topo/"]);
    assert_eq!(r["verdict"]["root_cause_layer"], "network_storage");
    let topo = r["inputs"]
        .as_array()
        .unwrap()
        .iter()
        .find(|i| i["path"].as_str().unwrap().ends_with("nvidia-smi-topo.txt"))
        .unwrap()
        .clone();
    assert_eq!(topo["format"], "nvidia_smi");
    assert_eq!(topo["lines_recognized"], topo["lines"]);
    assert_eq!(topo["events"], 0);
    let inc = by_rule(&r, "ib-link");
    let summary = inc["root_cause"]["summary"].as_str().unwrap();
    assert!(
        summary.ends_with(
            "; mlx5_1 on gpu-node-41 serves GPU2 (PXB) and GPU3 (PXB) (nvidia-smi topo -m)"
        ),
        "{summary}"
    );
}

#[test]
fn the_topology_of_another_host_or_nic_says_nothing() {
    let topo = std::fs::read_to_string(
        root().join("corpus/roce-link-flap-topo/gpu-node-41/nvidia-smi-topo.txt"),
    )
    .unwrap();
    let warn = "[2026-05-07 04:12:33] gpu-node-41:51311:51966 [2] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.30.1.42<52011> with status=12 opcode=0 len=0 vendor err 129 (Send) localGid ::ffff:10.30.1.41 remoteGids::ffff:10.30.1.42 hca mlx5_1\n";
    let summary = |r: &serde_json::Value| r["verdict"]["summary"].as_str().unwrap().to_string();
    // the matrix of another node
    let r = analyze_files(&[
        ("gpu-node-41/train.log", warn),
        ("gpu-node-42/nvidia-smi-topo.txt", &topo),
    ]);
    assert_eq!(r["verdict"]["root_cause_layer"], "network_storage");
    assert!(!summary(&r).contains("serves"), "{}", summary(&r));
    // the frontend NIC serves no GPU
    let r = analyze_files(&[
        (
            "gpu-node-41/train.log",
            &warn.replace("hca mlx5_1", "hca mlx5_4"),
        ),
        ("gpu-node-41/nvidia-smi-topo.txt", &topo),
    ]);
    assert!(!summary(&r).contains("serves"), "{}", summary(&r));
    // the same NIC on the same host does
    let r = analyze_files(&[
        ("gpu-node-41/train.log", warn),
        ("gpu-node-41/nvidia-smi-topo.txt", &topo),
    ]);
    assert!(
        summary(&r).contains("mlx5_1 on gpu-node-41 serves GPU2 (PXB) and GPU3 (PXB)"),
        "{}",
        summary(&r)
    );
}
