//! Terminal-safe text: what every text output (the text report, the timeline, the scan and
//! merge tables, `scan --list`, warnings and notes on stderr) does to each string that comes
//! from an input — log lines, paths, archive member names, host names — before writing it.
//! Control characters that a terminal acts on become visible escapes: C0 controls (a newline in
//! a tar member name would forge report lines; ESC starts CSI/OSC sequences: `ESC[2J`, OSC 8
//! links, OSC 52 clipboard writes, OSC 0 titles), DEL, C1 controls (U+009B is a one-byte CSI),
//! and the bidirectional overrides, embeddings and isolates (U+202A-U+202E, U+2066-U+2069, and
//! the marks U+200E, U+200F, U+061C) that reorder what a reader sees, as do the line and
//! paragraph separators U+2028/U+2029. A tab is kept: it moves the cursor but cannot
//! hide or rewrite text. The HTML and Markdown renderers escape markup on their own
//! (`report::push_visible`).

use std::borrow::Cow;

/// True for a character that is invisible or reorders text and so can make one text look like
/// another (`kern\u{200b}.log` looks like `kern.log`): bidi marks, overrides and isolates, the
/// Arabic letter mark, line and paragraph separators, zero-width spaces and joiners, the word
/// joiner and invisible operators, the byte-order mark, the soft hyphen, fillers and tag
/// characters. Every renderer shows them as escapes.
pub fn invisible(c: char) -> bool {
    matches!(c,
        '\u{00ad}' | '\u{034f}' | '\u{061c}' | '\u{115f}' | '\u{1160}' | '\u{17b4}' | '\u{17b5}'
        | '\u{180e}' | '\u{200b}'..='\u{200f}' | '\u{2028}'..='\u{202e}'
        | '\u{2060}'..='\u{206f}' | '\u{3164}' | '\u{feff}' | '\u{ffa0}'
        | '\u{fff9}'..='\u{fffb}' | '\u{e0000}'..='\u{e007f}')
}

/// True for a character `terminal_safe` escapes.
fn unsafe_char(c: char) -> bool {
    matches!(c, '\u{0}'..='\u{8}' | '\u{a}'..='\u{1f}' | '\u{7f}'..='\u{9f}') || invisible(c)
}

/// `s` with every control character and bidi control as a visible escape: `\n`, `\r`, `\e`
/// (ESC), `\xHH` (other C0 and DEL), `\u{HHHH}` (C1, bidi); borrowed when nothing changes.
pub fn terminal_safe(s: &str) -> Cow<'_, str> {
    if !s.chars().any(unsafe_char) {
        return Cow::Borrowed(s);
    }
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '\n' => o.push_str("\\n"),
            '\r' => o.push_str("\\r"),
            '\u{1b}' => o.push_str("\\e"),
            c if unsafe_char(c) && (c as u32) < 0x80 => {
                o.push_str(&format!("\\x{:02x}", c as u32));
            }
            c if unsafe_char(c) => o.push_str(&format!("\\u{{{:04x}}}", c as u32)),
            c => o.push(c),
        }
    }
    Cow::Owned(o)
}

#[cfg(test)]
mod tests {
    use super::terminal_safe;

    #[test]
    fn each_escape_class_becomes_visible() {
        let cases = [
            ("\u{1b}[2J", "\\e[2J"),
            (
                "\u{1b}]8;;http://evil/\u{1b}\\click\u{1b}]8;;\u{1b}\\",
                "\\e]8;;http://evil/\\e\\click\\e]8;;\\e\\",
            ),
            (
                "\u{1b}]52;c;Y3VybCBldmls\u{7}",
                "\\e]52;c;Y3VybCBldmls\\x07",
            ),
            ("\u{1b}]0;owned\u{7}", "\\e]0;owned\\x07"),
            ("a\nfake line\r", "a\\nfake line\\r"),
            ("x\u{7f}\u{9b}31m", "x\\x7f\\u{009b}31m"),
            ("\u{202e}gnp.exe\u{202c}", "\\u{202e}gnp.exe\\u{202c}"),
            ("\u{2066}\u{2069}", "\\u{2066}\\u{2069}"),
            // issue 37: invisible characters make one name look like another
            ("kern\u{200b}.log", "kern\\u{200b}.log"),
            (
                "a\u{200c}\u{200d}\u{2060}\u{feff}\u{ad}b",
                "a\\u{200c}\\u{200d}\\u{2060}\\u{feff}\\u{00ad}b",
            ),
            ("x\u{e0041}\u{e007f}", "x\\u{e0041}\\u{e007f}"),
            ("\u{61c}\u{2028}\u{2029}", "\\u{061c}\\u{2028}\\u{2029}"),
            ("tab\tkept, é ünïcode kept", "tab\tkept, é ünïcode kept"),
        ];
        for (i, o) in cases {
            assert_eq!(terminal_safe(i), o, "{i:?}");
            assert!(!terminal_safe(i).bytes().any(|b| b == 0x1b || b == b'\n'));
        }
        assert!(matches!(
            terminal_safe("plain"),
            std::borrow::Cow::Borrowed(_)
        ));
    }
}
