//! The HTML post-mortem: one self-contained file (inline CSS and SVG, no script, no network,
//! a Content-Security-Policy that forbids loading anything) with the content of the Markdown
//! report and a timeline picture. Built from the same [`Report`] value as every other format.
//!
//! Every text that comes from the inputs goes through [`Page::t`] and is escaped; with
//! `--redact` the report's values were redacted before (`crate::redact`), never the page. Output is deterministic: no clock is read, maps are ordered, numbers have fixed
//! precision.
//!
//! Incidents are rendered by [`incident`]; a slowdown incident's throughput section would be
//! one more block there, drawn on a [`timeline::Axis`] like the timeline.

mod axis;
mod curve;
mod sections;
mod timeline;

use super::json::{EventJson, IncidentJson, Report};
use super::postmortem::{self as pm, when};
use crate::catalog::Catalog;
use crate::words::counted;
use std::collections::BTreeSet;
use std::fmt::Write;

/// Most rows of the event table (the JSON keeps all).
pub const MAX_TABLE_ROWS: usize = 500;

/// Layer, colour, text colour on that colour, name for people.
const LAYERS: [(&str, &str, &str, &str); 10] = [
    ("hardware", "#d55e00", "#fff", "hardware"),
    ("thermal_power", "#e69f00", "#111", "thermal / power"),
    ("gpu_memory", "#cc79a7", "#111", "GPU memory"),
    ("interconnect", "#0072b2", "#fff", "interconnect"),
    ("driver_stack", "#009e73", "#fff", "driver stack"),
    ("application", "#56b4e9", "#111", "application"),
    ("network_storage", "#7b61c9", "#fff", "network / storage"),
    ("platform", "#8c6d31", "#fff", "platform"),
    ("unknown", "#5f5f5f", "#fff", "unknown"),
    ("none", "#2e7d32", "#fff", "none"),
];

/// Escapes text for HTML and SVG (element content and quoted attributes). Control characters
/// are shown as their Unicode control pictures and bidirectional controls by their code point,
/// so that a hostile line can neither break the markup nor reorder what is displayed.
pub fn escape(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 16);
    for c in s.chars() {
        match c {
            '&' => o.push_str("&amp;"),
            '<' => o.push_str("&lt;"),
            '>' => o.push_str("&gt;"),
            '"' => o.push_str("&quot;"),
            '\'' => o.push_str("&#39;"),
            _ => crate::report::push_visible(&mut o, c),
        }
    }
    o
}

/// How the page writes text from the report (escaped), and which events have a table row that
/// links can point to.
struct Page<'a> {
    rows: BTreeSet<&'a str>,
}

impl Page<'_> {
    /// An in-page link to an event's row around `inner`, or `inner` alone when it has no row.
    fn event_link(&self, id: &str, inner: &str) -> String {
        if self.rows.contains(id) {
            format!(r##"<a href="#{}">{inner}</a>"##, self.t(id))
        } else {
            inner.to_string()
        }
    }

    /// Text from the report, ready for the page.
    fn t(&self, s: &str) -> String {
        escape(s)
    }
}

fn badge(p: &Page, layer: &str) -> String {
    format!(
        r#"<span class="badge B-{0}">{1}</span>"#,
        p.t(layer),
        p.t(&layer.replace('_', " "))
    )
}

