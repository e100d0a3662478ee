//! An earlier event that a rule names as the cause of its own event (`match.preceded_by`): a
//! BMC power-supply, fan or temperature alert shortly before a GPU falls off the bus.

use super::drift::ago;
use crate::catalog::Catalog;
use crate::rules::Preceded;
use crate::timeline::Event;

/// The member that fits `p` as the cause of `events[effect]`: of the first kind `p` lists (a
/// failed fan before the temperature it drove up), the most severe, then the earliest.
pub(super) fn cause_of(
    p: &Preceded,
    effect: usize,
    events: &[Event],
    members: &[usize],
) -> Option<usize> {
    let e = &events[effect];
    members
        .iter()
        .copied()
        .filter(|&c| c != effect && p.fits(&events[c], e))
        .min_by_key(|&c| {
            (
                p.kinds.iter().position(|k| *k == events[c].kind),
                std::cmp::Reverse(events[c].severity),
                events[c].time_us,
                c,
            )
        })
}

/// What the cause says, for a summary: `Power supply fault (Power Supply PS3 Status: Failure
/// detected)` from the SEL, `Fan failure (FAN0001: Fan 6A RPM is less than …)` from a
/// Lifecycle or Redfish record.
fn describe(c: &Event, catalog: &Catalog) -> String {
    let title = catalog.title(c.kind, c.code);
    let a = |k: &str| c.attrs.get(k);
    let detail = match (a("sensor"), a("event"), a("message_id"), a("message")) {
        (Some(s), Some(ev), _, _) => Some(format!("{s}: {ev}")),
        (_, _, Some(id), Some(m)) => Some(format!("{id}: {}", m.trim_end_matches('.'))),
        (_, _, Some(id), None) => Some(id.to_string()),
        _ => None,
    };
    match detail {
        Some(d) => format!("{title} ({d})"),
        None => title,
    }
}

/// How the effect stands to the cause in time: `40 s after`, `5 s before` (clocks that disagree).
fn lead(c: &Event, e: &Event) -> String {
    match (c.time_us, e.time_us) {
        (Some(a), Some(b)) if a <= b => format!("{} after", ago(b - a)),
        (Some(a), Some(b)) => format!("{} before", ago(a - b)),
        _ => "around the time".to_string(),
    }
}

/// Fills `{cause}` and `{lead}` of a rendered summary.
pub(super) fn fill(summary: String, cause: &Event, effect: &Event, catalog: &Catalog) -> String {
    summary
        .replace("{cause}", &describe(cause, catalog))
        .replace("{lead}", &lead(cause, effect))
}
