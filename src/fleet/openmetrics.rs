//! `scan --format openmetrics`: the fleet summary as Prometheus text exposition (OpenMetrics
//! text format, every family a gauge: one scan is a snapshot), fit for node_exporter's
//! textfile collector: incidents by layer, events per code, repeat-offender GPUs, bundles
//! scanned, failing and unreadable, and the scan's duration.

use super::bundle::BundleLine;
use super::summary::FleetSummary;
use crate::model::Layer;
use std::collections::BTreeMap;
use std::fmt::Write;
use std::time::Duration;

/// Escapes a label value: backslash, double quote and line feed.
fn label(v: &str) -> String {
    let mut o = String::with_capacity(v.len());
    for c in v.chars() {
        match c {
            '\\' => o.push_str("\\\\"),
            '"' => o.push_str("\\\""),
            '\n' => o.push_str("\\n"),
            c if c.is_control() => o.push(' '),
            c => o.push(c),
        }
    }
    o
}

/// One metric family: HELP, TYPE, then its samples (labels already rendered).
fn family(o: &mut String, name: &str, help: &str, samples: &[(String, f64)]) {
    let _ = writeln!(o, "# HELP {name} {help}");
    let _ = writeln!(o, "# TYPE {name} gauge");
    for (labels, v) in samples {
        if labels.is_empty() {
            let _ = writeln!(o, "{name} {v}");
        } else {
            let _ = writeln!(o, "{name}{{{labels}}} {v}");
        }
    }
}

fn labels(pairs: &[(&str, &str)]) -> String {
    pairs
        .iter()
        .map(|(k, v)| format!("{k}=\"{}\"", label(v)))
        .collect::<Vec<_>>()
        .join(",")
}

/// Renders the summary of `lines` (and the scan's duration, when known) as OpenMetrics text,
/// ending with `# EOF`. Deterministic: families and series in a fixed order.
pub fn render(s: &FleetSummary, lines: &[BundleLine], elapsed: Option<Duration>) -> String {
    let mut o = String::new();
    family(
        &mut o,
        "faultline_info",
        "The faultline build that wrote these metrics.",
        &[(labels(&[("version", &s.tool.version)]), 1.0)],
    );
    family(
        &mut o,
        "faultline_bundles_scanned",
        "Bundles scanned (bug reports, archives, host folders).",
        &[(String::new(), s.bundles as f64)],
    );
    family(
        &mut o,
        "faultline_bundles",
        "Bundles by result: failing (the verdict names a fault), clean, unreadable (nothing could be read).",
        &[
            (labels(&[("result", "failing")]), s.failing as f64),
            (labels(&[("result", "clean")]), s.clean as f64),
            (labels(&[("result", "unreadable")]), s.unreadable as f64),
        ],
    );
    family(
        &mut o,
        "faultline_bundles_with_warnings",
        "Bundles with at least one warning (corrupt, truncated or skipped input).",
        &[(String::new(), s.with_warnings as f64)],
    );
    let mut by_layer: BTreeMap<&str, u64> = Layer::ALL
        .iter()
        .filter(|l| **l != Layer::None)
        .map(|l| (l.as_str(), 0))
        .collect();
    for i in lines.iter().flat_map(|l| &l.incidents) {
        *by_layer.entry(i.layer.as_str()).or_default() += 1;
    }
    let samples: Vec<(String, f64)> = by_layer
        .iter()
        .map(|(l, n)| (labels(&[("layer", l)]), *n as f64))
        .collect();
    family(
        &mut o,
        "faultline_incidents",
        "Incidents by root-cause layer, over all bundles.",
        &samples,
    );
    code_families(&mut o, lines);
    gpu_family(&mut o, s);
    if let Some(d) = elapsed {
        family(
            &mut o,
            "faultline_scan_duration_seconds",
            "Wall time of the scan.",
            &[(String::new(), (d.as_secs_f64() * 1000.0).round() / 1000.0)],
        );
    }
    o.push_str("# EOF\n");
    o
}

/// Events and bundles per code (`xid:79`, `nccl_timeout`), every code of the lines.
fn code_families(o: &mut String, lines: &[BundleLine]) {
    let mut events: BTreeMap<&str, (u64, u64)> = BTreeMap::new();
    for l in lines {
        for (code, n) in &l.counts {
            let e = events.entry(code.as_str()).or_default();
            e.0 += n;
            e.1 += 1;
        }
    }
    let split = |code: &str| -> String {
        match code.split_once(':') {
            Some((kind, c)) => labels(&[("kind", kind), ("code", c)]),
            None => labels(&[("kind", code), ("code", "")]),
        }
    };
    let ev: Vec<(String, f64)> = events
        .iter()
        .map(|(c, (n, _))| (split(c), *n as f64))
        .collect();
    family(
        o,
        "faultline_code_events",
        "Events of severity warning or worse, by kind and code, over all bundles.",
        &ev,
    );
    let b: Vec<(String, f64)> = events
        .iter()
        .map(|(c, (_, n))| (split(c), *n as f64))
        .collect();
    family(
        o,
        "faultline_code_bundles",
        "Bundles that hold the code.",
        &b,
    );
}

/// Repeat-offender GPUs: failures and occasions, by serial (else UUID, else host and bus id).
fn gpu_family(o: &mut String, s: &FleetSummary) {
    let mut failures = Vec::new();
    let mut occasions = Vec::new();
    for g in &s.gpus {
        let first = |v: &[String]| v.first().cloned().unwrap_or_default();
        let l = labels(&[
            ("serial", &first(&g.serials)),
            ("uuid", &first(&g.uuids)),
            ("host", &first(&g.hosts)),
            ("bus_id", &first(&g.bus_ids)),
        ]);
        failures.push((l.clone(), g.failures as f64));
        occasions.push((l, g.occasions as f64));
    }
    family(
        o,
        "faultline_gpu_failures",
        "Failures of repeat-offender GPUs (RMA candidates), worst first.",
        &failures,
    );
    family(
        o,
        "faultline_gpu_failure_occasions",
        "Separate bundles or boots in which a repeat-offender GPU failed.",
        &occasions,
    );
}
