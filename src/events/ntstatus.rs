//! Windows NTSTATUS codes as process exit statuses, decoded with the `[[ntstatus]]` table of
//! data/ntstatus.toml: a `process_exit` whose status or code is one (`0xc0000409`,
//! `-1073741819`) gets its name, meaning and layer hint as details.

use super::Draft;
use crate::model::Layer;
use serde::Deserialize;

/// The NTSTATUS table (and the Windows exit recognizer) as shipped.
pub const BUILTIN_NTSTATUS: &str = include_str!("../../data/ntstatus.toml");

/// One NTSTATUS code.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct NtStatus {
    /// The 32-bit code (`0xC0000005`).
    pub code: u32,
    /// Its name in ntstatus.h (`STATUS_ACCESS_VIOLATION`).
    pub name: String,
    /// What it means for a process that exits with it.
    pub meaning: String,
    /// The layer it usually points at (a hint for the reader, not the event's layer).
    pub layer: Layer,
}

/// The 32-bit value of an exit status written in hex (`0xc0000409`) or as the signed decimal a
/// shell prints (`-1073741819`); only error-class codes (`0xC…`: severity error, not a customer
/// code, reserved bit clear) count, so a signal written as a negative exit code (`-6`, which is
/// `0xFFFFFFFA` as 32 bits) is not taken for one.
pub fn parse_status(text: &str) -> Option<u32> {
    let t = text.trim();
    let v = if let Some(h) = t.strip_prefix("0x").or_else(|| t.strip_prefix("0X")) {
        u32::from_str_radix(h, 16).ok()?
    } else {
        let n: i64 = t.parse().ok()?;
        if !(i32::MIN as i64..=u32::MAX as i64).contains(&n) {
            return None;
        }
        n as i32 as u32
    };
    (v >> 28 == 0xC).then_some(v)
}

/// Adds `ntstatus`, `meaning` and `layer_hint` to a `process_exit` draft whose `status` detail
/// or code is a known NTSTATUS (the last table entry for a code wins).
pub fn annotate(table: &[NtStatus], d: &mut Draft) {
    if d.kind != "process_exit" || table.is_empty() {
        return;
    }
    let value = d
        .attrs
        .get("status")
        .and_then(parse_status)
        .or_else(|| d.code.and_then(|c| parse_status(&c.to_string())));
    let Some(v) = value else { return };
    let Some(e) = table.iter().rev().find(|e| e.code == v) else {
        d.attrs.insert("ntstatus", format!("0x{v:08X}"));
        return;
    };
    d.attrs.insert("ntstatus", e.name.clone());
    d.attrs.insert("meaning", e.meaning.clone());
    d.attrs.insert("layer_hint", e.layer.as_str().to_string());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statuses_parse_in_hex_and_signed_decimal() {
        assert_eq!(parse_status("0xc0000409"), Some(0xC000_0409));
        assert_eq!(parse_status("-1073741819"), Some(0xC000_0005));
        assert_eq!(parse_status("0x00000001"), None);
        assert_eq!(parse_status("137"), None);
        // a signal as torchelastic prints it (`exitcode : -6`) is not an NTSTATUS
        assert_eq!(parse_status("-6"), None);
        assert_eq!(parse_status("-9"), None);
    }
}
