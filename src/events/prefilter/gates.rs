//! The gates of the candidate-line search: substrings of the prefilter's literals, such that
//! every literal holds one, searched with a few packed (Teddy) searchers, each hit compared with
//! the literals that hold that gate there.
//!
//! A packed searcher holds at most 64 strings, and each one is a pass over the bytes: 314
//! literals took five. The built-in gates (`[prefilter] gates` of `data/recognizers.toml`,
//! chosen by `examples/prefilter_gates.rs` from the rarity of each substring in ordinary logs)
//! cover them in three. Each list of gates is one searcher, its order the one that fills the
//! searcher's buckets with gates alike in their first bytes. A literal that holds no given gate
//! (a user's literal) is a gate of its own, in searchers of their own.
//!
//! The search is exact whatever the gates: no gate holds another, so at most one gate starts
//! at a position, and the search goes on from the byte after every hit; a literal at `q` whose
//! gate is at offset `o` in it is therefore met as a hit at `q + o`, where it is compared.

use super::buckets;
use crate::events::Needles;
use aho_corasick::packed;
use aho_corasick::Span;

/// Strings per packed searcher at most (its fast regime, Fat Teddy).
const GROUP: usize = 64;

/// Gate hits that are no literal, in one search, before the rest of the line is searched for
/// the literals themselves.
const CROWD: usize = 16;

/// What a search through the gates found.
#[derive(Debug, PartialEq)]
pub(super) enum Hit {
    /// A literal, in the line of this position.
    At(usize),
    /// Many gate hits that were no literal, the last at this position.
    Crowded(usize),
}

/// The gate searchers and what each gate stands for.
pub(super) struct Gates {
    /// One packed searcher per group of gates, with the index of its first gate.
    searchers: Vec<(packed::Searcher, usize)>,
    /// Per gate (in searcher order), the literals that hold it: (literal, the gate's offset).
    checks: Vec<Vec<(usize, usize)>>,
    literals: Vec<Box<[u8]>>,
}

impl Gates {
    /// The gates of `literals`: the `given` groups (each one searcher, in its order), kept where
    /// a gate is in some literal and holds no other gate, and the literals that hold none of
    /// them as gates of their own. `None` where a packed searcher cannot be built (no SIMD).
    pub(super) fn new(literals: &[String], given: &[Vec<String>]) -> Option<Gates> {
        let groups = choose(literals, given);
        let flat = Needles::new(groups.iter().flatten());
        let count = groups.iter().map(Vec::len).sum();
        let mut checks = vec![Vec::new(); count];
        for (i, l) in literals.iter().enumerate() {
            let mut first: Option<(usize, usize)> = None;
            flat.each(l.as_bytes(), |at, g| {
                first.get_or_insert((g, at));
            });
            let (g, o) = first?;
            checks[g].push((i, o));
        }
        let mut config = packed::Config::new();
        config.match_kind(packed::MatchKind::LeftmostFirst);
        let mut searchers = Vec::with_capacity(groups.len());
        let mut first = 0;
        for g in &groups {
            searchers.push((config.builder().extend(g).build()?, first));
            first += g.len();
        }
        Some(Gates {
            searchers,
            checks,
            literals: literals.iter().map(|l| l.as_bytes().into()).collect(),
        })
    }

    /// How many searchers (passes) there are.
    pub(super) fn passes(&self) -> usize {
        self.searchers.len()
    }

    /// A position in `hay[from..to]` inside the first line there that holds a literal whose
    /// gate searcher `k` searches (the gate's hit), if any; or, after [`CROWD`] gate hits that
    /// were no literal, where the last of them is ([`Hit::Crowded`]): the caller searches the
    /// rest of that line for the literals themselves, so that a line packed with a gate (60 KB
    /// of `e Er`) costs one search, not a restart at each hit.
    pub(super) fn find_in(&self, k: usize, hay: &[u8], mut from: usize, to: usize) -> Option<Hit> {
        let (s, first) = &self.searchers[k];
        let mut misses = 0;
        while from < to {
            let m = s.find_in(hay, Span::from(from..to))?;
            let p = m.start();
            let g = first + m.pattern().as_usize();
            if self.literals_at(g, hay, p).next().is_some() {
                return Some(Hit::At(p));
            }
            misses += 1;
            if misses == CROWD {
                return Some(Hit::Crowded(p));
            }
            from = p + 1;
        }
        None
    }

    /// The starts of the literals in `hay`, appended to `out` (every occurrence; in no order).
    pub(super) fn literal_starts(&self, hay: &[u8], out: &mut Vec<usize>) {
        for (s, first) in &self.searchers {
            let mut from = 0;
            while let Some(m) = s.find_in(hay, Span::from(from..hay.len())) {
                let (g, p) = (first + m.pattern().as_usize(), m.start());
                out.extend(self.literals_at(g, hay, p));
                from = p + 1;
            }
        }
    }

    /// The starts of the literals whose gate `g` is at `p` that are there.
    fn literals_at<'a>(
        &'a self,
        g: usize,
        hay: &'a [u8],
        p: usize,
    ) -> impl Iterator<Item = usize> + 'a {
        self.checks[g]
            .iter()
            .filter(move |&&(l, o)| p >= o && hay[p - o..].starts_with(&self.literals[l]))
            .map(move |&(_, o)| p - o)
    }
}

