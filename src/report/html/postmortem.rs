//! The post-mortem sections of the HTML report that a vendor ticket needs beside the incidents:
//! impact, the chain of each incident, NVIDIA's resolution bucket, suspect GPU identity with
//! counters and RMA criteria, the job, the inputs and what to attach.

use super::{badge, pretty, timeline, when, Page};
use crate::catalog::Catalog;
use crate::report::json::{EventJson, GpuJson, IncidentJson, Report, RootCauseJson};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// A comma list, or `-`.
pub(super) fn list(v: &[String]) -> String {
    if v.is_empty() {
        "-".into()
    } else {
        v.join(", ")
    }
}

/// Ranks as ranges: `0–63 (64 ranks)`.
pub(super) fn ranks(v: &[i64]) -> String {
    if v.is_empty() {
        return "-".into();
    }
    let mut sorted = v.to_vec();
    sorted.sort_unstable();
    sorted.dedup();
    let mut parts: Vec<String> = Vec::new();
    let mut start = sorted[0];
    let mut prev = sorted[0];
    for &x in sorted[1..].iter().chain(std::iter::once(&i64::MIN)) {
        if x != prev + 1 {
            parts.push(if start == prev {
                start.to_string()
            } else {
                format!("{start}–{prev}")
            });
            start = x;
        }
        prev = x;
    }
    format!(
        "{} ({} rank{})",
        parts.join(", "),
        sorted.len(),
        if sorted.len() == 1 { "" } else { "s" }
    )
}

fn union<'a>(it: impl Iterator<Item = &'a String>) -> Vec<String> {
    it.cloned().collect::<BTreeSet<_>>().into_iter().collect()
}

