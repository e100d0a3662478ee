//! Raw events become timeline events: their settled times, short host names and GPU UUIDs, the
//! watchdog progress lines merged into their timeouts; GPU identities from the attachments.

use super::clock::Pending;
use super::{merge_attachments, short_host_str, Event};
use crate::model::{RawEvent, SourceRef, TimeQuality};
use crate::pipeline::InputResult;
use std::collections::BTreeMap;
use std::sync::Arc;

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
            let host = a.host.as_deref().or(r.host.as_deref()).map(str::to_string);
            let ent = identities
                .entry((host.unwrap_or_default(), g.to_string()))
                .or_default();
            if let Some(u) = a.attrs.get("uuid") {
                ent.0 = Some(u.to_string());
            }
            if let Some(s) = a.attrs.get("serial") {
                ent.1 = Some(s.to_string());
            }
        }
    }
    identities
}

/// Short host names (see [`super::short_host`]), one shared text per distinct name: the events of
/// a host share their scan's text, so a name is shortened once per run of events holding it.
#[derive(Default)]
struct Shortened {
    /// The last name seen (by its text's address) and its short form.
    last: Option<(Arc<str>, Arc<str>)>,
    /// Short forms by full name.
    made: crate::scan::FastMap<Arc<str>, Arc<str>>,
}

impl Shortened {
    fn get(&mut self, h: Arc<str>) -> Arc<str> {
        if let Some((full, short)) = &self.last {
            if Arc::ptr_eq(full, &h) {
                return short.clone();
            }
        }
        let short = match self.made.get(&h) {
            Some(s) => s.clone(),
            None => {
                let n = short_host_str(&h).len();
                let s: Arc<str> = if n == h.len() {
                    h.clone()
                } else {
                    Arc::from(&h[..n])
                };
                self.made.insert(h.clone(), s.clone());
                s
            }
        };
        self.last = Some((h, short.clone()));
        short
    }
}

/// GPU UUIDs by (short host, bus id), each shared by the events of its GPU.
type Uuids<'a> = crate::scan::FastMap<(&'a str, &'a str), Arc<str>>;

/// Moves every input's raw events to the timeline, in input order and line order within one
/// input. Grown in steps as the raw events' lists shrink (reserved whole up front, it would
/// stand beside them whole).
pub(super) fn assemble(
    results: &mut [InputResult],
    pend: Vec<Vec<Pending>>,
    identities: &Identities,
) -> Vec<Event> {
    // looked up per event by borrowed keys
    let uuids: Uuids = identities
        .iter()
        .filter_map(|((h, g), (u, _))| Some(((h.as_str(), g.as_str()), Arc::from(u.as_deref()?))))
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
fn move_input(r: &mut InputResult, mut pv: Vec<Pending>, uuids: &Uuids, events: &mut Vec<Event>) {
    let mut raw = std::mem::take(&mut r.events);
    let input_host: Option<Arc<str>> = r.host.as_deref().map(|h| Arc::from(short_host_str(h)));
    let path: Arc<str> = Arc::from(r.path.as_str());
    let mut hosts = Shortened::default();
    while let (Some(e), Some(p)) = (raw.pop(), pv.pop()) {
        if raw.len() % SHRINK_EVERY == 0 {
            raw.shrink_to_fit();
            pv.shrink_to_fit();
        }
        if events.len() == events.capacity() {
            events.reserve_exact(SHRINK_EVERY.min(raw.len() + 1));
        }
        let host = match e.host.clone() {
            Some(h) => Some(hosts.get(h)),
            None => input_host.clone(),
        };
        let at = (r.index, &path);
        events.push(timeline_event(e, p, at, host, uuids));
    }
}

/// One raw event on the timeline (its id is given once the timeline is ordered).
/// `at`: the input's index and path; `host`: the event's short host name.
fn timeline_event(
    e: RawEvent,
    p: Pending,
    (input, path): (usize, &Arc<str>),
    host: Option<Arc<str>>,
    uuids: &Uuids,
) -> Event {
    let gpu_uuid = match (&host, &e.gpu) {
        (Some(h), Some(g)) if !uuids.is_empty() => uuids.get(&(&**h, &**g)).cloned(),
        _ => None,
    };
    // a time of day nothing dated: kept to order the event within its file
    let time_of_day = e.stamp.tod_us.filter(|_| p.time_us.is_none());
    let quality = if p.time_us.is_none() {
        TimeQuality::None
    } else if e.borrowed_time {
        TimeQuality::Estimated
    } else {
        p.quality
    };
    Event {
        id: 0,
        time_us: p.time_us,
        quality,
        uptime_us: e.stamp.mono_us,
        host,
        source: SourceRef {
            path: path.clone(),
            line: e.line,
        },
        input,
        boot: e.boot,
        kind: e.kind,
        code: e.code,
        gpu: e.gpu,
        rank: e.rank,
        layer: e.layer,
        severity: e.severity,
        message: e.message,
        body: e.body,
        attrs: e.attrs,
        rare: rare(gpu_uuid, time_of_day),
        bmc: e.bmc,
        suppressed: e.suppressed,
    }
}

/// The rare parts of an event, when it has any.
fn rare(
    gpu_uuid: Option<Arc<str>>,
    time_of_day_us: Option<u64>,
) -> Option<Box<crate::timeline::Rare>> {
    (gpu_uuid.is_some() || time_of_day_us.is_some()).then(|| {
        Box::new(crate::timeline::Rare {
            gpu_uuid,
            also_seen: Vec::new(),
            time_of_day_us,
        })
    })
}
