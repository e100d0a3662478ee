//! The prefilter: the literals whose presence makes a line a candidate, searched in whole
//! buffers at SIMD speed.

use super::RecognizerError;
use aho_corasick::packed;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// Literals per SIMD searcher: the fast (slim Teddy) search holds up to 32; past 64 it falls back
/// to an automaton an order of magnitude slower. A larger set is split into groups searched one
/// after the other, each at SIMD speed.
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

    fn starts(&self, hay: &[u8], out: &mut Vec<usize>) {
        match self {
            Group::Packed(s) => out.extend(s.find_iter(hay).map(|m| m.start())),
            Group::Automaton(a) => out.extend(a.find_iter(hay).map(|m| m.start())),
        }
    }
}

/// The prefilter: the literal set in groups of at most [`PREFILTER_GROUP`], one SIMD searcher
/// each.
pub struct Prefilter {
    groups: Vec<Group>,
}

impl Prefilter {
    pub(super) fn new(literals: &[String]) -> Result<Prefilter, RecognizerError> {
        let groups = literals
            .chunks(PREFILTER_GROUP)
            .map(Group::new)
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Prefilter { groups })
    }

    /// The start of the first literal in `hay`, if any.
    pub fn find(&self, hay: &(impl AsRef<[u8]> + ?Sized)) -> Option<usize> {
        let hay = hay.as_ref();
        self.groups.iter().filter_map(|g| g.find(hay)).min()
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
        let pre = Prefilter::new(&lits).unwrap();
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
}
