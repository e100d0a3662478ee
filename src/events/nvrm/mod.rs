//! NVRM lines read by structure: every `NVRM:` line of the NVIDIA kernel driver is cut into its
//! parts (GPU, function, message, NV_STATUS), put in a family (GSP, robust channels, init, GPU
//! lost, ECC, NVLink, firmware, platform...) and classified by the data of `data/nvrm.toml`. A line
//! no class or family explains, but that reports an error, raises the generic `driver_error`, so
//! that a complaining driver never yields the verdict `none`. Initialization failures take their
//! reason from the lines around them (same GPU, same boot).
//!
//! The data's types are in `defs`, the word automata in `lexicon`, the cutting of a line into
//! its parts in `line`; this file compiles the data, classifies a line and raises its drafts.

use super::{Draft, Record};
use crate::events::Needles;
use crate::model::{Layer, Severity};
use std::collections::{BTreeMap, HashMap};

mod defs;
mod lexicon;
mod line;

pub use defs::{ClassDef, FamilyDef, NvrmFile, ReasonDef, StageDef, StatusDef};
use lexicon::{Found, Lexicon};
pub use line::NvrmLine;
use line::{is_boundary, message_of, parse_line, probe_failure};

/// The NVRM knowledge as shipped.
pub const BUILTIN_NVRM: &str = include_str!("../../../data/nvrm.toml");

/// The kind raised by an NVRM error line that no class or family explains.
pub const GENERIC_KIND: &str = "driver_error";

/// A function name as prefixes compare it: leading underscores dropped, lower case.
fn norm_function(f: &str) -> String {
    f.trim_start_matches('_').to_ascii_lowercase()
}

struct Family {
    def: FamilyDef,
    words: Vec<u32>,
}

struct Class {
    def: ClassDef,
    prefixes: Vec<String>,
    words: Vec<u32>,
    starts: Vec<String>,
    not_words: Vec<u32>,
}

/// The compiled NVRM knowledge.
pub struct Nvrm {
    lexicon: Lexicon,
    error_words: Vec<u32>,
    families: Vec<Family>,
    /// Function prefix → family (the first family that lists it).
    prefixes: HashMap<String, usize>,
    classes: Vec<Class>,
    statuses: Vec<StatusDef>,
    by_name: HashMap<String, usize>,
    by_code: HashMap<i64, usize>,
    stages: BTreeMap<i64, StageDef>,
    reasons: HashMap<String, ReasonDef>,
    /// The words of the terminal classes, lower-cased (a record holding one, in any case, reads
    /// its neighbours).
    terminal_words: Needles,
}

/// Errors in NVRM data.
#[derive(Debug, thiserror::Error)]
pub enum NvrmError {
    /// A class names a family that does not exist, or has neither a kind nor `benign`.
    #[error("nvrm class {0}: {1}")]
    Class(String, String),
    /// A reason is named but not defined.
    #[error("nvrm: reason {0} is not in `reasons`")]
    Reason(String),
}

