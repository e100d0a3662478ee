//! Deterministic generator of the storm benchmarks of issue 17:
//!
//! - `storm OUT MiB`: a kernel log of Xid lines from 8 GPUs of one host (a 200 MiB file holds
//!   about 2 M of them: 2 codes on each, 16 keys of the events cap) and an SXid line in 64;
//!   almost every event is past the events cap;
//! - `distinct OUT LINES`: Xid lines from 8 hosts x 1000 bus ids x 32 Xid codes, so that almost
//!   every event has a key of its own and nothing is capped (the events that are kept grow with
//!   the input: judging and reporting must stay linear in them).
//!
//! `cargo run --release --example genstorm -- storm /tmp/faultline-storm-200.log 200`
//! `cargo run --release --example genstorm -- distinct /tmp/faultline-distinct-250k.log 250000`

use std::io::{BufWriter, Write};

/// Xid codes seen in the field (xid-facts.md), with a message of their wording.
const CODES: [(u32, &str); 32] = [
    (13, "Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address"),
    (31, "Ch 00000010, intr 00000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f3a_00000000. Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ"),
    (43, "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x1c001"),
    (45, "Ch 00000010, errorString Preemptive Cleanup, Info 0x0"),
    (48, "An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 3, subpartition 0."),
    (61, "Internal micro-controller breakpoint/warning (PMU halt)"),
    (62, "Internal micro-controller halt"),
    (63, "Row Remapper: New row marked for remapping, reset gpu to activate."),
    (64, "Row Remapper: Failed to remap row"),
    (68, "NVDEC0 Exception: Video processor exception"),
    (69, "Graphics Exception: ChID 0010, Class 0000c797, Offset 00000000, Data 00000000"),
    (74, "NVLink: fatal error detected on link 3(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"),
    (79, "GPU has fallen off the bus."),
    (92, "High single-bit ECC error rate"),
    (94, "Contained: SM (0x1). RST: No, D-RST: No"),
    (95, "Uncontained: FBHUB. RST: Yes, D-RST: No"),
    (109, "Ch 00000008, errorString CTX SWITCH TIMEOUT, Info 0x3c045"),
    (119, "Timeout after 6s of waiting for RPC response from GPU1 GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801813 0x4c)."),
    (120, "GSP task timeout @ pc:0x1d2a3b, task: 1"),
    (121, "C2C link corrected error"),
    (122, "SPI PMU RPC read failure"),
    (123, "SPI PMU RPC write failure"),
    (136, "Link training failed on link 2"),
    (137, "NVLink FLA privilege error"),
    (140, "Unrecovered ECC Error on ENGINE_GR"),
    (143, "GPU initialization failure"),
    (144, "NVLINK: SAW_MVB non-fatal error"),
    (145, "NVLINK: RLW error"),
    (146, "NVLINK: TLW error"),
    (147, "NVLINK: TREX error"),
    (148, "NVLINK: NVLPW_CTRL error"),
    (149, "NETIR error 0x4"),
];

struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

fn stamp(i: u64) -> String {
    let s = i / 50; // 50 lines a second
    format!(
        "Jan {:2} {:02}:{:02}:{:02}",
        12 + s / 86_400,
        (s / 3600) % 24,
        (s / 60) % 60,
        s % 60
    )
}

fn uptime(i: u64) -> String {
    format!("{:>5}.{:06}", 100 + i / 50, (i % 50) * 20_000)
}

fn storm(w: &mut impl Write, mib: u64) -> std::io::Result<(u64, u64)> {
    let target = mib << 20;
    let buses = ["07", "0f", "47", "4e", "87", "90", "b7", "bd"];
    // a storm repeats a few codes: the preemption and context-switch timeouts of a hung job
    // (their recent wording: just the channel)
    let storm = [(43u32, "Ch 00000008"), (45, "Ch 00000010")];
    let mut rng = Rng(0x9e3779b97f4a7c15);
    let (mut written, mut i) = (0u64, 0u64);
    while written < target {
        let r = rng.next();
        let line = if i % 64 == 63 {
            format!(
                "{} gpu-node-01 kernel: [{}] nvidia-nvswitch1: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error (First)",
                stamp(i),
                uptime(i)
            )
        } else {
            let (code, msg) = storm[(r >> 8) as usize % storm.len()];
            format!(
                "{} gpu-node-01 kernel: NVRM: Xid (PCI:0000:{}:00): {code}, pid={}, name=python3, {msg}",
                stamp(i),
                buses[(r % 8) as usize],
                1000 + (r >> 20) % 30_000
            )
        };
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
        written += line.len() as u64 + 1;
        i += 1;
    }
    Ok((written, i))
}

fn distinct(w: &mut impl Write, lines: u64) -> std::io::Result<(u64, u64)> {
    let mut written = 0u64;
    for i in 0..lines {
        // host, bus and code walk their ranges at co-prime strides: every combination comes up
        let host = i % 8;
        let bus = (i / 8) % 1000;
        let (code, msg) = CODES[((i / 8 + i / 8000) % 32) as usize];
        let line = format!(
            "{} gpu-node-{host:02} kernel: [{}] NVRM: Xid (PCI:{:04x}:{:02x}:00): {code}, pid={}, name=python3, {msg}",
            stamp(i),
            uptime(i),
            bus / 250,
            (bus % 250) + 1,
            1000 + i % 30_000
        );
        w.write_all(line.as_bytes())?;
        w.write_all(b"\n")?;
        written += line.len() as u64 + 1;
    }
    Ok((written, lines))
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: genstorm storm OUT MiB | genstorm distinct OUT LINES";
    let (Some(mode), Some(out), Some(n)) = (
        args.get(1),
        args.get(2),
        args.get(3).and_then(|s| s.parse::<u64>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    let (bytes, lines) = match mode.as_str() {
        "storm" => storm(&mut w, n)?,
        "distinct" => distinct(&mut w, n)?,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    };
    w.flush()?;
    eprintln!("wrote {out}: {bytes} bytes, {lines} lines");
    Ok(())
}
