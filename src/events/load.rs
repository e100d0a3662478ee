//! Loading: the built-in recognizer files (embedded by the build, deserialized once per process)
//! and the user's merged into one list, each definition checked and its regex resolved, then the
//! anchor automaton and the prefilter built over every anchor.

use super::record::Origin;
use super::set::{Compiled, NvrmKnowledge};
use super::{cuda, ntstatus, nvml, nvrm, regexes, signals, verbs};
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
const PARSERS: [&str; 11] = [
    "cuda_error",
    "fabric_manager",
    "xid",
    "sxid",
    "aer",
    "torchrun_failure",
    "nccl_ib",
    "ib_verbs",
    "cper",
    "nvrm",
    "first_failed_process",
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
            (embedded::PROGRESS, "data/progress.toml"),
            (embedded::VERBS, "data/verbs.toml"),
            (embedded::NTSTATUS, "data/ntstatus.toml"),
            (embedded::CUDA, "data/cuda.toml"),
            (embedded::NVML, "data/nvml.toml"),
            (embedded::STACK, "data/stack.toml"),
            (embedded::VERSIONS, "data/versions.toml"),
        ]
        .iter()
        .map(|(json, what)| embedded::load(json, what))
        .collect()
    })
}

/// The `(samples, rejects)` of the built-in recognizers, per file of [`builtin_files`] and per
/// recognizer in file order (embedded apart, see [`crate::embedded::SAMPLES`]), deserialized on
/// first use: only the self-test reads them.
pub(super) fn builtin_samples(def: &RecognizerDef) -> Option<&'static (Vec<String>, Vec<String>)> {
    type Samples = Vec<Vec<(Vec<String>, Vec<String>)>>;
    static SAMPLES: std::sync::OnceLock<Samples> = std::sync::OnceLock::new();
    let all = SAMPLES.get_or_init(|| crate::embedded::load(crate::embedded::SAMPLES, "samples"));
    builtin_files().iter().zip(all).find_map(|(f, s)| {
        let i = f.recognizer.iter().position(|d| std::ptr::eq(d, def))?;
        s.get(i)
    })
}

/// Every file's tables merged in load order: a later recognizer with an id already seen
/// replaces it, the other tables add up (the last `[trace]` wins).
#[derive(Default)]
struct Merged {
    defs: Vec<Cow<'static, RecognizerDef>>,
    given: Vec<String>,
    gates: Vec<Vec<String>>,
    derived: BTreeMap<i64, Vec<String>>,
    trace: TraceDef,
    nvrm_user: Vec<nvrm::NvrmFile>,
    ib_verbs: Vec<verbs::VerbsEntry>,
    ntstatus: Vec<ntstatus::NtStatus>,
    cuda: cuda::CudaTables,
    nvml: Vec<nvml::NvmlReturn>,
    signals: Vec<signals::Signal>,
    details: Vec<super::details::DetailDef>,
}

