//! The sections of the Markdown report after the incidents: suspect GPUs (identity, RMA
//! criteria, counters), the job, the inputs, and what to attach.

use super::cite;
use super::escape::{self, row, Md};
use crate::report::json::{EventJson, Report};
use crate::report::postmortem as pm;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Suspect GPUs: the identity vendors ask for, then per GPU the RMA criteria and the raised counters.
pub(super) fn suspect_gpus(m: Md, r: &Report, o: &mut String) {
    if r.incidents.is_empty() {
        return;
    }
    let _ = writeln!(o, "## Suspect GPUs\n");
    let suspects = pm::suspects(r);
    if suspects.is_empty() {
        let _ = writeln!(
            o,
            "None: no root cause names a GPU whose identity the inputs tell.\n"
        );
        return;
    }
    let head = [
        "host", "bus id", "UUID", "serial", "model", "VBIOS", "driver", "kernel",
    ];
    let _ = writeln!(o, "{}", escape::head(&head));
    for s in &suspects {
        let g = s.gpu;
        let c = |x: Option<&str>| x.map_or("-".into(), |x| m.code_cell(x));
        let cells = [
            m.text(g.host.as_deref().unwrap_or("-")),
            m.code_cell(&g.bus_id),
            c(g.uuid.as_deref()),
            c(g.serial.as_deref()),
            m.text(g.name.as_deref().unwrap_or("-")),
            c(g.vbios.as_deref()),
            c(s.driver),
            c(s.kernel),
        ];
        let _ = writeln!(o, "{}", row(&cells));
    }
    let _ = writeln!(o);
    for s in &suspects {
        let _ = writeln!(o, "### GPU {}\n", m.text(&s.name()));
        rma_criteria(m, s, o);
        counters(m, s, o);
    }
}

/// Whether a suspect GPU meets the RMA criteria, criterion by criterion.
fn rma_criteria(m: Md, s: &pm::Suspect, o: &mut String) {
    let _ = writeln!(
        o,
        "{}\n",
        if s.rma_met() {
            "**RMA criteria: met**"
        } else {
            "**RMA criteria: not met by these inputs** (run the field diagnostic before an RMA)"
        }
    );
    for c in &s.criteria {
        let _ = writeln!(
            o,
            "- {} — {}: {}",
            if c.met { "✔ met" } else { "✘ not met" },
            c.name,
            m.text(&c.why)
        );
    }
    let _ = writeln!(o);
}

/// A suspect GPU's raised counters as read (or why there are none).
fn counters(m: Md, s: &pm::Suspect, o: &mut String) {
    let g = s.gpu;
    if g.state.is_empty() {
        let _ = writeln!(
            o,
            "**Counters as read:** no nvidia-smi dump or bug report of this GPU in the inputs: attach `nvidia-smi -q` output.\n"
        );
        return;
    }
    if s.raised.is_empty() {
        let _ = writeln!(
            o,
            "**Counters as read:** none of {} raised (no errors, nothing pending, no slowdown active).\n",
            g.state.len()
        );
        return;
    }
    let _ = writeln!(
        o,
        "**Counters as read:** {} of {} raised (non-zero counts, `Yes`, `Active`; temperatures and histograms aside):\n",
        s.raised.len(),
        g.state.len()
    );
    let _ = writeln!(o, "| counter | value |\n|---|---|");
    for (k, v) in &s.raised {
        let _ = writeln!(o, "{}", row(&[m.text(k), m.code_cell(v)]));
    }
    let _ = writeln!(o);
}

/// The distributed job: size, missing and silent ranks, straggler, clock skew, work lost.
pub(super) fn job(m: Md, r: &Report, events: &BTreeMap<&str, &EventJson>, o: &mut String) {
    let Some(j) = pm::job(r, events) else { return };
    let _ = writeln!(o, "## Job\n");
    for (label, text, named) in j.rows() {
        let text = if named { m.text(&text) } else { text };
        let _ = writeln!(o, "- **{label}:** {text}");
    }
    if let Some(e) = j.last_checkpoint {
        let _ = writeln!(
            o,
            "- **Last checkpoint:** {} ({})",
            m.text(&pm::when(e)),
            cite(m, e)
        );
    }
    let _ = writeln!(o);
}

/// The inputs with their line accounting and warnings, the notes and the coverage gaps.
pub(super) fn inputs(m: Md, r: &Report, o: &mut String) {
    let _ = writeln!(o, "## Inputs\n");
    let head = [
        "path",
        "format",
        "host",
        "lines",
        "recognized",
        "events",
        "warnings",
    ];
    let _ = writeln!(o, "{}", escape::head(&head));
    for i in &r.inputs {
        let cells = [
            m.code_cell(&i.path),
            m.text(i.format),
            m.text(i.host.as_deref().unwrap_or("-")),
            i.lines.to_string(),
            i.lines_recognized.to_string(),
            i.events.to_string(),
            m.text(&i.warnings.join("; ")),
        ];
        let _ = writeln!(o, "{}", row(&cells));
    }
    let _ = writeln!(o);
    hosts(m, r, o);
    let _ = writeln!(o, "Accounting: {}\n", m.text(&r.accounting.summary));
    if let Some(f) = &r.accounting.filter {
        let _ = writeln!(o, "Filter: {}\n", m.text(&f.summary));
    }
    if !r.accounting.not_understood_examples.is_empty() {
        let _ = writeln!(o, "NVRM error lines not understood (first of them):\n");
        for ex in &r.accounting.not_understood_examples {
            let _ = writeln!(o, "- {}", m.code_cell(ex));
        }
        let _ = writeln!(o);
    }
    if !r.notes.is_empty() {
        let _ = writeln!(o, "**Notes:**\n");
        for n in &r.notes {
            let _ = writeln!(o, "- {}", m.text(n));
        }
        let _ = writeln!(o);
    }
    let gaps: Vec<&String> = r
        .hosts
        .iter()
        .flat_map(|h| h.coverage_gaps.iter())
        .collect();
    if !gaps.is_empty() {
        let _ = writeln!(o, "**Coverage gaps:**\n");
        for g in gaps {
            let _ = writeln!(o, "- {}", m.text(g));
        }
        let _ = writeln!(o);
    }
}

/// The hosts with their driver, kernel and GPU models.
fn hosts(m: Md, r: &Report, o: &mut String) {
    let hosts = pm::gpus::host_rows(r);
    if hosts.is_empty() {
        return;
    }
    let _ = writeln!(o, "Hosts:\n");
    let head = ["host", "driver", "kernel", "GPUs"];
    let _ = writeln!(o, "{}", escape::head(&head));
    for h in hosts {
        let cells = [
            m.text(&h.host),
            if h.driver == "-" {
                "-".into()
            } else {
                m.code_cell(&h.driver)
            },
            if h.kernel == "-" {
                "-".into()
            } else {
                m.code_cell(&h.kernel)
            },
            m.text(&h.models),
        ];
        let _ = writeln!(o, "{}", row(&cells));
    }
    let _ = writeln!(o);
}

/// What to attach to the ticket.
pub(super) fn attach(m: Md, r: &Report, o: &mut String) {
    let _ = writeln!(o, "## What to attach\n");
    for a in pm::attach(r) {
        let _ = writeln!(o, "- {}", a.sentence(|c| format!("`{c}`"), |t| m.text(t)));
    }
    let _ = writeln!(o);
}
