//! A report built by hand for unit tests of the renderers.

use crate::report::json::{
    EventJson, IncidentJson, Report, RootCauseJson, SourceJson, Tool, VerdictJson,
};
use std::collections::BTreeMap;

/// One Xid 13 event on GPU 0000:3b:00.0 of `host`, a second after the one before.
pub fn event(n: usize, host: String, sev: &'static str) -> EventJson {
    EventJson {
        id: format!("e{n}"),
        time: Some(crate::report::iso_us(
            1_773_454_387_000_000 + n as i64 * 1_000_000,
        )),
        time_quality: "exact",
        host: Some(host),
        source: SourceJson {
            path: "kern.log".into(),
            line: n as u64 + 1,
        },
        kind: "xid".into(),
        code: Some(13),
        gpu: Some("0000:3b:00.0".into()),
        gpu_uuid: None,
        rank: None,
        layer: "application",
        severity: sev,
        title: "Graphics engine exception".into(),
        message: format!("line {n}"),
        uptime_s: None,
        time_of_day: None,
        day_in_file: None,
        details: crate::model::Attrs::new(),
        also_seen: vec![],
        suppressed: 0,
    }
}

/// 150 hosts with one GPU lane each and 3200 events; the primary fault sits on the last host.
pub fn crowded() -> Report {
    let mut events: Vec<EventJson> = (0..3200)
        .map(|n| {
            let sev = if n % 2 == 0 { "info" } else { "error" };
            event(n, format!("node-{:03}", n % 150), sev)
        })
        .collect();
    events[3199].host = Some("node-zzz".into());
    Report {
        schema: "faultline/report/v1",
        tool: Tool {
            name: "faultline",
            version: "test",
        },
        inputs: vec![],
        incidents: vec![IncidentJson {
            id: "i1".into(),
            start: None,
            end: None,
            kind: "failure",
            hosts: vec![],
            gpus: vec![],
            ranks: vec![],
            root_cause: RootCauseJson {
                layer: "application",
                confidence: 0.5,
                summary: "s".into(),
                evidence: vec!["e3199".into()],
                responsibility: "user".into(),
                rule: None,
            },
            alternatives: vec![],
            actions: vec![],
            events: events
                .iter()
                .filter_map(|e| super::json::EventId::parse(&e.id))
                .collect(),
            consequences: BTreeMap::new(),
            counts: BTreeMap::new(),
            missing_data: vec![],
            slowdown: None,
            hang: None,
            known_issues: vec![],
        }],
        events,
        verdict: VerdictJson {
            root_cause_layer: "application",
            summary: "s".into(),
            leads: Vec::new(),
            leads_total: None,
        },
        hosts: vec![],
        gpus: vec![],
        job: None,
        notes: vec![],
        known_issues: vec![],
        accounting: Default::default(),
    }
}
