//! The events cap: at most N events per host, kind, code, GPU and rank of one input are kept;
//! the rest are counted on the events that stand for them, so counts stay exact.

use super::Located;
use std::collections::HashMap;
use std::hash::Hash;

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
pub fn cap_by_key<T, K: Hash + Eq>(
    items: &mut Vec<T>,
    cap: u64,
    key: impl Fn(&T) -> Option<K>,
    weight: impl Fn(&mut T) -> &mut u64,
) {
    if items.len() as u64 <= cap.max(1) || within_cap(items.iter().map(&key), cap) {
        return;
    }
    let ids = dense_ids(items.iter().map(key));
    cap_by_id(items, cap, &ids, (weight, |_: &T| None), 0);
}

/// Something the events cap counts: its key borrows from it, so that counting allocates nothing.
pub trait Capped {
    /// The key (host, kind, code, GPU, rank), or `None` for what is never capped.
    type Key<'a>: Hash + Eq
    where
        Self: 'a;
    /// The key of this item.
    fn cap_key(&self) -> Option<Self::Key<'_>>;
    /// Occurrences past the cap counted on this item.
    fn weight(&mut self) -> &mut u64;
    /// The kind whose total the cap bounds too ([`kind_total`]); `None`: only the key's cap.
    fn cap_kind(&self) -> Option<&'static str> {
        None
    }
}

/// [`cap_by_key`] for items that borrow their keys ([`Capped`]).
pub fn cap_capped<T: Capped>(items: &mut Vec<T>, cap: u64) {
    // the kinds' shares come from occurrences: few items may stand for many
    let occurrences: u64 = items.iter_mut().map(|i| 1 + *i.weight()).sum();
    let small = occurrences <= kind_total(cap);
    if small && (items.len() as u64 <= cap.max(1) || within_cap(items.iter().map(T::cap_key), cap))
    {
        return;
    }
    let ids = dense_ids(items.iter().map(T::cap_key));
    cap_by_id(items, cap, &ids, (T::weight, T::cap_kind), occurrences);
}

/// Whether no key occurs more than `cap` times (at least 1), so that the cap keeps everything:
/// occurrences are counted per hash of the key, with no key copied or compared (keys of one hash
/// are counted together, so a `true` is certain; a `false` leaves the answer to the cap itself).
/// Scans keep calling the cap on lists that grew; when nothing is over it (many distinct keys),
/// this is all it costs.
pub(super) fn within_cap<K: Hash>(keys: impl Iterator<Item = Option<K>>, cap: u64) -> bool {
    within_cap_hashed(keys.flatten().map(|k| key_hash(&k)), cap)
}

/// The hash [`within_cap`] counts a key by.
pub(super) fn key_hash<K: Hash>(k: &K) -> u64 {
    use std::hash::BuildHasher;
    FastBuild::default().hash_one(k)
}

/// [`within_cap`] over the keys' hashes ([`key_hash`]), for callers that hashed them before.
pub(super) fn within_cap_hashed(hashes: impl Iterator<Item = u64>, cap: u64) -> bool {
    let cap = cap.max(1);
    let mut seen: FastMap<u64, u64> =
        FastMap::with_capacity_and_hasher(hashes.size_hint().0, FastBuild::default());
    for h in hashes {
        let n = seen.entry(h).or_default();
        *n += 1;
        if *n > cap {
            return false;
        }
    }
    true
}

/// A fast, non-cryptographic hasher for the keys of in-process tables (the multiply-rotate
/// scheme of Firefox's FxHash): keys here are short text and numbers from the input, hashed
/// millions of times, and no table is exposed to an adversary long enough for flooding to matter
/// more than SipHash's cost (every table also compares full keys).
#[derive(Default, Clone, Copy)]
pub struct FastHasher(u64);

