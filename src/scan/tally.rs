//! Counting before building: in a storm, an event past the first `cap - 1` of its key is dropped
//! by the events cap unless it is the last one, so the scanner only counts it (keys hashed from
//! borrowed text, one owned copy per distinct key) and remembers where the latest one was; at
//! the end of the chunk the latest of each key becomes a [`Stub`] standing for the ones counted.
//! The result is the one building every event and capping after would give.

use super::deferred::{borrowed, owned, OwnedKey, Stub};
use super::{CapKey, ScanOutput};
use crate::events::Draft;
use std::hash::BuildHasher;

/// Keys one chunk's tally holds at most (some 200 bytes each). A storm has a few; a log of
/// many distinct keys (thousands of GPUs and codes) would hold one per event while the memory
/// of the chunks in flight adds up, and gains nothing from counting: past this many, the
/// events of new keys are built as they come, and the events cap applies to them after.
const MAX_KEYS: usize = 16 * 1024;

/// One key's occurrences in the chunk.
#[derive(Clone, Copy)]
struct Slot {
    /// Occurrences so far (built, deferred or only counted).
    seen: u64,
    /// Occurrences only counted.
    counted: u64,
    /// The candidate line (start, end, 1-based number) of the latest occurrence only counted.
    tail: (usize, usize, u64),
}

/// The occurrences of the event keys of one chunk.
pub(super) struct Tally {
    cap: u64,
    /// Keys, by id.
    keys: Vec<OwnedKey>,
    /// Their hashes ([`super::cap::key_hash`]), by id.
    hashes: Vec<u64>,
    slots: Vec<Slot>,
    /// The first id of each hash; the others of that hash follow in `next`.
    index: super::FastMap<u64, u32>,
    /// The next id with the same hash as this one (`u32::MAX`: none), by id.
    next: Vec<u32>,
    /// The host and GPU texts of the keys, each once.
    texts: super::FastSet<std::sync::Arc<str>>,
    hasher: super::FastBuild,
}

/// The key a draft gets as a located event with host `host`.
fn draft_key<'a>(d: &'a Draft, host: Option<&'a str>) -> CapKey<'a> {
    (d.host().or(host), d.kind, d.code, d.gpu.as_deref(), d.rank)
}

