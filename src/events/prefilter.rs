//! The prefilter: the literals whose presence makes a line a candidate, searched in whole
//! buffers at SIMD speed.

use super::RecognizerError;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};

/// Literals per SIMD searcher: aho-corasick's fast (slim Teddy) search holds up to 32; past 64
/// it falls back to an automaton an order of magnitude slower. A larger set is split into groups
/// searched one after the other, each at SIMD speed.
const PREFILTER_GROUP: usize = 32;

/// The prefilter: the literal set in groups of at most [`PREFILTER_GROUP`], one SIMD searcher
/// each.
pub struct Prefilter {
    groups: Vec<AhoCorasick>,
}

impl Prefilter {
    pub(super) fn new(literals: &[String]) -> Result<Prefilter, RecognizerError> {
        let groups = literals
            .chunks(PREFILTER_GROUP)
            .map(|g| {
                AhoCorasickBuilder::new()
                    .match_kind(MatchKind::LeftmostFirst)
                    .build(g)
                    .map_err(|e| RecognizerError::Invalid {
                        id: "prefilter".into(),
                        what: e.to_string(),
                    })
            })
            .collect::<Result<Vec<_>, _>>()?;
        Ok(Prefilter { groups })
    }

    /// The start of the first literal in `hay`, if any.
    pub fn find(&self, hay: &(impl AsRef<[u8]> + ?Sized)) -> Option<usize> {
        let hay = hay.as_ref();
        self.groups
            .iter()
            .filter_map(|g| g.find(hay).map(|m| m.start()))
            .min()
    }

    /// The starts of every literal hit in `hay` (leftmost-first within a group), sorted and
    /// without repeats.
    pub fn starts(&self, hay: &[u8]) -> Vec<usize> {
        let mut out: Vec<usize> = Vec::new();
        for g in &self.groups {
            out.extend(g.find_iter(hay).map(|m| m.start()));
        }
        if self.groups.len() > 1 {
            out.sort_unstable();
            out.dedup();
        }
        out
    }
}
