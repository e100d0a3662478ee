//! Loading: the built-in recognizer files (embedded by the build, deserialized once per process)
//! and the user's merged into one list, each definition checked and its regex resolved, then the
//! anchor automaton and the prefilter built over every anchor.

use super::set::{Compiled, NvrmKnowledge};
use super::{ntstatus, nvrm, regexes, verbs};
use super::{Needles, Prefilter, RecognizerDef, RecognizerFile, RecognizerSet, TraceDef};
use regex::Regex;
use std::borrow::Cow;
use std::collections::BTreeMap;

/// Errors in recognizer data.
#[derive(Debug, thiserror::Error)]
pub enum RecognizerError {
    /// TOML did not parse.
    #[error("recognizer file: {0}")]
    Toml(#[from] toml::de::Error),
    /// A regex did not compile.
    #[error("recognizer {id}: bad regex: {err}")]
    Regex {
        /// Recognizer id.
        id: String,
        /// Compiler message.
        err: String,
    },
    /// NVRM data problem.
    #[error("{0}")]
    Nvrm(#[from] nvrm::NvrmError),
    /// Structural problem.
    #[error("recognizer {id}: {what}")]
    Invalid {
        /// Recognizer id.
        id: String,
        /// What is wrong.
        what: String,
    },
}

/// The built-in parsers a recognizer may name instead of a regex.
const PARSERS: [&str; 8] = [
    "xid",
    "sxid",
    "aer",
    "torchrun_failure",
    "nccl_ib",
    "ib_verbs",
    "cper",
    "nvrm",
];

/// The built-in recognizer files in load order, deserialized once per process from the form
/// the build embedded (see [`crate::embedded`]).
pub(super) fn builtin_files() -> &'static [RecognizerFile] {
    use crate::embedded;
    static FILES: std::sync::OnceLock<Vec<RecognizerFile>> = std::sync::OnceLock::new();
    FILES.get_or_init(|| {
        [
            (embedded::RECOGNIZERS, "data/recognizers.toml"),
            (embedded::JOBS, "data/jobs.toml"),
            (embedded::VERBS, "data/verbs.toml"),
            (embedded::NTSTATUS, "data/ntstatus.toml"),
        ]
        .iter()
        .map(|(json, what)| embedded::load(json, what))
        .collect()
    })
}

/// Every file's tables merged in load order: a later recognizer with an id already seen
/// replaces it, the other tables add up (the last `[trace]` wins).
#[derive(Default)]
struct Merged {
    defs: Vec<Cow<'static, RecognizerDef>>,
    given: Vec<String>,
    derived: BTreeMap<i64, Vec<String>>,
    trace: TraceDef,
    nvrm_user: Vec<nvrm::NvrmFile>,
    ib_verbs: Vec<verbs::VerbsEntry>,
    ntstatus: Vec<ntstatus::NtStatus>,
}

impl Merged {
    /// The tables of `f` other than its recognizers.
    fn add_tables(&mut self, f: &RecognizerFile) -> Result<(), RecognizerError> {
        if let Some(p) = &f.prefilter {
            self.given.extend(p.literals.iter().cloned());
        }
        if let Some(t) = &f.trace {
            self.trace = t.clone();
        }
        if let Some(n) = &f.nvrm {
            self.nvrm_user.push(n.clone());
        }
        for (code, kinds) in &f.xid_derived {
            let c: i64 = code.parse().map_err(|_| RecognizerError::Invalid {
                id: "xid_derived".into(),
                what: format!("code {code} is not a number"),
            })?;
            self.derived.insert(c, kinds.clone());
        }
        for v in &f.ib_verbs {
            if !verbs::CLASSES.contains(&v.class.as_str()) {
                return Err(RecognizerError::Invalid {
                    id: format!("ib_verbs {} {}", v.enumeration, v.value),
                    what: format!("unknown class {}", v.class),
                });
            }
            self.ib_verbs.push(v.clone());
        }
        self.ntstatus.extend(f.ntstatus.iter().cloned());
        Ok(())
    }

