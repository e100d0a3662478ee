//! `faultline scan` and `faultline merge`.

use super::common::{
    load_knowledge, parse_fail_on, parse_tz, print_warnings, redaction_failed, redaction_key,
    time_options, CapArgs, RedactArgs,
};
use super::output::{extension, output_path, write_output};
use clap::{Args, ValueEnum};
use faultline::report;
use faultline::words::counted;
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum FleetFormat {
    Text,
    Jsonl,
    /// Prometheus/OpenMetrics text exposition (node_exporter textfile collector).
    Openmetrics,
}

#[derive(Args)]
pub(super) struct ScanArgs {
    /// Scan roots: folders of bundles, or bundle files.
    #[arg(required = true)]
    paths: Vec<String>,
    /// Output format (text on a terminal, JSON Lines otherwise).
    #[arg(long, value_enum)]
    format: Option<FleetFormat>,
    /// Write the output to FILE (atomically; a regular file, never an input; `-` is stdout). Its
    /// extension (.jsonl/.json, .txt, .prom) sets the format unless --format is given.
    #[arg(short, long)]
    output: Option<String>,
    /// Take shard K of N (K from 0 to N-1), split by a stable hash of each bundle's path
    /// relative to its scan root.
    #[arg(long, value_parser = clap::value_parser!(faultline::fleet::Shard))]
    shard: Option<faultline::fleet::Shard>,
    /// Print the bundles (and their files) that would be scanned, and stop.
    #[arg(long)]
    list: bool,
    /// Year for syslog stamps that carry none.
    #[arg(long)]
    year: Option<i32>,
    /// Zone for stamps that carry none: `UTC`, `+08:00`, an IANA name (`Europe/Berlin`) or an
    /// abbreviation (`CET`, `PST`).
    #[arg(long)]
    tz: Option<String>,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// No progress or notes on stderr.
    #[arg(long)]
    quiet: bool,
    /// Extra recognizers, rules or catalog entries (TOML); may be repeated.
    #[arg(long = "rules")]
    rules: Vec<String>,
    /// Exit with status 1 when an incident of a bundle has one of these layers (comma list, any
    /// case): any, hardware, thermal_power, gpu_memory, interconnect, driver_stack, application,
    /// network_storage, platform, unknown, none (`any`: any incident).
    #[arg(long = "fail-on", value_delimiter = ',')]
    fail_on: Vec<String>,
    #[command(flatten)]
    caps: CapArgs,
    #[command(flatten)]
    redact: RedactArgs,
    /// Skip files and archive members whose path or name matches GLOB (`*`, `?`, `[..]`); a
    /// bundle left with no file is not scanned; may be repeated.
    #[arg(long = "exclude", value_name = "GLOB")]
    exclude: Vec<String>,
}

#[derive(Args)]
pub(super) struct MergeArgs {
    /// JSON Lines written by `faultline scan` (plain, .gz or .zst; `-` for stdin).
    #[arg(required = true)]
    files: Vec<String>,
    /// Output format (text on a terminal, JSON Lines otherwise).
    #[arg(long, value_enum)]
    format: Option<FleetFormat>,
    /// Write the output to FILE (atomically; a regular file, never an input; `-` is stdout). Its
    /// extension (.jsonl/.json, .txt, .prom) sets the format unless --format is given.
    #[arg(short, long)]
    output: Option<String>,
    /// No warnings on stderr.
    #[arg(long)]
    quiet: bool,
    /// The number of shard outputs that must be merged (`scan --shard K/N` with this N): exit 2
    /// when one is missing, repeated or of another split. Without it, the N recorded in the
    /// shard outputs is checked the same way.
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    expect: Option<u64>,
    #[command(flatten)]
    redact: RedactArgs,
}

/// --format, else the extension of -o FILE (`.jsonl`, `.json`, `.ndjson`; `.txt`), else text on
/// a terminal and JSON Lines otherwise.
fn fleet_format(f: Option<FleetFormat>, output: Option<&str>) -> FleetFormat {
    let by_extension = match extension(output).as_deref() {
        Some("jsonl" | "json" | "ndjson") => Some(FleetFormat::Jsonl),
        Some("txt" | "text") => Some(FleetFormat::Text),
        Some("prom" | "om") => Some(FleetFormat::Openmetrics),
        _ => None,
    };
    f.or(by_extension).unwrap_or(
        if std::io::stdout().is_terminal() && output_path(output).is_none() {
            FleetFormat::Text
        } else {
            FleetFormat::Jsonl
        },
    )
}

