//! PCIe AER reports (`drivers/pci/pcie/aer.c`): one event per `AER: … error received` header, with
//! the severity, type and error bits read from the detail lines that follow it.

use super::{Draft, Record};
use crate::ids::{aer_requester_id, normalize_bdf};
use crate::model::Severity;

/// Parses an AER header and its detail lines.
pub fn aer_drafts(rec: &Record<'_>, out: &mut Vec<Draft>) -> bool {
    let body = rec.body;
    let Some(pos) = body.find("AER: ") else {
        return false;
    };
    let head = &body[pos + 5..];
    let head = head.strip_prefix("Multiple ").unwrap_or(head);
    let (class, rest) = if let Some(r) = head
        .strip_prefix("Corrected")
        .or_else(|| head.strip_prefix("Correctable"))
    {
        ("corrected", r)
    } else if let Some(r) = head
        .strip_prefix("Uncorrected")
        .or_else(|| head.strip_prefix("Uncorrectable"))
    {
        if r.starts_with(" (Fatal)") {
            ("fatal", r)
        } else {
            ("non_fatal", r)
        }
    } else {
        return false;
    };
    let Some(recv) = rest.find("received") else {
        return false;
    };
    let src_text = rest[recv + 8..]
        .trim_start_matches([':', ' '])
        .trim_start_matches("from ")
        .trim();
    let mut d = Draft::new("pcie_aer");
    d.severity = Some(match class {
        "corrected" => Severity::Warning,
        "fatal" => Severity::Critical,
        _ => Severity::Error,
    });
    d.attrs.insert("severity", class.into());
    // reporter: `pcieport 0000:00:02.0: AER: …`
    let reporter = body[..pos]
        .split_whitespace()
        .nth(1)
        .and_then(normalize_bdf);
    if let Some(r) = &reporter {
        d.attrs.insert("reporter", r.clone());
    }
    let source = if let Some(id) = src_text.strip_prefix("id=") {
        aer_requester_id(
            id.split(|c: char| !c.is_ascii_hexdigit())
                .next()
                .unwrap_or(""),
        )
    } else {
        src_text.split_whitespace().next().and_then(normalize_bdf)
    };
    if let Some(s) = &source {
        d.attrs.insert("device", s.clone());
    }
    if body[..pos].trim_start().starts_with("nvidia ") {
        d.gpu = reporter.as_deref().map(Into::into);
    }
    let prefix = &body[..pos];
    for line in rec.following.iter().take(6) {
        let Some(i) = line.find(prefix.trim_end()) else {
            break;
        };
        let detail = &line[i + prefix.trim_end().len()..];
        if detail.contains("AER: ") && detail.contains("received") {
            break;
        }
        if let Some(t) = super::xid::between(detail, "type=", ",") {
            d.attrs.insert("type", t.to_string());
        }
        let dt = detail.trim();
        if let Some(close) = dt
            .strip_prefix('[')
            .and_then(|r| r.find(']').map(|c| &r[c + 1..]))
        {
            let name = close.trim().trim_end_matches("(First)").trim();
            if !name.is_empty() {
                let errors = match d.attrs.get("errors") {
                    Some(e) if !e.is_empty() => format!("{e}, {name}"),
                    _ => name.to_string(),
                };
                d.attrs.insert("errors", errors);
            }
        }
    }
    out.push(d);
    true
}