impl std::hash::Hasher for FastHasher {
    fn write(&mut self, bytes: &[u8]) {
        const K: u64 = 0x51_7c_c1_b7_27_22_0a_95;
        let mut chunks = bytes.chunks_exact(8);
        for c in &mut chunks {
            let w = u64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]]);
            self.0 = (self.0.rotate_left(5) ^ w).wrapping_mul(K);
        }
        for &b in chunks.remainder() {
            self.0 = (self.0.rotate_left(5) ^ b as u64).wrapping_mul(K);
        }
    }
    fn write_u8(&mut self, i: u8) {
        self.write_u64(i as u64);
    }
    fn write_usize(&mut self, i: usize) {
        self.write_u64(i as u64);
    }
    fn write_u64(&mut self, i: u64) {
        self.0 = (self.0.rotate_left(5) ^ i).wrapping_mul(0x51_7c_c1_b7_27_22_0a_95);
    }
    fn finish(&self) -> u64 {
        self.0
    }
}

/// Builds [`FastHasher`]s.
pub type FastBuild = std::hash::BuildHasherDefault<FastHasher>;

/// A hash map with [`FastHasher`].
pub type FastMap<K, V> = HashMap<K, V, FastBuild>;

/// A hash set with [`FastHasher`].
pub(crate) type FastSet<K> = std::collections::HashSet<K, FastBuild>;

/// Numbers the distinct keys 0, 1, 2, … in order of first appearance.
pub(super) fn dense_ids<K: Hash + Eq>(
    keys: impl ExactSizeIterator<Item = Option<K>>,
) -> Vec<Option<u32>> {
    let mut map: FastMap<K, u32> =
        FastMap::with_capacity_and_hasher(keys.len(), FastBuild::default());
    keys.map(|k| {
        k.map(|k| {
            let n = map.len() as u32;
            *map.entry(k).or_insert(n)
        })
    })
    .collect()
}

/// [`cap_by_id`] for the events of a scan.
pub(super) fn cap_ids(items: &mut Vec<Located>, cap: u64, ids: &[Option<u32>]) {
    let occurrences = items.iter().map(|i| 1 + i.suppressed).sum();
    cap_by_id(
        items,
        cap,
        ids,
        (Located::weight, Located::cap_kind),
        occurrences,
    );
}

/// The cap over items numbered by [`dense_ids`], with their weights and kinds, whose
/// `occurrences` (items and weights) the caller counted (0 where no item has a kind): linear,
/// with one slot per key.
pub(super) fn cap_by_id<T>(
    items: &mut Vec<T>,
    cap: u64,
    ids: &[Option<u32>],
    (weight, kind): (
        impl Fn(&mut T) -> &mut u64,
        impl Fn(&T) -> Option<&'static str>,
    ),
    occurrences: u64,
) {
    // a list of no more occurrences than a kind's budget has no kind over it: no kinds to look
    // up
    let kinds: Vec<Option<&'static str>> = if occurrences > kind_total(cap) {
        items.iter().map(kind).collect()
    } else {
        Vec::new()
    };
    let kind_of = |i: usize| kinds.get(i).copied().flatten();
    let Some(plan) = cap_plan(ids, cap, |i| *weight(&mut items[i]), kind_of) else {
        return;
    };
    for &(at, c) in &plan.add {
        *weight(&mut items[at]) += c;
    }
    let mut i = 0;
    items.retain(|_| {
        i += 1;
        plan.keep[i - 1]
    });
}

/// What the cap does to a sequence of items: which stay, and what each one standing for dropped
/// ones adds to its weight.
pub(super) struct CapPlan {
    /// Per item: kept.
    pub keep: Vec<bool>,
    /// (item, weight to add).
    pub add: Vec<(usize, u64)>,
}

