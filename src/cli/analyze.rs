//! `faultline analyze` and `faultline timeline`.

use super::common::{
    load_knowledge, parse_fail_on, parse_tz, print_warnings, redaction_failed, redaction_key,
    time_options, CapArgs, RedactArgs,
};
use super::output::{extension, output_path, write_output, write_output_with};
use clap::{Args, ValueEnum};
use faultline::words::counted;
use faultline::{report, Options};
use std::io::IsTerminal;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum OutFormat {
    Text,
    Json,
    Markdown,
    Html,
    /// JSON Lines: one event per line (`timeline` only).
    Jsonl,
}

#[derive(Args)]
pub(super) struct AnalyzeArgs {
    /// Inputs.
    #[arg(required = true)]
    paths: Vec<String>,
    /// Output format (text on a terminal, JSON otherwise); `html` writes one self-contained page;
    /// `timeline` writes text, json and jsonl.
    #[arg(long, value_enum)]
    format: Option<OutFormat>,
    /// Write the report to FILE (atomically; a regular file, never an input; `-` is stdout). Its
    /// extension (.json, .md, .html, .txt) sets the format unless --format is given.
    #[arg(short, long)]
    output: Option<String>,
    /// Year for syslog stamps that carry none.
    #[arg(long)]
    year: Option<i32>,
    /// The day (YYYY-MM-DD) a file whose lines print only a time of day (`[15:58:29] …`)
    /// starts on, when no dated line of the file or of its host dates it.
    #[arg(long, value_name = "YYYY-MM-DD", value_parser = super::common::parse_date)]
    date: Option<i64>,
    /// Zone for stamps that carry none: `UTC`, `+08:00`, `-0500`, an IANA name
    /// (`Europe/Berlin`, `America/New_York`; daylight saving time followed) or an abbreviation
    /// (`CET`, `EST`, `PST`).
    #[arg(long)]
    tz: Option<String>,
    #[command(flatten)]
    filters: super::filters::FilterArgs,
    /// Worker threads (default: all cores).
    #[arg(long)]
    jobs: Option<usize>,
    /// No progress or notes on stderr.
    #[arg(long)]
    quiet: bool,
    /// Text report: add the inputs table (with warnings and notes) and every event.
    #[arg(short, long)]
    verbose: bool,
    /// Colour the text report (verdict, layers, event rows by severity): `auto` on a terminal
    /// unless NO_COLOR is set.
    #[arg(long, value_enum, default_value = "auto")]
    color: super::color::ColorWhen,
    /// Extra recognizers, rules or catalog entries (TOML); may be repeated.
    #[arg(long = "rules")]
    rules: Vec<String>,
    /// Exit with status 1 when an incident has one of these root-cause layers (comma list, any
    /// case): any, hardware, thermal_power, gpu_memory, interconnect, driver_stack, application,
    /// network_storage, platform, unknown, none (`any`: any incident).
    #[arg(long = "fail-on", value_delimiter = ',')]
    fail_on: Vec<String>,
    #[command(flatten)]
    redact: RedactArgs,
    #[command(flatten)]
    caps: CapArgs,
    /// Skip files and archive members whose path or name matches GLOB (`*`, `?`, `[..]`); may
    /// be repeated.
    #[arg(long = "exclude", value_name = "GLOB")]
    exclude: Vec<String>,
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
    // one analysis holds its inputs' events together: large blocks mapped on their own give
    // their memory back when freed (a fleet scan, many small inputs one after the other, keeps
    // the allocator's default, which reuses its large blocks without new page faults; so does
    // a small analysis, whose start-up it would slow)
    if large_inputs(&a.paths) {
        faultline::alloc::tune();
    }
    match analyze(a, timeline_only) {
        Ok(code) | Err(code) => code,
    }
}

/// Whether the inputs named may hold many events: a file of 16 MiB or more, a folder, or stdin.
fn large_inputs(paths: &[String]) -> bool {
    const LARGE: u64 = 16 << 20;
    paths.iter().any(|p| {
        let path = p.rsplit_once('@').map_or(p.as_str(), |(path, _)| path);
        std::fs::metadata(p)
            .or_else(|_| std::fs::metadata(path))
            .map_or(true, |m| !m.is_file() || m.len() >= LARGE)
    })
}

fn usage_error(msg: &str) -> ExitCode {
    eprintln!("faultline: {msg}");
    ExitCode::from(2)
}

