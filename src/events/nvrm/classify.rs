//! What one NVRM line is: its family (by topic words, assertion file, function or words), then
//! the first class whose conditions it meets, else the family's kind or the generic kind when
//! the line reports an error.

use super::compile::{norm_function, Class, Family};
use super::lexicon::Found;
use super::line::parse_line;
use super::{Nvrm, NvrmLine, GENERIC_KIND};
use crate::model::{Layer, Severity};
use std::collections::BTreeMap;

impl Nvrm {
    /// The family whose longest prefix the function name starts with.
    fn family_by_function(&self, function: &str) -> Option<&Family> {
        let f = norm_function(function);
        (1..=f.len())
            .rev()
            .filter(|&l| f.is_char_boundary(l))
            .find_map(|l| self.prefixes.get(&f[..l]))
            .map(|&i| &self.families[i])
    }

    fn family_by_file(&self, path: &str) -> Option<&Family> {
        self.families
            .iter()
            .find(|f| f.def.files.iter().any(|s| path.contains(s.as_str())))
    }

    fn family_by_words(&self, found: &Found, topic: bool) -> Option<&Family> {
        self.families
            .iter()
            .filter(|f| !topic || f.def.topic)
            .find(|f| found.any(&f.words))
    }

    /// The family of a line: a topic family its message names, else the family of the file an
    /// assertion names, else of its function, else of its words.
    fn family_of(&self, line: &NvrmLine, found: &Found) -> Option<&Family> {
        self.family_by_words(found, true)
            .or_else(|| {
                line.assert_file
                    .as_deref()
                    .and_then(|p| self.family_by_file(p))
            })
            .or_else(|| {
                line.function
                    .as_deref()
                    .filter(|_| line.assert_file.is_none())
                    .and_then(|f| self.family_by_function(f))
            })
            .or_else(|| self.family_by_words(found, false))
    }

    /// The family of a vocabulary row (the coverage test's grouping): a topic family its message
    /// names, else the family of its source file, else of its function, else of its words.
    pub fn family_of_source(&self, file: &str, function: &str, message: &str) -> Option<&str> {
        let found = self.lexicon.scan(message, &message.to_ascii_lowercase());
        self.family_by_words(&found, true)
            .or_else(|| self.family_by_file(file))
            .or_else(|| self.family_by_function(function))
            .or_else(|| self.family_by_words(&found, false))
            .map(|f| f.def.id.as_str())
    }

    /// Cuts an NVRM line (the message part of a record) into its parts; `None` when it is not an
    /// NVRM line, an Xid line, or an indented continuation of a table.
    /// Cuts an NVRM line (the message part of a record) into its parts; `None` when it is not an
    /// NVRM line, an Xid line, or an indented continuation of a table.
    pub fn parse(&self, body: &str) -> Option<NvrmLine> {
        parse_line(body, self)
    }

