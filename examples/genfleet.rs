//! Deterministic generator of a fleet archive for `faultline scan` benchmarks: hundreds of
//! nodes of 8 GPUs, captured as folders per host (kern.log plain, .gz or .zst, plus an
//! nvidia-smi dump), `.tgz` and `.tar.zst` archives of one node's logs, and
//! `nvidia-bug-report-*.log.gz` files; a few faulty nodes (Xid 79 with AER, ECC DBE with row
//! remapping, NVLink, GSP timeouts clustered on one driver version, host OOM), repeat
//! offenders (one GPU failing in two boots, another in two bug reports a fortnight apart) and
//! two broken bundles (a truncated archive, a corrupt bug report).
//!
//! `cargo run --release --example genfleet -- OUT_DIR [NODES] [KIB_PER_NODE]` (400 nodes of
//! 512 KiB of kernel log each by default). The same arguments give the same bytes. Stdout has
//! one `planted: HOST CODE` line per planted fault (`xid:79`, `xid:48`, `xid:74`, `xid:119`,
//! `host_oom`) of the readable bundles, which `scripts/slurm-e2e.sh` checks the scan finds.

use flate2::{Compression, GzBuilder};
use std::fmt::Write as _;
use std::io::Write as _;
use std::path::Path;
use std::time::{Duration, UNIX_EPOCH};

/// 2026-03-01T00:00:00Z.
const BASE: i64 = 1_772_323_200;
const DAY: i64 = 86_400;
const BUSES: [&str; 8] = ["18", "2a", "3a", "5d", "9a", "ab", "ba", "db"];
const DRIVER_DATE: &str = "Tue Mar  5 22:42:18 UTC 2024";

/// splitmix64: a fixed, seedable generator.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

#[derive(Clone, Copy, PartialEq)]
enum Layout {
    FolderPlain,
    FolderGz,
    FolderZst,
    Tgz,
    TarZst,
    BugReport,
}

#[derive(Clone, Copy)]
enum Fault {
    FellOff,
    Dbe,
    NvLink,
    Gsp,
    HostOom,
}

struct Boot {
    start: i64,
    faults: Vec<(i64, usize, Fault)>,
}

struct Node {
    idx: usize,
    name: String,
    driver: &'static str,
    boots: Vec<Boot>,
    capture: i64,
}

fn serial(idx: usize, gpu: usize) -> u64 {
    1_654_022_000_000 + (idx * 8 + gpu) as u64
}

fn uuid(idx: usize, gpu: usize) -> String {
    let mut r = Rng((idx * 8 + gpu) as u64 ^ 0x5eed);
    let (a, b, c, d, e) = (r.next(), r.next(), r.next(), r.next(), r.next());
    format!(
        "GPU-{:08x}-{:04x}-{:04x}-{:04x}-{:012x}",
        a as u32,
        b as u16,
        c as u16,
        d as u16,
        e & 0xffff_ffff_ffff
    )
}

fn driver_of(idx: usize) -> &'static str {
    if idx % 7 == 3 {
        "550.54.15"
    } else if idx % 11 == 5 {
        "550.90.07"
    } else {
        "535.161.08"
    }
}

fn plan(idx: usize) -> Node {
    let driver = driver_of(idx);
    let start = BASE + (idx as i64 % 13) * 5 * 3600 + idx as i64 * 7;
    let gpu = idx % 8;
    let twice = idx % 25 == 7 && idx % 2 == 1;
    let mut boots = vec![Boot {
        start,
        faults: Vec::new(),
    }];
    if twice {
        boots.push(Boot {
            start: start + 4 * DAY,
            faults: Vec::new(),
        });
    }
    let at = |b: &Boot, k: i64| b.start + DAY + k * 3571 + idx as i64 * 13 % 3600;
    if idx % 25 == 7 {
        for b in boots.iter_mut() {
            let t = at(b, 1);
            b.faults.push((t, gpu, Fault::FellOff));
        }
    }
    let b = &mut boots[0];
    if idx % 31 == 11 {
        b.faults.push((at(b, 3), gpu, Fault::Dbe));
    }
    if idx % 37 == 13 {
        b.faults.push((at(b, 5), (gpu + 1) % 8, Fault::NvLink));
    }
    if driver == "550.54.15" && idx % 2 == 1 {
        b.faults.push((at(b, 7), (gpu + 2) % 8, Fault::Gsp));
    }
    if idx % 41 == 17 {
        b.faults.push((at(b, 9), 0, Fault::HostOom));
    }
    let capture = boots.last().map_or(start, |b| b.start) + 3 * DAY + 600;
    Node {
        idx,
        name: format!("node-{idx:04}"),
        driver,
        boots,
        capture,
    }
}

