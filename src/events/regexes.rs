//! The recognizers' regexes: built-in ones compiled on first use, user ones at load.

use memchr::memmem::Finder;
use regex::Regex;
use std::collections::BTreeMap;
use std::sync::OnceLock;

/// The literals one side of a regex's every match holds (empty: no gate on that side).
type Gate = &'static [&'static [u8]];

include!(concat!(env!("OUT_DIR"), "/regex_gates.rs"));

/// A built-in regex: compiled on first use (once per process, shared by every load), and until
/// then gated by the literals the build found that its every match begins and ends with.
pub(super) struct Builtin {
    cell: OnceLock<Option<Regex>>,
    prefixes: &'static [&'static [u8]],
    suffixes: &'static [&'static [u8]],
    /// The searchers of `prefixes` and `suffixes`, built on the first test: building one per
    /// test cost more than the search of a short record.
    finders: OnceLock<[Vec<Finder<'static>>; 2]>,
}

impl Builtin {
    /// False when no match can lie in `hay`: it holds none of the prefix literals, or none of
    /// the suffix literals (a side without literals rules nothing out).
    fn may_match(&self, hay: &str) -> bool {
        let [prefixes, suffixes] = self.finders.get_or_init(|| {
            let build = |lits: Gate| lits.iter().map(|l| Finder::new(*l)).collect();
            [build(self.prefixes), build(self.suffixes)]
        });
        let any = |finders: &[Finder<'static>]| {
            finders.is_empty() || finders.iter().any(|f| f.find(hay.as_bytes()).is_some())
        };
        any(prefixes) && any(suffixes)
    }
}

/// A recognizer's regex: a built-in one is compiled on its first use, so a run whose lines never
/// reach a family pays nothing for it; a user recognizer's is compiled when it is loaded, so that
/// a bad one is an error at once.
pub(super) enum RegexRef {
    Builtin(&'static Builtin, &'static str),
    Own(Regex),
}

impl RegexRef {
    /// The compiled regex to search `hay` with, or `None` when it cannot match there: a
    /// built-in regex not compiled yet whose literals `hay` lacks stays uncompiled (once
    /// compiled, its own prefilter does that test). `None` too for a built-in that does not
    /// compile (the knowledge tests compile every one of them).
    pub(super) fn for_text(&self, hay: &str) -> Option<&Regex> {
        match self {
            RegexRef::Builtin(b, src) => {
                if let Some(compiled) = b.cell.get() {
                    return compiled.as_ref();
                }
                if !b.may_match(hay) {
                    return None;
                }
                b.cell.get_or_init(|| Regex::new(src).ok()).as_ref()
            }
            RegexRef::Own(re) => Some(re),
        }
    }
}

/// The built-in recognizers' regexes by source text, each compiled on first use.
pub(super) fn builtin() -> &'static BTreeMap<&'static str, Builtin> {
    static CACHE: OnceLock<BTreeMap<&'static str, Builtin>> = OnceLock::new();
    CACHE.get_or_init(|| {
        REGEX_GATES
            .iter()
            .map(|&(src, prefixes, suffixes)| {
                let b = Builtin {
                    cell: OnceLock::new(),
                    prefixes,
                    suffixes,
                    finders: OnceLock::new(),
                };
                (src, b)
            })
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every regex of the built-in files, from the files as the build embedded them.
    fn sources() -> Vec<&'static str> {
        super::super::load::builtin_files()
            .iter()
            .flat_map(|f| &f.recognizer)
            .filter_map(|d| d.regex.as_deref())
            .collect()
    }

    /// Built-in regexes are compiled on first use, so a broken one would only ever fail to
    /// match: every one of them must compile, and have its literals written by the build.
    #[test]
    fn every_builtin_regex_compiles() {
        let all = builtin();
        let sources = sources();
        assert!(
            sources.len() > 50,
            "only {} built-in regexes",
            sources.len()
        );
        for src in sources {
            if let Err(e) = Regex::new(src) {
                panic!("built-in regex does not compile: {src}: {e}");
            }
            assert!(all.contains_key(src), "no literals written for {src}");
        }
    }

    /// The table holds what the gate computes now, and a gate never rules out a text the regex
    /// matches (here: each regex's own matches in the recognizers' samples).
    #[test]
    fn gates_are_the_extraction_and_sound() {
        for &(src, pre, suf) in REGEX_GATES {
            let (p, s) = super::super::regex_gate::gate(src).expect("parses");
            let same = |a: &[&[u8]], b: &[Vec<u8>]| {
                a.len() == b.len() && a.iter().zip(b).all(|(x, y)| *x == &y[..])
            };
            assert!(same(pre, &p) && same(suf, &s), "stale literals for {src}");
        }
        let gated = REGEX_GATES
            .iter()
            .filter(|g| !g.1.is_empty() || !g.2.is_empty())
            .count();
        assert!(gated * 2 > REGEX_GATES.len(), "only {gated} regexes gated");
        for f in super::super::load::builtin_files() {
            for d in &f.recognizer {
                let Some(src) = d.regex.as_deref() else {
                    continue;
                };
                let re = Regex::new(src).expect("compiles");
                for s in &d.samples {
                    for m in re.find_iter(s) {
                        assert!(
                            builtin()[src].may_match(m.as_str()),
                            "{}: gate rules out {:?}",
                            d.id,
                            m.as_str()
                        );
                    }
                }
            }
        }
    }
}
