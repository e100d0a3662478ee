//! Event recognizers: data-driven (TOML, embedded at build time) recognizers that turn candidate
//! lines into events. Each recognizer declares literal anchors for the prefilter, then either a
//! regex with named captures or one of the built-in parsers for records that need more than a regex.

pub mod aer;
pub mod cper;
pub mod job;
pub mod ntstatus;
pub mod nvrm;
pub mod reach;
mod regexes;
pub mod text;
pub mod verbs;
pub mod xid;

use crate::model::{Layer, LineStamp, Severity};
use aho_corasick::{AhoCorasick, AhoCorasickBuilder, MatchKind};
use regex::Regex;
use serde::Deserialize;
use std::collections::BTreeMap;

/// The recognizers as shipped.
pub const BUILTIN_RECOGNIZERS: &str = include_str!("../../data/recognizers.toml");

/// The job-log vocabularies as shipped (NCCL, PyTorch c10d, Slurm, CUDA, containers, trainers):
/// same schema as [`BUILTIN_RECOGNIZERS`], read after it.
pub const BUILTIN_JOB_RECOGNIZERS: &str = include_str!("../../data/jobs.toml");

/// Every built-in recognizer file, in load order.
pub const BUILTIN_FILES: [&str; 4] = [
    BUILTIN_RECOGNIZERS,
    BUILTIN_JOB_RECOGNIZERS,
    verbs::BUILTIN_VERBS,
    ntstatus::BUILTIN_NTSTATUS,
];

/// One recognizer as written in TOML.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct RecognizerDef {
    /// Stable id.
    pub id: String,
    /// Event kind it emits.
    pub kind: String,
    /// Literals (≥ 4 bytes) of which one must occur in the line.
    pub anchors: Vec<String>,
    /// Regex with named captures (`gpu`, `code`, `rank`, `host`, `pid`, …) matched on the message.
    #[serde(default)]
    pub regex: Option<String>,
    /// Built-in parser instead of a regex: `xid`, `sxid`, `aer`, `torchrun_failure`, `ib_verbs`
    /// (`nccl_ib` is its former name), `cper`, `nvrm` (every NVRM line by structure, see [`nvrm`]).
    #[serde(default)]
    pub parser: Option<String>,
    /// Layer override (default: the kind's or code's layer from the catalog).
    #[serde(default)]
    pub layer: Option<Layer>,
    /// Severity override.
    #[serde(default)]
    pub severity: Option<Severity>,
    /// Fixed code for every match.
    #[serde(default)]
    pub code: Option<i64>,
    /// The catalog table (`xid` or `sxid`) whose entry for the captured code gives the event's
    /// layer and severity: a line that reports an Xid seen elsewhere (the device plugin's) keeps
    /// its own kind but takes the code's meaning.
    #[serde(default)]
    pub code_table: Option<String>,
    /// Literals that veto a match.
    #[serde(default)]
    pub exclude: Vec<String>,
    /// Merge the captures into the nearest earlier event of this kind (same input and rank) instead of emitting one.
    #[serde(default)]
    pub attach_to: Option<String>,
    /// Emit one draft per regex match in the record (progress bars glued by carriage returns),
    /// each with a `segment` detail; at most [`MAX_MATCHES_PER_RECORD`], spread evenly.
    #[serde(default)]
    pub every_match: bool,
    /// What the recognizer finds.
    #[serde(default)]
    pub description: String,
    /// The events come from the server's management controller (IPMI SEL, iDRAC/Lifecycle log,
    /// Redfish): their times are on the BMC's clock, and one assertion seen through two BMC
    /// routes within a few seconds is one event.
    #[serde(default)]
    pub bmc: bool,
    /// The line heads a kernel report (hung task, lockup, Oops, WARNING): the trace lines after
    /// it are read into the same event (see [`crate::scan::kreport`]).
    #[serde(default)]
    pub report: bool,
    /// Fires only when no other recognizer gave an event for the record (or claimed it as
    /// benign): a catch-all such as any NCCL WARN.
    #[serde(default)]
    pub generic: bool,
    /// The matched text is routine (the reason): no event, and the generic recognizers stay
    /// silent on the record.
    #[serde(default)]
    pub benign: Option<String>,
    /// Fixed details added to every event (`family = "socket"`).
    #[serde(default)]
    pub details: BTreeMap<String, String>,
    /// Lines that must produce an event (or an attachment).
    #[serde(default)]
    pub samples: Vec<String>,
    /// Lines that must not.
    #[serde(default)]
    pub rejects: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct PrefilterDef {
    #[serde(default)]
    literals: Vec<String>,
}

