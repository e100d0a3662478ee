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
    let Some((class, rest)) = class_of(&body[pos + 5..]) else {
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
    if let Some(s) = source_device(src_text) {
        d.attrs.insert("device", s);
    }
    if body[..pos].trim_start().starts_with("nvidia ") {
        d.gpu = reporter.as_deref().map(Into::into);
    }
    details(rec, body[..pos].trim_end(), &mut d);
    out.push(d);
    true
}

/// The class of a header (`corrected`, `non_fatal`, `fatal`) and the text after its word.
fn class_of(head: &str) -> Option<(&'static str, &str)> {
    let head = head.strip_prefix("Multiple ").unwrap_or(head);
    if let Some(r) = head
        .strip_prefix("Corrected")
        .or_else(|| head.strip_prefix("Correctable"))
    {
        return Some(("corrected", r));
    }
    let r = head
        .strip_prefix("Uncorrected")
        .or_else(|| head.strip_prefix("Uncorrectable"))?;
    Some((
        if r.starts_with(" (Fatal)") {
            "fatal"
        } else {
            "non_fatal"
        },
        r,
    ))
}

/// The device that sent the error: a requester id (`id=0010`) or a bus id.
fn source_device(src_text: &str) -> Option<String> {
    if let Some(id) = src_text.strip_prefix("id=") {
        aer_requester_id(
            id.split(|c: char| !c.is_ascii_hexdigit())
                .next()
                .unwrap_or(""),
        )
    } else {
        src_text.split_whitespace().next().and_then(normalize_bdf)
    }
}

/// The type and error bits from the detail lines that follow the header with its prefix (up to
/// the next header).
fn details(rec: &Record<'_>, prefix: &str, d: &mut Draft) {
    for line in rec.following.iter().take(6) {
        let Some(i) = line.find(prefix) else {
            break;
        };
        let detail = &line[i + prefix.len()..];
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
}