/// Whether a draft is an event its line alone can rebuild: no attachment, progress sample,
/// kernel report, segment or `nvrm` burst (`nvrm` are the ids of the `nvrm` recognizers).
pub(super) fn plain(d: &Draft, nvrm: &[&'static str]) -> bool {
    d.attach_to().is_none()
        && d.kind != "progress"
        && !d.report()
        && !d.attrs.contains_key("segment")
        && !nvrm.contains(&d.recognizer())
}

impl Tally {
    /// A tally for the events cap `cap`; `None` when the cap keeps only the first event of a key
    /// (its occurrences are counted on that one, so every event is built).
    pub(super) fn new(cap: u64) -> Option<Tally> {
        (cap >= 2).then(|| Tally {
            cap,
            keys: Vec::new(),
            hashes: Vec::new(),
            slots: Vec::new(),
            index: super::FastMap::default(),
            next: Vec::new(),
            texts: super::FastSet::default(),
            hasher: super::FastBuild::default(),
        })
    }

    /// The keys, by id.
    pub(super) fn keys(&self) -> &[OwnedKey] {
        &self.keys
    }

    /// The hash of key `id` (the one the events cap counts it by).
    pub(super) fn hash_of(&self, id: u32) -> u64 {
        self.hashes[id as usize]
    }

    /// The id of `key`, if it has one.
    fn find(&self, key: CapKey<'_>) -> Option<u32> {
        self.find_hashed(key, self.hasher.hash_one(key))
    }

    /// [`Tally::find`] of `key` with hash `h`.
    fn find_hashed(&self, key: CapKey<'_>, h: u64) -> Option<u32> {
        let mut id = *self.index.get(&h)?;
        while id != u32::MAX {
            if borrowed(&self.keys[id as usize]) == key {
                return Some(id);
            }
            id = self.next[id as usize];
        }
        None
    }

    /// The id of `key`, given one if it is new, unless the tally is full ([`MAX_KEYS`]): the
    /// events of a key without an id are built, and the events cap applies to them after.
    pub(super) fn id(&mut self, key: CapKey<'_>) -> Option<u32> {
        let h = self.hasher.hash_one(key);
        if let Some(id) = self.find_hashed(key, h) {
            return Some(id);
        }
        if self.keys.len() >= MAX_KEYS {
            return None;
        }
        let id = self.keys.len() as u32;
        self.keys.push(owned(key, &mut self.texts));
        self.hashes.push(h);
        self.slots.push(Slot {
            seen: 0,
            counted: 0,
            tail: (0, 0, 0),
        });
        // the new id heads the ids of its hash
        let first = self.index.insert(h, id).unwrap_or(u32::MAX);
        self.next.push(first);
        Some(id)
    }

    /// The ids of the keys of `drafts` (host `host`) when every draft is [`plain`] and their keys
    /// are distinct: what the memo keeps for a simple line.
    pub(super) fn plain_ids(
        &mut self,
        drafts: &[Draft],
        host: Option<&str>,
        nvrm: &[&'static str],
    ) -> Option<Vec<u32>> {
        if !all_plain(drafts, nvrm) {
            return None;
        }
        let ids: Option<Vec<u32>> = drafts.iter().map(|d| self.id(draft_key(d, host))).collect();
        ids.filter(|ids| distinct(ids))
    }

    /// [`Tally::plain_ids`] for keys met before only (`None` if one is new): what the memo's
    /// probe compares, giving no key an id.
    pub(super) fn known_ids(
        &self,
        drafts: &[Draft],
        host: Option<&str>,
        nvrm: &[&'static str],
    ) -> Option<Vec<u32>> {
        if !all_plain(drafts, nvrm) {
            return None;
        }
        let ids: Option<Vec<u32>> = drafts
            .iter()
            .map(|d| self.find(draft_key(d, host)))
            .collect();
        ids.filter(|ids| distinct(ids))
    }

    /// The ids of keys `ids` with `host` in place of their host (given ids when new), unless the
    /// tally is full: what a signature without its host gives a line of another host.
    pub(super) fn rehost(&mut self, ids: &[u32], host: &str) -> Option<Vec<u32>> {
        let mut out = Vec::with_capacity(ids.len());
        for &id in ids {
            let k = &self.keys[id as usize];
            if k.0.as_deref() == Some(host) {
                out.push(id);
                continue;
            }
            let (kind, code, gpu, rank) = (k.1, k.2, k.3.clone(), k.4);
            out.push(self.id((Some(host), kind, code, gpu.as_deref(), rank))?);
        }
        Some(out)
    }

    /// Counts the drafts of the record on candidate line `at`; true when they were only counted
    /// (every one is past the first `cap - 1` of its key, none needs more than its own line
    /// rebuilt: see [`plain`]), false when the caller must build them.
    pub(super) fn count(
        &mut self,
        drafts: &[Draft],
        host: Option<&str>,
        simple: bool,
        nvrm: &[&'static str],
        at: (usize, usize, u64),
    ) -> bool {
        let counted = |d: &&Draft| d.attach_to().is_none() && d.kind != "progress";
        let ids: Vec<u32> = drafts
            .iter()
            .filter(counted)
            .filter_map(|d| self.id(draft_key(d, host)))
            .collect();
        // a key without an id (the tally is full) is built
        let all_known = ids.len() == drafts.iter().filter(counted).count();
        let only_count = simple
            && all_known
            && distinct(&ids)
            && !drafts.is_empty()
            && drafts.iter().all(|d| plain(d, nvrm))
            && self.past(&ids);
        self.note(&ids, only_count, at);
        only_count
    }

    /// Every key of `ids` is past the first `cap - 1` of its key.
    fn past(&self, ids: &[u32]) -> bool {
        ids.iter()
            .all(|&k| self.slots[k as usize].seen + 1 >= self.cap)
    }

    fn note(&mut self, ids: &[u32], only_count: bool, at: (usize, usize, u64)) {
        for &k in ids {
            let s = &mut self.slots[k as usize];
            s.seen += 1;
            if only_count {
                s.counted += 1;
                s.tail = at;
            }
        }
    }

    /// Counts the events of keys `ids` (plain, distinct: from the memo) on candidate line `at`;
    /// true when they were only counted, false when the caller must defer them.
    pub(super) fn count_ids(&mut self, ids: &[u32], at: (usize, usize, u64)) -> bool {
        let only_count = self.past(ids);
        self.note(ids, only_count, at);
        only_count
    }

    /// Makes the latest counted occurrence of every key a stub (it stands for the others
    /// counted), puts the stubs in line order, and hands the keys to `out`.
    pub(super) fn finish(self, out: &mut ScanOutput) {
        for (id, s) in self.slots.iter().enumerate() {
            if s.counted > 0 {
                out.deferred.push(Stub {
                    at: (s.tail.0, s.tail.1),
                    line: s.tail.2,
                    key: id as u32,
                    hash: self.hashes[id],
                    suppressed: s.counted - 1,
                    counted: false,
                    sampled: false,
                    folded: false,
                });
            }
        }
        // stable: the stubs of one line keep the order of its drafts
        out.deferred.sort_by_key(|s| s.line);
        out.keys = self.keys;
        out.compact_keys();
    }
}

/// A record of drafts the memo may keep: at least one, every one [`plain`].
fn all_plain(drafts: &[Draft], nvrm: &[&'static str]) -> bool {
    !drafts.is_empty() && drafts.iter().all(|d| plain(d, nvrm))
}

/// No id of `ids` repeats.
fn distinct(ids: &[u32]) -> bool {
    ids.iter().enumerate().all(|(i, k)| !ids[..i].contains(k))
}
