//! Over-long JSON values cut before decoding: a journal entry whose MESSAGE is a gigabyte long
//! (a string, or a byte array of numbers) would be decoded whole. [`cut_long_values`] copies
//! the text with every string and every array cut to a bounded length, still valid JSON, in one
//! pass and without decoding, so what is decoded after stays small whatever the input.

use std::borrow::Cow;

/// `text` with every string longer than `max` bytes cut after about `max` bytes (never inside
/// an escape or a UTF-8 sequence) and every array longer than `max` bytes cut after the element
/// that crosses it; borrowed when nothing is that long. The second value is true when something
/// was cut. `text` must start outside any string (an object, or a `"key" : value` line).
pub fn cut_long_values(text: &[u8], max: usize) -> (Cow<'_, [u8]>, bool) {
    if text.len() <= max {
        return (Cow::Borrowed(text), false);
    }
    let mut c = Cutter {
        out: Vec::with_capacity(text.len().min(4 * max + 1024)),
        max,
        arrays: Vec::new(),
        cut: false,
    };
    let mut i = 0;
    while i < text.len() {
        i = c.step(text, i);
    }
    let cut = c.cut;
    if !cut {
        return (Cow::Borrowed(text), false);
    }
    (Cow::Owned(c.out), true)
}

struct Cutter {
    out: Vec<u8>,
    max: usize,
    /// Where each open array began in `out`.
    arrays: Vec<usize>,
    cut: bool,
}

impl Cutter {
    /// Copies the token at `i` (a string, a bracket, or one other byte); returns where the next
    /// one starts.
    fn step(&mut self, text: &[u8], i: usize) -> usize {
        match text[i] {
            b'"' => self.string(text, i),
            b'[' => {
                self.arrays.push(self.out.len());
                self.out.push(b'[');
                i + 1
            }
            b']' => {
                self.arrays.pop();
                self.out.push(b']');
                i + 1
            }
            b',' if self
                .arrays
                .last()
                .is_some_and(|&s| self.out.len() - s > self.max) =>
            {
                // the array is long enough: the rest of its elements are dropped
                self.cut = true;
                self.arrays.pop();
                self.out.push(b']');
                skip_array_rest(text, i)
            }
            b => {
                self.out.push(b);
                i + 1
            }
        }
    }

    /// Copies the string that opens at `i`, cut past `max` bytes; returns the index after its
    /// closing quote.
    fn string(&mut self, text: &[u8], i: usize) -> usize {
        self.out.push(b'"');
        let mut j = i + 1;
        let mut kept = 0;
        while j < text.len() {
            let b = text[j];
            if b == b'"' {
                self.out.push(b'"');
                return j + 1;
            }
            if kept >= self.max && b != b'\\' && !is_continuation(b) {
                // cut here: at a character's start, outside an escape
                self.cut = true;
                self.out.push(b'"');
                return string_end(text, j);
            }
            let len = if b == b'\\' { escape_len(text, j) } else { 1 };
            let end = (j + len).min(text.len());
            self.out.extend_from_slice(&text[j..end]);
            kept += end - j;
            j = end;
        }
        j
    }
}

fn is_continuation(b: u8) -> bool {
    b & 0xC0 == 0x80
}

/// Length of the escape at `j` (`\n`: 2, `\u00e9`: 6).
fn escape_len(text: &[u8], j: usize) -> usize {
    match text.get(j + 1) {
        Some(b'u') => 6,
        _ => 2,
    }
}

/// The index after the closing quote of the string whose content goes on at `j`.
fn string_end(text: &[u8], mut j: usize) -> usize {
    while j < text.len() {
        match memchr::memchr2(b'"', b'\\', &text[j..]) {
            None => return text.len(),
            Some(k) if text[j + k] == b'\\' => j += k + 2,
            Some(k) => return j + k + 1,
        }
    }
    text.len()
}

/// The index after the `]` that closes the array whose element list goes on at `i`.
fn skip_array_rest(text: &[u8], mut i: usize) -> usize {
    let mut depth = 0usize;
    while i < text.len() {
        match text[i] {
            b'"' => {
                i = string_end(text, i + 1);
                continue;
            }
            b'[' | b'{' => depth += 1,
            b']' | b'}' if depth == 0 => return i + 1,
            b']' | b'}' => depth -= 1,
            _ => {}
        }
        i += 1;
    }
    text.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn cut(s: &str, max: usize) -> (String, bool) {
        let (t, c) = cut_long_values(s.as_bytes(), max);
        (String::from_utf8(t.into_owned()).unwrap(), c)
    }

    #[test]
    fn short_text_is_borrowed_as_is() {
        let s = r#"{"MESSAGE":"NVRM: Xid 79","_HOSTNAME":"n1"}"#;
        let (t, c) = cut_long_values(s.as_bytes(), 1000);
        assert!(matches!(t, Cow::Borrowed(_)) && !c);
        // longer than the bound, but no value is: borrowed too
        let (t, c) = cut_long_values(s.as_bytes(), 14);
        assert!(matches!(t, Cow::Borrowed(_)) && !c);
    }

    #[test]
    fn a_long_string_is_cut_and_the_rest_kept() {
        let long = "é".repeat(50);
        let s = format!(r#"{{"MESSAGE":"a\"b{long}","_HOSTNAME":"n1","X":[1,2]}}"#);
        let (t, c) = cut(&s, 9);
        assert!(c);
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        let m = v["MESSAGE"].as_str().unwrap();
        assert!(m.starts_with("a\"bé") && m.len() <= 12, "{m}");
        assert_eq!(v["_HOSTNAME"], "n1");
        assert_eq!(v["X"], serde_json::json!([1, 2]));
    }

    #[test]
    fn never_inside_an_escape() {
        for max in 1..12 {
            let s = r#"{"M":"\u00e9\u00e9\n\n\"\\abc\u0041tail"}"#;
            let (t, _) = cut(s, max);
            let v: serde_json::Value =
                serde_json::from_str(&t).unwrap_or_else(|e| panic!("{max}: {t}: {e}"));
            assert!(v["M"].is_string());
        }
    }

    #[test]
    fn a_long_array_keeps_its_first_elements() {
        let nums: Vec<String> = (0..1000).map(|n| (n % 250).to_string()).collect();
        let s = format!(r#"{{"MESSAGE":[{}],"_BOOT_ID":"b"}}"#, nums.join(","));
        let (t, c) = cut(&s, 40);
        assert!(c && t.len() < 120, "{t}");
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert!(v["MESSAGE"].as_array().unwrap().len() >= 10);
        assert_eq!(v["_BOOT_ID"], "b");
    }

    #[test]
    fn arrays_of_strings_and_nested_values() {
        let s = r#"{"A":["xxxxxxxxxxxxxxxxxxxx","y]y","z"],"B":[[1,2],[3,4],[5,6]],"C":"ok"}"#;
        let (t, c) = cut(s, 6);
        assert!(c);
        let v: serde_json::Value = serde_json::from_str(&t).unwrap();
        assert_eq!(v["C"], "ok");
        assert!(v["A"].is_array() && v["B"].is_array());
    }

    #[test]
    fn a_truncated_text_does_not_panic() {
        for s in [
            r#"{"M":"abcdefghij"#,
            r#"{"M":[1,2,3,4,5,6"#,
            r#"{"M":"ab\"#,
            "\"\\",
        ] {
            let _ = cut(s, 2);
        }
    }
}
