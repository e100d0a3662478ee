//! The order of the timeline: by time, then by boot and uptime, then in input order.

use super::Event;

/// Timed events by time (stable: input order for ties), then events with only an uptime (by host,
/// boot, uptime: an uptime that went back to zero starts a later boot), then events with no time
/// in input order. The keys are made once (hosts as their rank in name order) and sorted with
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
    // position ties keep input order: the sort is stable without a stable sort's scratch copy
    let mut from: Vec<u32> = match packed_keys(&events, &host) {
        Some(mut keys) => {
            keys.sort_unstable();
            keys.into_iter().map(|(_, i)| i).collect()
        }
        None => {
            let mut keys: Vec<(OrderKey, u32)> = Vec::with_capacity(events.len());
            for (i, (e, &host)) in events.iter().zip(&host).enumerate() {
                keys.push((order_key(e, host), i as u32));
            }
            keys.sort_unstable();
            keys.into_iter().map(|(_, i)| i).collect()
        }
    };
    drop(host);
    permute(&mut events, &mut from);
    events
}

/// The keys of [`order_key`] packed in four words each, in the same order (40 bytes with the
/// position, not 64: the list is made at the peak of a long timeline), when every event's key
/// fits: no time of `i64::MAX`, fewer than 2³¹ hosts, 2²⁴ inputs and 2⁴⁰ lines.
fn packed_keys(events: &[Event], host: &[u32]) -> Option<Vec<([u64; 4], u32)>> {
    let mut keys = Vec::with_capacity(events.len());
    for (i, (e, &host)) in events.iter().zip(host).enumerate() {
        let time = match e.time_us {
            // the sign bit flipped: the order of i64 as u64; none after every time
            Some(t) if t != i64::MAX => (t as u64) ^ (1 << 63),
            Some(_) => return None,
            None => u64::MAX,
        };
        let input = u64::try_from(e.input).ok().filter(|&n| n < 1 << 24)?;
        let line = Some(e.source.line).filter(|&n| n < 1 << 40)?;
        let host = Some(u64::from(host)).filter(|&h| h < 1 << 31)?;
        let place = (u64::from(e.uptime_us.is_none()) << 63) | (host << 32) | u64::from(e.boot);
        let at = (input << 40) | line;
        keys.push(([time, place, e.uptime_us.unwrap_or(0), at], i as u32));
    }
    Some(keys)
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
type OrderKey = ((bool, i64), (bool, u32, u32), u64, (usize, u64));

/// The key of `e`, whose host has rank `host`: uptimes restart at each boot, so boot comes
/// before uptime.
fn order_key(e: &Event, host: u32) -> OrderKey {
    (
        (e.time_us.is_none(), e.time_us.unwrap_or(0)),
        (e.uptime_us.is_none(), host, e.boot),
        e.uptime_us.unwrap_or(0),
        (e.input, e.source.line),
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

    #[test]
    fn permute_moves_each_item_to_its_place() {
        let mut v = vec!['a', 'b', 'c', 'd', 'e', 'f'];
        // two cycles (0 2 4) and (1 5), one fixed point
        let mut from = vec![2, 5, 4, 3, 0, 1];
        permute(&mut v, &mut from);
        assert_eq!(v, vec!['c', 'f', 'e', 'd', 'a', 'b']);
    }
}