    /// One recognizer: replaces the one with its id, or comes last.
    fn put(&mut self, d: Cow<'static, RecognizerDef>) {
        match self.defs.iter_mut().find(|x| x.id == d.id) {
            Some(slot) => *slot = d,
            None => self.defs.push(d),
        }
    }
}

/// A definition checked (anchors, regex or parser) with its regex resolved: a built-in regex
/// stays uncompiled until first use, a user's is compiled now so a bad one is an error at once.
fn compile(def: Cow<'static, RecognizerDef>) -> Result<Compiled, RecognizerError> {
    let invalid = |what: String| RecognizerError::Invalid {
        id: def.id.clone(),
        what,
    };
    if def.anchors.is_empty() || def.anchors.iter().any(|a| a.len() < 4) {
        return Err(invalid("needs anchors of at least 4 bytes".into()));
    }
    let regex = match &def.regex {
        Some(r) => match regexes::builtin().get_key_value(r.as_str()) {
            Some((src, b)) => Some(regexes::RegexRef::Builtin(b, src)),
            None => Some(regexes::RegexRef::Own(Regex::new(r).map_err(|e| {
                RecognizerError::Regex {
                    id: def.id.clone(),
                    err: e.to_string(),
                }
            })?)),
        },
        None => None,
    };
    if def.benign.is_some() && regex.is_none() {
        return Err(invalid("a benign recognizer needs a regex".into()));
    }
    match (&regex, &def.parser) {
        (None, None) => return Err(invalid("needs a regex or a parser".into())),
        (_, Some(p)) if !PARSERS.contains(&p.as_str()) => {
            return Err(invalid(format!("unknown parser {p}")))
        }
        _ => {}
    }
    Ok(Compiled { def, regex })
}

/// Every distinct anchor in recognizer order, with the recognizers that own each.
fn anchor_table(compiled: &[Compiled]) -> (Vec<String>, Vec<Vec<usize>>) {
    let mut anchors: Vec<String> = Vec::new();
    let mut owners: Vec<Vec<usize>> = Vec::new();
    let mut at: std::collections::HashMap<&str, usize> = std::collections::HashMap::new();
    for (i, c) in compiled.iter().enumerate() {
        for a in &c.def.anchors {
            if let Some(&p) = at.get(a.as_str()) {
                if !owners[p].contains(&i) {
                    owners[p].push(i);
                }
            } else {
                at.insert(a, anchors.len());
                anchors.push(a.clone());
                owners.push(vec![i]);
            }
        }
    }
    (anchors, owners)
}

/// The prefilter's literals: the given ones, plus every anchor that contains none of them, then
/// only those that contain no other (sorted). An anchor only benign recognizers own stays out: a
/// benign mark matters only on a record another anchor made a candidate (the automaton still
/// finds it there).
fn prefilter_literals(
    given: &[String],
    anchors: &[String],
    owners: &[Vec<usize>],
    compiled: &[Compiled],
) -> Vec<String> {
    let mut literals: Vec<String> = given.iter().filter(|g| g.len() >= 4).cloned().collect();
    for (a, own) in anchors.iter().zip(owners) {
        if own.iter().all(|&i| compiled[i].def.benign.is_some()) {
            continue;
        }
        if !literals.iter().any(|l| holds(a, l)) {
            literals.push(a.clone());
        }
    }
    let snapshot = literals.clone();
    literals.retain(|a| !snapshot.iter().any(|b| b != a && holds(a, b)));
    literals.sort();
    literals.dedup();
    literals
}

/// `hay.contains(needle)` for the short strings of anchors: `str::contains` sets up a two-way
/// searcher per call, which over the ~40 000 pairs of the built-in set took about a millisecond
/// per run; a check of the first byte's places is enough here.
fn holds(hay: &str, needle: &str) -> bool {
    let (hay, needle) = (hay.as_bytes(), needle.as_bytes());
    let Some((&first, rest)) = needle.split_first() else {
        return true;
    };
    if needle.len() > hay.len() {
        return false;
    }
    memchr::memchr_iter(first, &hay[..=hay.len() - needle.len()])
        .any(|i| &hay[i + 1..i + needle.len()] == rest)
}

/// The built-in NVRM knowledge, or the built-in file with the user's `[nvrm]` tables laid over.
fn nvrm_knowledge(user: Vec<nvrm::NvrmFile>) -> Result<NvrmKnowledge, RecognizerError> {
    if user.is_empty() {
        return Ok(NvrmKnowledge::Builtin);
    }
    let mut file = nvrm::Nvrm::builtin_file();
    for u in user {
        file.overlay(u);
    }
    Ok(NvrmKnowledge::User(Box::new(nvrm::Nvrm::compile(file)?)))
}

impl RecognizerSet {
    /// The built-in recognizers plus user files (a user entry with an existing id replaces it).
    pub fn load(extra: &[String]) -> Result<RecognizerSet, RecognizerError> {
        let user = extra
            .iter()
            .map(|text| toml::from_str::<RecognizerFile>(text))
            .collect::<Result<Vec<_>, _>>()?;
        let mut m = Merged::default();
        for f in builtin_files() {
            m.add_tables(f)?;
            f.recognizer.iter().for_each(|d| m.put(Cow::Borrowed(d)));
        }
        for f in user {
            m.add_tables(&f)?;
            f.recognizer.into_iter().for_each(|d| m.put(Cow::Owned(d)));
        }
        let compiled = std::mem::take(&mut m.defs)
            .into_iter()
            .map(compile)
            .collect::<Result<Vec<_>, _>>()?;
        let (anchors, owners) = anchor_table(&compiled);
        let anchor_set = Needles::new(&anchors);
        let literals = prefilter_literals(&m.given, &anchors, &owners, &compiled);
        let prefilter = Prefilter::new(&literals)?;
        let nvrm_ids = compiled
            .iter()
            .filter(|c| c.def.parser.as_deref() == Some("nvrm"))
            .map(|c| c.def.id.clone())
            .collect();
        Ok(RecognizerSet {
            nvrm: nvrm_knowledge(m.nvrm_user)?,
            nvrm_ids,
            compiled,
            anchor_set,
            prefilter,
            prefilter_literals: literals,
            anchor_owners: owners,
            anchors,
            xid_derived: m.derived,
            trace: m.trace,
            ib_verbs: m.ib_verbs,
            ntstatus: m.ntstatus,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::holds;

    #[test]
    fn holds_is_contains() {
        let words = [
            "",
            "a",
            "ab",
            "abc",
            "NVRM",
            "NVRM: Xid",
            "Xid",
            "id",
            "\u{e9}t\u{e9}",
            "t",
        ];
        for h in words {
            for n in words {
                assert_eq!(holds(h, n), h.contains(n), "{h:?} {n:?}");
            }
        }
    }
}
