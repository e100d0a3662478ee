//! The events cap's budget of keys per kind (issue 37, finding 5): the cap keeps up to N events
//! per host, kind, code, GPU and rank, so a log of a million distinct hosts or bus ids kept a
//! million events. Per kind, only [`SAMPLED_KEYS`] keys keep a key of their own: those of the
//! smallest hashes (a bottom-k sample: the same set whatever the order the keys come in and
//! however the input is cut into chunks, so the result does not depend on `--jobs`). The events
//! of the other keys are counted together under one key per kind ([`OTHER`]), capped like any
//! key: their first N-1 and last are kept, the rest counted on the last, so counts stay exact.
//!
//! Folding a key into a coarser one after the per-key cap gives what capping the coarser key
//! alone gives (the first N-1 and the last of the coarse key are among the first N-1 and the
//! last of their own keys), so folding as the sample fills, chunk by chunk, is exact.

use super::cap::{key_hash, FastMap};
use super::deferred::Stub;
use super::{CapKey, Capped, Located};
use std::collections::BTreeSet;

/// Keys of one kind that keep a key of their own.
pub const SAMPLED_KEYS: usize = 4096;

/// The host of the key the events of keys past the sample are counted under.
pub(super) const OTHER: &str = "\u{1}other keys";

/// The key an event of kind `kind` is counted under once folded.
pub(super) fn folded_key(kind: &'static str) -> CapKey<'static> {
    (Some(OTHER), kind, None, None, None)
}

/// Per kind, the hashes of the keys that keep a key of their own.
#[derive(Clone, Debug, Default)]
pub(super) struct Sample {
    per: FastMap<&'static str, BTreeSet<u64>>,
    /// A key left the sample since the last fold (or samples were merged).
    changed: bool,
}

impl Sample {
    /// Offers the key of hash `h` of kind `kind` to the sample.
    fn add(&mut self, kind: &'static str, h: u64) {
        let s = self.per.entry(kind).or_default();
        if s.len() < SAMPLED_KEYS {
            s.insert(h);
        } else if s.last().is_some_and(|&m| h < m) && s.insert(h) {
            s.pop_last();
            self.changed = true;
        }
    }

    /// Whether the key of hash `h` keeps its own key.
    fn keeps(&self, kind: &str, h: u64) -> bool {
        self.per
            .get(kind)
            .is_none_or(|s| s.len() < SAMPLED_KEYS || s.contains(&h))
    }

    /// Whether some kind has more keys than the sample holds (maybe: the sample is full).
    fn full(&self) -> bool {
        self.per.values().any(|s| s.len() >= SAMPLED_KEYS)
    }

    /// Adds the sample of the text that follows.
    pub(super) fn merge(&mut self, other: Sample) {
        self.changed |= !other.per.is_empty();
        for (kind, hashes) in other.per {
            for h in hashes {
                self.add(kind, h);
            }
        }
    }

    /// The kinds whose keys were folded, sorted.
    pub(super) fn folded_kinds(&self) -> Vec<&'static str> {
        let mut v: Vec<&'static str> = self
            .per
            .iter()
            .filter(|(_, s)| s.len() >= SAMPLED_KEYS)
            .map(|(k, _)| *k)
            .collect();
        v.sort_unstable();
        v
    }
}

/// Offers the keys of the events and stubs not offered yet to the sample, then folds those the
/// sample no longer keeps. Returns whether any item was folded (the cap's counts are then made
/// again from scratch: every item is marked not counted).
pub(super) fn fold(
    events: &mut [Located],
    (stubs, kinds): (&mut [Stub], &dyn Fn(u32) -> &'static str),
    sample: &mut Sample,
) -> bool {
    let mut fresh = false;
    for e in events.iter_mut().filter(|e| !e.sampled && !e.folded) {
        e.sampled = true;
        if let Some(k) = e.cap_key() {
            sample.add(k.1, key_hash(&k));
            fresh = true;
        }
    }
    for s in stubs.iter_mut().filter(|s| !s.sampled && !s.folded) {
        s.sampled = true;
        sample.add(kinds(s.key), s.hash);
        fresh = true;
    }
    if !(fresh || std::mem::take(&mut sample.changed)) || !sample.full() {
        return false;
    }
    let mut any = false;
    for e in events.iter_mut().filter(|e| !e.folded) {
        let Some(k) = e.cap_key() else { continue };
        if !sample.keeps(k.1, key_hash(&k)) {
            e.folded = true;
            any = true;
        }
    }
    for s in stubs.iter_mut().filter(|s| !s.folded) {
        let kind = kinds(s.key);
        if !sample.keeps(kind, s.hash) {
            s.folded = true;
            s.hash = key_hash(&folded_key(kind));
            any = true;
        }
    }
    if any {
        events.iter_mut().for_each(|e| e.counted = false);
        stubs.iter_mut().for_each(|s| s.counted = false);
    }
    any
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The sample is the same set whatever the order of the keys and however they are split.
    #[test]
    fn the_sample_does_not_depend_on_order_or_parts() {
        let hashes: Vec<u64> = (0..3 * SAMPLED_KEYS as u64).map(|i| key_hash(&i)).collect();
        let mut one = Sample::default();
        hashes.iter().for_each(|&h| one.add("xid", h));
        let mut parts = Sample::default();
        for part in hashes.rchunks(1000) {
            let mut p = Sample::default();
            part.iter().for_each(|&h| p.add("xid", h));
            parts.merge(p);
        }
        assert_eq!(one.per["xid"], parts.per["xid"]);
        assert_eq!(one.per["xid"].len(), SAMPLED_KEYS);
        let kept = hashes.iter().filter(|&&h| one.keeps("xid", h)).count();
        assert_eq!(kept, SAMPLED_KEYS);
        assert!(one.keeps("other kind", 7));
        assert_eq!(one.folded_kinds(), vec!["xid"]);
    }
}
