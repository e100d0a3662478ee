//! Known issues as data (`data/known-issues.toml`, a user's through `--rules`): published driver,
//! firmware, library and toolkit bugs and version rules, each with the versions it affects, what
//! identifies it in logs, the version that fixes it or the workaround, and its public source.
//! [`facts`] reads the versions the inputs name, [`matcher`] names the entries an analysis
//! matches (on its incidents, or on their own: a version incompatibility is a finding).

pub mod explain;
pub mod facts;
pub mod matcher;
mod rules;
pub mod selftest;
pub mod version;

use crate::model::Layer;
use serde::Deserialize;
use std::collections::BTreeMap;
use version::Range;

pub use matcher::{affected, apply, Affected, KnownMatch, Status};

/// One published issue or version rule.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// Stable id (`driver-525-gsp-rpc-timeout`).
    pub id: String,
    /// driver | gsp_firmware | fabric_manager | cuda | nccl | container_toolkit | kernel.
    pub component: String,
    /// One line: what goes wrong.
    pub summary: String,
    /// What happens and why, in our words.
    pub description: String,
    /// The versions affected, as a range of the version named by `version_of`.
    pub affected: String,
    /// Which version the range is about: `driver`, `nccl`, `fabric_manager`, `cuda_runtime`,
    /// `container_toolkit`, `kernel` (default: the component's own).
    #[serde(default)]
    pub version_of: Option<String>,
    /// The first version with the fix.
    #[serde(default)]
    pub fixed_in: Option<String>,
    /// What to do when upgrading is not possible (or when nothing fixes it).
    #[serde(default)]
    pub workaround: Option<String>,
    /// The public source: release-notes page and section, or issue URL.
    pub source: String,
    /// The layer a match points at (default: driver_stack).
    #[serde(default)]
    pub layer: Option<Layer>,
    /// Event kinds whose lines identify it (empty: a version-only advisory, never matched on a
    /// log line; the fleet summary flags the nodes it affects).
    #[serde(default)]
    pub kinds: Vec<String>,
    /// Codes (Xid, SXid, CUDA error) among those kinds.
    #[serde(default)]
    pub codes: Vec<i64>,
    /// Regex the event's message must match.
    #[serde(default)]
    pub pattern: Option<String>,
    /// Regex on the GPU product names the inputs give (nvidia-smi); when set, a GPU of another
    /// product keeps the entry from matching.
    #[serde(default)]
    pub products: Option<String>,
    /// The identifying line only exists in affected versions, or names the rule itself (an API
    /// mismatch): a match holds when the inputs give no version.
    #[serde(default)]
    pub unversioned: bool,
    /// The line's own version captures that must differ for the rule to apply (`client_version`
    /// and `module_version` of an API mismatch).
    #[serde(default)]
    pub differ: Vec<String>,
    /// A version rule checked on the versions alone (no line needed): `same_version` (the two
    /// versions named by `differ` must be equal) or `cuda_min_driver` (the CUDA runtime needs
    /// the driver of the `[[cuda_driver]]` table).
    #[serde(default)]
    pub rule: Option<String>,
    /// Lines (with their versions) that must match.
    #[serde(default)]
    pub samples: Vec<Sample>,
    /// The same symptom that must not match (on a fixed version, say).
    #[serde(default)]
    pub near_misses: Vec<Sample>,
}

/// A self-test case of an entry: a log line as the emitter prints it and the versions the
/// inputs would give.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sample {
    /// The line.
    pub line: String,
    /// Versions by name (`driver = "525.85.12"`).
    #[serde(default)]
    pub versions: BTreeMap<String, String>,
    /// GPU product name the inputs would give.
    #[serde(default)]
    pub product: Option<String>,
}

/// Wording that dates a component: a message format only some versions print.
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Hint {
    /// Stable id.
    pub id: String,
    /// Which version it dates (`driver`).
    pub version_of: String,
    /// Regex on an event's message.
    pub pattern: String,
    /// The versions that print it.
    pub versions: String,
    /// Where the wording was read (source file at tags).
    pub source: String,
    /// Lines printed in that wording.
    #[serde(default)]
    pub samples: Vec<String>,
    /// Lines of other versions.
    #[serde(default)]
    pub rejects: Vec<String>,
}

/// The minimum driver of one CUDA version (CUDA release notes, table 3).
#[derive(Clone, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct CudaDriver {
    /// CUDA version (`12.4`).
    pub cuda: String,
    /// Minimum Linux driver for the full feature set (toolkit driver).
    pub min_driver: String,
    /// Minimum Linux driver under minor-version compatibility (same CUDA major).
    pub minor_compat_driver: String,
    /// Source page.
    pub source: String,
}

/// The file as written.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct KnownFile {
    /// Issues and rules.
    #[serde(default)]
    pub known_issue: Vec<Entry>,
    /// Dating wordings.
    #[serde(default)]
    pub version_hint: Vec<Hint>,
    /// CUDA minimum drivers.
    #[serde(default)]
    pub cuda_driver: Vec<CudaDriver>,
}

