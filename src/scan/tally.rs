//! Counting before building: in a storm, an event past the first `cap - 1` of its key is dropped
//! by the events cap unless it is the last one, so the scanner only counts it (keys hashed from
//! borrowed text, one owned copy per distinct key) and remembers where the latest one was; at
//! the end of the chunk the latest of each key is read again and built, standing for the ones
//! counted. The result is the one building every event and capping after would give.

use super::{CapKey, Located, ScanOutput};
use crate::events::Draft;
use std::hash::BuildHasher;

type Hasher = super::FastBuild;

/// An owned [`CapKey`].
type OwnedKey = (
    Option<String>,
    String,
    Option<i64>,
    Option<String>,
    Option<i64>,
);

/// One key's occurrences in the chunk.
struct Slot {
    key: OwnedKey,
    /// Occurrences so far (built or only counted).
    seen: u64,
    /// Occurrences only counted.
    counted: u64,
    /// The candidate line (start, end, 1-based number) of the latest occurrence only counted.
    tail: (usize, usize, u64),
}

/// The occurrences of the event keys of one chunk.
pub(super) struct Tally {
    cap: u64,
    slots: super::FastMap<u64, Vec<Slot>>,
    hasher: Hasher,
}

fn borrowed(k: &OwnedKey) -> CapKey<'_> {
    (k.0.as_deref(), &k.1, k.2, k.3.as_deref(), k.4)
}

/// The key a draft gets as a located event with host `host`.
fn draft_key<'a>(d: &'a Draft, host: Option<&'a str>) -> CapKey<'a> {
    (
        d.host.as_deref().or(host),
        &d.kind,
        d.code,
        d.gpu.as_deref(),
        d.rank,
    )
}

impl Tally {
    /// A tally for the events cap `cap`; `None` when the cap keeps only the first event of a key
    /// (its occurrences are counted on that one, so every event is built).
    pub(super) fn new(cap: u64) -> Option<Tally> {
        (cap >= 2).then(|| Tally {
            cap,
            slots: super::FastMap::default(),
            hasher: Hasher::default(),
        })
    }

    fn slot(&mut self, key: CapKey<'_>) -> &mut Slot {
        let h = self.hasher.hash_one(key);
        let list = self.slots.entry(h).or_default();
        let at = match list.iter().position(|s| borrowed(&s.key) == key) {
            Some(at) => at,
            None => {
                list.push(Slot {
                    key: (
                        key.0.map(str::to_string),
                        key.1.to_string(),
                        key.2,
                        key.3.map(str::to_string),
                        key.4,
                    ),
                    seen: 0,
                    counted: 0,
                    tail: (0, 0, 0),
                });
                list.len() - 1
            }
        };
        &mut list[at]
    }

    fn seen(&self, key: CapKey<'_>) -> u64 {
        let h = self.hasher.hash_one(key);
        self.slots
            .get(&h)
            .and_then(|l| l.iter().find(|s| borrowed(&s.key) == key))
            .map_or(0, |s| s.seen)
    }

    /// Counts the drafts of the record on candidate line `at`; true when they were only counted
    /// (every one is past the first `cap - 1` of its key, none needs more than its own line
    /// rebuilt: no attachment, progress sample, kernel report, segment or `nvrm` burst), false
    /// when the caller must build them.
    pub(super) fn count(
        &mut self,
        drafts: &[Draft],
        host: Option<&str>,
        simple: bool,
        nvrm: &[String],
        at: (usize, usize, u64),
    ) -> bool {
        let plain = |d: &Draft| {
            d.attach_to.is_none()
                && d.kind != "progress"
                && !d.report
                && !d.attrs.contains_key("segment")
                && !nvrm.contains(&d.recognizer)
        };
        let keys: Vec<CapKey<'_>> = drafts
            .iter()
            .filter(|d| d.attach_to.is_none() && d.kind != "progress")
            .map(|d| draft_key(d, host))
            .collect();
        let distinct = keys.iter().enumerate().all(|(i, k)| !keys[..i].contains(k));
        let only_count = simple
            && distinct
            && !drafts.is_empty()
            && drafts.iter().all(plain)
            && keys.iter().all(|&k| self.seen(k) + 1 >= self.cap);
        for &k in &keys {
            let s = self.slot(k);
            s.seen += 1;
            if only_count {
                s.counted += 1;
                s.tail = at;
            }
        }
        only_count
    }

    /// Builds the latest counted occurrence of every key (it stands for the others counted) and
    /// puts it in line order among the events built.
    pub(super) fn finish(
        self,
        out: &mut ScanOutput,
        mut build: impl FnMut((usize, usize, u64)) -> Vec<Located>,
    ) {
        let mut tails: Vec<((usize, usize, u64), CapKey<'_>, u64)> = self
            .slots
            .values()
            .flatten()
            .filter(|s| s.counted > 0)
            .map(|s| (s.tail, borrowed(&s.key), s.counted))
            .collect();
        if tails.is_empty() {
            return;
        }
        tails.sort_by_key(|t| t.0);
        let mut i = 0;
        while i < tails.len() {
            let at = tails[i].0;
            let mut j = i;
            while j < tails.len() && tails[j].0 == at {
                j += 1;
            }
            for mut l in build(at) {
                let key = (
                    l.host.as_deref(),
                    l.draft.kind.as_str(),
                    l.draft.code,
                    l.draft.gpu.as_deref(),
                    l.draft.rank,
                );
                if let Some(t) = tails[i..j].iter().find(|t| t.1 == key) {
                    l.suppressed = t.2 - 1;
                    out.events.push(l);
                }
            }
            i = j;
        }
        out.events.sort_by_key(|l| l.line);
    }
}
