//! The events cap's running counts: what the items of a list counted so far add up to, so that
//! the cap over a list that grew counts only what was appended and runs only when a key or a
//! kind may be over it.

use super::cap::{cap_by_id, dense_ids, key_hash, kind_total, Capped, FastMap};
use super::Located;

/// What the items of one list counted so far add up to, per key hash ([`key_hash`]), so that the
/// cap over a list that grew counts only what was appended ([`cap_counted`]). Items may leave
/// the list (the cap, bursts, thinning) without being taken off: each count is at least the
/// number of the key's items in the list, and when no count is over the cap, no key is (an
/// answer that the list is within the cap stays certain; an overestimate only sends the list to
/// the cap itself, after which the counts are made exact again).
///
/// Up to [`EXACT_KEYS`] keys are counted one by one; past that, per bucket of hashes
/// ([`BUCKETS`] of them): a bucket's count is at least each of its keys' counts, so the answer
/// stays certain, and the table stays small whatever the number of keys (a log of 400 k
/// distinct keys held 9 MB of counts one by one).
#[derive(Clone, Debug, Default)]
pub(super) struct Counts {
    /// Count per key hash, while there are few keys.
    per: FastMap<u64, u64>,
    /// Count per bucket of key hashes, once there are many (empty before).
    buckets: Vec<u64>,
    /// The largest count.
    max: u64,
    /// Occurrences per kind ([`Capped::cap_kind`]: the items and what they stand for), and the
    /// largest: a kind may be over its total ([`kind_total`]) with every key under the cap, and
    /// its share per key is computed from its occurrences, so the cap must run whenever they are
    /// over the total, even when the items kept are not.
    kinds: FastMap<&'static str, u64>,
    kind_max: u64,
}

/// Keys counted one by one before [`Counts`] counts per bucket.
const EXACT_KEYS: usize = 4096;
/// Buckets of [`Counts`] (a power of two).
const BUCKETS: usize = 1 << 16;

impl Counts {
    /// Counts the hashes (and the kinds, with the occurrences they stand for) of items not
    /// counted before.
    pub(super) fn add(&mut self, items: impl Iterator<Item = Counted>) {
        for (h, kind) in items {
            self.add_n(h, 1);
            if let Some((k, n)) = kind {
                self.add_kind(k, n);
            }
        }
    }

    /// Adds `n` to the count of kind `k`.
    fn add_kind(&mut self, k: &'static str, n: u64) {
        let c = self.kinds.entry(k).or_default();
        *c += n;
        self.kind_max = self.kind_max.max(*c);
    }

    /// Adds `n` to the count of hash `h`.
    fn add_n(&mut self, h: u64, n: u64) {
        let c = if self.buckets.is_empty() {
            let c = self.per.entry(h).or_default();
            *c += n;
            *c
        } else {
            let c = &mut self.buckets[bucket(h)];
            *c += n;
            *c
        };
        self.max = self.max.max(c);
        if self.per.len() > EXACT_KEYS {
            self.spill();
        }
    }

    /// From counts per key to counts per bucket.
    fn spill(&mut self) {
        self.buckets = vec![0; BUCKETS];
        for (h, n) in std::mem::take(&mut self.per) {
            let c = &mut self.buckets[bucket(h)];
            *c += n;
            self.max = self.max.max(*c);
        }
    }

    /// Whether no count is over `cap` (at least 1).
    pub(super) fn within(&self, cap: u64) -> bool {
        self.max <= cap.max(1) && self.kind_max <= kind_total(cap)
    }

    /// Forgets every count (the list is counted again from scratch).
    pub(super) fn clear(&mut self) {
        self.per.clear();
        self.buckets = Vec::new();
        self.max = 0;
        self.kinds.clear();
        self.kind_max = 0;
    }

