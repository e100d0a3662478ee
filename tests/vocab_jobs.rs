//! Coverage of the job-log emitters' vocabularies (../shared/vocab): every row of the NCCL WARN,
//! verbs, PyTorch c10d and Slurm tables is rendered into a real-shaped line (runtime prefix,
//! plausible values for the format specifiers) and scanned; each becomes a specific event, a
//! generic one, a benign mark of the data, or nothing. Coverage is printed per family and must
//! stay at or above the floors below (raise them, never lower them).

use faultline::events::RecognizerSet;
use faultline::scan::scan_buffer;
use faultline::Knowledge;
use std::collections::BTreeMap;
use std::path::Path;

/// What one rendered line became.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum Outcome {
    Specific,
    Generic,
    Benign,
    Nothing,
}

/// Floors, in percent of the rows that name an error: (table, specific+generic+benign, specific).
const FLOORS: [(&str, u32, u32); 4] = [
    ("nccl-warn-unfiltered.tsv", 100, 38),
    ("ibverbs.tsv", 100, 100),
    ("pytorch-c10d.tsv", 46, 33),
    ("slurm.tsv", 29, 29),
];

fn vocab_dir() -> Option<std::path::PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vocab");
    d.is_dir().then_some(d)
}

/// Fills printf and `{}` specifiers with plausible values.
fn render(fmt: &str) -> String {
    let fmt = fmt.replace("\\n", " ").replace("\\\"", "\"");
    let mut out = String::new();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '%' if matches!(chars.peek(), Some('p')) => {
                chars.next();
                match chars.peek() {
                    Some('s') => {
                        chars.next();
                        out.push_str("StepId=12.0");
                    }
                    Some('J') => {
                        chars.next();
                        out.push_str("JobId=12");
                    }
                    _ => out.push_str("0x55d0c0"),
                }
            }
            '%' => {
                let mut spec = String::new();
                while let Some(&n) = chars.peek() {
                    chars.next();
                    spec.push(n);
                    if n.is_ascii_alphabetic() && !matches!(n, 'l' | 'z' | 'h' | 'j' | 't') {
                        break;
                    }
                    if n == '%' {
                        break;
                    }
                }
                out.push_str(match spec.chars().last() {
                    Some('d' | 'u' | 'i') => "3",
                    Some('x' | 'X') => "1f",
                    Some('p') => "0x55d0c0",
                    Some('s') => "mlx5_0",
                    Some('m') => "Connection reset by peer",
                    Some('f' | 'g') => "1.5",
                    Some('%') => "%",
                    _ => "",
                });
            }
            '{' => {
                let mut name = String::new();
                for n in chars.by_ref() {
                    if n == '}' {
                        break;
                    }
                    name.push(n);
                }
                out.push_str(if name.is_empty() { "3" } else { "ibv_poll_cq" });
            }
            _ => out.push(c),
        }
    }
    out
}

fn rows(dir: &Path, file: &str) -> Vec<Vec<String>> {
    let text = std::fs::read_to_string(dir.join(file)).unwrap_or_default();
    text.lines()
        .skip(2)
        .map(|l| l.split('\t').map(str::to_string).collect())
        .collect()
}

fn outcome(set: &RecognizerSet, line: &str) -> Outcome {
    let buf = format!("{line}\n");
    let out = scan_buffer(buf.as_bytes(), set, false, 1000);
    let ids: Vec<&str> = out
        .events
        .iter()
        .map(|e| e.draft.recognizer.as_str())
        .collect();
    if ids.iter().any(|id| !set.is_generic_id(id)) {
        Outcome::Specific
    } else if !ids.is_empty() {
        Outcome::Generic
    } else if set.benign_for(line).is_some() {
        Outcome::Benign
    } else {
        Outcome::Nothing
    }
}

/// Words of a row that names a failure (the tables also hold configuration and progress texts).
fn names_error(s: &str) -> bool {
    let l = s.to_ascii_lowercase();
    [
        "error",
        "fail",
        "timeout",
        "timed out",
        "abort",
        "exceed",
        "cancel",
        "kill",
        "oom",
        "signal",
        "exit",
        "terminat",
        "fatal",
        "catastrophic",
    ]
    .iter()
    .any(|w| l.contains(w))
}

struct Tally {
    by_family: BTreeMap<String, [u32; 4]>,
    misses: Vec<String>,
}

impl Tally {
    fn new() -> Tally {
        Tally {
            by_family: BTreeMap::new(),
            misses: Vec::new(),
        }
    }
    fn add(&mut self, family: &str, o: Outcome, line: &str) {
        let slot = self.by_family.entry(family.to_string()).or_default();
        slot[o as usize] += 1;
        if o == Outcome::Nothing && self.misses.len() < 15 {
            self.misses.push(line.to_string());
        }
    }
    /// Prints the figures; returns (covered %, specific %).
    fn report(&self, table: &str) -> (u32, u32) {
        let mut all = [0u32; 4];
        for (f, c) in &self.by_family {
            let n: u32 = c.iter().sum();
            eprintln!(
                "{table} {f:<20} rows {n:>4}  specific {:>4}  generic {:>4}  benign {:>4}  none {:>4}",
                c[0], c[1], c[2], c[3]
            );
            for i in 0..4 {
                all[i] += c[i];
            }
        }
        let n: u32 = all.iter().sum::<u32>().max(1);
        let covered = (all[0] + all[1] + all[2]) * 100 / n;
        let specific = all[0] * 100 / n;
        eprintln!("{table}: {n} rows naming an error, covered {covered}%, specific {specific}%");
        for m in &self.misses {
            eprintln!("  none: {m}");
        }
        (covered, specific)
    }
}