fn analyze(a: AnalyzeArgs, timeline_only: bool) -> Result<ExitCode, ExitCode> {
    if let Some(j) = a.jobs {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let opts = options(&a)?;
    let fail_on = parse_fail_on(&a.fail_on)?;
    let format = choose_format(&a, timeline_only)?;
    let knowledge = load_knowledge(&a.rules)?;
    let spinner = (!a.quiet && std::io::stderr().is_terminal()).then(|| {
        super::progress::Spinner::start(
            if timeline_only {
                "timeline"
            } else {
                "analyzing"
            },
            &a.paths,
        )
    });
    let key = redaction_key(&a.redact, a.quiet)?;
    let mut analysis = faultline::analyze(&opts, &knowledge);
    drop(spinner);
    let redactor = match key.map(|(k, note)| (faultline::redact::for_analysis(&k, &analysis), note))
    {
        Some((Err(e), _)) => return Err(redaction_failed(&e)),
        Some((Ok(r), note)) => {
            analysis.notes.push(note);
            Some(r)
        }
        None => None,
    };
    let shown = |w: &String| redactor.as_ref().map_or_else(|| w.clone(), |r| r.text(w));
    if !a.quiet {
        let warnings: Vec<String> = analysis.warnings.iter().map(shown).collect();
        print_warnings("warning", &warnings);
    }
    something_read(&a, &analysis, &shown)?;
    note_empty_stdin(&mut analysis, a.quiet);
    output(
        &a,
        (format, timeline_only),
        &mut analysis,
        redactor.as_ref(),
        &knowledge,
    )?;
    let code = exit_code(&analysis, &fail_on, a.quiet);
    std::mem::forget(analysis);
    std::mem::forget(knowledge);
    code
}

/// The analysis options of the command line: paths, rules, time zone and year, caps, filters.
fn options(a: &AnalyzeArgs) -> Result<Options, ExitCode> {
    let zone = parse_tz(a.tz.as_deref())?;
    let filter = a
        .filters
        .build(zone.as_ref())
        .map_err(|e| usage_error(&e))?;
    Ok(Options {
        paths: a.paths.clone(),
        rule_files: a.rules.clone(),
        time: time_options(a.year, a.date, zone),
        limits: {
            faultline::input::set_follow_links(a.caps.follow_links);
            a.caps.limits()
        },
        parallel_chunks: true,
        filter,
        exclude: a.exclude.clone(),
    })
}

/// Writes the report; a reader that went away (a closed pipe) is no error.
fn output(
    a: &AnalyzeArgs,
    (format, timeline_only): (OutFormat, bool),
    analysis: &mut faultline::Analysis,
    redactor: Option<&faultline::redact::Redactor>,
    knowledge: &faultline::Knowledge,
) -> Result<(), ExitCode> {
    let outcome = if format == OutFormat::Json && !timeline_only {
        // each event's JSON form made (and redacted) as it is written: the events are never
        // held twice
        write_output_with(a.output.as_deref(), &a.paths, |w| match redactor {
            None => report::json::write_taking(analysis, &knowledge.catalog, w),
            Some(r) => report::json::write_rewritten(
                analysis,
                &knowledge.catalog,
                w,
                |rep| r.report_but_events(rep),
                |e| r.event(e),
            ),
        })
    } else {
        write_report(a, format, timeline_only, analysis, redactor, knowledge)
    };
    match outcome {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            Err(usage_error(&format!("cannot write the report: {e}")))
        }
        _ => Ok(()),
    }
}

/// An error when no input could be read (with each input's reasons) or none was found.
fn something_read(
    a: &AnalyzeArgs,
    analysis: &faultline::Analysis,
    shown: &dyn Fn(&String) -> String,
) -> Result<(), ExitCode> {
    if analysis.nothing_read() {
        // say why, even when there is only one input (a lone zip, an unreadable file)
        if !a.quiet {
            for i in &analysis.inputs {
                for w in &i.warnings {
                    eprintln!(
                        "faultline: {}: {}",
                        report::terminal_safe(&shown(&i.path)),
                        report::terminal_safe(&shown(w))
                    );
                }
            }
        }
        return Err(usage_error("no input could be read"));
    }
    if analysis.inputs.is_empty() {
        return Err(usage_error(&format!(
            "no file to analyze in {} (empty folder, or nothing but skipped entries)",
            a.paths
                .iter()
                .map(|p| report::terminal_safe(p))
                .collect::<Vec<_>>()
                .join(", ")
        )));
    }
    Ok(())
}

