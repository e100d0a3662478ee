//! Text for terminals: the bundle list of `scan --list`, and the fleet table of `scan` and
//! `merge` (bundles with findings, layers, codes, repeat offenders, drivers).

use super::bundle::BundleLine;
use super::discovery::Bundle;
use super::summary::FleetSummary;
use crate::words::{counted, counted_as};
// every string that comes from an input (bundle and file names, hosts, GPU ids, drivers,
// summaries, warnings) goes through `t` (terminal_safe) before it is written
use crate::report::terminal_safe as t;
use std::fmt::Write;

/// `1.5 MB` style sizes (decimal units, as the rates of the benchmark script).
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "kB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut u = 0;
    while v >= 1000.0 && u < UNITS.len() - 1 {
        v /= 1000.0;
        u += 1;
    }
    if u == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[u])
    }
}

/// The `--list` output: one row per bundle (name, kind, host its path names, files, size,
/// shard key), then its files indented.
pub fn render_list(bundles: &[Bundle]) -> String {
    let mut s = String::new();
    for b in bundles {
        let _ = writeln!(
            s,
            "{}\t{}\t{}\t{}\t{}\tkey={}",
            t(&b.name),
            b.kind.as_str(),
            t(b.host_hint.as_deref().unwrap_or("-")),
            counted(b.files.len() as u64, "file"),
            human_bytes(b.disk_bytes),
            t(&b.key)
        );
        if let Some(e) = &b.error {
            let _ = writeln!(s, "    ! {}", t(&e.to_string()));
        }
        for f in &b.files {
            let _ = writeln!(s, "    {}", t(&f.display().to_string()));
        }
    }
    let total: u64 = bundles.iter().map(|b| b.disk_bytes).sum();
    let files: usize = bundles.iter().map(|b| b.files.len()).sum();
    let _ = writeln!(
        s,
        "{}, {}, {}",
        counted(bundles.len() as u64, "bundle"),
        counted(files as u64, "file"),
        human_bytes(total)
    );
    s
}

fn codes_text(codes: &std::collections::BTreeMap<String, u64>) -> String {
    let mut v: Vec<(&String, &u64)> = codes.iter().collect();
    v.sort_by(|a, b| b.1.cmp(a.1).then_with(|| a.0.cmp(b.0)));
    v.iter()
        .take(4)
        .map(|(k, n)| format!("{}×{n}", t(k)))
        .collect::<Vec<_>>()
        .join(" ")
}

fn bundle_rows(s: &mut String, lines: &[BundleLine]) {
    let failing: Vec<&BundleLine> = lines.iter().filter(|l| l.failing()).collect();
    let unreadable: Vec<&BundleLine> = lines.iter().filter(|l| l.unreadable).collect();
    if !failing.is_empty() {
        let _ = writeln!(s, "\nBundles with findings ({}):", failing.len());
        let w = failing
            .iter()
            .map(|l| t(&l.bundle).chars().count())
            .max()
            .unwrap_or(0)
            .min(60);
        for l in failing {
            let _ = writeln!(
                s,
                "  {:<w$}  {:<16} {:<15} {}",
                t(&l.bundle),
                t(l.host.as_deref().unwrap_or("-")),
                l.verdict.root_cause_layer,
                t(&l.verdict.summary)
            );
        }
    }
    if !unreadable.is_empty() {
        let _ = writeln!(s, "\nUnreadable bundles ({}):", unreadable.len());
        for l in unreadable {
            let why = l.warnings.first().map(String::as_str).unwrap_or("");
            let _ = writeln!(s, "  {}  {}", t(&l.bundle), t(why));
        }
    }
}

/// The fleet table; `lines` (may be empty) adds the bundles with findings.
pub fn render_summary(f: &FleetSummary, lines: &[BundleLine]) -> String {
    let mut s = String::new();
    let _ = writeln!(
        s,
        "faultline {} — fleet: {} from {}{}: {} with findings, {} clean, {} unreadable, {} with warnings",
        f.tool.version,
        counted(f.bundles, "bundle"),
        counted(f.hosts, "host"),
        f.shard.as_ref().map(|x| format!(" (shard {x})")).unwrap_or_default(),
        f.failing,
        f.clean,
        f.unreadable,
        f.with_warnings
    );
    let _ = writeln!(
        s,
        "{}, {} read, {} on disk",
        counted(f.inputs, "input"),
        human_bytes(f.bytes),
        human_bytes(f.disk_bytes)
    );
    bundle_rows(&mut s, lines);
    layers_and_codes(&mut s, f);
    offenders(&mut s, f);
    drivers(&mut s, f);
    known(&mut s, f);
    s
}