fn stamp(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%b %e %H:%M:%S").to_string())
        .unwrap_or_default()
}

fn ctime(t: i64) -> String {
    chrono::DateTime::from_timestamp(t, 0)
        .map(|d| d.format("%a %b %e %H:%M:%S UTC %Y").to_string())
        .unwrap_or_default()
}

/// The key under which a scan's bundle line counts the fault (`counts`).
fn planted_code(f: Fault) -> &'static str {
    match f {
        Fault::FellOff => "xid:79",
        Fault::Dbe => "xid:48",
        Fault::NvLink => "xid:74",
        Fault::Gsp => "xid:119",
        Fault::HostOom => "host_oom",
    }
}

/// The kernel lines of one fault, for a GPU of a node.
fn fault_lines(n: &Node, gpu: usize, f: Fault) -> Vec<String> {
    let bus = BUSES[gpu];
    let pci = format!("PCI:0000:{bus}:00");
    let ident = vec![
        format!("NVRM: GPU at {pci}: {}", uuid(n.idx, gpu)),
        format!("NVRM: GPU Board Serial Number: {}", serial(n.idx, gpu)),
    ];
    let mut v = Vec::new();
    match f {
        Fault::FellOff => {
            v.push(format!("pcieport 0000:{bus:.1}0:01.0: AER: Corrected error received: 0000:{bus:.1}0:01.0"));
            v.extend(ident);
            v.push(format!("NVRM: Xid ({pci}): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus."));
            v.push(format!("NVRM: GPU 0000:{bus}:00.0: GPU has fallen off the bus."));
        }
        Fault::Dbe => {
            v.extend(ident);
            v.push(format!("NVRM: Xid ({pci}): 48, pid='<unknown>', name=<unknown>, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at physAddr 0x3a1c5b2e0 partition 9, subpartition 1."));
            v.push(format!("NVRM: Xid ({pci}): 63, pid='<unknown>', name=<unknown>, Row Remapper: New row (0x00000003a1c5b2e0) marked for remapping, reset gpu to activate."));
        }
        Fault::NvLink => {
            v.extend(ident);
            v.push(format!("NVRM: Xid ({pci}): 74, pid=71322, name=pt_main_thread, NVLink: fatal error detected on link 5(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)"));
        }
        Fault::Gsp => {
            v.extend(ident);
            v.push(format!("NVRM: Xid ({pci}): 119, pid=2024, name=nvidia-smi, Timeout after 6s of waiting for RPC response from GPU{gpu} GSP! Expected function 76 (GSP_RM_CONTROL) (0x20801813 0x4c)."));
        }
        Fault::HostOom => v.push("Out of memory: Killed process 4242 (python) total-vm:1031000000kB, anon-rss:1029183200kB, file-rss:0kB, shmem-rss:0kB".into()),
    }
    v
}

fn noise(r: &mut Rng, n: &Node) -> (bool, String) {
    let a = r.below(250);
    let b = r.below(250);
    let m = match r.below(8) {
        0 => format!("e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex, Flow Control: Rx/Tx (seq {a}{b})"),
        1 => format!("[UFW BLOCK] IN=eno1 OUT= MAC=ff:ff:ff:ff:ff:ff:3c:ec:ef:46:{a:02x}:{b:02x}:08:00 SRC=10.12.{a}.{b} DST=10.12.255.255 LEN=262 PROTO=UDP SPT=137 DPT=137 LEN=242"),
        2 => format!("EXT4-fs (nvme0n1p{}): re-mounted. Opts: errors=remount-ro", a % 4),
        3 => return (false, format!("systemd[1]: Started Session {} of user ops.", a * 250 + b)),
        4 => return (false, format!("CRON[{}]: (root) CMD (run-parts /etc/cron.hourly)", 9000 + a * 10 + b % 10)),
        5 => return (false, format!("sshd[{}]: Accepted publickey for ops from 10.1.{a}.{b} port {} ssh2", 2000 + a, 40000 + b * 97)),
        6 => return (false, format!("nvidia-persistenced[1403]: device 0000:{}:00.0 - persistence mode enabled.", BUSES[(a % 8) as usize])),
        _ => format!("usb 1-1.{}: new high-speed USB device number {b} using ehci-pci on {}", a % 4, n.name),
    };
    (true, m)
}

