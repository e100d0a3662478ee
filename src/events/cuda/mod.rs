//! CUDA errors, library statuses, NCCL results and crashes read by their own explanation, with
//! the tables of data/cuda.toml: a CUDA error in any wrapper (see [`wrappers`]) becomes a
//! `cuda_error` (or `cuda_oom`) carrying its name, number, text and reading (layer, candidate
//! layers, meaning), with the kinds its code implies beside it (`ecc_dbe` for an uncorrectable
//! ECC error); NCCL errors get their result's reading ([`nccl`]); a crash gets the reading of
//! the library it happened in.

mod held;
pub mod nccl;
pub mod table;
pub mod wrappers;

use super::{Draft, Record};
use crate::model::Severity;
pub use table::{CudaTables, Entry, Hit};
use wrappers::Wrapped;

/// The CUDA tables (and the recognizers that use them) as shipped.
pub const BUILTIN_CUDA: &str = include_str!("../../../data/cuda.toml");

/// A wrapper's error resolved in the tables: by name first, then text, then number (numbers
/// of old runtimes differ from today's, texts do not).
fn resolve<'t>(t: &'t CudaTables, w: &Wrapped<'_>) -> Option<Hit<'t>> {
    let named = w.name.and_then(|n| t.by_name(n));
    // a text may itself start with a name (`CUDA error: cudaErrorIllegalAddress: ...`)
    let text_named = || {
        let text = w.text?;
        let (_, n) = wrappers::by_name(text.trim_start()).ok()?;
        t.by_name(n.name?)
    };
    named
        .or_else(text_named)
        .or_else(|| {
            w.text
                .and_then(|x| t.by_text(x.trim_start_matches(['\'', '"'])))
        })
        .or_else(|| w.number.and_then(|n| t.by_number(n)))
}

/// The first wrapper of the record that the tables read (taking an announced text from the
/// next line), or the first wrapper that could not be read (a lead), with its hit if any.
fn read<'r, 't>(t: &'t CudaTables, rec: &Record<'r>) -> Option<(Wrapped<'r>, Option<Hit<'t>>)> {
    let found = wrappers::find(rec.body);
    let mut unread = None;
    for w in found {
        let w = match (w.text_on_next_line, rec.following.first()) {
            (true, Some(next)) => wrappers::next_line(&w, next).unwrap_or(w),
            _ => w,
        };
        match resolve(t, &w) {
            Some(h) => return Some((w, Some(h))),
            // a C++ exception or a bare name counts only when the tables know its text
            // (and `(error code N)`, which other programs print too); a template in program
            // source (`f"CUDA error: {msg}"`) is no error either
            None if unread.is_none()
                && !matches!(w.wrapper, "cxx" | "by_name" | "error_code")
                && !w.text.is_some_and(|x| x.trim_start().starts_with('{')) =>
            {
                unread = Some(w)
            }
            None => {}
        }
    }
    unread.map(|w| (w, None))
}

/// Whether the record only carries the name and text announced by the line before it (NVHPC's
/// `(CUDA_ERROR_...): text` under `call to cu... returned error N`): that line has the event.
fn announced_above(rec: &Record<'_>) -> bool {
    let t = rec.body.trim_start();
    t.starts_with('(')
        && rec
            .preceding
            .last()
            .is_some_and(|p| p.contains("call to cu") && p.contains(" returned error "))
}

/// The drafts of a CUDA error record: the event of the first wrapper the tables read, with the
/// kinds its code implies; an error line no table reads is still an event (a lead, layer
/// `unknown`). A success code or a benign status gives nothing.
pub fn cuda_drafts(t: &CudaTables, rec: &Record<'_>, out: &mut Vec<Draft>) {
    if announced_above(rec) {
        return;
    }
    let Some((w, hit)) = read(t, rec) else { return };
    let Some(h) = hit else {
        let mut d = Draft::new("cuda_error");
        put(&mut d, &w);
        d.layer = Some(crate::model::Layer::Unknown);
        d.attrs
            .insert_str("reading", "a CUDA error whose text the tables do not hold");
        out.push(d);
        return;
    };
    let e = h.entry;
    if e.benign.is_some() {
        return;
    }
    let mut d = Draft::new(e.kind.as_deref().unwrap_or("cuda_error"));
    d.code = e.number;
    d.layer = e.layer;
    d.severity = Some(Severity::Error);
    d.attrs.insert_str("error", h.name);
    if let Some(n) = e.driver.as_deref().filter(|n| *n != h.name) {
        d.attrs.insert_str("driver_name", n);
    }
    if let (Some(p), Some(n)) = (w.number, e.number) {
        if p != n {
            // old runtimes numbered differently (`error=4 : unspecified launch failure`)
            d.attrs.insert("printed_code", p.to_string());
        }
    }
    put(&mut d, &w);
    if let Some(x) = e.text() {
        d.attrs.insert_str("text", x);
    }
    reading(&mut d, e);
    let also: Vec<Draft> = e.also.iter().map(|k| beside(&d, k)).collect();
    out.push(d);
    out.extend(also);
}

/// The wrapper's own fields as details.
fn put(d: &mut Draft, w: &Wrapped<'_>) {
    d.attrs.insert_str("wrapper", w.wrapper);
    if let Some(c) = w.call {
        d.attrs.insert_str("call", c);
    }
    if let Some(s) = w.site {
        d.attrs.insert_str("site", s);
    }
    if let Some(x) = w.text.map(str::trim).filter(|x| !x.is_empty()) {
        d.attrs.insert_str("text", x);
    }
}

/// An entry's reading as details: `reading` (the meaning), `candidates` (other layers, comma
/// separated, likeliest first), `follow_on`.
pub fn reading(d: &mut Draft, e: &Entry) {
    if !e.meaning.is_empty() {
        d.attrs.insert_str("reading", &e.meaning);
    }
    if !e.candidates.is_empty() {
        let c: Vec<&str> = e.candidates.iter().map(|l| l.as_str()).collect();
        d.attrs.insert("candidates", c.join(","));
    }
    if e.follow_on {
        d.attrs.insert_str("follow_on", "true");
        d.severity = Some(Severity::Warning);
    }
}

/// A kind raised beside `d` by its code (`ecc_dbe` beside an uncorrectable-ECC CUDA error): the
/// same details, its own kind's layer.
fn beside(d: &Draft, kind: &str) -> Draft {
    let mut b = Draft::new(kind);
    b.code = d.code;
    b.attrs = d.attrs.clone();
    b.attrs.insert_str("reported_by", "cuda");
    b.severity = Some(Severity::Error);
    b.derived = true;
    b
}

/// Reads a crash by the library it happened in (`segfault at ... in libnccl.so.2`): the
/// library's reading when the table knows it; the job's own code (the kind's layer) otherwise.
pub fn annotate_crash(t: &CudaTables, d: &mut Draft) {
    if d.kind != "segfault" {
        return;
    }
    let Some(lib) = d.attrs.get("library").map(str::to_string) else {
        return;
    };
    let Some(e) = t.crash_library(&lib) else {
        return;
    };
    if d.layer.is_none() {
        d.layer = e.layer;
    }
    reading(d, e);
}

#[cfg(test)]
mod tests;
