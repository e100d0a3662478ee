//! `nvidia-bug-report.log`: the recognizers over all its sections, its metadata (host, driver,
//! capture time), and the nvidia-smi dumps inside it read as such.

use super::{smi, Ctx, Parsed};
use crate::formats::{bug_report, nvidia_smi};
use crate::model::LineStamp;
use crate::scan;

/// Reads a bug report.
pub fn read(buf: &[u8], ctx: &Ctx) -> Parsed {
    let mut out = scan::scan_buffer(buf, ctx.set, ctx.parallel, ctx.cap);
    let text = String::from_utf8_lossy(buf);
    let info = bug_report::parse(&text);
    let lines: Vec<&str> = text.lines().collect();
    let mut p = Parsed::default();
    for (s, e) in bug_report::smi_sections(&info) {
        let (s, e) = (s.min(lines.len()), e.min(lines.len()));
        let dump = nvidia_smi::parse(&lines[s..e].join("\n"));
        let stamp = if dump.stamp.wall.is_some() {
            dump.stamp
        } else {
            LineStamp {
                wall: info.captured,
                mono_us: None,
                tod_us: None,
            }
        };
        let at = smi::At {
            lines: &lines[s..],
            base: s,
            stamp,
            host: info.host.clone(),
        };
        smi::events(ctx, &dump, &at, &mut p.extra);
        p.smi_driver = p.smi_driver.or(dump.driver.clone());
        p.smi_cuda = p.smi_cuda.or(dump.cuda.clone());
        p.gpus.extend(smi::gpus(&dump, info.host.clone()));
    }
    out.recognized = out.lines;
    Parsed {
        out,
        bundle: Some(info),
        bytes: buf.len() as u64,
        ..p
    }
}