impl Nvrm {
    /// Compiles the data.
    pub fn compile(file: NvrmFile) -> Result<Nvrm, NvrmError> {
        let mut lexicon = Lexicon::default();
        let mut prefixes = HashMap::new();
        let families: Vec<Family> = file
            .family
            .into_iter()
            .enumerate()
            .map(|(i, def)| {
                for p in def.functions.iter().map(|p| norm_function(p)) {
                    if !p.is_empty() {
                        prefixes.entry(p).or_insert(i);
                    }
                }
                Family {
                    words: lexicon.ids(&def.words),
                    def,
                }
            })
            .collect();
        let mut classes = Vec::new();
        for def in file.class {
            if let Some(f) = &def.family {
                if !families.iter().any(|x| &x.def.id == f) {
                    return Err(NvrmError::Class(def.id, format!("unknown family {f}")));
                }
            }
            if def.kind.is_none() == def.benign.is_none() {
                return Err(NvrmError::Class(
                    def.id,
                    "needs either a kind or benign".into(),
                ));
            }
            if def.functions.is_empty()
                && def.words.is_empty()
                && def.starts.is_empty()
                && def.statuses.is_empty()
                && !def.gone
            {
                return Err(NvrmError::Class(
                    def.id,
                    "needs functions, words, starts, statuses or gone".into(),
                ));
            }
            classes.push(Class {
                prefixes: def.functions.iter().map(|p| norm_function(p)).collect(),
                words: lexicon.ids(&def.words),
                starts: def.starts.iter().map(|s| s.to_ascii_lowercase()).collect(),
                not_words: lexicon.ids(&def.not_words),
                def,
            });
        }
        let reasons: HashMap<String, ReasonDef> = file
            .reasons
            .into_iter()
            .map(|r| (r.id.clone(), r))
            .collect();
        let named = classes
            .iter()
            .filter_map(|c| c.def.reason.as_ref())
            .chain(families.iter().filter_map(|f| f.def.reason.as_ref()))
            .chain(file.status.iter().filter_map(|s| s.reason.as_ref()))
            .chain(file.init_stage.iter().filter_map(|s| s.reason.as_ref()));
        for r in named {
            if !reasons.contains_key(r) {
                return Err(NvrmError::Reason(r.clone()));
            }
        }
        let mut by_name = HashMap::new();
        let mut by_code = HashMap::new();
        for (i, s) in file.status.iter().enumerate() {
            by_name.insert(s.name.clone(), i);
            by_code.entry(s.code).or_insert(i);
        }
        let terminal_words = Needles::new(
            classes
                .iter()
                .filter(|c| c.def.terminal)
                .flat_map(|c| c.def.words.iter())
                .filter(|w| !w.is_empty())
                .map(|w| w.to_ascii_lowercase()),
        );
        let error_words = lexicon.ids(&file.error_words);
        lexicon.build();
        Ok(Nvrm {
            lexicon,
            error_words,
            families,
            prefixes,
            classes,
            statuses: file.status,
            by_name,
            by_code,
            stages: file.init_stage.into_iter().map(|s| (s.code, s)).collect(),
            reasons,
            terminal_words,
        })
    }

    /// The built-in knowledge, compiled once per process.
    pub fn builtin() -> &'static Nvrm {
        static CACHE: std::sync::OnceLock<Nvrm> = std::sync::OnceLock::new();
        CACHE.get_or_init(|| Nvrm::compile(Nvrm::builtin_file()).expect("data/nvrm.toml compiles"))
    }

    /// The built-in data (as the build embedded it, see [`crate::embedded`]).
    pub fn builtin_file() -> NvrmFile {
        crate::embedded::load(crate::embedded::NVRM, "data/nvrm.toml")
    }

    /// A reason of initialization failures by its id.
    pub fn reason(&self, id: &str) -> Option<&ReasonDef> {
        self.reasons.get(id)
    }

    /// The NV_STATUS codes.
    pub fn statuses(&self) -> &[StatusDef] {
        &self.statuses
    }

    /// The family ids, in order.
    pub fn family_ids(&self) -> Vec<&str> {
        self.families.iter().map(|f| f.def.id.as_str()).collect()
    }

    /// A status by its name.
    pub fn status(&self, name: &str) -> Option<&StatusDef> {
        self.by_name.get(name).map(|&i| &self.statuses[i])
    }

    /// A status by its code.
    pub fn status_by_code(&self, code: i64) -> Option<&StatusDef> {
        self.by_code.get(&code).map(|&i| &self.statuses[i])
    }

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
    pub fn parse(&self, body: &str) -> Option<NvrmLine> {
        parse_line(body, self)
    }

    /// What one NVRM line is.
    pub fn classify<'k>(&'k self, line: &NvrmLine) -> Outcome<'k> {
        let lower = line.message.to_ascii_lowercase();
        let found = self.lexicon.scan(&line.message, &lower);
        let family = self.family_of(line, &found);
        let fam_id = family.map(|f| f.def.id.as_str());
        let error_level = line.function.is_some() || found.any(&self.error_words);
        let func = line.function.as_deref().map(norm_function);
        for c in &self.classes {
            let d = &c.def;
            if d.family.as_deref().is_some_and(|f| Some(f) != fam_id) {
                continue;
            }
            if !c.prefixes.is_empty()
                && !func
                    .as_deref()
                    .is_some_and(|f| c.prefixes.iter().any(|p| f.starts_with(p.as_str())))
            {
                continue;
            }
            if !c.words.is_empty() && !found.any(&c.words) {
                continue;
            }
            if !c.starts.is_empty() && !c.starts.iter().any(|s| lower.starts_with(s.as_str())) {
                continue;
            }
            if found.any(&c.not_words) {
                continue;
            }
            if !d.statuses.is_empty() && !d.statuses.iter().any(|s| line.statuses.contains(s)) {
                continue;
            }
            if d.gone
                && !line
                    .statuses
                    .iter()
                    .any(|s| self.status(s).is_some_and(|x| x.gone))
            {
                continue;
            }
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
        if !error_level {
            return Outcome::Info;
        }
        match family.filter(|f| f.def.kind.is_some()) {
            Some(f) => Outcome::Event(Verdict {
                kind: f.def.kind.as_deref().unwrap_or(GENERIC_KIND),
                severity: f.def.severity,
                layer: None,
                reason: f.def.reason.as_deref(),
                own_reason: false,
                class: "family",
                family: fam_id,
                terminal: false,
                attrs: None,
            }),
            None => Outcome::Event(Verdict {
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
            }),
        }
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

/// What a context line says about an initialization failure on `gpu`: (terminal, reason).
fn context_reason<'k>(
    k: &'k Nvrm,
    raw: &str,
    gpu: Option<&str>,
) -> Option<(bool, Option<&'k str>)> {
    let msg = message_of(raw);
    if probe_failure(msg).is_some() {
        return Some((true, None));
    }
    let line = k.parse(msg)?;
    if let (Some(a), Some(b)) = (gpu, line.gpu.as_deref()) {
        if a != b {
            return None;
        }
    }
    let by_status = || {
        line.statuses
            .iter()
            .filter_map(|s| k.status(s))
            .find_map(|s| s.reason.as_deref())
    };
    match k.classify(&line) {
        // a closing line gives the reason its own status or stage say (for the next closing line
        // of the same failure: `rm_init_adapter failed` after `RmInitAdapter failed!`)
        Outcome::Event(v) if v.terminal => Some((
            true,
            by_status().or_else(|| {
                line.init_stage
                    .and_then(|(st, _, _)| k.stages.get(&st))
                    .and_then(|s| s.reason.as_deref())
            }),
        )),
        Outcome::Event(v) => Some((false, v.reason.or_else(by_status))),
        _ => Some((false, None)),
    }
}

