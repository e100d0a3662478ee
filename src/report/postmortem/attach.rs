//! What to attach to a ticket so that a vendor engineer needs nothing else.

use crate::report::json::Report;
use std::collections::BTreeSet;

/// One thing to attach to the ticket.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Attach<'a> {
    /// The bug report of the host the lines came from, which no line names.
    BugReportOfUnnamedHost,
    /// The bug report of a host; `present` when one is already among the inputs.
    BugReport {
        /// The host.
        host: &'a str,
        /// Already among the inputs.
        present: bool,
    },
    /// The kernel log of a host of which the inputs hold none.
    KernelLog {
        /// The host.
        host: &'a str,
    },
    /// The fabric manager log (an interconnect incident).
    FabricManagerLog,
    /// Data an incident says is missing.
    Missing(String),
    /// This report and the JSON report of the same inputs.
    ThisReport,
}

impl Attach<'_> {
    /// The item as one sentence for a report: `code` marks a command or a file name (written by
    /// faultline), `text` escapes what came from the inputs (a host, a missing datum).
    pub fn sentence(&self, code: impl Fn(&str) -> String, text: impl Fn(&str) -> String) -> String {
        match self {
            Attach::BugReportOfUnnamedHost => format!(
                "{} of the host these lines came from (its name is in no line: pass {})",
                code("nvidia-bug-report.log.gz"),
                code("PATH@HOST")
            ),
            Attach::BugReport { host, present } => format!(
                "{} of {} ({}, before a reboot when possible){}",
                code("nvidia-bug-report.log.gz"),
                text(host),
                code("sudo nvidia-bug-report.sh"),
                if *present {
                    " — already among the inputs"
                } else {
                    ""
                }
            ),
            Attach::KernelLog { host } => format!(
                "the kernel log of {} for the incident window ({} of that boot, or {})",
                text(host),
                code("journalctl -k"),
                code("/var/log/kern.log")
            ),
            Attach::FabricManagerLog => format!(
                "the fabric manager log ({}) of the NVSwitch hosts",
                code("/var/log/fabricmanager.log")
            ),
            Attach::Missing(m) => text(m),
            Attach::ThisReport => format!(
                "this report, and the JSON report of the same inputs ({}) for tooling",
                code("faultline analyze --format json")
            ),
        }
    }
}

/// What to attach: per host of a primary fault (else of an incident's few hosts) the bug report
/// and, when the inputs hold none, the kernel log; the fabric manager log for interconnect
/// incidents; what the incidents say is missing; this report.
pub fn attach(r: &Report) -> Vec<Attach<'_>> {
    let mut hosts: BTreeSet<&str> = BTreeSet::new();
    let mut unnamed = false;
    for i in &r.incidents {
        let primary = i
            .root_cause
            .evidence
            .first()
            .and_then(|id| r.events.iter().find(|e| &e.id == id))
            .and_then(|e| e.host.as_deref());
        match primary {
            Some(h) => {
                hosts.insert(h);
            }
            None if i.hosts.is_empty() => unnamed = true,
            None if i.hosts.len() <= 8 => hosts.extend(i.hosts.iter().map(String::as_str)),
            None => {}
        }
    }
    let has = |h: &str, formats: &[&str]| {
        r.inputs
            .iter()
            .any(|i| i.host.as_deref() == Some(h) && formats.contains(&i.format))
    };
    let mut out = Vec::new();
    if unnamed {
        out.push(Attach::BugReportOfUnnamedHost);
    }
    for h in hosts {
        out.push(Attach::BugReport {
            host: h,
            present: has(h, &["bug_report"]),
        });
        if !has(
            h,
            &["dmesg", "syslog", "journal", "journal_json", "bug_report"],
        ) {
            out.push(Attach::KernelLog { host: h });
        }
    }
    if r.incidents
        .iter()
        .any(|i| i.root_cause.layer == "interconnect")
    {
        out.push(Attach::FabricManagerLog);
    }
    out.extend(
        super::union(r.incidents.iter().flat_map(|i| i.missing_data.iter()))
            .into_iter()
            .map(Attach::Missing),
    );
    out.push(Attach::ThisReport);
    out
}
