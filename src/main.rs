//! The `faultline` command line: a thin layer over the library.

use clap::{Args, Parser, Subcommand, ValueEnum};
use faultline::{report, Knowledge, Options};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;

#[derive(Parser)]
#[command(
    name = "faultline",
    version,
    about = "Offline forensics for GPU incidents: kernel, driver and job logs in, evidence-backed root cause out"
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Analyze one incident: files, folders, archives, or - (stdin). `PATH@HOST` names the host of an input.
    Analyze(AnalyzeArgs),
    /// Print the merged, aligned timeline of relevant events.
    Timeline(AnalyzeArgs),
    /// Explain an Xid/SXid code or an event kind: `explain xid 79`, `explain sxid 20034`, `explain kind fell_off_bus`
    /// (`explain prefilter` lists the literals of the line prefilter).
    Explain {
        /// `xid`, `sxid`, `kind`, or a kind name.
        what: String,
        /// The code or kind name.
        code: Option<String>,
    },
    /// Scan many bundles (bug reports, archives, folders per host): one JSON line per bundle,
    /// then a fleet summary. `--list` shows how files were grouped; `--shard K/N` takes one
    /// worker's share.
    Scan(ScanArgs),
    /// Fold the JSON Lines of `scan` runs (e.g. the shards of one archive) into one fleet summary.
    Merge(MergeArgs),
    /// Print a shell completion script, e.g.
    /// `faultline completions bash > /etc/bash_completion.d/faultline`.
    Completions {
        /// The shell: bash, zsh, fish, elvish or powershell.
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Print the manual page (roff), e.g. `faultline man | man -l -`.
    Man,
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum OutFormat {
    Text,
    Json,
    Markdown,
    Html,
}

#[derive(Args)]
struct AnalyzeArgs {
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

fn parse_tz(s: &str) -> Option<i32> {
    match s {
        "UTC" | "utc" | "Z" | "GMT" => Some(0),
        _ => faultline::formats::time::zone(s.as_bytes())
            .filter(|(_, n)| *n == s.len())
            .map(|(o, _)| o),
    }
}

/// True when `target` (an existing path) is one of the inputs or lies inside an input folder:
/// the same path once symbolic links are resolved, or the same file through a hard link.
fn is_input(target: &std::path::Path, inputs: &[String]) -> bool {
    let Ok(t) = target.canonicalize() else {
        return false;
    };
    #[cfg(unix)]
    let t_id = {
        use std::os::unix::fs::MetadataExt;
        std::fs::metadata(&t).ok().map(|m| (m.dev(), m.ino()))
    };
    inputs.iter().any(|i| {
        let (ip, _) = faultline::input::split_host(i);
        let Ok(c) = std::path::Path::new(&ip).canonicalize() else {
            return false;
        };
        #[cfg(unix)]
        {
            use std::os::unix::fs::MetadataExt;
            let same_file = std::fs::metadata(&c)
                .ok()
                .is_some_and(|m| m.is_file() && Some((m.dev(), m.ino())) == t_id);
            if same_file {
                return true;
            }
        }
        t == c || t.starts_with(&c)
    })
}

/// The path of the temp file being written, for the SIGINT/SIGTERM handler to remove; null when
/// there is none. The C string is leaked on purpose (one per run): the handler may read it at
/// any time.
static TEMP_FILE: std::sync::atomic::AtomicPtr<libc::c_char> =
    std::sync::atomic::AtomicPtr::new(std::ptr::null_mut());

extern "C" fn remove_temp_and_die(sig: libc::c_int) {
    let p = TEMP_FILE.swap(std::ptr::null_mut(), std::sync::atomic::Ordering::SeqCst);
    // only async-signal-safe calls: unlink, signal, raise
    unsafe {
        if !p.is_null() {
            libc::unlink(p);
        }
        libc::signal(sig, libc::SIG_DFL);
        libc::raise(sig);
    }
}

/// Installs the handler that removes the temp file on SIGINT, SIGTERM and SIGHUP (once).
fn guard_temp_file(tmp: &std::path::Path) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        for sig in [libc::SIGINT, libc::SIGTERM, libc::SIGHUP] {
            // SAFETY: the handler only makes async-signal-safe calls
            unsafe {
                let mut sa: libc::sigaction = std::mem::zeroed();
                sa.sa_sigaction = remove_temp_and_die as *const () as usize;
                libc::sigemptyset(&mut sa.sa_mask);
                libc::sigaction(sig, &sa, std::ptr::null_mut());
            }
        }
    });
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(tmp.as_os_str().as_bytes()).ok();
    let ptr = c.map_or(std::ptr::null_mut(), std::ffi::CString::into_raw);
    TEMP_FILE.store(ptr, std::sync::atomic::Ordering::SeqCst);
}

