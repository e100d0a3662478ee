//! Per-input processing: decode oddities (UTF-16, NUL bytes), detect the format, scan with the
//! recognizers, read block formats (bug reports, nvidia-smi dumps, dcgmi tables), and classify
//! every draft with the catalog.

use crate::catalog::Catalog;
use crate::events::RecognizerSet;
use crate::formats::{self, bug_report, dcgmi, nvidia_smi, Format};
use crate::input::Input;
use crate::model::{LineStamp, RawEvent, Severity};
use crate::scan::{self, Located, ScanOutput};
use std::collections::BTreeMap;

/// A GPU as an inventory source describes it.
#[derive(Clone, Debug, Default)]
pub struct GpuRecord {
    /// Host.
    pub host: Option<String>,
    /// Normalized bus id.
    pub bus_id: Option<String>,
    /// UUID.
    pub uuid: Option<String>,
    /// Board serial.
    pub serial: Option<String>,
    /// Product name.
    pub name: Option<String>,
    /// VBIOS version.
    pub vbios: Option<String>,
    /// Counters and state as read.
    pub state: BTreeMap<String, String>,
}

/// Everything one input contributed.
pub struct InputResult {
    /// Index in the analysis.
    pub index: usize,
    /// Path as shown.
    pub path: String,
    /// Detected format.
    pub format: Format,
    /// Host of the input (hint, bundle or most common line host).
    pub host: Option<String>,
    /// Bytes read (decompressed size for containers).
    pub bytes: u64,
    /// Lines counted.
    pub lines: u64,
    /// Lines understood.
    pub lines_recognized: u64,
    /// Warnings.
    pub warnings: Vec<String>,
    /// Events.
    pub events: Vec<RawEvent>,
    /// Attachments (rank maps, GPU identities, watchdog progress).
    pub attachments: Vec<RawEvent>,
    /// Lines where a boot starts.
    pub boot_lines: Vec<u64>,
    /// File modification time.
    pub mtime: Option<i64>,
    /// Bug report metadata.
    pub bundle: Option<bug_report::BundleInfo>,
    /// Driver version from an nvidia-smi dump.
    pub smi_driver: Option<String>,
    /// CUDA version from an nvidia-smi dump.
    pub smi_cuda: Option<String>,
    /// GPUs described by nvidia-smi dumps.
    pub gpus: Vec<GpuRecord>,
    /// The GPU/NIC matrix of `nvidia-smi topo -m`.
    pub topology: Option<formats::topo::Topology>,
}

/// Decodes text that starts with a UTF-16 byte-order mark; returns the UTF-8 text and a warning
/// that says which byte order was read (and where an odd trailing byte was dropped).
fn decode_utf16(b: &[u8]) -> Option<(Vec<u8>, String)> {
    let (le, body) = if b.starts_with(&[0xff, 0xfe]) {
        (true, &b[2..])
    } else if b.starts_with(&[0xfe, 0xff]) {
        (false, &b[2..])
    } else {
        return None;
    };
    let units: Vec<u16> = body
        .chunks_exact(2)
        .map(|c| {
            if le {
                u16::from_le_bytes([c[0], c[1]])
            } else {
                u16::from_be_bytes([c[0], c[1]])
            }
        })
        .collect();
    let mut note = format!(
        "UTF-16 {} text (byte-order mark): decoded to UTF-8 before scanning",
        if le { "LE" } else { "BE" }
    );
    if body.len() % 2 == 1 {
        note.push_str(&format!(
            "; odd trailing byte at offset {} dropped",
            b.len() - 1
        ));
    }
    Some((String::from_utf16_lossy(&units).into_bytes(), note))
}

/// Classifies located drafts with the catalog into raw events of input `index`.
fn classify(index: usize, list: Vec<Located>, catalog: &Catalog) -> Vec<RawEvent> {
    list.into_iter()
        .map(|l| to_raw(index, l, catalog))
        .collect()
}

fn to_raw(index: usize, loc: Located, catalog: &Catalog) -> RawEvent {
    let d = loc.draft;
    let (layer, severity) = match d.code_table.as_deref() {
        Some(table @ ("xid" | "sxid")) if d.code.is_some() => catalog.classify(table, d.code),
        _ => catalog.classify(&d.kind, d.code),
    };
    RawEvent {
        input: index,
        line: loc.line,
        layer: d.layer.unwrap_or(layer),
        severity: d.severity.unwrap_or(severity),
        kind: d.kind,
        code: d.code,
        gpu: d.gpu,
        rank: d.rank,
        host: loc.host,
        message: loc.message,
        body: loc.body,
        stamp: loc.stamp,
        borrowed_time: loc.borrowed,
        boot: 0,
        recognizer: d.recognizer,
        attrs: d.attrs,
        bmc: d.bmc,
        suppressed: loc.suppressed,
    }
}

