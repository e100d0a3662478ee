//! `faultline collect`: the capture of one node, written as a `.tar.zst` bundle.

use super::common::{redaction_key, RedactArgs};
use clap::{Args, ValueEnum};
use faultline::collect::{self, OptIn};
use faultline::report::terminal_safe;
use std::path::PathBuf;
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum With {
    /// `dcgmi diag -r 1` (about a minute).
    Dcgm,
    /// `nvidia-bug-report.sh` (minutes; root).
    BugReport,
}

#[derive(Args)]
pub(super) struct CollectArgs {
    /// The bundle to write (`-` is stdout). Default:
    /// `faultline-collect-HOST-YYYYMMDDTHHMMSSZ.tar.zst` in the current folder.
    #[arg(short, long, value_name = "FILE.tar.zst")]
    output: Option<PathBuf>,
    /// A job log to include (stdout/stderr of the job); may be repeated. A path with a symbolic
    /// link in it is refused.
    #[arg(long = "job-log", value_name = "PATH")]
    job_logs: Vec<PathBuf>,
    /// Read a job log only when this user id owns it (a root epilog passes the job owner's, so
    /// that a job cannot name another user's file as its output).
    #[arg(long, value_name = "UID")]
    job_log_uid: Option<u32>,
    /// Only journal entries of this last span (`30m`, `2h`, `1d`); logs read as files are whole.
    #[arg(long, value_name = "SPAN")]
    since: Option<String>,
    /// Also run an opt-in item (may be repeated): dcgm, bug-report.
    #[arg(long = "with", value_enum, value_delimiter = ',')]
    with: Vec<With>,
    /// Seconds all the default items may take together (each also has its own timeout).
    #[arg(long, default_value_t = 25, value_parser = clap::value_parser!(u64).range(1..=3600))]
    budget: u64,
    /// No summary on stderr.
    #[arg(long)]
    quiet: bool,
    #[command(flatten)]
    redact: RedactArgs,
}

/// Runs `faultline collect`.
pub(super) fn run_collect(a: CollectArgs) -> ExitCode {
    let since = match a.since.as_deref() {
        None => None,
        Some(s) => match collect::parse_span(s) {
            Some(secs) => Some((s.to_string(), secs)),
            None => {
                eprintln!(
                    "faultline: --since: `{}` is not a span such as 30m, 2h or 1d",
                    terminal_safe(s)
                );
                return ExitCode::from(2);
            }
        },
    };
    let key = match redaction_key(&a.redact, a.quiet) {
        Ok(k) => k.map(|k| k.0),
        Err(c) => return c,
    };
    let output = a.output.unwrap_or_else(|| {
        let host = collect::host_name();
        let safe: String = host
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || c == '-' || c == '.' {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        let host = if key.is_some() {
            "redacted".to_string()
        } else {
            safe
        };
        PathBuf::from(format!(
            "faultline-collect-{host}-{}.tar.zst",
            chrono::Utc::now().format("%Y%m%dT%H%M%SZ")
        ))
    });
    let opts = collect::Options {
        output: output.clone(),
        job_logs: a.job_logs,
        job_log_uid: a.job_log_uid,
        since,
        redact: key,
        with: a
            .with
            .iter()
            .map(|w| match w {
                With::Dcgm => OptIn::Dcgm,
                With::BugReport => OptIn::BugReport,
            })
            .collect(),
        budget: std::time::Duration::from_secs(a.budget),
        ..collect::Options::default()
    };
    match collect::collect(&opts) {
        Ok(s) => {
            if !a.quiet {
                summary(&output, &s);
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!(
                "faultline: collect: cannot write {}: {}",
                terminal_safe(&output.display().to_string()),
                terminal_safe(&e.to_string())
            );
            ExitCode::from(2)
        }
    }
}

/// The summary on stderr: what was written, then each missing item and why.
fn summary(output: &std::path::Path, s: &collect::Summary) {
    let m = &s.manifest;
    let got = m.items.iter().filter(|i| !i.members.is_empty()).count();
    eprintln!(
        "faultline: collect: wrote {} ({} members, {} bytes) in {:.1} s: {got} of {} items captured{}",
        terminal_safe(&output.display().to_string()),
        s.members,
        s.bytes,
        m.duration_ms as f64 / 1000.0,
        m.items.len(),
        if m.root { "" } else { " (not root: some items say less)" }
    );
    for i in m.items.iter().filter(|i| i.missing.is_some()) {
        let why = i.missing.map_or("", |x| x.as_str());
        eprintln!(
            "faultline: collect: missing {} ({why}): {}",
            i.name,
            terminal_safe(&i.detail)
        );
    }
}