/// The reason of an initialization failure from the lines around it: the earliest reason-giving
/// line of the same failure before it (a closing line of an earlier failure, a driver load or a
/// boot ends the search), else the first after it.
fn reason_around<'k>(k: &'k Nvrm, rec: &Record<'_>, gpu: Option<&str>) -> Option<&'k str> {
    let mut found = None;
    let mut block = None;
    let mut passed = false;
    for raw in rec.preceding.iter().rev() {
        if is_boundary(message_of(raw)) {
            break;
        }
        match context_reason(k, raw, gpu) {
            Some((true, _)) if passed => break,
            Some((true, r)) => {
                block = block.or(r);
            }
            Some((false, r)) => {
                passed = true;
                if r.is_some() {
                    found = r;
                }
            }
            None => {}
        }
    }
    if found.is_some() {
        return found;
    }
    if block.is_some() {
        return block;
    }
    for raw in rec.following {
        if is_boundary(message_of(raw)) {
            break;
        }
        match context_reason(k, raw, gpu) {
            Some((true, _)) => break,
            Some((false, Some(r))) => return Some(r),
            _ => {}
        }
    }
    None
}

/// Drafts for one record (the `nvrm` parser).
pub fn nvrm_drafts(k: &Nvrm, rec: &Record<'_>, out: &mut Vec<Draft>) {
    let body = rec.body;
    if let Some((gpu, err)) = probe_failure(body) {
        let mut d = Draft::new("gpu_init_failure");
        d.gpu = gpu.map(Into::into);
        d.attrs.insert("error", err);
        d.attrs.insert("family", "init".into());
        d.attrs.insert("class", "probe-failed".into());
        if let Some(r) = reason_around(k, rec, d.gpu.as_deref()) {
            set_reason(k, &mut d, r);
        }
        out.push(d);
        return;
    }
    let Some(line) = k.parse(body) else { return };
    let Outcome::Event(v) = k.classify(&line) else {
        return;
    };
    let mut d = Draft::new(v.kind);
    d.gpu = line.gpu.as_deref().map(Into::into);
    d.severity = v.severity;
    d.layer = v.layer;
    let mut attr = |key: &str, val: String| {
        d.attrs.insert(key, val);
    };
    if let Some(f) = &line.function {
        attr("function", f.clone());
    }
    if let Some(n) = line.gpu_instance {
        attr("gpu_instance", n.to_string());
    }
    if let Some(f) = v.family {
        attr("family", f.to_string());
    }
    attr("class", v.class.to_string());
    if !line.statuses.is_empty() {
        attr("status", line.statuses.join(","));
        if let Some(s) = k.status(&line.statuses[0]) {
            attr("status_meaning", s.meaning.clone());
        }
    }
    if let Some(c) = &line.status_code {
        attr("status_code", c.clone());
    }
    if let Some(f) = &line.assert_file {
        attr("assert_file", f.clone());
    }
    if let Some((stage, _, ln)) = line.init_stage {
        let name = k
            .stages
            .get(&stage)
            .map_or_else(|| format!("0x{stage:x}"), |s| s.name.clone());
        attr("init_stage", name);
        attr("init_line", ln.to_string());
    }
    if let Some(a) = v.attrs {
        for (key, val) in a {
            attr(key, val.clone());
        }
    }
    if v.is_generic() {
        // what was not understood, verbatim (the event's message is the whole line)
        attr("text", line.message.clone());
    }
    if v.kind == "gpu_init_failure" {
        // the line's own reason (a probe step that says why), else the lines around it, else its
        // status and stage
        let reason = v
            .reason
            .filter(|_| v.own_reason)
            .or_else(|| reason_around(k, rec, line.gpu.as_deref()))
            .or_else(|| {
                line.statuses
                    .iter()
                    .filter_map(|s| k.status(s))
                    .find_map(|s| s.reason.as_deref())
            })
            .or_else(|| {
                line.init_stage
                    .and_then(|(st, _, _)| k.stages.get(&st))
                    .and_then(|s| s.reason.as_deref())
            })
            .or(v.reason);
        if let Some(r) = reason {
            set_reason(k, &mut d, r);
        }
    } else if let Some(r) = v.reason.filter(|_| v.own_reason) {
        set_reason(k, &mut d, r);
    }
    out.push(d);
}