impl scan::Capped for RawEvent {
    type Key<'a> = scan::CapKey<'a>;
    fn cap_key(&self) -> Option<scan::CapKey<'_>> {
        // progress samples are thinned by the scanner, never capped: a slowdown needs the series
        (self.kind != "progress").then_some((
            self.host.as_deref(),
            &self.kind,
            self.code,
            self.gpu.as_deref(),
            self.rank,
        ))
    }
    fn weight(&mut self) -> &mut u64 {
        &mut self.suppressed
    }
}

/// Applies the events cap to an input's events and says in a warning what it counted but did not
/// keep (the keys with the most suppressed occurrences first).
fn cap_events(events: &mut Vec<RawEvent>, cap: u64, warnings: &mut Vec<String>) {
    scan::cap_capped(events, cap);
    let total: u64 = events.iter().map(|e| e.suppressed).sum();
    if total == 0 {
        return;
    }
    let mut per: BTreeMap<String, u64> = BTreeMap::new();
    for e in events.iter().filter(|e| e.suppressed > 0) {
        let what = format!(
            "{}{}{}",
            e.kind,
            e.code.map(|c| format!(" {c}")).unwrap_or_default(),
            e.gpu
                .as_ref()
                .map(|g| format!(" on {g}"))
                .unwrap_or_default()
        );
        *per.entry(what).or_default() += e.suppressed;
    }
    let mut top: Vec<(String, u64)> = per.into_iter().collect();
    top.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let list: Vec<String> = top
        .iter()
        .take(5)
        .map(|(w, n)| format!("{w} +{n}"))
        .collect();
    let more = if top.len() > 5 {
        format!(", and {} more", top.len() - 5)
    } else {
        String::new()
    };
    warnings.push(format!(
        "{total} event(s) past the cap of {cap} per kind per GPU were counted but not kept ({}{more}); counts stay exact",
        list.join(", ")
    ));
}

