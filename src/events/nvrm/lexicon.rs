//! The words of the NVRM data, found in a message by one pass of two searchers.

use crate::events::Needles;
use std::collections::HashMap;

/// A word of the data: all-capital words (`ECC`, `GSP`, `IRQ`) match case-sensitively, the
/// others case-insensitively.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct Word {
    text: String,
    exact: bool,
}

impl Word {
    fn new(w: &str) -> Word {
        let exact =
            w.bytes().any(|c| c.is_ascii_uppercase()) && !w.bytes().any(|c| c.is_ascii_lowercase());
        Word {
            text: if exact {
                w.to_string()
            } else {
                w.to_ascii_lowercase()
            },
            exact,
        }
    }
}

/// Every word of the data, each with an id, found in a message by one pass of two searchers (the
/// case-insensitive words over the lower-cased message, the exact ones over the message).
#[derive(Default)]
pub(super) struct Lexicon {
    index: HashMap<Word, u32>,
    ci: Option<(Needles, Vec<u32>)>,
    cs: Option<(Needles, Vec<u32>)>,
}

/// The ids of the words a message holds, sorted.
pub(super) struct Found(Vec<u32>);

impl Found {
    pub(super) fn any(&self, ids: &[u32]) -> bool {
        ids.iter().any(|i| self.0.binary_search(i).is_ok())
    }
}

impl Lexicon {
    pub(super) fn ids(&mut self, list: &[String]) -> Vec<u32> {
        let mut out: Vec<u32> = list
            .iter()
            .filter(|w| !w.is_empty())
            .map(|w| {
                let n = self.index.len() as u32;
                *self.index.entry(Word::new(w)).or_insert(n)
            })
            .collect();
        out.sort_unstable();
        out.dedup();
        out
    }

    pub(super) fn build(&mut self) {
        let mut ci: Vec<(&str, u32)> = Vec::new();
        let mut cs: Vec<(&str, u32)> = Vec::new();
        for (w, &id) in &self.index {
            if w.exact {
                cs.push((&w.text, id));
            } else {
                ci.push((&w.text, id));
            }
        }
        let auto = |list: &mut Vec<(&str, u32)>| {
            list.sort_unstable();
            let a = Needles::new(list.iter().map(|(t, _)| *t)).warming();
            Some((a, list.iter().map(|(_, i)| *i).collect()))
        };
        self.ci = auto(&mut ci);
        self.cs = auto(&mut cs);
    }

    pub(super) fn scan(&self, msg: &str, lower: &str) -> Found {
        let mut found = Vec::new();
        for (auto, text) in [(&self.ci, lower), (&self.cs, msg)] {
            if let Some((a, ids)) = auto {
                a.each(text.as_bytes(), |_, p| found.push(ids[p]));
            }
        }
        found.sort_unstable();
        found.dedup();
        Found(found)
    }
}
