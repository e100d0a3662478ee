//! The Markdown post-mortem: fit to paste into a vendor or internal ticket.

use super::json::Report;
use std::fmt::Write;

fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// Renders the Markdown report.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    let _ = writeln!(o, "# GPU incident report");
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "**Verdict:** `{}` — {}",
        r.verdict.root_cause_layer, r.verdict.summary
    );
    let _ = writeln!(o);
    for inc in &r.incidents {
        let _ = writeln!(o, "## Incident {} — {}", inc.id, inc.root_cause.layer);
        let _ = writeln!(o);
        let _ = writeln!(o, "- **Summary:** {}", inc.root_cause.summary);
        let _ = writeln!(
            o,
            "- **Confidence:** {:.2}; **who acts:** {}",
            inc.root_cause.confidence, inc.root_cause.responsibility
        );
        let _ = writeln!(
            o,
            "- **Window:** {} → {}",
            inc.start.as_deref().unwrap_or("unknown"),
            inc.end.as_deref().unwrap_or("unknown")
        );
        let _ = writeln!(
            o,
            "- **Impact:** hosts {}; GPUs {}; ranks {}",
            list(&inc.hosts),
            list(&inc.gpus),
            if inc.ranks.is_empty() {
                "-".into()
            } else {
                inc.ranks
                    .iter()
                    .map(|r| r.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        );
        for a in &inc.alternatives {
            let _ = writeln!(
                o,
                "- **Alternative:** `{}` ({:.2}) {}",
                a.layer, a.confidence, a.summary
            );
        }
        for m in &inc.missing_data {
            let _ = writeln!(o, "- **Missing data:** {m}");
        }
        let _ = writeln!(o);
        let _ = writeln!(o, "### Evidence");
        let _ = writeln!(o);
        let _ = writeln!(o, "```");
        for id in &inc.root_cause.evidence {
            if let Some(e) = r.events.iter().find(|e| &e.id == id) {
                let _ = writeln!(o, "{}:{}: {}", e.source.path, e.source.line, e.message);
            }
        }
        let _ = writeln!(o, "```");
        let _ = writeln!(o);
        let _ = writeln!(o, "### What to do");
        let _ = writeln!(o);
        for a in &inc.actions {
            let _ = writeln!(o, "1. {a}");
        }
        let _ = writeln!(o);
    }
    let suspects: Vec<_> = r.gpus.iter().filter(|g| g.suspect).collect();
    if !suspects.is_empty() {
        let _ = writeln!(o, "## Suspect GPUs");
        let _ = writeln!(o);
        let _ = writeln!(o, "| host | bus id | UUID | serial | model | VBIOS |");
        let _ = writeln!(o, "|---|---|---|---|---|---|");
        for g in suspects {
            let f = |x: &Option<String>| cell(x.as_deref().unwrap_or("-"));
            let _ = writeln!(
                o,
                "| {} | {} | {} | {} | {} | {} |",
                f(&g.host),
                g.bus_id,
                f(&g.uuid),
                f(&g.serial),
                f(&g.name),
                f(&g.vbios)
            );
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "## Timeline");
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "| id | time (UTC) | quality | host | GPU | event | evidence |"
    );
    let _ = writeln!(o, "|---|---|---|---|---|---|---|");
    for e in r.events.iter().filter(|e| e.severity != "info").take(200) {
        let what = e
            .code
            .map_or_else(|| e.kind.clone(), |c| format!("{} {c}", e.kind));
        let _ = writeln!(
            o,
            "| {} | {} | {} | {} | {} | {} — {} | `{}:{}` |",
            e.id,
            e.time.as_deref().unwrap_or("-"),
            e.time_quality,
            cell(e.host.as_deref().unwrap_or("-")),
            cell(e.gpu.as_deref().unwrap_or("-")),
            what,
            cell(&e.title),
            cell(&e.source.path),
            e.source.line
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "## Inputs");
    let _ = writeln!(o);
    for i in &r.inputs {
        let _ = writeln!(
            o,
            "- `{}` ({}, {} lines, {} recognized, {} events){}",
            i.path,
            i.format,
            i.lines,
            i.lines_recognized,
            i.events,
            if i.warnings.is_empty() {
                String::new()
            } else {
                format!(" — warnings: {}", i.warnings.join("; "))
            }
        );
    }
    let _ = writeln!(o);
    let _ = writeln!(o, "Accounting: {}", r.accounting.summary);
    let _ = writeln!(o);
    let _ = writeln!(
        o,
        "Attach `nvidia-bug-report.log.gz` from each affected host to the ticket."
    );
    o
}

fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.join(", ")
    }
}
