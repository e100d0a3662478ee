//! The tables of data/cuda.toml as types, and their lookups: CUDA runtime/driver errors by name,
//! text and number, cuBLAS/cuDNN statuses by name, NCCL results by name, text and value, the
//! system errors NCCL reports by path and errno, and the libraries a crash can happen in.

use super::held::{Held, Literals};
use crate::model::Layer;
use serde::Deserialize;

/// One entry of a table of data/cuda.toml: what identifies the code (which fields, by table:
/// `[[cuda_error]]` number, runtime and driver names, texts; `[[cuda_status]]` name and library;
/// `[[nccl_result]]` name, number, texts; `[[nccl_system]]` path, errno, strerror;
/// `[[crash_library]]` prefix) and its reading (checked when the tables are loaded, see
/// [`CudaTables::check`]).
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Entry {
    /// The number: a CUDA error's (runtime and driver share them since CUDA 10.1), a status's
    /// enum value, an NCCL result's value (`-> 5` in NCCL's return trace).
    #[serde(default)]
    pub number: Option<i64>,
    /// `cudaErrorLaunchFailure`.
    #[serde(default)]
    pub runtime: Option<String>,
    /// `CUDA_ERROR_LAUNCH_FAILED`.
    #[serde(default)]
    pub driver: Option<String>,
    /// A status's or result's name (`CUBLAS_STATUS_EXECUTION_FAILED`, `ncclInvalidUsage`).
    #[serde(default)]
    pub name: Option<String>,
    /// The library of a status (`cublas`, `cudnn`).
    #[serde(default)]
    pub library: Option<String>,
    /// The error texts (`cudaGetErrorString`, `ncclGetErrorString`), current wording first.
    #[serde(default)]
    pub texts: Vec<String>,
    /// A system error's literal: the path (`/dev/shm/`) or the call.
    #[serde(default)]
    pub path: Option<String>,
    /// A system error's errno (`28`), if the reading needs one.
    #[serde(default)]
    pub errno: Option<i64>,
    /// `strerror` of the errno (`No space left on device`): also counts as the errno.
    #[serde(default)]
    pub strerror: Option<String>,
    /// The start of a crash library's file name (`libcuda.so`, `libnvidia-`).
    #[serde(default)]
    pub prefix: Option<String>,
    /// The layer the code points at on its own (`unknown`: the code alone cannot say).
    #[serde(default)]
    pub layer: Option<Layer>,
    /// The other layers it may point at, likeliest first (the verdict's alternatives).
    #[serde(default)]
    pub candidates: Vec<Layer>,
    /// What it means, for the evidence and the summary.
    #[serde(default)]
    pub meaning: String,
    /// The event kind when not the emitter's (`cuda_oom` for the out-of-memory codes).
    #[serde(default)]
    pub kind: Option<String>,
    /// Kinds raised beside it (`ecc_dbe` beside an uncorrectable-ECC CUDA error).
    #[serde(default)]
    pub also: Vec<String>,
    /// A consequence of an earlier failure (the process tearing CUDA down at exit).
    #[serde(default)]
    pub follow_on: bool,
    /// Not a failure (the reason): no event.
    #[serde(default)]
    pub benign: Option<String>,
}

/// Every table of data/cuda.toml (and of a user's file; a later entry wins).
#[derive(Clone, Debug, Default)]
pub struct CudaTables {
    /// CUDA runtime and driver errors (`[[cuda_error]]`).
    pub errors: Vec<Entry>,
    /// cuBLAS and cuDNN statuses (`[[cuda_status]]`).
    pub statuses: Vec<Entry>,
    /// NCCL results (`[[nccl_result]]`).
    pub nccl: Vec<Entry>,
    /// System errors NCCL reports (`[[nccl_system]]`).
    pub system: Vec<Entry>,
    /// Libraries a crash can happen in (`[[crash_library]]`).
    pub crash: Vec<Entry>,
    /// The searcher of the NCCL tables' literals, built on first use (see [`Literals`]).
    pub literals: std::sync::OnceLock<Literals>,
}

