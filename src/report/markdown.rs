//! The Markdown post-mortem: fit to paste into a vendor or internal ticket. It says what the HTML
//! report says (both render [`super::postmortem`]), without the pictures: summary verdict, impact,
//! a timeline table with the first fault marked, each incident with its chain, verbatim evidence
//! (`path:line`), NVIDIA's resolution bucket, alternatives, missing data and actions, the measured
//! levels of a slowdown, each suspect GPU's identity, counters and RMA criteria, the job, the
//! inputs, and what to attach. The timeline table is in `timeline`, the sections after the
//! incidents in `sections`.
//!
//! Every text from the inputs is escaped (see [`escape`]); with `--redact` the report's values
//! were redacted before rendering (`crate::redact`), never the document.

pub mod escape;
mod sections;
mod timeline;

use super::json::{EventJson, IncidentJson, Report};
use super::postmortem::{self as pm, Role};
use crate::catalog::Catalog;
use crate::words::counted;
use escape::{row, Md};
use std::collections::BTreeMap;
use std::fmt::Write;

/// Most rows of the timeline table (evidence rows are kept past it; the JSON keeps all events).
pub const MAX_TABLE_ROWS: usize = 100;

/// Renders the Markdown report (of a report redacted beforehand with `--redact`).
pub fn render(r: &Report, catalog: &Catalog) -> String {
    let m = Md::new();
    let events = pm::index(r);
    let mut o = String::new();
    summary(m, r, &mut o);
    impact(m, r, &events, &mut o);
    timeline::timeline(m, r, &mut o);
    let _ = writeln!(o, "## Incidents\n");
    if r.incidents.is_empty() {
        let _ = writeln!(o, "None.\n");
    }
    for inc in &r.incidents {
        incident(m, r, inc, &events, catalog, &mut o);
    }
    o.push_str(&super::known::markdown(&r.known_issues, "##", &|s| {
        m.text(s)
    }));
    sections::suspect_gpus(m, r, &mut o);
    sections::job(m, r, &events, &mut o);
    sections::inputs(m, r, &mut o);
    sections::attach(m, r, &mut o);
    let _ = writeln!(
        o,
        "---\n\n*Written offline by faultline {} from the inputs listed above; times are UTC.*",
        m.text(r.tool.version)
    );
    o
}

/// A `path:line` citation as prose.
pub(super) fn cite(m: Md, e: &EventJson) -> String {
    format!("{}:{}", m.text(&e.source.path), e.source.line)
}

/// Title, verdict, confidence, first fault, and what the report covers.
fn summary(m: Md, r: &Report, o: &mut String) {
    let _ = writeln!(o, "# GPU incident report\n");
    let _ = writeln!(
        o,
        "**Verdict:** `{}` — {}\n",
        r.verdict.root_cause_layer,
        m.text(&r.verdict.summary)
    );
    if let Some(top) = pm::verdict_incident(r) {
        let rc = &top.root_cause;
        let _ = writeln!(
            o,
            "- **Confidence:** {:.2} · **who acts:** {} · **rule:** {}",
            rc.confidence,
            m.text(&rc.responsibility),
            m.text(&pm::rule(top))
        );
    }
    if let Some(e) = pm::first_fault(r) {
        // a snapshot taken after the incident began shows the state then, not the fault's start
        let (label, note) = match pm::marks::observed_at(r, &e.id).and_then(|i| i.start.as_deref())
        {
            Some(start) => (
                "State observed at",
                format!(
                    "; a snapshot taken after the incident began at {}",
                    m.text(&pm::pretty(start))
                ),
            ),
            None => ("Primary fault", String::new()),
        };
        let _ = writeln!(
            o,
            "- **{label}:** {} {} — {}{} ({}{note})",
            m.text(&pm::when(e)),
            m.text(&pm::what(e)),
            m.text(&e.title),
            m.text(&pm::place(e)),
            cite(m, e)
        );
    }
    let _ = writeln!(
        o,
        "- **Report:** faultline {} · {} · {} · {} · times are UTC\n",
        m.text(r.tool.version),
        counted(r.inputs.len() as u64, "input"),
        counted(r.events.len() as u64, "event"),
        counted(r.incidents.len() as u64, "incident")
    );
}