fn css() -> String {
    let mut c = String::from(
        "*{box-sizing:border-box}\
body{font:14px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;color:#1b1b1b;margin:0;background:#fafafa}\
main{max-width:1240px;margin:0 auto;padding:20px 24px 40px}\
h1{font-size:24px;margin:0 0 6px}h2{font-size:19px;margin:28px 0 10px;border-bottom:1px solid #ddd;padding-bottom:4px}\
h3{font-size:16px;margin:18px 0 6px}h4{font-size:14px;margin:12px 0 4px}\
code,pre,.mono{font-family:ui-monospace,'DejaVu Sans Mono',Menlo,Consolas,monospace;font-size:12.5px}\
pre{background:#f1f1f1;border:1px solid #ddd;padding:8px 10px;overflow-x:auto;white-space:pre-wrap;overflow-wrap:anywhere;margin:4px 0}\
table{border-collapse:collapse;margin:6px 0;width:100%}th,td{border:1px solid #ddd;padding:3px 6px;text-align:left;vertical-align:top}\
th{background:#f0f0f0;font-weight:600}td.num{text-align:right}.nw{white-space:nowrap}.q{color:#777;font-size:11px}td code{white-space:pre-wrap;overflow-wrap:anywhere}\
.verdict{font-size:16px;padding:10px 12px;background:#fff;border:1px solid #ddd;border-left:6px solid #888;margin:8px 0}\
.badge{display:inline-block;padding:1px 8px;border-radius:10px;font-weight:600;font-size:12.5px;margin-right:6px;\
-webkit-print-color-adjust:exact;print-color-adjust:exact}\
.meta{color:#555;font-size:13px}nav a{margin-right:12px}\
dl.kv{display:grid;grid-template-columns:max-content 1fr;gap:2px 14px;margin:6px 0}dl.kv dt{font-weight:600;color:#333}dl.kv dd{margin:0}\
article.incident{background:#fff;border:1px solid #ddd;border-left:6px solid #888;padding:4px 14px 10px;margin:14px 0}\
.met{color:#b00020;font-weight:600}.notmet{color:#2e7d32}.unknown{color:#666}\
.sev-critical{color:#b00020;font-weight:600}.sev-error{color:#c25400}.sev-warning{color:#7a6300}.sev-info{color:#666}\
.legend{display:flex;flex-wrap:wrap;gap:4px 14px;margin:6px 0 2px;font-size:12.5px}.legend span.sw{display:inline-block;width:11px;height:11px;border-radius:6px;margin-right:4px;vertical-align:-1px;\
-webkit-print-color-adjust:exact;print-color-adjust:exact}\
figure.panel{margin:10px 0;background:#fff;border:1px solid #ddd;padding:6px;overflow-x:auto}figcaption{font-weight:600;margin:0 0 4px}\
svg.tl-svg{display:block;max-width:100%;height:auto;font-family:system-ui,sans-serif}\
.lane{fill:#fff}.lane.odd{fill:#f5f6f8}.hostsep{stroke:#bbb;stroke-width:1}\
.ll{font-size:11px;text-anchor:end;fill:#333}.ll.suspect{fill:#b00020;font-weight:700}\
.axis{stroke:#777}.tick{stroke:#777}.tl{font-size:10.5px;fill:#444;text-anchor:middle}.tl.date{text-anchor:start;fill:#222}.tl.end{text-anchor:end}\
.brk line{stroke:#999;stroke-dasharray:3 3}.band rect{fill:#ffd54f;fill-opacity:.18;stroke:#e0a800;stroke-opacity:.6}\
.band text{font-size:11px;font-weight:700;fill:#8a6500}\
.m{stroke:#222;stroke-width:.6}.m.S-info{fill:#fff !important;stroke-width:1.4}\
.ring{fill:none;stroke:#222;stroke-width:1.6;pointer-events:none}.ring.ff{stroke:#b00020;stroke-width:2.6}\
.ringl{font-size:11px;font-weight:700;fill:#222;pointer-events:none}.ringl.ff{fill:#b00020}\
.m:hover{stroke-width:2}\
footer{color:#666;font-size:12px;margin-top:30px}\
tr.csq td{background:#f7f7fb;color:#444}tr.csq td:first-child{border-left:3px solid #9a9ab8}.csqtag{display:inline-block;font-size:11px;padding:0 5px;border:1px dashed #8a8aa8;border-radius:3px;color:#4a4a6a;margin-right:4px}\
tr.grp>td{padding:2px 6px}tr.grp details>summary{cursor:pointer;color:#4a4a6a;font-size:12.5px}tr.grp table{margin:4px 0 2px}\
.m.csq{fill:#fff !important;stroke:#4a4a6a;stroke-width:1.3;stroke-dasharray:2 1.2}.ring.obs{stroke:#7a6300;stroke-width:2;stroke-dasharray:3 2}.ringl.obs{fill:#7a6300}\
@media print{body{background:#fff;font-size:11px}main{max-width:none;padding:0}nav{display:none}\
a{color:inherit;text-decoration:none}h2{break-after:avoid}article.incident,figure.panel,tr{break-inside:avoid}\
details>summary{list-style:none}\
figure.panel{overflow:visible;border:0;padding:0}pre{overflow:visible}}\n",
    );
    c.push_str(curve::CSS);
    for (l, col, fg, _) in LAYERS {
        let _ = writeln!(
            c,
            ".B-{l}{{background:{col};color:{fg}}}.L-{l}{{fill:{col}}}.M-{l}{{border-left-color:{col}}}.S-info.L-{l}{{stroke:{col}}}"
        );
    }
    c
}

