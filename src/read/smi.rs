//! `nvidia-smi -q` dumps (text or XML) and the `nvidia-smi topo -m` matrix: the recognizers over
//! their lines, the GPUs they describe, and events for the states they report.

use super::{Ctx, GpuRecord, Parsed};
use crate::formats::{nvidia_smi, nvidia_smi_xml, nvlink, topo};
use crate::model::{LineStamp, RawEvent, Severity};
use crate::scan;

/// Reads `nvidia-smi topo -m` output.
pub fn topology(buf: &[u8], ctx: &Ctx) -> Parsed {
    let mut out = scan::scan_buffer(buf, ctx.set, ctx.parallel, ctx.cap);
    let topology = topo::parse(&String::from_utf8_lossy(buf));
    if topology.is_some() {
        out.recognized = out.lines;
    }
    Parsed {
        topology,
        ..Parsed::scanned(out, buf.len() as u64)
    }
}

/// Reads `nvidia-smi nvlink -s` / `-e` tables: one `nvlink_error` per GPU with inactive links
/// (judged against its product) and per non-zero error counter.
pub fn nvlink(buf: &[u8], ctx: &Ctx) -> Parsed {
    let mut out = scan::scan_buffer(buf, ctx.set, ctx.parallel, ctx.cap);
    let text = String::from_utf8_lossy(buf);
    let (gpus, recognized) = nvlink::parse(&text);
    out.recognized = out.recognized.max(recognized).min(out.lines);
    let lines: Vec<&str> = text.lines().collect();
    let (layer, _) = ctx.catalog.classify("nvlink_error", None);
    let mut extra = Vec::new();
    for e in gpus.iter().flat_map(|g| nvlink::judge(g, ctx.catalog)) {
        let reason = e.attrs.get("reason").cloned().unwrap_or_default();
        extra.push(RawEvent {
            input: ctx.index,
            line: e.line as u64 + 1,
            kind: "nvlink_error",
            code: None,
            gpu: Some(std::sync::Arc::from(e.gpu.as_str())),
            rank: None,
            host: None,
            layer,
            severity: e.severity,
            message: lines.get(e.line).map_or("", |l| l).into(),
            body: crate::model::Body::Own(reason.into()),
            stamp: LineStamp::default(),
            borrowed_time: false,
            boot: 0,
            recognizer: "nvidia-smi-nvlink",
            attrs: e.attrs.into(),
            bmc: false,
            suppressed: 0,
        });
    }
    Parsed {
        extra,
        ..Parsed::scanned(out, buf.len() as u64)
    }
}

/// Reads an `nvidia-smi -q` dump (text or `-x` XML).
pub fn dump(buf: &[u8], ctx: &Ctx) -> Parsed {
    let mut out = scan::scan_buffer(buf, ctx.set, ctx.parallel, ctx.cap);
    let text = String::from_utf8_lossy(buf);
    let dump = if nvidia_smi_xml::looks_like(buf) {
        nvidia_smi_xml::parse(&text)
    } else {
        nvidia_smi::parse(&text)
    };
    out.recognized = out.recognized.max(dump.recognized).min(out.lines);
    let lines: Vec<&str> = text.lines().collect();
    let at = At {
        lines: &lines,
        base: 0,
        stamp: dump.stamp,
        host: None,
    };
    let mut extra = Vec::new();
    events(ctx, &dump, &at, &mut extra);
    Parsed {
        extra,
        gpus: gpus(&dump, None),
        smi_driver: dump.driver.clone(),
        smi_cuda: dump.cuda.clone(),
        ..Parsed::scanned(out, buf.len() as u64)
    }
}

/// Where a dump sits in its input: its lines (from its first), the line number of its first,
/// its time and its host.
pub struct At<'a> {
    /// The input's lines from the dump's first on.
    pub lines: &'a [&'a str],
    /// Lines before the dump.
    pub base: usize,
    /// Time of the dump.
    pub stamp: LineStamp,
    /// Host, when the input names it.
    pub host: Option<String>,
}

/// The GPUs a dump describes, with the counters and states worth keeping.
pub fn gpus(dump: &nvidia_smi::SmiDump, host: Option<String>) -> Vec<GpuRecord> {
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
                    .filter(|(k, _)| kept_state(k))
                    .map(|(k, v)| (k.clone(), v.clone()))
                    .collect(),
            }
        })
        .collect()
}

/// The fields of a GPU kept as its state (text and XML names).
fn kept_state(k: &str) -> bool {
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
}

/// The events of a dump (at least warnings), classified with the catalog, into `out`.
pub fn events(ctx: &Ctx, dump: &nvidia_smi::SmiDump, at: &At, out: &mut Vec<RawEvent>) {
    for e in &dump.events {
        let (layer, _) = ctx.catalog.classify(e.kind, None);
        // an unreadable field of a GPU that answers others: the driver fails the query
        let layer = match (e.kind, e.severity) {
            ("nvml_error", Severity::Critical) => crate::model::Layer::Hardware,
            ("nvml_error", _) => crate::model::Layer::DriverStack,
            _ => layer,
        };
        let reason = e.attrs.get("reason").cloned().unwrap_or_default();
        out.push(RawEvent {
            input: ctx.index,
            line: (at.base + e.line) as u64 + 1,
            kind: e.kind,
            code: None,
            gpu: e.gpu.as_deref().map(std::sync::Arc::from),
            rank: None,
            host: at.host.as_deref().map(std::sync::Arc::from),
            layer,
            severity: e.severity,
            message: at
                .lines
                .get(e.line)
                .map_or_else(|| reason.as_str().into(), |l| (*l).into()),
            body: crate::model::Body::Own(reason.into()),
            stamp: at.stamp,
            borrowed_time: false,
            boot: 0,
            recognizer: "nvidia-smi-q",
            attrs: e.attrs.clone().into(),
            bmc: false,
            suppressed: 0,
        });
    }
}
