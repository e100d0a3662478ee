//! Fuzzing harnesses: one function per cargo-fuzz target (`fuzz/fuzz_targets/<name>.rs` calls
//! the function of the same name), so that the fuzzers and the replay of their corpora in
//! `tests/fuzz_replay.rs` (which includes this file as a module) drive exactly the same code.
//! They live outside the library: they use only its public API, as any other caller would.
//!
//! Each harness takes arbitrary bytes, runs them through the real public entry points of one
//! stage, and checks the invariants that stage promises (offsets inside the line, recognized
//! lines never more than lines, caps respected, reports that serialize to valid JSON). A panic —
//! from the library or from a broken invariant — is a finding. Nothing here reads or writes files.

use faultline::formats::{
    self, bug_report, dcgmi, joblog, journal, kernel, nvidia_smi, nvidia_smi_xml, syslog, time,
    Prefix,
};
use faultline::input::{container, Bytes, Input, Limits};
use faultline::{Knowledge, Options};
use std::sync::OnceLock;

/// The names of the harnesses, which are also the names of the fuzz targets and of their corpus
/// and regression folders under `fuzz/`.
pub const TARGETS: [&str; 12] = [
    "container",
    "kernel",
    "syslog",
    "journal",
    "joblog",
    "bug_report",
    "nvidia_smi",
    "nvidia_smi_xml",
    "dcgmi",
    "server",
    "knowledge",
    "analyze",
];

/// Runs the harness named `target` (one of [`TARGETS`]) on `data`; false for an unknown name.
pub fn run(target: &str, data: &[u8]) -> bool {
    match target {
        "container" => container(data),
        "kernel" => kernel(data),
        "syslog" => syslog(data),
        "journal" => journal(data),
        "joblog" => joblog(data),
        "bug_report" => bug_report(data),
        "nvidia_smi" => nvidia_smi(data),
        "nvidia_smi_xml" => nvidia_smi_xml(data),
        "dcgmi" => dcgmi(data),
        "server" => server(data),
        "knowledge" => knowledge(data),
        "analyze" => analyze(data),
        _ => return false,
    }
    true
}

/// Caps small enough that one execution stays fast and small, large enough to decode real
/// members: 16 MiB per member, 32 MiB in total, ratio 1000, depth 4, 64 events per kind per GPU.
pub fn fuzz_limits() -> Limits {
    Limits {
        max_member_bytes: 16 << 20,
        max_total_bytes: 32 << 20,
        max_ratio: 1000,
        max_depth: 4,
        max_events_per_kind: 64,
    }
}

fn builtin() -> &'static Knowledge {
    static K: OnceLock<Knowledge> = OnceLock::new();
    K.get_or_init(|| Knowledge::load(&[]).expect("the built-in knowledge loads"))
}

/// Options of a fuzzed analysis: fixed clock (so runs repeat), no parallel chunks.
fn fuzz_options() -> Options {
    Options {
        paths: Vec::new(),
        rule_files: Vec::new(),
        time: faultline::timeline::TimeOptions {
            year: None,
            date: None,
            tz_offset: None,
            zone: None,
            now: 1_767_225_600, // 2026-01-01T00:00:00Z
        },
        limits: fuzz_limits(),
        parallel_chunks: false,
        filter: Default::default(),
        exclude: Vec::new(),
    }
}