/// Builds the report value (taking the events' texts over: the analysis keeps their counts and
/// places), redacts it with `--redact`, and writes it in `format`.
fn write_report(
    a: &AnalyzeArgs,
    format: OutFormat,
    timeline_only: bool,
    analysis: &mut faultline::Analysis,
    redactor: Option<&faultline::redact::Redactor>,
    knowledge: &faultline::Knowledge,
) -> std::io::Result<()> {
    let mut rep = report::json::build_taking(analysis, &knowledge.catalog);
    // --redact: a pass over the report's values, before any format renders them
    if let Some(r) = redactor {
        r.report(&mut rep);
    }
    // JSON and JSON Lines are streamed into the output: a report of many events is never held
    // whole in memory (nor a second time as a text)
    let out = match (format, timeline_only) {
        (OutFormat::Json, false) => write_output_with(a.output.as_deref(), &a.paths, |w| {
            report::json::write(&rep, w)
        }),
        (OutFormat::Json, true) => {
            write_output_with(a.output.as_deref(), &a.paths, |w| timeline_json(&rep, w))
        }
        (OutFormat::Jsonl, _) => {
            write_output_with(a.output.as_deref(), &a.paths, |w| timeline_jsonl(&rep, w))
        }
        _ => write_text(a, format, timeline_only, &rep, knowledge),
    };
    // the process ends here: freeing every event one by one would only cost time
    std::mem::forget(rep);
    out
}

/// Renders a report other than the JSON one, fitted and coloured for a terminal, and writes it.
fn write_text(
    a: &AnalyzeArgs,
    format: OutFormat,
    timeline_only: bool,
    rep: &report::json::Report,
    knowledge: &faultline::Knowledge,
) -> std::io::Result<()> {
    let mut text = render(format, (timeline_only, a.verbose), rep, knowledge);
    let to_stdout = output_path(a.output.as_deref()).is_none();
    // on a terminal, the text report fits its width (before colour, which adds no width)
    if let Some(w) = (format == OutFormat::Text && to_stdout)
        .then(super::wrap::terminal_width)
        .flatten()
    {
        text = super::wrap::wrap(&text, w);
    }
    if format == OutFormat::Text && a.color.enabled(to_stdout) {
        text = super::color::paint(&text, rep);
    }
    write_output(a.output.as_deref(), &text, &a.paths)
}

