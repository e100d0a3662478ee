//! Raw events become timeline events: their settled times, short host names and GPU UUIDs, the
//! watchdog progress lines merged into their timeouts; GPU identities from the attachments.

use super::clock::Pending;
use super::{merge_attachments, short_host_str, Event};
use crate::model::{RawEvent, SourceRef, TimeQuality};
use crate::pipeline::InputResult;
use std::collections::BTreeMap;

/// GPU identities: (host, bus id) → (UUID, serial).
pub(super) type Identities = BTreeMap<(String, String), (Option<String>, Option<String>)>;

/// While raw events move to the timeline, their list gives its memory back this often.
const SHRINK_EVERY: usize = 1 << 15;

/// GPU identities from the `gpu_identity` attachments (a line without a bus id is the GPU of
/// the line before it).
pub(super) fn identities(results: &[InputResult]) -> Identities {
    let mut identities = Identities::new();
    for r in results {
        let mut last_gpu: Option<&str> = None;
        for a in r.attachments.iter().filter(|a| a.kind == "gpu_identity") {
            if let Some(g) = &a.gpu {
                last_gpu = Some(g);
            }
            let Some(g) = a.gpu.as_deref().or(last_gpu) else {
                continue;
            };
            let host = a.host.as_ref().or(r.host.as_ref()).cloned();
            let ent = identities
                .entry((host.unwrap_or_default(), g.to_string()))
                .or_default();
            if let Some(u) = a.attrs.get("uuid") {
                ent.0 = Some(u.to_string());
            }
            if let Some(s) = a.attrs.get("serial").or_else(|| a.attrs.get("serial2")) {
                ent.1 = Some(s.to_string());
            }
        }
    }
    identities
}

/// A host name shortened (see [`super::short_host`]) in the String it came in (no copy when it
/// is short already).
fn shorten(mut h: String) -> String {
    let n = short_host_str(&h).len();
    h.truncate(n);
    h
}

/// Moves every input's raw events to the timeline, in input order and line order within one
/// input. Grown in steps as the raw events' lists shrink (reserved whole up front, it would
/// stand beside them whole).
pub(super) fn assemble(
    results: &mut [InputResult],
    pend: Vec<Vec<Pending>>,
    identities: &Identities,
) -> Vec<Event> {
    // looked up per event by borrowed keys
    let uuids: crate::scan::FastMap<(&str, &str), &str> = identities
        .iter()
        .filter_map(|((h, g), (u, _))| Some(((h.as_str(), g.as_str()), u.as_deref()?)))
        .collect();
    let mut events: Vec<Event> = Vec::new();
    for (r, pv) in results.iter_mut().zip(pend) {
        let attachments = std::mem::take(&mut r.attachments);
        let from = events.len();
        move_input(r, pv, &uuids, &mut events);
        events[from..].reverse();
        merge_attachments(&mut events[from..], r.index, &attachments);
        r.attachments = attachments;
    }
    events
}

/// Moves one input's raw events onto `events`, from the back: the raw events' list shrinks as
/// the timeline's grows (the two are never both whole); the caller puts them back in line order.
fn move_input(
    r: &mut InputResult,
    mut pv: Vec<Pending>,
    uuids: &crate::scan::FastMap<(&str, &str), &str>,
    events: &mut Vec<Event>,
) {
    let mut raw = std::mem::take(&mut r.events);
    let input_host = r.host.as_deref().map(|h| short_host_str(h).to_string());
    while let (Some(e), Some(p)) = (raw.pop(), pv.pop()) {
        if raw.len() % SHRINK_EVERY == 0 {
            raw.shrink_to_fit();
            pv.shrink_to_fit();
        }
        if events.len() == events.capacity() {
            events.reserve_exact(SHRINK_EVERY.min(raw.len() + 1));
        }
        events.push(timeline_event(e, p, r, input_host.as_ref(), uuids));
    }
}

/// One raw event on the timeline (its id is given once the timeline is ordered).
fn timeline_event(
    e: RawEvent,
    p: Pending,
    r: &InputResult,
    input_host: Option<&String>,
    uuids: &crate::scan::FastMap<(&str, &str), &str>,
) -> Event {
    let host = match e.host {
        Some(h) => Some(shorten(h)),
        None => input_host.cloned(),
    };
    let gpu_uuid = match (&host, &e.gpu) {
        (Some(h), Some(g)) if !uuids.is_empty() => {
            uuids.get(&(h.as_str(), g.as_str())).map(|u| u.to_string())
        }
        _ => None,
    };
    let quality = if p.time_us.is_none() {
        TimeQuality::None
    } else if e.borrowed_time {
        TimeQuality::Estimated
    } else {
        p.quality
    };
    Event {
        id: String::new(),
        time_us: p.time_us,
        quality,
        uptime_us: e.stamp.mono_us,
        host,
        source: SourceRef {
            path: r.path.clone(),
            line: e.line,
        },
        input: r.index,
        boot: e.boot,
        kind: e.kind,
        code: e.code,
        gpu: e.gpu,
        gpu_uuid,
        rank: e.rank,
        layer: e.layer,
        severity: e.severity,
        message: e.message,
        body: e.body,
        attrs: e.attrs,
        also_seen: Vec::new(),
        bmc: e.bmc,
        suppressed: e.suppressed,
    }
}