/// Impact: what was hit, for how long, who acts.
fn impact(m: Md, r: &Report, events: &BTreeMap<&str, &EventJson>, o: &mut String) {
    let _ = writeln!(o, "## Impact\n");
    let Some(im) = pm::impact(r, events) else {
        // the verdict's summary says whether nothing was found or nothing could be read
        let _ = writeln!(o, "None: no incident (the verdict says why).\n");
        return;
    };
    let counted = |v: &[String], none: &str| match v.len() {
        0 => none.to_string(),
        1 => m.text(&v[0]),
        n => format!("{n}: {}", m.text(&v.join(", "))),
    };
    let layers: Vec<String> = im
        .by_layer
        .iter()
        .map(|(l, n)| format!("`{l}` ×{n}"))
        .collect();
    let _ = writeln!(o, "- **Incidents:** {}", layers.join(", "));
    impact_window(m, &im, o);
    let _ = writeln!(
        o,
        "- **Hosts:** {}",
        counted(&im.hosts, "none named in the lines")
    );
    let _ = writeln!(
        o,
        "- **GPUs with faults:** {}",
        counted(&im.gpus, "none named")
    );
    let _ = writeln!(o, "- **Ranks:** {}", impact_ranks(m, &im));
    let _ = writeln!(o, "- **Jobs:** {}", impact_jobs(m, r, &im));
    let _ = writeln!(o, "- **Time lost:** {}", impact_lost(m, r, &im));
    let _ = writeln!(o, "- **Who acts:** {}\n", m.text(&pm::list(&im.who)));
}

/// The incidents' time (or window, with its length), when one has a wall time.
fn impact_window(m: Md, im: &pm::Impact, o: &mut String) {
    match im.window {
        Some((a, b)) if a == b => {
            let _ = writeln!(o, "- **Time (UTC):** {}", m.text(&pm::pretty(a)));
        }
        Some((a, b)) => {
            let _ = writeln!(
                o,
                "- **Window (UTC):** {} → {}{}",
                m.text(&pm::pretty(a)),
                m.text(&pm::pretty(b)),
                im.span_us()
                    .map(|us| format!(" ({})", pm::human_span(us)))
                    .unwrap_or_default()
            );
        }
        None => {}
    }
}

/// The ranks the incidents name, and the job's world size.
fn impact_ranks(m: Md, im: &pm::Impact) -> String {
    match (im.ranks.is_empty(), im.world_size) {
        (true, Some(w)) => format!("none named by the incidents (world size {w})"),
        (true, None) => "none named".to_string(),
        (false, w) => format!(
            "{}{}",
            m.text(&pm::ranks(&im.ranks)),
            w.map(|w| format!(" of a world of {w}")).unwrap_or_default()
        ),
    }
}

/// The scheduler jobs named, and the distributed job of the job logs.
fn impact_jobs(m: Md, r: &Report, im: &pm::Impact) -> String {
    let mut jobs: Vec<String> = im
        .jobs
        .iter()
        .map(|j| format!("job {}", m.text(j)))
        .collect();
    if let Some(j) = &r.job {
        jobs.push(format!(
            "one distributed job in the job logs ({} ranks seen)",
            j.ranks.len()
        ));
    }
    if jobs.is_empty() {
        "none named (no job or scheduler log among the inputs)".to_string()
    } else {
        jobs.join("; ")
    }
}

/// Work lost since the last checkpoint, and the training time each slowdown cost.
fn impact_lost(m: Md, r: &Report, im: &pm::Impact) -> String {
    let mut lost: Vec<String> = Vec::new();
    if let Some(w) = im.work_lost_s {
        lost.push(format!(
            "{} of work since the last checkpoint before the first fault",
            pm::human_span(w * 1_000_000)
        ));
    }
    for s in &im.slow {
        lost.push(format!(
            "≈ {} of training time in incident {}: a slow phase of {} at {:.0}% throughput{}",
            pm::human_span(s.lost_us),
            m.text(s.incident),
            pm::human_span(s.phase_us),
            s.ratio * 100.0,
            if s.ongoing {
                ", still slow at the end of the log"
            } else {
                ""
            }
        ));
    }
    if lost.is_empty() {
        lost.push(if r.job.is_some() {
            "unknown: no checkpoint line before the first fault".into()
        } else {
            "unknown: no job log among the inputs".into()
        });
    }
    lost.join("; ")
}

