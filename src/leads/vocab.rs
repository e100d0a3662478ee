//! The vocabulary of leads (`data/leads.toml`): which words make a line look like an error,
//! which classes of lines are not errors whatever their words, which benign lines explain other
//! lines, which lines say a run ended normally, and which words put a run in the analyzer's
//! scope. Everything a line is tested with is here; [`super`] walks the inputs.

use crate::scan::FastSet;
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::bytes::{Regex, RegexBuilder};
use serde::Deserialize;

/// `data/leads.toml` as written.
pub const BUILTIN_LEADS: &str = include_str!("../../data/leads.toml");

/// The file as written.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeadsFile {
    /// The one table.
    pub leads: LeadsDef,
}

/// The `[leads]` table.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct LeadsDef {
    /// Words (case as written) that make a line look like an error.
    pub words: Vec<String>,
    /// Endings of error class names (`RuntimeError`).
    pub suffixes: Vec<String>,
    /// Phrases that look like an error wherever they stand.
    pub phrases: Vec<String>,
    /// Words that put a run in scope (case-insensitive, a word's start).
    pub scope: Vec<String>,
    /// Level words: one before the first error word makes the line no lead.
    pub levels: Vec<String>,
    /// Classes of lines that are not errors.
    pub benign: Vec<BenignDef>,
    /// Benign lines that explain the failure lines of the services they name.
    pub explained: Vec<ExplainedDef>,
    /// Lines that say the run ended normally.
    pub health: Vec<HealthDef>,
    /// Self-test lines.
    pub test: TestDef,
}

/// One class of lines that are not errors.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BenignDef {
    /// Name of the class.
    pub class: String,
    /// Why its lines are not errors.
    pub reason: String,
    /// Case-insensitive regex.
    pub regex: String,
    /// Lines of the class.
    pub samples: Vec<String>,
    /// Error lines it must leave alone.
    #[serde(default)]
    pub rejects: Vec<String>,
}

/// A benign recognizer that explains the lines naming some services.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ExplainedDef {
    /// The benign recognizer's id.
    pub by: String,
    /// Names (literals) of the services whose failure lines it explains.
    pub names: Vec<String>,
    /// Why.
    pub reason: String,
    /// Lines it explains.
    pub samples: Vec<String>,
}

/// One wording of a normal end.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct HealthDef {
    /// Stable id.
    pub id: String,
    /// Regex (case as written).
    pub regex: String,
    /// Lines that say so.
    pub samples: Vec<String>,
    /// Lines that do not.
    #[serde(default)]
    pub rejects: Vec<String>,
}

/// Self-test lines of the whole vocabulary.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TestDef {
    /// Leads.
    pub samples: Vec<String>,
    /// Not leads.
    pub rejects: Vec<String>,
}

/// What one line is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Line {
    /// It looks like an error.
    Lead,
    /// It says the run ended normally (the id of the wording).
    Health(usize),
    /// Neither.
    Other,
}

/// The compiled vocabulary.
pub struct Vocab {
    /// Looked up for every word of a line the search found: a fast hash (a bug report has
    /// hundreds of thousands of such lines).
    words: FastSet<String>,
    suffixes: Vec<String>,
    /// The phrases, one leftmost search (the first one's start is the leftmost of them all).
    phrases: Option<AhoCorasick>,
    levels: FastSet<String>,
    /// The benign and health regexes: compiled on the first line that needs them (a clean
    /// input never does, and they were a third of a one-line run's start-up).
    regexes: std::sync::OnceLock<(Vec<Regex>, Vec<Regex>)>,
    sources: (Vec<String>, Vec<String>),
    /// What a buffer is searched for: words, suffixes, phrases and the health wordings' anchors.
    pub(super) search: AhoCorasick,
    /// The scope words, case-insensitive.
    pub(super) scope: AhoCorasick,
    /// The explaining recognizers and the names they explain.
    pub(super) explained: Vec<(String, Vec<String>)>,
}

/// Literals every health wording holds one of (the search finds its lines by them).
const HEALTH_ANCHORS: [&str; 8] = [
    "exits successfully",
    "SUCCEEDED",
    "exited with",
    "exit code",
    "exit status",
    "Training completed",
    "Trainer.fit",
    "Training finish",
];