fn lines(data: &[u8]) -> impl Iterator<Item = &[u8]> {
    data.split(|&c| c == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
}

fn check_prefix(line: &[u8], p: Option<Prefix<'_>>) {
    if let Some(p) = p {
        assert!(p.msg_start <= line.len(), "message start past the line end");
        if let Some(h) = p.host {
            let inside = line.as_ptr_range();
            assert!(
                h.is_empty() || inside.contains(&h.as_ptr()),
                "host slice outside the line"
            );
        }
    }
}

/// Opens `data` as one file's bytes: containers are decoded (within [`fuzz_limits`]) into
/// inputs, as [`faultline::input::open`] does for a file on disk.
fn open_bytes(data: &[u8], limits: &Limits) -> Vec<Input> {
    container::expand_bytes("fuzz", data.to_vec(), limits)
}

/// Content sniffing, container detection and gzip/zstd/tar decoding: [`container::sniff`] and
/// [`container::expand`], then every streamed member read to its end; no member may exceed the
/// member cap, and nothing is ever written to disk.
pub fn container(data: &[u8]) {
    let _ = container::sniff(data);
    let limits = fuzz_limits();
    for mut inp in open_bytes(data, &limits) {
        assert!(
            inp.path.starts_with("fuzz"),
            "member path keeps the archive's"
        );
        assert!(
            inp.bytes.len() as u64 <= limits.max_member_bytes,
            "member larger than the cap"
        );
        if let Some(mut s) = inp.stream.take() {
            let mut total = inp.bytes.len() as u64;
            let mut block = Vec::new();
            loop {
                block.clear();
                let n = s.fill(&mut block, 1 << 20);
                if n == 0 {
                    break;
                }
                total += n as u64;
                assert!(
                    total <= limits.max_member_bytes + (4 << 20),
                    "stream read past the cap"
                );
            }
        }
    }
}

/// Kernel ring buffer prefixes (dmesg raw/`-T`/iso/decoded, `/dev/kmsg`), the cheap shape check
/// of the counting pass and format detection, line by line.
pub fn kernel(data: &[u8]) {
    let _ = formats::detect(data);
    for line in lines(data) {
        check_prefix(line, kernel::raw(line));
        check_prefix(line, kernel::ctime(line));
        check_prefix(line, kernel::iso(line));
        check_prefix(line, kernel::decoded(line));
        check_prefix(line, kernel::kmsg(line));
        let _ = formats::quick_shape(line);
        if let Some((_, n)) = time::bracket_uptime(line) {
            assert!(n <= line.len());
        }
        if let Some((_, n)) = time::ctime_datetime(line) {
            assert!(n <= line.len());
        }
    }
}

/// Syslog prefixes (RFC 3164, RFC 3339, RFC 5424, Talos) and the date readers they use.
pub fn syslog(data: &[u8]) {
    for line in lines(data) {
        check_prefix(line, syslog::rfc3164(line));
        check_prefix(line, syslog::rfc3339(line));
        check_prefix(line, syslog::rfc5424(line));
        check_prefix(line, syslog::talos(line));
        for (_, n) in [
            time::syslog_datetime(line),
            time::iso_datetime(line),
            faultline::formats::locale::cjk_syslog_prefix(line),
        ]
        .into_iter()
        .flatten()
        {
            assert!(n <= line.len());
        }
        let _ = faultline::formats::locale::cjk_datetime(line);
        if let Some((_, n)) = time::zone(line) {
            assert!(n <= line.len());
        }
    }
}

/// journalctl text (short-full, short-unix, boot markers) and `journalctl -o json`: the line
/// readers and the JSON scanner with the built-in recognizers.
pub fn journal(data: &[u8]) {
    for line in lines(data) {
        check_prefix(line, journal::short_full(line));
        check_prefix(line, journal::short_unix(line));
        let _ = journal::is_marker(line);
        let _ = journal::is_boot_marker(line);
        let _ = journal::json_entry(line);
    }
    let out = faultline::scan::journal_json::scan(
        data,
        &builtin().recognizers,
        fuzz_limits().max_events_per_kind,
    );
    assert!(
        out.recognized <= out.lines,
        "recognized more lines than read"
    );
    for e in &out.events {
        assert!(
            e.line >= 1 && e.line <= out.lines.max(1),
            "event line out of range"
        );
    }
}

/// Job logs: launcher labels (`[rankN]:`, `srun -l`), NCCL `host:pid:tid` prefixes, timed job
/// prefixes, and the full line head reader.
pub fn joblog(data: &[u8]) {
    for line in lines(data) {
        let (off, _) = joblog::launcher_prefix(line);
        assert!(off <= line.len(), "launcher prefix past the line end");
        if let Some((h, n)) = joblog::nccl_host(line) {
            assert!(n <= line.len() && h.len() <= line.len());
        }
        check_prefix(line, joblog::job_prefix(line));
        check_prefix(line, joblog::nccl_untimed(line));
        let head = formats::parse_head(line);
        assert!(head.msg_start <= line.len());
        check_prefix(line, formats::parse_prefix(line));
    }
}

/// Processes one in-memory input with the built-in knowledge and checks its accounting.
fn process(data: Vec<u8>) -> faultline::pipeline::InputResult {
    let k = builtin();
    let inp = Input {
        path: "fuzz".into(),
        host_hint: None,
        bytes: Bytes::Owned(data),
        disk_bytes: 0,
        mtime: None,
        warnings: Vec::new(),
        stream: None,
    };
    let cap = fuzz_limits().max_events_per_kind;
    let r = faultline::pipeline::process(0, inp, &k.recognizers, &k.catalog, false, cap);
    assert!(
        r.lines_recognized <= r.lines,
        "recognized more lines than read"
    );
    for e in &r.events {
        assert!(e.line >= 1, "event line 0");
    }
    r
}

fn with_preamble(preamble: &[u8], data: &[u8]) -> Vec<u8> {
    let mut v = Vec::with_capacity(preamble.len() + data.len());
    v.extend_from_slice(preamble);
    v.extend_from_slice(data);
    v
}

/// `nvidia-bug-report.log`: the section splitter and metadata reader, the nvidia-smi sections it
/// finds, and the pipeline's handling of a bug report (a start marker is put in front so that
/// detection always picks the bug report reader).
pub fn bug_report(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let info = bug_report::parse(&text);
    let n = text.lines().count();
    for s in &info.sections {
        assert!(s.start <= s.end && s.end <= n, "section outside the text");
    }
    for (s, e) in bug_report::smi_sections(&info) {
        assert!(s <= e + 1 && e <= n, "nvidia-smi section outside the text");
    }
    let _ = bug_report::looks_like(data);
    let doc = with_preamble(b"Start of NVIDIA bug report log file\n", data);
    let r = process(doc);
    assert_eq!(r.format, formats::Format::BugReport);
}

/// `nvidia-smi -q` text: the dump reader, and the pipeline on the dump (with the `NVSMI LOG`
/// banner put in front so that detection picks it).
pub fn nvidia_smi(data: &[u8]) {
    let _ = nvidia_smi::looks_like(data);
    let text = String::from_utf8_lossy(data);
    let dump = nvidia_smi::parse(&text);
    let n = text.lines().count();
    for e in &dump.events {
        assert!(e.line <= n, "event line past the end");
    }
    let r = process(with_preamble(
        b"==============NVSMI LOG==============\n",
        data,
    ));
    assert_eq!(r.format, formats::Format::NvidiaSmi);
}

/// `nvidia-smi -q -x` XML: the tag scanner and dump reader, and the pipeline on the document
/// (with an `<nvidia_smi_log>` root put in front).
pub fn nvidia_smi_xml(data: &[u8]) {
    let _ = nvidia_smi_xml::looks_like(data);
    let text = String::from_utf8_lossy(data);
    let dump = nvidia_smi_xml::parse(&text);
    let n = text.lines().count();
    for e in &dump.events {
        assert!(e.line <= n, "event line past the end");
    }
    let r = process(with_preamble(b"<nvidia_smi_log>\n", data));
    assert_eq!(r.format, formats::Format::NvidiaSmi);
}

/// `dcgmi diag`: the text table reader (rows, wrapped cells, events) and the `-j` JSON reader,
/// then the pipeline on the same bytes.
pub fn dcgmi(data: &[u8]) {
    let _ = dcgmi::looks_like(data);
    let _ = dcgmi::looks_like_json(data);
    let text = String::from_utf8_lossy(data);
    let n = text.lines().count();
    let _ = dcgmi::rows(&text);
    let catalog = faultline::catalog::Catalog::builtin();
    let (evs, rows) = dcgmi::events(&text, &catalog);
    for e in &evs {
        assert!(e.line < n.max(1), "event line past the end");
    }
    let _ = rows;
    let (evs, _) = dcgmi::json_events(&text, &catalog);
    for e in &evs {
        assert!(e.line < n.max(1), "event line past the end");
    }
    let _ = process(data.to_vec());
}

/// A small incident used to exercise user knowledge: an Xid, an AER report, NCCL timeouts and a
/// process exit on two hosts.
const KNOWLEDGE_SAMPLE: &str = "\
Mar 14 02:13:07 gpu-node-03 kernel: [1795955.589904] NVRM: Xid (PCI:0000:3b:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.
Mar 14 02:13:07 gpu-node-03 kernel: [1795955.589999] pcieport 0000:3a:00.0: AER: Uncorrected (Fatal) error received: 0000:3a:00.0
Mar 14 02:23:07 gpu-node-01 python[4242]: [rank3]:[E ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=88, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600011 milliseconds before timing out.
Mar 14 02:23:41 gpu-node-01 kernel: [1796589.100000] NVRM: Xid (PCI:0000:18:00): 13, pid=4242, name=python, Graphics Exception
";

/// The rules, catalog and recognizer loader ([`Knowledge::load`]) on a user text; when it loads,
/// the knowledge analyzes a small incident, so that user regexes, rule patterns, grouping gaps
/// and catalog entries are all applied.
pub fn knowledge(data: &[u8]) {
    let text = String::from_utf8_lossy(data).into_owned();
    let Ok(k) = Knowledge::load(&[text]) else {
        return;
    };
    let inputs = vec![Input {
        path: "sample.log".into(),
        host_hint: None,
        bytes: Bytes::Owned(KNOWLEDGE_SAMPLE.as_bytes().to_vec()),
        disk_bytes: KNOWLEDGE_SAMPLE.len() as u64,
        mtime: None,
        warnings: Vec::new(),
        stream: None,
    }];
    let a = faultline::analyze_inputs(inputs, Vec::new(), &fuzz_options(), &k);
    report_all(&a, &k);
}

/// Renders every report of an analysis and checks the JSON parses back with the required fields.
fn report_all(a: &faultline::Analysis, k: &Knowledge) {
    let rep = faultline::report::json::build(a, &k.catalog);
    let json = faultline::report::json::to_string(&rep);
    let v: serde_json::Value = serde_json::from_str(&json).expect("the report is valid JSON");
    for key in ["schema", "tool", "inputs", "events", "incidents", "verdict"] {
        assert!(v.get(key).is_some(), "report without {key}");
    }
    for i in v["inputs"].as_array().into_iter().flatten() {
        let lines = i["lines"].as_u64().unwrap_or(0);
        let rec = i["lines_recognized"].as_u64().unwrap_or(0);
        assert!(rec <= lines, "recognized more lines than read");
    }
    let ids: std::collections::BTreeSet<&str> = v["events"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|e| e["id"].as_str())
        .collect();
    for inc in v["incidents"].as_array().into_iter().flatten() {
        for id in inc["root_cause"]["evidence"]
            .as_array()
            .into_iter()
            .flatten()
        {
            assert!(
                id.as_str().is_some_and(|s| ids.contains(s)),
                "evidence names an event that is not in the report"
            );
        }
    }
    let _ = faultline::report::text::render(&rep);
    let _ = faultline::report::text::render_timeline(&rep);
    let _ = faultline::report::markdown::render(&rep, &k.catalog);
    let _ = faultline::report::html::render(&rep, &k.catalog);
    // the redaction pass over the report's values, then every renderer of the redacted report
    let red = faultline::redact::for_analysis(&faultline::redact::Key::new("fuzz"), a)
        .expect("the redactor builds");
    let mut hidden = rep.clone();
    red.report(&mut hidden);
    let redacted = faultline::report::json::to_string(&hidden);
    serde_json::from_str::<serde_json::Value>(&redacted).expect("redacted JSON is valid");
    let _ = faultline::report::text::render(&hidden);
    let _ = faultline::report::markdown::render(&hidden, &k.catalog);
    let _ = faultline::report::html::render(&hidden, &k.catalog);
}

/// The whole analyze pipeline on one in-memory input: containers decoded, format detected,
/// scanned, timeline, job, incidents, and every report rendered (JSON checked to parse back).
pub fn analyze(data: &[u8]) {
    let k = builtin();
    let opts = fuzz_options();
    let inputs = open_bytes(data, &opts.limits);
    let a = faultline::analyze_inputs(inputs, Vec::new(), &opts, k);
    report_all(&a, k);
}

/// The server's own logs: ipmitool SEL lines, package-log prefixes (dpkg, dnf, yum), record times
/// of lclog/Redfish/apt/dnf-history/installer text, record messages, German and CJK dates, and
/// the `nvidia-smi topo -m` matrix; then the pipeline on the bytes as a file of its own.
pub fn server(data: &[u8]) {
    use faultline::formats::{bmc, locale, record, topo};
    for line in lines(data) {
        check_prefix(line, bmc::sel(line));
        check_prefix(line, record::package_line(line));
        let _ = record::time_line(line);
        if let Some((_, n)) = locale::month_name(line) {
            assert!(n <= line.len());
        }
        if let Some(n) = locale::weekday_len(line) {
            assert!(n <= line.len());
        }
    }
    // record times around every line start, as the scanner asks for them
    let mut start = 0usize;
    for line in data.split_inclusive(|&c| c == b'\n').take(512) {
        let end = start + line.len();
        if let Some(rt) = record::record_stamp(data, start, end) {
            assert!(
                rt.span.0 <= rt.span.1 && rt.span.1 <= data.len(),
                "record span outside the buffer"
            );
        }
        start = end;
    }
    let _ = record::record_message(data);
    if topo::looks_like(&data[..data.len().min(64 * 1024)]) {
        let _ = topo::parse(&String::from_utf8_lossy(data));
    }
    analyze(data);
}
