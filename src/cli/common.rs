//! What the subcommands share: zones, --fail-on layers, the knowledge with --rules files.

use faultline::Knowledge;
use std::process::ExitCode;

pub(super) fn parse_tz(s: &str) -> Option<i32> {
    match s {
        "UTC" | "utc" | "Z" | "GMT" => Some(0),
        _ => faultline::formats::time::zone(s.as_bytes())
            .filter(|(_, n)| *n == s.len())
            .map(|(o, _)| o),
    }
}

/// The layers of `--fail-on`; an unknown name is a usage error (exit 2).
pub(super) fn parse_fail_on(names: &[String]) -> Result<Vec<faultline::model::Layer>, ExitCode> {
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
pub(super) fn load_knowledge(files: &[String]) -> Result<Knowledge, ExitCode> {
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