/// The exit status once the report is written: a usage error when nothing was recognized, 1 when
/// an incident's layer is one of `--fail-on`.
fn exit_code(
    analysis: &faultline::Analysis,
    fail_on: &[faultline::model::Layer],
    quiet: bool,
) -> Result<ExitCode, ExitCode> {
    if let Some(why) = nothing_recognized(analysis, quiet) {
        return Err(usage_error(&why));
    }
    let matched = analysis
        .incidents
        .iter()
        .any(|i| fail_on.contains(&i.layer));
    Ok(if matched {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// stdin that gave nothing: a warning (on the input, and on stderr).
fn note_empty_stdin(analysis: &mut faultline::Analysis, quiet: bool) {
    for i in analysis.inputs.iter_mut().filter(|i| i.path == "-") {
        if i.bytes == 0 && i.warnings.is_empty() {
            let w = if stdin_is_null() {
                "stdin: nothing to read (stdin is closed or /dev/null)"
            } else {
                "stdin: empty (nothing was piped in)"
            };
            if !quiet {
                eprintln!("faultline: warning: {w}");
            }
            i.warnings.push(w.to_string());
        }
    }
}

/// Why the analysis had nothing to work on: no input gave a single line that a reader or a
/// recognizer understood (no event, no GPU inventory) and none holds a line of text (empty
/// files, empty stdin, binaries only). None when something was recognized, or when there is
/// text that no reader knows: then a warning, not an error (a job log of a framework faultline
/// does not read is a healthy run as far as it can tell, and says so).
fn nothing_recognized(a: &faultline::Analysis, quiet: bool) -> Option<String> {
    let recognized = a
        .inputs
        .iter()
        .any(|i| i.lines_recognized > 0 || !i.gpus.is_empty());
    if recognized || !a.events.is_empty() || a.filter.is_some() {
        return None;
    }
    let lines: u64 = a.inputs.iter().map(|i| i.lines).sum();
    let binary = |i: &faultline::pipeline::InputResult| {
        i.warnings.iter().any(|w| w.starts_with("binary content"))
    };
    let text_lines: u64 = a
        .inputs
        .iter()
        .filter(|i| !binary(i))
        .map(|i| i.lines)
        .sum();
    let what = format!(
        "no input gave a line faultline recognizes ({}, {} read)",
        counted(a.inputs.len() as u64, "input"),
        counted(lines, "line")
    );
    if text_lines > 0 {
        if !quiet {
            eprintln!(
                "faultline: warning: {what}: is this a kernel, driver, nvidia-smi or job log?"
            );
        }
        return None;
    }
    Some(format!(
        "{what}: nothing to analyze (empty or binary input only)"
    ))
}

/// --format, else the extension of -o FILE, else text on a terminal and JSON otherwise;
/// `timeline` writes text, JSON and JSON Lines only.
fn choose_format(a: &AnalyzeArgs, timeline_only: bool) -> Result<OutFormat, ExitCode> {
    let by_extension = match extension(a.output.as_deref()).as_deref() {
        Some("json") => Some(OutFormat::Json),
        Some("jsonl" | "ndjson") => Some(OutFormat::Jsonl),
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
    let supported: &[OutFormat] = if timeline_only {
        &[OutFormat::Text, OutFormat::Json, OutFormat::Jsonl]
    } else {
        &[
            OutFormat::Text,
            OutFormat::Json,
            OutFormat::Markdown,
            OutFormat::Html,
        ]
    };
    if supported.contains(&format) {
        return Ok(format);
    }
    let names: Vec<String> = supported
        .iter()
        .filter_map(|f| f.to_possible_value().map(|v| v.get_name().to_string()))
        .collect();
    let name = format
        .to_possible_value()
        .map_or(String::new(), |v| v.get_name().to_string());
    let what = if timeline_only { "timeline" } else { "analyze" };
    Err(usage_error(&format!(
        "{what} does not write {name} (it writes {}){}",
        names.join(", "),
        if timeline_only {
            "; `faultline analyze` writes the Markdown and HTML reports"
        } else {
            "; `faultline timeline --format jsonl` writes JSON Lines"
        }
    )))
}

/// The schema tag of `timeline --format json|jsonl`.
pub const TIMELINE_SCHEMA: &str = "faultline/timeline/v1";

fn render(
    format: OutFormat,
    (timeline_only, verbose): (bool, bool),
    rep: &report::json::Report,
    knowledge: &faultline::Knowledge,
) -> String {
    match (format, timeline_only) {
        (OutFormat::Json, false) => report::json::to_string(rep),
        // streamed by `analyze`; a text of them only if another caller asks for one
        (OutFormat::Json, true) => to_text(|w| timeline_json(rep, w)),
        (OutFormat::Jsonl, _) => to_text(|w| timeline_jsonl(rep, w)),
        (OutFormat::Markdown, _) => report::markdown::render(rep, &knowledge.catalog),
        (OutFormat::Html, _) => report::html::render(rep, &knowledge.catalog),
        (OutFormat::Text, true) => report::text::render_timeline(rep),
        (OutFormat::Text, false) => report::text::render_with(rep, verbose),
    }
}

/// What a streaming writer writes, as a text.
fn to_text(write: impl FnOnce(&mut dyn std::io::Write) -> std::io::Result<()>) -> String {
    let mut v = Vec::new();
    match write(&mut v) {
        Ok(()) => String::from_utf8_lossy(&v).into_owned(),
        Err(e) => format!("{{\"error\":\"{e}\"}}\n"),
    }
}

/// `timeline --format json`: the schema tag, the tool and the events, each object's keys in
/// sorted order (the document was first written through `serde_json::Value`, which sorts them:
/// the bytes stay those). Streamed: one event at a time is turned into a value.
fn timeline_json(rep: &report::json::Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    /// A value serialized through `serde_json::Value` (keys sorted).
    struct Sorted<'a, T>(&'a T);
    impl<T: serde::Serialize> serde::Serialize for Sorted<'_, T> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            serde_json::to_value(self.0)
                .map_err(serde::ser::Error::custom)?
                .serialize(s)
        }
    }
    /// The events, one sorted value at a time.
    struct Events<'a>(&'a [report::json::EventJson]);
    impl serde::Serialize for Events<'_> {
        fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
            s.collect_seq(self.0.iter().map(Sorted))
        }
    }
    #[derive(serde::Serialize)]
    struct Doc<'a> {
        events: Events<'a>,
        schema: &'static str,
        tool: Sorted<'a, report::json::Tool>,
    }
    let doc = Doc {
        events: Events(&rep.events),
        schema: TIMELINE_SCHEMA,
        tool: Sorted(&rep.tool),
    };
    serde_json::to_writer_pretty(&mut *w, &doc).map_err(std::io::Error::other)?;
    w.write_all(b"\n")
}

/// `timeline --format jsonl`: one event per line, each with the schema tag.
fn timeline_jsonl(rep: &report::json::Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    #[derive(serde::Serialize)]
    struct Line<'a> {
        schema: &'static str,
        #[serde(flatten)]
        event: &'a report::json::EventJson,
    }
    for e in &rep.events {
        let line = Line {
            schema: TIMELINE_SCHEMA,
            event: e,
        };
        serde_json::to_writer(&mut *w, &line).map_err(std::io::Error::other)?;
        w.write_all(b"\n")?;
    }
    Ok(())
}
