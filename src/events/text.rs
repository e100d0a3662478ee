//! Text of a record as recognizers read it.

/// Lines longer than this are cut for recognizers (the whole line is still searched for anchors).
pub const MAX_RECORD_BYTES: usize = 64 * 1024;

/// Undoes rsyslog/kmsg escapes of newlines and cuts overly long text.
pub fn normalize_body(s: &str) -> String {
    let s = if s.len() > MAX_RECORD_BYTES {
        &s[..floor_char(s, MAX_RECORD_BYTES)]
    } else {
        s
    };
    if s.contains("#012") || s.contains("\\012") || s.contains("\\x0a") {
        s.replace("#012", "\n")
            .replace("\\012", "\n")
            .replace("\\x0a", "\n")
    } else {
        s.to_string()
    }
}

fn floor_char(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}
