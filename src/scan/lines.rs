//! Lines of a buffer: neighbours, continuations and hard wraps.

use crate::formats::wrapper::FileWrappers;
use crate::formats::{parse_head, parse_head_with};

pub(super) fn lossy(b: &[u8]) -> String {
    text(b).into_owned()
}

/// `b` as text, invalid UTF-8 replaced: `str::from_utf8` first, whose check of ASCII goes a
/// word at a time, where `String::from_utf8_lossy` went by chunks (a tenth of the time on a
/// long record).
pub(super) fn text(b: &[u8]) -> std::borrow::Cow<'_, str> {
    match std::str::from_utf8(b) {
        Ok(s) => s.into(),
        Err(_) => String::from_utf8_lossy(b),
    }
}

pub(super) fn trim_cr(l: &[u8]) -> &[u8] {
    l.strip_suffix(b"\r").unwrap_or(l)
}

pub(super) fn prev_line(buf: &[u8], start: usize) -> Option<(usize, usize)> {
    if start == 0 {
        return None;
    }
    let end = start - 1;
    let s = memchr::memrchr(b'\n', &buf[..end]).map_or(0, |p| p + 1);
    Some((s, end))
}

pub(super) fn next_line(buf: &[u8], end: usize) -> Option<(usize, usize)> {
    if end >= buf.len() {
        return None;
    }
    let s = end + 1;
    if s >= buf.len() {
        return None;
    }
    let e = memchr::memchr(b'\n', &buf[s..]).map_or(buf.len(), |p| s + p);
    Some((s, e))
}

/// Whether `line` continues `prev` as [`candidate`] walks a record: a kernel continuation, or a
/// terminal's hard wrap of a wrapped line.
pub(super) fn continues(prev: &[u8], line: &[u8], fw: &FileWrappers) -> bool {
    let prev_wrapped = fw.mostly_wrapped && parse_head_with(prev, fw.learned.as_deref()).wrapped;
    is_continuation(line)
        || (prev_wrapped && prev.len() >= MIN_WRAPPED_WIDTH && is_hard_wrap(line, fw))
}

/// A continuation line of a multi-line kernel record: indented and without a prefix of its own.
pub(super) fn is_continuation(line: &[u8]) -> bool {
    line.len() > 8
        && line[..8].iter().all(|&c| c == b' ' || c == b'\t')
        && parse_head(line).prefix.is_none()
}

/// Lines shorter than this were not cut by a terminal: the next line is not their hard wrap.
pub(super) const MIN_WRAPPED_WIDTH: usize = 72;

/// A terminal's hard wrap: in a file whose lines mostly carry a wrapper, a line with neither a
/// wrapper nor a prefix continues the line before it.
pub(super) fn is_hard_wrap(line: &[u8], fw: &FileWrappers) -> bool {
    // `slurmstepd: error: ...`, `srun: ...`: a program's own line written next to the wrapped ones
    if !fw.mostly_wrapped
        || line.trim_ascii().is_empty()
        || crate::formats::wrapper::host_colon(line).is_some()
    {
        return false;
    }
    let h = parse_head_with(line, fw.learned.as_deref());
    !h.wrapped && h.prefix.is_none()
}
