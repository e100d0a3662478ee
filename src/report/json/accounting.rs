//! The accounting of an analysis: lines read, recognized and not, event occurrences (those past
//! the events cap included), and what was skipped and why.

use super::InputJson;
use crate::words::{counted, counted_as};
use crate::Analysis;
use serde::Serialize;
use std::collections::BTreeMap;

/// The accounting of a whole analysis: lines, events, and what was skipped and why.
#[derive(Serialize, Clone, Debug, Default)]
pub struct AccountingJson {
    /// Inputs (files and archive members).
    pub inputs: usize,
    /// Bytes read (decompressed sizes for containers).
    pub bytes: u64,
    /// Lines read.
    pub lines: u64,
    /// Lines a reader understood.
    pub lines_recognized: u64,
    /// Lines no reader understood (`lines - lines_recognized`; still searched for anchors).
    pub lines_unrecognized: u64,
    /// Event occurrences (exact, those past the events cap included).
    pub events: u64,
    /// Of `events`, those past the events cap: counted, not listed.
    pub events_suppressed: u64,
    /// What was skipped or read only in part, and why: one entry per reason, with a count.
    pub skipped: Vec<String>,
    /// NVRM error lines that only the generic kind (`driver_error`) kept: read as errors of the
    /// driver, not understood (bursts of one function counted line by line).
    pub not_understood: u64,
    /// The first few of them (function and text), so that a user sees what was not understood.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub not_understood_examples: Vec<String>,
    /// The filters and time window given (`--since`, `--until`, `--host`, `--gpu`, `--kind`,
    /// `--layer`) and what they kept; absent when none was given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filter: Option<FilterJson>,
    /// One line: the counts above and the skipped reasons.
    pub summary: String,
}

/// The filters of an analysis, as applied before incidents were formed.
#[derive(Serialize, Clone, Debug, Default)]
pub struct FilterJson {
    /// Start of the time window (RFC 3339, UTC), resolved from `--since`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// End of the time window, resolved from `--until`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
    /// `--host` values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub hosts: Vec<String>,
    /// `--gpu` values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub gpus: Vec<String>,
    /// `--kind` values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub kinds: Vec<String>,
    /// `--layer` values.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub layers: Vec<&'static str>,
    /// Event occurrences on the timeline before filtering.
    pub events_before: u64,
    /// Event occurrences kept (those the report and its incidents are made of).
    pub events_kept: u64,
    /// Of the dropped, occurrences without a time, which a time window cannot place.
    pub events_untimed_dropped: u64,
    /// One line: the filters and the counts.
    pub summary: String,
}

/// The filter part of the accounting.
fn filter_json(f: &crate::timeline::filter::FilterOutcome) -> FilterJson {
    let mut j = FilterJson {
        since: f.since_us.map(crate::report::iso_us),
        until: f.until_us.map(crate::report::iso_us),
        hosts: f.filter.hosts.clone(),
        gpus: f.filter.gpus.clone(),
        kinds: f.filter.kinds.clone(),
        layers: f.filter.layers.iter().map(|l| l.as_str()).collect(),
        events_before: f.events_before,
        events_kept: f.events_kept,
        events_untimed_dropped: f.untimed_dropped,
        summary: String::new(),
    };
    let mut parts = Vec::new();
    let bound =
        |given: &Option<crate::timeline::filter::TimeBound>, at: &Option<String>| match (given, at)
        {
            (_, Some(t)) => Some(t.clone()),
            (Some(_), None) => Some("(not placed)".to_string()),
            _ => None,
        };
    if let Some(s) = bound(&f.filter.since, &j.since) {
        parts.push(format!("since {s}"));
    }
    if let Some(u) = bound(&f.filter.until, &j.until) {
        parts.push(format!("until {u}"));
    }
    for (name, v) in [("host", &j.hosts), ("gpu", &j.gpus), ("kind", &j.kinds)] {
        if !v.is_empty() {
            parts.push(format!("{name} {}", v.join(",")));
        }
    }
    if !j.layers.is_empty() {
        parts.push(format!("layer {}", j.layers.join(",")));
    }
    let untimed = if j.events_untimed_dropped > 0 {
        format!(
            " ({} without a wall-clock time dropped by the window{})",
            j.events_untimed_dropped,
            if f.unplaced {
                ": no event has one to place the window by"
            } else {
                ""
            }
        )
    } else {
        String::new()
    };
    j.summary = format!(
        "{}: kept {} of {}{untimed}",
        parts.join("; "),
        j.events_kept,
        counted(j.events_before, "event occurrence")
    );
    j
}

