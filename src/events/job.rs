//! Job-log records that need more than one line or a decision: torchrun failure entries (NCCL
//! InfiniBand records are read by [`super::verbs`]).

use super::{Draft, Record};
use crate::formats::time::iso_datetime;
use crate::model::{LineStamp, Severity};

fn field<'a>(line: &'a str, name: &str) -> Option<&'a str> {
    let t = line.trim_start();
    let rest = t.strip_prefix(name)?;
    let rest = rest.trim_start();
    Some(rest.strip_prefix(':')?.trim())
}

/// A `ChildFailedError` failure entry: `exitcode  : -6 (pid: 32051)` with its rank, host and time lines.
pub fn torchrun_failure(rec: &Record<'_>, out: &mut Vec<Draft>) -> bool {
    let Some(v) = field(rec.body, "exitcode") else {
        return false;
    };
    let code: Option<i64> = v.split_whitespace().next().and_then(|c| c.parse().ok());
    let mut d = Draft::new("process_exit");
    d.code = code;
    if let Some(pid) = super::xid::between(v, "(pid:", ")") {
        d.attrs.insert("pid", pid.to_string());
    }
    if entry_fields(&mut d, rec.preceding) {
        d.attrs.insert("root_cause", "true".into());
    }
    for line in rec.following.iter().take(3) {
        if let Some(tb) = field(line, "traceback") {
            if let Some(sig) = super::xid::between(tb, "(", ")") {
                d.attrs.insert("signal", sig.to_string());
            }
        }
    }
    if code.is_some_and(|c| c != 0) {
        d.severity = Some(Severity::Error);
    }
    let sig = match code {
        Some(-6) => "SIGABRT",
        Some(-9) => "SIGKILL",
        Some(-11) => "SIGSEGV",
        Some(-15) => "SIGTERM",
        _ => "",
    };
    if !sig.is_empty() {
        d.attrs.insert_if_absent("signal", sig);
    }
    out.push(d);
    true
}

/// The fields of a torchrun failure entry read upward from its `exitcode` line (`preceding`,
/// nearest last) into `d`: rank and local rank, host, time, up to the entry header `[N]:`.
/// Returns whether the line above that header names the entry the root cause.
fn entry_fields(d: &mut Draft, preceding: &[String]) -> bool {
    let (mut host_seen, mut time_seen) = (false, false);
    for line in preceding.iter().rev().take(8) {
        let t = line.trim();
        if let Some(r) = field(line, "rank") {
            if d.rank.is_none() {
                d.rank = r.split_whitespace().next().and_then(|x| x.parse().ok());
                if let Some(l) = super::xid::between(r, "local_rank:", ")") {
                    d.attrs.insert("local_rank", l.to_string());
                }
            }
        } else if let Some(h) = field(line, "host") {
            if !host_seen {
                d.set_host(h);
                host_seen = true;
            }
        } else if let Some(tm) = field(line, "time") {
            if !time_seen {
                if let Some((ws, _)) = iso_datetime(tm.as_bytes()) {
                    d.set_stamp(LineStamp {
                        wall: Some(ws),
                        mono_us: None,
                        tod_us: None,
                    });
                }
                time_seen = true;
            }
        } else if t.starts_with('[') && t.ends_with("]:") {
            // the entry header `[N]:`; the line before it tells whether this is the root cause
            continue;
        } else {
            return line.starts_with("Root Cause");
        }
    }
    false
}

/// How many lines after an MPI launcher's failure header its `Process name:` and `Exit code:`
/// lines may come (a blank line and the header's second line lie between).
const MPI_BLOCK_LINES: usize = 8;

/// A value after `name` (`Exit code:    3`) anywhere in `text`.
fn after_label<'a>(text: &'a str, name: &str) -> Option<&'a str> {
    let at = text.find(name)? + name.len();
    text[at..].split_whitespace().next()
}

/// The failure block of mpirun (Open MPI, PRRTE) and Horovod: `... exited with non-zero status,
/// thus causing the job to be terminated. The first process to do so was:` then `Process name:`
/// and `Exit code:` (on the lines after, or on the same line when the block was flattened), and
/// ORTE's `Primary job  terminated normally, but N process returned` (read only when no such
/// block follows, which names the process).
pub fn first_failed_process(rec: &Record<'_>, out: &mut Vec<Draft>) -> bool {
    let window: Vec<&str> = std::iter::once(rec.body)
        .chain(
            rec.following
                .iter()
                .take(MPI_BLOCK_LINES)
                .map(String::as_str),
        )
        .collect();
    let primary = rec.body.contains("terminated normally, but");
    if primary
        && window[1..]
            .iter()
            .any(|l| l.contains("exited with non-zero status"))
    {
        return false;
    }
    if !primary && !rec.body.contains("exited with non-zero status") {
        return false;
    }
    let mut d = Draft::new("process_exit");
    if primary {
        if let Some(n) = super::xid::between(rec.body, "but ", " process") {
            d.attrs.insert("processes", n.trim().to_string());
        }
    }
    for line in &window {
        if let Some(code) = after_label(line, "Exit code:").and_then(|c| c.parse().ok()) {
            d.code.get_or_insert(code);
        }
        if let Some(name) = after_label(line, "Process name:") {
            // `[[jobid,step],vpid]`: the vpid is the rank; Horovod prints the rank itself
            let rank = name.trim_end_matches(']').rsplit([',', '[']).next();
            d.rank = d.rank.or(rank.and_then(|r| r.parse().ok()));
            d.attrs.insert_if_absent("process_name", name);
        }
    }
    out.push(d);
    true
}
