//! The order of the timeline: by time, then by boot and uptime, then in input order.

use super::Event;

/// Timed events by time (stable: input order for ties), then events with only an uptime (by host,
/// boot, uptime: an uptime that went back to zero starts a later boot), then events with no time
/// in input order. The keys are made once (hosts as their rank in name order) and sorted with
/// the events' positions; the events are then moved into that order in place.
pub(super) fn order(mut events: Vec<Event>) -> Vec<Event> {
    let host = host_ranks(&events);
    let mut keys: Vec<(OrderKey, u32)> = Vec::with_capacity(events.len());
    for (i, (e, host)) in events.iter().zip(host).enumerate() {
        // uptimes restart at each boot: order by boot before uptime
        let key = (
            (e.time_us.is_none(), e.time_us.unwrap_or(0)),
            (e.uptime_us.is_none(), host, e.boot),
            e.uptime_us.unwrap_or(0),
            (e.input, e.source.line),
        );
        keys.push((key, i as u32));
    }
    // position ties keep input order: the sort is stable without a stable sort's scratch copy
    keys.sort_unstable();
    let mut from: Vec<u32> = keys.into_iter().map(|(_, i)| i).collect();
    permute(&mut events, &mut from);
    events
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
