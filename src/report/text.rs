//! The terminal report, in the order a person reads it: the verdict; each incident with its
//! summary, its chain (the primary fault, what came with it, and the consequences folded as one
//! row per kind), the evidence lines verbatim with `path:line`, who acts and what to do; the job
//! and the suspect GPUs; then one accounting line. `-v` adds the inputs table and every event;
//! `faultline timeline` is the full event list on its own ([`render_timeline`]).

use super::json::{EventJson, IncidentJson, Report};
use super::postmortem::{self as pm, Role};
// every string that comes from an input goes through `t` (terminal_safe) before it is written
use super::terminal_safe as t;
use crate::words::counted;
use std::collections::BTreeMap;
use std::fmt::Write;

mod accounting;
use accounting::accounting;

/// Evidence lines shown per incident (the JSON keeps all).
pub const MAX_EVIDENCE: usize = 8;
/// Chain rows shown per incident before the consequences.
const MAX_CHAIN: usize = 6;
/// Host names listed in an incident's scope before `+N more`.
const MAX_HOSTS: usize = 4;

/// A row's time: `2025-03-14 02:13:07.000` (milliseconds), or `(no time)`.
fn short_time(t: &Option<String>) -> String {
    t.as_deref().map_or_else(
        || "(no time)".to_string(),
        |s| {
            s.replace('T', " ")
                .trim_end_matches('Z')
                .chars()
                .take(23)
                .collect()
        },
    )
}

/// Wall time, or kernel uptime when that is all there is, or a time of day nothing dated.
fn event_time(e: &EventJson) -> String {
    match (&e.time, e.uptime_s) {
        (None, Some(u)) => format!("uptime {u:.6}s"),
        (None, None) => {
            crate::report::json::undated_time_text(e).unwrap_or_else(|| short_time(&None))
        }
        (t, _) => short_time(t),
    }
}

/// Renders the report for a terminal: the short form (`verbose` false) fits one screen for a
/// typical incident; `verbose` adds the inputs table and the full event list.
pub fn render_with(r: &Report, verbose: bool) -> String {
    let mut o = String::new();
    verdict(&mut o, r);
    if r.incidents.is_empty() {
        let _ = writeln!(o, "No incident.\n");
    }
    let events = pm::index(r);
    // the incident that gives the verdict first, then the others in time order
    let top = pm::verdict_incident(r).map(|i| i.id.as_str());
    let first = r.incidents.iter().filter(|i| Some(i.id.as_str()) == top);
    let rest = r.incidents.iter().filter(|i| Some(i.id.as_str()) != top);
    for inc in first.chain(rest) {
        incident(&mut o, r, inc, &events, verbose);
    }
    if !r.known_issues.is_empty() {
        let _ = writeln!(o, "Outside the incidents:");
        o.push_str(&super::known::text(&r.known_issues, "  ", &|s| {
            t(s).into_owned()
        }));
        let _ = writeln!(o);
    }
    if let Some(j) = &r.job {
        job(&mut o, j);
    }
    gpus(&mut o, r, verbose);
    if verbose {
        inputs(&mut o, r);
        timeline(&mut o, r);
    }
    accounting(&mut o, r, verbose);
    o
}

/// [`render_with`], short form.
pub fn render(r: &Report) -> String {
    render_with(r, false)
}

/// The verdict line and its summary.
fn verdict(o: &mut String, r: &Report) {
    let _ = writeln!(
        o,
        "faultline {} — verdict: {}",
        r.tool.version,
        r.verdict.root_cause_layer.to_uppercase()
    );
    let _ = writeln!(o, "{}", t(&r.verdict.summary));
    leads(o, r);
    if let Some(f) = &r.accounting.filter {
        let _ = writeln!(o, "filter: {}", t(&f.summary));
    }
    let _ = writeln!(o);
}

/// The error lines no recognizer read (leads), each `path:line` and the line.
fn leads(o: &mut String, r: &Report) {
    let Some(total) = r.verdict.leads_total else {
        return;
    };
    let shown = r.verdict.leads.len() as u64;
    let _ = writeln!(
        o,
        "leads: {} no recognizer read{}:",
        counted(total, "error line"),
        if shown < total {
            format!(" ({shown} shown: the first and the last of each input)")
        } else {
            String::new()
        }
    );
    for l in &r.verdict.leads {
        let _ = writeln!(o, "  {}  {}", t(&l.source), t(l.line.trim()));
    }
}

/// `text` with a leading `date ` removed when it is `date`: times inside an incident are shown
/// as times of day when they fall on the day its window starts.
fn on_day<'a>(text: &'a str, date: &str) -> &'a str {
    if date.is_empty() {
        return text;
    }
    text.strip_prefix(date)
        .and_then(|rest| rest.strip_prefix(' '))
        .unwrap_or(text)
}