/// The `reason` detail and the `cause` group the judge reads.
fn set_reason(k: &Nvrm, d: &mut Draft, reason: &str) {
    d.attrs.insert("reason", reason.to_string());
    if let Some(r) = k.reason(reason).filter(|_| d.kind == "gpu_init_failure") {
        d.attrs.insert("cause", r.cause.clone());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn k() -> &'static Nvrm {
        Nvrm::builtin()
    }

    fn kind_of(body: &str) -> Option<String> {
        let line = k().parse(body)?;
        match k().classify(&line) {
            Outcome::Event(v) => Some(v.kind.to_string()),
            Outcome::Benign(_) => Some("benign".into()),
            Outcome::Info => None,
        }
    }

    #[test]
    fn parts_of_a_line() {
        let l = k()
            .parse("NVRM: GPU6 _kgspIsHeartbeatTimedOut: Heartbeat timed out, currentTimeMs 1 heartbeat 0")
            .unwrap();
        assert_eq!(l.gpu_instance, Some(6));
        assert_eq!(l.function.as_deref(), Some("_kgspIsHeartbeatTimedOut"));
        assert!(l.message.starts_with("Heartbeat timed out"));
        let l = k()
            .parse("NVRM: GPU 0000:0a:00.0: RmInitAdapter failed! (0x62:0x40:2168)")
            .unwrap();
        assert_eq!(l.gpu.as_deref(), Some("0000:0a:00.0"));
        assert_eq!(l.function, None);
        assert_eq!(l.init_stage, Some((0x62, 0x40, 2168)));
        assert_eq!(l.statuses, vec!["NV_ERR_INVALID_STATE".to_string()]);
        let l = k()
            .parse(
                "NVRM: _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for fn 76!",
            )
            .unwrap();
        assert_eq!(l.statuses, vec!["NV_ERR_GPU_IS_LOST".to_string()]);
        assert_eq!(l.status_code.as_deref(), Some("0x0000000f"));
        let l = k()
            .parse("NVRM: nvAssertOkFailedNoLog: Assertion failed: GPU lost from the bus [NV_ERR_GPU_IS_LOST] (0x0000000F) returned from rmStatus @ kernel_ce_gv100.c:106")
            .unwrap();
        assert_eq!(l.assert_file.as_deref(), Some("kernel_ce_gv100.c"));
        assert_eq!(l.status_code.as_deref(), Some("0x0000000F"));
        assert!(k()
            .parse("NVRM: Xid (PCI:0000:01:00): 62, 323f0f30")
            .is_none());
        assert!(k()
            .parse("NVRM:     entry function  sequence data0")
            .is_none());
        assert!(k().parse("kernel: usb 1-1: new device").is_none());
    }

    #[test]
    fn kinds_by_structure() {
        assert_eq!(
            kind_of("NVRM: _kgspRpcRecvPoll: GSP RM heartbeat timed out").as_deref(),
            Some("gsp_timeout")
        );
        assert_eq!(kind_of("NVRM: GPU0 _kgspRpcGspEventPmuHalted: Received signal from GSP that PMU has halted.").as_deref(), Some("gsp_timeout"));
        assert_eq!(kind_of("NVRM: _issueRpcAndWait: rpcSendMessage failed with status 0x0000000f for fn 78 sequence 7869!").as_deref(), Some("fell_off_bus"));
        assert_eq!(kind_of("NVRM: krcWatchdog_IMPL: RC watchdog: GPU is probably locked!  Notify Timeout Seconds: 7").as_deref(), Some("rc_error"));
        assert_eq!(kind_of("NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with booting GSP").as_deref(), Some("gsp_timeout"));
        assert_eq!(kind_of("NVRM: GPU0 knvlinkCoreShutdownDeviceLinks_IMPL: Unable to turn off links for the GPU0").as_deref(), Some("nvlink_error"));
        assert_eq!(kind_of("NVRM: gpuHandleSanityCheckRegReadError_GM107: Possible bad register read: addr: 0x889d4,  regvalue: 0xbadf5040,  error code: NV_PPRIV_SYS_PRI_ERROR_CODE_FECS_PRI_CLIENT_ERR").as_deref(), Some("driver_error"));
        assert_eq!(
            kind_of("NVRM: _kgspLogXid119: Note: Please also check logs above.").as_deref(),
            Some("benign")
        );
        assert_eq!(
            kind_of("NVRM: GPU Board Serial Number: 1650124014249").as_deref(),
            Some("benign")
        );
        assert_eq!(kind_of("NVRM: Persistence mode is deprecated and will be removed in a future release. Please use nvidia-persistenced instead.").as_deref(), Some("benign"));
        assert_eq!(kind_of("NVRM: loading NVIDIA UNIX x86_64 Kernel Module  525.125.06  Tue May 30 05:11:37 UTC 2023").as_deref(), Some("benign"));
    }

    #[test]
    fn a_user_file_adds_and_overrides_nvrm_knowledge() {
        let user = r#"
[[nvrm.class]]
id = "site-bad-register-read"
words = ["Possible bad register read"]
kind = "pcie_aer"
severity = "error"

[[nvrm.class]]
id = "dump-banner"
benign = "site: separators are noise"
words = ["*****"]
"#;
        let k = crate::Knowledge::load(&[user.to_string()]).expect("user file loads");
        let n = k.recognizers.nvrm();
        let line = n
            .parse("NVRM: gpuHandleSanityCheckRegReadError_GM107: Possible bad register read: addr: 0x889d4")
            .unwrap();
        assert!(matches!(n.classify(&line), Outcome::Event(v) if v.kind == "pcie_aer"));
        let line = n
            .parse("NVRM: _kgspLogRpcTimeout: ********************************* GSP Timeout ****")
            .unwrap();
        assert!(matches!(
            n.classify(&line),
            Outcome::Benign("site: separators are noise")
        ));
        let bad =
            "[[nvrm.class]]\nid = \"x\"\nfamily = \"nope\"\nwords = [\"a\"]\nkind = \"xid\"\n";
        assert!(crate::Knowledge::load(&[bad.to_string()]).is_err());
    }

    #[test]
    fn every_status_code_is_in_the_table() {
        let s = k().statuses();
        assert_eq!(s.len(), 151);
        assert!(s.iter().all(|x| !x.meaning.is_empty()));
        assert!(k()
            .status("NV_ERR_GPU_IS_LOST")
            .is_some_and(|x| x.gone && x.code == 0x0f));
    }
}
