//! What the subcommands share: zones, --fail-on layers, the knowledge with --rules files.

use faultline::model::Layer;
use faultline::timeline::Zone;
use faultline::Knowledge;
use std::process::ExitCode;

/// `--tz`: an offset, an IANA zone name or an abbreviation; a usage error (exit 2) otherwise.
pub(super) fn parse_tz(s: Option<&str>) -> Result<Option<Zone>, ExitCode> {
    let Some(s) = s else {
        return Ok(None);
    };
    match Zone::parse(s) {
        Some(z) => Ok(Some(z)),
        None => {
            eprintln!(
                "faultline: --tz: unknown zone `{}`: expected UTC, an offset such as +08:00, an IANA name such as Europe/Berlin, or an abbreviation such as CET or PST",
                faultline::report::terminal_safe(s)
            );
            Err(ExitCode::from(2))
        }
    }
}

/// The time options of `--year`, `--date` and `--tz`.
pub(super) fn time_options(
    year: Option<i32>,
    date: Option<i64>,
    zone: Option<Zone>,
) -> faultline::timeline::TimeOptions {
    faultline::timeline::TimeOptions {
        year,
        date,
        tz_offset: match zone {
            Some(Zone::Fixed(o)) => Some(o),
            _ => None,
        },
        zone: zone.filter(|z| matches!(z, Zone::Named(_))),
        now: chrono::Utc::now().timestamp(),
    }
}

/// `--date YYYY-MM-DD`: its midnight in seconds since the epoch (the date read as UTC).
pub(super) fn parse_date(s: &str) -> Result<i64, String> {
    let b = s.trim().as_bytes();
    let (y, mo, d) = (
        faultline::formats::time::digits(b, 4),
        b.get(5..)
            .and_then(|r| faultline::formats::time::digits(r, 2)),
        b.get(8..)
            .and_then(|r| faultline::formats::time::digits(r, 2)),
    );
    match (y, mo, d) {
        (Some(y), Some(mo), Some(d)) if b.len() == 10 && b[4] == b'-' && b[7] == b'-' => {
            faultline::formats::time::civil_secs(y as i32, mo, d, 0)
                .ok_or_else(|| format!("`{s}` is not a date"))
        }
        _ => Err(format!("`{s}`: expected a date such as 2025-03-14")),
    }
}

/// The layers of `--fail-on` (`any` is every layer), any case; an unknown name is a usage
/// error (exit 2) that lists the values.
pub(super) fn parse_fail_on(names: &[String]) -> Result<Vec<Layer>, ExitCode> {
    let mut out = Vec::new();
    for l in names.iter().filter(|l| !l.trim().is_empty()) {
        if l.trim().eq_ignore_ascii_case("any") {
            out.extend(Layer::ALL);
            continue;
        }
        match Layer::parse_loose(l) {
            Some(x) => out.push(x),
            None => {
                eprintln!(
                    "faultline: --fail-on: unknown layer `{}` (one of: any, {})",
                    faultline::report::terminal_safe(l),
                    super::filters::layer_names()
                );
                return Err(ExitCode::from(2));
            }
        }
    }
    Ok(out)
}

/// The built-in knowledge plus the `--rules` files; an unreadable or invalid file is a usage
/// error (exit 2).
pub(super) fn load_knowledge(files: &[String]) -> Result<Knowledge, ExitCode> {
    let mut texts = Vec::new();
    for f in files {
        match std::fs::read_to_string(f) {
            Ok(t) => texts.push(t),
            Err(e) => {
                eprintln!(
                    "faultline: --rules {}: {}",
                    faultline::report::terminal_safe(f),
                    faultline::report::terminal_safe(&e.to_string())
                );
                return Err(ExitCode::from(2));
            }
        }
    }
    Knowledge::load(&texts).map_err(|e| {
        eprintln!(
            "faultline: rules: {}",
            faultline::report::terminal_safe(&e.to_string())
        );
        ExitCode::from(2)
    })
}

/// Warnings of one kind printed before the rest are only counted.
const WARNINGS_PER_KIND: usize = 3;

/// The kind of a warning: its text with numbers (line numbers, offsets, sizes) blanked and the
/// place before the first `: ` dropped when it names a file.
fn warning_kind(w: &str) -> String {
    let text = match w.split_once(": ") {
        Some((place, rest)) if place.contains(['/', '.', ':']) || place.len() > 40 => rest,
        _ => w,
    };
    let mut k = String::with_capacity(text.len());
    let mut in_num = false;
    for c in text.chars() {
        if c.is_ascii_digit() {
            if !in_num {
                k.push('#');
            }
            in_num = true;
        } else {
            in_num = false;
            k.push(c);
        }
    }
    k
}