/// The calendar date an incident starts on (`2025-03-14`), or empty without a wall time.
fn start_date(inc: &IncidentJson) -> String {
    inc.start
        .as_deref()
        .and_then(|s| s.get(..10))
        .unwrap_or_default()
        .to_string()
}

/// One incident: header, summary, scope, chain, evidence, alternatives, what to do.
fn incident(
    o: &mut String,
    r: &Report,
    inc: &IncidentJson,
    events: &BTreeMap<&str, &EventJson>,
    verbose: bool,
) {
    let date = start_date(inc);
    let window = pm::window(inc, events);
    let (from, to) = window.split_once(" → ").unwrap_or((&window, ""));
    let window = if to.is_empty() {
        from.to_string()
    } else {
        format!("{from} → {}", on_day(to, &date))
    };
    let _ = writeln!(
        o,
        "Incident {}  layer {}  confidence {:.2}  {}",
        inc.id, inc.root_cause.layer, inc.root_cause.confidence, window
    );
    let summary = &inc.root_cause.summary;
    // the consequences the summary lists are the chain's last rows
    let summary = match summary.rsplit_once("; followed by ") {
        Some((head, _)) if !inc.consequences.is_empty() => head,
        _ => summary,
    };
    let _ = writeln!(o, "  {}", t(summary));
    if let Some(sd) = &inc.slowdown {
        slowdown_lines(o, sd);
    }
    scope(o, inc);
    chain(o, r, inc, events, &date);
    evidence(o, inc, events, verbose);
    o.push_str(&super::known::text(&inc.known_issues, "  ", &|s| {
        t(s).into_owned()
    }));
    for a in &inc.alternatives {
        let _ = writeln!(
            o,
            "  or {} ({:.2}): {}",
            a.layer,
            a.confidence,
            t(&a.summary)
        );
    }
    for m in &inc.missing_data {
        let _ = writeln!(o, "  would settle it: {}", t(m));
    }
    let _ = writeln!(o, "  what to do ({} acts):", inc.root_cause.responsibility);
    for a in &inc.actions {
        let _ = writeln!(o, "    - {}", t(a));
    }
    let _ = writeln!(o);
}

/// Hosts, GPUs and ranks of an incident, on one line; nothing when none is known.
fn scope(o: &mut String, inc: &IncidentJson) {
    let mut parts: Vec<String> = Vec::new();
    match inc.hosts.len() {
        0 => {}
        1 => parts.push(format!("host {}", t(&inc.hosts[0]))),
        n => {
            let shown: Vec<String> = inc
                .hosts
                .iter()
                .take(MAX_HOSTS)
                .map(|h| t(h).into_owned())
                .collect();
            let more = if n > MAX_HOSTS {
                format!(" +{} more", n - MAX_HOSTS)
            } else {
                String::new()
            };
            parts.push(format!("{n} hosts ({}{more})", shown.join(", ")));
        }
    }
    match inc.gpus.len() {
        0 => {}
        1 => parts.push(format!("GPU {}", t(&inc.gpus[0]))),
        n => parts.push(format!("{n} GPUs ({})", t(&inc.gpus.join(", ")))),
    }
    if !inc.ranks.is_empty() {
        parts.push(format!("ranks {}", pm::ranks(&inc.ranks)));
    }
    if !parts.is_empty() {
        let _ = writeln!(o, "  {}", parts.join("; "));
    }
}

/// A chain row's role.
fn role_text(r: &Report, inc: &IncidentJson, s: &pm::Step) -> &'static str {
    match s.role {
        Role::Primary if pm::marks::observed_later(r, inc, s.event) => "observed",
        Role::Primary => "primary",
        Role::Before => "before",
        Role::With => "with it",
    }
}

