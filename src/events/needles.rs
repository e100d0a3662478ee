//! Every occurrence of a fixed set of short strings in a short text: the recognizers' anchors in
//! a candidate record, the NVRM words in a message.
//!
//! An Aho-Corasick automaton does this in one pass too, but building one over a few hundred
//! strings took about a millisecond per run (its trie, failure links and transition tables),
//! which a one-line input paid in full, while the texts searched are single records of a few
//! hundred bytes. Here building is one sort of the strings by their first two bytes; a search
//! tests each position of the text against a bit table of those first two bytes (8 KiB) and
//! compares only the strings that begin there.
//!
//! That pair scan costs a table test per byte and a comparison per string at each position whose
//! pair begins one: bounded, but on hostile text (60 KB of spaces, where the pair of blanks
//! begins the indented `    Upgrade ` anchors) it came to about 50 ns a byte. A text longer than
//! [`LONG_TEXT`] is searched with an Aho-Corasick automaton instead, built on first use (a run
//! with no long record never builds it), whose cost is one transition per byte whatever the text.
//! A set made [`Needles::warming`] (the sets searched once per candidate record) takes the
//! automaton for every text once it has been searched [`WARM_SEARCHES`] times: the build (a few ms) is then
//! paid back (a log of many distinct candidate records spent 10% of its time in the pair scan),
//! while a one-line input still never builds it. Sets searched a bounded number of times (while
//! loading) never warm. The built-in anchors' automaton takes 3.6 MB (486 strings; its build
//! peaks a few MB higher); the contiguous NFA of the same crate takes 0.2 MB but searched the
//! 60 KB hostile runs at 187 MB/s instead of 207, under issue 37's bound.

use aho_corasick::automaton::{Automaton, OverlappingState};
use aho_corasick::dfa::DFA;
use aho_corasick::{Input, MatchKind};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::OnceLock;

/// Texts longer than this are searched with the automaton (see the module's comment).
pub const LONG_TEXT: usize = 2048;

/// Searches of one set after which every text is searched with the automaton.
const WARM_SEARCHES: u32 = 4096;

/// A set of non-empty byte strings, searched for every occurrence of each (overlapping).
pub struct Needles {
    /// The strings, in the order given (an occurrence reports its index here).
    pats: Vec<Box<[u8]>>,
    /// One bit per first two bytes (little-endian `u16`) of the strings of two bytes or more.
    pairs: Box<[u64; 1024]>,
    /// (first two bytes, index) of the strings of two bytes or more, sorted.
    by_pair: Vec<(u16, u32)>,
    /// The indexes of the one-byte strings, by their byte (rare: a list, usually empty).
    single: Vec<(u8, u32)>,
    /// The automaton over `pats` for long texts, built on first use (`None`: no pattern), with
    /// the index in `pats` of each of its pattern ids (it holds only the non-empty strings).
    automaton: OnceLock<Option<(DFA, Vec<u32>)>>,
    /// Searches so far, counted up to [`WARM_SEARCHES`].
    searches: AtomicU32,
    /// Whether the set takes the automaton once warm ([`Needles::warming`]).
    warms: bool,
}

impl Needles {
    /// The set of `pats`; an empty string is never found.
    pub fn new<I, P>(pats: I) -> Needles
    where
        I: IntoIterator<Item = P>,
        P: AsRef<[u8]>,
    {
        let pats: Vec<Box<[u8]>> = pats.into_iter().map(|p| p.as_ref().into()).collect();
        let mut pairs = Box::new([0u64; 1024]);
        let mut by_pair = Vec::with_capacity(pats.len());
        let mut single = Vec::new();
        for (i, p) in pats.iter().enumerate() {
            let i = i as u32;
            match **p {
                [] => {}
                [b] => single.push((b, i)),
                [a, b, ..] => {
                    let k = u16::from_le_bytes([a, b]);
                    pairs[usize::from(k >> 6)] |= 1 << (k & 63);
                    by_pair.push((k, i));
                }
            }
        }
        by_pair.sort_unstable();
        Needles {
            pats,
            pairs,
            by_pair,
            single,
            automaton: OnceLock::new(),
            searches: AtomicU32::new(0),
            warms: false,
        }
    }