    /// What one NVRM line is.
    pub fn classify<'k>(&'k self, line: &NvrmLine) -> Outcome<'k> {
        let lower = line.message.to_ascii_lowercase();
        let found = self.lexicon.scan(&line.message, &lower);
        let family = self.family_of(line, &found);
        let fam_id = family.map(|f| f.def.id.as_str());
        let func = line.function.as_deref().map(norm_function);
        let on = Line {
            line,
            lower: &lower,
            found: &found,
            family: fam_id,
            function: func.as_deref(),
        };
        if let Some(c) = self.classes.iter().find(|c| self.meets(c, &on)) {
            let d = &c.def;
            if let Some(why) = &d.benign {
                return Outcome::Benign(why);
            }
            return Outcome::Event(Verdict {
                kind: d.kind.as_deref().unwrap_or(GENERIC_KIND),
                severity: d.severity,
                layer: d.layer,
                reason: d
                    .reason
                    .as_deref()
                    .or_else(|| family.and_then(|f| f.def.reason.as_deref())),
                own_reason: d.reason.is_some(),
                class: &d.id,
                family: fam_id,
                terminal: d.terminal,
                attrs: Some(&d.attrs),
            });
        }
        if line.function.is_some() || found.any(&self.error_words) {
            Outcome::Event(self.unclassified(line, family))
        } else {
            Outcome::Info
        }
    }

    /// Whether a line meets every condition of class `c`.
    fn meets(&self, c: &Class, on: &Line) -> bool {
        let d = &c.def;
        let function = |f: &str| c.prefixes.iter().any(|p| f.starts_with(p.as_str()));
        d.family.as_deref().is_none_or(|f| Some(f) == on.family)
            && (c.prefixes.is_empty() || on.function.is_some_and(function))
            && (c.words.is_empty() || on.found.any(&c.words))
            && (c.starts.is_empty() || c.starts.iter().any(|s| on.lower.starts_with(s.as_str())))
            && !on.found.any(&c.not_words)
            && (d.statuses.is_empty() || d.statuses.iter().any(|s| on.line.statuses.contains(s)))
            && (!d.gone
                || on
                    .line
                    .statuses
                    .iter()
                    .any(|s| self.status(s).is_some_and(|x| x.gone)))
    }

    /// The event of an error line no class explains: its family's kind, else the generic kind
    /// (with the layer its status names).
    fn unclassified<'k>(&'k self, line: &NvrmLine, family: Option<&'k Family>) -> Verdict<'k> {
        let fam_id = family.map(|f| f.def.id.as_str());
        match family.filter(|f| f.def.kind.is_some()) {
            Some(f) => Verdict {
                kind: f.def.kind.as_deref().unwrap_or(GENERIC_KIND),
                severity: f.def.severity,
                layer: None,
                reason: f.def.reason.as_deref(),
                own_reason: false,
                class: "family",
                family: fam_id,
                terminal: false,
                attrs: None,
            },
            None => Verdict {
                kind: GENERIC_KIND,
                severity: None,
                layer: line
                    .statuses
                    .iter()
                    .filter_map(|s| self.status(s))
                    .find_map(|s| s.layer),
                reason: family.and_then(|f| f.def.reason.as_deref()),
                own_reason: false,
                class: "generic",
                family: fam_id,
                terminal: false,
                attrs: None,
            },
        }
    }

    /// The words that make [`Nvrm::needs_context`] true (lowercase; matched in a lowercase
    /// record).
    pub fn terminal_words(&self) -> Vec<String> {
        let terminal = self.classes.iter().filter(|c| c.def.terminal);
        let words = terminal.flat_map(|c| c.def.words.iter());
        words
            .filter(|w| !w.is_empty())
            .map(|w| w.to_ascii_lowercase())
            .collect()
    }

    /// True when a record may close an initialization failure (its parser reads the lines
    /// around it).
    pub fn needs_context(&self, full: &str) -> bool {
        self.terminal_words
            .is_match(full.to_ascii_lowercase().as_bytes())
    }
}

/// What one line is.
#[derive(Clone, Debug)]
pub enum Outcome<'k> {
    /// An event.
    Event(Verdict<'k>),
    /// Not an event, with the reason the data gives.
    Benign(&'k str),
    /// An informational line (no function name, no error word).
    Info,
}

/// The event one line raises.
#[derive(Clone, Debug)]
pub struct Verdict<'k> {
    /// Kind.
    pub kind: &'k str,
    /// Severity (none: the kind's).
    pub severity: Option<Severity>,
    /// Layer (none: the kind's).
    pub layer: Option<Layer>,
    /// The reason it gives to an initialization failure.
    pub reason: Option<&'k str>,
    /// The reason is the class's own (not its family's).
    pub own_reason: bool,
    /// The class id (`family` when only the family decided, `generic` for the generic kind).
    pub class: &'k str,
    /// The family id.
    pub family: Option<&'k str>,
    /// It closes an initialization failure.
    pub terminal: bool,
    /// Details of the class.
    pub attrs: Option<&'k BTreeMap<String, String>>,
}

impl Verdict<'_> {
    /// The generic kind: an error the data does not explain.
    pub fn is_generic(&self) -> bool {
        self.kind == GENERIC_KIND
    }
}

/// A line as the classes' conditions read it.
struct Line<'a> {
    line: &'a NvrmLine,
    /// The message, lower-cased.
    lower: &'a str,
    /// The lexicon's words in the message.
    found: &'a Found,
    /// The line's family id.
    family: Option<&'a str>,
    /// The function name, normalized.
    function: Option<&'a str>,
}