/// The cap over items numbered by [`dense_ids`] whose weights are `weight(i)` and whose kinds
/// are `kind(i)`; `None` when every item stays. Each key keeps at most `cap` items; each kind
/// at most [`kind_total`]`(cap)` over all its keys ([`kind_quotas`]). Linear, with one slot per
/// key.
pub(super) fn cap_plan(
    ids: &[Option<u32>],
    cap: u64,
    mut weight: impl FnMut(usize) -> u64,
    kind: impl Fn(usize) -> Option<&'static str>,
) -> Option<CapPlan> {
    let cap = cap.max(1);
    let keys = ids
        .iter()
        .flatten()
        .map(|&k| k as usize + 1)
        .max()
        .unwrap_or(0);
    // per key: items, first index, last index, occurrences (the items and what they stand for)
    let mut count: Vec<(u64, usize, usize, u64)> = vec![(0, usize::MAX, 0, 0); keys];
    for (i, k) in ids.iter().enumerate() {
        let Some(k) = k else { continue };
        let c = &mut count[*k as usize];
        c.0 += 1;
        c.1 = c.1.min(i);
        c.2 = i;
        c.3 += 1 + weight(i);
    }
    let quota = kind_quotas(&count, cap, kind);
    if count.iter().zip(&quota).all(|(c, &q)| c.0 <= q) {
        return None;
    }
    let mut seen: Vec<u64> = vec![0; keys];
    let mut carry: Vec<u64> = vec![0; keys];
    let mut keep = vec![true; ids.len()];
    for (i, k) in ids.iter().enumerate() {
        let Some(k) = k.map(|k| k as usize) else {
            continue;
        };
        let (items, _, last, _) = count[k];
        let q = quota[k];
        if items <= q {
            continue;
        }
        seen[k] += 1;
        let kept = if q == 1 {
            seen[k] == 1
        } else {
            seen[k] < q || i == last
        };
        if !kept {
            keep[i] = false;
            carry[k] += 1 + weight(i);
        }
    }
    let add = carry
        .iter()
        .enumerate()
        .filter(|(_, &c)| c > 0)
        .map(|(k, &c)| {
            let (_, first, last, _) = count[k];
            (if quota[k] == 1 { first } else { last }, c)
        })
        .collect();
    Some(CapPlan { keep, add })
}

/// Events kept per kind of one input at most, over all its keys, with the default cap: the
/// budget issue 37 asks for ("the event cap bounds the total kept per kind"), so that a log of
/// thousands of hosts that each stay under the cap cannot keep millions of events.
pub const KEPT_PER_KIND: u64 = 16_384;

/// Events kept per kind at most with a cap of `cap` per key: [`KEPT_PER_KIND`], or the cap
/// itself when it is larger (at least one per key is kept whatever the number of keys; the
/// keys per kind are bounded by [`super::SAMPLED_KEYS`]).
pub fn kind_total(cap: u64) -> u64 {
    cap.max(KEPT_PER_KIND)
}

/// Per key, the items it keeps at most: `cap`, or less where its kind's keys' occurrences, each
/// up to `cap`, add up to more than [`kind_total`]. Then the kind's budget is shared by water-filling over the keys'
/// occurrences (counted with what kept items stand for, so the share is the one the whole input
/// gives however it was cut into parts): keys with fewer occurrences than the level keep all,
/// the others keep the level (at least 1). A key's kind is the kind of its first item.
fn kind_quotas(
    count: &[(u64, usize, usize, u64)],
    cap: u64,
    kind: impl Fn(usize) -> Option<&'static str>,
) -> Vec<u64> {
    let mut quota = vec![cap; count.len()];
    let total = kind_total(cap);
    if count.iter().map(|c| c.3.min(cap)).sum::<u64>() <= total {
        return quota;
    }
    let mut by_kind: FastMap<&'static str, Vec<usize>> = FastMap::default();
    for (k, c) in count.iter().enumerate().filter(|(_, c)| c.0 > 0) {
        if let Some(kd) = kind(c.1) {
            by_kind.entry(kd).or_default().push(k);
        }
    }
    for keys in by_kind.values_mut() {
        if keys.iter().map(|&k| count[k].3.min(cap)).sum::<u64>() <= total {
            continue;
        }
        keys.sort_unstable_by_key(|&k| count[k].3);
        let (mut left, mut level) = (total, cap);
        for (n, &k) in keys.iter().enumerate() {
            let share = left / (keys.len() - n) as u64;
            if count[k].3 > share {
                level = share.clamp(1, cap);
                break;
            }
            left -= count[k].3;
        }
        for &k in keys.iter() {
            quota[k] = level;
        }
    }
    quota
}

/// The key of the events cap, borrowed: host, kind, code, GPU, rank.
pub type CapKey<'a> = (
    Option<&'a str>,
    &'static str,
    Option<i64>,
    Option<&'a str>,
    Option<i64>,
);

