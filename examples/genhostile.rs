//! Deterministic generator of the hostile inputs of issue 37 (findings 5 and 6), measured by
//! `scripts/hostile-bench.sh`:
//!
//! - `hosts OUT N`: N Xid lines, each from a host of its own (every event a key of its own);
//! - `busids OUT N`: N Xid lines of one host, each on a PCI bus id of its own;
//! - `journal OUT MiB [json]`: a journal export (or `-o json` lines) whose middle entry has a
//!   MESSAGE field of MiB mebibytes (binary in the export: NUL bytes and newlines), between
//!   ordinary entries holding an Xid;
//! - `tar OUT N`: a tar of N small members (a kernel line each, one in 1000 an Xid);
//! - `nccl OUT N [info|warn|mix]`: N distinct NCCL lines (`mix`, the default: half `... NCCL INFO comm 0x… rank R nranks M … - Init
//!   COMPLETE`, half `NCCL WARN NET/IB : Got completion from peer …`), with distinct numbers;
//! - `runs OUT MiB`: 60 KB runs of spaces, `1.`, `1:` and `a-` after `NCCL WARN` and
//!   `srun: error:` anchors, in turn, until MiB mebibytes.
//!
//! `cargo run --profile fast --example genhostile -- hosts /tmp/hosts-1m.log 1000000`

use std::io::{BufWriter, Write};

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
    let s = i / 50;
    format!(
        "Mar {:2} {:02}:{:02}:{:02}",
        3 + (s / 86_400) % 25,
        (s / 3600) % 24,
        (s / 60) % 60,
        s % 60
    )
}

fn hosts(w: &mut impl Write, n: u64) -> std::io::Result<()> {
    for i in 0..n {
        writeln!(
            w,
            "{} gpu-n{i:07} kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid={}, name=python, GPU has fallen off the bus.",
            stamp(i),
            1000 + i % 30_000
        )?;
    }
    Ok(())
}

fn busids(w: &mut impl Write, n: u64) -> std::io::Result<()> {
    for i in 0..n {
        writeln!(
            w,
            "{} gpu-node-01 kernel: NVRM: Xid (PCI:{:04x}:{:02x}:{:02x}): 79, pid={}, name=python, GPU has fallen off the bus.",
            stamp(i),
            (i >> 13) & 0xffff,
            (i >> 5) & 0xff,
            i & 0x1f,
            1000 + i % 30_000
        )?;
    }
    Ok(())
}

fn export_entry(w: &mut impl Write, i: u64, message: &str) -> std::io::Result<()> {
    write!(
        w,
        "__CURSOR=s=1;i={i:x}\n__REALTIME_TIMESTAMP={}\n_HOSTNAME=gpu-node-01\n_TRANSPORT=kernel\nSYSLOG_IDENTIFIER=kernel\nMESSAGE={message}\n\n",
        1_710_000_000_000_000u64 + i * 1_000_000
    )
}

const XID: &str =
    "NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.";

fn journal(w: &mut impl Write, mib: u64, json: bool) -> std::io::Result<()> {
    let size = mib << 20;
    let chunk: Vec<u8> = (0..1u32 << 16)
        .map(|i| match i % 97 {
            0 => 0,
            1 => b'\n',
            n => b'a' + (n % 26) as u8,
        })
        .collect();
    for i in 0..3 {
        if json {
            json_entry(w, i, XID)?;
        } else {
            export_entry(w, i, XID)?;
        }
    }
    if json {
        w.write_all(b"{\"__REALTIME_TIMESTAMP\":\"1710000004000000\",\"_HOSTNAME\":\"gpu-node-01\",\"MESSAGE\":\"")?;
        let text: Vec<u8> = chunk
            .iter()
            .map(|&c| if c == 0 || c == b'\n' { b' ' } else { c })
            .collect();
        let mut left = size;
        while left > 0 {
            let n = left.min(text.len() as u64) as usize;
            w.write_all(&text[..n])?;
            left -= n as u64;
        }
        w.write_all(b"\"}\n")?;
    } else {
        w.write_all(b"__CURSOR=s=1;i=ff\n__REALTIME_TIMESTAMP=1710000004000000\n_HOSTNAME=gpu-node-01\nMESSAGE\n")?;
        w.write_all(&size.to_le_bytes())?;
        let mut left = size;
        while left > 0 {
            let n = left.min(chunk.len() as u64) as usize;
            w.write_all(&chunk[..n])?;
            left -= n as u64;
        }
        w.write_all(b"\n\n")?;
    }
    for i in 5..8 {
        if json {
            json_entry(w, i, XID)?;
        } else {
            export_entry(w, i, XID)?;
        }
    }
    Ok(())
}

fn json_entry(w: &mut impl Write, i: u64, message: &str) -> std::io::Result<()> {
    writeln!(
        w,
        "{{\"__REALTIME_TIMESTAMP\":\"{}\",\"_HOSTNAME\":\"gpu-node-01\",\"_TRANSPORT\":\"kernel\",\"MESSAGE\":\"{message}\"}}",
        1_710_000_000_000_000u64 + i * 1_000_000
    )
}

