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

/// Floors, in percent of the rows that name an error: (table, specific+generic+benign, specific,
/// specific among the rows at the levels the emitter prints by default). A benign row is a
/// recorded decision: a `benign = "reason"` recognizer of the data claims it.
const FLOORS: [(&str, u32, u32, u32); 5] = [
    ("nccl-warn-unfiltered.tsv", 100, 98, 100),
    ("ibverbs.tsv", 100, 100, 100),
    ("pytorch-c10d.tsv", 100, 60, 100),
    ("slurm.tsv", 100, 78, 91),
    ("launcher-exits.tsv", 100, 88, 100),
];

fn vocab_dir() -> Option<std::path::PathBuf> {
    let d = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vocab");
    d.is_dir().then_some(d)
}

/// Fills printf and `{}` specifiers with plausible values.
fn render(fmt: &str) -> String {
    render_with(fmt, "mlx5_0")
}

/// [`render`] with `s` for every `%s`.
fn render_with(fmt: &str, s: &str) -> String {
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
                    Some('s') => s,
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
    let ids: Vec<&str> = out.events.iter().map(|e| e.draft.recognizer()).collect();
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
    /// Rows at the levels the emitter prints by default: (specific, all), when the table says.
    printed: (u32, u32),
}

impl Tally {
    fn new() -> Tally {
        Tally {
            by_family: BTreeMap::new(),
            misses: Vec::new(),
            printed: (0, 0),
        }
    }
    fn add_printed(&mut self, printed: bool, o: Outcome) {
        if printed {
            self.printed.0 += u32::from(o == Outcome::Specific);
            self.printed.1 += 1;
        }
    }
    /// Specific rows among those at the levels printed by default, in percent (100 when the
    /// table has no levels).
    fn printed_specific(&self) -> u32 {
        let (s, n) = self.printed;
        if n == 0 {
            return 100;
        }
        eprintln!("  rows at the levels printed by default: {n}, specific {s}");
        s * 100 / n
    }
    fn add(&mut self, family: &str, o: Outcome, line: &str) {
        let slot = self.by_family.entry(family.to_string()).or_default();
        slot[o as usize] += 1;
        if o != Outcome::Specific {
            self.misses.push(format!("{o:?}: {line}"));
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
            eprintln!("  {m}");
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

/// True for a torchelastic row that is a printed text (a log call, a message or a report
/// template), not a dictionary key or a placeholder of the error file's JSON.
fn elastic_is_message(kind: &str) -> bool {
    [
        "call(debug)",
        "call(info)",
        "call(warning)",
        "call(warn)",
        "call(error)",
        "call(exception)",
        "assign(message)",
        "assign(title)",
        "assign(_FAILURE_FORMAT_TEMPLATE)",
        "assign(_MSG_FORMAT_TEMPLATE)",
    ]
    .iter()
    .any(|k| kind.ends_with(k))
}

/// One torchelastic failure entry as the ChildFailedError report prints it, with `message` as
/// its traceback.
fn elastic_entry(template: &str, message: &str) -> String {
    template
        .replace("\\n", "\n")
        .replace("${idx}", "0")
        .replace("${time}", "2025-01-01_00:00:00")
        .replace("${hostname}", "node01")
        .replace("${rank}", "3")
        .replace("${local_rank}", "3")
        .replace("${exitcode}", "-6")
        .replace("${pid}", "4242")
        .replace("${signal_name}", "")
        .replace("${error_file}", "<N/A>")
        .replace("${message}", message)
}

/// The family of a c10d row, by what it is about.
fn c10d_family(file: &str, kind: &str, fmt: &str) -> &'static str {
    let l = fmt.to_ascii_lowercase();
    if file.contains("elastic") {
        "torchelastic"
    } else if l.contains("heartbeat") || l.contains("monitor") {
        "heartbeat_monitor"
    } else if l.contains("desync") {
        "desync_debug"
    } else if l.contains("store") || l.contains("uniqueid") {
        "store_rendezvous"
    } else if l.contains("watchdog") || l.contains("timeout") || l.contains("timed out") {
        "watchdog_timeout"
    } else if kind.contains("DistBackendError") || l.contains("abort") {
        "dist_backend_error"
    } else if l.contains("nccl") && l.contains("error") {
        "nccl_error_text"
    } else {
        "other"
    }
}

fn c10d(set: &RecognizerSet, dir: &Path) -> Tally {
    let mut t = Tally::new();
    let table = rows(dir, "pytorch-c10d.tsv");
    let template = table
        .iter()
        .find(|r| {
            r.get(2)
                .is_some_and(|k| k.ends_with("(_FAILURE_FORMAT_TEMPLATE)"))
        })
        .and_then(|r| r.get(3).cloned())
        .unwrap_or_default();
    for r in &table {
        let (Some(file), Some(kind), Some(fmt)) = (r.first(), r.get(2), r.get(3)) else {
            continue;
        };
        if !names_error(fmt) {
            continue;
        }
        let family = c10d_family(file, kind, fmt);
        let text = if file.contains("elastic") {
            if !elastic_is_message(kind) {
                continue;
            }
            if kind.ends_with("(_FAILURE_FORMAT_TEMPLATE)") {
                elastic_entry(
                    fmt,
                    "To enable traceback see: https://pytorch.org/docs/stable/elastic/errors.html",
                )
            } else if kind.ends_with("(_MSG_FORMAT_TEMPLATE)") {
                let entry = elastic_entry(&template, "<N/A>");
                fmt.replace("\\n", "\n")
                    .replace("${boarder}", &"=".repeat(40))
                    .replace("${section}", &"-".repeat(40))
                    .replace("${title}", "train.py FAILED")
                    .replace("${other_failures}", "  <NO_OTHER_FAILURES>")
                    .replace("${root_failure}", &entry)
            } else if kind.ends_with("assign(title)") {
                // the report's title, a line of its own
                fmt.replace("{}", "train.py")
            } else if kind.ends_with("assign(message)") {
                // a failure's message is printed as the traceback of its entry
                elastic_entry(&template, &render(fmt).replace("3 (3)", "6 (SIGABRT)"))
            } else {
                format!(
                    "E0101 12:00:00.000000 4242 torch/distributed/elastic/multiprocessing/errors/__init__.py:1] {}",
                    render_with(fmt, "train.py")
                )
            }
        } else {
            let fmt = fmt
                .replace(
                    "NCCL error in: {}:{}, {}",
                    "NCCL error in: ../torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version 2.21.5",
                )
                .replace(
                    "{}{}. This may indicate",
                    "[1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout. This may indicate",
                )
                .replace(
                    "timeout: {} ran for",
                    "timeout: WorkNCCL(SeqNum=2070, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for",
                );
            format!(
                "[rank0]:[E101 12:00:00.000000000 ProcessGroupNCCL.cpp:1] {}",
                render(&fmt)
            )
        };
        t.add(family, outcome(set, &text), &text);
    }
    t
}

/// The family of a Slurm row, by what it is about.
fn slurm_family(fmt: &str) -> &'static str {
    let l = fmt.to_ascii_lowercase();
    if l.contains("node fail") {
        "node_failure"
    } else if l.contains("cancel") || l.contains("***") {
        "cancel"
    } else if l.contains("memory") || l.contains("oom") {
        "memory_oom"
    } else if l.contains("exit") || l.contains("died") || l.contains("killed by") {
        "task_exit"
    } else if l.contains("signal")
        || l.contains("sig")
        || l.contains("termina")
        || l.contains("kill")
    {
        "signal_teardown"
    } else {
        "other"
    }
}

fn slurm(set: &RecognizerSet, dir: &Path) -> Tally {
    let mut t = Tally::new();
    for r in rows(dir, "slurm.tsv") {
        let (Some(file), Some(call), Some(fmt)) = (r.first(), r.get(3), r.get(4)) else {
            continue;
        };
        if !names_error(fmt) {
            continue;
        }
        let program = if file.contains("srun") || file.contains("step_launch") {
            "srun"
        } else if file.contains("slurmd/slurmd/") {
            "slurmd"
        } else {
            "slurmstepd"
        };
        // error(), fatal() and the debug levels print their level (log.c pads `debug:` to the
        // width of `debug2:`); info() and verbose() do not
        let level = match call.as_str() {
            "error" | "assignment" => "error: ",
            "fatal" => "fatal: ",
            "debug" => "debug:  ",
            "debug2" => "debug2: ",
            "debug3" => "debug3: ",
            "debug4" => "debug4: ",
            _ => "",
        };
        let filled = fmt
            .replace("*** %s ON %s", "*** STEP 12.0 ON node01")
            .replace(
                "*** %s STEPD TERMINATED ON %s",
                "*** STEP 12.0 STEPD TERMINATED ON node01",
            )
            .replace("AT %s", "AT 2025-01-01T00:00:00")
            .replace("SIGNAL %s", "SIGNAL Terminated")
            .replace(
                "%s: %s %s: %s%s",
                "node01: task 3: Segmentation fault (core dumped)",
            )
            .replace("%s: %s %s:", "node01: task 3:")
            .replace("event%s", "events");
        let text = format!("{program}: {level}{}", render_with(&filled, "node01"));
        let o = outcome(set, &text);
        t.add(slurm_family(fmt), o, &text);
        // the levels slurmd, slurmstepd and srun print by default (SlurmdDebug=info, srun
        // without -v prints info; verbose is srun -v): debug levels and debug flags are traces
        let printed = matches!(
            call.as_str(),
            "error" | "assignment" | "fatal" | "info" | "verbose"
        );
        t.add_printed(printed, o);
    }
    t
}

/// Every row of the launcher table: its `example` column is the line as the launcher prints it
/// (a multi-line report keeps its line breaks); the family is the launcher.
fn launchers(set: &RecognizerSet, dir: &Path) -> Tally {
    let mut t = Tally::new();
    for r in rows(dir, "launcher-exits.tsv") {
        let (Some(launcher), Some(example)) = (r.first(), r.get(3)) else {
            continue;
        };
        if example.is_empty() {
            continue;
        }
        let text = example.replace("\\n", "\n").replace("\\t", "\t");
        let family = launcher.split([' ', '(']).next().unwrap_or(launcher);
        t.add(family, outcome(set, &text), &text);
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
    for (table, floor, floor_specific, floor_printed) in FLOORS {
        let tally = match table {
            "nccl-warn-unfiltered.tsv" => nccl(set, &dir),
            "ibverbs.tsv" => verbs(set, &dir),
            "pytorch-c10d.tsv" => c10d(set, &dir),
            "launcher-exits.tsv" => launchers(set, &dir),
            _ => slurm(set, &dir),
        };
        let (covered, specific) = tally.report(table);
        let printed = tally.printed_specific();
        if covered < floor || specific < floor_specific || printed < floor_printed {
            failures.push(format!(
                "{table}: covered {covered}% (floor {floor}%), specific {specific}% (floor {floor_specific}%), specific at printed levels {printed}% (floor {floor_printed}%)"
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

#[test]
fn every_ntstatus_code_names_the_exit_in_hex_and_decimal() {
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    let set = &k.recognizers;
    assert!(set.ntstatus.len() >= 40, "a few dozen well-known codes");
    for e in &set.ntstatus {
        let signed = e.code as i32;
        for line in [
            format!("time=2025-01-01T00:00:00Z level=ERROR msg=\"runner terminated\" error=\"exit status 0x{:08x}\"", e.code),
            format!("Process finished with exit code {signed}"),
        ] {
            let out = scan_buffer(format!("{line}\n").as_bytes(), set, false, 1000);
            let named = out.events.iter().any(|ev| {
                ev.draft.kind == "process_exit"
                    && ev.draft.attrs.get("ntstatus") == Some(&e.name)
                    && ev.draft.attrs.contains_key("layer_hint")
            });
            assert!(named, "{}: {line}", e.name);
        }
    }
}

/// Every regex alternative of the job-log recognizers holds one of its anchors in its own
/// literal text (else it fires only when the line happens to carry an anchor elsewhere); the
/// other files' alternatives that lean on an anchor elsewhere in the line (a prefix such as
/// `NVRM:` or `NCCL`) are printed.
#[test]
fn every_job_regex_alternative_holds_an_anchor() {
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        recognizer: Vec<toml::Value>,
    }
    let mut failures = Vec::new();
    for (name, text) in [
        ("recognizers.toml", faultline::events::BUILTIN_RECOGNIZERS),
        ("jobs.toml", faultline::events::BUILTIN_JOB_RECOGNIZERS),
        (
            "progress.toml",
            faultline::events::BUILTIN_PROGRESS_RECOGNIZERS,
        ),
        ("stack.toml", faultline::events::BUILTIN_STACK_RECOGNIZERS),
        ("verbs.toml", faultline::events::verbs::BUILTIN_VERBS),
        (
            "ntstatus.toml",
            faultline::events::ntstatus::BUILTIN_NTSTATUS,
        ),
    ] {
        let f: File = toml::from_str(text).expect("built-in recognizers parse");
        let mut leaning = 0;
        for r in &f.recognizer {
            let (Some(id), Some(re)) = (
                r.get("id").and_then(|v| v.as_str()),
                r.get("regex").and_then(|v| v.as_str()),
            ) else {
                continue;
            };
            let anchors: Vec<String> = r
                .get("anchors")
                .and_then(|v| v.as_array())
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            for alt in faultline::events::reach::unreached(re, &anchors) {
                let msg = format!("{name} {id}: alternative `{alt}` holds none of {anchors:?}");
                if name == "recognizers.toml" {
                    leaning += 1;
                } else {
                    failures.push(msg);
                }
            }
        }
        if leaning > 0 {
            eprintln!("{name}: {leaning} alternatives rely on an anchor elsewhere in the line");
        }
    }
    assert!(failures.is_empty(), "{failures:#?}");
}

/// NCCL changed its WARN prefix (2.26 added the date and the function: `[date] host:pid:tid [dev]
/// file:line (func) NCCL WARN`): every NCCL family carries a sample of each form.
#[test]
fn every_nccl_family_has_samples_of_both_prefix_versions() {
    #[derive(serde::Deserialize)]
    struct File {
        #[serde(default)]
        recognizer: Vec<toml::Value>,
    }
    let f: File = toml::from_str(faultline::events::BUILTIN_JOB_RECOGNIZERS).unwrap();
    let new = regex::Regex::new(
        r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d\] \S+ \[\d+\] \S+:\d+ \(\w+\) NCCL WARN",
    )
    .unwrap();
    let old = regex::Regex::new(r"^\S+:\d+:\d+ \[\d+\] (?:\S+:\d+ )?NCCL WARN").unwrap();
    let mut missing = Vec::new();
    for r in &f.recognizer {
        let id = r.get("id").and_then(|v| v.as_str()).unwrap_or("");
        let nccl = r
            .get("anchors")
            .and_then(|v| v.as_array())
            .is_some_and(|a| a.iter().any(|x| x.as_str() == Some("NCCL WARN")));
        if !nccl || r.get("benign").is_some() {
            continue;
        }
        let samples: Vec<&str> = r
            .get("samples")
            .and_then(|v| v.as_array())
            .map(|a| a.iter().filter_map(|x| x.as_str()).collect())
            .unwrap_or_default();
        for (name, re) in [("2.26+", &new), ("older", &old)] {
            if !samples.iter().any(|s| re.is_match(s)) {
                missing.push(format!("{id}: no {name} sample"));
            }
        }
    }
    assert!(missing.is_empty(), "{missing:#?}");
}
