//! The terminal report: inputs with line accounting, the timeline of relevant events, the
//! incidents with their verdict and evidence, and the GPU inventory.

use super::json::{EventId, Report};
// every string that comes from an input goes through `t` (terminal_safe) before it is written
use super::terminal_safe as t;
use std::fmt::Write;

/// Most timeline rows shown before eliding (the JSON keeps all).
pub const MAX_TIMELINE_ROWS: usize = 60;

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

/// Wall time, or kernel uptime when that is all there is.
fn event_time(e: &super::json::EventJson) -> String {
    match (&e.time, e.uptime_s) {
        (None, Some(u)) => format!("uptime {u:.6}s"),
        (t, _) => short_time(t),
    }
}

/// The incident window: wall times, or the uptime range of its events.
fn window(inc: &super::json::IncidentJson, r: &Report) -> String {
    if inc.start.is_some() {
        return format!("{} → {}", short_time(&inc.start), short_time(&inc.end));
    }
    // one pass over the timeline (a search of it per member was members × events)
    let members: std::collections::HashSet<EventId> = inc.events.iter().copied().collect();
    let ups: Vec<f64> = r
        .events
        .iter()
        .filter(|e| EventId::parse(&e.id).is_some_and(|id| members.contains(&id)))
        .filter_map(|e| e.uptime_s)
        .collect();
    match (
        ups.iter().cloned().reduce(f64::min),
        ups.iter().cloned().reduce(f64::max),
    ) {
        (Some(a), Some(b)) => format!("uptime {a:.3}s → {b:.3}s"),
        _ => "no time".to_string(),
    }
}

