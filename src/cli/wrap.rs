//! The text report and timeline wrapped to the terminal's width: only when they go to a terminal
//! (a file or a pipe keeps one line per row, for grep). A long line breaks at a space, else
//! after a path separator, else at the width; its continuation lines are indented under the
//! line's own text, so an event row reads as one block.

use std::io::IsTerminal;

/// Narrowest width wrapped to: below it, a terminal is too narrow to be worth it.
const MIN_WIDTH: usize = 40;

/// The width to wrap stdout's text to: `COLUMNS` when it is set, else the terminal's own size;
/// `None` when stdout is not a terminal or its width is unknown.
pub(super) fn terminal_width() -> Option<usize> {
    if !std::io::stdout().is_terminal() {
        return None;
    }
    let from_env = std::env::var("COLUMNS")
        .ok()
        .and_then(|c| c.trim().parse::<usize>().ok());
    from_env.or_else(window_columns).filter(|&w| w >= MIN_WIDTH)
}

/// The columns of the terminal on stdout (`TIOCGWINSZ`).
fn window_columns() -> Option<usize> {
    // SAFETY: TIOCGWINSZ fills the winsize struct it is given and touches nothing else
    let mut ws: libc::winsize = unsafe { std::mem::zeroed() };
    let ok = unsafe { libc::ioctl(libc::STDOUT_FILENO, libc::TIOCGWINSZ, &mut ws) } == 0;
    (ok && ws.ws_col > 0).then_some(ws.ws_col as usize)
}

/// `text` with every line longer than `width` characters wrapped.
pub(super) fn wrap(text: &str, width: usize) -> String {
    let mut out = String::with_capacity(text.len() + text.len() / 16);
    for line in text.split_inclusive('\n') {
        let body = line.trim_end_matches('\n');
        wrap_line(body, width, &mut out);
        out.push_str(&line[body.len()..]);
    }
    out
}

fn wrap_line(line: &str, width: usize, out: &mut String) {
    let chars: Vec<(usize, char)> = line.char_indices().collect();
    if chars.len() <= width {
        out.push_str(line);
        return;
    }
    // continuation lines start under the line's text: its indent plus the first word (an event
    // id, `Incident i1`), at most a third of the width
    let lead = chars.iter().take_while(|(_, c)| *c == ' ').count();
    let first_word = chars[lead..].iter().take_while(|(_, c)| *c != ' ').count();
    let spaces_after = chars[lead + first_word..]
        .iter()
        .take_while(|(_, c)| *c == ' ')
        .count();
    let hang = (lead + first_word + spaces_after)
        .min(width / 3)
        .max(lead + 2);
    let indent = " ".repeat(hang);
    let (mut at, mut room) = (0usize, width);
    let mut first = true;
    while chars.len() - at > room {
        let end = at + room;
        let cut = break_at(&chars[at..=end.min(chars.len() - 1)]).map_or(end, |b| at + b);
        let cut = if cut <= at { end } else { cut };
        if !first {
            out.push_str(&indent);
        }
        out.push_str(line[chars[at].0..chars[cut].0].trim_end());
        out.push('\n');
        at = cut;
        while at < chars.len() && chars[at].1 == ' ' {
            at += 1;
        }
        first = false;
        room = width - hang;
    }
    if at < chars.len() {
        if !first {
            out.push_str(&indent);
        }
        out.push_str(&line[chars[at].0..]);
    }
}

/// Where to break a piece of `width + 1` characters: the last space, else just after the last
/// `/` or `,` (a path, a list), as an offset into the piece; `None` when there is neither.
fn break_at(piece: &[(usize, char)]) -> Option<usize> {
    let n = piece.len();
    if let Some(i) = piece[1..n].iter().rposition(|(_, c)| *c == ' ') {
        return Some(i + 1);
    }
    piece[..n - 1]
        .iter()
        .rposition(|(_, c)| matches!(c, '/' | ','))
        .map(|i| i + 1)
        .filter(|&i| i > 0)
}

#[cfg(test)]
mod tests {
    use super::wrap;

    #[test]
    fn short_lines_are_kept_as_they_are() {
        let t = "faultline 0.1.0 — verdict: HARDWARE\n\n  e1  10:00:01  xid 79\n";
        assert_eq!(wrap(t, 80), t);
    }

    #[test]
    fn long_lines_break_at_spaces_and_hang_under_their_text() {
        let line = format!("  e12  {}\n", "word ".repeat(30).trim_end());
        let w = wrap(&line, 40);
        let lines: Vec<&str> = w.lines().collect();
        assert!(lines.len() > 3, "{w}");
        for l in &lines {
            assert!(l.chars().count() <= 40, "too wide: {l:?}");
            assert!(!l.ends_with(' '), "trailing space: {l:?}");
        }
        assert!(lines[0].starts_with("  e12  word"));
        for l in &lines[1..] {
            assert!(l.starts_with("       word"), "hang: {l:?}");
        }
        // nothing lost: the words, in order
        let words: Vec<&str> = w.split_whitespace().collect();
        let want: Vec<&str> = line.split_whitespace().collect();
        assert_eq!(words, want);
    }

    #[test]
    fn a_path_without_spaces_breaks_after_a_separator() {
        let line = format!("  at /{}\n", "segment/".repeat(12));
        let w = wrap(&line, 40);
        for l in w.lines() {
            assert!(l.chars().count() <= 40, "too wide: {l:?}");
        }
        // the path's own lines end at a separator
        assert!(
            w.lines().skip(1).filter(|l| l.ends_with('/')).count() >= 2,
            "{w}"
        );
        assert_eq!(w.replace(['\n', ' '], ""), line.replace(['\n', ' '], ""));
    }

    #[test]
    fn a_word_longer_than_the_width_is_cut() {
        let line = "x".repeat(130);
        let w = wrap(&line, 50);
        assert!(w.lines().all(|l| l.chars().count() <= 50), "{w}");
        assert_eq!(w.replace(['\n', ' '], ""), line);
    }

    #[test]
    fn multibyte_text_is_cut_on_character_boundaries() {
        let line = format!("  e3  {}", "überprüft ".repeat(20));
        let w = wrap(&line, 45);
        assert!(w.lines().all(|l| l.chars().count() <= 45), "{w}");
    }
}
