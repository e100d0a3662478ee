//! `faultline explain`: what a code or event kind means, its layer and what to do.

use crate::catalog::Catalog;
use std::fmt::Write;

/// Explains `xid N`, `sxid N`, `kind NAME` (or a bare kind name); None when unknown.
pub fn explain(catalog: &Catalog, what: &str, code: Option<&str>) -> Option<String> {
    let mut o = String::new();
    match (what, code) {
        ("xid", Some(c)) => {
            let x = catalog.xid.get(&c.parse().ok()?)?;
            let _ = writeln!(o, "Xid {} — {} ({})", x.code, x.title, x.mnemonic);
            let _ = writeln!(o, "{}", x.meaning);
            let _ = writeln!(
                o,
                "layer: {}   severity: {}   who acts: {}",
                x.layer.as_str(),
                x.severity.as_str(),
                x.responsibility
            );
            let _ = writeln!(
                o,
                "NVIDIA resolution: immediate {} → investigatory {}",
                or_dash(&x.immediate),
                or_dash(&x.investigatory)
            );
            if !x.legacy_causes.is_empty() {
                let _ = writeln!(o, "legacy causes: {}", x.legacy_causes.join(", "));
            }
            let flags: Vec<&str> = [
                (x.sympathetic, "usually a consequence of another fault"),
                (x.sticky, "sticky: keeps an incident open longer"),
            ]
            .iter()
            .filter(|f| f.0)
            .map(|f| f.1)
            .collect();
            if !flags.is_empty() {
                let _ = writeln!(o, "{}", flags.join("; "));
            }
            if !x.other_tools.is_empty() {
                let _ = writeln!(o, "other tools: {}", x.other_tools);
            }
            actions(&mut o, &x.actions);
        }
        ("sxid", Some(c)) => {
            let n: i64 = c.parse().ok()?;
            let x = catalog.sxid.get(&n)?;
            let _ = writeln!(o, "SXid {n} — {} ({})", x.title, x.name);
            let _ = writeln!(o, "{}", x.meaning);
            let _ = writeln!(
                o,
                "fatality: {}   layer: {}   severity: {}",
                x.fatality,
                x.layer.as_str(),
                x.severity.as_str()
            );
            if !x.other_tools.is_empty() {
                let _ = writeln!(o, "other tools: {}", x.other_tools);
            }
            actions(&mut o, &x.actions);
        }
        ("kind", Some(k)) | (k, None) => {
            let x = catalog.kind.get(k)?;
            let _ = writeln!(o, "{} — {}", x.kind, x.title);
            let _ = writeln!(o, "{}", x.meaning);
            let _ = writeln!(
                o,
                "layer: {}   severity: {}   who acts: {}",
                x.layer.as_str(),
                x.severity.as_str(),
                x.responsibility
            );
            actions(&mut o, &x.actions);
        }
        _ => return None,
    }
    Some(o)
}

fn or_dash(s: &str) -> &str {
    if s.is_empty() {
        "-"
    } else {
        s
    }
}

fn actions(o: &mut String, a: &[String]) {
    if !a.is_empty() {
        let _ = writeln!(o, "what to do:");
        for x in a {
            let _ = writeln!(o, "  - {x}");
        }
    }
}