/// The temp file is gone or renamed: the handler has nothing to remove.
fn release_temp_file() {
    TEMP_FILE.store(std::ptr::null_mut(), std::sync::atomic::Ordering::SeqCst);
}

/// `-o -` is stdout, as no `-o` at all.
fn output_path(o: Option<&str>) -> Option<&str> {
    o.filter(|p| *p != "-")
}

/// The extension of `-o FILE`, lower-cased.
fn extension(output: Option<&str>) -> Option<String> {
    let p = std::path::Path::new(output_path(output)?);
    Some(p.extension()?.to_str()?.to_ascii_lowercase())
}

/// Writes the output: to stdout (no `-o`, or `-o -`), or to FILE atomically — a new temp file
/// beside it (created exclusively, so that nothing planted at its name is followed), flushed to
/// disk, then renamed over FILE. FILE is never an input (nor inside an input folder), and when
/// it exists it must be a regular file: a device, a FIFO, a socket, a folder or a symbolic link
/// is refused (rename would replace it with a file; use `-o -` or a shell redirection to write
/// into it). On any error, and on SIGINT/SIGTERM/SIGHUP, the temp file is removed and FILE is
/// left as it was.
fn write_output(path: Option<&str>, text: &str, inputs: &[String]) -> std::io::Result<()> {
    match output_path(path) {
        None => {
            let mut out = std::io::stdout().lock();
            out.write_all(text.as_bytes())?;
            out.flush()
        }
        Some(p) => {
            let target = std::path::Path::new(p);
            if is_input(target, inputs) {
                return Err(std::io::Error::other(format!(
                    "refusing to write over an input: {p}"
                )));
            }
            if let Ok(m) = std::fs::symlink_metadata(target) {
                let t = m.file_type();
                if t.is_symlink() {
                    return Err(std::io::Error::other(format!(
                        "refusing to replace a symbolic link: {p} (name its target, or use -o - with a redirection)"
                    )));
                }
                if !t.is_file() {
                    return Err(std::io::Error::other(format!(
                        "refusing to replace what is not a regular file (device, FIFO, socket or folder): {p} (use -o - with a redirection to write into it)"
                    )));
                }
            }
            let dir = target
                .parent()
                .filter(|d| !d.as_os_str().is_empty())
                .unwrap_or(std::path::Path::new("."));
            let name = target
                .file_name()
                .and_then(|n| n.to_str())
                .unwrap_or("report");
            let stamp = std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(0, |d| d.subsec_nanos());
            let mut last_err = None;
            for attempt in 0..16u32 {
                let tmp = dir.join(format!(
                    ".{name}.faultline-tmp-{}-{stamp:08x}-{attempt}",
                    std::process::id()
                ));
                let file = std::fs::OpenOptions::new()
                    .write(true)
                    .create_new(true)
                    .open(&tmp);
                let mut file = match file {
                    Ok(f) => f,
                    Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {
                        last_err = Some(e);
                        continue;
                    }
                    Err(e) => return Err(e),
                };
                guard_temp_file(&tmp);
                let written = file
                    .write_all(text.as_bytes())
                    .and_then(|_| file.sync_all())
                    .map(|_| hold_for_tests())
                    .and_then(|_| std::fs::rename(&tmp, target));
                if written.is_err() {
                    let _ = std::fs::remove_file(&tmp);
                }
                release_temp_file();
                return written;
            }
            Err(last_err.unwrap_or_else(|| std::io::Error::other("no temp file name left")))
        }
    }
}