impl Vocab {
    /// The built-in vocabulary.
    pub fn builtin() -> &'static Vocab {
        static V: std::sync::OnceLock<Vocab> = std::sync::OnceLock::new();
        V.get_or_init(|| {
            let f: LeadsFile = crate::embedded::load(crate::embedded::LEADS, "leads");
            Vocab::new(&f.leads).unwrap_or_else(|e| panic!("data/leads.toml: {e}"))
        })
    }

    /// Compiles the table, its regexes at once (errors are told here).
    pub fn compile(d: &LeadsDef) -> Result<Vocab, String> {
        let v = Vocab::new(d)?;
        let compiled = compile_regexes(&v.sources)?;
        let _ = v.regexes.set(compiled);
        Ok(v)
    }

    /// The table with its searches built and its regexes left to their first use.
    fn new(d: &LeadsDef) -> Result<Vocab, String> {
        let mut lits: Vec<&str> = d.words.iter().map(String::as_str).collect();
        lits.extend(d.suffixes.iter().map(String::as_str));
        lits.extend(d.phrases.iter().map(String::as_str));
        lits.extend(HEALTH_ANCHORS);
        let search = AhoCorasickBuilder::new()
            .match_kind(MatchKind::LeftmostFirst)
            .build(&lits)
            .map_err(|e| e.to_string())?;
        let scope = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .build(&d.scope)
            .map_err(|e| e.to_string())?;
        let phrases = if d.phrases.is_empty() {
            None
        } else {
            let b = AhoCorasickBuilder::new()
                .match_kind(MatchKind::LeftmostFirst)
                .build(&d.phrases);
            Some(b.map_err(|e| e.to_string())?)
        };
        Ok(Vocab {
            words: d.words.iter().cloned().collect(),
            suffixes: d.suffixes.clone(),
            phrases,
            levels: d.levels.iter().cloned().collect(),
            regexes: std::sync::OnceLock::new(),
            sources: (
                d.benign.iter().map(|b| b.regex.clone()).collect(),
                d.health.iter().map(|h| h.regex.clone()).collect(),
            ),
            search,
            scope,
            explained: d
                .explained
                .iter()
                .map(|x| (x.by.clone(), x.names.clone()))
                .collect(),
        })
    }

    /// (benign, health) regexes, compiled on first use; the built-in ones compile (their
    /// self-test compiles them at once), a user's table is compiled by [`Vocab::compile`].
    fn regexes(&self) -> &(Vec<Regex>, Vec<Regex>) {
        self.regexes.get_or_init(|| {
            compile_regexes(&self.sources).unwrap_or_else(|e| panic!("data/leads.toml: {e}"))
        })
    }

    /// What `line` is (without the recognizers: see [`super`]).
    pub fn line(&self, line: &str) -> Line {
        if let Some(i) = self
            .regexes()
            .1
            .iter()
            .position(|r| r.is_match(line.as_bytes()))
        {
            return Line::Health(i);
        }
        let Some(at) = self.first_error(line) else {
            return Line::Other;
        };
        if self.level_before(line, at)
            || self.regexes().0.iter().any(|r| r.is_match(line.as_bytes()))
        {
            return Line::Other;
        }
        Line::Lead
    }

    /// Where the first error word or phrase of `line` starts.
    fn first_error(&self, line: &str) -> Option<usize> {
        let b = line.as_bytes();
        // a part of a dotted name (`ecc.errors.uncorrected`, `error.log`) is a field or a file,
        // and an inner part of a hyphenated one (`libgpg-error-dev`, `rust-panic-hook`) a name
        let inner = |at: usize, w: &str| {
            let end = at + w.len();
            let joined = |i: usize, j: usize| {
                b.get(i) == Some(&b'-') && b.get(j).is_some_and(u8::is_ascii_alphanumeric)
            };
            let dotted =
                b.get(end) == Some(&b'.') && b.get(end + 1).is_some_and(u8::is_ascii_alphanumeric);
            let hyphened = at >= 2 && joined(at - 1, at - 2) && joined(end, end + 1);
            dotted || hyphened
        };
        let word = words(line)
            .find(|&(at, w)| self.is_error_word(w) && !inner(at, w))
            .map(|p| p.0);
        let phrase = self
            .phrases
            .as_ref()
            .and_then(|p| p.find(line))
            .map(|m| m.start());
        word.into_iter().chain(phrase).min()
    }

    fn is_error_word(&self, w: &str) -> bool {
        self.words.contains(w)
            || self.suffixes.iter().any(|s| {
                w.len() > s.len()
                    && w.ends_with(s.as_str())
                    && w[..w.len() - s.len()]
                        .chars()
                        .next_back()
                        .is_some_and(|c| c.is_ascii_alphabetic())
            })
    }

    /// True when a level word stands before byte `at`.
    fn level_before(&self, line: &str, at: usize) -> bool {
        words(&line[..at]).any(|(_, w)| self.levels.contains(w))
    }

    /// True when `line` names a service some benign recognizer `by` explains.
    pub fn explained_by(&self, by: &str, line: &str) -> bool {
        self.explained
            .iter()
            .filter(|(b, _)| b == by)
            .any(|(_, names)| names.iter().any(|n| line.contains(n.as_str())))
    }
}

