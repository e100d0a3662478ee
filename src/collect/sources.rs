//! The sources of one item: a command (with its timeout, cap and the reasons it gives nothing),
//! files by pattern (never through a link out of their folder), the job logs named, and
//! `nvidia-bug-report.sh`'s own log file.

use super::exec;
use super::files::{self, Refused};
use super::items::{Item, Src};
use super::manifest::Missing;
use super::run::{describe, Ctx, Got};
use std::path::{Path, PathBuf};
use std::time::Duration;

pub(super) fn run_source(item: &'static Item, src: &Src, ctx: &Ctx) -> Got {
    match *src {
        Src::Cmd {
            argv,
            member,
            since,
            ..
        } => run_command(item, argv, member, since, ctx),
        Src::Files { globs, once } => read_files(item, globs, once, ctx),
        Src::Aer => {
            let (text, n) = files::aer_text(&ctx.opts.pci_root);
            if n == 0 {
                Got::Missing(
                    Missing::NotInstalled,
                    "no AER counters of an NVIDIA PCI device in sysfs".into(),
                )
            } else {
                Got::Data {
                    command: describe(src),
                    members: vec![("aer-counters.txt".into(), text.into_bytes())],
                    status: None,
                    truncated: false,
                    note: None,
                }
            }
        }
        Src::JobLogs => job_logs(item, ctx),
    }
}

/// Phrases of a command's output that say it lacked privilege.
const PERMISSION: &[&str] = &[
    "ermission denied",
    "Operation not permitted",
    "must be root",
    "Insufficient Permissions",
    "insufficient privileges",
    "are not root",
    "Could not open device",
];

/// Phrases that say the thing asked for is not there: no driver or device (nvidia-smi without
/// a driver), no such boot in the journal.
const NO_DEVICE: &[&str] = &[
    "No such boot ID",
    "No journal files were found",
    "couldn't communicate with the NVIDIA driver",
    "No devices were found",
    "NVIDIA driver is not loaded",
    "No IB devices found",
    "No IB devices",
];

fn run_command(item: &Item, argv: &[&str], member: &str, since: bool, ctx: &Ctx) -> Got {
    let shown = argv.join(" ");
    let Some(program) = exec::which(argv[0]) else {
        return Got::Missing(
            Missing::NotInstalled,
            format!("{}: not found on PATH", argv[0]),
        );
    };
    let mut args: Vec<String> = argv[1..].iter().map(|s| s.to_string()).collect();
    if let (true, Some((_, secs))) = (since, &ctx.opts.since) {
        let from = chrono::Utc::now().timestamp() - *secs as i64;
        args.push(format!("--since=@{from}"));
    }
    let timeout = ctx.timeout(item);
    if timeout.is_zero() {
        return Got::Missing(
            Missing::Timeout,
            format!(
                "{shown}: not run, the total budget of {} s was spent",
                ctx.opts.budget.as_secs()
            ),
        );
    }
    let ran = exec::run(&program, &args, timeout, item.cap);
    if ran.not_found {
        return Got::Missing(Missing::NotInstalled, format!("{shown}: not found"));
    }
    if let Some(e) = &ran.spawn_error {
        let m = if e.contains("ermission") {
            Missing::Permission
        } else {
            Missing::Failed
        };
        return Got::Missing(m, format!("{shown}: could not start: {e}"));
    }
    let err = String::from_utf8_lossy(&ran.err);
    let first_err = err
        .lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim();
    let first_err: String = first_err.chars().take(200).collect();
    if ran.timed_out {
        if ran.out.is_empty() {
            return Got::Missing(
                Missing::Timeout,
                format!(
                    "{shown}: killed at the timeout of {} ms, nothing printed",
                    timeout.as_millis()
                ),
            );
        }
        return Got::Data {
            command: shown.clone(),
            members: vec![(member.into(), ran.out)],
            status: None,
            truncated: true,
            note: Some(format!(
                "{shown}: killed at the timeout of {} ms; what it printed before is kept",
                timeout.as_millis()
            )),
        };
    }
    if ran.truncated {
        return Got::Data {
            command: shown.clone(),
            members: vec![(member.into(), ran.out)],
            status: ran.status,
            truncated: true,
            note: Some(format!(
                "{shown}: output cut at the cap of {} bytes",
                item.cap
            )),
        };
    }
    let said = |list: &[&str]| {
        list.iter()
            .any(|p| err.contains(p) || contains(&ran.out, p))
    };
    match ran.status {
        Some(0) if says_nothing(&ran.out) => Got::Empty(format!("{shown}: no entries")),
        Some(0) if argv[0] == "nvidia-bug-report.sh" => bug_report(shown, member, item.cap, &ran),
        Some(0) => Got::Data {
            command: shown,
            members: vec![(member.into(), ran.out)],
            status: Some(0),
            truncated: false,
            note: None,
        },
        status => {
            let code =
                status.map_or_else(|| "killed by a signal".to_string(), |c| format!("exit {c}"));
            let why = if first_err.is_empty() {
                code.clone()
            } else {
                format!("{code}: {first_err}")
            };
            let m = if said(PERMISSION) {
                Missing::Permission
            } else if said(NO_DEVICE) {
                Missing::NotInstalled
            } else {
                Missing::Failed
            };
            Got::Exited(m, format!("{shown}: {why}"), status)
        }
    }
}

