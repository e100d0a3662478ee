//! Events counted before they are built: a candidate line whose events' keys are known (see
//! [`super::memo`]) becomes a [`Stub`] (where it is, which key) instead of an event. The events
//! cap runs over events and stubs together, in line order, as if every stub were the event it
//! stands for; only the stubs the cap keeps over the whole buffer are built, at the end
//! ([`materialize`]), by reading their line again. The result is the one building every event
//! gives.

use super::candidate::candidate;
use super::cap::cap_plan;
use super::counts::{all_hashes, fresh_hashes, Counts};
use super::{CapKey, Capped, Located, ScanOutput};
use crate::events::RecognizerSet;
use crate::formats::wrapper::FileWrappers;
use rayon::prelude::*;
use std::sync::Arc;

/// An owned [`CapKey`]: its host and GPU texts shared (see [`owned`]).
pub(super) type OwnedKey = (
    Option<Arc<str>>,
    &'static str,
    Option<i64>,
    Option<Arc<str>>,
    Option<i64>,
);

/// The borrowed form of an owned key.
pub(super) fn borrowed(k: &OwnedKey) -> CapKey<'_> {
    (k.0.as_deref(), k.1, k.2, k.3.as_deref(), k.4)
}

/// An owned copy of a key, its texts taken from `texts` (and added there when new): the keys of
/// one host or one GPU hold one copy of its text, not one each.
pub(super) fn owned(k: CapKey<'_>, texts: &mut super::FastSet<Arc<str>>) -> OwnedKey {
    let mut share = |t: &str| match texts.get(t) {
        Some(a) => a.clone(),
        None => {
            let a: Arc<str> = Arc::from(t);
            texts.insert(a.clone());
            a
        }
    };
    (k.0.map(&mut share), k.1, k.2, k.3.map(&mut share), k.4)
}

/// One event not built yet: the line that gives it and its key.
#[derive(Clone, Copy, Debug)]
pub(super) struct Stub {
    /// Start and end of the line in the scanned buffer (absolute offsets).
    pub at: (usize, usize),
    /// 1-based line number, relative to the output holding the stub.
    pub line: u64,
    /// Index of the key in the holder's key table.
    pub key: u32,
    /// The key's hash ([`key_hash`]).
    pub hash: u64,
    /// Occurrences past the cap this one stands for.
    pub suppressed: u64,
    /// Counted in the events cap's counts of the holder (see [`Counts`]).
    pub counted: bool,
    /// Offered to the budget of keys per kind (see [`super::fold`]).
    pub sampled: bool,
    /// Counted under its kind's key for keys past the budget (see [`super::fold`]).
    pub folded: bool,
}

/// The events cap over `events` and `stubs` (both in line order; keys of stubs in `keys`) as one
/// sequence in line order (see [`super::cap_by_key`]).
/// `counts` are what the events and stubs counted before add up to (see [`Counts`]): only the
/// ones appended since are counted, and the whole sequence is capped only when a key may be over.
pub(super) fn cap_joint(
    (events, stubs): (&mut Vec<Located>, &mut Vec<Stub>),
    keys: &[OwnedKey],
    cap: u64,
    counts: &mut Counts,
) {
    counts.add(fresh_hashes(events));
    counts.add(stubs.iter_mut().filter(|s| !s.counted).map(|s| {
        s.counted = true;
        (s.hash, Some((keys[s.key as usize].1, 1 + s.suppressed)))
    }));
    if counts.within(cap) {
        return;
    }
    cap_sequence(events, stubs, keys, cap);
    counts.clear();
    let stub_hashes = stubs
        .iter()
        .map(|s| (s.hash, Some((keys[s.key as usize].1, 1 + s.suppressed))));
    counts.add(all_hashes(events).chain(stub_hashes));
}