/// The words of `s` (runs of ASCII letters, digits and `_`) with their byte offsets.
fn words(s: &str) -> impl Iterator<Item = (usize, &str)> {
    let b = s.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'_';
        while i < b.len() && !word(b[i]) {
            i += 1;
        }
        if i >= b.len() {
            return None;
        }
        let start = i;
        while i < b.len() && word(b[i]) {
            i += 1;
        }
        Some((start, &s[start..i]))
    })
}

/// Every sample and reject of the table, checked: a list of failures.
pub fn self_test(d: &LeadsDef) -> Vec<String> {
    let v = match Vocab::compile(d) {
        Ok(v) => v,
        Err(e) => return vec![e],
    };
    let mut bad = Vec::new();
    let mut want = |line: &str, lead: bool, what: &str| {
        if (v.line(line) == Line::Lead) != lead {
            bad.push(format!(
                "{what}: {line:?} should {}be a lead",
                if lead { "" } else { "not " }
            ));
        }
    };
    for s in &d.test.samples {
        want(s, true, "test sample");
    }
    for s in &d.test.rejects {
        want(s, false, "test reject");
    }
    for b in &d.benign {
        for s in &b.samples {
            want(s, false, &b.class);
        }
        for s in &b.rejects {
            want(s, true, &b.class);
        }
    }
    for (i, h) in d.health.iter().enumerate() {
        for s in &h.samples {
            if v.line(s) != Line::Health(i) {
                bad.push(format!("{}: missed {s:?}", h.id));
            }
        }
        for s in &h.rejects {
            if matches!(v.line(s), Line::Health(_)) {
                bad.push(format!("{}: matched {s:?}", h.id));
            }
        }
    }
    for x in &d.explained {
        for s in &x.samples {
            if v.line(s) != Line::Lead || !v.explained_by(&x.by, s) {
                bad.push(format!("{}: {s:?} is no lead it explains", x.by));
            }
        }
    }
    bad
}

/// Compiles (benign, health) regexes with ASCII classes (`\w`, `\b`, `\s`, case): log words
/// are ASCII, and the Unicode classes cost most of their compile time.
fn compile_regexes(
    (benign, health): &(Vec<String>, Vec<String>),
) -> Result<(Vec<Regex>, Vec<Regex>), String> {
    let build = |r: &String, ci: bool| {
        RegexBuilder::new(r)
            .unicode(false)
            .case_insensitive(ci)
            .build()
            .map_err(|e| e.to_string())
    };
    Ok((
        benign
            .iter()
            .map(|r| build(r, true))
            .collect::<Result<_, _>>()?,
        health
            .iter()
            .map(|r| build(r, false))
            .collect::<Result<_, _>>()?,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_vocabulary_passes_its_samples() {
        let f: LeadsFile = toml::from_str(BUILTIN_LEADS).expect("data/leads.toml");
        let bad = self_test(&f.leads);
        assert!(bad.is_empty(), "{}", bad.join("\n"));
    }

    #[test]
    fn words_are_whole() {
        let v = Vocab::builtin();
        assert_eq!(v.line("rx_errors 4 error_count 2"), Line::Other);
        assert_eq!(v.line("RuntimeError: boom"), Line::Lead);
        assert_eq!(v.line("the Error: boom"), Line::Lead);
        assert_eq!(v.line("Errorneous"), Line::Other);
    }

    #[test]
    fn parts_of_names_are_not_words() {
        let v = Vocab::builtin();
        // a package in every package log names `libgpg-error`
        let dpkg = "2026-05-09 07:29:12 status unpacked libgpg-error-dev:amd64 1.46-1";
        assert_eq!(v.line(dpkg), Line::Other);
        assert_eq!(
            v.line("Upgraded: libgpg-error-1.42-1.el9.x86_64"),
            Line::Other
        );
        assert_eq!(v.line("tail -n 50 error.log"), Line::Other);
        // a hyphen on one side only is still the word
        assert_eq!(v.line("non-fatal error: retrying"), Line::Lead);
        assert_eq!(v.line("ERROR-1234 device lost"), Line::Lead);
        assert_eq!(v.line("module load-error"), Line::Lead);
    }

    #[test]
    fn a_level_after_the_error_word_does_not_excuse_it() {
        let v = Vocab::builtin();
        assert_eq!(v.line("ERROR something INFO"), Line::Lead);
        assert_eq!(v.line("INFO something error"), Line::Other);
    }
}
