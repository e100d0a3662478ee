//! Deterministic generator of large, realistic kernel logs for benchmarks: background noise
//! (the real syslog samples in ../shared/noise when present, built-in lines otherwise) with GPU
//! faults injected at fixed intervals.
//!
//! `cargo run --release --example genlog -- OUT.log 256` writes 256 MiB.

use std::io::{BufWriter, Write};

const BUILTIN_NOISE: &[&str] = &[
    "sshd[2211]: Accepted publickey for ops from 10.1.2.3 port 52211 ssh2",
    "systemd[1]: Started Session 4411 of user ops.",
    "CRON[9911]: (root) CMD (run-parts /etc/cron.hourly)",
    "kernel: [ 1234.567890] e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex",
    "kernel: [ 1234.600000] usb 1-1.2: new high-speed USB device number 7 using ehci-pci",
    "systemd-logind[812]: New session 4411 of user ops.",
    "nvidia-persistenced[1403]: device 0000:3b:00.0 - persistence mode enabled.",
    "kernel: [ 1300.000001] EXT4-fs (nvme0n1p2): re-mounted. Opts: errors=remount-ro",
];

const FAULTS: &[&str] = &[
    "kernel: [{up}] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.",
    "kernel: [{up}] NVRM: Xid (PCI:0000:86:00): 48, pid=4242, name=python, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer.",
    "kernel: [{up}] pcieport 0000:3a:00.0: AER: Corrected error received: 0000:3a:00.0",
    "kernel: [{up}] Out of memory: Killed process 4242 (python) total-vm:10000kB, anon-rss:9000kB, file-rss:0kB, shmem-rss:0kB",
    "kernel: [{up}] NVRM: Xid (PCI:0000:9b:00): 119, pid=2024, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU4 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801813 0x4c).",
];

fn noise() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/noise");
    let mut lines = Vec::new();
    // Linux_2k is syslog already; the other samples are wrapped into syslog lines of one host,
    // as a kern.log or messages file would carry them.
    for name in [
        "Linux_2k.log",
        "Thunderbird_2k.log",
        "HPC_2k.log",
        "BGL_2k.log",
    ] {
        if let Ok(t) = std::fs::read_to_string(dir.join(name)) {
            let msgs = t
                .lines()
                .map(|l| l.trim_end_matches('\r'))
                .filter(|l| !l.is_empty());
            for (n, l) in msgs.enumerate() {
                if name == "Linux_2k.log" {
                    lines.push(l.to_string());
                } else {
                    let (h, m, s) = (n % 24, n % 60, (n * 7) % 60);
                    lines.push(format!(
                        "Jan 12 {h:02}:{m:02}:{s:02} gpu-node-01 kernel: {l}"
                    ));
                }
            }
        }
    }
    if lines.is_empty() {
        lines = BUILTIN_NOISE
            .iter()
            .map(|l| format!("Jan 12 03:04:05 gpu-node-01 {l}"))
            .collect();
    }
    lines
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let out = args
        .get(1)
        .cloned()
        .unwrap_or_else(|| "/tmp/faultline-bench.log".into());
    let mib: u64 = args.get(2).and_then(|s| s.parse().ok()).unwrap_or(256);
    let target = mib << 20;
    let noise = noise();
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(&out)?);
    let mut written = 0u64;
    let mut i = 0usize;
    let mut x: u64 = 0x9e3779b97f4a7c15;
    let mut next_fault = 4u64 << 20;
    let mut faults = 0;
    while written < target {
        // xorshift: deterministic choice of noise line
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        let line = if written >= next_fault {
            next_fault += 4 << 20;
            faults += 1;
            let up = format!("{:>6}.{:06}", 1000 + i / 1000, i % 1_000_000);
            format!(
                "Jan 12 03:{:02}:{:02} gpu-node-01 {}",
                (i / 60) % 60,
                i % 60,
                FAULTS[faults % FAULTS.len()].replace("{up}", &up)
            )
        } else {
            noise[(x % noise.len() as u64) as usize].clone()
        };
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
        written += line.len() as u64 + 1;
        i += 1;
    }
    w.flush()?;
    eprintln!("wrote {out}: {written} bytes, {i} lines, {faults} injected faults");
    Ok(())
}
