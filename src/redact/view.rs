//! The text the recognizers read: one report value with every escape turned into a boundary.
//!
//! A value right after an ANSI colour code (`ESC[32mgpu-node-09`) or after a C/JSON escape
//! written out in the log (`\t10.77.1.99`, `\u001b[0m`, `\"token\": \"x\"`) must be found as if
//! the escape were a space. [`View`] is that text: each escape sequence becomes one character
//! (a space, or the character a `\"`, `\\`, `\'`, `\/` or printable `\uXXXX` stands for), every
//! other character is kept, and each byte remembers where it came from, so that a value found
//! in the view is replaced in the original and the escapes around it stay as they were.

/// A value as the recognizers see it, with the map back to the original.
pub struct View {
    /// The text with escapes as boundaries.
    pub text: String,
    /// For each byte of `text`, the offset of its source in the original.
    from: Vec<usize>,
    /// Length of the original.
    len: usize,
}

impl View {
    /// The view of `s`; `None` when `s` holds nothing to rewrite (the view is `s` itself).
    pub fn new(s: &str) -> Option<View> {
        if !s
            .bytes()
            .any(|b| b == b'\\' || b == b'^' || b < 0x20 || b == 0x7f)
            && !s.chars().any(|c| ('\u{80}'..='\u{9f}').contains(&c))
        {
            return None;
        }
        let mut text = String::with_capacity(s.len());
        let mut from = Vec::with_capacity(s.len());
        let mut i = 0;
        while i < s.len() {
            let (used, c) = escape_at(s, i);
            let c = c.unwrap_or_else(|| s[i..].chars().next().unwrap_or(' '));
            let used = used.max(c.len_utf8().min(s.len() - i));
            let before = text.len();
            text.push(c);
            // a character copied as it is maps byte for byte; a decoded escape maps to its start
            for k in 0..text.len() - before {
                from.push(if used == c.len_utf8() { i + k } else { i });
            }
            i += used;
        }
        Some(View {
            text,
            from,
            len: s.len(),
        })
    }

    /// The range of the original that `start..end` of the view came from.
    pub fn original(&self, start: usize, end: usize) -> (usize, usize) {
        let at = |p: usize| self.from.get(p).copied().unwrap_or(self.len);
        (at(start), at(end))
    }
}

/// The escape that starts at byte `i` of `s`: its length and the character that stands for it;
/// `(0, None)` when none starts there.
fn escape_at(s: &str, i: usize) -> (usize, Option<char>) {
    let b = s.as_bytes();
    match b[i] {
        0x1b => (i + 1 + sequence_len(&b[i + 1..]) - i, Some(' ')),
        b'\\' => backslash(b, i),
        // caret notation (`cat -v`, less): ^[[32m
        b'^' if b.get(i + 1) == Some(&b'[') && b.get(i + 2) == Some(&b'[') => {
            (2 + sequence_len(&b[i + 2..]), Some(' '))
        }
        c if c < 0x20 || c == 0x7f => (1, Some(' ')),
        _ => match s[i..].chars().next() {
            Some(c) if ('\u{80}'..='\u{9f}').contains(&c) => (c.len_utf8(), Some(' ')),
            _ => (0, None),
        },
    }
}

/// Length of the rest of an escape sequence after its ESC: CSI (`[` parameters, final byte),
/// OSC (`]` … BEL or ESC `\`), or one character.
fn sequence_len(b: &[u8]) -> usize {
    match b.first() {
        Some(b'[') => {
            let end = b[1..]
                .iter()
                .position(|c| (0x40..=0x7e).contains(c))
                .map_or(b.len(), |p| p + 2);
            end.min(b.len())
        }
        Some(b']') => {
            let mut k = 1;
            while k < b.len() {
                if b[k] == 0x07 {
                    return k + 1;
                }
                if b[k] == 0x1b && b.get(k + 1) == Some(&b'\\') {
                    return k + 2;
                }
                k += 1;
            }
            b.len()
        }
        Some(c) if c.is_ascii() => 1,
        _ => 0,
    }
}

/// A backslash escape at `i`: `\t \n \r \f \b \v \a \e \0`, `\\`, `\"`, `\'`, `\/`, `\xHH`,
/// `\uHHHH`, `\033`, and any of these followed by an escape sequence (`\u001b[0m`).
fn backslash(b: &[u8], i: usize) -> (usize, Option<char>) {
    let hex = |from: usize, n: usize| -> Option<u32> {
        let d = b.get(from..from + n)?;
        u32::from_str_radix(std::str::from_utf8(d).ok()?, 16).ok()
    };
    let (len, code) = match b.get(i + 1) {
        Some(b't' | b'n' | b'r' | b'f' | b'b' | b'v' | b'a') => (2, None),
        Some(b'e') => (2, Some(0x1b)),
        Some(b'0') if b.get(i + 2..i + 4) == Some(b"33") => (4, Some(0x1b)),
        Some(b'0') => (2, None),
        Some(b'\\') => return (2, Some('\\')),
        Some(b'"') => return (2, Some('"')),
        Some(b'\'') => return (2, Some('\'')),
        Some(b'/') => return (2, Some('/')),
        Some(b'x') => match hex(i + 2, 2) {
            Some(v) => (4, Some(v)),
            None => return (0, None),
        },
        Some(b'u') => match hex(i + 2, 4) {
            Some(v) => (6, Some(v)),
            None => return (0, None),
        },
        _ => return (0, None),
    };
    match code {
        // an escaped ESC swallows the sequence it starts
        Some(0x1b) => (len + sequence_len(&b[(i + len).min(b.len())..]), Some(' ')),
        Some(v) => match char::from_u32(v) {
            Some(c) if !c.is_control() => (len, Some(c)),
            _ => (len, Some(' ')),
        },
        None => (len, Some(' ')),
    }
}

#[cfg(test)]
mod tests {
    use super::View;

    fn view(s: &str) -> String {
        View::new(s).map_or_else(|| s.to_string(), |v| v.text)
    }

    #[test]
    fn escapes_become_boundaries_and_map_back() {
        assert_eq!(view("\u{1b}[32mgpu-node-09\u{1b}[0m"), " gpu-node-09 ");
        assert_eq!(view(r"\t10.77.1.99\n"), " 10.77.1.99 ");
        assert_eq!(view(r"\u001b[1mhost\u001b[0m"), " host ");
        assert_eq!(view(r"\x1b[31mred"), " red");
        assert_eq!(view(r"\033[31mred"), " red");
        assert_eq!(view("^[[31mred"), " red");
        assert_eq!(view("\u{1b}]0;title\u{7}x"), " x");
        assert_eq!(view(r#"{\"token\": \"abc\"}"#), r#"{"token": "abc"}"#);
        assert_eq!(view(r"C:\Users\me"), r"C:\Users\me");
        assert_eq!(view("a\u{9b}b"), "a b");
        let s = "\u{1b}[32mgpu-node-09\u{1b}[0m!";
        let v = View::new(s).unwrap();
        let (a, b) = v.original(1, 12);
        assert_eq!(&s[a..b], "gpu-node-09");
        assert_eq!(v.original(v.text.len(), v.text.len()), (s.len(), s.len()));
        let s = "é\tü";
        let v = View::new(s).unwrap();
        assert_eq!(v.text, "é ü");
        let (a, b) = v.original(3, 5);
        assert_eq!(&s[a..b], "ü");
    }
}