/// The events cap over events and stubs as one sequence in line order.
fn cap_sequence(events: &mut Vec<Located>, stubs: &mut Vec<Stub>, keys: &[OwnedKey], cap: u64) {
    if stubs.is_empty() {
        let ids = super::cap::dense_ids(events.iter().map(Located::cap_key));
        super::cap::cap_ids(events, cap, &ids);
        return;
    }
    // the merged order: Ok(event index) or Err(stub index)
    let mut order: Vec<Result<usize, usize>> = Vec::with_capacity(events.len() + stubs.len());
    let (mut i, mut j) = (0, 0);
    while i < events.len() || j < stubs.len() {
        if j >= stubs.len() || (i < events.len() && events[i].line <= stubs[j].line) {
            order.push(Ok(i));
            i += 1;
        } else {
            order.push(Err(j));
            j += 1;
        }
    }
    let ids = joint_ids(&order, events, stubs, keys);
    let weight = |n: usize| match order[n] {
        Ok(i) => events[i].suppressed,
        Err(j) => stubs[j].suppressed,
    };
    let kind = |n: usize| match order[n] {
        Ok(i) => events[i].cap_kind(),
        Err(j) => Some(keys[stubs[j].key as usize].1),
    };
    let Some(plan) = cap_plan(&ids, cap, weight, kind) else {
        return;
    };
    for &(n, c) in &plan.add {
        match order[n] {
            Ok(i) => events[i].suppressed += c,
            Err(j) => stubs[j].suppressed += c,
        }
    }
    let (mut keep_e, mut keep_s) = (vec![true; events.len()], vec![true; stubs.len()]);
    for (n, o) in order.iter().enumerate() {
        match *o {
            Ok(i) => keep_e[i] = plan.keep[n],
            Err(j) => keep_s[j] = plan.keep[n],
        }
    }
    retain_mask(events, &keep_e);
    retain_mask(stubs, &keep_s);
}

/// [`super::cap::dense_ids`] over the merged order: a stub's key is numbered from its index in `keys`
/// (distinct keys), so each key's text is hashed once, not once per stub.
fn joint_ids<'a>(
    order: &[Result<usize, usize>],
    events: &'a [Located],
    stubs: &[Stub],
    keys: &'a [OwnedKey],
) -> Vec<Option<u32>> {
    let mut map: super::FastMap<CapKey<'a>, u32> = super::FastMap::default();
    let mut of_key: Vec<u32> = vec![u32::MAX; keys.len()];
    fn number<'a>(k: CapKey<'a>, map: &mut super::FastMap<CapKey<'a>, u32>) -> u32 {
        let n = map.len() as u32;
        *map.entry(k).or_insert(n)
    }
    order
        .iter()
        .map(|o| match *o {
            Ok(i) => events[i].cap_key().map(|k| number(k, &mut map)),
            Err(j) if stubs[j].folded => {
                let kind = keys[stubs[j].key as usize].1;
                Some(number(super::fold::folded_key(kind), &mut map))
            }
            Err(j) => {
                let k = stubs[j].key as usize;
                if of_key[k] == u32::MAX {
                    of_key[k] = number(borrowed(&keys[k]), &mut map);
                }
                Some(of_key[k])
            }
        })
        .collect()
}

fn retain_mask<T>(v: &mut Vec<T>, keep: &[bool]) {
    let mut i = 0;
    v.retain(|_| {
        i += 1;
        keep[i - 1]
    });
}

impl ScanOutput {
    /// Moves the stubs of `p` (the output of the text that follows, `base` lines on) into this
    /// output, its keys into this key table.
    pub(super) fn append_stubs(&mut self, p: &mut ScanOutput, base: u64) {
        if p.deferred.is_empty() {
            return;
        }
        let mut index: super::FastMap<CapKey<'_>, u32> = self
            .keys
            .iter()
            .enumerate()
            .map(|(i, k)| (borrowed(k), i as u32))
            .collect();
        let mut fresh: Vec<OwnedKey> = Vec::new();
        let mut remap: Vec<u32> = Vec::with_capacity(p.keys.len());
        for k in &p.keys {
            let n = (self.keys.len() + fresh.len()) as u32;
            let id = *index.entry(borrowed(k)).or_insert(n);
            if id == n {
                fresh.push(k.clone());
            }
            remap.push(id);
        }
        drop(index);
        self.keys.extend(fresh);
        self.deferred.extend(p.deferred.drain(..).map(|mut s| {
            s.line += base;
            s.key = remap[s.key as usize];
            s
        }));
        p.keys.clear();
    }