/// One incident: root cause, window, measured slowdown, chain, evidence, resolution bucket,
/// alternatives, missing data, what to do.
fn incident(
    m: Md,
    r: &Report,
    inc: &IncidentJson,
    events: &BTreeMap<&str, &EventJson>,
    catalog: &Catalog,
    o: &mut String,
) {
    let rc = &inc.root_cause;
    let _ = writeln!(
        o,
        "### Incident {} — `{}` · confidence {:.2} · who acts: {}\n",
        m.text(&inc.id),
        rc.layer,
        rc.confidence,
        m.text(&rc.responsibility)
    );
    let _ = writeln!(o, "**Root cause:** {}\n", m.text(&rc.summary));
    let _ = writeln!(o, "- **Kind:** {}", inc.kind);
    let _ = writeln!(o, "- **Window:** {}", m.text(&pm::window(inc, events)));
    let _ = writeln!(o, "- **Rule:** {}", m.text(&pm::rule(inc)));
    let _ = writeln!(o, "- **Hosts:** {}", m.text(&pm::list(&inc.hosts)));
    let _ = writeln!(o, "- **GPUs:** {}", m.text(&pm::list(&inc.gpus)));
    let _ = writeln!(o, "- **Ranks:** {}\n", m.text(&pm::ranks(&inc.ranks)));
    if let Some(sd) = &inc.slowdown {
        throughput(m, sd, o);
    }
    chain(m, r, inc, events, o);
    evidence(m, inc, events, catalog, o);
    o.push_str(&super::known::markdown(&inc.known_issues, "####", &|s| {
        m.text(s)
    }));
    alternatives(m, inc, o);
    missing_and_actions(m, inc, o);
}

/// The chain: the primary fault with what came before and with it, then what followed.
fn chain(
    m: Md,
    r: &Report,
    inc: &IncidentJson,
    events: &BTreeMap<&str, &EventJson>,
    o: &mut String,
) {
    let c = pm::chain(r, inc, events);
    let _ = writeln!(o, "#### Chain\n");
    for s in &c.steps {
        let e = s.event;
        let role = match s.role {
            Role::Primary if pm::marks::observed_later(r, inc, e) => {
                "**state observed at** (a snapshot taken after the incident began; the fault started earlier):"
            }
            Role::Primary => "**primary fault:**",
            Role::Before => "before it:",
            Role::With => "with it:",
        };
        let _ = writeln!(
            o,
            "1. {role} {} {} — {}{} ({}, {})",
            m.text(&pm::when(e)),
            m.text(&pm::what(e)),
            m.text(&e.title),
            m.text(&pm::place(e)),
            m.text(&e.id),
            cite(m, e)
        );
    }
    for f in &c.then {
        let _ = writeln!(
            o,
            "1. then: {} ×{}{}{}",
            m.text(f.kind),
            f.count,
            match &f.span {
                None => String::new(),
                Some((a, b)) if a == b => format!(" at {}", m.text(a)),
                Some((a, b)) => format!(" from {} to {}", m.text(a), m.text(b)),
            },
            if f.hosts == 0 {
                String::new()
            } else {
                format!(" on {}", counted(f.hosts as u64, "host"))
            }
        );
    }
}

/// The evidence verbatim with its places, and NVIDIA's resolution buckets for its codes.
fn evidence(
    m: Md,
    inc: &IncidentJson,
    events: &BTreeMap<&str, &EventJson>,
    catalog: &Catalog,
    o: &mut String,
) {
    let rc = &inc.root_cause;
    let _ = writeln!(o, "\n#### Evidence (verbatim, path:line)\n");
    let lines: Vec<String> = rc
        .evidence
        .iter()
        .filter_map(|id| events.get(id.as_str()))
        .map(|e| format!("{}:{}: {}", e.source.path, e.source.line, e.message))
        .collect();
    let _ = writeln!(o, "{}", m.code_block(&lines));
    let buckets = pm::resolution(inc, events, catalog);
    if !buckets.is_empty() {
        let _ = writeln!(o, "#### NVIDIA resolution bucket\n");
        for b in buckets {
            let _ = writeln!(o, "- {}", m.text(&b));
        }
        let _ = writeln!(o);
    }
}

