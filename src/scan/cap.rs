//! The events cap: at most N events per host, kind, code, GPU and rank of one input are kept;
//! the rest are counted on the events that stand for them, so counts stay exact.

use super::Located;
use std::collections::BTreeMap;

/// Events kept per kind per GPU of one input by default (see
/// [`crate::input::Limits::max_events_per_kind`]).
pub const DEFAULT_EVENTS_PER_KIND: u64 = 1000;

/// Keeps at most `cap` items (at least 1) per key, in order, and counts the others: with a cap of
/// 1 the first item of a key is kept, else the first `cap - 1` and the last (so that the span of a
/// storm stays known). Every dropped item adds `1 + its own weight` to the weight of the kept item
/// that stands for the rest (the last kept one; the first when the cap is 1), so
/// `kept + sum of weights` stays the exact number of occurrences whatever the number of passes.
/// Items whose key is `None` are never capped (trainer progress samples: they have their own
/// thinning, and a slowdown needs the whole series).
pub fn cap_by_key<T, K: Ord>(
    items: &mut Vec<T>,
    cap: u64,
    key: impl Fn(&T) -> Option<K>,
    weight: impl Fn(&mut T) -> &mut u64,
) {
    let cap = cap.max(1);
    if items.len() as u64 <= cap {
        return;
    }
    let keys: Vec<Option<K>> = items.iter().map(&key).collect();
    // per key: occurrences, first index, last index
    let mut count: BTreeMap<&K, (u64, usize, usize)> = BTreeMap::new();
    for (i, k) in keys.iter().enumerate() {
        let Some(k) = k else { continue };
        let e = count.entry(k).or_insert((0, i, i));
        e.0 += 1;
        e.2 = i;
    }
    if count.values().all(|c| c.0 <= cap) {
        return;
    }
    let mut seen: BTreeMap<&K, u64> = BTreeMap::new();
    let mut carry: BTreeMap<&K, u64> = BTreeMap::new();
    let mut keep = vec![true; items.len()];
    for (i, k) in keys.iter().enumerate() {
        let Some(k) = k else { continue };
        let (total, _, last) = count[k];
        if total <= cap {
            continue;
        }
        let s = seen.entry(k).or_default();
        *s += 1;
        let kept = if cap == 1 {
            *s == 1
        } else {
            *s < cap || i == last
        };
        if !kept {
            keep[i] = false;
            *carry.entry(k).or_default() += 1 + *weight(&mut items[i]);
        }
    }
    for (k, c) in carry {
        let (_, first, last) = count[k];
        let at = if cap == 1 { first } else { last };
        *weight(&mut items[at]) += c;
    }
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

/// The key of the events cap for a located event: host, kind, code, GPU, rank.
pub(super) type LocatedKey = (
    Option<String>,
    String,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

pub(super) fn located_key(l: &Located) -> Option<LocatedKey> {
    if l.draft.kind == "progress" {
        return None;
    }
    Some((
        l.host.clone(),
        l.draft.kind.clone(),
        l.draft.code,
        l.draft.gpu.clone(),
        l.draft.rank,
    ))
}

#[cfg(test)]
mod tests {
    use super::cap_by_key;

    /// (key, weight) items; the weight is what the cap adds dropped occurrences to.
    fn items(keys: &[u8]) -> Vec<(u8, u64)> {
        keys.iter().map(|&k| (k, 0)).collect()
    }

    fn total(v: &[(u8, u64)], k: u8) -> u64 {
        v.iter().filter(|i| i.0 == k).map(|i| 1 + i.1).sum()
    }

    #[test]
    fn cap_keeps_the_first_and_the_last_and_counts_the_rest() {
        let mut v = items(&[1, 2, 1, 1, 1, 2, 1]);
        cap_by_key(&mut v, 3, |i| Some(i.0), |i| &mut i.1);
        // key 1 (five items): the first two and the last; key 2 (two items): untouched
        assert_eq!(v, vec![(1, 0), (2, 0), (1, 0), (2, 0), (1, 2)]);
        assert_eq!(total(&v, 1), 5);
        assert_eq!(total(&v, 2), 2);
    }

    #[test]
    fn a_cap_of_one_keeps_the_first() {
        let mut v = items(&[7, 7, 7, 7]);
        cap_by_key(&mut v, 1, |i| Some(i.0), |i| &mut i.1);
        assert_eq!(v, vec![(7, 3)]);
        let mut w = items(&[7, 7]);
        cap_by_key(&mut w, 0, |i| Some(i.0), |i| &mut i.1);
        assert_eq!(w, vec![(7, 1)], "a cap of 0 is taken as 1");
    }

    #[test]
    fn repeated_passes_keep_the_counts_exact() {
        // as the scanner does: cap, append more, cap again
        let mut v = Vec::new();
        for round in 0..10u8 {
            v.extend(items(&[round % 2; 25]));
            cap_by_key(&mut v, 4, |i| Some(i.0), |i| &mut i.1);
            assert!(v.len() <= 8);
        }
        assert_eq!(total(&v, 0), 125);
        assert_eq!(total(&v, 1), 125);
    }

    #[test]
    fn items_without_a_key_are_never_capped() {
        // (key, weight); key 0 stands for a progress sample
        let mut v: Vec<(u8, u64)> = [0u8, 1, 0, 1, 0, 1, 0].iter().map(|&k| (k, 0)).collect();
        cap_by_key(&mut v, 1, |i| (i.0 != 0).then_some(i.0), |i| &mut i.1);
        assert_eq!(v, vec![(0, 0), (1, 2), (0, 0), (0, 0), (0, 0)]);
    }
}