/// Processes one input; at most `cap` events per host, kind, code, GPU and rank are kept (the
/// others are counted in the `suppressed` field of the last one kept, and a warning says so).
pub fn process(
    index: usize,
    input: Input,
    set: &RecognizerSet,
    catalog: &Catalog,
    parallel: bool,
    cap: u64,
) -> InputResult {
    let mut input = input;
    let mut warnings: Vec<String> = input.warnings.iter().map(|w| w.to_string()).collect();
    if let Some(mut stream) = input.stream.take() {
        let head = &input.bytes[..input.bytes.len().min(64 * 1024)];
        let format = formats::detect(head);
        let utf16 = head.starts_with(&[0xff, 0xfe]) || head.starts_with(&[0xfe, 0xff]);
        if utf16
            || matches!(
                format,
                Format::BugReport | Format::NvidiaSmi | Format::Dcgmi | Format::JournalJson
            )
        {
            // block formats (and UTF-16 text) are read whole, up to the memory held per input
            let mut all =
                std::mem::replace(&mut input.bytes, crate::input::Bytes::Owned(Vec::new()))
                    .to_vec();
            let room = (crate::input::MAX_HELD_BYTES as usize).saturating_sub(all.len());
            stream.fill(&mut all, room);
            if stream.is_done() {
                warnings.append(&mut stream.warnings);
                input.bytes = crate::input::Bytes::Owned(all);
                input.warnings = warnings;
                return process(index, input, set, catalog, parallel, cap);
            }
            warnings.push(format!(
                "{} input larger than {} bytes held in memory: scanned line by line, not parsed as a block",
                format.as_str(),
                crate::input::MAX_HELD_BYTES
            ));
            input.bytes = crate::input::Bytes::Owned(all);
        }
        return process_stream(
            index, input, stream, format, warnings, set, catalog, parallel, cap,
        );
    }
    let utf16 = decode_utf16(&input.bytes).map(|(text, note)| {
        warnings.push(note);
        text
    });
    let buf: &[u8] = utf16.as_deref().unwrap_or(&input.bytes);
    let head = &buf[..buf.len().min(64 * 1024)];
    // the journal export format carries binary fields by design
    let export =
        formats::journal_entries::detect(head) == Some(formats::journal_entries::Mode::Export);
    if let Some(p) = memchr::memchr(0, head).filter(|_| !export) {
        let nuls = bytecount::count(head, 0);
        warnings.push(format!("binary content: NUL byte at offset {p} ({nuls} in the first {} bytes); scanned as text", head.len()));
    } else if std::str::from_utf8(head).is_err() && utf16.is_none() {
        let bad = std::str::from_utf8(head)
            .err()
            .map_or(0, |e| e.valid_up_to());
        warnings.push(format!("invalid UTF-8 at offset {bad}; read as lossy text"));
    }
    let mut format = formats::detect(head);
    let mut out: ScanOutput;
    let mut bundle = None;
    let mut gpus = Vec::new();
    let mut smi_driver = None;
    let mut smi_cuda = None;
    let mut topology = None;
    let mut extra: Vec<RawEvent> = Vec::new();
    match format {
        Format::JournalJson => out = scan::journal_json::scan(buf, set, cap),
        Format::NvidiaSmi if formats::topo::looks_like(buf) => {
            out = scan::scan_buffer(buf, set, parallel, cap);
            topology = formats::topo::parse(&String::from_utf8_lossy(buf));
            if topology.is_some() {
                out.recognized = out.lines;
            }
        }
        Format::NvidiaSmi => {
            out = scan::scan_buffer(buf, set, parallel, cap);
            let text = String::from_utf8_lossy(buf);
            let dump = if formats::nvidia_smi_xml::looks_like(buf) {
                formats::nvidia_smi_xml::parse(&text)
            } else {
                nvidia_smi::parse(&text)
            };
            out.recognized = out.recognized.max(dump.recognized).min(out.lines);
            let lines: Vec<&str> = text.lines().collect();
            smi_events(
                index, &dump, &lines, 0, dump.stamp, None, catalog, &mut extra,
            );
            smi_driver = dump.driver.clone();
            smi_cuda = dump.cuda.clone();
            gpus.extend(smi_gpus(&dump, None));
        }
        Format::Dcgmi => {
            out = scan::scan_buffer(buf, set, parallel, cap);
            let text = String::from_utf8_lossy(buf);
            let (evs, rows) = if dcgmi::looks_like_json(buf) {
                dcgmi::json_events(&text, catalog)
            } else {
                dcgmi::events(&text, catalog)
            };
            out.recognized = out.recognized.max(rows).min(out.lines);
            for e in evs {
                let (layer, _) = catalog.classify(&e.kind, None);
                extra.push(RawEvent {
                    input: index,
                    line: e.line as u64 + 1,
                    kind: e.kind.clone(),
                    code: None,
                    gpu: e.gpu_index.clone(),
                    rank: None,
                    host: None,
                    layer,
                    severity: e.severity,
                    message: text.lines().nth(e.line).unwrap_or("").to_string(),
                    body: e.attrs.get("result").cloned().unwrap_or_default(),
                    stamp: LineStamp::default(),
                    borrowed_time: false,
                    boot: 0,
                    recognizer: "dcgmi-diag".into(),
                    attrs: e.attrs,
                    bmc: false,
                    suppressed: 0,
                });
            }
        }
        Format::BugReport => {
            out = scan::scan_buffer(buf, set, parallel, cap);
            let text = String::from_utf8_lossy(buf);
            let info = bug_report::parse(&text);
            let lines: Vec<&str> = text.lines().collect();
            for (s, e) in bug_report::smi_sections(&info) {
                let body = lines[s.min(lines.len())..e.min(lines.len())].join("\n");
                let dump = nvidia_smi::parse(&body);
                let stamp = if dump.stamp.wall.is_some() {
                    dump.stamp
                } else {
                    LineStamp {
                        wall: info.captured,
                        mono_us: None,
                    }
                };
                smi_events(
                    index,
                    &dump,
                    &lines[s.min(lines.len())..],
                    s,
                    stamp,
                    info.host.clone(),
                    catalog,
                    &mut extra,
                );
                smi_driver = smi_driver.or(dump.driver.clone());
                smi_cuda = smi_cuda.or(dump.cuda.clone());
                gpus.extend(smi_gpus(&dump, info.host.clone()));
            }
            out.recognized = out.lines;
            bundle = Some(info);
        }
        _ => out = scan::scan_buffer(buf, set, parallel, cap),
    }
    if out.long_lines > 0 {
        warnings.push(format!(
            "{} line(s) longer than {} bytes: cut for recognizers, still searched for anchors",
            out.long_lines,
            scan::MAX_RECORD_BYTES
        ));
    }
    lost_anchor_warning(&out, &mut warnings);
    if format == Format::Unknown && !out.events.is_empty() {
        // a file of other text that still carries job or kernel lines
        let job = out.events.iter().any(|e| {
            matches!(
                e.draft.kind.as_str(),
                "nccl_timeout" | "nccl_error" | "cuda_oom" | "process_exit" | "cuda_error"
            )
        });
        if job {
            format = Format::Trainer;
        }
    }
    if input.bytes.shrunk() {
        warnings.push(format!(
            "file shrank while being read: it was {} bytes when mapped; the part past its new end read as NUL bytes, the part before is analyzed",
            buf.len()
        ));
    }
    let mut events = classify(index, out.events, catalog);
    events.extend(extra);
    events.sort_by_key(|e| e.line);
    cap_events(&mut events, cap, &mut warnings);
    let attachments = classify(index, out.attachments, catalog);
    let host = input
        .host_hint
        .clone()
        .or_else(|| {
            bundle
                .as_ref()
                .and_then(|b: &bug_report::BundleInfo| b.host.clone())
        })
        .or_else(|| most_common_host(&events));
    InputResult {
        index,
        path: input.path,
        format,
        host,
        bytes: buf.len() as u64,
        lines: out.lines,
        lines_recognized: out.recognized,
        warnings,
        events,
        attachments,
        boot_lines: out.boot_lines,
        mtime: input.mtime,
        bundle,
        smi_driver,
        smi_cuda,
        gpus,
        topology,
    }
}

