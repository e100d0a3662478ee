//! The post-mortem sections of the HTML report that a vendor ticket needs beside the incidents:
//! impact, the chain of each incident, suspect GPU identity with counters and RMA criteria, the
//! job, the inputs and what to attach. The facts come from [`crate::report::postmortem`], which
//! the Markdown report renders too; this module only writes them as HTML.

use super::{badge, Page};
use crate::report::json::{EventJson, IncidentJson, Report};
use crate::report::postmortem::{self as pm, Role};
use crate::words::counted;
use std::collections::BTreeMap;
use std::fmt::Write;

/// Impact: what was hit, for how long, who acts.
pub(super) fn impact(p: &Page, r: &Report, events: &BTreeMap<&str, &EventJson>, o: &mut String) {
    let _ = writeln!(o, r#"<section id="impact"><h2>Impact</h2>"#);
    let Some(im) = pm::impact(r, events) else {
        // the verdict's summary says whether nothing was found or nothing could be read
        let _ = writeln!(o, "<p>{}</p>", p.t(&r.verdict.summary));
        let _ = writeln!(o, "</section>");
        return;
    };
    let _ = writeln!(o, r#"<dl class="kv">"#);
    let _ = writeln!(
        o,
        "<dt>Incidents</dt><dd>{}</dd>",
        im.by_layer
            .iter()
            .map(|(l, n)| format!("{}×{n}", badge(p, l)))
            .collect::<Vec<_>>()
            .join(" ")
    );
    if let Some((a, b)) = im.window {
        let _ = writeln!(
            o,
            "<dt>Window (UTC)</dt><dd>{} → {}</dd>",
            p.t(&pm::pretty(a)),
            p.t(&pm::pretty(b))
        );
    }
    let counted = |v: &[String], none: &str| match v.len() {
        0 => none.to_string(),
        1 => v[0].clone(),
        n => format!("{n}: {}", v.join(", ")),
    };
    let _ = writeln!(
        o,
        "<dt>Hosts</dt><dd>{}</dd>",
        p.t(&counted(&im.hosts, "none named in the lines"))
    );
    let _ = writeln!(
        o,
        "<dt>GPUs with faults</dt><dd>{}</dd>",
        p.t(&counted(&im.gpus, "none named"))
    );
    let world = im
        .world_size
        .map(|w| format!(" of a world of {w}"))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "<dt>Ranks</dt><dd>{}{}</dd>",
        p.t(&pm::ranks(&im.ranks)),
        world
    );
    impact_lost(p, &im, o);
    let _ = writeln!(o, "<dt>Who acts</dt><dd>{}</dd>", p.t(&pm::list(&im.who)));
    let _ = writeln!(o, "</dl>\n</section>");
}

/// The scheduler jobs hit, and the work and training time lost.
fn impact_lost(p: &Page, im: &pm::Impact, o: &mut String) {
    if !im.jobs.is_empty() {
        let _ = writeln!(
            o,
            "<dt>Scheduler jobs</dt><dd>{}</dd>",
            p.t(&im.jobs.join(", "))
        );
    }
    if let Some(w) = im.work_lost_s {
        let _ = writeln!(
            o,
            "<dt>Work lost</dt><dd>{} since the last checkpoint before the first fault</dd>",
            pm::human_span(w * 1_000_000)
        );
    }
    for s in &im.slow {
        let _ = writeln!(
            o,
            "<dt>Training time lost</dt><dd>≈ {} in incident {}: a slow phase of {} at {:.0}% throughput{}</dd>",
            pm::human_span(s.lost_us),
            p.t(s.incident),
            pm::human_span(s.phase_us),
            s.ratio * 100.0,
            if s.ongoing {
                ", still slow at the end of the log"
            } else {
                ""
            }
        );
    }
}

/// The chain in time order: what came before the primary fault, the primary fault, what came
/// with it, then what followed (the consequences, by kind).
pub(super) fn chain(
    p: &Page,
    r: &Report,
    inc: &IncidentJson,
    events: &BTreeMap<&str, &EventJson>,
    o: &mut String,
) {
    let c = pm::chain(r, inc, events);
    let _ = writeln!(o, "<h4>Chain</h4>\n<ol>");
    for s in &c.steps {
        let e = s.event;
        let role = match s.role {
            Role::Primary if pm::marks::observed_later(r, inc, e) => {
                "<strong>state observed at</strong> (a snapshot taken after the incident began; the fault started earlier):"
            }
            Role::Primary => "<strong>primary fault:</strong>",
            Role::Before => "before it:",
            Role::With => "with it:",
        };
        let _ = writeln!(
            o,
            "<li>{role} {} {} — {}{}</li>",
            p.event_link(&e.id, &p.t(&pm::when(e))),
            p.t(&pm::what(e)),
            p.t(&e.title),
            p.t(&pm::place(e))
        );
    }
    for f in &c.then {
        let _ = writeln!(
            o,
            "<li>then: {} ×{}{}{}</li>",
            p.t(f.kind),
            f.count,
            match &f.span {
                None => String::new(),
                Some((a, b)) if a == b => format!(" at {}", p.t(a)),
                Some((a, b)) => format!(" from {} to {}", p.t(a), p.t(b)),
            },
            if f.hosts == 0 {
                String::new()
            } else {
                format!(" on {}", counted(f.hosts as u64, "host"))
            }
        );
    }
    let _ = writeln!(o, "</ol>");
}

/// Suspect GPUs: the identity vendors ask for, counters as read, RMA criteria.
pub(super) fn suspect_gpus(p: &Page, r: &Report, o: &mut String) {
    let suspects = pm::suspects(r);
    if suspects.is_empty() {
        return;
    }
    let _ = writeln!(o, r#"<section id="gpus"><h2>Suspect GPUs</h2>"#);
    let _ = writeln!(
        o,
        "<table><tr><th>host</th><th>bus id</th><th>UUID</th><th>serial</th><th>model</th><th>VBIOS</th><th>driver</th><th>kernel</th></tr>"
    );
    for s in &suspects {
        let g = s.gpu;
        let f = |x: Option<&str>| p.t(x.unwrap_or("-"));
        let _ = writeln!(
            o,
            r#"<tr><td>{}</td><td class="mono">{}</td><td class="mono">{}</td><td class="mono">{}</td><td>{}</td><td class="mono">{}</td><td class="mono">{}</td><td class="mono">{}</td></tr>"#,
            f(g.host.as_deref()),
            p.t(&g.bus_id),
            f(g.uuid.as_deref()),
            f(g.serial.as_deref()),
            f(g.name.as_deref()),
            f(g.vbios.as_deref()),
            f(s.driver),
            f(s.kernel),
        );
    }
    let _ = writeln!(o, "</table>");
    for s in &suspects {
        let _ = writeln!(o, "<h3>{}</h3>", p.t(&s.name()));
        rma_criteria(p, s, o);
        counters(p, s, o);
    }
    let _ = writeln!(o, "</section>");
}

/// Whether a suspect GPU meets the RMA criteria, criterion by criterion.
fn rma_criteria(p: &Page, s: &pm::Suspect, o: &mut String) {
    let _ = writeln!(
        o,
        "<h4>RMA criteria: {}</h4>\n<ul>",
        if s.rma_met() {
            r#"<span class="met">met</span>"#
        } else {
            r#"<span class="notmet">not met by these inputs</span> (run the field diagnostic before an RMA)"#
        }
    );
    for c in &s.criteria {
        let _ = writeln!(
            o,
            r#"<li><span class="{}">{}</span> {}: {}</li>"#,
            if c.met { "met" } else { "notmet" },
            if c.met { "✔ met" } else { "✘ not met" },
            c.name,
            p.t(&c.why)
        );
    }
    let _ = writeln!(o, "</ul>");
}

/// A suspect GPU's counters as read: the raised ones, then all of them folded.
fn counters(p: &Page, s: &pm::Suspect, o: &mut String) {
    let g = s.gpu;
    let _ = writeln!(o, "<h4>Counters as read</h4>");
    if g.state.is_empty() {
        let _ = writeln!(
            o,
            r#"<p class="unknown">No nvidia-smi dump or bug report of this GPU in the inputs: attach <code>nvidia-smi -q</code> output.</p>"#
        );
        return;
    }
    if s.raised.is_empty() {
        let _ = writeln!(
            o,
            "<p>No counter is raised (no errors, nothing pending, no slowdown active).</p>"
        );
    } else {
        let _ = writeln!(o, "<table><tr><th>counter</th><th>value</th></tr>");
        counter_rows(p, s.raised.iter().copied(), o);
        let _ = writeln!(o, "</table>");
    }
    let _ = writeln!(
        o,
        "<details><summary>All {} counters</summary><table><tr><th>counter</th><th>value</th></tr>",
        g.state.len()
    );
    counter_rows(p, g.state.iter().map(|(k, v)| (k.as_str(), v.as_str())), o);
    let _ = writeln!(o, "</table></details>");
}

fn counter_rows<'a>(p: &Page, rows: impl Iterator<Item = (&'a str, &'a str)>, o: &mut String) {
    for (k, v) in rows {
        let _ = writeln!(
            o,
            r#"<tr><td>{}</td><td class="mono">{}</td></tr>"#,
            p.t(k),
            p.t(v)
        );
    }
}

/// The distributed job: size, missing and silent ranks, straggler, clock skew, work lost.
pub(super) fn job(p: &Page, r: &Report, events: &BTreeMap<&str, &EventJson>, o: &mut String) {
    let Some(j) = pm::job(r, events) else { return };
    let _ = writeln!(o, r#"<section id="job"><h2>Job</h2><dl class="kv">"#);
    for (label, text, named) in j.rows() {
        let text = if named { p.t(&text) } else { text };
        let _ = writeln!(o, "<dt>{label}</dt><dd>{text}</dd>");
    }
    if let Some(e) = j.last_checkpoint {
        let _ = writeln!(
            o,
            "<dt>Last checkpoint</dt><dd>{} {}:{}</dd>",
            p.event_link(&e.id, &p.t(&pm::when(e))),
            p.t(&e.source.path),
            e.source.line
        );
    }
    let _ = writeln!(o, "</dl></section>");
}

/// The inputs with their line accounting and warnings, and the clock notes.
pub(super) fn inputs(p: &Page, r: &Report, o: &mut String) {
    let _ = writeln!(
        o,
        r#"<section id="inputs"><h2>Inputs</h2>
<table><tr><th>path</th><th>format</th><th>host</th><th>lines</th><th>recognized</th><th>events</th><th>warnings</th></tr>"#
    );
    for i in &r.inputs {
        let _ = writeln!(
            o,
            r#"<tr><td class="mono">{}</td><td>{}</td><td>{}</td><td class="num">{}</td><td class="num">{}</td><td class="num">{}</td><td>{}</td></tr>"#,
            p.t(&i.path),
            p.t(i.format),
            p.t(i.host.as_deref().unwrap_or("-")),
            i.lines,
            i.lines_recognized,
            i.events,
            p.t(&i.warnings.join("; "))
        );
    }
    let _ = writeln!(o, "</table>");
    let hosts = pm::gpus::host_rows(r);
    if !hosts.is_empty() {
        let _ = writeln!(
            o,
            "<h3>Hosts</h3>\n<table><tr><th>host</th><th>driver</th><th>kernel</th><th>GPUs</th></tr>"
        );
        for h in hosts {
            let _ = writeln!(
                o,
                r#"<tr><td class="nw">{}</td><td class="mono">{}</td><td class="mono">{}</td><td>{}</td></tr>"#,
                p.t(&h.host),
                p.t(&h.driver),
                p.t(&h.kernel),
                p.t(&h.models)
            );
        }
        let _ = writeln!(o, "</table>");
    }
    if !r.notes.is_empty() {
        let _ = writeln!(o, "<h3>Notes</h3>\n<ul>");
        for n in &r.notes {
            let _ = writeln!(o, "<li>{}</li>", p.t(n));
        }
        let _ = writeln!(o, "</ul>");
    }
    let gaps: Vec<&String> = r
        .hosts
        .iter()
        .flat_map(|h| h.coverage_gaps.iter())
        .collect();
    if !gaps.is_empty() {
        let _ = writeln!(o, "<h3>Coverage gaps</h3>\n<ul>");
        for g in gaps {
            let _ = writeln!(o, "<li>{}</li>", p.t(g));
        }
        let _ = writeln!(o, "</ul>");
    }
    let _ = writeln!(o, "</section>");
}

/// What to attach to the ticket.
pub(super) fn attach(p: &Page, r: &Report, o: &mut String) {
    let _ = writeln!(
        o,
        r#"<section id="attach"><h2>What to attach</h2>
<ul>"#
    );
    for a in pm::attach(r) {
        let sentence = a.sentence(|c| format!("<code>{c}</code>"), |t| p.t(t));
        let _ = writeln!(o, "<li>{sentence}</li>");
    }
    let _ = writeln!(o, "</ul>\n</section>");
}