/// The gates in searcher groups: the given groups' gates that are in a literal and hold no
/// other gate (a group longer than [`GROUP`] cut), then the literals that hold none of them,
/// in balanced groups ordered for the buckets.
fn choose(literals: &[String], given: &[Vec<String>]) -> Vec<Vec<String>> {
    let flat: Vec<&String> = given.iter().flatten().collect();
    let search = Needles::new(&flat);
    let mut used = vec![false; flat.len()];
    let mut own: Vec<&String> = Vec::new();
    for l in literals {
        let mut any = false;
        search.each(l.as_bytes(), |_, g| {
            used[g] = true;
            any = true;
        });
        if !any {
            own.push(l);
        }
    }
    own.sort_by_key(|l| (l.len(), l.as_str()));
    let mut all: Vec<&String> = flat
        .iter()
        .zip(&used)
        .filter(|(_, u)| **u)
        .map(|(g, _)| *g)
        .collect();
    all.extend(own.iter().copied());
    let in_a_literal: std::collections::HashSet<&str> = all.iter().map(|g| g.as_str()).collect();
    let held = holders(&all);
    let mut seen = std::collections::HashSet::new();
    let mut keep = |g: &String| !held.contains(g.as_str()) && seen.insert(g.clone());
    let mut groups: Vec<Vec<String>> = Vec::new();
    for group in given {
        let kept: Vec<String> = group
            .iter()
            .filter(|g| in_a_literal.contains(g.as_str()) && keep(g))
            .cloned()
            .collect();
        groups.extend(kept.chunks(GROUP).map(<[String]>::to_vec));
    }
    let rest: Vec<&String> = own.iter().copied().filter(|g| keep(g)).collect();
    if !rest.is_empty() {
        let n = rest.len().div_ceil(GROUP);
        let per = rest.len().div_ceil(n);
        for c in rest.chunks(per) {
            groups.push(buckets::order(c).into_iter().cloned().collect());
        }
    }
    groups
}

/// The strings of `all` that hold another, different one.
fn holders<'a>(all: &[&'a String]) -> std::collections::HashSet<&'a str> {
    let search = Needles::new(all);
    all.iter()
        .filter(|g| {
            let mut other = false;
            search.each(g.as_bytes(), |_, o| other |= all[o] != **g);
            other
        })
        .map(|g| g.as_str())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn strings(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| s.to_string()).collect()
    }

    /// The built-in gates cover every built-in literal in three searchers: a literal added
    /// without a gate would be a gate of its own (correct, but another pass over the bytes).
    #[test]
    fn the_builtin_gates_cover_every_literal_in_three_passes() {
        let set = crate::events::RecognizerSet::load(&[]).expect("built-in recognizers");
        let given: Vec<Vec<String>> = crate::events::load::builtin_files()
            .iter()
            .filter_map(|f| f.prefilter.as_ref())
            .flat_map(|p| p.gates.iter().cloned())
            .collect();
        let groups = choose(&set.prefilter_literals, &given);
        let own: Vec<&String> = set
            .prefilter_literals
            .iter()
            .filter(|l| !given.iter().flatten().any(|g| l.contains(g.as_str())))
            .collect();
        assert!(
            own.is_empty(),
            "literals with no gate (run examples/prefilter_gates.rs): {own:?}"
        );
        assert_eq!(groups.len(), 3, "{} gates", groups.iter().flatten().count());
    }

    /// Lines found through overlapping gates, gates that hold one another, a user's literal
    /// with no gate and literals that hold one another are the lines that hold a literal.
    #[test]
    fn the_search_through_gates_is_exact() {
        let literals = strings(&["abcdef", "cdefgh", "zzzz", "defx", "NCCL", "NCCL WARN"]);
        let gates = vec![
            strings(&["bcd", "cde", "def", "nothing here", "NCC"]),
            strings(&["efgh"]),
        ];
        let g = Gates::new(&literals, &gates).expect("SIMD searcher");
        let texts = [
            "xxabcdefxx",
            "cdefgh",
            "cdefg",
            "abcde",
            "defx",
            "dex",
            "zzzz",
            "zzz",
            "NCCL WARN x",
            "NCC",
            "bcdefgh",
            "ddefx",
            "abcdabcdef",
        ];
        for t in texts {
            let want: Vec<usize> = (0..t.len())
                .filter(|&i| literals.iter().any(|l| t[i..].starts_with(l.as_str())))
                .collect();
            let mut got = Vec::new();
            g.literal_starts(t.as_bytes(), &mut got);
            got.sort_unstable();
            got.dedup();
            assert_eq!(got, want, "{t:?}");
            let found = (0..g.passes())
                .any(|k| matches!(g.find_in(k, t.as_bytes(), 0, t.len()), Some(Hit::At(_))));
            assert_eq!(found, !want.is_empty(), "{t:?}");
        }
    }

    /// A gate is dropped when it is in no literal or holds another gate; literals that hold no
    /// gate come last, each once.
    #[test]
    fn gates_in_no_literal_or_holding_another_are_dropped() {
        let literals = strings(&["abcdef", "uvwxyz", "uvw"]);
        let gates = vec![strings(&["qqq", "bcde", "bcd", "bcd"])];
        assert_eq!(
            choose(&literals, &gates),
            vec![strings(&["bcd"]), strings(&["uvw"])]
        );
    }
}
