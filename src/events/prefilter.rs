//! The prefilter: the literals whose presence makes a line a candidate, searched in whole
//! buffers at SIMD speed.

use super::RecognizerError;
use aho_corasick::packed;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind, Span};

mod buckets;
mod gates;

/// Literals per SIMD searcher: aho-corasick's fast (slim Teddy) search holds up to 32; past 64
/// it falls back to an automaton an order of magnitude slower. A larger set is split into groups
/// searched one after the other, each at SIMD speed.
const PREFILTER_GROUP: usize = 32;

/// The searcher of one group of literals. A packed (Teddy) searcher is all aho-corasick itself
/// runs for a leftmost-first search of a few literals: its matches are returned as they are and
/// its automaton is never stepped. Built alone it costs a few microseconds where the automaton
/// beside it cost a millisecond per run, which a one-line input paid in full. The automaton is
/// kept only where the CPU has no SIMD searcher.
enum Group {
    Packed(packed::Searcher),
    Automaton(AhoCorasick),
}

impl Group {
    fn new(literals: &[String]) -> Result<Group, RecognizerError> {
        let mut b = packed::Config::new()
            .match_kind(packed::MatchKind::LeftmostFirst)
            .builder();
        if let Some(s) = b.extend(literals).build() {
            return Ok(Group::Packed(s));
        }
        AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostFirst)
            .build(literals)
            .map(Group::Automaton)
            .map_err(|e| RecognizerError::Invalid {
                id: "prefilter".into(),
                what: e.to_string(),
            })
    }

    fn find(&self, hay: &[u8]) -> Option<usize> {
        match self {
            Group::Packed(s) => s.find(hay).map(|m| m.start()),
            Group::Automaton(a) => a.find(hay).map(|m| m.start()),
        }
    }

    /// The start of the first literal in `hay[from..to]`, if any.
    fn find_in(&self, hay: &[u8], from: usize, to: usize) -> Option<usize> {
        match self {
            Group::Packed(s) => s.find_in(hay, Span::from(from..to)).map(|m| m.start()),
            Group::Automaton(a) => a
                .find(aho_corasick::Input::new(hay).range(from..to))
                .map(|m| m.start()),
        }
    }

    fn starts(&self, hay: &[u8], out: &mut Vec<usize>) {
        match self {
            Group::Packed(s) => out.extend(s.find_iter(hay).map(|m| m.start())),
            Group::Automaton(a) => out.extend(a.find_iter(hay).map(|m| m.start())),
        }
    }
}

/// The prefilter: the literal set in groups of at most [`PREFILTER_GROUP`], one SIMD searcher
/// each, and the gates of the search of candidate lines ([`gates`]).
pub struct Prefilter {
    groups: Vec<Group>,
    /// The gate searchers of [`Prefilter::lines`] (`None` where none can be built: the
    /// automaton groups are used instead).
    gates: Option<gates::Gates>,
    /// A literal holds a newline (an overridden set): [`Prefilter::lines`] reads the lines of
    /// [`Prefilter::starts`].
    multiline: bool,
}