/// Impact: what was hit, for how long, who acts.
pub(super) fn impact(p: &Page, r: &Report, o: &mut String) {
    let _ = writeln!(o, r#"<section id="impact"><h2>Impact</h2>"#);
    if r.incidents.is_empty() {
        // the verdict's summary says whether nothing was found or nothing could be read
        let _ = writeln!(o, "<p>{}</p>", p.t(&r.verdict.summary));
        let _ = writeln!(o, "</section>");
        return;
    }
    let hosts = union(r.incidents.iter().flat_map(|i| i.hosts.iter()));
    let gpus = union(r.incidents.iter().flat_map(|i| i.gpus.iter()));
    let rank_list: Vec<i64> = r
        .incidents
        .iter()
        .flat_map(|i| i.ranks.iter().copied())
        .collect::<BTreeSet<_>>()
        .into_iter()
        .collect();
    let starts: Vec<&String> = r
        .incidents
        .iter()
        .filter_map(|i| i.start.as_ref())
        .collect();
    let ends: Vec<&String> = r.incidents.iter().filter_map(|i| i.end.as_ref()).collect();
    let mut by_layer: BTreeMap<&str, usize> = BTreeMap::new();
    for i in &r.incidents {
        *by_layer.entry(i.root_cause.layer).or_default() += 1;
    }
    let who = union(r.incidents.iter().map(|i| &i.root_cause.responsibility));
    let _ = writeln!(o, r#"<dl class="kv">"#);
    let _ = writeln!(
        o,
        "<dt>Incidents</dt><dd>{}</dd>",
        by_layer
            .iter()
            .map(|(l, n)| format!("{}×{n}", badge(p, l)))
            .collect::<Vec<_>>()
            .join(" ")
    );
    if let (Some(a), Some(b)) = (starts.iter().min(), ends.iter().max()) {
        let _ = writeln!(
            o,
            "<dt>Window (UTC)</dt><dd>{} → {}</dd>",
            p.t(&pretty(a)),
            p.t(&pretty(b))
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
        p.t(&counted(&hosts, "none named in the lines"))
    );
    let _ = writeln!(
        o,
        "<dt>GPUs with faults</dt><dd>{}</dd>",
        p.t(&counted(&gpus, "none named"))
    );
    let world = r
        .job
        .as_ref()
        .and_then(|j| j.world_size)
        .map(|w| format!(" of a world of {w}"))
        .unwrap_or_default();
    let _ = writeln!(
        o,
        "<dt>Ranks</dt><dd>{}{}</dd>",
        p.t(&ranks(&rank_list)),
        world
    );
    if let Some(w) = r.job.as_ref().and_then(|j| j.work_lost_s) {
        let _ = writeln!(
            o,
            "<dt>Work lost</dt><dd>{} since the last checkpoint before the first fault</dd>",
            timeline::human_span(w * 1_000_000)
        );
    }
    let _ = writeln!(o, "<dt>Who acts</dt><dd>{}</dd>", p.t(&list(&who)));
    let _ = writeln!(o, "</dl>\n</section>");
}

fn place(e: &EventJson) -> String {
    let parts: Vec<&str> = [e.host.as_deref(), e.gpu.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    if parts.is_empty() {
        String::new()
    } else {
        format!(" on {}", parts.join(" "))
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
    let _ = writeln!(o, "<h4>Chain</h4>\n<ol>");
    let mut steps: Vec<(usize, &EventJson)> = inc
        .root_cause
        .evidence
        .iter()
        .filter_map(|id| events.get(id.as_str()))
        .filter_map(|e| r.events.iter().position(|x| x.id == e.id).map(|i| (i, *e)))
        .collect();
    steps.sort_by_key(|(i, _)| *i);
    let primary = inc.root_cause.evidence.first();
    let mut before = true;
    for (_, e) in steps {
        let role = if Some(&e.id) == primary {
            before = false;
            "<strong>primary fault:</strong>"
        } else if before {
            "before it:"
        } else {
            "with it:"
        };
        let what = e
            .code
            .map_or_else(|| e.kind.clone(), |c| format!("{} {c}", e.kind));
        let _ = writeln!(
            o,
            "<li>{role} {} {} — {}{}</li>",
            p.event_link(&e.id, &p.t(&when(e))),
            p.t(&what),
            p.t(&e.title),
            p.t(&place(e))
        );
    }
    for (kind, count) in &inc.consequences {
        let of_kind: Vec<&&EventJson> = inc
            .events
            .iter()
            .filter_map(|id| events.get(id.as_str()))
            .filter(|e| &e.kind == kind && !inc.root_cause.evidence.contains(&e.id))
            .collect();
        let hosts: BTreeSet<&str> = of_kind.iter().filter_map(|e| e.host.as_deref()).collect();
        let first = of_kind.first().map(|e| when(e)).unwrap_or_default();
        let last = of_kind.last().map(|e| when(e)).unwrap_or_default();
        let _ = writeln!(
            o,
            "<li>then: {} ×{count}{}{}</li>",
            p.t(kind),
            if first.is_empty() {
                String::new()
            } else if first == last {
                format!(" at {}", p.t(&first))
            } else {
                format!(" from {} to {}", p.t(&first), p.t(&last))
            },
            if hosts.is_empty() {
                String::new()
            } else {
                format!(" on {} host(s)", hosts.len())
            }
        );
    }
    let _ = writeln!(o, "</ol>");
}

/// NVIDIA's resolution bucket (immediate and investigatory action) of the Xids in the evidence.
pub(super) fn resolution(
    rc: &RootCauseJson,
    events: &BTreeMap<&str, &EventJson>,
    catalog: &Catalog,
) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for e in rc.evidence.iter().filter_map(|id| events.get(id.as_str())) {
        let Some(code) = e.code.filter(|_| e.kind == "xid") else {
            continue;
        };
        let Some(x) = catalog.xid.get(&code) else {
            continue;
        };
        if x.immediate.is_empty() || !seen.insert(code) {
            continue;
        }
        out.push(format!(
            "Xid {code} ({}): immediate {}{}",
            x.mnemonic,
            x.immediate,
            if x.investigatory.is_empty() {
                String::new()
            } else {
                format!(", then {}", x.investigatory)
            }
        ));
    }
    out
}

/// A counter key in one spelling (`Remapped Rows.Pending` and `remapped_rows.remapped_row_pending`).
fn norm(k: &str) -> String {
    k.to_ascii_lowercase().replace([' ', '-'], "_")
}

/// Counters worth a look: non-zero counts, `Yes`, `Active` (histograms and limits aside).
fn notable(k: &str, v: &str) -> bool {
    let k = norm(k);
    if k.contains("histogram") || k.contains("temp") {
        return false;
    }
    let first = v.split_whitespace().next().unwrap_or("");
    matches!(v, "Yes" | "Active") || first.parse::<f64>().is_ok_and(|n| n != 0.0)
}

/// One RMA criterion checked for one GPU.
struct Criterion {
    name: &'static str,
    met: bool,
    why: String,
}

fn on_gpu(e: &EventJson, g: &GpuJson) -> bool {
    e.gpu.as_deref() == Some(g.bus_id.as_str()) && (g.host.is_none() || e.host == g.host)
}

fn criteria(r: &Report, g: &GpuJson) -> Vec<Criterion> {
    let mine: Vec<&EventJson> = r.events.iter().filter(|e| on_gpu(e, g)).collect();
    let failed_remap: Vec<&&EventJson> = mine
        .iter()
        .filter(|e| {
            (e.kind == "xid" && matches!(e.code, Some(64) | Some(157)))
                || (e.kind == "row_remap" && e.severity == "critical")
        })
        .collect();
    let counter = g
        .state
        .iter()
        .find(|(k, v)| {
            let k = norm(k);
            k.contains("remap") && k.contains("fail") && v.as_str() == "Yes"
        })
        .map(|(k, v)| format!("counter {k}: {v}"));
    let remap = Criterion {
        name: "Row remapping or resource retirement failed",
        met: !failed_remap.is_empty() || counter.is_some(),
        why: match (failed_remap.first(), counter) {
            (Some(e), _) => format!("{} at {}:{}", e.title, e.source.path, e.source.line),
            (None, Some(c)) => c,
            (None, None) => "no Xid 64/157 and no remapping failure in the inputs".into(),
        },
    };
    let incidents_with = |kinds: &[&str]| -> Vec<&str> {
        r.incidents
            .iter()
            .filter(|i| {
                i.events.iter().any(|id| {
                    mine.iter()
                        .any(|e| &e.id == id && kinds.contains(&e.kind.as_str()))
                })
            })
            .map(|i| i.id.as_str())
            .collect()
    };
    let off = incidents_with(&["fell_off_bus"]);
    let dbe = incidents_with(&["ecc_dbe"]);
    let repeat = |name, v: Vec<&str>| Criterion {
        name,
        met: v.len() >= 2,
        why: match v.len() {
            0 => "not in these inputs".to_string(),
            1 => format!("once (incident {}); a second occasion would meet it", v[0]),
            _ => format!("in incidents {}", v.join(", ")),
        },
    };
    vec![
        remap,
        repeat("Fell off the bus on two or more occasions", off),
        repeat("Uncorrectable memory errors on two or more occasions", dbe),
    ]
}

/// Suspect GPUs: the identity vendors ask for, counters as read, RMA criteria.
pub(super) fn suspect_gpus(p: &Page, r: &Report, o: &mut String) {
    let suspects: Vec<&GpuJson> = r.gpus.iter().filter(|g| g.suspect).collect();
    if suspects.is_empty() {
        return;
    }
    let _ = writeln!(o, r#"<section id="gpus"><h2>Suspect GPUs</h2>"#);
    let _ = writeln!(
        o,
        "<table><tr><th>host</th><th>bus id</th><th>UUID</th><th>serial</th><th>model</th><th>VBIOS</th><th>driver</th><th>kernel</th></tr>"
    );
    for g in &suspects {
        let h = r.hosts.iter().find(|h| Some(&h.host) == g.host.as_ref());
        let f = |x: Option<&String>| p.t(x.map_or("-", String::as_str));
        let _ = writeln!(
            o,
            r#"<tr><td>{}</td><td class="mono">{}</td><td class="mono">{}</td><td class="mono">{}</td><td>{}</td><td class="mono">{}</td><td class="mono">{}</td><td class="mono">{}</td></tr>"#,
            f(g.host.as_ref()),
            p.t(&g.bus_id),
            f(g.uuid.as_ref()),
            f(g.serial.as_ref()),
            f(g.name.as_ref()),
            f(g.vbios.as_ref()),
            f(h.and_then(|h| h.driver.as_ref())),
            f(h.and_then(|h| h.kernel.as_ref())),
        );
    }
    let _ = writeln!(o, "</table>");
    for g in &suspects {
        let name = format!("{} {}", g.host.as_deref().unwrap_or(""), g.bus_id);
        let _ = writeln!(o, "<h3>{}</h3>", p.t(name.trim()));
        let checks = criteria(r, g);
        let any = checks.iter().any(|c| c.met);
        let _ = writeln!(
            o,
            "<h4>RMA criteria: {}</h4>\n<ul>",
            if any {
                r#"<span class="met">met</span>"#
            } else {
                r#"<span class="notmet">not met by these inputs</span> (run the field diagnostic before an RMA)"#
            }
        );
        for c in checks {
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
        let _ = writeln!(o, "<h4>Counters as read</h4>");
        if g.state.is_empty() {
            let _ = writeln!(
                o,
                r#"<p class="unknown">No nvidia-smi dump or bug report of this GPU in the inputs: attach <code>nvidia-smi -q</code> output.</p>"#
            );
            continue;
        }
        let marked: Vec<(&String, &String)> =
            g.state.iter().filter(|(k, v)| notable(k, v)).collect();
        if marked.is_empty() {
            let _ = writeln!(
                o,
                "<p>No counter is raised (no errors, nothing pending, no slowdown active).</p>"
            );
        } else {
            let _ = writeln!(o, "<table><tr><th>counter</th><th>value</th></tr>");
            for (k, v) in marked {
                let _ = writeln!(
                    o,
                    r#"<tr><td>{}</td><td class="mono">{}</td></tr>"#,
                    p.t(k),
                    p.t(v)
                );
            }
            let _ = writeln!(o, "</table>");
        }
        let _ = writeln!(
            o,
            "<details><summary>All {} counters</summary><table><tr><th>counter</th><th>value</th></tr>",
            g.state.len()
        );
        for (k, v) in &g.state {
            let _ = writeln!(
                o,
                r#"<tr><td>{}</td><td class="mono">{}</td></tr>"#,
                p.t(k),
                p.t(v)
            );
        }
        let _ = writeln!(o, "</table></details>");
    }
    let _ = writeln!(o, "</section>");
}

/// The distributed job: size, missing and silent ranks, straggler, clock skew, work lost.
pub(super) fn job(p: &Page, r: &Report, events: &BTreeMap<&str, &EventJson>, o: &mut String) {
    let Some(j) = &r.job else { return };
    let hosts: BTreeSet<&str> = j.ranks.iter().filter_map(|x| x.host.as_deref()).collect();
    let _ = writeln!(o, r#"<section id="job"><h2>Job</h2><dl class="kv">"#);
    let _ = writeln!(
        o,
        "<dt>World size</dt><dd>{}; {} ranks seen on {} hosts</dd>",
        j.world_size
            .map_or("unknown".to_string(), |w| w.to_string()),
        j.ranks.len(),
        hosts.len()
    );
    if !j.missing_ranks.is_empty() {
        let _ = writeln!(
            o,
            "<dt>Ranks no line names</dt><dd>{}</dd>",
            p.t(&ranks(&j.missing_ranks))
        );
    }
    if !j.silent_ranks.is_empty() {
        let _ = writeln!(
            o,
            "<dt>Ranks without a timeout</dt><dd>{}</dd>",
            p.t(&ranks(&j.silent_ranks))
        );
    }
    if let Some((rank, c)) = j.straggler {
        let _ = writeln!(
            o,
            "<dt>Straggler</dt><dd>rank {rank} (last completed collective {c})</dd>"
        );
    }
    let skews: Vec<String> = j
        .skew_s
        .iter()
        .filter(|(_, v)| v.abs() >= 1.0)
        .map(|(h, v)| format!("{h} {v:+.1} s"))
        .collect();
    if !skews.is_empty() {
        let _ = writeln!(o, "<dt>Clock skew</dt><dd>{}</dd>", p.t(&skews.join(", ")));
    }
    if let Some(w) = j.work_lost_s {
        let _ = writeln!(
            o,
            "<dt>Work lost</dt><dd>{}</dd>",
            timeline::human_span(w * 1_000_000)
        );
    }
    if let Some(e) = j.last_checkpoint.as_deref().and_then(|id| events.get(id)) {
        let _ = writeln!(
            o,
            "<dt>Last checkpoint</dt><dd>{} {}:{}</dd>",
            p.event_link(&e.id, &p.t(&when(e))),
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

/// What to attach to the ticket: per affected host the bug report and the kernel log (marked when
/// they are already among the inputs), plus what the incidents say is missing.
pub(super) fn attach(p: &Page, r: &Report, o: &mut String) {
    let _ = writeln!(o, r#"<section id="attach"><h2>What to attach</h2>"#);
    // the host of each primary fault (the one a vendor needs), else the incident's few hosts
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
    let _ = writeln!(o, "<ul>");
    if unnamed {
        let _ = writeln!(
            o,
            "<li><code>nvidia-bug-report.log.gz</code> of the host these lines came from (its name is in no line: pass <code>PATH@HOST</code>)</li>"
        );
    }
    for h in &hosts {
        let _ = writeln!(
            o,
            "<li><code>nvidia-bug-report.log.gz</code> of {} (<code>sudo nvidia-bug-report.sh</code>, before a reboot when possible){}</li>",
            p.t(h),
            if has(h, &["bug_report"]) { " — already among the inputs" } else { "" }
        );
        if !has(
            h,
            &["dmesg", "syslog", "journal", "journal_json", "bug_report"],
        ) {
            let _ = writeln!(
                o,
                "<li>the kernel log of {} for the incident window (<code>journalctl -k</code> of that boot, or <code>/var/log/kern.log</code>)</li>",
                p.t(h)
            );
        }
    }
    if r.incidents
        .iter()
        .any(|i| i.root_cause.layer == "interconnect")
    {
        let _ = writeln!(o, "<li>the fabric manager log (<code>/var/log/fabricmanager.log</code>) of the NVSwitch hosts</li>");
    }
    for m in union(r.incidents.iter().flat_map(|i| i.missing_data.iter())) {
        let _ = writeln!(o, "<li>{}</li>", p.t(&m));
    }
    let _ = writeln!(
        o,
        "<li>this report, and the JSON report of the same inputs (<code>faultline analyze --format json</code>) for tooling</li>\n</ul>\n</section>"
    );
}