fn boot_lines(n: &Node) -> Vec<(i64, String)> {
    vec![
        (0, "Linux version 5.15.0-105-generic (buildd@lcy02-amd64-103) (gcc (Ubuntu 11.4.0-1ubuntu1~22.04) 11.4.0, GNU ld (GNU Binutils for Ubuntu) 2.38) #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024".into()),
        (0, "Command line: BOOT_IMAGE=/vmlinuz-5.15.0-105-generic ro console=tty0 console=ttyS0,115200n8 intel_iommu=on iommu=pt".into()),
        (6_289_613, format!("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  {}  {DRIVER_DATE}", n.driver)),
        (6_629_613, "nvidia-uvm: Loaded the UVM driver, major device number 509.".into()),
    ]
}

/// One boot's lines as (wall second, uptime µs or None for a non-kernel line, message).
fn boot_events(
    r: &mut Rng,
    n: &Node,
    b: &Boot,
    end: i64,
    budget: usize,
) -> Vec<(i64, Option<i64>, String)> {
    let mut v: Vec<(i64, Option<i64>, String)> = boot_lines(n)
        .into_iter()
        .map(|(up, m)| (b.start + up / 1_000_000, Some(up), m))
        .collect();
    let span = (end - b.start - 60).max(1);
    let count = budget / 120;
    for i in 0..count {
        let t = b.start + 60 + span * i as i64 / count.max(1) as i64;
        let (kernel, m) = noise(r, n);
        let up = kernel.then(|| (t - b.start) * 1_000_000 + r.below(1_000_000) as i64);
        v.push((t, up, m));
    }
    for &(t, gpu, f) in &b.faults {
        for (k, m) in fault_lines(n, gpu, f).into_iter().enumerate() {
            v.push((
                t,
                Some((t - b.start) * 1_000_000 + 402_117 + k as i64 * 19),
                m,
            ));
        }
    }
    v.sort_by_key(|(t, up, _)| (*t, up.unwrap_or(0)));
    v
}

fn up_text(up: i64) -> String {
    format!("[{:>5}.{:06}]", up / 1_000_000, up % 1_000_000)
}

/// `kern.log` in syslog form over every boot, `budget` bytes of noise in all.
fn kern_log(n: &Node, budget: usize) -> String {
    let mut r = Rng(n.idx as u64);
    let mut s = String::with_capacity(budget + 4096);
    for (i, b) in n.boots.iter().enumerate() {
        let end = n.boots.get(i + 1).map_or(n.capture, |x| x.start - 300);
        for (t, up, m) in boot_events(&mut r, n, b, end, budget / n.boots.len()) {
            match up {
                Some(u) => writeln!(s, "{} {} kernel: {} {m}", stamp(t), n.name, up_text(u)),
                None => writeln!(s, "{} {} {m}", stamp(t), n.name),
            }
            .ok();
        }
    }
    s
}

fn smi_dump(n: &Node) -> String {
    let mut s = format!(
        "\n==============NVSMI LOG==============\n\nTimestamp                                 : {}\nDriver Version                            : {}\nCUDA Version                              : 12.4\n\nAttached GPUs                             : 8\n",
        ctime(n.capture), n.driver
    );
    for (g, bus) in BUSES.iter().enumerate() {
        let _ = write!(
            s,
            "GPU 00000000:{}:00.0\n    Product Name                          : NVIDIA H100 80GB HBM3\n    Serial Number                         : {}\n    GPU UUID                              : {}\n    VBIOS Version                         : 96.00.89.00.01\n    PCI\n        Bus Id                            : 00000000:{}:00.0\n\n",
            bus.to_uppercase(), serial(n.idx, g), uuid(n.idx, g), bus.to_uppercase()
        );
    }
    s
}

