//! Micro-benchmarks of the hot paths: the line prefilter, newline counting, the prefix readers,
//! and the whole per-buffer scan. Run with `cargo bench`.

use faultline::events::RecognizerSet;
use std::sync::OnceLock;

fn main() {
    divan::main();
}

/// 8 MiB of syslog-shaped kernel log with a GPU fault every 64 KiB.
fn buffer() -> &'static [u8] {
    static BUF: OnceLock<Vec<u8>> = OnceLock::new();
    BUF.get_or_init(|| {
        let noise = [
            "Jan 12 03:04:05 gpu-node-01 kernel: [ 1234.567890] e1000e 0000:00:1f.6 eno1: NIC Link is Up 1000 Mbps Full Duplex",
            "Jan 12 03:04:05 gpu-node-01 sshd[2211]: Accepted publickey for ops from 10.1.2.3 port 52211 ssh2",
            "Jan 12 03:04:06 gpu-node-01 systemd[1]: Started Session 4411 of user ops.",
            "Jan 12 03:04:07 gpu-node-01 CRON[9911]: (root) CMD (run-parts /etc/cron.hourly)",
        ];
        let fault = "Jan 12 03:04:08 gpu-node-01 kernel: [ 1240.000001] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.";
        let mut v = Vec::with_capacity(8 << 20);
        let mut i = 0;
        while v.len() < 8 << 20 {
            let l = if i % 600 == 599 { fault } else { noise[i % noise.len()] };
            v.extend_from_slice(l.as_bytes());
            v.push(b'\n');
            i += 1;
        }
        v
    })
}

fn recognizers() -> &'static RecognizerSet {
    static SET: OnceLock<RecognizerSet> = OnceLock::new();
    SET.get_or_init(|| RecognizerSet::load(&[]).expect("recognizers"))
}

#[divan::bench]
fn prefilter_find_all(b: divan::Bencher) {
    let buf = buffer();
    let set = recognizers();
    b.counter(divan::counter::BytesCount::new(buf.len()))
        .bench(|| set.prefilter.starts(divan::black_box(buf)).len());
}

#[divan::bench]
fn count_newlines(b: divan::Bencher) {
    let buf = buffer();
    b.counter(divan::counter::BytesCount::new(buf.len()))
        .bench(|| bytecount::count(divan::black_box(buf), b'\n'));
}

#[divan::bench]
fn quick_shape_every_line(b: divan::Bencher) {
    let buf = buffer();
    b.counter(divan::counter::BytesCount::new(buf.len()))
        .bench(|| {
            divan::black_box(buf)
                .split(|&c| c == b'\n')
                .filter(|l| faultline::formats::quick_shape(l).is_some())
                .count()
        });
}

#[divan::bench(args = [
    "[74889.644138] NVRM: Xid (PCI:0000:02:00): 79, GPU has fallen off the bus.",
    "Nov 15 12:43:10 node kernel: [ 7613.977841] NVRM: Xid (PCI:0000:03:00): 13, pid=10635",
    "2025-01-21T04:41:44,283302+00:00 NVRM: Xid (PCI:0000:48:00): 74",
    "[rank0]:[E321 02:07:08.408271257 ProcessGroupNCCL.cpp:607] [Rank 0] Watchdog caught",
    "node1:178:828 [0] NCCL INFO comm 0x55 rank 16 nranks 32 cudaDev 0 busId 1b000 - Init COMPLETE",
])]
fn parse_head(line: &str) -> bool {
    faultline::formats::parse_head(divan::black_box(line.as_bytes()))
        .prefix
        .is_some()
}

#[divan::bench]
fn parse_xid_line() -> bool {
    faultline::events::xid::parse_xid(divan::black_box("NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.")).is_ok()
}

#[divan::bench]
fn scan_buffer_one_thread(b: divan::Bencher) {
    let buf = buffer();
    let set = recognizers();
    b.counter(divan::counter::BytesCount::new(buf.len()))
        .bench(|| {
            faultline::scan::scan_buffer(
                divan::black_box(buf),
                set,
                false,
                faultline::scan::DEFAULT_EVENTS_PER_KIND,
            )
            .events
            .len()
        });
}
