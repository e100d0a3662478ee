//! The scanner's fast path (a memo of line signatures: events counted before they are built,
//! built only when the events cap keeps them) gives exactly what reading every candidate line in
//! full gives (`FAULTLINE_SCAN_MEMO=0`), whatever the mix of lines, the cap and the chunking.

use std::process::Command;

/// A small deterministic generator (xorshift), so each storm is reproducible from its seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// A storm of driver and job lines: repeated Xid and SXid lines whose pid changes on every line,
/// lines of other hosts and ranks, continuation lines, lines without a time of their own (NCCL's
/// untimed lines, which name their host, among timed ones whose time they borrow, and lines that
/// name no host), lines of hosts whose names the recognizers look for, lines that name a host
/// of their own, NVRM bursts, a kernel report, ordinary lines, and pids hidden in places the
/// masks must not touch.
fn storm(seed: u64, lines: usize) -> String {
    let mut r = Rng(seed.wrapping_mul(0x9e37_79b9_7f4a_7c15) | 1);
    let buses = ["07", "0f", "47", "4e", "87", "90", "b7", "bd"];
    let mut text = String::new();
    for i in 0..lines {
        let s = i / 7;
        let t = format!(
            "Jan 12 {:02}:{:02}:{:02}",
            (s / 3600) % 24,
            (s / 60) % 60,
            s % 60
        );
        // mostly one host; others, one of them a word the recognizers look for
        let hosts = [
            "gpu-node-01",
            "gpu-node-01",
            "gpu-node-02",
            "r7n3",
            "nvlink",
            "kernel",
        ];
        let host = hosts[r.below(hosts.len() as u64) as usize];
        let bus = buses[r.below(buses.len() as u64) as usize];
        let pid = r.below(40_000);
        let (tid, dev) = (r.below(90_000), r.below(8));
        let line = match r.below(26) {
            0..=8 => {
                let code = [43, 45, 45, 13, 31, 79][r.below(6) as usize];
                format!("{t} {host} kernel: NVRM: Xid (PCI:0000:{bus}:00): {code}, pid={pid}, name=python3, Ch 0000001{}\n", r.below(2))
            }
            9 => format!("{t} {host} kernel: [ {pid}.{:06}] nvidia-nvswitch1: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)\n", r.below(1_000_000)),
            10 => format!("{t} {host} kernel: NVRM: Xid (PCI:0000:{bus}:00): 48, pid={pid}, DBE\n                NVRM: continued record, ECC page retirement\n"),
            11 => format!("NVRM: Xid (PCI:0000:{bus}:00): 43, pid={pid}, name=python3, Ch 00000008\n"),
            12 => format!("{t} {host} kernel: NVRM: GPU at PCI:0000:{bus}:00: GPU has fallen off the bus.\n"),
            13 => format!("{t} {host} kernel: NVRM: _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for fn 76!\n"),
            14 => format!("[rank{}]: {t} {host} kernel: NVRM: Xid (PCI:0000:{bus}:00): 45, pid={pid}, name=python3, Ch 00000010\n", r.below(3)),
            15 => format!("{t} {host} kernel: Out of memory: Killed process {pid} (python3) total-vm:1234kB\n"),
            16 => format!("{t} {host} kernel: NVRM: Xid (PCI:0000:{bus}:00): {}, pid={pid}, name=python3, Ch 00000010\n", 40 + pid % 9),
            17 => format!("{t} {host} systemd[{pid}]: Started Session {pid} of user root.\n"),
            18 => format!("{t} {host} sshd[{pid}]: pid={pid} not responding, timeout\n"),
            20 | 21 => {
                let err = [12, 12, 5, 4][r.below(4) as usize];
                format!("{host}:{pid}:{tid} [{dev}] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4432> with error {err}, opcode 129, len 0, vendor err 129 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.7 hca mlx5_3\n")
            }
            22 => format!("{host}:{pid}:{tid} [{dev}] include/alloc.h:185 NCCL WARN Cuda failure 'out of memory'\n"),
            23 => format!("{host}:{pid}:{tid} [{dev}] NCCL WARN NET/IB : Got async event : port error\n"),
            24 => "NCCL WARN Cuda failure 'unknown error'\n".to_string(),
            25 => format!("{t} {host} slurmstepd[{pid}]: srun: error: gpu017: task 3: Out Of Memory\n"),
            _ => format!("{t} {host} kernel: NVRM: Xid (PCI:0000:{bus}:00): 62, pid={pid}, name=python3, Ch 00000010\n"),
        };
        text.push_str(&line);
    }
    text
}