/// `nvidia-bug-report.sh` writes `nvidia-bug-report.log.gz` into the current folder: that file,
/// when this run made it (newer than the command's start), is the member, and is removed.
fn bug_report(shown: String, member: &str, cap: u64, ran: &exec::Ran) -> Got {
    let path = Path::new(member);
    let started = std::time::SystemTime::now() - ran.elapsed - Duration::from_secs(1);
    let fresh = std::fs::symlink_metadata(path)
        .ok()
        .and_then(|m| m.modified().ok())
        .is_some_and(|t| t >= started);
    match files::read(path, cap, false) {
        Ok(r) if fresh => {
            let _ = std::fs::remove_file(path);
            Got::Data {
                command: shown,
                members: vec![(member.into(), r.bytes)],
                status: Some(0),
                truncated: r.truncated,
                note: None,
            }
        }
        _ => Got::Missing(
            Missing::Failed,
            format!("{shown}: exit 0 but no new {member} in the current folder"),
        ),
    }
}

fn contains(hay: &[u8], needle: &str) -> bool {
    memchr::memmem::find(&hay[..hay.len().min(64 << 10)], needle.as_bytes()).is_some()
}

/// Output with nothing in it: blank, or journalctl's `-- No entries --` and its notes.
fn says_nothing(out: &[u8]) -> bool {
    String::from_utf8_lossy(&out[..out.len().min(4096)])
        .lines()
        .map(str::trim)
        .all(|l| l.is_empty() || l.starts_with("-- ") || l == "No journal files were found.")
        && out.len() < 4096
}

/// The member name of a file read: its path without the leading `/`.
fn member_name(p: &Path) -> String {
    p.display().to_string().trim_start_matches('/').to_string()
}

fn read_files(item: &'static Item, globs: &'static [&'static str], once: bool, ctx: &Ctx) -> Got {
    let glob = globs.join(" ");
    if once {
        let taken = ctx.taken.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(by) = globs.iter().find_map(|g| taken.get(g)) {
            return Got::Covered(format!("{glob}: already in the bundle (item {by})"));
        }
    }
    let paths: Vec<PathBuf> = globs.iter().flat_map(|g| files::expand(g)).collect();
    let mut members = Vec::new();
    let mut refusals = Vec::new();
    let mut truncated = false;
    for p in &paths {
        match files::read(p, item.cap, true) {
            Ok(r) => {
                truncated |= r.truncated;
                members.push((member_name(&r.path), r.bytes));
            }
            Err(Refused::Absent) => {}
            Err(r) => refusals.push(r),
        }
    }
    if members.is_empty() {
        return match refusals.first() {
            Some(Refused::Permission(w)) => Got::Missing(Missing::Permission, w.clone()),
            Some(Refused::NotPlain(w) | Refused::Other(w)) => {
                Got::Missing(Missing::Failed, w.clone())
            }
            _ => Got::Missing(Missing::NotInstalled, format!("no {glob}")),
        };
    }
    let mut taken = ctx.taken.lock().unwrap_or_else(|e| e.into_inner());
    for g in globs {
        taken.entry(g).or_insert(item.name);
    }
    drop(taken);
    let note = (!refusals.is_empty()).then(|| {
        refusals
            .iter()
            .map(|r| match r {
                Refused::Permission(w) | Refused::NotPlain(w) | Refused::Other(w) => w.clone(),
                Refused::Absent => String::new(),
            })
            .collect::<Vec<_>>()
            .join("; ")
    });
    Got::Data {
        command: glob,
        members,
        status: None,
        truncated,
        note,
    }
}

fn job_logs(item: &Item, ctx: &Ctx) -> Got {
    if ctx.opts.job_logs.is_empty() {
        return Got::Empty("none named (--job-log PATH)".into());
    }
    let mut members: Vec<(String, Vec<u8>)> = Vec::new();
    let mut notes = Vec::new();
    let mut truncated = false;
    let mut first_reason = None;
    for p in &ctx.opts.job_logs {
        let read = files::read(p, item.cap, true).and_then(|r| match ctx.opts.job_log_uid {
            Some(uid) if r.uid != uid => Err(Refused::NotPlain(format!(
                "{}: owned by uid {}, not by the job's user (uid {uid}): not read",
                p.display(),
                r.uid
            ))),
            _ => Ok(r),
        });
        match read {
            Ok(r) => {
                truncated |= r.truncated;
                let base = p
                    .file_name()
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_else(|| "job.log".into());
                let mut name = format!("job/{base}");
                let mut k = 2;
                while members.iter().any(|m| m.0 == name) {
                    name = format!("job/{k}-{base}");
                    k += 1;
                }
                members.push((name, r.bytes));
            }
            Err(e) => {
                let (m, w) = match e {
                    Refused::Absent => (
                        Missing::NotInstalled,
                        format!("{}: no such file", p.display()),
                    ),
                    Refused::Permission(w) => (Missing::Permission, w),
                    Refused::NotPlain(w) | Refused::Other(w) => (Missing::Failed, w),
                };
                first_reason.get_or_insert(m);
                notes.push(w);
            }
        }
    }
    if members.is_empty() {
        return Got::Missing(first_reason.unwrap_or(Missing::Failed), notes.join("; "));
    }
    Got::Data {
        command: ctx
            .opts
            .job_logs
            .iter()
            .map(|p| p.display().to_string())
            .collect::<Vec<_>>()
            .join(" "),
        members,
        status: None,
        truncated,
        note: (!notes.is_empty()).then(|| notes.join("; ")),
    }
}
