//! Escaping for the Markdown report. Text from the inputs must not change the structure of the
//! document: prose and table cells are escaped with [`text`], identifiers in table cells go
//! through [`code_cell`], and verbatim lines sit in a fenced block whose fence ([`fence`]) is longer
//! than any run of backticks inside it, so that no line can end the block early.
//!
//! Control characters are shown as their Unicode control pictures and bidirectional and C1
//! controls by their code point (as in the HTML report), so that a line can neither reorder what
//! a reader sees nor act on a terminal; the JSON report keeps the bytes as read.

/// How the report writes text from the inputs: escaped (with `--redact` the report's values
/// were redacted before rendering, see `crate::redact`).
#[derive(Clone, Copy, Default)]
pub struct Md;

impl Md {
    /// The writer.
    pub fn new() -> Md {
        Md
    }

    /// [`text`] of the value.
    pub fn text(&self, s: &str) -> String {
        text(s)
    }

    /// The value escaped for HTML, for the text of the raw `<details>` blocks (where Markdown
    /// escapes would show as they are).
    pub fn html(&self, s: &str) -> String {
        crate::report::html::escape(s)
    }

    /// [`code_cell`] of the value.
    pub fn code_cell(&self, s: &str) -> String {
        code_cell(s)
    }

    /// [`code_block`] of the lines.
    pub fn code_block(&self, lines: &[String]) -> String {
        code_block(lines)
    }
}

/// Prose on one line, safe in a paragraph, a list item, a heading or a table cell: line breaks
/// and tabs become spaces, controls are shown, and every character that could start Markdown or
/// HTML markup or end a table cell is backslash-escaped (`_` only at the edge of a word, where it
/// could open emphasis). A pair of single backticks around a stretch without a backtick, a pipe
/// or a line break stays a code span (as in the rules' actions), since nothing inside one is
/// markup. The result must not start a line: callers put a label before it.
pub fn text(s: &str) -> String {
    let chars: Vec<char> = s.chars().collect();
    let mut o = String::with_capacity(s.len() + 8);
    let word = |j: Option<usize>| {
        j.and_then(|j| chars.get(j))
            .is_some_and(|c| c.is_alphanumeric())
    };
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        match c {
            '`' => match code_span_end(&chars, i) {
                Some(end) => {
                    for &x in &chars[i..=end] {
                        crate::report::push_visible(&mut o, x);
                    }
                    i = end;
                }
                None => o.push_str("\\`"),
            },
            '\n' | '\r' | '\t' => o.push(' '),
            '\\' | '*' | '[' | ']' | '<' | '>' | '|' | '#' | '&' | '~' => {
                o.push('\\');
                o.push(c);
            }
            '_' => {
                if !(word(i.checked_sub(1)) && word(Some(i + 1))) {
                    o.push('\\');
                }
                o.push('_');
            }
            _ => crate::report::push_visible(&mut o, c),
        }
        i += 1;
    }
    o
}

/// Where the code span opened by the single backtick at `open` closes: the next backtick, when
/// it is single too and the stretch between holds something and no pipe or line break.
fn code_span_end(chars: &[char], open: usize) -> Option<usize> {
    if open > 0 && chars[open - 1] == '`' {
        return None;
    }
    let close = open + 1 + chars[open + 1..].iter().position(|&c| c == '`')?;
    let inner = &chars[open + 1..close];
    let single = chars.get(close + 1) != Some(&'`');
    let clean = !inner.is_empty()
        && !inner.iter().all(|&c| c == ' ')
        && !inner.iter().any(|&c| matches!(c, '|' | '\n' | '\r'));
    (single && clean).then_some(close)
}

