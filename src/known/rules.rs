//! Version rules checked on the versions alone: two components that must carry the same version
//! (fabric manager and driver), and the driver a CUDA runtime needs (the `[[cuda_driver]]`
//! table). A broken rule is a finding of its own: an incident whose evidence is the version
//! lines, or, when no line gave the versions (an nvidia-smi dump), a match joined to nothing.

use super::facts::{Fact, Facts, HostFacts};
use super::matcher::{finding, KnownMatch, Status};
use super::version::Version;
use super::{Known, KnownSet};
use crate::incidents::Incident;
use crate::timeline::Event;

/// Checks every rule entry on every host's versions.
pub(super) fn version_rules(
    set: &KnownSet,
    facts: &Facts,
    events: &[Event],
    incidents: &mut Vec<Incident>,
    out: &mut Vec<KnownMatch>,
) {
    let hosts: Vec<String> = facts.0.keys().cloned().collect();
    let named = hosts.iter().any(|h| !h.is_empty());
    for k in set.entries.iter().filter(|k| k.entry.rule.is_some()) {
        for h in &hosts {
            if h.is_empty() && named {
                continue;
            }
            let host = (!h.is_empty()).then_some(h.as_str());
            let hf = facts.of(host);
            let Some((version, used)) = broken(k, set, &hf) else {
                continue;
            };
            // a line already matched says the same: no second finding
            if out
                .iter()
                .any(|m| m.id == k.entry.id && m.host.as_deref() == host)
            {
                continue;
            }
            let mut m = KnownMatch {
                id: k.entry.id.clone(),
                component: k.entry.component.clone(),
                summary: k.entry.summary.clone(),
                affected: k.entry.affected.clone(),
                fixed_in: k.entry.fixed_in.clone(),
                workaround: k.entry.workaround.clone(),
                source: k.entry.source.clone(),
                status: Status::Incompatible,
                version,
                version_source: Some(
                    used.iter()
                        .map(|f| f.origin.clone())
                        .collect::<Vec<_>>()
                        .join(", "),
                ),
                events: used.iter().filter_map(|f| f.event).collect(),
                host: host.map(str::to_string),
                incident: None,
            };
            m.events.dedup();
            if !m.events.is_empty() {
                let mut inc = finding(&m, events);
                inc.actions.push(super::matcher::action(&m));
                incidents.push(inc);
                m.incident = Some(incidents.len() - 1);
            }
            out.push(m);
        }
    }
}

/// The versions that break rule `k` on one host, as shown, and the facts used.
pub(super) fn broken(k: &Known, set: &KnownSet, hf: &HostFacts) -> Option<(String, Vec<Fact>)> {
    match k.entry.rule.as_deref()? {
        "same_version" => {
            let [a, b] = k.entry.differ.as_slice() else {
                return None;
            };
            let (fa, fb) = (hf.versions.get(a)?, hf.versions.get(b)?);
            (fa.version != fb.version).then(|| {
                (
                    format!("{a} {}, {b} {}", fa.text, fb.text),
                    vec![fa.clone(), fb.clone()],
                )
            })
        }
        "cuda_min_driver" => cuda_driver(set, hf),
        _ => None,
    }
}

/// A CUDA runtime the driver cannot run: below the minimum driver of minor-version
/// compatibility for its major version (the runtime fails to initialize; only the
/// forward-compatibility package lifts it, on data center GPUs).
fn cuda_driver(set: &KnownSet, hf: &HostFacts) -> Option<(String, Vec<Fact>)> {
    let rt = hf.versions.get("cuda_runtime")?;
    let drv = hf.versions.get("driver")?;
    let key = Version(rt.version.0.iter().take(2).copied().collect());
    let row = set
        .cuda
        .iter()
        .find(|r| Version::parse(&r.cuda).is_some_and(|c| c == key))?;
    let floor = Version::parse(&row.minor_compat_driver)?;
    (drv.version < floor).then(|| {
        (
            format!(
                "CUDA runtime {} on driver {}: CUDA {} needs driver {} or newer ({} for every feature)",
                rt.text, drv.text, row.cuda, row.minor_compat_driver, row.min_driver
            ),
            vec![rt.clone(), drv.clone()],
        )
    })
}
