//! `faultline explain`: the catalog as a reference, in text or JSON.

use super::output::print_stdout;
use clap::{Args, ValueEnum};
use std::process::ExitCode;

#[derive(Clone, Copy, ValueEnum, PartialEq, Eq)]
enum ExplainFormat {
    Text,
    Json,
}

#[derive(Args)]
pub(super) struct ExplainArgs {
    /// What to explain: nothing (the families), a family (`xid`, `sxid`, `dcgm`, `kind`,
    /// `layer`: every entry), or one entry: `79`, `xid79`, `"Xid 79"`, `sxid 20034`,
    /// `dcgm DCGM_FR_XID_ERROR`, `kind hung_task`, `layer interconnect` (`prefilter` lists the
    /// literals of the line prefilter; `known-issues [COMPONENT] [VERSION]` the published bugs
    /// and version rules, e.g. `known-issues driver 550.54.14`).
    words: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    format: ExplainFormat,
}

pub(super) fn run_explain(a: ExplainArgs) -> ExitCode {
    if a.words.len() == 1 && a.words[0] == "prefilter" {
        return match faultline::events::RecognizerSet::load(&[]) {
            Ok(set) => print_stdout(format!("{}\n", set.prefilter_literals.join("\n")).as_bytes()),
            Err(e) => {
                eprintln!("faultline: {e}");
                ExitCode::from(2)
            }
        };
    }
    if a.words.first().map(String::as_str) == Some("known-issues") {
        return known_issues(&a.words[1..], a.format);
    }
    let catalog = faultline::catalog::Catalog::builtin_ref();
    let answer = faultline::explain::parse(&a.words).and_then(|q| match a.format {
        ExplainFormat::Text => faultline::explain::text(catalog, &q),
        ExplainFormat::Json => faultline::explain::to_json(catalog, &q).map(|v| {
            let mut s = serde_json::to_string_pretty(&v).unwrap_or_default();
            s.push('\n');
            s
        }),
    });
    match answer {
        Ok(t) => print_stdout(t.as_bytes()),
        Err(why) => {
            eprintln!("faultline: {}", faultline::report::terminal_safe(&why));
            ExitCode::from(2)
        }
    }
}

/// `explain known-issues [COMPONENT] [VERSION]`.
fn known_issues(words: &[String], format: ExplainFormat) -> ExitCode {
    use faultline::known::{explain, KnownSet};
    let answer = KnownSet::load(&[])
        .map_err(|e| e.to_string())
        .and_then(|set| match format {
            ExplainFormat::Text => explain::text(&set, words),
            ExplainFormat::Json => explain::json(&set, words)
                .map(|v| format!("{}\n", serde_json::to_string_pretty(&v).unwrap_or_default())),
        });
    match answer {
        Ok(t) => {
            // each line escaped on its own: the line breaks are ours
            let safe: String = t
                .lines()
                .map(|l| format!("{}\n", faultline::report::terminal_safe(l)))
                .collect();
            print_stdout(safe.as_bytes())
        }
        Err(why) => {
            eprintln!("faultline: {}", faultline::report::terminal_safe(&why));
            ExitCode::from(2)
        }
    }
}