/// Prints `faultline: LABEL: …` for each message on stderr, escaped; past
/// [`WARNINGS_PER_KIND`] of one kind, one line says how many more of that kind there were.
pub(super) fn print_warnings(label: &str, messages: &[String]) {
    let mut seen: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    let mut order: Vec<(String, String)> = Vec::new();
    for m in messages {
        let kind = warning_kind(m);
        let n = seen.entry(kind.clone()).or_default();
        *n += 1;
        if *n <= WARNINGS_PER_KIND {
            eprintln!(
                "faultline: {label}: {}",
                faultline::report::terminal_safe(m)
            );
        } else if *n == WARNINGS_PER_KIND + 1 {
            order.push((kind, m.clone()));
        }
    }
    for (kind, example) in order {
        let more = seen[&kind] - WARNINGS_PER_KIND;
        eprintln!(
            "faultline: {label}: … and {more} more like the last (`{}`)",
            faultline::report::terminal_safe(&example)
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn warnings_of_one_kind_share_a_key_whatever_their_numbers() {
        let a = warning_kind("shard-0.jsonl:12: not a JSON line");
        let b = warning_kind("shard-0.jsonl:5674: not a JSON line");
        assert_eq!(a, b);
        assert_ne!(a, warning_kind("shard-0.jsonl:12: unknown schema"));
    }
}

/// `--redact` and its key (analyze, timeline, scan, merge).
#[derive(clap::Args)]
pub(super) struct RedactArgs {
    /// Replace host names (folder names included), addresses, user names, secrets, cluster,
    /// job and machine ids, GPU UUIDs and serials with keyed aliases (`host-1a2b3c4d5e6f`).
    #[arg(long)]
    pub(super) redact: bool,
    /// Same as --redact, kept for scripts: serials and UUIDs are always redacted now.
    #[arg(long)]
    pub(super) redact_serials: bool,
    /// Key of the aliases (implies --redact): the same key gives the same aliases in every
    /// format and run. Default: $FAULTLINE_REDACT_KEY, else --redact-key-file, else a random
    /// key that is never shown (the aliases are then not stable across runs).
    #[arg(long, value_name = "KEY")]
    pub(super) redact_key: Option<String>,
    /// File of the key (implies --redact): read when it exists, else a random key is drawn and
    /// written to it (mode 0600), so that later runs give the same aliases.
    #[arg(long, value_name = "FILE")]
    pub(super) redact_key_file: Option<std::path::PathBuf>,
}

/// The key of this run when redaction is asked for, and the note that says whether its aliases
/// are stable across runs. A random key is never printed.
pub(super) fn redaction_key(
    r: &RedactArgs,
    _quiet: bool,
) -> Result<Option<(faultline::redact::Key, String)>, std::process::ExitCode> {
    if !(r.redact || r.redact_serials || r.redact_key.is_some() || r.redact_key_file.is_some()) {
        return Ok(None);
    }
    match faultline::redact::Key::for_run(r.redact_key.as_deref(), r.redact_key_file.as_deref()) {
        Ok((k, origin)) => Ok(Some((k, origin.note()))),
        Err(e) => {
            eprintln!(
                "faultline: --redact: {}",
                faultline::report::terminal_safe(&e)
            );
            Err(std::process::ExitCode::from(2))
        }
    }
}

/// A redaction rule could not be built: the run stops before anything is written.
pub(super) fn redaction_failed(e: &str) -> std::process::ExitCode {
    eprintln!(
        "faultline: --redact: {}; nothing was written",
        faultline::report::terminal_safe(e)
    );
    std::process::ExitCode::from(2)
}

/// The caps on what an input may cost (analyze, timeline, scan; for `scan` the total is per
/// bundle).
#[derive(clap::Args)]
pub(super) struct CapArgs {
    /// Follow symbolic links inside an input folder wherever they lead (by default a link whose
    /// target is outside the folder is skipped with a warning that names it).
    #[arg(long)]
    pub(super) follow_links: bool,
    /// Cap on decompressed bytes per archive member or compressed file.
    #[arg(long, default_value_t = 4 << 30)]
    max_member_bytes: u64,
    /// Cap on decompressed bytes in total (for `scan`: per bundle).
    #[arg(long, default_value_t = 64 << 30)]
    max_total_bytes: u64,
    /// Cap on the decompression ratio.
    #[arg(long, default_value_t = 1000)]
    max_ratio: u64,
    /// Cap on container nesting.
    #[arg(long, default_value_t = 4)]
    max_depth: u32,
    /// Events kept per kind per GPU of one input (per host, kind, code, GPU and rank), and at
    /// most 16384 (or this, if larger) per kind in all; further occurrences are counted, not
    /// kept, so counts stay exact.
    #[arg(long, default_value_t = faultline::scan::DEFAULT_EVENTS_PER_KIND, value_parser = clap::value_parser!(u64).range(1..))]
    max_events_per_kind: u64,
}

impl CapArgs {
    /// The library's limits.
    pub(super) fn limits(&self) -> faultline::input::Limits {
        faultline::input::Limits {
            max_member_bytes: self.max_member_bytes,
            max_total_bytes: self.max_total_bytes,
            max_ratio: self.max_ratio,
            max_depth: self.max_depth,
            max_events_per_kind: self.max_events_per_kind,
        }
    }
}