/// An entry compiled.
#[derive(Clone, Debug)]
pub struct Known {
    /// As written.
    pub entry: Entry,
    /// `affected`, parsed.
    pub range: Range,
    /// `pattern`, compiled (ASCII classes, see [`compile_pattern`]).
    pub pattern: Option<regex::bytes::Regex>,
    /// `products`, compiled.
    pub products: Option<regex::bytes::Regex>,
}

impl Known {
    /// Which version the range is about.
    pub fn version_of(&self) -> &str {
        self.entry
            .version_of
            .as_deref()
            .unwrap_or(match self.entry.component.as_str() {
                "nccl" => "nccl",
                "fabric_manager" => "fabric_manager",
                "cuda" => "cuda_runtime",
                "container_toolkit" => "container_toolkit",
                "kernel" => "kernel",
                _ => "driver",
            })
    }

    /// The layer a match points at.
    pub fn layer(&self) -> Layer {
        self.entry.layer.unwrap_or(Layer::DriverStack)
    }
}

/// A hint compiled.
#[derive(Clone, Debug)]
pub struct CompiledHint {
    /// As written.
    pub hint: Hint,
    /// `pattern`, compiled (ASCII classes, see [`compile_pattern`]).
    pub pattern: regex::bytes::Regex,
    /// `versions`, parsed.
    pub range: Range,
}

/// The known issues an analysis runs with.
#[derive(Clone, Debug, Default)]
pub struct KnownSet {
    /// Entries in file order (a user's entry with a built-in id replaces it).
    pub entries: Vec<Known>,
    /// Dating wordings.
    pub hints: Vec<CompiledHint>,
    /// CUDA minimum drivers, by CUDA version.
    pub cuda: Vec<CudaDriver>,
}

/// The component names an entry may have.
pub const COMPONENTS: [&str; 7] = [
    "driver",
    "gsp_firmware",
    "fabric_manager",
    "cuda",
    "nccl",
    "container_toolkit",
    "kernel",
];

/// `data/known-issues.toml` as written (for `explain` and the self-test).
pub const BUILTIN_KNOWN: &str = include_str!("../../data/known-issues.toml");

impl KnownSet {
    /// The built-in file plus user files' `[[known_issue]]`, `[[version_hint]]` and
    /// `[[cuda_driver]]` tables (TOML texts).
    pub fn load(user: &[String]) -> anyhow::Result<KnownSet> {
        let builtin: KnownFile = crate::embedded::load(crate::embedded::KNOWN, "known issues");
        let mut set = KnownSet::default();
        set.add(builtin)?;
        for text in user {
            set.add(toml::from_str(text)?)?;
        }
        Ok(set)
    }

    /// Adds a file's tables (an entry or hint with an id already present replaces it).
    pub fn add(&mut self, f: KnownFile) -> anyhow::Result<()> {
        for e in f.known_issue {
            let k = compile(e)?;
            match self.entries.iter_mut().find(|x| x.entry.id == k.entry.id) {
                Some(x) => *x = k,
                None => self.entries.push(k),
            }
        }
        for h in f.version_hint {
            let c = CompiledHint {
                pattern: compile_pattern(&h.pattern)
                    .map_err(|e| anyhow::anyhow!("version hint {}: {e}", h.id))?,
                range: Range::parse(&h.versions)
                    .map_err(|e| anyhow::anyhow!("version hint {}: {e}", h.id))?,
                hint: h,
            };
            match self.hints.iter_mut().find(|x| x.hint.id == c.hint.id) {
                Some(x) => *x = c,
                None => self.hints.push(c),
            }
        }
        for c in f.cuda_driver {
            for v in [&c.cuda, &c.min_driver, &c.minor_compat_driver] {
                version::Version::parse(v).ok_or_else(|| {
                    anyhow::anyhow!("cuda_driver {}: `{v}` is no version", c.cuda)
                })?;
            }
            self.cuda.retain(|x| x.cuda != c.cuda);
            self.cuda.push(c);
        }
        Ok(())
    }
}

/// A pattern of the knowledge, compiled with ASCII classes (`\w`, `\b`, `\s`, case): the
/// lines it reads are ASCII where it matters, and the Unicode classes cost most of the start-up
/// of a small run.
pub fn compile_pattern(p: &str) -> Result<regex::bytes::Regex, regex::Error> {
    regex::bytes::RegexBuilder::new(p).unicode(false).build()
}

/// Checks and compiles one entry.
fn compile(e: Entry) -> anyhow::Result<Known> {
    let id = e.id.clone();
    let err = |m: String| anyhow::anyhow!("known issue {id}: {m}");
    if !COMPONENTS.contains(&e.component.as_str()) {
        return Err(err(format!(
            "component `{}` is not one of {}",
            e.component,
            COMPONENTS.join(", ")
        )));
    }
    let range = Range::parse(&e.affected).map_err(err)?;
    let re = |p: &Option<String>| {
        p.as_deref()
            .map(compile_pattern)
            .transpose()
            .map_err(|x| err(x.to_string()))
    };
    Ok(Known {
        pattern: re(&e.pattern)?,
        products: re(&e.products)?,
        range,
        entry: e,
    })
}
