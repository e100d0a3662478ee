//! Issue 37, finding 6: each recognizer's cost per byte is bounded. A 60 KB run of spaces, `1.`,
//! `1:` or `a-` after `NCCL WARN ` or `srun: error: ` was read whole by each of the fifteen-odd
//! recognizers owning the anchor (their regexes computing captures over a match as long as the
//! line, their exclusions and the NCCL tables searching all of it), at 3.4-20 MB/s. Now each
//! recognizer reads a window of at most `RECORD_WINDOW` bytes around its first anchor: checked
//! here on the bytes the recognizers were given (`recognizer_bytes`), not on time. The speed is
//! measured by `scripts/hostile-bench.sh` (row `runs`).

use faultline::events::{recognizer_bytes, RecognizerSet, RECORD_WINDOW};
use faultline::scan::{scan_buffer, DEFAULT_EVENTS_PER_KIND};

const HEADS: [&str; 2] = ["gpu-node-01:1234:1290 [3] NCCL WARN ", "srun: error: "];
const FILLS: [&str; 4] = [" ", "1.", "1:", "a-"];

fn line(head: &str, fill: &str, tail: &str) -> String {
    let mut l = head.to_string();
    while l.len() < 60_000 {
        l.push_str(fill);
    }
    l.push_str(tail);
    l.push('\n');
    l
}

/// The bytes the recognizers read while scanning `text` (on this thread: a small buffer is
/// scanned without the pool), and the kinds of its events.
fn scan(set: &RecognizerSet, text: &str) -> (u64, Vec<&'static str>) {
    let before = recognizer_bytes();
    let out = scan_buffer(text.as_bytes(), set, false, DEFAULT_EVENTS_PER_KIND);
    let kinds = out.events.iter().map(|e| e.draft.kind).collect();
    (recognizer_bytes() - before, kinds)
}

#[test]
fn recognizers_read_a_bounded_window_of_a_long_record() {
    let set = RecognizerSet::load(&[]).unwrap();
    for head in HEADS {
        for fill in FILLS {
            let text = line(head, fill, "");
            let owners = set.owners_in(&text).len() as u64;
            assert!(owners > 0, "{head:?}");
            let (read, _) = scan(&set, &text);
            // before: each owner read the whole 60 KB record (about 15 x 60 KB for NCCL WARN)
            assert!(
                read <= owners * RECORD_WINDOW as u64,
                "{head:?} + {fill:?}: {owners} recognizers read {read} bytes"
            );
            assert!(read * 8 < owners * text.len() as u64, "{head:?} + {fill:?}");
        }
    }
}

#[test]
fn a_long_record_gives_the_events_of_its_head_and_of_a_late_anchor() {
    let set = RecognizerSet::load(&[]).unwrap();
    let warn = "gpu-node-01:1234:1290 [3] transport/net_ib.cc:1951 NCCL WARN NET/IB : Got completion from peer 10.2.3.4<5555> with error 12, opcode 0, len 0, vendor err 129 (Recv) localGid ::ffff:10.1.1.1 remoteGids::ffff:10.2.3.4 hca mlx5_3";
    let (_, short) = scan(&set, &format!("{warn}\n"));
    assert!(short.contains(&"nccl_error"), "{short:?}");
    for fill in FILLS {
        let (_, long) = scan(&set, &line(warn, fill, ""));
        assert_eq!(long, short, "{fill:?}");
    }
    // an anchor past 30 KB of other text is still read, through the window around it
    let late = format!(
        "{}NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python, GPU has fallen off the bus.\n",
        "x ".repeat(15_000)
    );
    let (_, kinds) = scan(&set, &late);
    assert!(!kinds.is_empty(), "{kinds:?}");
}

#[test]
fn a_record_is_not_read_again_for_a_kind_it_gave_already() {
    // the verbs parser gives the nccl_error of an IB completion; the IB family's regex (the same
    // kind, dropped by the record's one event per kind) is not run after it: the scan reads the
    // record once less than every owner run in turn (as `probe` runs them), with the same events
    let set = RecognizerSet::load(&[]).unwrap();
    let warn = "gpu-n3112:53995:51410 [7] transport/net_ib.cc:1951 NCCL WARN NET/IB : Got completion from peer 10.227.168.234<55595> with error 7, opcode 113, len 21831, vendor err 95 (Recv) localGid ::ffff:10.5.20.182 remoteGids::ffff:10.199.81.213 hca mlx5_7";
    let (scanned, kinds) = scan(&set, &format!("{warn}\n"));
    let before = recognizer_bytes();
    let probed = set.probe(warn);
    let every = recognizer_bytes() - before;
    let body = warn.len() - warn.find("transport/").unwrap();
    assert!(scanned + body as u64 <= every, "{scanned} {every}");
    assert_eq!(kinds, ["nccl_error", "ib_link"]);
    assert!(probed.iter().any(|d| d.recognizer() == "nccl-ib-family"));
}