/// Examples of NVRM error lines not understood that the accounting lists.
const MAX_NOT_UNDERSTOOD_EXAMPLES: usize = 5;

/// The reasons inputs were skipped or read in part, by a phrase of the warning that tells it
/// (the first phrase a warning holds gives its reason).
const SKIP_REASONS: &[(&str, &str)] = &[
    (
        "not a regular file",
        "not a regular file (FIFO, socket or device)",
    ),
    ("symlink loop", "symbolic-link loop not followed"),
    ("folder nesting deeper", "folder nesting too deep"),
    ("cannot list folder", "folder not readable"),
    ("cannot open", "file not readable"),
    // before "cannot read": a tar whose entries cannot be read is a container, not a path
    ("cannot read entries", "container not decodable"),
    ("cannot start decoding", "container not decodable"),
    ("cannot read", "path not readable"),
    ("cannot resolve", "path not resolvable"),
    (
        "shrank while being read",
        "file shrank while being read (the part read is analyzed)",
    ),
    (
        "corrupt or truncated",
        "corrupt or truncated stream (the part before is analyzed)",
    ),
    (
        "corrupt header",
        "corrupt tar header (the entries after it are not read)",
    ),
    (
        "expansion ratio passed",
        "expansion ratio cap (decompression bomb?)",
    ),
    ("passed the cap", "size cap reached (the rest is not read)"),
    (
        "larger than the member cap",
        "size cap reached (the rest is not read)",
    ),
    (
        "nested containers deeper",
        "containers nested past the depth cap, not opened",
    ),
    (
        "link entry skipped",
        "link entries inside archives, never followed",
    ),
    ("is not supported", "unsupported compression"),
    ("faultline's own", "faultline's own reports, skipped"),
    ("empty file (0 bytes)", "empty compressed files"),
    ("holds no data", "compressed streams without data"),
    (
        "member name with `..`",
        "`..` member names in archives (read by name, never extracted)",
    ),
    (
        "absolute member name",
        "absolute member names in archives (read by name, never extracted)",
    ),
    ("sparse member", "sparse archive members (read)"),
    (
        "device or FIFO entry",
        "device or FIFO entries in archives, skipped",
    ),
    (
        "lay past the parts recognizers read",
        "anchors lost inside over-long lines",
    ),
    (
        "not parsed as a block",
        "block formats too large to hold, scanned line by line",
    ),
    ("binary systemd journal", "binary journal, not parsed"),
    (
        "bytes: cut for recognizers",
        "over-long lines cut for recognizers (still searched for anchors)",
    ),
];

/// Why an input's warning means something was skipped or read only in part (`None`: nothing was
/// skipped, e.g. a decoding note).
fn skip_reason(w: &str) -> Option<&'static str> {
    SKIP_REASONS
        .iter()
        .find(|(k, _)| w.contains(k))
        .map(|&(_, why)| why)
}

/// The accounting of the analysis over the reported inputs.
pub(super) fn accounting(a: &Analysis, inputs: &[InputJson]) -> AccountingJson {
    let mut acc = AccountingJson {
        inputs: inputs.len(),
        filter: a.filter.as_ref().map(filter_json),
        ..AccountingJson::default()
    };
    for i in inputs {
        acc.bytes += i.bytes;
        acc.lines += i.lines;
        acc.lines_recognized += i.lines_recognized;
        acc.lines_unrecognized += i.lines_unrecognized;
        acc.events += i.events;
        acc.events_suppressed += i.events_suppressed;
    }
    acc.skipped = skipped(a, inputs, acc.events_suppressed);
    not_understood(a, &mut acc);
    let skipped = if acc.skipped.is_empty() {
        "nothing skipped".to_string()
    } else {
        format!("skipped: {}", acc.skipped.join("; "))
    };
    let not_understood = if acc.not_understood > 0 {
        format!(
            "; {} read but not understood (generic driver_error)",
            counted(acc.not_understood, "NVRM error line")
        )
    } else {
        String::new()
    };
    acc.summary = format!(
        "{}, {} bytes, {} = {} recognized + {} not recognized by any reader (still searched for anchors), {}{not_understood}; {skipped}",
        counted(acc.inputs as u64, "input"),
        acc.bytes,
        counted(acc.lines, "line"),
        acc.lines_recognized,
        acc.lines_unrecognized,
        counted(acc.events, "event occurrence")
    );
    acc
}