/// Renders the HTML report (of a report redacted beforehand with `--redact`).
pub fn render(r: &Report, catalog: &Catalog) -> String {
    let p = Page {
        rows: pm::table_rows(r, MAX_TABLE_ROWS)
            .0
            .iter()
            .map(|e| e.id.as_str())
            .collect(),
    };
    let events = pm::index(r);
    let mut o = String::new();
    head(&p, r, &mut o);
    header(&p, r, &mut o);
    sections::impact(&p, r, &events, &mut o);
    timeline_section(&p, r, &mut o);
    let _ = writeln!(o, r#"<section id="incidents"><h2>Incidents</h2>"#);
    if r.incidents.is_empty() {
        let _ = writeln!(o, "<p>No incident: {}</p>", p.t(&r.verdict.summary));
    }
    for inc in &r.incidents {
        incident(&p, r, inc, &events, catalog, &mut o);
    }
    o.push_str(&super::known::html(&r.known_issues, "h3", &|s| p.t(s)));
    let _ = writeln!(o, "</section>");
    sections::suspect_gpus(&p, r, &mut o);
    sections::job(&p, r, &events, &mut o);
    event_table(&p, r, &mut o);
    sections::inputs(&p, r, &mut o);
    sections::attach(&p, r, &mut o);
    let _ = writeln!(
        o,
        "<footer>Written offline by faultline {} from the inputs listed above; times are UTC.</footer>\n</main>\n</body>\n</html>",
        p.t(r.tool.version)
    );
    o
}

/// The document's head: security policy, title and style.
fn head(p: &Page, r: &Report, o: &mut String) {
    let _ = writeln!(
        o,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">"
    );
    let _ = writeln!(
        o,
        "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">"
    );
    let _ = writeln!(
        o,
        "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
    );
    let _ = writeln!(
        o,
        "<meta name=\"generator\" content=\"faultline {}\">",
        p.t(r.tool.version)
    );
    let _ = writeln!(
        o,
        "<title>GPU incident report — {}</title>\n<style>\n{}</style>\n</head>\n<body>\n<main>",
        p.t(r.verdict.root_cause_layer),
        css()
    );
}

/// The page's header: the verdict, the counts and the sections' links.
fn header(p: &Page, r: &Report, o: &mut String) {
    let _ = writeln!(o, "<header>\n<h1>GPU incident report</h1>");
    let _ = writeln!(
        o,
        r#"<p class="verdict M-{}" id="verdict"><strong>Verdict:</strong> {}{}</p>"#,
        p.t(r.verdict.root_cause_layer),
        badge(p, r.verdict.root_cause_layer),
        p.t(&r.verdict.summary)
    );
    let _ = writeln!(
        o,
        r#"<p class="meta">faultline {} · {} · {} · {}</p>"#,
        p.t(r.tool.version),
        counted(r.inputs.len() as u64, "input"),
        counted(r.events.len() as u64, "event"),
        counted(r.incidents.len() as u64, "incident")
    );
    let mut nav = vec![
        ("impact", "Impact"),
        ("timeline", "Timeline"),
        ("incidents", "Incidents"),
    ];
    if r.gpus.iter().any(|g| g.suspect) {
        nav.push(("gpus", "Suspect GPUs"));
    }
    if r.job.is_some() {
        nav.push(("job", "Job"));
    }
    nav.extend([
        ("events", "Events"),
        ("inputs", "Inputs"),
        ("attach", "What to attach"),
    ]);
    let _ = write!(o, "<nav>");
    for (id, name) in nav {
        let _ = write!(o, r##"<a href="#{id}">{name}</a>"##);
    }
    let _ = writeln!(o, "</nav>\n</header>");
}

fn timeline_section(p: &Page, r: &Report, o: &mut String) {
    let _ = writeln!(o, r#"<section id="timeline"><h2>Timeline</h2>"#);
    let layers = timeline::layers_drawn(r);
    if !layers.is_empty() {
        let _ = write!(o, r#"<div class="legend">"#);
        for (l, _, _, name) in LAYERS.iter().filter(|x| layers.contains(x.0)) {
            let _ = write!(o, r#"<span><span class="sw B-{l}"></span>{name}</span>"#);
        }
        let _ = writeln!(
            o,
            "<span>◆ critical · ● error · • warning · ○ info · dashed hollow: a consequence (what followed a fault)</span><span>ring: primary fault of an incident (red: the first fault of the verdict; dashed: the state a later snapshot observed)</span><span>band: incident window</span><span>hover a mark for its line; click it for its row</span></div>"
        );
        o.push_str(&timeline::render(p, r));
    } else {
        let _ = writeln!(o, "<p>No event carries a time: nothing to draw.</p>");
    }
    let untimed = timeline::untimed(r);
    if !untimed.is_empty() {
        let _ = writeln!(
            o,
            "<h3>Events without a time</h3>\n<p>These lines carry neither a date nor a kernel uptime, so they cannot be placed on the picture (a time of day that nothing dated is shown as such, and orders the lines of its file).</p>"
        );
        event_rows(p, r, &untimed, false, o);
    }
    let _ = writeln!(o, "</section>");
}

/// One incident: root cause, chain, evidence, alternatives, missing data, what to do.
fn incident(
    p: &Page,
    r: &Report,
    inc: &IncidentJson,
    events: &std::collections::BTreeMap<&str, &EventJson>,
    catalog: &Catalog,
    o: &mut String,
) {
    let rc = &inc.root_cause;
    let _ = writeln!(
        o,
        r#"<article class="incident M-{}" id="{}">"#,
        p.t(rc.layer),
        p.t(&inc.id)
    );
    let _ = writeln!(
        o,
        "<h3>Incident {} — {}confidence {:.2} · who acts: {}</h3>\n<p>{}</p>",
        p.t(&inc.id),
        badge(p, rc.layer),
        rc.confidence,
        p.t(&rc.responsibility),
        p.t(&rc.summary)
    );
    let _ = writeln!(o, r#"<dl class="kv">"#);
    let window = pm::window(inc, events);
    let rows = [
        ("Kind", inc.kind.to_string()),
        ("Window", window),
        ("Rule", pm::rule(inc)),
        ("Hosts", pm::list(&inc.hosts)),
        ("GPUs", pm::list(&inc.gpus)),
        ("Ranks", pm::ranks(&inc.ranks)),
    ];
    for (k, v) in rows {
        let _ = writeln!(o, "<dt>{k}</dt><dd>{}</dd>", p.t(&v));
    }
    let _ = writeln!(o, "</dl>");
    if let Some(sd) = &inc.slowdown {
        curve::section(&|s: &str| p.t(s), sd, o);
    }
    sections::chain(p, r, inc, events, o);
    evidence(p, inc, events, catalog, o);
    o.push_str(&super::known::html(&inc.known_issues, "h4", &|s| p.t(s)));
    alternatives(p, inc, o);
    if !inc.missing_data.is_empty() {
        let _ = writeln!(o, "<h4>Missing data that would settle it</h4>\n<ul>");
        for m in &inc.missing_data {
            let _ = writeln!(o, "<li>{}</li>", p.t(m));
        }
        let _ = writeln!(o, "</ul>");
    }
    let _ = writeln!(o, "<h4>What to do</h4>\n<ol>");
    for a in &inc.actions {
        let _ = writeln!(o, "<li>{}</li>", p.t(a));
    }
    let _ = writeln!(o, "</ol>\n</article>");
}

/// An incident's evidence lines, verbatim with their places, and NVIDIA's resolution buckets.
fn evidence(
    p: &Page,
    inc: &IncidentJson,
    events: &std::collections::BTreeMap<&str, &EventJson>,
    catalog: &Catalog,
    o: &mut String,
) {
    let _ = writeln!(o, "<h4>Evidence (verbatim, path:line)</h4>\n<pre>");
    for id in &inc.root_cause.evidence {
        if let Some(e) = events.get(id.as_str()) {
            let _ = writeln!(
                o,
                "{}: {}",
                p.event_link(&e.id, &format!("{}:{}", p.t(&e.source.path), e.source.line)),
                p.t(&e.message)
            );
        }
    }
    let _ = writeln!(o, "</pre>");
    let buckets = pm::resolution(inc, events, catalog);
    if !buckets.is_empty() {
        let _ = writeln!(o, "<h4>NVIDIA resolution bucket</h4>\n<ul>");
        for b in buckets {
            let _ = writeln!(o, "<li>{}</li>", p.t(&b));
        }
        let _ = writeln!(o, "</ul>");
    }
}

/// The other layers' rules that fit the incident, with their confidence.
fn alternatives(p: &Page, inc: &IncidentJson, o: &mut String) {
    let _ = writeln!(o, "<h4>Alternatives</h4>");
    if inc.alternatives.is_empty() {
        let _ = writeln!(
            o,
            "<p>No rule of another layer fits the events of this incident.</p>"
        );
        return;
    }
    let _ = writeln!(
        o,
        "<table><tr><th>layer</th><th>confidence</th><th>for it</th></tr>"
    );
    for a in &inc.alternatives {
        let _ = writeln!(
            o,
            r#"<tr><td>{}</td><td class="num">{:.2}</td><td>{}</td></tr>"#,
            badge(p, a.layer),
            a.confidence,
            p.t(&a.summary)
        );
    }
    let _ = writeln!(o, "</table>");
}

fn event_table(p: &Page, r: &Report, o: &mut String) {
    let (rows, n) = pm::table_rows(r, MAX_TABLE_ROWS);
    let _ = writeln!(
        o,
        r#"<section id="events"><h2>Events</h2>
<p>{} of {} events: those of severity warning or worse and every evidence line{}.</p>"#,
        rows.len(),
        r.events.len(),
        if n > rows.len() {
            format!(
                "; the first {} of {n} are shown, the JSON report has all",
                rows.len()
            )
        } else {
            String::new()
        }
    );
    if !rows.is_empty() {
        event_rows(p, r, &rows, true, o);
    }
    let _ = writeln!(o, "</section>");
}

/// A table of events; with `anchors`, each row is the target (`#e17`) the picture, the chain and
/// the evidence link to. Consequences are drawn in their own style, and those repeated on one
/// host (ranks exiting, NCCL timeouts) fold into one `<details>` per kind and host.
fn event_rows(p: &Page, r: &Report, rows: &[&EventJson], anchors: bool, o: &mut String) {
    let _ = writeln!(
        o,
        "<table class=\"ev\"><tr><th>id</th><th>time (UTC)</th><th>host</th><th>GPU</th><th>rank</th><th>event</th><th>layer</th><th>severity</th><th>line</th></tr>"
    );
    let csq = pm::marks::consequences(r);
    for row in pm::marks::group(r, rows) {
        match row {
            pm::marks::Row::One(e) => event_row(p, e, anchors, csq.contains(e.id.as_str()), o),
            pm::marks::Row::Group(g) => {
                event_row(p, g[0], anchors, true, o);
                let last = g[g.len() - 1];
                let ranks: Vec<i64> = g.iter().filter_map(|e| e.rank).collect();
                let _ = writeln!(
                    o,
                    r#"<tr class="csq grp"><td colspan="9"><details><summary>{} more {} on {} ({} in all, {} → {}{})</summary><table class="ev">"#,
                    g.len() - 1,
                    p.t(&e_what(g[0])),
                    p.t(g[0].host.as_deref().unwrap_or("an unnamed host")),
                    g.len(),
                    p.t(&when(g[0])),
                    p.t(&when(last)),
                    if ranks.is_empty() {
                        String::new()
                    } else {
                        format!(", ranks {}", p.t(&pm::ranks(&ranks)))
                    }
                );
                for e in &g[1..] {
                    event_row(p, e, anchors, true, o);
                }
                let _ = writeln!(o, "</table></details></td></tr>");
            }
        }
    }
    let _ = writeln!(o, "</table>");
}

fn e_what(e: &EventJson) -> String {
    e.code
        .map_or_else(|| e.kind.clone(), |c| format!("{} {c}", e.kind))
}

/// Text with a line-break opportunity after each path separator (`/`, `\\`), escaped.
fn wrap_paths(p: &Page, s: &str) -> String {
    p.t(s).replace('/', "/<wbr>").replace('\\', "\\<wbr>")
}

fn event_row(p: &Page, e: &EventJson, anchor: bool, csq: bool, o: &mut String) {
    let quality = if e.time.is_some() {
        format!(r#"<br><span class="q">{}</span>"#, p.t(e.time_quality))
    } else {
        String::new()
    };
    let _ = writeln!(
        o,
        r#"<tr{anchor}{class}><td class="nw">{id}</td><td class="mono nw">{}{quality}</td><td class="nw">{}</td><td class="mono nw">{}</td><td>{}</td><td>{}{} — {}</td><td class="nw">{}</td><td class="sev-{sev}">{sev}</td><td><span class="mono">{}:{}</span><br><code>{}</code></td></tr>"#,
        p.t(&when(e)),
        p.t(e.host.as_deref().unwrap_or("-")),
        p.t(e.gpu.as_deref().unwrap_or("-")),
        e.rank.map_or("-".to_string(), |x| x.to_string()),
        if csq {
            r#"<span class="csqtag">consequence</span> "#
        } else {
            ""
        },
        p.t(&e_what(e)),
        p.t(&e.title),
        p.t(e.layer),
        wrap_paths(p, &e.source.path),
        e.source.line,
        wrap_paths(p, &e.message),
        id = p.t(&e.id),
        sev = p.t(e.severity),
        anchor = if anchor {
            format!(r#" id="{}""#, p.t(&e.id))
        } else {
            String::new()
        },
        class = if csq { r#" class="csq""# } else { "" },
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_neutralizes_markup_controls_and_bidi() {
        assert_eq!(
            escape(r#"<script>alert('x')</script> & "q""#),
            "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt; &amp; &quot;q&quot;"
        );
        assert_eq!(escape("a\u{1b}[31mb\u{0}"), "a\u{241b}[31mb\u{2400}");
        assert_eq!(escape("x\u{202e}y"), "x⟨U+202E⟩y");
        assert_eq!(escape("tab\tand\nnewline"), "tab\tand\nnewline");
    }
}