fn nccl(set: &RecognizerSet, dir: &Path) -> Tally {
    let mut t = Tally::new();
    for r in rows(dir, "nccl-warn-unfiltered.tsv") {
        let (Some(file), Some(line), Some(fmt)) = (r.first(), r.get(1), r.get(4)) else {
            continue;
        };
        let short = file.trim_start_matches("src/");
        let family = short.split('/').next().unwrap_or(short);
        let text = format!(
            "node1:1234:5678 [0] {short}:{line} NCCL WARN {}",
            render(fmt)
        );
        t.add(family, outcome(set, &text), &text);
    }
    t
}

fn verbs(set: &RecognizerSet, dir: &Path) -> Tally {
    let mut t = Tally::new();
    for r in rows(dir, "ibverbs.tsv") {
        let (Some(kind), Some(value), Some(name), Some(text)) =
            (r.first(), r.get(1), r.get(2), r.get(3))
        else {
            continue;
        };
        let lines = if kind == "wc_status" {
            vec![
                format!("node1:1:2 [0] transport/net_ib/p2p.cc:1 NCCL WARN NET/IB: Got completion from peer 10.0.0.2<4000> with status={name}({value}) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0"),
                format!("node1:1:2 [0] transport/net_ib.cc:1 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<4000> with error {value}, opcode 0, len 0, vendor err 129 (Send)"),
            ]
        } else {
            vec![
                format!("node1:1:2 [0] transport/net_ib.cc:93 NCCL WARN NET/IB : Got async event : {text}"),
                format!("[2025-09-17 15:16:23] node1:1:2 [0] transport/net_ib.cc:199 NCCL WARN NET/IB : mlx5_0:1 Got async error event: {text}"),
                format!("node1:1:2 [0] transport/net_ib/common.cc:1 NCCL WARN NET/IB : mlx5_0:1 Got non-fatal async event: {text}({value})"),
            ]
        };
        let routine = matches!(value.as_str(), "0") && kind == "wc_status"
            || ["4", "5", "15", "16"].contains(&value.as_str()) && kind == "event_type";
        for l in lines {
            let mut o = outcome(set, &l);
            if routine && o == Outcome::Nothing {
                // success and routine events are benign by data/verbs.toml's classes
                o = Outcome::Benign;
            }
            t.add(kind, o, &l);
        }
    }
    t
}

fn c10d(set: &RecognizerSet, dir: &Path) -> Tally {
    let mut t = Tally::new();
    for r in rows(dir, "pytorch-c10d.tsv") {
        let (Some(file), Some(fmt)) = (r.first(), r.get(3)) else {
            continue;
        };
        if !names_error(fmt) {
            continue;
        }
        let family = if file.contains("elastic") {
            "torchelastic"
        } else {
            "c10d"
        };
        let text = format!(
            "[rank0]:[E101 12:00:00.000000000 ProcessGroupNCCL.cpp:1] {}",
            render(fmt)
        );
        t.add(family, outcome(set, &text), &text);
    }
    t
}

fn slurm(set: &RecognizerSet, dir: &Path) -> Tally {
    let mut t = Tally::new();
    for r in rows(dir, "slurm.tsv") {
        let (Some(file), Some(fmt)) = (r.first(), r.get(4)) else {
            continue;
        };
        if !names_error(fmt) {
            continue;
        }
        let program = if file.contains("srun") || file.contains("step_launch") {
            "srun"
        } else {
            "slurmstepd"
        };
        let text = format!(
            "{program}: error: {}",
            render(fmt)
                .replace("mlx5_0 ON mlx5_0", "STEP 12.0 ON node01")
                .replace("AT mlx5_0", "AT 2025-01-01T00:00:00")
        );
        t.add(program, outcome(set, &text), &text);
    }
    t
}

#[test]
fn job_vocabularies_are_covered() {
    let Some(dir) = vocab_dir() else {
        eprintln!("SKIPPED: ../shared/vocab is absent; vocabulary coverage not measured");
        return;
    };
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    let set = &k.recognizers;
    let mut failures = Vec::new();
    for (table, floor, floor_specific) in FLOORS {
        let tally = match table {
            "nccl-warn-unfiltered.tsv" => nccl(set, &dir),
            "ibverbs.tsv" => verbs(set, &dir),
            "pytorch-c10d.tsv" => c10d(set, &dir),
            _ => slurm(set, &dir),
        };
        let (covered, specific) = tally.report(table);
        if covered < floor || specific < floor_specific {
            failures.push(format!(
                "{table}: covered {covered}% (floor {floor}%), specific {specific}% (floor {floor_specific}%)"
            ));
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

#[test]
fn rendering_fills_every_specifier() {
    assert_eq!(
        render("Got completion from peer %s with status=%s(%d) len=%lu {}"),
        "Got completion from peer mlx5_0 with status=mlx5_0(3) len=3 3"
    );
    assert_eq!(
        render("Call to {name} failed: %m"),
        "Call to ibv_poll_cq failed: Connection reset by peer"
    );
}