impl Prefilter {
    /// The prefilter of `literals`, its candidate lines found through the `gates` (groups of
    /// substrings of the literals, one searcher each; a literal that holds none is its own).
    pub(super) fn new(
        literals: &[String],
        gates: &[Vec<String>],
    ) -> Result<Prefilter, RecognizerError> {
        let groups = literals
            .chunks(PREFILTER_GROUP)
            .map(Group::new)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Prefilter {
            groups,
            gates: gates::Gates::new(literals, gates),
            multiline: literals.iter().any(|l| l.contains('\n')),
        })
    }

    /// The lines of `hay` that hold a literal, as (start, end) offsets (the end at the newline,
    /// or at the end of `hay`), in order: the lines of the hits of [`Prefilter::starts`], found
    /// with less work where they are dense, as a group's search skips the rest of a line once
    /// it has a hit and a later group searches only between the lines found before it.
    pub fn lines(&self, hay: &[u8]) -> Vec<(usize, usize)> {
        let mut found: Vec<(usize, usize)> = Vec::new();
        if self.multiline {
            for s in self.starts(hay) {
                if found.last().is_some_and(|&(_, e)| s <= e) {
                    continue;
                }
                let ls = memchr::memrchr(b'\n', &hay[..s]).map_or(0, |p| p + 1);
                let le = memchr::memchr(b'\n', &hay[s..]).map_or(hay.len(), |p| s + p);
                found.push((ls, le));
            }
            return found;
        }
        let n = self
            .gates
            .as_ref()
            .map_or(self.groups.len(), gates::Gates::passes);
        for k in 0..n {
            let find = |from: usize, to: usize| match &self.gates {
                Some(g) => self.through_gates(g, k, hay, (from, to)),
                None => self.groups[k].find_in(hay, from, to),
            };
            if k == 0 {
                lines_in(hay, (0, hay.len()), find, &mut found);
                continue;
            }
            // only the gaps between the lines known so far
            let mut more: Vec<(usize, usize)> = Vec::new();
            let mut from = 0usize;
            for &(s, e) in &found {
                if s > from {
                    lines_in(hay, (from, s), find, &mut more);
                }
                from = e + 1;
            }
            if from < hay.len() {
                lines_in(hay, (from, hay.len()), find, &mut more);
            }
            if !more.is_empty() {
                found.extend(more);
                found.sort_unstable();
            }
        }
        found
    }

    /// [`gates::Gates::find_in`], a crowded line's rest searched for the literals themselves.
    fn through_gates(
        &self,
        g: &gates::Gates,
        k: usize,
        hay: &[u8],
        (mut from, to): (usize, usize),
    ) -> Option<usize> {
        loop {
            match g.find_in(k, hay, from, to)? {
                gates::Hit::At(p) => return Some(p),
                gates::Hit::Crowded(p) => {
                    let end = memchr::memchr(b'\n', &hay[p..to]).map_or(to, |i| p + i);
                    let first = self
                        .groups
                        .iter()
                        .filter_map(|x| x.find_in(hay, p, end))
                        .min();
                    if first.is_some() {
                        return first;
                    }
                    from = end + 1;
                }
            }
        }
    }

    /// The start of the first literal in `hay`, if any.
    pub fn find(&self, hay: &(impl AsRef<[u8]> + ?Sized)) -> Option<usize> {
        let hay = hay.as_ref();
        self.groups.iter().filter_map(|g| g.find(hay)).min()
    }

    /// The starts of the literals in `hay` found through the gates (every occurrence; neither
    /// sorted nor without repeats).
    pub fn hits(&self, hay: &[u8]) -> Vec<usize> {
        let Some(g) = &self.gates else {
            return self.starts(hay);
        };
        let mut out = Vec::new();
        g.literal_starts(hay, &mut out);
        out
    }

    /// The starts of every literal hit in `hay` (leftmost-first within a group), sorted and
    /// without repeats.
    pub fn starts(&self, hay: &[u8]) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for g in &self.groups {
            g.starts(hay, &mut out);
        }
        if self.groups.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
        out
    }
}

