//! Event recognizers: data-driven (TOML, embedded at build time) recognizers that turn candidate
//! lines into events. Each recognizer declares literal anchors for the prefilter, then either a
//! regex with named captures or one of the built-in parsers for records that need more than a regex.
//!
//! One job per file: `defs.rs` the files as written, `load.rs` merging and checking them,
//! `prefilter.rs` the candidate search, `set.rs` running recognizers on a record (`record.rs`),
//! `selftest.rs` the samples' own test; each built-in parser (`xid`, `aer`, `nvrm`, …) in a file.

pub mod aer;
pub mod cper;
pub mod cuda;
mod defs;
pub mod details;
pub mod fabric;
pub mod host_guard;
mod intern;
pub mod job;
mod load;
mod needles;
pub mod ntstatus;
pub mod nvml;
pub mod nvrm;
mod prefilter;
mod probe;
pub mod reach;
mod record;
#[cfg(test)]
mod regex_gate;
mod regexes;
mod selftest;
mod set;
pub mod signals;
pub mod text;
pub mod verbs;
pub mod xid;

pub(crate) use defs::RecognizerFile;
pub use defs::{RecognizerDef, TraceDef, TraceLayer};
pub use intern::intern;
pub use load::RecognizerError;
pub(crate) use needles::Needles;
pub use prefilter::Prefilter;
pub use record::{Draft, Origin, Record, Told};
pub use set::{recognizer_bytes, RecognizerSet, MAX_MATCHES_PER_RECORD, RECORD_WINDOW};

/// The recognizers as shipped.
pub const BUILTIN_RECOGNIZERS: &str = include_str!("../../data/recognizers.toml");

/// The job-log vocabularies as shipped (NCCL, PyTorch c10d, Slurm, CUDA, containers, trainers):
/// same schema as [`BUILTIN_RECOGNIZERS`], read after it.
pub const BUILTIN_JOB_RECOGNIZERS: &str = include_str!("../../data/jobs.toml");

/// The trainers' progress formats and checkpoint wordings as shipped (`data/progress.toml`):
/// same schema as [`BUILTIN_RECOGNIZERS`], read after the job-log vocabularies.
pub const BUILTIN_PROGRESS_RECOGNIZERS: &str = include_str!("../../data/progress.toml");

/// The driver and the stack around it as shipped (Fabric Manager, driver installation, container
/// runtime, cloud boot scripts, Slurm GRES, InfiniBand bring-up): same schema, read after the
/// others.
pub const BUILTIN_STACK_RECOGNIZERS: &str = include_str!("../../data/stack.toml");

/// Every built-in recognizer file as written, in load order (a run reads the form the build
/// embedded, see `build.rs`).
pub const BUILTIN_FILES: [&str; 9] = [
    BUILTIN_RECOGNIZERS,
    BUILTIN_JOB_RECOGNIZERS,
    BUILTIN_PROGRESS_RECOGNIZERS,
    verbs::BUILTIN_VERBS,
    ntstatus::BUILTIN_NTSTATUS,
    cuda::BUILTIN_CUDA,
    nvml::BUILTIN_NVML,
    BUILTIN_STACK_RECOGNIZERS,
    BUILTIN_VERSIONS,
];

/// The version lines (driver, CUDA, NCCL, fabric manager, kernel) and the lines of the known
/// issues no other recognizer reads, as shipped (see `data/known-issues.toml`).
pub const BUILTIN_VERSIONS: &str = include_str!("../../data/versions.toml");
