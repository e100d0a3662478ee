//! The recognizer files as written: the schema of `data/recognizers.toml`, `data/jobs.toml`,
//! `data/verbs.toml`, `data/ntstatus.toml` and of the recognizer part of a user's rules file.

use super::{cuda, ntstatus, nvml, nvrm, signals, verbs};
use crate::model::{Layer, Severity};
use serde::Deserialize;
use std::collections::BTreeMap;

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
    /// Built-in parser instead of a regex: `xid`, `sxid`, `aer`, `torchrun_failure`, `first_failed_process` (mpirun/Horovod failure blocks), `ib_verbs`
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

/// The `[prefilter]` table: literals searched in place of the anchors that contain one.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct PrefilterDef {
    #[serde(default)]
    pub(crate) literals: Vec<String>,
    /// Substrings of the literals searched in their place, one packed searcher per list (see
    /// `events/prefilter/gates.rs`).
    #[serde(default)]
    pub(crate) gates: Vec<Vec<String>>,
}

/// One recognizer file (built-in or the user's) as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub(crate) struct RecognizerFile {
    #[serde(default)]
    pub(crate) prefilter: Option<PrefilterDef>,
    #[serde(default)]
    pub(crate) xid_derived: BTreeMap<String, Vec<String>>,
    #[serde(default)]
    pub(crate) recognizer: Vec<RecognizerDef>,
    #[serde(default)]
    pub(crate) trace: Option<TraceDef>,
    #[serde(default)]
    pub(crate) ib_verbs: Vec<verbs::VerbsEntry>,
    #[serde(default)]
    pub(crate) ntstatus: Vec<ntstatus::NtStatus>,
    /// CUDA errors by number (data/cuda.toml).
    #[serde(default)]
    pub(crate) cuda_error: Vec<cuda::Entry>,
    /// cuBLAS and cuDNN statuses.
    #[serde(default)]
    pub(crate) cuda_status: Vec<cuda::Entry>,
    /// NCCL results.
    #[serde(default)]
    pub(crate) nccl_result: Vec<cuda::Entry>,
    /// System errors NCCL reports, by path and errno.
    #[serde(default)]
    pub(crate) nccl_system: Vec<cuda::Entry>,
    /// Libraries a crash can happen in.
    #[serde(default)]
    pub(crate) crash_library: Vec<cuda::Entry>,
    #[serde(default)]
    pub(crate) nvml: Vec<nvml::NvmlReturn>,
    /// POSIX signals by number, name and `strsignal` text (see [`signals`]).
    #[serde(default)]
    pub(crate) signal: Vec<signals::Signal>,
    /// NVRM knowledge laid over `data/nvrm.toml` (see [`nvrm::NvrmFile::overlay`]).
    #[serde(default)]
    pub(crate) nvrm: Option<nvrm::NvrmFile>,
    /// Values that are details, never keys (see [`super::details`]).
    #[serde(default)]
    pub(crate) memo_detail: Vec<super::details::DetailDef>,
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

impl RecognizerFile {
    /// The file's CUDA, NCCL and crash tables, gathered.
    pub(crate) fn cuda_tables(&self) -> cuda::CudaTables {
        cuda::CudaTables {
            errors: self.cuda_error.clone(),
            statuses: self.cuda_status.clone(),
            nccl: self.nccl_result.clone(),
            system: self.nccl_system.clone(),
            crash: self.crash_library.clone(),
            literals: Default::default(),
        }
    }
}