/// Block size for streamed inputs.
const STREAM_BLOCK: usize = 32 << 20;

/// Scans a large compressed text input block by block: memory stays at a few blocks whatever the
/// decompressed size; line numbers run on across blocks.
#[allow(clippy::too_many_arguments)]
fn process_stream(
    index: usize,
    input: Input,
    mut stream: crate::input::container::Stream,
    format: Format,
    mut warnings: Vec<String>,
    set: &RecognizerSet,
    catalog: &Catalog,
    parallel: bool,
    cap: u64,
) -> InputResult {
    let mut out = ScanOutput::default();
    let mut block: Vec<u8> = input.bytes.to_vec();
    let mut total = 0u64;
    // the last part ended inside a line (a block without any newline): the next part's first
    // line is the rest of that line, not a line of its own
    let mut inside_line = false;
    loop {
        let more = stream.fill(&mut block, STREAM_BLOCK);
        let last = more == 0;
        let cut = if last {
            block.len()
        } else {
            memchr::memrchr(b'\n', &block).map_or(block.len(), |p| p + 1)
        };
        if cut > 0 || last {
            let part = &block[..cut];
            let mut scanned = scan::scan_buffer(part, set, parallel, cap);
            if inside_line && scanned.lines > 0 {
                continue_line(&mut scanned, part);
            }
            out.append(scanned);
            out.cap(cap);
            total += cut as u64;
            inside_line = cut > 0 && block[cut - 1] != b'\n';
        }
        block.drain(..cut);
        if last {
            break;
        }
    }
    out.recognized = out.recognized.min(out.lines);
    warnings.extend(stream.warnings.drain(..).map(|w| format!("stream: {w}")));
    if out.long_lines > 0 {
        warnings.push(format!(
            "{} line(s) longer than {} bytes: cut for recognizers, still searched for anchors",
            out.long_lines,
            scan::MAX_RECORD_BYTES
        ));
    }
    lost_anchor_warning(&out, &mut warnings);
    let mut events = classify(index, out.events, catalog);
    events.sort_by_key(|e| e.line);
    cap_events(&mut events, cap, &mut warnings);
    let attachments = classify(index, out.attachments, catalog);
    let host = input
        .host_hint
        .clone()
        .or_else(|| most_common_host(&events));
    InputResult {
        index,
        path: input.path,
        format,
        host,
        bytes: total,
        lines: out.lines,
        lines_recognized: out.recognized,
        warnings,
        events,
        attachments,
        boot_lines: out.boot_lines,
        mtime: input.mtime,
        bundle: None,
        smi_driver: None,
        smi_cuda: None,
        gpus: Vec::new(),
        topology: None,
    }
}