/// The chain: evidence steps (consecutive steps of one role and kind folded), then one row per
/// kind of consequence: `then  nccl_timeout ×63 on 8 hosts, 02:23:07–02:23:12`.
fn chain(
    o: &mut String,
    r: &Report,
    inc: &IncidentJson,
    events: &BTreeMap<&str, &EventJson>,
    date: &str,
) {
    let c = pm::chain(r, inc, events);
    if c.steps.is_empty() && c.then.is_empty() {
        return;
    }
    let _ = writeln!(o, "  chain:");
    let mut groups: Vec<(&'static str, Vec<&EventJson>)> = Vec::new();
    for s in &c.steps {
        let role = role_text(r, inc, s);
        match groups.last_mut() {
            Some((g, v))
                if *g == role
                    && role != "primary"
                    && v[0].kind == s.event.kind
                    && v[0].code == s.event.code
                    && v[0].title == s.event.title =>
            {
                v.push(s.event)
            }
            _ => groups.push((role, vec![s.event])),
        }
    }
    let shown = groups.len().min(MAX_CHAIN);
    for (role, v) in &groups[..shown] {
        chain_row(o, role, v, date);
    }
    if groups.len() > shown {
        let _ = writeln!(o, "    … {} more evidence rows", groups.len() - shown);
    }
    for f in &c.then {
        let span = match &f.span {
            None => String::new(),
            Some((a, b)) if a == b => format!(", {}", t(on_day(a, date))),
            Some((a, b)) => format!(", {}", t(&span(on_day(a, date), on_day(b, date)))),
        };
        let hosts = match f.hosts {
            0 => String::new(),
            1 => " on 1 host".to_string(),
            n => format!(" on {n} hosts"),
        };
        let _ = writeln!(o, "    then     {} ×{}{hosts}{span}", t(f.kind), f.count);
    }
}

/// `a–b`; two kernel uptimes as one range: `uptime 12.5–13.0 s`.
fn span(a: &str, b: &str) -> String {
    match (
        a.strip_suffix(" s"),
        b.strip_prefix("uptime ")
            .filter(|_| a.starts_with("uptime ")),
    ) {
        (Some(a), Some(b)) => format!("{a}–{b}"),
        _ => format!("{a}–{b}"),
    }
}

/// One folded chain row: `e66  primary  02:13:07  xid 79  GPU has fallen off the bus on …`.
fn chain_row(o: &mut String, role: &str, v: &[&EventJson], date: &str) {
    let e = v[0];
    let first = pm::when(e);
    let when = if v.len() == 1 {
        on_day(&first, date).to_string()
    } else {
        span(
            on_day(&first, date),
            on_day(&pm::when(v[v.len() - 1]), date),
        )
    };
    let count = if v.len() > 1 {
        format!(" ×{}", v.len())
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        "    {:<4} {:<8} {}  {}{count}  {}{}",
        e.id,
        role,
        t(&when),
        t(&pm::what(e)),
        t(&e.title),
        t(&pm::place(e))
    );
}

/// The evidence lines verbatim (the first line of each), at most [`MAX_EVIDENCE`] unless
/// `verbose`.
fn evidence(
    o: &mut String,
    inc: &IncidentJson,
    events: &BTreeMap<&str, &EventJson>,
    verbose: bool,
) {
    let ev: Vec<&EventJson> = inc
        .root_cause
        .evidence
        .iter()
        .filter_map(|id| events.get(id.as_str()).copied())
        .collect();
    if ev.is_empty() {
        return;
    }
    let _ = writeln!(o, "  evidence:");
    let cap = if verbose { ev.len() } else { MAX_EVIDENCE };
    for e in ev.iter().take(cap) {
        let first = e.message.lines().next().unwrap_or("");
        let _ = writeln!(
            o,
            "    {}:{}  {}",
            t(&e.source.path),
            e.source.line,
            t(&first.chars().take(200).collect::<String>())
        );
    }
    if ev.len() > cap {
        let _ = writeln!(o, "    … {} more (-v shows all)", ev.len() - cap);
    }
}

/// The job: world size, ranks, straggler, silent ranks, clock skew.
fn job(o: &mut String, j: &super::json::JobJson) {
    let hosts: std::collections::BTreeSet<&str> =
        j.ranks.iter().filter_map(|x| x.host.as_deref()).collect();
    let mut head = match j.world_size {
        Some(w) => format!("Job: world size {w}, {} ranks seen", j.ranks.len()),
        None => format!("Job: {} ranks seen", j.ranks.len()),
    };
    match hosts.len() {
        0 => {}
        1 => head.push_str(" on 1 host"),
        n => head.push_str(&format!(" on {n} hosts")),
    }
    if !j.missing_ranks.is_empty() {
        head.push_str(&format!(", {} ranks never named", j.missing_ranks.len()));
    }
    if let Some(w) = j.work_lost_s {
        head.push_str(&format!(
            ", work lost since the last checkpoint: {}",
            pm::human_span(w.saturating_mul(1_000_000))
        ));
    }
    let _ = writeln!(o, "{head}");
    if let Some((rank, c)) = j.straggler {
        let _ = writeln!(
            o,
            "  straggler: rank {rank} (last completed collective {c})"
        );
    }
    if !j.silent_ranks.is_empty() {
        let list: Vec<String> = j.silent_ranks.iter().map(|x| x.to_string()).collect();
        let _ = writeln!(o, "  ranks without a timeout: {}", list.join(", "));
    }
    let skews: Vec<String> = j
        .skew_s
        .iter()
        .filter(|(_, v)| v.abs() >= 1.0)
        .map(|(h, v)| format!("{} {v:+.1}s", t(h)))
        .collect();
    if !skews.is_empty() {
        let _ = writeln!(o, "  clock skew: {}", skews.join(", "));
    }
    let _ = writeln!(o);
}

/// The GPUs with their host's driver, suspects marked `*`: only the suspects unless `all`.
fn gpus(o: &mut String, r: &Report, all: bool) {
    let shown: Vec<_> = r.gpus.iter().filter(|g| all || g.suspect).collect();
    if shown.is_empty() {
        return;
    }
    let _ = writeln!(o, "{}", if all { "GPUs:" } else { "Suspect GPUs:" });
    for g in shown {
        // the driver its host runs (a bug report, a driver load line, or `nvidia-smi -q`)
        let driver = r
            .hosts
            .iter()
            .find(|h| Some(&h.host) == g.host.as_ref())
            .and_then(|h| h.driver.as_deref())
            .map(|d| format!("  driver {}", t(d)))
            .unwrap_or_default();
        let name = g.name.as_deref().or(g.serial.as_deref());
        let _ = writeln!(
            o,
            "  {} {:<14} {:<16} {:<40} {}{driver}",
            if g.suspect { "*" } else { " " },
            t(&g.bus_id),
            t(g.host.as_deref().unwrap_or("-")),
            t(g.uuid.as_deref().unwrap_or("-")),
            t(name.unwrap_or("-"))
        );
    }
    let _ = writeln!(o);
}

/// The inputs with their warnings, the notes and the lines not understood (`-v`).
fn inputs(o: &mut String, r: &Report) {
    let _ = writeln!(o, "Inputs ({}):", r.inputs.len());
    for i in &r.inputs {
        let _ = writeln!(
            o,
            "  {:<14} {:>9} lines {:>9} recognized {:>5} events  {}{}",
            i.format,
            i.lines,
            i.lines_recognized,
            i.events,
            t(&i.path),
            i.host
                .as_ref()
                .map(|h| format!("  [{}]", t(h)))
                .unwrap_or_default()
        );
        for w in &i.warnings {
            let _ = writeln!(o, "      warning: {}", t(w));
        }
    }
    for n in &r.notes {
        let _ = writeln!(o, "  note: {}", t(n));
    }
    let _ = writeln!(o, "  accounting: {}", t(&r.accounting.summary));
    for ex in &r.accounting.not_understood_examples {
        let _ = writeln!(o, "      not understood: {}", t(ex));
    }
    let _ = writeln!(o);
}

/// Every event (`-v`), info included.
fn timeline(o: &mut String, r: &Report) {
    let relevant = r.events.iter().filter(|e| e.severity != "info").count();
    let _ = writeln!(
        o,
        "Events ({}, {relevant} warning or worse):",
        r.events.len()
    );
    for e in &r.events {
        let _ = writeln!(
            o,
            "  {:<4} {:<23} {:<9} {:<16} {:<14} {:<18} {}",
            e.id,
            event_time(e),
            e.time_quality,
            t(e.host.as_deref().unwrap_or("-")),
            t(e.gpu.as_deref().unwrap_or("-")),
            t(&pm::what(e)),
            t(&e.title)
        );
    }
    let _ = writeln!(o);
}

/// Renders only the timeline (every event, info included).
pub fn render_timeline(r: &Report) -> String {
    let mut o = String::new();
    for e in &r.events {
        let _ = writeln!(
            o,
            "{:<23} {:<9} {:<16} {:<14} {:<18} {:<8} {}:{}  {}",
            event_time(e),
            e.time_quality,
            t(e.host.as_deref().unwrap_or("-")),
            t(e.gpu.as_deref().unwrap_or("-")),
            t(&pm::what(e)),
            e.severity,
            t(&e.source.path),
            e.source.line,
            t(&e.title)
        );
    }
    o
}

/// The measured slowdown: levels, phase, known pauses, and a sparkline of the speed.
fn slowdown_lines(o: &mut String, sd: &super::json::SlowdownJson) {
    let state = match (&sd.recovered_at, sd.ongoing) {
        (Some(at), _) => format!("recovered at {at}"),
        (None, true) => "still slow at the end of the log".into(),
        (None, false) => "then the job stopped".into(),
    };
    let pauses: Vec<String> = sd.pauses.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    let _ = writeln!(
        o,
        "  slowdown: {} {} → {} {} ({:.0}% throughput) over {} samples, {state}{}",
        t(&sd.series),
        sd.baseline,
        sd.degraded,
        sd.unit,
        sd.ratio * 100.0,
        sd.samples,
        if pauses.is_empty() {
            String::new()
        } else {
            format!("; known pauses left out: {}", pauses.join(", "))
        }
    );
    let speeds = crate::throughput::speeds(sd.metric, sd.curve.iter().map(|p| p.1));
    let (line, marks) = crate::throughput::sparkline(&speeds, sd.curve_slow, 60);
    let _ = writeln!(o, "  speed    {line}");
    let _ = writeln!(o, "  slow     {marks}");
}