#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct RecognizerFile {
    #[serde(default)]
    prefilter: Option<PrefilterDef>,
    #[serde(default)]
    xid_derived: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    recognizer: Vec<RecognizerDef>,
    #[serde(default)]
    trace: Option<TraceDef>,
    #[serde(default)]
    ib_verbs: Vec<verbs::VerbsEntry>,
    #[serde(default)]
    ntstatus: Vec<ntstatus::NtStatus>,
    /// NVRM knowledge laid over `data/nvrm.toml` (see [`nvrm::NvrmFile::overlay`]).
    #[serde(default)]
    nvrm: Option<nvrm::NvrmFile>,
}

/// How a kernel report's call trace names a layer (the `[trace]` table).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceDef {
    /// Frames that say how a task waits, not where (exact names, or prefixes ending in `_`;
    /// `schedule` also covers `schedule_timeout`).
    #[serde(default)]
    pub wait_frames: Vec<String>,
    /// Modules and function prefixes per layer, tried in order.
    #[serde(default)]
    pub layer: Vec<TraceLayer>,
}

/// One entry of [`TraceDef::layer`].
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TraceLayer {
    /// The layer a frame in one of these modules points at.
    pub layer: Layer,
    /// Module names as printed in brackets after a frame.
    #[serde(default)]
    pub modules: Vec<String>,
    /// Function name prefixes (for code built into the kernel or frames without a module).
    #[serde(default)]
    pub functions: Vec<String>,
    /// Counts only when one of these shows among the trace's modules or in the task's name.
    #[serde(default)]
    pub only_with: Vec<String>,
}

/// An event before the timeline stage fills in input, line and time.
#[derive(Clone, Debug, Default)]
pub struct Draft {
    /// Kind.
    pub kind: String,
    /// Code.
    pub code: Option<i64>,
    /// GPU id.
    pub gpu: Option<String>,
    /// Rank.
    pub rank: Option<i64>,
    /// Host named inside the record.
    pub host: Option<String>,
    /// Layer override.
    pub layer: Option<Layer>,
    /// Severity override.
    pub severity: Option<Severity>,
    /// Time named inside the record.
    pub stamp: Option<LineStamp>,
    /// Details.
    pub attrs: BTreeMap<String, String>,
    /// Derived from another event of the same line.
    pub derived: bool,
    /// Captures to merge into an earlier event of this kind.
    pub attach_to: Option<String>,
    /// Recognizer id.
    pub recognizer: String,
    /// Seen by the BMC (see [`RecognizerDef::bmc`]).
    pub bmc: bool,
    /// Catalog table of the code (see [`RecognizerDef::code_table`]).
    pub code_table: Option<String>,
    /// Heads a kernel report (see [`RecognizerDef::report`]).
    pub report: bool,
}

impl Draft {
    /// A draft of `kind`.
    pub fn new(kind: &str) -> Draft {
        Draft {
            kind: kind.to_string(),
            ..Draft::default()
        }
    }
}

/// A candidate record handed to recognizers.
#[derive(Debug)]
pub struct Record<'a> {
    /// The whole record with its prefix (anchors are looked for here).
    pub full: &'a str,
    /// Message text after the line prefix, continuation lines joined with `\n`, rsyslog escapes undone.
    pub body: &'a str,
    /// Up to 8 raw lines before the record, oldest first.
    pub preceding: &'a [String],
    /// Up to 8 raw lines after the record.
    pub following: &'a [String],
    /// Rank named by a launcher prefix.
    pub rank: Option<i64>,
}

struct Compiled {
    def: RecognizerDef,
    regex: Option<regexes::RegexRef>,
}

/// All recognizers, with the anchor automaton of the prefilter.
pub struct RecognizerSet {
    compiled: Vec<Compiled>,
    /// Aho-Corasick automaton over every anchor (overlapping search on candidate records).
    pub automaton: AhoCorasick,
    /// The smallest set of literals that covers every anchor (anchors that contain another
    /// anchor are dropped), searched in whole buffers to find candidate lines.
    pub prefilter: Prefilter,
    /// The prefilter's literals.
    pub prefilter_literals: Vec<String>,
    /// For each automaton pattern, the recognizers that own it.
    anchor_owners: Vec<Vec<usize>>,
    /// The anchor literals in automaton order.
    pub anchors: Vec<String>,
    xid_derived: BTreeMap<i64, Vec<String>>,
    /// How call traces name layers (the last `[trace]` table given wins).
    pub trace: TraceDef,
    /// The verbs table (`ibv_wc_status`, `ibv_event_type`); later entries win.
    pub ib_verbs: Vec<verbs::VerbsEntry>,
    /// The Windows NTSTATUS table (exit statuses); later entries win.
    pub ntstatus: Vec<ntstatus::NtStatus>,
    /// The NVRM knowledge (built-in, or with the user's `[nvrm]` tables).
    nvrm: NvrmKnowledge,
    /// Ids of the recognizers with the `nvrm` parser.
    nvrm_ids: Vec<String>,
}

