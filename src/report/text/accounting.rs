//! The text report's last line: what was read, recognized, skipped and warned about.

use super::super::json::Report;
use super::t;
use std::fmt::Write;

/// `n thing` or `n things`.
fn count(n: u64, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The one accounting line: inputs, hosts, lines, events, what was skipped, warnings.
pub(super) fn accounting(o: &mut String, r: &Report, verbose: bool) {
    let a = &r.accounting;
    let mut hosts: std::collections::BTreeSet<&str> =
        r.inputs.iter().filter_map(|i| i.host.as_deref()).collect();
    hosts.extend(r.hosts.iter().map(|h| h.host.as_str()));
    let mut line = format!("Read {}", count(a.inputs as u64, "input", "inputs"));
    if !hosts.is_empty() {
        line.push_str(&format!(
            " from {}",
            count(hosts.len() as u64, "host", "hosts")
        ));
    }
    line.push_str(&format!(
        ": {} ({} recognized), {}",
        count(a.lines, "line", "lines"),
        a.lines_recognized,
        count(a.events, "event", "events")
    ));
    if a.skipped.is_empty() {
        line.push_str("; nothing skipped");
    } else {
        line.push_str(&format!("; skipped: {}", t(&a.skipped.join("; "))));
    }
    let warnings: usize = r.inputs.iter().map(|i| i.warnings.len()).sum();
    line.push_str(&match warnings {
        0 => "; no warnings".to_string(),
        n => format!("; {}", count(n as u64, "warning", "warnings")),
    });
    if !r.notes.is_empty() {
        line.push_str(&format!(
            ", {}",
            count(r.notes.len() as u64, "note", "notes")
        ));
    }
    if a.not_understood > 0 {
        line.push_str(&format!(
            "; {} driver error lines not understood",
            a.not_understood
        ));
    }
    line.push('.');
    if !verbose {
        line.push_str(" (-v: inputs and every event)");
    }
    let _ = writeln!(o, "{line}");
}