    /// The set, searching every text with the automaton once it has been searched
    /// [`WARM_SEARCHES`] times (see the module's comment): for sets searched once per record.
    pub fn warming(mut self) -> Needles {
        self.warms = true;
        self
    }

    /// Calls `found(start, index)` for every occurrence in `hay` of a string of the set (a
    /// string found twice is reported twice), in the order of the occurrences' starts.
    pub fn each(&self, hay: &[u8], mut found: impl FnMut(usize, usize)) {
        self.until(hay, |at, p| {
            found(at, p);
            false
        });
    }

    /// True when `hay` holds a string of the set.
    pub fn is_match(&self, hay: &[u8]) -> bool {
        if self.by_automaton(hay) {
            let mut state = OverlappingState::start();
            return self.automaton().is_some_and(|(ac, _)| {
                ac.try_find_overlapping(&Input::new(hay), &mut state)
                    .is_ok()
                    && state.get_match().is_some()
            });
        }
        self.until(hay, |_, _| true)
    }

    /// [`Needles::each`] until `stop` returns true; returns whether it did.
    fn until(&self, hay: &[u8], stop: impl FnMut(usize, usize) -> bool) -> bool {
        if self.by_automaton(hay) {
            self.until_long(hay, stop)
        } else {
            self.until_pairs(hay, stop)
        }
    }

    /// Whether `hay` is searched with the automaton: a long text, or a set searched often.
    fn by_automaton(&self, hay: &[u8]) -> bool {
        if hay.len() > LONG_TEXT || (self.warms && self.automaton.get().is_some()) {
            return true;
        }
        // counted without a write once warm: the automaton is then built, and taken above
        self.warms && self.searches.fetch_add(1, Ordering::Relaxed) >= WARM_SEARCHES
    }

    /// The automaton over the strings and the index of each of its pattern ids (built on first
    /// use).
    fn automaton(&self) -> Option<&(DFA, Vec<u32>)> {
        self.automaton
            .get_or_init(|| {
                // an empty string is never found: it stays out (its index is kept by the map)
                let kept: Vec<&[u8]> = self
                    .pats
                    .iter()
                    .filter(|p| !p.is_empty())
                    .map(|p| &p[..])
                    .collect();
                if kept.is_empty() {
                    return None;
                }
                // the DFA itself, not `AhoCorasick`, whose searches step through a trait object
                // (a call per byte); no prefilter: its skips fail on hostile text
                let ac = DFA::builder()
                    .match_kind(MatchKind::Standard)
                    .prefilter(false)
                    .build(kept)
                    .ok()?;
                let index = (0..self.pats.len() as u32)
                    .filter(|&i| !self.pats[i as usize].is_empty())
                    .collect();
                Some((ac, index))
            })
            .as_ref()
    }

    /// [`Needles::until`] on a long text: the automaton's overlapping search (occurrences come
    /// by their ends), reported in the order of their starts.
    fn until_long(&self, hay: &[u8], mut stop: impl FnMut(usize, usize) -> bool) -> bool {
        let Some((ac, index)) = self.automaton() else {
            return false;
        };
        let mut found: Vec<(usize, u32)> = Vec::new();
        let (input, mut state) = (Input::new(hay), OverlappingState::start());
        while let Ok(()) = ac.try_find_overlapping(&input, &mut state) {
            let Some(m) = state.get_match() else { break };
            found.push((m.start(), index[m.pattern().as_usize()]));
        }
        // the pair scan's order: by start, then the strings of two bytes or more by their first
        // pair and index, then the one-byte strings
        let rank = |&(at, p): &(usize, u32)| {
            let pat = &self.pats[p as usize];
            match **pat {
                [_] => (at, 1, u16::MAX, p),
                [a, b, ..] => (at, 0, u16::from_le_bytes([a, b]), p),
                [] => (at, 2, 0, p),
            }
        };
        found.sort_unstable_by_key(rank);
        found.into_iter().any(|(at, p)| stop(at, p as usize))
    }

