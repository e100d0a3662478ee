//! NCCL errors read by their result (`ncclResult_t`) and, for system errors, by the path and
//! errno they name: an `nccl_error` draft gets `nccl_result`, `nccl_code` and the result's
//! reading (`ncclUnhandledCudaError`: a CUDA call inside NCCL failed, the GPU or driver side;
//! `ncclInvalidUsage`: the launch; `ncclRemoteError`: the peer), and a system error its own
//! (`failed to extend /dev/shm/... No space left on device (28)`: the container's shared memory).
//! The result comes from the line (a name, `NCCL error: <text>`, `NCCL Error 5:`), from the
//! recognizer (`details = { nccl_result = ... }`), or from NCCL's return trace
//! (`NCCL INFO init.cc:840 -> 5`, the `nccl_return` attachment merged into the error above it).

use super::held::Held;
use super::{reading, CudaTables, Entry};
use crate::events::Draft;

/// The kind of the return-trace attachment (`NCCL INFO file.cc:N -> R`).
pub const RETURN_KIND: &str = "nccl_return";

/// The families whose own reading (the transport that failed) stands over a result learnt from
/// the return trace below them: a socket or InfiniBand failure returns `ncclSystemError` or
/// `ncclInternalError`, which says less than the family.
const OWN_READING: [&str; 7] = [
    "socket",
    "ib",
    "ib_completion",
    "bootstrap",
    "proxy",
    "timeout",
    "cuda",
];

/// The result a line names: a result name, `NCCL Error N:`/`NCCL error N:`, or a result text.
fn result_in<'t>(t: &'t CudaTables, body: &str, held: &Held) -> Option<&'t Entry> {
    let numbered = || {
        let at = body
            .find("NCCL Error ")
            .or_else(|| body.find("NCCL error "))?
            + 11;
        let digits: String = body[at..]
            .chars()
            .take_while(char::is_ascii_digit)
            .collect();
        body[at + digits.len()..]
            .starts_with(':')
            .then(|| t.nccl_by_value(digits.parse().ok()?))
            .flatten()
    };
    t.nccl_named(held)
        .or_else(numbered)
        .or_else(|| t.nccl_by_text_held(body, held))
        .or_else(|| t.nccl_by_text(reported(body)?))
}

/// What a wrapper reports as the result's text: after `NCCL error: ` or `NCCL error in: FILE, `
/// up to a comma or a parenthesis, or the quoted text of `Test NCCL failure FILE 'text'`.
fn reported(body: &str) -> Option<&str> {
    if let Some(at) = body.find("Test NCCL failure ") {
        let q = body[at..].find('\'')? + at;
        return Some(body[q..].trim_end_matches('\''));
    }
    let at = body.find("NCCL error")? + "NCCL error".len();
    let rest = body[at..].trim_start_matches(':').trim_start();
    let rest = match rest.strip_prefix("in: ") {
        Some(r) => r.split_once(", ")?.1,
        None => rest,
    };
    rest.split([',', '(', '\n']).next()
}

/// Reads an `nccl_error` draft (or a return-trace attachment) by its result and system error.
pub fn annotate(t: &CudaTables, d: &mut Draft, body: &str) {
    if d.kind != "nccl_error" && d.kind != RETURN_KIND {
        return;
    }
    let given = d.attrs.get("nccl_result").and_then(|n| t.nccl_by_name(n));
    let traced = || {
        let code = d.attrs.get("nccl_code")?.parse().ok()?;
        t.nccl_by_value(code)
    };
    // the tables' literals in the record, found once for every lookup below
    let held = t.held(body);
    let result = given.or_else(traced).or_else(|| result_in(t, body, &held));
    let system = t.system_error_held(body, &held);
    if let Some(r) = result {
        if let Some(n) = r.name.as_deref() {
            d.attrs.insert_str("nccl_result", n);
        }
        if let Some(v) = r.number {
            d.attrs.insert("nccl_code", v.to_string());
        }
    }
    let Some(e) = system.or(result) else { return };
    if let Some(p) = system.and_then(|s| s.path.as_deref()) {
        d.attrs.insert_str("system_path", p);
    }
    if d.kind == RETURN_KIND {
        // carried to the error it is merged into, which decides whether to take it
        if let Some(l) = e.layer {
            d.attrs.insert_str("result_layer", l.as_str());
        }
    } else if d.layer.is_none() {
        d.layer = e.layer;
    }
    reading(d, e);
}

/// Whether an NCCL error takes the layer of a result learnt from the return trace below it:
/// only when nothing read it already (no result, and no family with a reading of its own).
pub fn takes_traced_result(family: Option<&str>, has_result: bool) -> bool {
    !has_result && family.is_none_or(|f| !OWN_READING.contains(&f))
}
