//! NVRM lines read by structure: every `NVRM:` line of the NVIDIA kernel driver is cut into its
//! parts (GPU, function, message, NV_STATUS), put in a family (GSP, robust channels, init, GPU
//! lost, ECC, NVLink, firmware, platform...) and classified by the data of `data/nvrm.toml`. A line
//! no class or family explains, but that reports an error, raises the generic `driver_error`, so
//! that a complaining driver never yields the verdict `none`. Initialization failures take their
//! reason from the lines around them (same GPU, same boot).
//!
//! The data's types are in `defs`, the word automata in `lexicon`, the cutting of a line into
//! its parts in `line`, the compiling of the data in `compile`, what a line is in `classify`, and
//! its drafts in `drafts`; this file holds the compiled knowledge and its lookups.

use crate::events::Needles;
use std::collections::{BTreeMap, HashMap};

mod classify;
mod compile;
mod defs;
mod drafts;
mod lexicon;
mod line;

pub use classify::{Outcome, Verdict};
use compile::{Class, Family};
pub use defs::{ClassDef, FamilyDef, NvrmFile, ReasonDef, StageDef, StatusDef};
pub use drafts::nvrm_drafts;
use lexicon::Lexicon;
pub use line::NvrmLine;

/// The NVRM knowledge as shipped.
pub const BUILTIN_NVRM: &str = include_str!("../../../data/nvrm.toml");

/// The kind raised by an NVRM error line that no class or family explains.
pub const GENERIC_KIND: &str = "driver_error";

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