impl Merged {
    /// The tables of `f` other than its recognizers.
    fn add_tables(&mut self, f: &RecognizerFile) -> Result<(), RecognizerError> {
        if let Some(p) = &f.prefilter {
            self.given.extend(p.literals.iter().cloned());
            self.gates.extend(p.gates.iter().cloned());
        }
        if let Some(t) = &f.trace {
            self.trace = t.clone();
        }
        if let Some(n) = &f.nvrm {
            self.nvrm_user.push(n.clone());
        }
        self.details.extend(f.memo_detail.iter().cloned());
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
        let tables = f.cuda_tables();
        tables.check().map_err(|what| RecognizerError::Invalid {
            id: "cuda tables".into(),
            what,
        })?;
        self.cuda.extend(&tables);
        self.nvml.extend(f.nvml.iter().cloned());
        self.signals.extend(f.signal.iter().cloned());
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
    let full = Origin::of(Origin {
        recognizer: super::intern(&def.id),
        attach_to: def.attach_to.as_deref().map(super::intern),
        code_table: def.code_table.as_deref().map(super::intern),
        bmc: def.bmc,
        report: def.report,
    });
    let bare = Origin::of(Origin {
        attach_to: None,
        code_table: None,
        ..full.clone()
    });
    Ok(Compiled {
        regex,
        full,
        bare,
        exclude: std::sync::OnceLock::new(),
        single: single(&def),
        def,
    })
}

/// True when a recognizer's drafts are at most one event of its own kind (see
/// [`Compiled::single`]): a regex without parser, attachment, `every_match`, segment or the
/// NVML table (which gives the kind).
fn single(def: &RecognizerDef) -> bool {
    let segment = |r: &String| r.contains("P<segment>") || r.contains("(?<segment>");
    def.parser.is_none()
        && def.benign.is_none()
        && def.attach_to.is_none()
        && !def.every_match
        && def.kind != "nvml_error"
        && !def.details.contains_key("segment")
        && def.regex.as_ref().is_some_and(|r| !segment(r))
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

/// The prefilter's literals: of the given ones and the anchors, those that contain no other
/// (sorted, each once); a line holding any of them holds one of these. An anchor only benign
/// recognizers own stays out: a benign mark matters only on a record another anchor made a
/// candidate (the anchor search still finds it there).
fn prefilter_literals(
    given: &[String],
    anchors: &[String],
    owners: &[Vec<usize>],
    compiled: &[Compiled],
) -> Vec<String> {
    let benign_only = |own: &Vec<usize>| own.iter().all(|&i| compiled[i].def.benign.is_some());
    let mut all: Vec<&str> = given
        .iter()
        .filter(|g| g.len() >= 4)
        .chain(
            anchors
                .iter()
                .zip(owners)
                .filter(|(_, own)| !benign_only(own))
                .map(|(a, _)| a),
        )
        .map(String::as_str)
        .collect();
    all.sort_unstable();
    all.dedup();
    // one search of each string for all the others (a pairwise `contains` took a millisecond)
    let search = Needles::new(&all);
    let holds_another = |x: &str| {
        let mut other = false;
        search.each(x.as_bytes(), |_, p| other |= all[p] != x);
        other
    };
    all.iter()
        .filter(|x| !holds_another(x))
        .map(|x| x.to_string())
        .collect()
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
        let anchor_set = Needles::new(&anchors).warming();
        let literals = prefilter_literals(&m.given, &anchors, &owners, &compiled);
        let benign_only = anchors
            .iter()
            .zip(&owners)
            .filter(|(_, own)| own.iter().all(|&i| compiled[i].def.benign.is_some()))
            .map(|(a, _)| a.clone())
            .collect();
        let prefilter = Prefilter::new(&literals, &m.gates)?;
        let nvrm_ids = compiled
            .iter()
            .filter(|c| c.def.parser.as_deref() == Some("nvrm"))
            .map(|c| super::intern(&c.def.id))
            .collect();
        let details =
            super::details::DetailValues::new(std::mem::take(&mut m.details)).map_err(|what| {
                RecognizerError::Invalid {
                    id: "memo_detail".into(),
                    what,
                }
            })?;
        let nvrm = nvrm_knowledge(m.nvrm_user)?;
        Ok(RecognizerSet {
            details,
            host_guard: std::sync::OnceLock::new(),
            nvrm,
            nvrm_ids,
            cover: std::sync::OnceLock::new(),
            benign_only,
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
            cuda: m.cuda,
            nvml: m.nvml,
            signals: m.signals,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The literals as first written: the given ones, each anchor that contains none of those
    /// so far, then only those that contain no other.
    fn reference(given: &[String], anchors: &[String]) -> Vec<String> {
        let mut literals: Vec<String> = given.iter().filter(|g| g.len() >= 4).cloned().collect();
        for a in anchors {
            if !literals.iter().any(|l| a.contains(l.as_str())) {
                literals.push(a.clone());
            }
        }
        let snapshot = literals.clone();
        literals.retain(|a| !snapshot.iter().any(|b| b != a && a.contains(b.as_str())));
        literals.sort();
        literals.dedup();
        literals
    }

    /// Recognizers owning `anchors` (none benign), compiled as a load would.
    fn plain(anchors: &[String]) -> (Vec<Compiled>, Vec<Vec<usize>>) {
        let def = RecognizerDef {
            id: "t".into(),
            kind: "k".into(),
            anchors: vec!["anchor".into()],
            regex: None,
            parser: Some("xid".into()),
            layer: None,
            severity: None,
            code: None,
            code_table: None,
            exclude: Vec::new(),
            attach_to: None,
            every_match: false,
            description: String::new(),
            bmc: false,
            report: false,
            generic: false,
            benign: None,
            details: BTreeMap::new(),
            samples: Vec::new(),
            rejects: Vec::new(),
        };
        let compiled = vec![compile(Cow::Owned(def)).expect("compiles")];
        (compiled, anchors.iter().map(|_| vec![0]).collect())
    }

    #[test]
    fn literals_are_the_minimal_strings() {
        let set = RecognizerSet::load(&[]).expect("built-in recognizers");
        let (c, o) = plain(&set.anchors);
        let mut given = Vec::new();
        for f in builtin_files() {
            if let Some(p) = &f.prefilter {
                given.extend(p.literals.iter().cloned());
            }
        }
        assert_eq!(
            prefilter_literals(&given, &set.anchors, &o, &c),
            reference(&given, &set.anchors)
        );
        // words that repeat, contain each other both ways, and a given one too short to count
        let w = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<String>>();
        let anchors = w(&[
            "Killed process",
            "Killed",
            "oom-kill",
            "NVRM: Xid",
            "Xid 7",
            "NVRM",
            "NVRM",
        ]);
        for given in [
            w(&[]),
            w(&["Kil", "NVRM: "]),
            w(&["process", "Xid 79", "Killed"]),
        ] {
            let (c, o) = plain(&anchors);
            assert_eq!(
                prefilter_literals(&given, &anchors, &o, &c),
                reference(&given, &anchors),
                "{given:?}"
            );
        }
    }
}
