//! Every occurrence of a fixed set of short strings in a short text: the recognizers' anchors in
//! a candidate record, the NVRM words in a message.
//!
//! An Aho-Corasick automaton does this in one pass too, but building one over a few hundred
//! strings took about a millisecond per run (its trie, failure links and transition tables),
//! which a one-line input paid in full, while the texts searched are single records of a few
//! hundred bytes. Here building is one sort of the strings by their first two bytes; a search
//! tests each position of the text against a bit table of those first two bytes (8 KiB) and
//! compares only the strings that begin there.

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
        }
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
        self.until(hay, |_, _| true)
    }

    /// [`Needles::each`] until `stop` returns true; returns whether it did.
    fn until(&self, hay: &[u8], mut stop: impl FnMut(usize, usize) -> bool) -> bool {
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
        for hay in [
            "",
            "d",
            "NVRM: Xid (PCI:0000:3b:00): 79, Killed process 12 ssss",
            "KilledKilled processNVRMNVRM",
            "\u{e9}t\u{e9} d\u{e9}j\u{e0} vu, NV",
        ] {
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
}