    /// Adds the counts of a list whose items were appended to this one.
    pub(super) fn merge(&mut self, mut other: Counts) {
        if self.per.is_empty() && self.buckets.is_empty() && self.kinds.is_empty() {
            *self = other;
            return;
        }
        for (k, n) in std::mem::take(&mut other.kinds) {
            self.add_kind(k, n);
        }
        if !other.buckets.is_empty() && self.buckets.is_empty() {
            std::mem::swap(self, &mut other);
        }
        if self.buckets.is_empty() {
            self.per.reserve(other.per.len().min(EXACT_KEYS + 1));
        }
        for (h, n) in std::mem::take(&mut other.per) {
            self.add_n(h, n);
        }
        for (i, n) in other.buckets.into_iter().enumerate() {
            let c = &mut self.buckets[i];
            *c += n;
            self.max = self.max.max(*c);
        }
    }
}

/// The bucket of hash `h` (its high bits: the multiply of [`FastHasher`] mixes those best).
fn bucket(h: u64) -> usize {
    (h >> (64 - BUCKETS.trailing_zeros())) as usize
}

/// What [`Counts`] counts of an item: its key's hash, and its kind with its occurrences.
pub(super) type Counted = (u64, Option<(&'static str, u64)>);

/// What [`Counts`] counts of `i`, when it has a key.
fn counted_of(i: &Located) -> Option<Counted> {
    let k = i.cap_key()?;
    Some((key_hash(&k), Some((i.draft.kind, 1 + i.suppressed))))
}

/// What [`Counts`] counts of the items of `items` not counted yet, marking them counted.
pub(super) fn fresh_hashes(items: &mut [Located]) -> impl Iterator<Item = Counted> + '_ {
    items.iter_mut().filter(|i| !i.counted).filter_map(|i| {
        i.counted = true;
        counted_of(i)
    })
}

/// What [`Counts`] counts of the items of `items`.
pub(super) fn all_hashes(items: &[Located]) -> impl Iterator<Item = Counted> + '_ {
    items.iter().filter_map(counted_of)
}

/// [`cap_capped`] over a list of a scan whose items counted before are in `counts`: only the
/// items appended since are hashed, unless the counts say a key may be over the cap; then the
/// cap runs over the whole list and the counts are made again from what it kept. For the
/// attachments: capped per key only, with no total per kind (their keys are not folded into a
/// bounded number per kind, so a total could not be met and would be tried again on every call).
pub(super) fn cap_counted(items: &mut Vec<Located>, cap: u64, counts: &mut Counts) {
    let unkinded = |(h, _): Counted| (h, None);
    counts.add(fresh_hashes(items).map(unkinded));
    if counts.within(cap) {
        return;
    }
    let ids = dense_ids(items.iter().map(Located::cap_key));
    cap_by_id(items, cap, &ids, (Located::weight, |_: &Located| None), 0);
    counts.clear();
    counts.add(all_hashes(items).map(unkinded));
}

#[cfg(test)]
mod tests {
    /// Counts of many keys (past the exact ones, merged from parts of both kinds) never say a
    /// list is within the cap when a key is over it, and say so of lists that are well within.
    #[test]
    fn counts_of_many_keys_stay_certain() {
        use super::{Counts, EXACT_KEYS};
        use crate::scan::cap::key_hash;
        let keys = |from: u64, n: u64, times: u64| {
            (from..from + n)
                .flat_map(move |k| std::iter::repeat_n((key_hash(&k), None), times as usize))
        };
        for (parts, hot) in [(1usize, false), (3, false), (3, true)] {
            let mut total = Counts::default();
            for p in 0..parts as u64 {
                let mut c = Counts::default();
                // the first part few keys (counted one by one), the others many (per bucket)
                let n = if p == 0 { 100 } else { 3 * EXACT_KEYS as u64 };
                c.add(keys(p * 1_000_000, n, 2));
                if hot && p == 1 {
                    c.add(keys(7, 1, 999));
                }
                total.merge(c);
            }
            // key 7 is in the first part twice: 1001 with the hot part
            assert_eq!(total.within(1000), !hot, "parts {parts}, hot {hot}");
            assert!(!total.within(1), "two of each key");
        }
        let mut few = Counts::default();
        few.add(keys(0, 10, 3));
        assert!(few.within(3) && !few.within(2));
        few.clear();
        assert!(few.within(1));
    }
}