/// The rules of other layers that fit, with their confidence.
fn alternatives(m: Md, inc: &IncidentJson, o: &mut String) {
    let _ = writeln!(o, "#### Alternatives\n");
    if inc.alternatives.is_empty() {
        let _ = writeln!(
            o,
            "No rule of another layer fits the events of this incident.\n"
        );
    } else {
        let _ = writeln!(o, "| layer | confidence | for it |\n|---|---|---|");
        for a in &inc.alternatives {
            let cells = [
                format!("`{}`", a.layer),
                format!("{:.2}", a.confidence),
                m.text(&a.summary),
            ];
            let _ = writeln!(o, "{}", row(&cells));
        }
        let _ = writeln!(o);
    }
}

/// The data that would settle it, and what to do.
fn missing_and_actions(m: Md, inc: &IncidentJson, o: &mut String) {
    if !inc.missing_data.is_empty() {
        let _ = writeln!(o, "#### Missing data that would settle it\n");
        for x in &inc.missing_data {
            let _ = writeln!(o, "- {}", m.text(x));
        }
        let _ = writeln!(o);
    }
    let _ = writeln!(o, "#### What to do\n");
    for a in &inc.actions {
        let _ = writeln!(o, "1. {}", m.text(a));
    }
    let _ = writeln!(o);
}

/// A measured level: whole numbers from 100 up, two decimals below.
fn level(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// The measured levels of a slowdown and a sparkline of the speed.
fn throughput(m: Md, sd: &super::json::SlowdownJson, o: &mut String) {
    let state = match (&sd.recovered_at, sd.ongoing) {
        (Some(t), _) => format!("recovered at {}", m.text(&pm::pretty(t))),
        (None, true) => "still slow at the end of the log".into(),
        (None, false) => "then the job stopped".into(),
    };
    let _ = writeln!(o, "#### Throughput\n");
    let _ = writeln!(
        o,
        "- **Series:** {} ({})",
        m.text(&sd.series),
        m.text(sd.metric)
    );
    let _ = writeln!(
        o,
        "- **Levels:** {} {unit} before, {} {unit} during the slowdown ({:.0}% of the earlier throughput)",
        level(sd.baseline),
        level(sd.degraded),
        sd.ratio * 100.0,
        unit = m.text(sd.unit)
    );
    let _ = writeln!(
        o,
        "- **Slow phase:** {} samples from {}{}, {state}",
        sd.samples,
        sd.start
            .as_deref()
            .map_or("an unknown time".into(), |t| m.text(&pm::pretty(t))),
        sd.start_iteration
            .map(|i| format!(" (iteration {i})"))
            .unwrap_or_default()
    );
    if !sd.pauses.is_empty() {
        let pauses: Vec<String> = sd
            .pauses
            .iter()
            .map(|(k, n)| format!("{} ×{n}", m.text(k)))
            .collect();
        let _ = writeln!(o, "- **Known pauses left out:** {}", pauses.join(", "));
    }
    let speeds = crate::throughput::speeds(sd.metric, sd.curve.iter().map(|p| p.1));
    let (line, marks) = crate::throughput::sparkline(&speeds, sd.curve_slow, 60);
    let _ = writeln!(o, "\nSpeed over the series (`^` marks the slow phase):\n");
    let _ = writeln!(
        o,
        "{}",
        m.code_block(&[format!("speed {line}"), format!("slow  {marks}")])
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::report::fixture::crowded;

    #[test]
    fn long_timelines_are_capped_with_the_first_fault_kept_and_marked() {
        let md = render(&crowded(), &Catalog::builtin());
        let rows: Vec<&str> = md
            .lines()
            .skip_while(|l| !l.starts_with("| mark |"))
            .skip(2)
            .take_while(|l| l.starts_with('|'))
            .collect();
        assert_eq!(rows.len(), MAX_TABLE_ROWS);
        assert!(
            rows[MAX_TABLE_ROWS - 1].starts_with("| **▶ first fault** (i1) | e3199 |"),
            "{}",
            rows[MAX_TABLE_ROWS - 1]
        );
        assert_eq!(md.matches("▶ first fault** (").count(), 1);
        assert!(md.contains("1600 of 3200 events are of severity warning or worse or cited as evidence; the first 100 are shown"));
    }
}