impl Capped for Located {
    type Key<'a> = CapKey<'a>;
    fn cap_key(&self) -> Option<CapKey<'_>> {
        if self.draft.kind == "progress" {
            return None;
        }
        if self.folded {
            return Some(super::fold::folded_key(self.draft.kind));
        }
        Some((
            self.host.as_deref(),
            self.draft.kind,
            self.draft.code,
            self.draft.gpu.as_deref(),
            self.draft.rank,
        ))
    }
    fn weight(&mut self) -> &mut u64 {
        &mut self.suppressed
    }
    fn cap_kind(&self) -> Option<&'static str> {
        Some(self.draft.kind)
    }
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

    /// (host, kind, weight): an item of the kind-total tests.
    #[derive(Clone, Debug, PartialEq)]
    struct Ev(u32, &'static str, u64);

    impl super::Capped for Ev {
        type Key<'a> = (u32, &'static str);
        fn cap_key(&self) -> Option<(u32, &'static str)> {
            Some((self.0, self.1))
        }
        fn weight(&mut self) -> &mut u64 {
            &mut self.2
        }
        fn cap_kind(&self) -> Option<&'static str> {
            Some(self.1)
        }
    }

    /// `per` items of kind "a" for each of `hosts` hosts, interleaved, and one of kind "b".
    fn spread(hosts: u32, per: u32) -> Vec<Ev> {
        let mut v: Vec<Ev> = (0..per)
            .flat_map(|_| (0..hosts).map(|h| Ev(h, "a", 0)))
            .collect();
        v.push(Ev(0, "b", 0));
        v
    }

    /// A kind whose keys each stay under the cap but keep more than a kind keeps in all shares
    /// that budget over its keys: every key keeps a few (its first and last among them), the
    /// counts stay exact per key, and another kind is left alone.
    #[test]
    fn a_kind_keeps_its_total_spread_over_its_keys() {
        use super::{cap_capped, KEPT_PER_KIND};
        let (hosts, per) = (4000u32, 10u32);
        let mut v = spread(hosts, per);
        cap_capped(&mut v, 1000);
        let a: Vec<&Ev> = v.iter().filter(|e| e.1 == "a").collect();
        assert!(a.len() as u64 <= KEPT_PER_KIND, "{} kept", a.len());
        // 16384 / 4000 = 4 per host: the first three and the last
        assert_eq!(a.len(), 4 * hosts as usize);
        for h in 0..hosts {
            let of: Vec<&&Ev> = a.iter().filter(|e| e.0 == h).collect();
            assert_eq!(of.len(), 4, "host {h}");
            assert_eq!(
                of.iter().map(|e| 1 + e.2).sum::<u64>(),
                per as u64,
                "host {h}"
            );
            assert_eq!(of[3].2, per as u64 - 4, "the last stands for the others");
        }
        assert_eq!(v.iter().filter(|e| e.1 == "b").count(), 1);
    }

    /// The kind's share is the same whether the list is capped whole or in parts appended one
    /// after the other (as the scan's chunks are), because it is computed from the occurrences
    /// the kept items stand for.
    #[test]
    fn the_kind_total_does_not_depend_on_the_parts() {
        use super::cap_capped;
        let whole = {
            let mut v = spread(3000, 12);
            cap_capped(&mut v, 1000);
            v
        };
        let all = spread(3000, 12);
        let mut parts: Vec<Ev> = Vec::new();
        for part in all.chunks(5000) {
            parts.extend_from_slice(part);
            cap_capped(&mut parts, 1000);
        }
        assert_eq!(parts, whole);
    }

    /// Under its total, a kind is capped per key only, as before.
    #[test]
    fn a_kind_under_its_total_is_capped_per_key_only() {
        use super::cap_capped;
        let mut v = spread(1000, 12);
        cap_capped(&mut v, 5);
        assert_eq!(v.iter().filter(|e| e.1 == "a").count(), 5 * 1000);
        let mut w = spread(1000, 12);
        cap_capped(&mut w, 1000);
        assert_eq!(w.len(), 12 * 1000 + 1, "nothing over");
    }
}