pub(super) fn run_scan(a: ScanArgs) -> ExitCode {
    use faultline::fleet;
    super::output::stop_when_reader_gone(a.output.as_deref());
    if let Some(j) = a.jobs {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    if a.list {
        return run_list(&a);
    }
    let zone = match parse_tz(a.tz.as_deref()) {
        Ok(z) => z,
        Err(code) => return code,
    };
    let fail_on: Vec<&str> = match parse_fail_on(&a.fail_on) {
        Ok(v) => v.iter().map(|l| l.as_str()).collect(),
        Err(code) => return code,
    };
    let knowledge = match load_knowledge(&a.rules) {
        Ok(k) => k,
        Err(code) => return code,
    };
    let opts = fleet::ScanOptions {
        paths: a.paths.clone(),
        shard: a.shard.unwrap_or(fleet::Shard::ALL),
        time: time_options(a.year, None, zone),
        limits: {
            faultline::input::set_follow_links(a.caps.follow_links);
            a.caps.limits()
        },
        progress: !a.quiet && std::io::stderr().is_terminal(),
        exclude: a.exclude.clone(),
    };
    let key = match redaction_key(&a.redact, a.quiet) {
        Ok(k) => k,
        Err(code) => return code,
    };
    let mut result = fleet::scan(&opts, &knowledge);
    if let Some((k, note)) = &key {
        result.notes.push(note.clone());
        let r = match faultline::redact::Redactor::new(
            k,
            &faultline::redact::fleet::known(&result.lines),
        ) {
            Ok(r) => r,
            Err(e) => return redaction_failed(&e),
        };
        r.fleet(&mut result.lines, &mut result.summary);
        r.all(&mut result.notes);
    }
    if !a.quiet {
        tell_scanned(&result);
    }
    let text = match fleet_format(a.format, a.output.as_deref()) {
        FleetFormat::Jsonl => result.to_jsonl(),
        FleetFormat::Text => fleet::text::render_summary(&result.summary, &result.lines),
        FleetFormat::Openmetrics => {
            fleet::openmetrics::render(&result.summary, &result.lines, Some(result.elapsed))
        }
    };
    if let Err(e) = write_output(a.output.as_deref(), &text, &a.paths) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("faultline: cannot write the results: {e}");
            return ExitCode::from(2);
        }
    }
    scan_exit(&result, &fail_on)
}

/// `scan --list`: how the files were grouped into bundles, without reading them.
fn run_list(a: &ScanArgs) -> ExitCode {
    use faultline::fleet;
    faultline::input::set_follow_links(a.caps.follow_links);
    let mut found = fleet::discover(&a.paths);
    found.exclude(&a.exclude);
    let mut bundles = fleet::scan::select(found.bundles, a.shard.unwrap_or(fleet::Shard::ALL));
    let mut notes = found.notes;
    match redaction_key(&a.redact, a.quiet) {
        Ok(Some((k, note))) => {
            notes.push(note);
            let known = faultline::redact::fleet::known_bundles(&bundles);
            let r = match faultline::redact::Redactor::new(&k, &known) {
                Ok(r) => r,
                Err(e) => return redaction_failed(&e),
            };
            bundles.iter_mut().for_each(|b| r.bundle(b));
            r.all(&mut notes);
        }
        Ok(None) => {}
        Err(code) => return code,
    }
    if !a.quiet {
        for n in &notes {
            eprintln!("faultline: note: {}", report::terminal_safe(n));
        }
    }
    let text = fleet::text::render_list(&bundles);
    match write_output(a.output.as_deref(), &text, &a.paths) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("faultline: cannot write the list: {e}");
            ExitCode::from(2)
        }
        _ => ExitCode::SUCCESS,
    }
}

/// The scan's notes and its rate, on stderr.
fn tell_scanned(result: &faultline::fleet::ScanResult) {
    use faultline::fleet;
    for n in &result.notes {
        eprintln!("faultline: note: {}", report::terminal_safe(n));
    }
    let s = &result.summary;
    let secs = result.elapsed.as_secs_f64().max(1e-9);
    eprintln!(
        "faultline: scanned {} ({} on disk, {} read) in {:.2} s: {:.1} bundles/s, {:.1} MB/s on disk",
        counted(s.bundles, "bundle"),
        fleet::text::human_bytes(s.disk_bytes),
        fleet::text::human_bytes(s.bytes),
        secs,
        s.bundles as f64 / secs,
        s.disk_bytes as f64 / secs / 1e6
    );
}

/// 2 when no bundle could be read, 1 when an incident's layer is one of `fail_on`, else 0.
fn scan_exit(result: &faultline::fleet::ScanResult, fail_on: &[&str]) -> ExitCode {
    if result.nothing_read() {
        eprintln!("faultline: no bundle could be read");
        return ExitCode::from(2);
    }
    let matched = result
        .lines
        .iter()
        .flat_map(|l| &l.incidents)
        .any(|i| fail_on.contains(&i.layer.as_str()));
    if matched {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}

pub(super) fn run_merge(a: MergeArgs) -> ExitCode {
    use faultline::fleet;
    let key = match redaction_key(&a.redact, a.quiet) {
        Ok(k) => k,
        Err(code) => return code,
    };
    let mut m = fleet::merge(&a.files, a.expect);
    if let Some((k, note)) = &key {
        if !a.quiet {
            eprintln!("faultline: note: {note}");
        }
        let r =
            match faultline::redact::Redactor::new(k, &faultline::redact::fleet::known(&m.lines)) {
                Ok(r) => r,
                Err(e) => return redaction_failed(&e),
            };
        r.fleet(&mut m.lines, &mut m.summary);
        r.all(&mut m.warnings);
        r.all(&mut m.incomplete);
    }
    if !a.quiet {
        print_warnings("warning", &m.warnings);
    }
    if m.nothing_read() {
        eprintln!("faultline: no result file could be read");
        return ExitCode::from(2);
    }
    let text = match fleet_format(a.format, a.output.as_deref()) {
        FleetFormat::Jsonl => fleet::scan::to_line(&m.summary),
        FleetFormat::Text => fleet::text::render_summary(&m.summary, &m.lines),
        FleetFormat::Openmetrics => fleet::openmetrics::render(&m.summary, &m.lines, None),
    };
    if let Err(e) = write_output(a.output.as_deref(), &text, &a.files) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("faultline: cannot write the summary: {e}");
            return ExitCode::from(2);
        }
    }
    if !m.incomplete.is_empty() {
        for why in &m.incomplete {
            eprintln!("faultline: incomplete: {}", report::terminal_safe(why));
        }
        eprintln!("faultline: the merged summary does not cover the archive once");
        return ExitCode::from(2);
    }
    ExitCode::SUCCESS
}