/// What was skipped: inputs that could not be read, paths or inputs per reason (an input counted
/// once per reason), occurrences past the events cap.
fn skipped(a: &Analysis, inputs: &[InputJson], suppressed: u64) -> Vec<String> {
    let mut out = Vec::new();
    let mut reasons: BTreeMap<&'static str, usize> = BTreeMap::new();
    for w in &a.warnings {
        if let Some(r) = skip_reason(w) {
            *reasons.entry(r).or_default() += 1;
        }
    }
    for i in inputs {
        let mine: std::collections::BTreeSet<&'static str> =
            i.warnings.iter().filter_map(|w| skip_reason(w)).collect();
        for r in mine {
            *reasons.entry(r).or_default() += 1;
        }
    }
    let unread = a
        .inputs
        .iter()
        .filter(|i| i.bytes == 0 && !i.warnings.is_empty())
        .count();
    if unread > 0 {
        out.push(format!(
            "{}: nothing could be read",
            counted(unread as u64, "input")
        ));
    }
    for (r, n) in reasons {
        out.push(format!(
            "{}: {r}",
            counted_as(n as u64, "path or input", "paths or inputs")
        ));
    }
    if suppressed > 0 {
        out.push(format!(
            "{} past the per-kind cap: counted, not listed",
            counted(suppressed, "event occurrence")
        ));
    }
    out
}

/// Counts the NVRM error lines read but not understood (the generic kind), with a few
/// examples.
fn not_understood(a: &Analysis, acc: &mut AccountingJson) {
    for e in a
        .events
        .iter()
        .filter(|e| e.kind == crate::events::nvrm::GENERIC_KIND)
    {
        let lines: u64 = e
            .attrs
            .get("burst_lines")
            .and_then(|n| n.parse().ok())
            .unwrap_or(1);
        acc.not_understood += lines + e.suppressed;
        if acc.not_understood_examples.len() < MAX_NOT_UNDERSTOOD_EXAMPLES {
            let text = e
                .attrs
                .get("text")
                .map(str::to_string)
                .unwrap_or_else(|| e.body().to_string());
            let example = match e.attrs.get("function") {
                Some(f) => format!("{f}: {text}"),
                None => text,
            };
            let example: String = example.chars().take(160).collect();
            if !acc.not_understood_examples.contains(&example) {
                acc.not_understood_examples.push(example);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A phrase that holds an earlier one would never be reached: the earlier one matches first.
    #[test]
    fn no_skip_phrase_is_shadowed_by_an_earlier_one() {
        for (i, (later, _)) in SKIP_REASONS.iter().enumerate() {
            for (earlier, _) in &SKIP_REASONS[..i] {
                assert!(
                    !later.contains(earlier),
                    "{later:?} comes after {earlier:?}"
                );
            }
        }
    }

    #[test]
    fn a_warning_reads_as_its_reason() {
        let cases = [
            (
                "x.tar: tar: cannot read entries: bad header",
                Some("container not decodable"),
            ),
            (
                "logs/: cannot read /logs/a: permission denied",
                Some("path not readable"),
            ),
            (
                "a.zst: zstd: cannot start decoding: x",
                Some("container not decodable"),
            ),
            (
                "a.zst: zstd: the compressed stream holds no data (header only)",
                Some("compressed streams without data"),
            ),
            ("a.log: decoded as Latin-1", None),
        ];
        for (w, want) in cases {
            assert_eq!(skip_reason(w), want, "{w}");
        }
    }
}
