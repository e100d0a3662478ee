//! Firmware error records (APEI GHES and BERT, printed by `drivers/firmware/efi/cper.c`): the
//! lines of one record share its `{N}[Hardware Error]: ` tag (GHES) or carry a bare
//! `[Hardware Error]: ` (BERT, the previous boot's records), and other lines may come between
//! them. One draft per error section: a PCIe section is `pcie_aer` on its device, a memory
//! section `memory_error`, a processor section `mce`; a record without a known section is `mce`.

use super::{Draft, Record};
use crate::formats::parse_head;
use crate::ids::normalize_bdf;
use crate::model::Severity;

/// The most lines after the header that one record may span.
pub const MAX_RECORD_LINES: usize = 64;

const HW: &str = "[Hardware Error]: ";
const GHES_HEAD: &str = "Hardware error from APEI Generic Hardware Error Source:";

/// One error section being read.
#[derive(Default)]
struct Section {
    kind: Option<&'static str>,
    severity: Option<String>,
    attrs: Vec<(&'static str, String)>,
}

/// The record tag (`{1}`) and the text after `[Hardware Error]: `, or `None` for other lines.
fn split_tag(msg: &str) -> Option<(&str, &str)> {
    let msg = msg.trim_start();
    let at = msg.find(HW)?;
    let tag = &msg[..at];
    let ok = tag.is_empty()
        || (tag.len() > 2
            && tag.starts_with('{')
            && tag.ends_with('}')
            && tag[1..tag.len() - 1].bytes().all(|c| c.is_ascii_digit()));
    ok.then(|| (tag, &msg[at + HW.len()..]))
}

/// True when a message (after its prefix) is a line of a firmware error record with a record tag
/// (`{1}[Hardware Error]: ...`), read into the record's event by its header.
pub fn is_record_line(msg: &str) -> bool {
    split_tag(msg).is_some_and(|(tag, _)| !tag.is_empty())
}

/// Severity of the CPER words (`corrected` is a warning wherever the fault is read).
pub fn severity_of(word: &str) -> Severity {
    match word.trim().to_ascii_lowercase().as_str() {
        "corrected" => Severity::Warning,
        "info" | "informational" => Severity::Info,
        "fatal" => Severity::Critical,
        _ => Severity::Error,
    }
}

/// Parses a record header (the GHES `Hardware error from APEI` line, or a BERT record's untagged
/// `event severity:` line) and the record's other lines among the following ones.
pub fn cper_drafts(rec: &Record<'_>, out: &mut Vec<Draft>) -> bool {
    let Some((tag, text)) = split_tag(rec.body) else {
        return false;
    };
    let ghes = text.starts_with(GHES_HEAD);
    let bert = tag.is_empty() && text.starts_with("event severity:");
    // an untagged `event severity` right after an untagged GHES header is that record's line
    let after_head = rec
        .preceding
        .last()
        .is_some_and(|p| p.contains(GHES_HEAD) && !p.contains("}[Hardware Error]"));
    let bert = bert && !after_head;
    if !ghes && !bert {
        return false;
    }
    let mut event_severity = if bert {
        value(text, "event severity:")
    } else {
        None
    };
    let mut sections: Vec<Section> = Vec::new();
    for line in rec.following.iter().take(MAX_RECORD_LINES) {
        let head = parse_head(line.as_bytes());
        let msg = &line[head.msg_start.min(line.len())..];
        let Some((t, rest)) = split_tag(msg) else {
            if tag.is_empty() {
                break;
            }
            continue;
        };
        if t != tag {
            continue;
        }
        if rest.starts_with(GHES_HEAD) || (bert && rest.starts_with("event severity:")) {
            break;
        }
        read_line(rest.trim(), &mut event_severity, &mut sections);
    }
    if sections.is_empty() {
        sections.push(Section::default());
    }
    for s in sections {
        let sev = s.severity.clone().or_else(|| event_severity.clone());
        let mut d = Draft::new(s.kind.unwrap_or("mce"));
        d.severity = Some(sev.as_deref().map_or(Severity::Error, severity_of));
        d.attrs
            .insert("source", if bert { "bert" } else { "ghes" }.into());
        if let Some(v) = sev {
            d.attrs.insert("severity", v);
        }
        for (k, v) in s.attrs {
            d.attrs.insert_if_absent(k, &v);
        }
        if d.attrs.get("vendor_id").is_some_and(|v| v == "0x10de") {
            d.gpu = d.attrs.get("device").map(Into::into);
        }
        out.push(d);
    }
    true
}

fn value(text: &str, key: &str) -> Option<String> {
    text.strip_prefix(key)
        .map(|v| v.trim().to_string())
        .filter(|v| !v.is_empty())
}

/// One line of a record: section starts, section types and the fields worth keeping.
fn read_line(t: &str, event_severity: &mut Option<String>, sections: &mut Vec<Section>) {
    if let Some(v) = value(t, "event severity:") {
        *event_severity = Some(v);
        return;
    }
    if let Some(rest) = t.strip_prefix("Error ") {
        if let Some((_, ty)) = rest.split_once(", type: ") {
            sections.push(Section {
                severity: Some(ty.trim().to_string()),
                ..Section::default()
            });
            return;
        }
    }
    if sections.is_empty() {
        sections.push(Section::default());
    }
    let Some(s) = sections.last_mut() else { return };
    if let Some(ty) = t
        .strip_prefix("section_type: ")
        .or_else(|| t.strip_prefix("section type: "))
    {
        let ty = ty.trim();
        s.kind = Some(match ty {
            "PCIe error" | "CXL Protocol Error" => "pcie_aer",
            "memory error" => "memory_error",
            _ => "mce",
        });
        s.attrs.push(("section", ty.to_string()));
        return;
    }
    if let Some(v) = t.strip_prefix("device_id: ") {
        if let Some(bdf) = normalize_bdf(v) {
            s.attrs.push(("device", bdf));
            return;
        }
    }
    if let Some(v) = t.strip_prefix("vendor_id: ") {
        let (vendor, dev) = v.split_once(", device_id: ").unwrap_or((v, ""));
        s.attrs.push(("vendor_id", vendor.trim().to_string()));
        if !dev.is_empty() {
            s.attrs.push(("device_ids", dev.trim().to_string()));
        }
        return;
    }
    for key in [
        "port_type",
        "physical_address",
        "error_type",
        "fru_text",
        "processor_type",
        "aer_uncor_status",
        "aer_cor_status",
        "error_status",
    ] {
        if let Some(v) = t.strip_prefix(key).and_then(|r| r.strip_prefix(": ")) {
            let k: &'static str = key;
            s.attrs.push((k, v.trim().to_string()));
            return;
        }
    }
    if t.starts_with("node:") || t.contains(" DIMM") || t.starts_with("DIMM location:") {
        s.attrs.push(("location", t.to_string()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn drafts(lines: &[&str]) -> Vec<Draft> {
        let head = parse_head(lines[0].as_bytes());
        let body = &lines[0][head.msg_start..];
        let following: Vec<String> = lines[1..].iter().map(|s| s.to_string()).collect();
        let rec = Record {
            full: lines[0],
            body,
            preceding: &[],
            following: &following,
            rank: None,
        };
        let mut out = Vec::new();
        cper_drafts(&rec, &mut out);
        out
    }

    #[test]
    fn ghes_pcie_section_with_an_interleaved_line() {
        let out = drafts(&[
            "[11219.196524] {1}[Hardware Error]: Hardware error from APEI Generic Hardware Error Source: 1",
            "[11219.196558] {1}[Hardware Error]: event severity: recoverable",
            "[11219.196576] {1}[Hardware Error]:  Error 0, type: recoverable",
            "[11219.196591] {1}[Hardware Error]:   section_type: PCIe error",
            "[11219.196653] {1}[Hardware Error]:   device_id: 0000:5e:00.0",
            "[11219.196673] mce: [Hardware Error]: Machine check events logged",
            "[11219.196684] {1}[Hardware Error]:   vendor_id: 0x144d, device_id: 0xa808",
            "[11219.196690] {2}[Hardware Error]:   vendor_id: 0x10de, device_id: 0x20b0",
        ]);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].kind, "pcie_aer");
        assert_eq!(out[0].severity, Some(Severity::Error));
        assert_eq!(&out[0].attrs["device"], "0000:5e:00.0");
        assert_eq!(&out[0].attrs["vendor_id"], "0x144d");
        assert_eq!(out[0].gpu, None);
    }

    #[test]
    fn bert_memory_and_processor_sections() {
        let out = drafts(&[
            "[    5.100000] [Hardware Error]: event severity: fatal",
            "[    5.100001] [Hardware Error]:  Error 0, type: fatal",
            "[    5.100002] [Hardware Error]:   section_type: memory error",
            "[    5.100003] [Hardware Error]:   physical_address: 0x0000004a3bc00000",
            "[    5.100004] [Hardware Error]:   error_type: 3, multi-bit ECC",
            "[    5.100005] [Hardware Error]:  Error 1, type: corrected",
            "[    5.100006] [Hardware Error]:   section_type: general processor error",
            "[    5.200000] ACPI: bus type PCI registered",
        ]);
        let kinds: Vec<(&str, Option<Severity>)> =
            out.iter().map(|d| (d.kind, d.severity)).collect();
        assert_eq!(
            kinds,
            vec![
                ("memory_error", Some(Severity::Critical)),
                ("mce", Some(Severity::Warning))
            ]
        );
        assert_eq!(&out[0].attrs["error_type"], "3, multi-bit ECC");
        assert_eq!(&out[0].attrs["source"], "bert");
    }

    #[test]
    fn tagged_detail_lines_are_not_headers() {
        assert!(drafts(&["{1}[Hardware Error]: event severity: corrected"]).is_empty());
        assert!(drafts(&["mce: [Hardware Error]: Machine check events logged"]).is_empty());
    }
}