fn bug_report(n: &Node, budget: usize) -> String {
    let sep = "____________________________________________";
    let mut s = format!("{sep}\n\nStart of NVIDIA bug report log file.  Please include this file, along\nwith a detailed description of your problem.\n\nnvidia-bug-report.sh Version: 34380455\n\nDate: {}\nuname: Linux {} 5.15.0-105-generic #115-Ubuntu SMP Mon Apr 15 09:52:04 UTC 2024 x86_64 x86_64 x86_64 GNU/Linux\ncommand line flags: \n\n",
        ctime(n.capture), n.name);
    let _ = write!(s, "{sep}\n\n*** /proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX x86_64 Kernel Module  {}  {DRIVER_DATE}\n\n", n.driver);
    let _ = write!(
        s,
        "{sep}\n\nScanning kernel log files for NVIDIA kernel messages:\n  /var/log/kern.log:\n"
    );
    let klog = kern_log(n, 0);
    for l in klog.lines().filter(|l| l.contains("NVRM")) {
        let _ = writeln!(s, "{l}");
    }
    let _ = write!(s, "\n{sep}\n\ndmesg:\n");
    let mut r = Rng(n.idx as u64 ^ 0xd1e5);
    let last = n.boots.last().expect("a node has a boot");
    for (_, up, m) in boot_events(&mut r, n, last, n.capture, budget) {
        if let Some(u) = up {
            let _ = writeln!(s, "{} {m}", up_text(u));
        }
    }
    let _ = write!(
        s,
        "\n{sep}\n\n/usr/bin/nvidia-smi --query\n{}\n{sep}\n\nEnd of NVIDIA bug report log file.\n",
        smi_dump(n)
    );
    s
}

fn gz(data: &[u8]) -> Vec<u8> {
    let mut e = GzBuilder::new()
        .mtime(0)
        .write(Vec::new(), Compression::new(6));
    e.write_all(data).expect("gzip into memory");
    e.finish().expect("gzip into memory")
}

fn zst(data: &[u8]) -> Vec<u8> {
    zstd::stream::encode_all(data, 3).expect("zstd into memory")
}

fn tar(members: &[(String, Vec<u8>)], mtime: i64) -> Vec<u8> {
    let mut b = tar::Builder::new(Vec::new());
    for (name, data) in members {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_mtime(mtime as u64);
        h.set_entry_type(tar::EntryType::Regular);
        b.append_data(&mut h, name, &data[..])
            .expect("tar into memory");
    }
    b.into_inner().expect("tar into memory")
}

/// Writes a file and sets its modification time (syslog stamps take their year from it).
fn put(path: &Path, data: &[u8], mtime: i64) -> std::io::Result<u64> {
    if let Some(d) = path.parent() {
        std::fs::create_dir_all(d)?;
    }
    std::fs::write(path, data)?;
    let f = std::fs::File::options().write(true).open(path)?;
    f.set_modified(UNIX_EPOCH + Duration::from_secs(mtime as u64))?;
    Ok(data.len() as u64)
}

fn write_node(out: &Path, n: &Node, layout: Layout, budget: usize) -> std::io::Result<u64> {
    let host = out.join("hosts").join(&n.name);
    let t = n.capture;
    let name = &n.name;
    Ok(match layout {
        Layout::FolderPlain => {
            put(&host.join("kern.log"), kern_log(n, budget).as_bytes(), t)?
                + put(&host.join("nvidia-smi.txt"), smi_dump(n).as_bytes(), t)?
        }
        Layout::FolderGz => put(
            &host.join("kern.log.gz"),
            &gz(kern_log(n, budget).as_bytes()),
            t,
        )?,
        Layout::FolderZst => put(
            &host.join("kern.log.zst"),
            &zst(kern_log(n, budget).as_bytes()),
            t,
        )?,
        Layout::Tgz | Layout::TarZst => {
            let members = vec![
                (
                    format!("{name}/var/log/kern.log"),
                    kern_log(n, budget).into_bytes(),
                ),
                (format!("{name}/nvidia-smi-q.txt"), smi_dump(n).into_bytes()),
            ];
            let raw = tar(&members, t);
            if layout == Layout::Tgz {
                put(
                    &out.join("archives").join(format!("{name}.tgz")),
                    &gz(&raw),
                    t,
                )?
            } else {
                put(
                    &out.join("archives").join(format!("{name}.tar.zst")),
                    &zst(&raw),
                    t,
                )?
            }
        }
        Layout::BugReport => {
            let day = 11 + n.idx % 3;
            let p = out
                .join("bug-reports")
                .join(format!("2026-03-{day:02}"))
                .join(format!("nvidia-bug-report-{name}.log.gz"));
            put(&p, &gz(bug_report(n, budget).as_bytes()), t)?
        }
    })
}

