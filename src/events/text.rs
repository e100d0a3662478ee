//! Text of a record as recognizers read it.

pub use crate::formats::MAX_RECORD_BYTES;

/// Undoes rsyslog/kmsg escapes of newlines and cuts overly long text.
pub fn normalize_body(s: &str) -> String {
    let s = if s.len() > MAX_RECORD_BYTES {
        &s[..floor_char(s, MAX_RECORD_BYTES)]
    } else {
        s
    };
    // the escapes begin with `#` or `\\`: most texts hold neither
    let escaped = memchr::memchr2(b'#', b'\\', s.as_bytes()).is_some()
        && (s.contains("#012") || s.contains("\\012") || s.contains("\\x0a"));
    if escaped {
        s.replace("#012", "\n")
            .replace("\\012", "\n")
            .replace("\\x0a", "\n")
    } else {
        s.to_string()
    }
}

/// [`normalize_body`] of an owned text: the text itself when there is nothing to undo or cut
/// (no copy of a long record).
pub fn normalize_owned(s: String) -> String {
    if s.len() <= MAX_RECORD_BYTES && memchr::memchr2(b'#', b'\\', s.as_bytes()).is_none() {
        return s;
    }
    normalize_body(&s)
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