/// Tests only (tests/output.rs): `FAULTLINE_TEST_HOLD_TEMP_MS` keeps the written temp file
/// that long before the rename, so that a signal can be sent while it exists.
fn hold_for_tests() {
    if let Some(ms) = std::env::var("FAULTLINE_TEST_HOLD_TEMP_MS")
        .ok()
        .and_then(|v| v.parse::<u64>().ok())
    {
        std::thread::sleep(std::time::Duration::from_millis(ms.min(10_000)));
    }
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

fn run_analyze(a: AnalyzeArgs, timeline_only: bool) -> ExitCode {
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
        // why each input gave nothing (a binary journal says how to export it)
        for i in analysis.inputs.iter().filter(|_| !a.quiet) {
            for w in &i.warnings {
                eprintln!(
                    "faultline: {}: {}",
                    report::terminal_safe(&i.path),
                    report::terminal_safe(w)
                );
            }
        }
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

/// The man page: the top-level page (name, synopsis, description, commands), then one section
/// per subcommand with its synopsis, description and options, all from the clap definition.
fn man_page() -> Vec<u8> {
    use clap::CommandFactory;
    let mut cmd = Cli::command();
    cmd.build();
    let mut out = Vec::new();
    let top = clap_mangen::Man::new(cmd.clone());
    // writing to a Vec cannot fail
    let _ = top.render_title(&mut out);
    let _ = top.render_name_section(&mut out);
    let _ = top.render_synopsis_section(&mut out);
    let _ = top.render_description_section(&mut out);
    // the commands are sections of this page, not pages of their own (`faultline-analyze(1)`)
    let mut subs = Vec::new();
    let _ = top.render_subcommands_section(&mut subs);
    let mut subs = String::from_utf8_lossy(&subs).into_owned();
    for sub in cmd.get_subcommands() {
        subs = subs.replace(
            &format!("faultline\\-{}(1)", sub.get_name()),
            &format!("\\fBfaultline {}\\fR", sub.get_name()),
        );
    }
    out.extend_from_slice(subs.as_bytes());
    for sub in cmd.get_subcommands().filter(|s| s.get_name() != "help") {
        let name = format!("faultline {}", sub.get_name());
        let _ = writeln!(out, ".SH \"{}\"", name.to_uppercase());
        let page = clap_mangen::Man::new(sub.clone());
        let mut part = Vec::new();
        let _ = page.render_synopsis_section(&mut part);
        let _ = page.render_description_section(&mut part);
        let _ = page.render_options_section(&mut part);
        // the subcommand's own headings become subsections of its section
        for line in String::from_utf8_lossy(&part).lines() {
            match line.strip_prefix(".SH ") {
                Some(h) => {
                    let _ = writeln!(out, ".SS {h}");
                }
                None => {
                    let _ = writeln!(out, "{line}");
                }
            }
        }
    }
    let _ = top.render_version_section(&mut out);
    out
}

/// Writes `bytes` to stdout; a closed pipe (`faultline explain xid 79 | head -1`) is not an error.
fn print_stdout(bytes: &[u8]) -> ExitCode {
    let mut out = std::io::stdout().lock();
    match out.write_all(bytes).and_then(|_| out.flush()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
            eprintln!("faultline: cannot write to stdout: {e}");
            ExitCode::from(2)
        }
        _ => ExitCode::SUCCESS,
    }
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Completions { shell } => {
            use clap::CommandFactory;
            let mut out = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "faultline", &mut out);
            print_stdout(&out)
        }
        Command::Man => print_stdout(&man_page()),
        Command::Analyze(a) => run_analyze(a, false),
        Command::Timeline(a) => run_analyze(a, true),
        Command::Scan(a) => run_scan(a),
        Command::Merge(a) => run_merge(a),
        Command::Explain { what, code } if what == "prefilter" => {
            match faultline::events::RecognizerSet::load(&[]) {
                Ok(set) => {
                    let _ = code;
                    print_stdout(format!("{}\n", set.prefilter_literals.join("\n")).as_bytes())
                }
                Err(e) => {
                    eprintln!("faultline: {e}");
                    ExitCode::from(2)
                }
            }
        }
        Command::Explain { what, code } => {
            let catalog = faultline::catalog::Catalog::builtin();
            match faultline::explain::explain(&catalog, &what, code.as_deref()) {
                Some(t) => print_stdout(t.as_bytes()),
                None => {
                    eprintln!(
                        "faultline: nothing known about `{what}{}`",
                        code.map(|c| format!(" {c}")).unwrap_or_default()
                    );
                    ExitCode::from(2)
                }
            }
        }
    }
}

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum FleetFormat {
    Text,
    Jsonl,
}

