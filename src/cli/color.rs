//! `--color auto|always|never` for the text report and timeline: the verdict, incident layers
//! and event rows coloured by severity, on a terminal only (`auto`), never with `NO_COLOR` set
//! (unless `always`). Colour is added to the rendered, already escaped text, so nothing from an
//! input can carry an escape sequence of its own.

use clap::ValueEnum;
use faultline::report::json::Report;
use std::collections::HashMap;
use std::io::IsTerminal;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq, Default)]
pub(super) enum ColorWhen {
    /// On a terminal, unless NO_COLOR is set.
    #[default]
    Auto,
    /// Always (even into a pipe or a file).
    Always,
    /// Never.
    Never,
}

impl ColorWhen {
    /// Whether to colour output that goes to stdout (`to_stdout`) or to a file.
    pub(super) fn enabled(self, to_stdout: bool) -> bool {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        match self {
            ColorWhen::Always => true,
            ColorWhen::Never => false,
            ColorWhen::Auto => to_stdout && !no_color && std::io::stdout().is_terminal(),
        }
    }
}

const RESET: &str = "\x1b[0m";

fn layer_color(layer: &str) -> &'static str {
    match layer.to_ascii_lowercase().as_str() {
        "none" => "\x1b[1;32m",
        "unknown" => "\x1b[1;33m",
        _ => "\x1b[1;31m",
    }
}

fn severity_color(sev: &str) -> Option<&'static str> {
    match sev {
        "critical" => Some("\x1b[1;31m"),
        "error" => Some("\x1b[31m"),
        "warning" => Some("\x1b[33m"),
        _ => None,
    }
}

/// Colours the text report or timeline of `rep`.
pub(super) fn paint(text: &str, rep: &Report) -> String {
    let severity: HashMap<&str, &str> = rep
        .events
        .iter()
        .map(|e| (e.id.as_str(), e.severity))
        .collect();
    let mut out = String::with_capacity(text.len() + 1024);
    for line in text.split_inclusive('\n') {
        out.push_str(&paint_line(line, &severity));
    }
    out
}

fn paint_line(line: &str, severity: &HashMap<&str, &str>) -> String {
    // `faultline 0.1.0 — verdict: HARDWARE`
    if let Some((head, layer)) = line.split_once("verdict: ") {
        let word = layer.trim_end();
        let end = &layer[word.len()..];
        return format!("{head}verdict: {}{word}{RESET}{end}", layer_color(word));
    }
    // `Incident i1 [...]  layer hardware  confidence …`
    if line.starts_with("Incident ") {
        if let Some((head, rest)) = line.split_once("  layer ") {
            let (word, tail) = rest.split_once(' ').unwrap_or((rest.trim_end(), ""));
            let sep = if tail.is_empty() { "" } else { " " };
            return format!(
                "{head}  layer {}{word}{RESET}{sep}{tail}",
                layer_color(word)
            );
        }
    }
    // an event row: `  e12  …`, or a chain row `    e12  primary …`
    let trimmed = line.trim_start();
    let id = trimmed.split(' ').next().unwrap_or("");
    let indented = line.len() > trimmed.len() && trimmed.len() > id.len();
    if indented
        && id.starts_with('e')
        && id.len() > 1
        && id[1..].bytes().all(|b| b.is_ascii_digit())
    {
        if let Some(c) = severity.get(id).and_then(|s| severity_color(s)) {
            let body = line.trim_end_matches('\n');
            let nl = &line[body.len()..];
            return format!("{c}{body}{RESET}{nl}");
        }
    }
    line.to_string()
}
