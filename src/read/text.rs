//! Lines of text of every line format (syslog, dmesg, journal, trainer and job logs, BMC
//! exports...): the recognizers over the whole buffer, in parallel chunks when it is large; and
//! `journalctl -o json`, one entry per line.

use super::{Ctx, Parsed};
use crate::scan;

/// Scans `buf` with the recognizers.
pub fn read(buf: &[u8], ctx: &Ctx) -> Parsed {
    let out = scan::scan_buffer(buf, ctx.set, ctx.parallel, ctx.cap);
    Parsed::scanned(out, buf.len() as u64)
}

/// Reads the entries of `journalctl -o json` output.
pub fn journal_json(buf: &[u8], ctx: &Ctx) -> Parsed {
    let out = scan::journal_json::scan(buf, ctx.set, ctx.cap);
    Parsed::scanned(out, buf.len() as u64)
}
