//! `faultline analyze` and `faultline timeline`.

use super::common::{load_knowledge, parse_fail_on, parse_tz};
use super::output::{extension, output_path, write_output};
use clap::{Args, ValueEnum};
use faultline::{report, Options};
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum OutFormat {
    Text,
    Json,
    Markdown,
    Html,
}

#[derive(Args)]
pub(super) struct AnalyzeArgs {
    /// Inputs.
    #[arg(required = true)]
    paths: Vec<String>,
    /// Output format (text on a terminal, JSON otherwise); `html` writes one self-contained page.
    #[arg(long, value_enum)]
    format: Option<OutFormat>,
    /// Write the report to FILE (atomically; a regular file, never an input; `-` is stdout). Its
    /// extension (.json, .md, .html, .txt) sets the format unless --format is given.
    #[arg(short, long)]
    output: Option<String>,
    /// Year for syslog stamps that carry none.
    #[arg(long)]
    year: Option<i32>,
    /// Zone for stamps that carry none: `UTC`, `+08:00`, `-0500`.
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
    /// Exit with status 1 when an incident has one of these root-cause layers (comma list).
    #[arg(long = "fail-on", value_delimiter = ',')]
    fail_on: Vec<String>,
    /// Replace host names, IP/MAC addresses, user names, home paths and secrets with stable pseudonyms.
    #[arg(long)]
    redact: bool,
    /// With --redact, also replace GPU serials and UUIDs.
    #[arg(long)]
    redact_serials: bool,
    /// Cap on decompressed bytes per archive member or compressed file.
    #[arg(long, default_value_t = 4 << 30)]
    max_member_bytes: u64,
    /// Cap on decompressed bytes in total.
    #[arg(long, default_value_t = 64 << 30)]
    max_total_bytes: u64,
    /// Cap on the decompression ratio.
    #[arg(long, default_value_t = 1000)]
    max_ratio: u64,
    /// Cap on container nesting.
    #[arg(long, default_value_t = 4)]
    max_depth: u32,
    /// Events kept per kind per GPU of one input (per host, kind, code, GPU and rank); further
    /// occurrences are counted, not kept, so counts stay exact.
    #[arg(long, default_value_t = faultline::scan::DEFAULT_EVENTS_PER_KIND, value_parser = clap::value_parser!(u64).range(1..))]
    max_events_per_kind: u64,
}

/// True when stdin reads as /dev/null: nothing was piped in, or stdin was closed (the Rust
/// runtime opens /dev/null over a closed descriptor 0).
fn stdin_is_null() -> bool {
    use std::os::unix::fs::MetadataExt;
    let (Ok(stdin), Ok(null)) = (
        std::fs::metadata("/proc/self/fd/0").or_else(|_| std::fs::metadata("/dev/stdin")),
        std::fs::metadata("/dev/null"),
    ) else {
        return false;
    };
    stdin.rdev() == null.rdev() && stdin.dev() == null.dev() && stdin.ino() == null.ino()
}

pub(super) fn run_analyze(a: AnalyzeArgs, timeline_only: bool) -> ExitCode {
    if let Some(j) = a.jobs {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let tz_offset = match a.tz.as_deref().map(parse_tz) {
        Some(None) => {
            eprintln!("faultline: --tz: expected UTC or an offset such as +08:00");
            return ExitCode::from(2);
        }
        Some(Some(o)) => Some(o),
        None => None,
    };
    let fail_on = match parse_fail_on(&a.fail_on) {
        Ok(v) => v,
        Err(code) => return code,
    };
    let knowledge = match load_knowledge(&a.rules) {
        Ok(k) => k,
        Err(code) => return code,
    };
    let opts = Options {
        paths: a.paths.clone(),
        rule_files: a.rules.clone(),
        time: faultline::timeline::TimeOptions {
            year: a.year,
            tz_offset,
            now: chrono::Utc::now().timestamp(),
        },
        limits: faultline::input::Limits {
            max_member_bytes: a.max_member_bytes,
            max_total_bytes: a.max_total_bytes,
            max_ratio: a.max_ratio,
            max_depth: a.max_depth,
            max_events_per_kind: a.max_events_per_kind,
        },
        parallel_chunks: true,
    };
    let mut analysis = faultline::analyze(&opts, &knowledge);
    if !a.quiet {
        for w in &analysis.warnings {
            eprintln!("faultline: warning: {}", report::terminal_safe(w));
        }
    }
    if analysis.nothing_read() {
        eprintln!("faultline: no input could be read");
        return ExitCode::from(2);
    }
    // stdin that gave nothing: a warning (on the input, and on stderr), not an error
    for i in analysis.inputs.iter_mut().filter(|i| i.path == "-") {
        if i.bytes == 0 && i.warnings.is_empty() {
            let w = if stdin_is_null() {
                "stdin: nothing to read (stdin is closed or /dev/null)"
            } else {
                "stdin: empty (nothing was piped in)"
            };
            if !a.quiet {
                eprintln!("faultline: warning: {w}");
            }
            i.warnings.push(w.to_string());
        }
    }
    let rep = report::json::build(&analysis, &knowledge.catalog);
    // --format, else the extension of -o FILE, else text on a terminal and JSON otherwise
    let by_extension = match extension(a.output.as_deref()).as_deref() {
        Some("json") => Some(OutFormat::Json),
        Some("md" | "markdown") => Some(OutFormat::Markdown),
        Some("html" | "htm") => Some(OutFormat::Html),
        Some("txt" | "text") => Some(OutFormat::Text),
        _ => None,
    };
    let format = a.format.or(by_extension).unwrap_or(
        if std::io::stdout().is_terminal() && output_path(a.output.as_deref()).is_none() {
            OutFormat::Text
        } else {
            OutFormat::Json
        },
    );
    let redactor = (a.redact || a.redact_serials).then(|| {
        report::redact::Redactor::new(&report::known_hosts(&analysis), a.redact_serials)
            .with_serials(&report::known_serials(&analysis))
    });
    let text = match (format, timeline_only) {
        (OutFormat::Json, false) => report::json::to_string(&rep),
        (OutFormat::Json, true) => {
            let mut s = serde_json::to_string_pretty(&rep.events).unwrap_or_default();
            s.push('\n');
            s
        }
        (OutFormat::Markdown, _) => {
            report::markdown::render(&rep, &knowledge.catalog, redactor.as_ref())
        }
        (OutFormat::Html, _) => report::html::render(&rep, &knowledge.catalog, redactor.as_ref()),
        (OutFormat::Text, true) => report::text::render_timeline(&rep),
        (OutFormat::Text, false) => report::text::render(&rep),
    };
    // HTML and Markdown redact each text before escaping it; the other formats are redacted whole
    let text = match &redactor {
        Some(r) if !matches!(format, OutFormat::Html | OutFormat::Markdown) => r.apply(&text),
        _ => text,
    };
    if let Err(e) = write_output(a.output.as_deref(), &text, &a.paths) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("faultline: cannot write the report: {e}");
            return ExitCode::from(2);
        }
    }
    if !fail_on.is_empty()
        && analysis
            .incidents
            .iter()
            .any(|i| fail_on.contains(&i.layer))
    {
        return ExitCode::from(1);
    }
    ExitCode::SUCCESS
}
