//! A collect bundle read back: the manifest's host holds for every member of its archive (or
//! of its folder, when the bundle was unpacked) that names no host itself, and its coverage
//! gaps become notes of the report (`x.tar.zst: no fabric manager log: nvidia-fabricmanager is
//! not installed …`). The capture time and zone are used by the timeline through the
//! manifest's bundle facts, as a bug report's are.

use crate::pipeline::InputResult;
use crate::words::counted;

/// The tool name a collect manifest's bundle facts carry.
const TOOL: &str = "faultline collect";

/// Where the members of a manifest's bundle are: `x.tar.zst!` for an archive, `dir/` for a
/// folder, `""` for a manifest given alone.
fn scope(path: &str) -> String {
    match path.rsplit_once('!') {
        Some((archive, _)) => format!("{archive}!"),
        None => path
            .rsplit_once('/')
            .map_or_else(String::new, |(dir, _)| format!("{dir}/")),
    }
}

/// Gives the members of each collect bundle its manifest's host, and returns the notes that
/// name the bundle's coverage gaps.
pub fn apply(inputs: &mut [InputResult]) -> Vec<String> {
    let manifests: Vec<(String, String, Vec<String>, Option<String>)> = inputs
        .iter()
        .filter_map(|r| {
            let b = r
                .bundle
                .as_ref()
                .filter(|b| b.capture.as_deref() == Some(TOOL))?;
            let host = b.host.clone()?;
            let at = b
                .captured
                .map(|c| crate::fleet::bundle::iso_s(c.naive_secs - c.offset.unwrap_or(0) as i64));
            Some((scope(&r.path), host, b.coverage_gaps.clone(), at))
        })
        .collect();
    let mut notes = Vec::new();
    for (scope, host, gaps, at) in manifests {
        for r in inputs.iter_mut().filter(|r| r.path.starts_with(&scope)) {
            let own = r
                .bundle
                .as_ref()
                .is_some_and(|b| b.capture.as_deref() == Some(TOOL));
            if r.host.is_none() || own {
                r.host = Some(host.clone());
            }
        }
        let name = scope.trim_end_matches(['!', '/']);
        let name = if name.is_empty() {
            "manifest.json"
        } else {
            name
        };
        notes.push(format!(
            "{name}: faultline collect bundle of {host}, captured {}; {} missing",
            at.as_deref().unwrap_or("at an unknown time"),
            counted(gaps.len() as u64, "item")
        ));
        notes.extend(gaps.iter().map(|g| format!("{name}: {g}")));
    }
    notes
}

#[cfg(test)]
mod tests {
    #[test]
    fn scopes() {
        assert_eq!(super::scope("b/x.tar.zst!manifest.json"), "b/x.tar.zst!");
        assert_eq!(super::scope("b/node/manifest.json"), "b/node/");
        assert_eq!(super::scope("manifest.json"), "");
    }
}