    /// [`Needles::until`] by the table of first pairs.
    fn until_pairs(&self, hay: &[u8], mut stop: impl FnMut(usize, usize) -> bool) -> bool {
        for i in 0..hay.len() {
            if let Some(&b) = hay.get(i + 1) {
                let k = u16::from_le_bytes([hay[i], b]);
                if self.pairs[usize::from(k >> 6)] & (1 << (k & 63)) != 0 {
                    let from = self.by_pair.partition_point(|&(x, _)| x < k);
                    for &(_, p) in self.by_pair[from..].iter().take_while(|&&(x, _)| x == k) {
                        if hay[i..].starts_with(&self.pats[p as usize]) && stop(i, p as usize) {
                            return true;
                        }
                    }
                }
            }
            for &(b, p) in &self.single {
                if hay[i] == b && stop(i, p as usize) {
                    return true;
                }
            }
        }
        false
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use aho_corasick::{AhoCorasickBuilder, MatchKind};

    /// The same occurrences as an Aho-Corasick automaton's overlapping search, for strings that
    /// overlap, contain each other, repeat, share first bytes or are one byte long.
    #[test]
    fn finds_what_an_automaton_finds() {
        let pats = [
            "Killed",
            "Killed process",
            "NVRM",
            "NVRM: Xid",
            "Xid",
            "id",
            "d",
            "NV",
            "NVRM",
            "ss",
            "\u{e9}t\u{e9}",
            "",
        ];
        let ac = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .build(&pats[..pats.len() - 1])
            .unwrap();
        let n = Needles::new(pats);
        let short = [
            "",
            "d",
            "NVRM: Xid (PCI:0000:3b:00): 79, Killed process 12 ssss",
            "KilledKilled processNVRMNVRM",
            "\u{e9}t\u{e9} d\u{e9}j\u{e0} vu, NV",
        ];
        // the same texts made long, searched by the automaton
        let long: Vec<String> = short
            .iter()
            .map(|h| format!("{h}{}{h} Xid", " ".repeat(LONG_TEXT)))
            .collect();
        for hay in short.into_iter().chain(long.iter().map(String::as_str)) {
            let mut want: Vec<(usize, usize)> = ac
                .find_overlapping_iter(hay)
                .map(|m| (m.start(), m.pattern().as_usize()))
                .collect();
            let mut got = Vec::new();
            n.each(hay.as_bytes(), |at, p| got.push((at, p)));
            assert!(
                got.windows(2).all(|w| w[0].0 <= w[1].0),
                "{hay:?}: in order"
            );
            want.sort_unstable();
            got.sort_unstable();
            assert_eq!(n.is_match(hay.as_bytes()), !want.is_empty(), "{hay:?}");
            assert_eq!(got, want, "{hay:?}");
        }
    }

    /// A set searched often takes the automaton for short texts too, and reports the same
    /// occurrences in the same order as the pair scan of a set searched once.
    #[test]
    fn a_warm_set_reports_what_the_pair_scan_reports() {
        let pats = [
            "Xid",
            "NVRM: Xid",
            "id",
            "d",
            "Killed",
            "Killed process",
            "ss",
            "NV",
        ];
        let hays = [
            "NVRM: Xid (PCI:0000:3b:00): 79, Killed process 12 ssss",
            "dd Xid Xidd KilledKilled process NVNVRM",
            "",
        ];
        let warm = Needles::new(pats).warming();
        for _ in 0..=WARM_SEARCHES {
            warm.is_match(b"no anchor here");
        }
        assert!(warm.by_automaton(b"short"), "warm: the automaton");
        for hay in hays {
            let cold = Needles::new(pats);
            for _ in 0..=WARM_SEARCHES {
                cold.is_match(b"no anchor here");
            }
            let (mut a, mut b) = (Vec::new(), Vec::new());
            cold.each(hay.as_bytes(), |at, p| a.push((at, p)));
            assert!(cold.automaton.get().is_none(), "not warming: the pair scan");
            warm.each(hay.as_bytes(), |at, p| b.push((at, p)));
            assert_eq!(a, b, "{hay:?}");
        }
    }
}
