//! The order of the timeline: by time, then by boot and uptime, then in input order.

use super::Event;
use std::collections::BTreeSet;

/// Timed events by time (stable: input order for ties), then events with only an uptime (by host,
/// boot, uptime: an uptime that went back to zero starts a later boot), then events with no time
/// in input order. The keys are made once (hosts as their rank in name order) and sorted with
/// the events' positions; the events are then moved into that order in place.
pub(super) fn order(mut events: Vec<Event>) -> Vec<Event> {
    let hosts: BTreeSet<&str> = events.iter().filter_map(|e| e.host.as_deref()).collect();
    let rank: crate::scan::FastMap<&str, u32> = hosts
        .iter()
        .enumerate()
        .map(|(i, h)| (*h, i as u32 + 1))
        .collect();
    let mut last: Option<(&str, u32)> = None;
    let mut keys: Vec<(OrderKey, u32)> = Vec::with_capacity(events.len());
    for (i, e) in events.iter().enumerate() {
        let host = match e.host.as_deref() {
            None => 0,
            Some(h) => match last {
                Some((l, r)) if l == h => r,
                _ => {
                    let r = rank[h];
                    last = Some((h, r));
                    r
                }
            },
        };
        // uptimes restart at each boot: order by boot before uptime
        let key = (
            (e.time_us.is_none(), e.time_us.unwrap_or(0)),
            (e.uptime_us.is_none(), host, e.boot),
            e.uptime_us.unwrap_or(0),
            (e.input, e.source.line),
        );
        keys.push((key, i as u32));
    }
    drop(rank);
    // position ties keep input order: the sort is stable without a stable sort's scratch copy
    keys.sort_unstable();
    let mut from: Vec<u32> = keys.into_iter().map(|(_, i)| i).collect();
    permute(&mut events, &mut from);
    events
}

/// What [`order`] sorts by.
type OrderKey = ((bool, i64), (bool, u32, u32), u64, (usize, u64));

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