/// Joins the first line of a streamed part to the last line of the part before, which the block
/// boundary cut (a line longer than a block): one line less, line numbers one less, and that
/// line counted once as long and as recognized.
fn continue_line(part: &mut ScanOutput, bytes: &[u8]) {
    part.lines -= 1;
    for e in part.events.iter_mut().chain(part.attachments.iter_mut()) {
        e.line = e.line.saturating_sub(1);
    }
    for b in part.boot_lines.iter_mut() {
        *b = b.saturating_sub(1);
    }
    part.boot_lines.retain(|&b| b > 0);
    let first = memchr::memchr(b'\n', bytes).map_or(bytes, |p| &bytes[..p]);
    let first = first.strip_suffix(b"\r").unwrap_or(first);
    if first.len() > scan::MAX_RECORD_BYTES {
        part.long_lines = part.long_lines.saturating_sub(1);
    }
    if formats::quick_shape(first).is_some() {
        part.recognized = part.recognized.saturating_sub(1);
    }
}

/// Says how many anchors in long lines recognizers could not read (their events may be lost).
fn lost_anchor_warning(out: &ScanOutput, warnings: &mut Vec<String>) {
    if out.lost_anchors > 0 {
        warnings.push(format!(
            "{} anchor(s) inside line(s) longer than {} bytes lay past the parts recognizers read (the line's head and the window around its last anchor): their events, if any, are lost",
            out.lost_anchors,
            scan::MAX_RECORD_BYTES
        ));
    }
}

fn most_common_host(events: &[RawEvent]) -> Option<String> {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for e in events {
        if let Some(h) = &e.host {
            *counts.entry(h.as_str()).or_default() += 1;
        }
    }
    counts
        .into_iter()
        .max_by_key(|(h, c)| (*c, std::cmp::Reverse(*h)))
        .map(|(h, _)| h.to_string())
}

fn smi_gpus(dump: &nvidia_smi::SmiDump, host: Option<String>) -> Vec<GpuRecord> {
    dump.gpus
        .iter()
        .map(|g| {
            let f = |k: &str| g.fields.get(k).filter(|v| *v != "N/A").cloned();
            GpuRecord {
                host: host.clone(),
                bus_id: g.bus_id.clone(),
                uuid: f("GPU UUID").or_else(|| f("uuid")),
                serial: f("Serial Number").or_else(|| f("serial")),
                name: f("Product Name").or_else(|| f("product_name")),
                vbios: f("VBIOS Version").or_else(|| f("vbios_version")),
                state: g
                    .fields
                    .iter()
                    .filter(|(k, _)| {
                        k.starts_with("ECC Errors")
                            || k.starts_with("ecc_errors")
                            || k.starts_with("remapped_rows")
                            || k.starts_with("retired_pages")
                            || k.contains("slowdown")
                            || k.starts_with("Remapped Rows")
                            || k.starts_with("Retired Pages")
                            || k.contains("Slowdown")
                            || k.contains("Power Brake")
                            || k.starts_with("GPU Recovery Action")
                            || k.starts_with("GPU Reset Status")
                    })
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            }
        })
        .collect()
}

#[allow(clippy::too_many_arguments)]
fn smi_events(
    index: usize,
    dump: &nvidia_smi::SmiDump,
    lines: &[&str],
    line_base: usize,
    stamp: LineStamp,
    host: Option<String>,
    catalog: &Catalog,
    out: &mut Vec<RawEvent>,
) {
    for e in &dump.events {
        let (layer, _) = catalog.classify(e.kind, None);
        let reason = e.attrs.get("reason").cloned().unwrap_or_default();
        out.push(RawEvent {
            input: index,
            line: (line_base + e.line) as u64 + 1,
            kind: e.kind.to_string(),
            code: None,
            gpu: e.gpu.clone(),
            rank: None,
            host: host.clone(),
            layer,
            severity: if e.severity == Severity::Info {
                Severity::Warning
            } else {
                e.severity
            },
            message: lines
                .get(e.line)
                .map_or_else(|| reason.clone(), |l| l.to_string()),
            body: reason,
            stamp,
            borrowed_time: false,
            boot: 0,
            recognizer: "nvidia-smi-q".into(),
            attrs: e.attrs.clone(),
            bmc: false,
            suppressed: 0,
        });
    }
}