/// A code found in a table: the name to show and the entry.
#[derive(Clone, Copy, Debug)]
pub struct Hit<'t> {
    /// The runtime name, else the driver name, else the status's or result's name.
    pub name: &'t str,
    /// The entry.
    pub entry: &'t Entry,
}

impl Entry {
    fn hit(&self) -> Hit<'_> {
        let name = self.runtime.as_deref().or(self.driver.as_deref());
        Hit {
            name: name.or(self.name.as_deref()).unwrap_or(""),
            entry: self,
        }
    }

    /// The current text.
    pub fn text(&self) -> Option<&str> {
        self.texts.first().map(String::as_str)
    }
}

/// Whether `t` begins with `x`, case ignored.
fn begins_with(t: &str, x: &str) -> bool {
    t.len() >= x.len() && t.is_char_boundary(x.len()) && t[..x.len()].eq_ignore_ascii_case(x)
}

/// Whether an entry has its table's identifying fields.
type Identified = fn(&Entry) -> bool;

impl CudaTables {
    /// A CUDA error or a library status by its name (`cudaErrorAssert`, `CUDA_ERROR_ASSERT`,
    /// `CUBLAS_STATUS_ALLOC_FAILED`).
    pub fn by_name(&self, name: &str) -> Option<Hit<'_>> {
        let named = |e: &&Entry| {
            e.runtime.as_deref() == Some(name)
                || e.driver.as_deref() == Some(name)
                || e.name.as_deref() == Some(name)
        };
        let e = self.errors.iter().rev().find(named);
        e.or_else(|| self.statuses.iter().rev().find(named))
            .map(Entry::hit)
    }

    /// The CUDA error whose text `text` begins with (the longest such text: `unspecified launch
    /// failure in prior launch` before `unspecified launch failure`); case is ignored, as
    /// wrappers capitalize.
    pub fn by_text(&self, text: &str) -> Option<Hit<'_>> {
        let t = text.trim_start();
        let mut best: Option<(usize, &Entry)> = None;
        for e in self.errors.iter().rev() {
            for x in e.texts.iter().filter(|x| !x.is_empty()) {
                if begins_with(t, x) && best.is_none_or(|(n, _)| x.len() > n) {
                    best = Some((x.len(), e));
                }
            }
        }
        best.map(|(_, e)| e.hit())
    }

    /// The CUDA error of a number (as current runtimes and the driver API number them).
    pub fn by_number(&self, number: i64) -> Option<Hit<'_>> {
        let e = self.errors.iter().rev().find(|e| e.number == Some(number));
        e.map(Entry::hit)
    }

    /// The NCCL result of a name (`ncclInvalidUsage`).
    pub fn nccl_by_name(&self, name: &str) -> Option<&Entry> {
        self.nccl
            .iter()
            .rev()
            .find(|r| r.name.as_deref() == Some(name))
    }

    /// The NCCL result of a value (`-> 5`).
    pub fn nccl_by_value(&self, value: i64) -> Option<&Entry> {
        self.nccl.iter().rev().find(|r| r.number == Some(value))
    }

    /// The NCCL result whose text `text` holds (`unhandled cuda error`); a short text
    /// (`timeout`) only when it is the whole of what `text` reports.
    pub fn nccl_by_text(&self, text: &str) -> Option<&Entry> {
        self.nccl_by_text_held(text, &self.held(text))
    }

    /// [`CudaTables::nccl_by_text`] with the literals `text` holds found already.
    pub(super) fn nccl_by_text_held(&self, text: &str, held: &Held) -> Option<&Entry> {
        let reported = text.trim().trim_matches('\'');
        let lit = self.literals();
        let i = (0..self.nccl.len()).rev().find(|&i| {
            lit.text_in(held, i)
                || self.nccl[i]
                    .texts
                    .iter()
                    .any(|x| !x.is_empty() && reported == x)
        });
        i.map(|i| &self.nccl[i])
    }

    /// The NCCL result whose name `held`'s text holds (the last such entry).
    pub(super) fn nccl_named(&self, held: &Held) -> Option<&Entry> {
        let lit = self.literals();
        let i = (0..self.nccl.len()).rev().find(|&i| lit.name_in(held, i));
        i.map(|i| &self.nccl[i])
    }

    /// The searcher of the NCCL tables' literals.
    fn literals(&self) -> &Literals {
        self.literals.get_or_init(|| Literals::new(self))
    }

    /// The literals of the NCCL tables that `text` holds.
    pub(super) fn held(&self, text: &str) -> Held {
        self.literals().held(text)
    }

    /// The system error whose path `text` names, with its errno (or `strerror` text) when the
    /// entry needs one; an entry with an errno before one without.
    pub fn system_error(&self, text: &str) -> Option<&Entry> {
        self.system_error_held(text, &self.held(text))
    }

    /// [`CudaTables::system_error`] with the literals `text` holds found already.
    pub(super) fn system_error_held(&self, text: &str, held: &Held) -> Option<&Entry> {
        let errno_ok = |s: &Entry| match s.errno {
            None => true,
            Some(n) => {
                text.contains(&format!("({n})"))
                    || text.contains(&format!("errno {n}"))
                    || s.strerror.as_deref().is_some_and(|x| text.contains(x))
            }
        };
        let lit = self.literals();
        let fits = |&i: &usize| lit.path_in(held, i) && errno_ok(&self.system[i]);
        let rev = || (0..self.system.len()).rev();
        let with = |i: &usize| self.system[*i].errno.is_some();
        let i = rev()
            .filter(with)
            .find(fits)
            .or_else(|| rev().filter(|i| !with(i)).find(fits));
        i.map(|i| &self.system[i])
    }

    /// The library a crash happened in, by the file name printed (`libnccl.so.2`).
    pub fn crash_library(&self, library: &str) -> Option<&Entry> {
        let file = library.rsplit('/').next().unwrap_or(library);
        self.crash
            .iter()
            .rev()
            .find(|c| c.prefix.as_deref().is_some_and(|p| file.starts_with(p)))
    }

    /// Appends another file's tables (its entries win over the earlier ones).
    pub fn extend(&mut self, other: &CudaTables) {
        self.errors.extend(other.errors.iter().cloned());
        self.statuses.extend(other.statuses.iter().cloned());
        self.nccl.extend(other.nccl.iter().cloned());
        self.system.extend(other.system.iter().cloned());
        self.crash.extend(other.crash.iter().cloned());
        self.literals = std::sync::OnceLock::new();
    }

    /// What is wrong with the entries, if anything: each table's identifying fields, a reading
    /// (a layer, or `benign`) and kinds that are names (checked against the catalog elsewhere).
    pub fn check(&self) -> Result<(), String> {
        let tables: [(&str, &[Entry], Identified); 5] = [
            ("cuda_error", &self.errors, |e| e.number.is_some()),
            ("cuda_status", &self.statuses, |e| {
                e.name.is_some() && e.library.is_some()
            }),
            ("nccl_result", &self.nccl, |e| {
                e.name.is_some() && e.number.is_some()
            }),
            ("nccl_system", &self.system, |e| e.path.is_some()),
            ("crash_library", &self.crash, |e| e.prefix.is_some()),
        ];
        for (table, entries, identified) in tables {
            for (i, e) in entries.iter().enumerate() {
                if !identified(e) {
                    return Err(format!(
                        "{table} entry {i}: its identifying fields are missing"
                    ));
                }
                if e.layer.is_none() == e.benign.is_none() {
                    return Err(format!(
                        "{table} entry {i}: needs a layer or benign (one of them)"
                    ));
                }
            }
        }
        Ok(())
    }
}
