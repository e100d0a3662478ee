//! The order of the timeline: by time, then by boot and uptime, then in input order.

use super::Event;

/// Timed events by time (stable: input order for ties), then events with only an uptime (by host,
/// boot, uptime: an uptime that went back to zero starts a later boot), then events with no time
/// in input order (within an input by the time of day its lines print, when nothing dated it). The keys are made once (hosts as their rank in name order) and sorted with
/// the events' positions; the events are then moved into that order in place.
pub(super) fn order(mut events: Vec<Event>) -> Vec<Event> {
    let host = host_ranks(&events);
    // nearly always so for one input whose clock never went back: no key list to sort (it is a
    // quarter of the events' size, and would be made at the peak of a long timeline)
    let in_order = events
        .windows(2)
        .zip(host.windows(2))
        .all(|(e, h)| order_key(&e[0], h[0]) <= order_key(&e[1], h[1]));
    if in_order {
        return events;
    }
    let mut from = sorted_positions(&events, &host);
    drop(host);
    permute(&mut events, &mut from);
    events
}

/// The positions of `events` (hosts ranked `host`) in the order of their keys ([`order_key`]),
/// ties in position order (the sort is stable without a stable sort's scratch copy). Sorted by
/// time first, with the position: 16 bytes an event (the full keys of every event were 64, made
/// at the peak of a long timeline); then each run of one time (or of none) by its full keys.
fn sorted_positions(events: &[Event], host: &[u32]) -> Vec<u32> {
    // the sign bit flipped: the order of i64 as u64; no time after every time (and with a time
    // of i64::MAX, which the full keys then tell apart)
    let time = |e: &Event| e.time_us.map_or(u64::MAX, |t| (t as u64) ^ (1 << 63));
    let mut by_time: Vec<(u64, u32)> = events
        .iter()
        .enumerate()
        .map(|(i, e)| (time(e), i as u32))
        .collect();
    by_time.sort_unstable();
    let mut from: Vec<u32> = by_time.iter().map(|&(_, i)| i).collect();
    drop(by_time);
    let mut start = 0;
    while start < from.len() {
        let t = time(&events[from[start] as usize]);
        let end = start
            + from[start..]
                .iter()
                .take_while(|&&i| time(&events[i as usize]) == t)
                .count();
        if end - start > 1 {
            let mut run: Vec<(OrderKey, u32)> = from[start..end]
                .iter()
                .map(|&i| (order_key(&events[i as usize], host[i as usize]), i))
                .collect();
            run.sort_unstable();
            for (slot, (_, i)) in from[start..end].iter_mut().zip(run) {
                *slot = i;
            }
        }
        start = end;
    }
    from
}

/// Per event, its host's rank in name order (1, 2, …; 0 for none): each host hashed once per
/// event into a number in order of first appearance, the few distinct names then sorted.
fn host_ranks(events: &[Event]) -> Vec<u32> {
    let mut ids: crate::scan::FastMap<&str, u32> = Default::default();
    let mut names: Vec<&str> = Vec::new();
    let mut last: Option<(&str, u32)> = None;
    let mut first_seen: Vec<u32> = Vec::with_capacity(events.len());
    for e in events {
        let id = match e.host.as_deref() {
            None => 0,
            Some(h) => match last {
                Some((l, id)) if l == h => id,
                _ => {
                    let id = *ids.entry(h).or_insert_with(|| {
                        names.push(h);
                        names.len() as u32
                    });
                    last = Some((h, id));
                    id
                }
            },
        };
        first_seen.push(id);
    }
    let mut by_name: Vec<u32> = (1..=names.len() as u32).collect();
    by_name.sort_unstable_by_key(|&id| names[id as usize - 1]);
    let mut rank = vec![0u32; names.len() + 1];
    for (r, id) in by_name.into_iter().enumerate() {
        rank[id as usize] = r as u32 + 1;
    }
    for id in &mut first_seen {
        *id = rank[*id as usize];
    }
    first_seen
}

/// What [`order`] sorts by.
type OrderKey = ((bool, i64), (bool, u32, u32), u64, (usize, u64, u64));

/// The key of `e`, whose host has rank `host`: uptimes restart at each boot, so boot comes
/// before uptime.
fn order_key(e: &Event, host: u32) -> OrderKey {
    (
        (e.time_us.is_none(), e.time_us.unwrap_or(0)),
        (e.uptime_us.is_none(), host, e.boot),
        e.uptime_us.unwrap_or(0),
        (e.input, e.time_of_day_us().unwrap_or(0), e.source.line),
    )
}

/// Puts `v[from[k]]` at `k` for every `k`, in place (one cycle after another); `from` is a
/// permutation and is used up.
fn permute<T>(v: &mut [T], from: &mut [u32]) {
    for start in 0..from.len() {
        let mut k = start;
        while from[k] as usize != k {
            let src = from[k] as usize;
            from[k] = k as u32;
            if src == start {
                break;
            }
            v.swap(k, src);
            k = src;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::permute;
    use super::{host_ranks, order, order_key, Event};
    use crate::model::{Attrs, Body, Layer, Severity, SourceRef, TimeQuality};
    use std::sync::Arc;

    fn event(k: u64) -> Event {
        // a few values of every field the order reads, mixed by `k`, ties among them
        let pick = |m: u64| (k.wrapping_mul(2_654_435_761) >> 7) % m;
        let host: Option<Arc<str>> = match pick(3) {
            0 => None,
            1 => Some("b".into()),
            _ => Some("a".into()),
        };
        Event {
            id: 0,
            time_us: match pick(5) {
                0 => None,
                1 => Some(i64::MAX),
                2 => Some(-5),
                n => Some(n as i64 * 1_000),
            },
            quality: TimeQuality::Estimated,
            uptime_us: (pick(7) > 1).then(|| pick(4) * 10),
            host,
            source: SourceRef {
                path: "x".into(),
                line: pick(11),
            },
            input: pick(2) as usize,
            boot: pick(3) as u32,
            kind: "xid",
            code: None,
            gpu: None,
            rank: None,
            layer: Layer::Hardware,
            severity: Severity::Error,
            message: format!("{k}").into(),
            body: Body::default(),
            attrs: Attrs::new(),
            rare: None,
            bmc: false,
            suppressed: 0,
        }
    }

    #[test]
    fn orders_as_a_stable_sort_of_the_full_keys() {
        for n in [0, 1, 2, 50, 3000] {
            let events: Vec<Event> = (0..n).map(|k| event(k * 7 + n)).collect();
            let hosts = host_ranks(&events);
            let mut want: Vec<usize> = (0..events.len()).collect();
            want.sort_by_key(|&i| order_key(&events[i], hosts[i]));
            let want: Vec<String> = want
                .iter()
                .map(|&i| events[i].message.to_string())
                .collect();
            let got: Vec<String> = order(events)
                .iter()
                .map(|e| e.message.to_string())
                .collect();
            assert_eq!(got, want, "{n} events");
        }
    }

    #[test]
    fn permute_moves_each_item_to_its_place() {
        let mut v = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        // two cycles (0 2 4) and (1 5), one fixed point
        let mut from = vec![2, 5, 4, 3, 0, 1];
        permute(&mut v, &mut from);
        assert_eq!(v, vec!['c', 'f', 'e', 'd', 'a', 'b']);
    }
}