fn main() -> std::io::Result<()> {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some(out) = args.first() else {
        eprintln!("usage: genfleet OUT_DIR [NODES] [KIB_PER_NODE]");
        std::process::exit(2);
    };
    let nodes: usize = args.get(1).and_then(|x| x.parse().ok()).unwrap_or(400);
    let budget = args
        .get(2)
        .and_then(|x| x.parse::<usize>().ok())
        .unwrap_or(512)
        * 1024;
    let out = Path::new(out);
    if out.exists() {
        std::fs::remove_dir_all(out)?;
    }
    const LAYOUTS: [Layout; 6] = [
        Layout::FolderPlain,
        Layout::FolderGz,
        Layout::FolderZst,
        Layout::Tgz,
        Layout::TarZst,
        Layout::BugReport,
    ];
    let (mut bytes, mut bundles, mut faulty) = (0u64, 0usize, Vec::new());
    for idx in 1..=nodes {
        let n = plan(idx);
        bytes += write_node(out, &n, LAYOUTS[idx % 6], budget)?;
        bundles += 1;
        if n.boots.iter().any(|b| !b.faults.is_empty()) {
            faulty.push(n.name.clone());
        }
        for (_, _, f) in n.boots.iter().flat_map(|b| &b.faults) {
            println!("planted: {} {}", n.name, planted_code(*f));
        }
        if idx % 31 == 11 {
            // captured again a fortnight later: the same GPU fails again, a second bundle
            let gpu = idx % 8;
            let start = BASE + 20 * DAY + idx as i64 * 7;
            let again = Node {
                boots: vec![Boot {
                    start,
                    faults: vec![(start + DAY + 1234, gpu, Fault::Dbe)],
                }],
                capture: start + 2 * DAY,
                ..plan(idx)
            };
            let p = out
                .join("bug-reports/2026-03-28")
                .join(format!("nvidia-bug-report-{}.log.gz", again.name));
            bytes += put(
                &p,
                &gz(bug_report(&again, budget / 4).as_bytes()),
                again.capture,
            )?;
            bundles += 1;
            println!("planted: {} {}", again.name, planted_code(Fault::Dbe));
            println!(
                "repeat offender: {} GPU serial {} (two bundles)",
                again.name,
                serial(idx, gpu)
            );
        }
        if idx % 25 == 7 && idx % 2 == 1 {
            println!(
                "repeat offender: {} GPU serial {} (two boots)",
                n.name,
                serial(idx, idx % 8)
            );
        }
    }
    // two broken bundles: a truncated archive and a corrupt bug report
    let n = plan(9001);
    let raw = tar(
        &[("var/log/kern.log".into(), kern_log(&n, budget).into_bytes())],
        n.capture,
    );
    let cut = gz(&raw);
    bytes += put(
        &out.join("archives/node-9001.tgz"),
        &cut[..cut.len() / 2],
        n.capture,
    )?;
    let mut junk = gz(b"Start of NVIDIA bug report log file.\n");
    junk.truncate(12);
    junk.extend((0..4096u32).map(|i| (i.wrapping_mul(2_654_435_761) >> 13) as u8));
    let p = out.join("bug-reports/2026-03-12/nvidia-bug-report-node-9002.log.gz");
    bytes += put(&p, &junk, BASE + 11 * DAY)?;
    bundles += 2;
    println!(
        "{} bundles ({} nodes, {} faulty, 2 broken), {:.1} MB on disk in {}",
        bundles,
        nodes,
        faulty.len(),
        bytes as f64 / 1e6,
        out.display()
    );
    Ok(())
}