#[derive(Args)]
struct ScanArgs {
    /// Scan roots: folders of bundles, or bundle files.
    #[arg(required = true)]
    paths: Vec<String>,
    /// Output format (text on a terminal, JSON Lines otherwise).
    #[arg(long, value_enum)]
    format: Option<FleetFormat>,
    /// Write the output to FILE (atomically; a regular file, never an input; `-` is stdout). Its
    /// extension (.jsonl/.json, .txt) sets the format unless --format is given.
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
    /// Exit with status 1 when an incident of a bundle has one of these layers (comma list).
    #[arg(long = "fail-on", value_delimiter = ',')]
    fail_on: Vec<String>,
    /// Cap on decompressed bytes per archive member or compressed file.
    #[arg(long, default_value_t = 4 << 30)]
    max_member_bytes: u64,
    /// Cap on decompressed bytes in total, per bundle.
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

#[derive(Args)]
struct MergeArgs {
    /// JSON Lines written by `faultline scan` (plain, .gz or .zst; `-` for stdin).
    #[arg(required = true)]
    files: Vec<String>,
    /// Output format (text on a terminal, JSON Lines otherwise).
    #[arg(long, value_enum)]
    format: Option<FleetFormat>,
    /// Write the output to FILE (atomically; a regular file, never an input; `-` is stdout). Its
    /// extension (.jsonl/.json, .txt) sets the format unless --format is given.
    #[arg(short, long)]
    output: Option<String>,
    /// No warnings on stderr.
    #[arg(long)]
    quiet: bool,
}

/// --format, else the extension of -o FILE (`.jsonl`, `.json`, `.ndjson`; `.txt`), else text on
/// a terminal and JSON Lines otherwise.
fn fleet_format(f: Option<FleetFormat>, output: Option<&str>) -> FleetFormat {
    let by_extension = match extension(output).as_deref() {
        Some("jsonl" | "json" | "ndjson") => Some(FleetFormat::Jsonl),
        Some("txt" | "text") => Some(FleetFormat::Text),
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

fn run_scan(a: ScanArgs) -> ExitCode {
    use faultline::fleet;
    if let Some(j) = a.jobs {
        let _ = rayon::ThreadPoolBuilder::new()
            .num_threads(j.max(1))
            .build_global();
    }
    let shard = a.shard.unwrap_or(fleet::Shard::ALL);
    if a.list {
        let found = fleet::discover(&a.paths);
        let bundles = fleet::scan::select(found.bundles, shard);
        if !a.quiet {
            for n in &found.notes {
                eprintln!("faultline: note: {}", report::terminal_safe(n));
            }
        }
        let text = fleet::text::render_list(&bundles);
        return match write_output(a.output.as_deref(), &text, &a.paths) {
            Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => {
                eprintln!("faultline: cannot write the list: {e}");
                ExitCode::from(2)
            }
            _ => ExitCode::SUCCESS,
        };
    }
    let tz_offset = match a.tz.as_deref().map(parse_tz) {
        Some(None) => {
            eprintln!("faultline: --tz: expected UTC or an offset such as +08:00");
            return ExitCode::from(2);
        }
        Some(Some(o)) => Some(o),
        None => None,
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
        shard,
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
        progress: !a.quiet && std::io::stderr().is_terminal(),
    };
    let result = fleet::scan(&opts, &knowledge);
    if !a.quiet {
        for n in &result.notes {
            eprintln!("faultline: note: {}", report::terminal_safe(n));
        }
        let s = &result.summary;
        let secs = result.elapsed.as_secs_f64().max(1e-9);
        eprintln!(
            "faultline: scanned {} bundle(s) ({} on disk, {} read) in {:.2} s: {:.1} bundles/s, {:.1} MB/s on disk",
            s.bundles,
            fleet::text::human_bytes(s.disk_bytes),
            fleet::text::human_bytes(s.bytes),
            secs,
            s.bundles as f64 / secs,
            s.disk_bytes as f64 / secs / 1e6
        );
    }
    let text = match fleet_format(a.format, a.output.as_deref()) {
        FleetFormat::Jsonl => result.to_jsonl(),
        FleetFormat::Text => fleet::text::render_summary(&result.summary, &result.lines),
    };
    if let Err(e) = write_output(a.output.as_deref(), &text, &a.paths) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("faultline: cannot write the results: {e}");
            return ExitCode::from(2);
        }
    }
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

fn run_merge(a: MergeArgs) -> ExitCode {
    use faultline::fleet;
    let m = fleet::merge(&a.files);
    if !a.quiet {
        for w in &m.warnings {
            eprintln!("faultline: warning: {}", report::terminal_safe(w));
        }
    }
    if m.nothing_read() {
        eprintln!("faultline: no result file could be read");
        return ExitCode::from(2);
    }
    let text = match fleet_format(a.format, a.output.as_deref()) {
        FleetFormat::Jsonl => fleet::scan::to_line(&m.summary),
        FleetFormat::Text => fleet::text::render_summary(&m.summary, &m.lines),
    };
    if let Err(e) = write_output(a.output.as_deref(), &text, &a.files) {
        if e.kind() != std::io::ErrorKind::BrokenPipe {
            eprintln!("faultline: cannot write the summary: {e}");
            return ExitCode::from(2);
        }
    }
    ExitCode::SUCCESS
}

/// The layers of `--fail-on`; an unknown name is a usage error (exit 2).
fn parse_fail_on(names: &[String]) -> Result<Vec<faultline::model::Layer>, ExitCode> {
    let mut out = Vec::new();
    for l in names {
        match faultline::model::Layer::parse(l.trim()) {
            Some(x) => out.push(x),
            None => {
                eprintln!("faultline: --fail-on: unknown layer `{l}`");
                return Err(ExitCode::from(2));
            }
        }
    }
    Ok(out)
}

/// The built-in knowledge plus the `--rules` files; an unreadable or invalid file is a usage
/// error (exit 2).
fn load_knowledge(files: &[String]) -> Result<Knowledge, ExitCode> {
    let mut texts = Vec::new();
    for f in files {
        match std::fs::read_to_string(f) {
            Ok(t) => texts.push(t),
            Err(e) => {
                eprintln!("faultline: --rules {f}: {e}");
                return Err(ExitCode::from(2));
            }
        }
    }
    Knowledge::load(&texts).map_err(|e| {
        eprintln!("faultline: rules: {e}");
        ExitCode::from(2)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    fn completions(shell: clap_complete::Shell) -> String {
        let mut out = Vec::new();
        clap_complete::generate(shell, &mut Cli::command(), "faultline", &mut out);
        String::from_utf8(out).unwrap()
    }

    /// Every subcommand and every long flag of every subcommand, from the clap definition, is
    /// offered by the bash, zsh and fish completions and documented in the man page.
    #[test]
    fn every_subcommand_and_long_flag_is_in_the_completions_and_the_man_page() {
        // roff escapes dashes: `\-\-max\-depth`
        let man = String::from_utf8(man_page()).unwrap().replace("\\-", "-");
        let bash = completions(clap_complete::Shell::Bash);
        let zsh = completions(clap_complete::Shell::Zsh);
        let fish = completions(clap_complete::Shell::Fish);
        let cmd = Cli::command();
        let mut checked = 0;
        for sub in cmd.get_subcommands() {
            let name = sub.get_name();
            assert!(man.contains(&format!("faultline {name}")), "man: {name}");
            assert!(bash.contains(name), "bash: {name}");
            assert!(zsh.contains(&format!("'{name}:")), "zsh: {name}");
            assert!(fish.contains(&format!("-a \"{name}\"")), "fish: {name}");
            for arg in sub.get_arguments() {
                let Some(long) = arg.get_long() else {
                    continue;
                };
                let flag = format!("--{long}");
                assert!(man.contains(&flag), "man: {name} {flag}");
                assert!(bash.contains(&flag), "bash: {name} {flag}");
                assert!(zsh.contains(&flag), "zsh: {name} {flag}");
                assert!(fish.contains(&format!("-l {long}")), "fish: {name} {flag}");
                checked += 1;
            }
        }
        assert!(checked > 30, "only {checked} flags seen");
        for s in ["bash", "zsh", "fish"] {
            assert!(
                Cli::try_parse_from(["faultline", "completions", s]).is_ok(),
                "{s}"
            );
        }
    }
}
