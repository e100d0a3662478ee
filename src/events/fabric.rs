//! The Fabric Manager's log (`/var/log/fabricmanager.log`) read by its grammar, with nom:
//! `[Mon DD YYYY HH:MM:SS] [LEVEL] [tid N] message` (the time is the line prefix's, read by
//! [`crate::formats::joblog`]; the record's body starts at the level). The messages the data
//! knows (data/stack.toml: precheck, version mismatch, NVSwitch query, topology) are read by their
//! own recognizers; this parser is the catch-all behind them: an error or fatal line nothing else
//! explains becomes a `fabric_manager` lead carrying its message, never silence.

use super::{Draft, Record};
use crate::model::Severity;
use nom::{
    bytes::complete::{tag, take_till1, take_while1},
    character::complete::{char, digit1, space0, space1},
    combinator::opt,
    sequence::{delimited, preceded, terminated},
    IResult,
};

/// The parts of one Fabric Manager log line.
#[derive(Debug, PartialEq, Eq)]
pub struct FmLine<'a> {
    /// `INFO`, `WARNING`, `ERROR`, `FATAL`, `DEBUG`.
    pub level: &'a str,
    /// The thread id.
    pub tid: Option<&'a str>,
    /// The message.
    pub message: &'a str,
}

/// `[Mar 02 2025 10:00:01] ` when the line prefix was not read as a time (a copy pasted with
/// another prefix in front).
fn stamp(i: &str) -> IResult<&str, &str> {
    terminated(
        delimited(char('['), take_till1(|c| c == ']'), char(']')),
        space1,
    )(i)
}

fn level(i: &str) -> IResult<&str, &str> {
    delimited(
        char('['),
        take_while1(|c: char| c.is_ascii_uppercase()),
        char(']'),
    )(i)
}

fn tid(i: &str) -> IResult<&str, &str> {
    delimited(
        preceded(space0, tag("[tid ")),
        digit1,
        preceded(space0, char(']')),
    )(i)
}

/// Parses the body of a Fabric Manager log line (from its level, or from its bracketed time).
pub fn parse_fm_line(i: &str) -> IResult<&str, FmLine<'_>> {
    let i = i.trim_start();
    // a level at once, else a bracketed time first (a level is upper-case letters only)
    let (i, level) = match level(i) {
        Ok(r) => r,
        Err(_) => preceded(stamp, level)(i)?,
    };
    let (i, tid) = opt(tid)(i)?;
    let (message, _) = space0(i)?;
    Ok((
        "",
        FmLine {
            level,
            tid,
            message: message.trim_end(),
        },
    ))
}

/// The severity a level gives an unexplained line; `None` for levels that are not errors.
fn severity_of(level: &str) -> Option<Severity> {
    match level {
        "FATAL" | "CRITICAL" => Some(Severity::Critical),
        "ERROR" => Some(Severity::Error),
        _ => None,
    }
}

/// Drafts for one record (the `fabric_manager` parser): a `fabric_manager` lead for an error or
/// fatal line, with its message as `text`.
pub fn fm_drafts(rec: &Record<'_>, out: &mut Vec<Draft>) {
    let Some(at) = rec.body.find('[') else { return };
    let Ok((_, line)) = parse_fm_line(&rec.body[at..]) else {
        return;
    };
    let Some(sev) = severity_of(line.level) else {
        return;
    };
    if line.message.is_empty() {
        return;
    }
    let mut d = Draft::new("fabric_manager");
    d.severity = Some(sev);
    d.attrs.insert("level", line.level.to_string());
    if let Some(t) = line.tid {
        d.attrs.insert("tid", t.to_string());
    }
    d.attrs.insert("stage", "log".to_string());
    d.attrs.insert("text", line.message.to_string());
    out.push(d);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_log_grammar() {
        let (_, l) = parse_fm_line("[ERROR] [tid 12] failed to open NVSwitch device node").unwrap();
        assert_eq!(l.level, "ERROR");
        assert_eq!(l.tid, Some("12"));
        assert_eq!(l.message, "failed to open NVSwitch device node");
        let (_, l) =
            parse_fm_line("[Mar 02 2025 10:00:01] [INFO] [tid 7] Connected to 1 node.").unwrap();
        assert_eq!(l.level, "INFO");
        assert_eq!(l.message, "Connected to 1 node.");
        assert!(parse_fm_line("no brackets here").is_err());
        assert!(parse_fm_line("[error] lower-case is not a level").is_err());
    }

    #[test]
    fn only_errors_become_leads() {
        assert_eq!(severity_of("ERROR"), Some(Severity::Error));
        assert_eq!(severity_of("FATAL"), Some(Severity::Critical));
        assert_eq!(severity_of("INFO"), None);
        assert_eq!(severity_of("WARNING"), None);
    }
}