fn analyze(path: &std::path::Path, memo: bool, cap: &str, chunk: Option<&str>) -> String {
    analyze_with(path, memo, &["--max-events-per-kind", cap], chunk)
}

/// The JSON report of `path` with the arguments `args`, the memo on or off.
fn analyze_with(path: &std::path::Path, memo: bool, args: &[&str], chunk: Option<&str>) -> String {
    let mut c = Command::new(env!("CARGO_BIN_EXE_faultline"));
    c.args(["analyze", "--format", "json"]).args(args);
    c.arg(path);
    c.env("FAULTLINE_SCAN_MEMO", if memo { "1" } else { "0" });
    if let Some(n) = chunk {
        c.env("FAULTLINE_CHUNK_BYTES", n);
    }
    let out = c.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn the_memo_gives_what_reading_every_line_gives() {
    let dir = tempfile::tempdir().unwrap();
    for seed in 1..=2u64 {
        let p = dir.path().join(format!("storm-{seed}.log"));
        std::fs::write(&p, storm(seed, 6000)).unwrap();
        for (cap, chunk) in [
            ("1000", None),
            ("3", None),
            ("2", Some("4096")),
            ("17", Some("65536")),
            ("1", None),
        ] {
            let full = analyze(&p, false, cap, chunk);
            assert!(full.contains("\"xid\""), "seed {seed}: no Xid event");
            let fast = analyze(&p, true, cap, chunk);
            assert!(
                fast == full,
                "seed {seed}, cap {cap}, chunks {chunk:?}: the memo changed the report"
            );
        }
    }
}

/// A host the recognizers look for (here an anchor of a user's recognizer, whose regex reads any
/// NCCL completion error) changes the events of its lines: the memo signs a line without its
/// host only when no anchor can touch the host, so those lines are read as they are.
#[test]
fn a_host_an_anchor_touches_is_read_as_it_is() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("rules.toml");
    std::fs::write(
        &rules,
        r#"[[recognizer]]
id = "site-rack-fault"
kind = "host_platform"
anchors = ["rackfault"]
regex = 'Got completion from peer (?P<peer>\S+)'
severity = "error"
samples = ["rackfault-1:1:2 [0] NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4432> with error 12"]
"#,
    )
    .unwrap();
    let mut text = String::new();
    let mut r = Rng(7);
    for i in 0..3000 {
        let host = ["gpu-a1", "gpu-a2", "rackfault-1", "x-rackfault"][i % 4];
        let (pid, peer) = (r.below(90_000), r.below(250));
        text.push_str(&format!("{host}:{pid}:{pid} [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.{peer}<4432> with error 12, opcode 129, len 0, vendor err 129 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.{peer} hca mlx5_3\n"));
    }
    let p = dir.path().join("nccl.log");
    std::fs::write(&p, text).unwrap();
    let rules = rules.to_str().unwrap();
    let args = ["--max-events-per-kind", "5", "--rules", rules];
    let run = |memo: bool| analyze_with(&p, memo, &args, None);
    let full = run(false);
    assert!(
        full.contains("\"host_platform\""),
        "the user's recognizer gave nothing"
    );
    assert!(run(true) == full, "the memo changed the report");
}