/// The lines of `hay[from..to]` (`from` at a line start, `to` at a line start or the end of
/// `hay`) that hold a hit of `find` (the first hit in a range), appended to `out` in order. A
/// literal holds no newline, so a hit never crosses a line end.
fn lines_in(
    hay: &[u8],
    (mut from, to): (usize, usize),
    find: impl Fn(usize, usize) -> Option<usize>,
    out: &mut Vec<(usize, usize)>,
) {
    while from < to {
        let Some(s) = find(from, to) else {
            return;
        };
        let ls = memchr::memrchr(b'\n', &hay[from..s]).map_or(from, |p| from + p + 1);
        let le = memchr::memchr(b'\n', &hay[s..]).map_or(hay.len(), |p| s + p);
        out.push((ls, le));
        from = le + 1;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The packed searcher finds what the automaton finds (leftmost-first, non-overlapping),
    /// on short haystacks (below Teddy's minimum, searched by Rabin-Karp) and long ones.
    #[test]
    fn packed_groups_match_the_automaton() {
        let lits: Vec<String> = [
            "NVRM: Xid",
            "Xid",
            "oom-kill",
            "segfault at",
            "nccl",
            "NCCL WARN",
        ]
        .iter()
        .map(|s| s.to_string())
        .collect();
        let pre = Prefilter::new(&lits, &[]).unwrap();
        let ac = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostFirst)
            .build(&lits)
            .unwrap();
        let mut hays: Vec<String> = vec![
            String::new(),
            "Xid".into(),
            "x NVRM: Xid (PCI:0000:3b:00): 79".into(),
            "nccNCCL WARN ncclnccl".into(),
        ];
        let long = "ordinary text without any literal at all, ".repeat(40);
        hays.push(format!(
            "{long}NCCL WARN then oom-kill{long}segfault at Xid"
        ));
        for h in &hays {
            let want: Vec<usize> = ac.find_iter(h.as_bytes()).map(|m| m.start()).collect();
            assert_eq!(pre.starts(h.as_bytes()), want, "{h:?}");
            assert_eq!(pre.find(h.as_str()), want.first().copied(), "{h:?}");
        }
    }

    /// With the built-in literals (found through the built-in gates, three packed searchers
    /// laid out for their buckets), the candidate lines are exactly the lines that hold a literal.
    #[test]
    fn lines_are_the_lines_that_hold_a_literal() {
        let set = crate::events::RecognizerSet::load(&[]).expect("built-in recognizers");
        let lits = &set.prefilter_literals;
        let mut hay = String::new();
        for (i, l) in lits.iter().enumerate() {
            hay.push_str("Jan 12 03:04:05 node kernel: an ordinary line of text, nothing here\n");
            // a literal at the start, inside and at the end of a line
            match i % 3 {
                0 => hay.push_str(&format!("{l} and then some words\n")),
                1 => hay.push_str(&format!("words before {l} and after\n")),
                _ => hay.push_str(&format!("words before {l}\n")),
            }
            // a literal cut by one byte matches nothing of its own
            hay.push_str(&format!("x {} y\n", &l[..l.len() - 1]));
        }
        let want = lines_holding(&hay, lits);
        assert!(want.len() >= lits.len());
        assert_eq!(set.prefilter.lines(hay.as_bytes()), want);
    }

    /// The (start, end) of the lines of `hay` that hold one of `lits` (the end at the newline).
    fn lines_holding(hay: &str, lits: &[String]) -> Vec<(usize, usize)> {
        hay.split_inclusive('\n')
            .scan(0usize, |at, line| {
                let s = *at;
                *at += line.len();
                Some((s, s + line.len() - 1, line))
            })
            .filter(|(_, _, line)| lits.iter().any(|l| line.contains(l.as_str())))
            .map(|(s, e, _)| (s, e))
            .collect()
    }

    /// Lines packed with a gate that is no literal are searched for the literals themselves
    /// past the crowd: a literal after it is found, a line with none is not a candidate.
    #[test]
    fn a_line_crowded_with_a_gate_is_searched_for_the_literals() {
        let literals: Vec<String> = ["e Err", "XYZW", "NCCL"].map(String::from).to_vec();
        let gates = vec![vec!["e Er".to_string(), "XYZW".to_string()]];
        let pre = Prefilter::new(&literals, &gates).unwrap();
        let crowd = "e Ere".repeat(40);
        let hay = format!("{crowd}\n{crowd} NCCL\n{crowd} e Err\nplain\nx XYZW\n{crowd}XYZW\n");
        let want = lines_holding(&hay, &literals);
        assert_eq!(want.len(), 4);
        assert_eq!(pre.lines(hay.as_bytes()), want);
    }
}
