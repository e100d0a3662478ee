//! The known issues of the report: each incident's `known_issues`, and the report's own for the
//! matches that joined no incident (a harmless message, a version rule read from a dump).

use super::KnownIssueJson;
use crate::known::KnownMatch;
use crate::Analysis;

/// One match as the report shows it.
pub(super) fn known_json(a: &Analysis, m: &KnownMatch) -> KnownIssueJson {
    KnownIssueJson {
        id: m.id.clone(),
        component: m.component.clone(),
        summary: m.summary.clone(),
        affected: m.affected.clone(),
        fixed_in: m.fixed_in.clone(),
        source: m.source.clone(),
        status: m.status.as_str(),
        version: m.version.clone(),
        version_source: m.version_source.clone(),
        workaround: m.workaround.clone(),
        evidence: m.events.iter().map(|&i| a.events[i].id_text()).collect(),
    }
}

/// The matches that joined incident `at`.
pub(super) fn of_incident(a: &Analysis, at: usize) -> Vec<KnownIssueJson> {
    a.known
        .iter()
        .filter(|m| m.incident == Some(at))
        .map(|m| known_json(a, m))
        .collect()
}

/// The matches that joined no incident.
pub(super) fn unattached(a: &Analysis) -> Vec<KnownIssueJson> {
    a.known
        .iter()
        .filter(|m| m.incident.is_none())
        .map(|m| known_json(a, m))
        .collect()
}