/// One ustar header block for a regular file `name` of `size` bytes.
fn tar_header(name: &str, size: u64) -> [u8; 512] {
    let mut h = [0u8; 512];
    h[..name.len()].copy_from_slice(name.as_bytes());
    h[100..107].copy_from_slice(b"0000644");
    h[108..115].copy_from_slice(b"0001750");
    h[116..123].copy_from_slice(b"0001750");
    h[124..135].copy_from_slice(format!("{size:011o}").as_bytes());
    h[136..147].copy_from_slice(b"14577033000");
    h[156] = b'0';
    h[257..263].copy_from_slice(b"ustar\0");
    h[263..265].copy_from_slice(b"00");
    h[148..156].copy_from_slice(b"        ");
    let sum: u32 = h.iter().map(|&b| b as u32).sum();
    h[148..155].copy_from_slice(format!("{sum:06o}\0").as_bytes());
    h
}

fn tar(w: &mut impl Write, n: u64) -> std::io::Result<()> {
    for i in 0..n {
        let body = if i % 1000 == 7 {
            format!("{} gpu-n{:04} kernel: {XID}\n", stamp(i), i / 1000)
        } else {
            format!(
                "{} gpu-n{:04} kernel: usb 1-1: new high-speed USB device number {i}\n",
                stamp(i),
                i / 1000
            )
        };
        let name = format!("logs/gpu-n{:04}/part-{i:07}.log", i / 1000);
        w.write_all(&tar_header(&name, body.len() as u64))?;
        w.write_all(body.as_bytes())?;
        w.write_all(&vec![0u8; (512 - body.len() % 512) % 512])?;
    }
    w.write_all(&[0u8; 1024])
}

fn nccl(w: &mut impl Write, n: u64, which: &str) -> std::io::Result<()> {
    let mut rng = Rng(0x2545_f491_4f6c_dd1d);
    for i in 0..n {
        let r = rng.next();
        let (host, pid, tid, dev) = (
            format!("gpu-n{:04}", (r >> 40) % 4096),
            1000 + (r >> 8) % 60_000,
            1000 + (r >> 24) % 60_000,
            r % 8,
        );
        let info = match which {
            "info" => true,
            "warn" => false,
            _ => i % 2 == 0,
        };
        if info {
            writeln!(
                w,
                "{host}:{pid}:{tid} [{dev}] NCCL INFO comm 0x{:x} rank {} nranks {} cudaDev {dev} nvmlDev {dev} busId {:x}000 commId 0x{:016x} - Init COMPLETE",
                r >> 16,
                (r >> 3) % 4096,
                4096 + (r >> 50) % 4096,
                (r >> 12) % 256,
                r.rotate_left(17)
            )?;
        } else {
            writeln!(
                w,
                "{host}:{pid}:{tid} [{dev}] transport/net_ib.cc:{} NCCL WARN NET/IB : Got completion from peer 10.{}.{}.{}<{}> with error {}, opcode {}, len {}, vendor err {} (Recv) localGid ::ffff:10.{}.{}.{} remoteGids::ffff:10.{}.{}.{} hca mlx5_{}",
                1000 + r % 1000,
                (r >> 8) % 256,
                (r >> 16) % 256,
                (r >> 24) % 256,
                1024 + (r >> 32) % 60_000,
                (r >> 5) % 20,
                (r >> 9) % 256,
                (r >> 13) % 65_536,
                (r >> 29) % 256,
                (r >> 33) % 256,
                (r >> 41) % 256,
                (r >> 49) % 256,
                (r >> 7) % 256,
                (r >> 15) % 256,
                (r >> 23) % 256,
                r % 8
            )?;
        }
    }
    Ok(())
}

fn runs(w: &mut impl Write, mib: u64) -> std::io::Result<()> {
    let fills: [&[u8]; 4] = [b" ", b"1.", b"1:", b"a-"];
    let heads: [&[u8]; 2] = [b"gpu-node-01:1234:1290 [3] NCCL WARN ", b"srun: error: "];
    let (mut written, mut i) = (0u64, 0usize);
    while written < mib << 20 {
        let head = heads[i % 2];
        let fill = fills[(i / 2) % 4];
        let mut line = head.to_vec();
        while line.len() < 60_000 {
            line.extend_from_slice(fill);
        }
        line.push(b'\n');
        w.write_all(&line)?;
        written += line.len() as u64;
        i += 1;
    }
    Ok(())
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().collect();
    let usage = "usage: genhostile hosts|busids|tar OUT N | nccl OUT N [info|warn|mix] | journal OUT MiB [json] | runs OUT MiB";
    let (Some(mode), Some(out), Some(n)) = (
        args.get(1),
        args.get(2),
        args.get(3).and_then(|s| s.parse::<u64>().ok()),
    ) else {
        eprintln!("{usage}");
        std::process::exit(2);
    };
    let mut w = BufWriter::with_capacity(1 << 20, std::fs::File::create(out)?);
    match mode.as_str() {
        "hosts" => hosts(&mut w, n)?,
        "busids" => busids(&mut w, n)?,
        "journal" => journal(&mut w, n, args.get(4).is_some_and(|a| a == "json"))?,
        "tar" => tar(&mut w, n)?,
        "nccl" => nccl(&mut w, n, args.get(4).map_or("mix", |a| a.as_str()))?,
        "runs" => runs(&mut w, n)?,
        _ => {
            eprintln!("{usage}");
            std::process::exit(2);
        }
    }
    w.flush()
}
