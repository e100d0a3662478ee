//! `dcgmi diag` output (its table, or `-j` JSON): the recognizers over its lines, and one event
//! per failed or warned test from the parsed results.

use super::{Ctx, Parsed};
use crate::formats::dcgmi;
use crate::model::{LineStamp, RawEvent};
use crate::scan;

/// Reads a `dcgmi diag` report.
pub fn read(buf: &[u8], ctx: &Ctx) -> Parsed {
    let mut out = scan::scan_buffer(buf, ctx.set, ctx.parallel, ctx.cap);
    let text = String::from_utf8_lossy(buf);
    let (evs, rows) = if dcgmi::looks_like_json(buf) {
        dcgmi::json_events(&text, ctx.catalog)
    } else {
        dcgmi::events(&text, ctx.catalog)
    };
    out.recognized = out.recognized.max(rows).min(out.lines);
    let extra = evs
        .into_iter()
        .map(|e| {
            let (layer, _) = ctx.catalog.classify(&e.kind, None);
            RawEvent {
                input: ctx.index,
                line: e.line as u64 + 1,
                kind: crate::events::intern(&e.kind),
                code: None,
                gpu: e.gpu_index.as_deref().map(std::sync::Arc::from),
                rank: None,
                host: None,
                layer,
                severity: e.severity,
                message: text.lines().nth(e.line).unwrap_or("").into(),
                body: crate::model::Body::Own(
                    e.attrs
                        .get("result")
                        .map_or_else(Default::default, |r| r.as_str().into()),
                ),
                stamp: LineStamp::default(),
                borrowed_time: false,
                boot: 0,
                recognizer: "dcgmi-diag",
                attrs: e.attrs.into(),
                bmc: false,
                suppressed: 0,
            }
        })
        .collect();
    Parsed {
        extra,
        ..Parsed::scanned(out, buf.len() as u64)
    }
}
