//! The recognizers' regexes: built-in ones compiled on first use, user ones at load.

use regex::Regex;
use std::collections::BTreeMap;

/// A recognizer's regex: a built-in one is compiled on its first use (once per process, shared
/// by every load), so a run whose lines never reach a family pays nothing for it; a user
/// recognizer's is compiled when it is loaded, so that a bad one is an error at once.
pub(super) enum RegexRef {
    Builtin(&'static std::sync::OnceLock<Option<Regex>>, &'static str),
    Own(Regex),
}

impl RegexRef {
    /// The compiled regex; `None` only for a built-in that does not compile (the knowledge
    /// self-tests compile every one of them).
    pub(super) fn get(&self) -> Option<&Regex> {
        match self {
            RegexRef::Builtin(cell, src) => cell.get_or_init(|| Regex::new(src).ok()).as_ref(),
            RegexRef::Own(re) => Some(re),
        }
    }
}

/// The built-in recognizers' regexes by source text, each compiled on first use.
pub(super) fn builtin() -> &'static BTreeMap<&'static str, std::sync::OnceLock<Option<Regex>>> {
    static CACHE: std::sync::OnceLock<BTreeMap<&'static str, std::sync::OnceLock<Option<Regex>>>> =
        std::sync::OnceLock::new();
    CACHE.get_or_init(|| {
        super::load::builtin_files()
            .iter()
            .flat_map(|f| &f.recognizer)
            .filter_map(|d| d.regex.as_deref())
            .map(|src| (src, std::sync::OnceLock::new()))
            .collect()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Built-in regexes are compiled on first use, so a broken one would only ever fail to
    /// match: every one of them must compile.
    #[test]
    fn every_builtin_regex_compiles() {
        let all = builtin();
        assert!(all.len() > 50, "only {} built-in regexes", all.len());
        for src in all.keys() {
            if let Err(e) = Regex::new(src) {
                panic!("built-in regex does not compile: {src}: {e}");
            }
        }
    }
}
