//! The `manifest.json` of a `faultline collect` bundle: no log lines, but the bundle's host,
//! capture time, zone, kernel and coverage gaps, kept as a bug report's are
//! ([`crate::collect::manifest::Manifest::bundle_info`]).

use super::Parsed;
use crate::collect::manifest;

/// Reads a collect manifest; one that does not parse is a warning, and nothing else.
pub fn read(buf: &[u8], warnings: &mut Vec<String>) -> Parsed {
    let mut p = Parsed {
        bytes: buf.len() as u64,
        ..Parsed::default()
    };
    match manifest::parse(buf) {
        Some(m) => p.bundle = Some(m.bundle_info()),
        None => warnings.push(format!(
            "a {} manifest that does not parse: the bundle's host, capture time and gaps are unknown",
            manifest::SCHEMA
        )),
    }
    p
}