/// The known issues matched per bundle, and the hosts their versions expose.
fn known(s: &mut String, f: &FleetSummary) {
    if f.known_issues.is_empty() {
        return;
    }
    let _ = writeln!(
        s,
        "\nKnown issues (bundles matched, bundles on affected versions):"
    );
    for k in &f.known_issues {
        let exposed = if k.exposed_hosts.is_empty() {
            String::new()
        } else {
            format!("  not fired yet on: {}", t(&k.exposed_hosts.join(", ")))
        };
        let _ = writeln!(
            s,
            "  {:<44} {:>6} {:>6}{exposed}",
            t(&k.id),
            k.matched,
            k.affected
        );
    }
}

/// The root-cause layers and the most frequent codes, with their counts.
fn layers_and_codes(s: &mut String, f: &FleetSummary) {
    if !f.layers.is_empty() {
        let _ = writeln!(s, "\nRoot-cause layers (bundles, hosts):");
        for l in &f.layers {
            let _ = writeln!(s, "  {:<16} {:>6} {:>6}", l.layer, l.bundles, l.hosts);
        }
    }
    if !f.codes.is_empty() {
        let _ = writeln!(s, "\nMost frequent codes (bundles, events, hosts):");
        for c in &f.codes {
            let _ = writeln!(
                s,
                "  {:<24} {:>6} {:>8} {:>6}",
                t(&c.code),
                c.bundles,
                c.events,
                c.hosts
            );
        }
    }
}

/// The repeat-offender GPUs (RMA candidates) and nodes.
fn offenders(s: &mut String, f: &FleetSummary) {
    let _ = writeln!(
        s,
        "\nRepeat-offender GPUs, RMA candidates ({} of {} GPUs with failures):",
        f.gpus.len(),
        f.failing_gpus
    );
    if f.gpus.is_empty() {
        let _ = writeln!(s, "  none");
    }
    for g in &f.gpus {
        let id = g
            .serials
            .first()
            .map(|x| format!("serial {x}"))
            .or_else(|| g.uuids.first().cloned())
            .unwrap_or_else(|| "(no serial or UUID)".into());
        let id = t(&id);
        let _ = writeln!(
            s,
            "  {id:<24} {} {}  {} in {}  {}",
            t(&g.hosts.join(",")),
            t(&g.bus_ids.join(",")),
            counted(g.occasions, "occasion"),
            counted(g.bundles.len() as u64, "bundle"),
            codes_text(&g.codes)
        );
    }
    let _ = writeln!(s, "\nRepeat-offender nodes:");
    if f.nodes.is_empty() {
        let _ = writeln!(s, "  none");
    }
    for n in &f.nodes {
        let _ = writeln!(
            s,
            "  {:<24} {}, {}, {} with failures  {}",
            t(&n.host),
            counted(n.occasions, "occasion"),
            counted_as(n.failing, "failing bundle", "failing bundles"),
            counted(n.gpus, "GPU"),
            codes_text(&n.layers)
        );
    }
}

/// The drivers with their fault rates, flagged where faults cluster.
fn drivers(s: &mut String, f: &FleetSummary) {
    let _ = writeln!(
        s,
        "\nDrivers (bundles, failing, rate){}:",
        if f.drivers_unknown > 0 {
            format!(
                "; {} none",
                counted_as(f.drivers_unknown, "bundle names", "bundles name")
            )
        } else {
            String::new()
        }
    );
    for d in &f.drivers {
        let mut flags = Vec::new();
        if d.cluster {
            flags.push("faults cluster here".to_string());
        }
        if !d.layer_clusters.is_empty() {
            flags.push(format!("{} cluster here", d.layer_clusters.join(", ")));
        }
        let _ = writeln!(
            s,
            "  {:<16} {:>6} {:>6} {:>6.1}%  {}{}",
            t(&d.version),
            d.bundles,
            d.failing,
            d.fault_rate * 100.0,
            codes_text(&d.layers),
            if flags.is_empty() {
                String::new()
            } else {
                format!("  <- {}", flags.join("; "))
            }
        );
    }
}