/// An identifier (path, bus id, UUID) as inline code in a table cell: one line, controls shown,
/// wrapped in a backtick run longer than any inside it. A value holding `|` is written as
/// escaped prose instead, because a backslash before the pipe would be ambiguous inside code.
pub fn code_cell(s: &str) -> String {
    if s.is_empty() {
        return "-".into();
    }
    if s.contains('|') {
        return text(s);
    }
    let mut inner = String::with_capacity(s.len());
    for c in s.chars() {
        match c {
            '\n' | '\r' | '\t' => inner.push(' '),
            _ => crate::report::push_visible(&mut inner, c),
        }
    }
    let ticks = "`".repeat(longest_run(&inner, '`') + 1);
    if inner.starts_with(['`', ' ']) || inner.ends_with(['`', ' ']) {
        format!("{ticks} {inner} {ticks}")
    } else {
        format!("{ticks}{inner}{ticks}")
    }
}

/// The longest run of `c` in `s`.
fn longest_run(s: &str, c: char) -> usize {
    let (mut best, mut cur) = (0, 0);
    for x in s.chars() {
        if x == c {
            cur += 1;
            best = best.max(cur);
        } else {
            cur = 0;
        }
    }
    best
}

/// The fence of a code block holding `body`: at least three backticks, and more than the longest
/// run of backticks in the body, so that no line of it closes the block.
pub fn fence(body: &str) -> String {
    "`".repeat((longest_run(body, '`') + 1).max(3))
}

/// A fenced code block of verbatim lines (controls shown), ending with a newline.
pub fn code_block(lines: &[String]) -> String {
    let mut body = String::new();
    for l in lines {
        for c in l.chars() {
            crate::report::push_visible(&mut body, c);
        }
        body.push('\n');
    }
    let f = fence(&body);
    format!("{f}\n{body}{f}\n")
}

/// One table row of already escaped cells.
pub fn row(cells: &[String]) -> String {
    format!("| {} |", cells.join(" | "))
}

/// A table's header row (column names as they are, not escaped) and its rule row.
pub fn head(cols: &[&str]) -> String {
    format!("| {} |\n|{}", cols.join(" | "), " --- |".repeat(cols.len()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prose_escapes_markup_pipes_and_line_breaks() {
        assert_eq!(text("a|b\nc\r\td"), r"a\|b c  d");
        assert_eq!(
            text("<script>[x](javascript:y) *b* # & ~~s~~ \\"),
            r"\<script\>\[x\](javascript:y) \*b\* \# \& \~\~s\~\~ \\"
        );
        // balanced single backticks stay code; the others are escaped
        assert_eq!(text("run `nvidia-smi -q` now"), "run `nvidia-smi -q` now");
        assert_eq!(text("a ` b"), r"a \` b");
        assert_eq!(text("``x``"), r"\`\`x\`\`");
        assert_eq!(text("`a|b`"), r"\`a\|b\`");
        assert_eq!(text("` ` x"), r"\` \` x");
        assert_eq!(text("`<b>`|"), r"`<b>`\|");
        assert_eq!(text("nccl_timeout _em_ x_"), r"nccl_timeout \_em\_ x\_");
        assert_eq!(text("a\u{1b}[31mb\u{202e}c"), "a\u{241b}\\[31mb⟨U+202E⟩c");
    }

    #[test]
    fn code_cells_outlast_backticks_and_avoid_pipes() {
        assert_eq!(code_cell("0000:3b:00.0"), "`0000:3b:00.0`");
        assert_eq!(code_cell("a`b"), "``a`b``");
        assert_eq!(code_cell("`x``"), "``` `x`` ```");
        assert_eq!(code_cell("x|y"), r"x\|y");
        assert_eq!(code_cell("two\nlines"), "`two lines`");
        assert_eq!(code_cell(""), "-");
    }

    #[test]
    fn fences_outlast_any_backtick_run_inside() {
        assert_eq!(fence("plain"), "```");
        assert_eq!(fence("a ``` b"), "````");
        assert_eq!(fence("`````"), "``````");
        let b = code_block(&["x\r```\ny".to_string(), "````".to_string()]);
        assert_eq!(b, "`````\nx\u{240d}```\ny\n````\n`````\n");
    }
}