enum NvrmKnowledge {
    Builtin,
    User(Box<nvrm::Nvrm>),
}

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
    fn new(literals: &[String]) -> Result<Prefilter, RecognizerError> {
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

/// The most drafts one `every_match` recognizer takes from one record.
pub const MAX_MATCHES_PER_RECORD: usize = 256;

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

/// A draft from one regex match: named captures fill the draft's fields or its details.
fn draft_from(def: &RecognizerDef, re: &Regex, caps: &regex::Captures<'_>) -> Draft {
    let mut d = Draft::new(&def.kind);
    for name in re.capture_names().flatten() {
        let Some(m) = caps.name(name) else { continue };
        let v = m.as_str().trim();
        match name {
            "gpu" => d.gpu = crate::ids::normalize_bdf(v).or_else(|| Some(v.to_string())),
            "busid" => d.gpu = crate::ids::nccl_bus_id(v),
            "code" => d.code = v.parse().ok(),
            "rank" => d.rank = v.parse().ok(),
            "host" => d.host = Some(v.to_string()),
            // a time written inside the message (`CANCELLED AT 2024-05-01T12:00:00`)
            "stamp" => {
                if let Some((ws, _)) = crate::formats::time::iso_datetime(v.as_bytes()) {
                    d.stamp = Some(LineStamp {
                        wall: Some(ws),
                        mono_us: None,
                    });
                }
                d.attrs.insert("at".to_string(), v.to_string());
            }
            _ => {
                d.attrs.insert(name.to_string(), v.to_string());
            }
        }
    }
    if d.code.is_none() {
        d.code = def.code;
    }
    for (k, v) in &def.details {
        d.attrs.entry(k.clone()).or_insert_with(|| v.clone());
    }
    d.attach_to = def.attach_to.clone();
    d.code_table = def.code_table.clone();
    d
}

impl RecognizerSet {
    /// The built-in recognizers plus user files (a user entry with an existing id replaces it).
    pub fn load(extra: &[String]) -> Result<RecognizerSet, RecognizerError> {
        let mut defs: Vec<RecognizerDef> = Vec::new();
        let mut derived = BTreeMap::new();
        let mut given: Vec<String> = Vec::new();
        let mut trace = TraceDef::default();
        let mut nvrm_user: Vec<nvrm::NvrmFile> = Vec::new();
        // the built-in files are parsed once per process; user files on every load
        static BUILTIN: std::sync::OnceLock<Vec<Result<RecognizerFile, toml::de::Error>>> =
            std::sync::OnceLock::new();
        let builtin = BUILTIN
            .get_or_init(|| BUILTIN_FILES.iter().map(|t| toml::from_str(t)).collect())
            .clone();
        let mut ib_verbs: Vec<verbs::VerbsEntry> = Vec::new();
        let mut nt: Vec<ntstatus::NtStatus> = Vec::new();
        let files = builtin.into_iter().chain(
            extra
                .iter()
                .map(|text| toml::from_str::<RecognizerFile>(text)),
        );
        for f in files {
            let f = f?;
            if let Some(p) = f.prefilter {
                given.extend(p.literals);
            }
            if let Some(t) = f.trace {
                trace = t;
            }
            if let Some(n) = f.nvrm {
                nvrm_user.push(n);
            }
            for (code, kinds) in f.xid_derived {
                let c: i64 = code.parse().map_err(|_| RecognizerError::Invalid {
                    id: "xid_derived".into(),
                    what: format!("code {code} is not a number"),
                })?;
                derived.insert(c, kinds);
            }
            for v in f.ib_verbs {
                if !verbs::CLASSES.contains(&v.class.as_str()) {
                    return Err(RecognizerError::Invalid {
                        id: format!("ib_verbs {} {}", v.enumeration, v.value),
                        what: format!("unknown class {}", v.class),
                    });
                }
                ib_verbs.push(v);
            }
            nt.extend(f.ntstatus);
            for d in f.recognizer {
                if let Some(slot) = defs.iter_mut().find(|x| x.id == d.id) {
                    *slot = d;
                } else {
                    defs.push(d);
                }
            }
        }
        let mut compiled = Vec::with_capacity(defs.len());
        for def in defs {
            if def.anchors.is_empty() || def.anchors.iter().any(|a| a.len() < 4) {
                return Err(RecognizerError::Invalid {
                    id: def.id,
                    what: "needs anchors of at least 4 bytes".into(),
                });
            }
            let regex = match &def.regex {
                Some(r) => match regexes::builtin().get_key_value(r) {
                    Some((src, cell)) => Some(regexes::RegexRef::Builtin(cell, src.as_str())),
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
                return Err(RecognizerError::Invalid {
                    id: def.id,
                    what: "a benign recognizer needs a regex".into(),
                });
            }
            match (&regex, &def.parser) {
                (None, None) => {
                    return Err(RecognizerError::Invalid {
                        id: def.id,
                        what: "needs a regex or a parser".into(),
                    })
                }
                (_, Some(p)) if !PARSERS.contains(&p.as_str()) => {
                    return Err(RecognizerError::Invalid {
                        id: def.id.clone(),
                        what: format!("unknown parser {p}"),
                    })
                }
                _ => {}
            }
            compiled.push(Compiled { def, regex });
        }
        let mut anchors: Vec<String> = Vec::new();
        let mut owners: Vec<Vec<usize>> = Vec::new();
        for (i, c) in compiled.iter().enumerate() {
            for a in &c.def.anchors {
                if let Some(p) = anchors.iter().position(|x| x == a) {
                    if !owners[p].contains(&i) {
                        owners[p].push(i);
                    }
                } else {
                    anchors.push(a.clone());
                    owners.push(vec![i]);
                }
            }
        }
        let automaton = AhoCorasickBuilder::new()
            .match_kind(MatchKind::Standard)
            .build(&anchors)
            .map_err(|e| RecognizerError::Invalid {
                id: "anchors".into(),
                what: e.to_string(),
            })?;
        // the given literals, plus every anchor that contains none of them; an anchor only benign
        // recognizers own stays out: a benign mark matters only on a record another anchor made
        // a candidate (the automaton still finds it there)
        let mut literals: Vec<String> = given.iter().filter(|g| g.len() >= 4).cloned().collect();
        for (a, own) in anchors.iter().zip(&owners) {
            if own.iter().all(|&i| compiled[i].def.benign.is_some()) {
                continue;
            }
            if !literals.iter().any(|l| a.contains(l.as_str())) {
                literals.push(a.clone());
            }
        }
        let snapshot = literals.clone();
        literals.retain(|a| !snapshot.iter().any(|b| b != a && a.contains(b.as_str())));
        literals.sort();
        literals.dedup();
        let prefilter = Prefilter::new(&literals)?;
        let nvrm = if nvrm_user.is_empty() {
            NvrmKnowledge::Builtin
        } else {
            let mut file = nvrm::Nvrm::builtin_file();
            for u in nvrm_user {
                file.overlay(u);
            }
            NvrmKnowledge::User(Box::new(nvrm::Nvrm::compile(file)?))
        };
        let nvrm_ids = compiled
            .iter()
            .filter(|c| c.def.parser.as_deref() == Some("nvrm"))
            .map(|c| c.def.id.clone())
            .collect();
        Ok(RecognizerSet {
            nvrm,
            nvrm_ids,
            compiled,
            automaton,
            prefilter,
            prefilter_literals: literals,
            anchor_owners: owners,
            anchors,
            xid_derived: derived,
            trace,
            ib_verbs,
            ntstatus: nt,
        })
    }

    /// Number of recognizers.
    pub fn len(&self) -> usize {
        self.compiled.len()
    }

    /// True when there are none.
    pub fn is_empty(&self) -> bool {
        self.compiled.is_empty()
    }

    /// True when recognizer `idx` reads the lines around the record `full` (its parser needs
    /// them: AER headers, torchrun reports, NVRM initialization failures).
    pub fn needs_context(&self, idx: usize, full: &str) -> bool {
        match self.compiled[idx].def.parser.as_deref() {
            Some("aer" | "torchrun_failure" | "cper") => true,
            Some("nvrm") => self.nvrm().needs_context(full),
            _ => false,
        }
    }

    /// The NVRM knowledge the `nvrm` parser runs with.
    pub fn nvrm(&self) -> &nvrm::Nvrm {
        match &self.nvrm {
            NvrmKnowledge::Builtin => nvrm::Nvrm::builtin(),
            NvrmKnowledge::User(k) => k,
        }
    }

    /// Ids of the recognizers with the `nvrm` parser.
    pub fn nvrm_recognizers(&self) -> &[String] {
        &self.nvrm_ids
    }

    /// Specific before generic, for the drafts of one record: an `nvrm` draft of the generic kind
    /// is dropped when another recognizer said something about the record (an event or an
    /// attachment), and an `nvrm` draft of a kind another recognizer already gave adds its
    /// details to that draft instead of standing alone.
    pub fn settle(&self, drafts: &mut Vec<Draft>) {
        if self.nvrm_ids.is_empty() || drafts.len() < 2 {
            return;
        }
        let is_nvrm = |d: &Draft| self.nvrm_ids.contains(&d.recognizer);
        if !drafts.iter().any(is_nvrm) || !drafts.iter().any(|d| !is_nvrm(d)) {
            return;
        }
        let mut i = 0;
        while i < drafts.len() {
            if !is_nvrm(&drafts[i]) {
                i += 1;
                continue;
            }
            if drafts[i].kind == nvrm::GENERIC_KIND {
                drafts.remove(i);
                continue;
            }
            let kind = drafts[i].kind.clone();
            if let Some(j) = drafts
                .iter()
                .position(|d| !is_nvrm(d) && d.kind == kind && d.attach_to.is_none())
            {
                let d = drafts.remove(i);
                let target = if j > i { j - 1 } else { j };
                let t = &mut drafts[target];
                for (k, v) in d.attrs {
                    t.attrs.entry(k).or_insert(v);
                }
                if t.gpu.is_none() {
                    t.gpu = d.gpu;
                }
                continue;
            }
            i += 1;
        }
    }

    /// How many lines after a record recognizer `idx` reads (a firmware error record spans many,
    /// with other lines between them).
    pub fn context_after(&self, idx: usize) -> usize {
        match self.compiled[idx].def.parser.as_deref() {
            Some("cper") => cper::MAX_RECORD_LINES,
            _ => 8,
        }
    }

    /// The recognizers owning automaton pattern `p`.
    pub fn owners(&self, p: usize) -> &[usize] {
        &self.anchor_owners[p]
    }

    /// True when recognizer `idx` is a catch-all ([`RecognizerDef::generic`]).
    pub fn is_generic(&self, idx: usize) -> bool {
        self.compiled[idx].def.generic
    }

    /// True when the recognizer with this id is a catch-all.
    pub fn is_generic_id(&self, id: &str) -> bool {
        self.compiled
            .iter()
            .any(|c| c.def.id == id && c.def.generic)
    }

    /// The id of a benign recognizer whose anchor and regex match `text`, if any.
    pub fn benign_for(&self, text: &str) -> Option<&str> {
        self.compiled
            .iter()
            .filter(|c| c.def.benign.is_some())
            .find(|c| {
                c.def.anchors.iter().any(|a| text.contains(a.as_str()))
                    && c.regex
                        .as_ref()
                        .and_then(regexes::RegexRef::get)
                        .is_some_and(|re| re.is_match(text))
            })
            .map(|c| c.def.id.as_str())
    }

    /// Runs every recognizer of `owners` on a record, the specific ones first; the generic ones
    /// only when no specific one gave an event or claimed the record as benign.
    pub fn apply_all(&self, owners: &[usize], rec: &Record<'_>, out: &mut Vec<Draft>) {
        let mut claimed = false;
        for &o in owners.iter().filter(|&&o| !self.is_generic(o)) {
            claimed |= self.apply(o, rec, out);
        }
        if claimed || out.iter().any(|d| d.attach_to.is_none()) {
            return;
        }
        for &o in owners.iter().filter(|&&o| self.is_generic(o)) {
            self.apply(o, rec, out);
        }
    }

    /// Runs recognizer `idx` on a record; returns whether it claimed the record as benign.
    pub fn apply(&self, idx: usize, rec: &Record<'_>, out: &mut Vec<Draft>) -> bool {
        let c = &self.compiled[idx];
        let def = &c.def;
        if def.exclude.iter().any(|x| rec.body.contains(x.as_str())) {
            return false;
        }
        if !def.anchors.iter().any(|a| rec.full.contains(a.as_str())) {
            return false;
        }
        if def.benign.is_some() {
            return c
                .regex
                .as_ref()
                .and_then(regexes::RegexRef::get)
                .is_some_and(|re| re.is_match(rec.body));
        }
        let start = out.len();
        match def.parser.as_deref() {
            Some("xid") => {
                xid::xid_drafts(rec.body, &self.xid_derived, out);
            }
            Some("sxid") => {
                xid::sxid_drafts(rec.body, out);
            }
            Some("aer") => {
                aer::aer_drafts(rec, out);
            }
            Some("torchrun_failure") => {
                job::torchrun_failure(rec, out);
            }
            Some("nccl_ib" | "ib_verbs") => {
                verbs::ib_drafts(rec, &self.ib_verbs, out);
            }
            Some("cper") => {
                cper::cper_drafts(rec, out);
            }
            Some("nvrm") => {
                nvrm::nvrm_drafts(self.nvrm(), rec, out);
            }
            _ => {
                let Some(re) = c.regex.as_ref().and_then(regexes::RegexRef::get) else {
                    return false;
                };
                if def.every_match {
                    let all: Vec<regex::Captures<'_>> = re.captures_iter(rec.body).collect();
                    let n = all.len();
                    let keep = n.min(MAX_MATCHES_PER_RECORD);
                    for k in 0..keep {
                        // spread evenly, always keeping the last match
                        let i = if keep == n { k } else { (k + 1) * n / keep - 1 };
                        let mut d = draft_from(def, re, &all[i]);
                        d.attrs.insert("segment".into(), i.to_string());
                        if let Some(m) = all[i].get(0) {
                            d.attrs.insert("text".into(), m.as_str().trim().to_string());
                        }
                        out.push(d);
                    }
                } else if let Some(caps) = re.captures(rec.body) {
                    out.push(draft_from(def, re, &caps));
                }
            }
        }
        for d in &mut out[start..] {
            d.recognizer = def.id.clone();
            d.bmc = def.bmc;
            d.report = def.report;
            if d.rank.is_none() {
                d.rank = rec.rank;
            }
            ntstatus::annotate(&self.ntstatus, d);
            if !d.derived {
                if d.layer.is_none() {
                    d.layer = def.layer;
                }
                if d.severity.is_none() {
                    d.severity = def.severity;
                }
            }
        }
        false
    }

    /// Checks every recognizer's samples and rejects; returns one message per failure.
    pub fn self_test(&self) -> Vec<String> {
        let mut failures = Vec::new();
        for (i, c) in self.compiled.iter().enumerate() {
            if c.def.samples.is_empty() {
                failures.push(format!("{}: has no sample lines", c.def.id));
            }

            for (lines, want) in [(&c.def.samples, true), (&c.def.rejects, false)] {
                for s in lines {
                    let parts: Vec<String> = s.split('\n').map(str::to_string).collect();
                    let head = crate::formats::parse_head(parts[0].as_bytes());
                    let body = text::normalize_body(&s[head.msg_start.min(parts[0].len())..]);
                    let following: Vec<String> = parts[1..].to_vec();
                    let rec = Record {
                        full: s,
                        body: &body,
                        preceding: &[],
                        following: &following,
                        rank: head.rank,
                    };
                    let hit = self
                        .automaton
                        .find_overlapping_iter(s.as_str())
                        .any(|m| self.anchor_owners[m.pattern().as_usize()].contains(&i))
                        && (c.def.benign.is_some() || self.prefilter.find(s.as_str()).is_some());
                    let mut out = Vec::new();
                    let mut claimed = false;
                    if hit && c.def.generic {
                        // a catch-all is tested as the scanner runs it: after the others
                        let mut owners: Vec<usize> = Vec::new();
                        for m in self.automaton.find_overlapping_iter(s.as_str()) {
                            owners.extend(self.anchor_owners[m.pattern().as_usize()].iter());
                        }
                        owners.sort_unstable();
                        owners.dedup();
                        self.apply_all(&owners, &rec, &mut out);
                        out.retain(|d| d.recognizer == c.def.id);
                    } else if hit {
                        claimed = self.apply(i, &rec, &mut out);
                    }
                    self.settle(&mut out);
                    let got = if c.def.benign.is_some() {
                        claimed
                    } else {
                        out.iter().any(|d| !d.derived)
                    };
                    if got != want {
                        failures.push(format!(
                            "{}: {} {:?}",
                            c.def.id,
                            if want {
                                "missed sample"
                            } else {
                                "matched reject"
                            },
                            s
                        ));
                    }
                }
            }
        }
        failures
    }
}