    /// Keeps only the keys the stubs name (after a cap dropped some).
    pub(super) fn compact_keys(&mut self) {
        let mut remap: Vec<u32> = vec![u32::MAX; self.keys.len()];
        let mut keys = Vec::new();
        for s in &mut self.deferred {
            let k = s.key as usize;
            if remap[k] == u32::MAX {
                remap[k] = keys.len() as u32;
                keys.push(std::mem::take(&mut self.keys[k]));
            }
            s.key = remap[k];
        }
        self.keys = keys;
    }
}

/// Builds the events the stubs stand for (each line read again, the lines in parallel) and puts
/// them among the events in line order.
pub(super) fn materialize(
    buf: &[u8],
    set: &RecognizerSet,
    fw: &FileWrappers,
    out: &mut ScanOutput,
) {
    if out.deferred.is_empty() {
        return;
    }
    let stubs = std::mem::take(&mut out.deferred);
    let keys = std::mem::take(&mut out.keys);
    // the stubs of one line lie next to each other
    let mut groups: Vec<&[Stub]> = Vec::new();
    let mut s = 0;
    for e in 1..=stubs.len() {
        if e == stubs.len() || stubs[e].at != stubs[s].at {
            groups.push(&stubs[s..e]);
            s = e;
        }
    }
    // the lines are read in batches, a piece of a batch per task, each piece with one output
    // (so that the events of a host share its text); a batch's events go into the list before
    // the next batch is built, so the memory of one batch serves the next
    let piece = 1024;
    let batch = piece * 4 * rayon::current_num_threads().max(1);
    let mut events = std::mem::take(&mut out.events).into_iter().peekable();
    let mut merged: Vec<Located> = Vec::with_capacity(events.len() + stubs.len());
    for b in groups.chunks(batch) {
        let built: Vec<Vec<Located>> = b
            .par_chunks(piece)
            .map(|gs| {
                let mut one = ScanOutput::default();
                let mut kept = Vec::with_capacity(gs.len());
                // the lines of a piece come in order: their time searches go on from each other
                super::record::forget_stamps();
                for g in gs {
                    rebuild(buf, set, fw, (g, &keys), &mut one, &mut kept);
                }
                kept
            })
            .collect();
        for l in built.into_iter().flatten() {
            while events.peek().is_some_and(|e| e.line <= l.line) {
                merged.extend(events.next());
            }
            merged.push(l);
        }
    }
    merged.extend(events);
    out.events = merged;
}

/// Reads the line of the stubs `g` (of one line) again into `one` and moves the events they
/// stand for to `kept`.
fn rebuild(
    buf: &[u8],
    set: &RecognizerSet,
    fw: &FileWrappers,
    (g, keys): (&[Stub], &[OwnedKey]),
    one: &mut ScanOutput,
    kept: &mut Vec<Located>,
) {
    let (ls, le) = g[0].at;
    one.events.clear();
    one.attachments.clear();
    candidate(
        buf,
        ((ls, le, g[0].line), None),
        (0, buf.len()),
        set,
        one,
        fw,
        None,
    );
    let before = kept.len();
    for mut l in one.events.drain(..) {
        let want = l.cap_key();
        if let Some(st) = g
            .iter()
            .find(|s| Some(borrowed(&keys[s.key as usize])) == want)
        {
            l.suppressed = st.suppressed;
            // counted as the stub it replaces: the same key
            l.counted = st.counted;
            l.sampled = true;
            l.folded = st.folded;
            kept.push(l);
        }
    }
    debug_assert_eq!(
        kept.len() - before,
        g.len(),
        "a stub's line gave another key"
    );
}
