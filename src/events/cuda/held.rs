//! The literals of the NCCL tables that a record holds, found in one pass over it: the names
//! and long texts of `[[nccl_result]]` and the paths of `[[nccl_system]]`. Each lookup searched
//! the record once per entry (a substring search built for each, some fifty of them on every
//! `nccl_error` draft: a tenth of the cost of an NCCL WARN line).

use super::CudaTables;
use aho_corasick::AhoCorasick;

/// A text shorter than this is a result's text only when it is the whole of what the record
/// reports, never as a part of it (see [`CudaTables::nccl_by_text`]).
pub const LONG_TEXT: usize = 12;

/// The literal of the empty text, which every text holds.
const EMPTY: usize = usize::MAX;

/// The searcher of the tables' literals, and which literal each entry names.
#[derive(Clone, Debug, Default)]
pub struct Literals {
    search: Option<AhoCorasick>,
    /// Per NCCL result: its name's literal (none for `ncclSuccess`).
    names: Vec<Option<usize>>,
    /// Per NCCL result: the literals of its texts of at least [`LONG_TEXT`] bytes.
    texts: Vec<Vec<usize>>,
    /// Per system error: its path's literal.
    paths: Vec<Option<usize>>,
}

/// The literals a text holds (most texts hold none: nothing is allocated then).
pub struct Held(Vec<usize>);

impl Held {
    fn has(&self, lit: Option<usize>) -> bool {
        lit.is_some_and(|l| l == EMPTY || self.0.contains(&l))
    }
}

impl Literals {
    /// The literals of tables `t`.
    pub fn new(t: &CudaTables) -> Literals {
        let mut all: Vec<&str> = Vec::new();
        let mut names = Vec::new();
        let mut texts = Vec::new();
        for r in &t.nccl {
            let name = r.name.as_deref().filter(|n| *n != "ncclSuccess");
            names.push(name.map(|n| id(&mut all, n)));
            let long = r.texts.iter().filter(|x| x.len() >= LONG_TEXT);
            texts.push(long.map(|x| id(&mut all, x)).collect());
        }
        let paths = t
            .system
            .iter()
            .map(|s| Some(id(&mut all, s.path.as_deref()?)));
        let paths = paths.collect();
        Literals {
            search: (!all.is_empty()).then(|| searcher(&all)).flatten(),
            names,
            texts,
            paths,
        }
    }

    /// The literals `text` holds.
    pub fn held(&self, text: &str) -> Held {
        let mut got = Vec::new();
        // most records hold none: the leftmost search (with its SIMD prefilter) says so first
        if let Some(ac) = self.search.as_ref().filter(|ac| ac.is_match(text)) {
            for m in ac.find_overlapping_iter(text) {
                let p = m.pattern().as_usize();
                if !got.contains(&p) {
                    got.push(p);
                }
            }
        }
        Held(got)
    }

    /// True when NCCL result `i`'s name is in the text of `held`.
    pub fn name_in(&self, held: &Held, i: usize) -> bool {
        held.has(self.names[i])
    }

    /// True when one of NCCL result `i`'s long texts is in the text of `held`.
    pub fn text_in(&self, held: &Held, i: usize) -> bool {
        self.texts[i].iter().any(|&l| held.has(Some(l)))
    }

    /// True when system error `i`'s path is in the text of `held`.
    pub fn path_in(&self, held: &Held, i: usize) -> bool {
        held.has(self.paths[i])
    }
}

/// The number of literal `s` among `all` (added when new; [`EMPTY`] for the empty text).
fn id<'a>(all: &mut Vec<&'a str>, s: &'a str) -> usize {
    if s.is_empty() {
        return EMPTY;
    }
    match all.iter().position(|x| *x == s) {
        Some(i) => i,
        None => {
            all.push(s);
            all.len() - 1
        }
    }
}

/// The searcher of `all`: a DFA (a step per byte; the default automaton took about 0.7 µs on an
/// NCCL line of 200 bytes).
fn searcher(all: &[&str]) -> Option<AhoCorasick> {
    let kind = Some(aho_corasick::AhoCorasickKind::DFA);
    AhoCorasick::builder().kind(kind).build(all).ok()
}