/// Renders the report for a terminal.
pub fn render(r: &Report) -> String {
    let mut o = String::new();
    inputs(&mut o, r);
    timeline(&mut o, r);
    if r.incidents.is_empty() {
        let _ = writeln!(o, "Incidents: none");
    }
    for inc in &r.incidents {
        incident(&mut o, r, inc);
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
    if !r.gpus.is_empty() {
        gpus(&mut o, r);
    }
    o
}

/// The verdict line, the inputs with their warnings, notes and the accounting.
fn inputs(o: &mut String, r: &Report) {
    let _ = writeln!(
        o,
        "faultline {} — verdict: {}",
        r.tool.version,
        r.verdict.root_cause_layer.to_uppercase()
    );
    let _ = writeln!(o, "{}", t(&r.verdict.summary));
    let _ = writeln!(o);
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
    if let Some(f) = &r.accounting.filter {
        let _ = writeln!(o, "  filter: {}", t(&f.summary));
    }
    for ex in &r.accounting.not_understood_examples {
        let _ = writeln!(o, "      not understood: {}", t(ex));
    }
    let _ = writeln!(o);
}

/// The relevant (not info) events, at most [`MAX_TIMELINE_ROWS`].
fn timeline(o: &mut String, r: &Report) {
    let relevant: Vec<_> = r.events.iter().filter(|e| e.severity != "info").collect();
    let _ = writeln!(
        o,
        "Timeline ({} events, {} relevant):",
        r.events.len(),
        relevant.len()
    );
    for e in relevant.iter().take(MAX_TIMELINE_ROWS) {
        let what = match e.code {
            Some(c) => format!("{} {}", e.kind, c),
            None => e.kind.clone(),
        };
        let _ = writeln!(
            o,
            "  {:<4} {:<23} {:<9} {:<16} {:<14} {:<18} {}",
            e.id,
            event_time(e),
            e.time_quality,
            t(e.host.as_deref().unwrap_or("-")),
            t(e.gpu.as_deref().unwrap_or("-")),
            t(&what),
            t(&e.title)
        );
    }
    if relevant.len() > MAX_TIMELINE_ROWS {
        let _ = writeln!(
            o,
            "  … {} more (use --format json for all)",
            relevant.len() - MAX_TIMELINE_ROWS
        );
    }
    let _ = writeln!(o);
}

/// One incident: its window, layer, summary, evidence, alternatives and actions.
fn incident(o: &mut String, r: &Report, inc: &super::json::IncidentJson) {
    let _ = writeln!(
        o,
        "Incident {} [{}]  layer {}  confidence {:.2}  who acts: {}",
        inc.id,
        window(inc, r),
        inc.root_cause.layer,
        inc.root_cause.confidence,
        inc.root_cause.responsibility
    );
    let _ = writeln!(o, "  {}", t(&inc.root_cause.summary));
    o.push_str(&super::known::text(&inc.known_issues, "  ", &|s| {
        t(s).into_owned()
    }));
    if let Some(sd) = &inc.slowdown {
        slowdown_lines(o, sd);
    }
    if !inc.hosts.is_empty() {
        let _ = writeln!(
            o,
            "  hosts: {}   gpus: {}",
            t(&inc.hosts.join(", ")),
            if inc.gpus.is_empty() {
                "-".into()
            } else {
                t(&inc.gpus.join(", ")).into_owned()
            }
        );
    }
    let _ = writeln!(o, "  evidence:");
    for id in inc.root_cause.evidence.iter().take(8) {
        if let Some(e) = r.events.iter().find(|e| &e.id == id) {
            let first = e.message.lines().next().unwrap_or("");
            let _ = writeln!(
                o,
                "    {}:{}  {}",
                t(&e.source.path),
                e.source.line,
                t(&first.chars().take(200).collect::<String>())
            );
        }
    }
    for a in &inc.alternatives {
        let _ = writeln!(
            o,
            "  alternative: {} ({:.2}) {}",
            a.layer,
            a.confidence,
            t(&a.summary)
        );
    }
    for m in &inc.missing_data {
        let _ = writeln!(o, "  missing: {}", t(m));
    }
    let _ = writeln!(o, "  actions:");
    for a in &inc.actions {
        let _ = writeln!(o, "    - {}", t(a));
    }
    let _ = writeln!(o);
}

/// The job: world size, ranks, straggler, silent ranks, clock skew.
fn job(o: &mut String, j: &super::json::JobJson) {
    let hosts: std::collections::BTreeSet<&str> =
        j.ranks.iter().filter_map(|x| x.host.as_deref()).collect();
    let _ = writeln!(
        o,
        "Job: world size {}, {} ranks seen on {} hosts{}{}",
        j.world_size.map_or("?".to_string(), |w| w.to_string()),
        j.ranks.len(),
        hosts.len(),
        if j.missing_ranks.is_empty() {
            String::new()
        } else {
            format!(", {} ranks never named", j.missing_ranks.len())
        },
        j.work_lost_s
            .map(|w| format!(", work lost since the last checkpoint: {w} s"))
            .unwrap_or_default()
    );
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

/// The GPUs with their host's driver, suspects marked `*`.
fn gpus(o: &mut String, r: &Report) {
    let _ = writeln!(o, "GPUs:");
    for g in &r.gpus {
        // the driver its host runs (a bug report, a driver load line, or `nvidia-smi -q`)
        let driver = r
            .hosts
            .iter()
            .find(|h| Some(&h.host) == g.host.as_ref())
            .and_then(|h| h.driver.as_deref())
            .map(|d| format!("  driver {}", t(d)))
            .unwrap_or_default();
        let _ = writeln!(
            o,
            "  {} {:<14} {:<16} {:<40} {}{driver}",
            if g.suspect { "*" } else { " " },
            t(&g.bus_id),
            t(g.host.as_deref().unwrap_or("-")),
            t(g.uuid.as_deref().unwrap_or("-")),
            t(g.name.as_deref().or(g.serial.as_deref()).unwrap_or(""))
        );
    }
}

/// Renders only the timeline (every event, info included).
pub fn render_timeline(r: &Report) -> String {
    let mut o = String::new();
    for e in &r.events {
        let what = e
            .code
            .map_or_else(|| e.kind.clone(), |c| format!("{} {c}", e.kind));
        let _ = writeln!(
            o,
            "{:<23} {:<9} {:<16} {:<14} {:<18} {:<8} {}:{}  {}",
            event_time(e),
            e.time_quality,
            t(e.host.as_deref().unwrap_or("-")),
            t(e.gpu.as_deref().unwrap_or("-")),
            t(&what),
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
