//! Bundle discovery: how `faultline scan` groups the files under its paths into bundles, one
//! per node capture.
//!
//! The rules (the README's "Fleet scans" section says the same):
//!
//! 1. A file given on the command line is one bundle.
//! 2. In a folder given on the command line (a *scan root*), walked in sorted order, hidden
//!    names skipped, symbolic-link loops not followed:
//!    - a *bundle file* is one bundle: a bug report or a tar archive, told by content (the
//!      first bytes after gzip/zstd decoding), not by name;
//!    - a *host folder* is a folder below the root that directly holds at least one other
//!      file (a loose log); that folder and everything under it, bundle files included, is one
//!      bundle, and its name is the host of the files that do not name one. When the folder's
//!      name does not look like a host (`var`, `log`, `logs`, a date) and its parent holds
//!      nothing else, the parent is the host folder instead, up the chain
//!      (`node-07/var/log/kern.log` is one bundle, `node-07`);
//!    - a folder that holds only folders and bundle files is walked further;
//!    - a loose file directly in the root is a bundle of its own.
//!
//! Each bundle has a *key*, its path relative to the scan root with `/` separators (the file
//! name for a file given on the command line), which [`super::shard`] hashes.

use crate::formats::bug_report;
use crate::input::container::{sniff, Magic};
use crate::words::{counted, counted_as};
use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// What a bundle is made of.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum BundleKind {
    /// A host folder: every file under it.
    Folder,
    /// An `nvidia-bug-report.log`, plain or compressed.
    BugReport,
    /// A tar archive, plain or compressed.
    Archive,
    /// One loose log file.
    File,
    /// A path that could not be read or listed.
    Unreadable,
}

impl BundleKind {
    /// The spelling used in the JSON lines and in `--list`.
    pub fn as_str(self) -> &'static str {
        match self {
            BundleKind::Folder => "folder",
            BundleKind::BugReport => "bug_report",
            BundleKind::Archive => "archive",
            BundleKind::File => "file",
            BundleKind::Unreadable => "unreadable",
        }
    }
}

/// One bundle: the unit `scan` analyzes, reports on and shards.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Bundle {
    /// Its path as shown: the scan root joined with the key.
    pub name: String,
    /// Its path relative to the scan root (`/` separators): the shard key.
    pub key: String,
    /// What it is.
    pub kind: BundleKind,
    /// The host its path names (a host folder's name, an archive's stem), when it looks like one.
    pub host_hint: Option<String>,
    /// Its files on disk, in walk order.
    pub files: Vec<PathBuf>,
    /// Their total size on disk.
    pub disk_bytes: u64,
    /// Why the path could not be read (for [`BundleKind::Unreadable`]).
    pub error: Option<String>,
}

impl Bundle {
    /// The paths to hand to [`crate::analyze`]: the files of a host folder carry `@HOST` so
    /// that lines without a host name get the folder's.
    pub fn analyze_paths(&self) -> Vec<String> {
        self.files
            .iter()
            .map(|f| {
                let p = f.to_string_lossy().into_owned();
                match (&self.kind, &self.host_hint) {
                    (BundleKind::Folder, Some(h)) => format!("{p}@{h}"),
                    _ => p,
                }
            })
            .collect()
    }
}

/// The result of discovery: bundles in deterministic order, and notes on what was skipped.
#[derive(Clone, Debug, Default)]
pub struct Discovery {
    /// Bundles, in argument order then walk order; no name twice.
    pub bundles: Vec<Bundle>,
    /// Things skipped on the way (FIFOs, sockets, symbolic-link loops).
    pub notes: Vec<String>,
}

impl Discovery {
    /// Drops the files that match one of `patterns` (`--exclude`, see
    /// [`crate::input::exclude::excluded`]) from every bundle, and the bundles left without a
    /// file; says how many in a note. Shard keys are the bundles' own, so the shard a kept
    /// bundle falls in does not change.
    pub fn exclude(&mut self, patterns: &[String]) {
        if patterns.is_empty() {
            return;
        }
        let (mut files, mut bundles) = (0usize, 0usize);
        self.bundles.retain_mut(|b| {
            if b.error.is_some() {
                return true;
            }
            let before = b.files.len();
            b.files
                .retain(|f| !crate::input::exclude::excluded(&f.to_string_lossy(), patterns));
            files += before - b.files.len();
            if before != b.files.len() {
                b.disk_bytes = b
                    .files
                    .iter()
                    .filter_map(|f| std::fs::metadata(f).ok())
                    .map(|m| m.len())
                    .sum();
            }
            let keep = !b.files.is_empty();
            bundles += usize::from(!keep);
            keep
        });
        if files > 0 {
            self.notes.push(format!(
                "--exclude skipped {}; {} no other file and {} not scanned",
                counted(files as u64, "file"),
                counted_as(bundles as u64, "bundle had", "bundles had"),
                if bundles == 1 { "is" } else { "are" }
            ));
        }
    }
}

/// True when `name` looks like a host name: letters, digits, `-`, `.`, `_`, at least one letter,
/// and not one of the usual log folder names.
pub fn host_like(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= 253
        && name.bytes().any(|c| c.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_')
        && !matches!(
            name,
            "var" | "log" | "logs" | "tmp" | "etc" | "proc" | "sys" | "run"
        )
}

/// The host an archive's file name implies: its name without the archive extensions.
pub fn archive_stem(name: &str) -> Option<String> {
    const EXTS: [&str; 7] = [
        ".tar.zstd",
        ".tar.zst",
        ".tar.gz",
        ".tzst",
        ".tgz",
        ".tar",
        ".zst",
    ];
    let stem = EXTS
        .iter()
        .find_map(|e| name.strip_suffix(e))
        .unwrap_or(name);
    host_like(stem).then(|| stem.to_string())
}

/// Reads the first decoded bytes of a file (through one gzip or zstd layer).
fn decoded_head(path: &Path) -> Vec<u8> {
    let mut raw = Vec::with_capacity(8192);
    let Ok(f) = File::open(path) else {
        return raw;
    };
    if f.take(8192).read_to_end(&mut raw).is_err() {
        return Vec::new();
    }
    let mut out = Vec::with_capacity(8192);
    let ok = match sniff(&raw) {
        Magic::Gzip => File::open(path).ok().is_some_and(|f| {
            flate2::read::MultiGzDecoder::new(f)
                .take(8192)
                .read_to_end(&mut out)
                .is_ok()
                || !out.is_empty()
        }),
        Magic::Zstd => File::open(path).ok().is_some_and(|f| {
            zstd::stream::read::Decoder::new(f)
                .is_ok_and(|d| d.take(8192).read_to_end(&mut out).is_ok() || !out.is_empty())
        }),
        _ => return raw,
    };
    if ok {
        out
    } else {
        Vec::new()
    }
}

/// True when the name ends like a tar archive.
fn archive_name(name: &str) -> bool {
    [".tar", ".tar.gz", ".tgz", ".tar.zst", ".tar.zstd", ".tzst"]
        .iter()
        .any(|e| name.ends_with(e))
}

/// Tells a bundle file (bug report or tar archive) from a loose log: by content (the first
/// bytes after one gzip/zstd layer); when the content says nothing (a corrupt or empty file),
/// by name (`nvidia-bug-report*`, `.tar`, `.tgz`, `.tar.gz`, `.tar.zst`, `.tzst`), so that a
/// broken bug report stays a bundle of its own and does not turn its folder into a host folder.
pub fn classify_file(path: &Path) -> BundleKind {
    let head = decoded_head(path);
    let name = file_name(path);
    if sniff(&head) == Magic::Tar {
        BundleKind::Archive
    } else if bug_report::looks_like(&head)
        || (name.starts_with("nvidia-bug-report") && !looks_text(&head))
    {
        BundleKind::BugReport
    } else if archive_name(&name) && !looks_text(&head) {
        BundleKind::Archive
    } else {
        BundleKind::File
    }
}

/// True when the head reads as text lines (so the content, not the name, decides).
fn looks_text(head: &[u8]) -> bool {
    let utf8 = match std::str::from_utf8(head) {
        Ok(_) => true,
        // a character cut at the end of the head is still text
        Err(e) => e.error_len().is_none(),
    };
    !head.is_empty() && utf8 && !head.contains(&0)
}

fn rel_key(root: &Path, path: &Path) -> String {
    let rel = path.strip_prefix(root).unwrap_or(path);
    let parts: Vec<String> = rel
        .components()
        .map(|c| c.as_os_str().to_string_lossy().into_owned())
        .collect();
    parts.join("/")
}

fn file_name(p: &Path) -> String {
    p.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| p.to_string_lossy().into_owned())
}

fn size_of(p: &Path) -> u64 {
    std::fs::metadata(p).map_or(0, |m| m.len())
}

fn unreadable(name: String, key: String, error: String) -> Bundle {
    Bundle {
        name,
        key,
        kind: BundleKind::Unreadable,
        host_hint: None,
        files: Vec::new(),
        disk_bytes: 0,
        error: Some(error),
    }
}

fn single(name: String, key: String, path: PathBuf, kind: BundleKind) -> Bundle {
    let host_hint = match kind {
        BundleKind::Archive => archive_stem(&file_name(&path)),
        _ => None,
    };
    Bundle {
        name,
        key,
        kind,
        host_hint,
        disk_bytes: size_of(&path),
        files: vec![path],
        error: None,
    }
}

/// The non-hidden entries of a folder, sorted, split into files and folders.
struct Listing {
    files: Vec<PathBuf>,
    dirs: Vec<PathBuf>,
}

fn list(root: &Path, dir: &Path, notes: &mut Vec<String>) -> std::io::Result<Listing> {
    let mut names: Vec<PathBuf> = std::fs::read_dir(dir)?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| !file_name(p).starts_with('.'))
        .filter(|p| match crate::input::outside_link(root, p) {
            Some(w) => {
                notes.push(w);
                false
            }
            None => true,
        })
        .collect();
    names.sort();
    let mut l = Listing {
        files: Vec::new(),
        dirs: Vec::new(),
    };
    for p in names {
        match std::fs::metadata(&p) {
            Ok(m) if m.is_dir() => l.dirs.push(p),
            Ok(m) if m.is_file() => l.files.push(p),
            Ok(_) => notes.push(format!(
                "{}: not a regular file (FIFO, socket or device), skipped",
                p.display()
            )),
            // a dangling link or a file we may not stat: analysis reports it
            Err(_) => l.files.push(p),
        }
    }
    Ok(l)
}

/// Walk state shared by one scan root.
struct Walker<'a> {
    root: &'a Path,
    visited: BTreeSet<PathBuf>,
    out: &'a mut Discovery,
}

impl Walker<'_> {
    fn enter(&mut self, dir: &Path) -> bool {
        match dir.canonicalize() {
            Ok(c) if self.visited.insert(c.clone()) => true,
            Ok(_) => {
                self.out.notes.push(format!(
                    "{}: symbolic-link loop, not followed",
                    dir.display()
                ));
                false
            }
            Err(e) => {
                let b = unreadable(
                    dir.display().to_string(),
                    rel_key(self.root, dir),
                    format!("cannot resolve: {e}"),
                );
                self.out.bundles.push(b);
                false
            }
        }
    }

    /// `top` is the folder a host folder found at `dir` is named after: `dir` itself, or the
    /// highest ancestor reached through folders that hold nothing but the next one and whose
    /// names do not look like hosts (`node-07/var/log/kern.log` → `node-07`).
    fn walk(&mut self, dir: &Path, top: &Path, depth: u32) {
        if depth > 32 {
            self.out.notes.push(format!(
                "{}: folder nesting deeper than 32, not descended",
                dir.display()
            ));
            return;
        }
        let listing = match list(self.root, dir, &mut self.out.notes) {
            Ok(l) => l,
            Err(e) => {
                let b = unreadable(
                    dir.display().to_string(),
                    rel_key(self.root, dir),
                    format!("cannot list folder: {e}"),
                );
                self.out.bundles.push(b);
                return;
            }
        };
        let at_root = depth == 0;
        let mut kinds = Vec::with_capacity(listing.files.len());
        for f in &listing.files {
            let kind = classify_file(f);
            if kind == BundleKind::File && !at_root {
                self.host_folder(top, dir, depth);
                return;
            }
            kinds.push(kind);
        }
        let chain = !at_root && kinds.is_empty() && listing.dirs.len() == 1;
        for (f, kind) in listing.files.into_iter().zip(kinds) {
            let b = single(f.display().to_string(), rel_key(self.root, &f), f, kind);
            self.out.bundles.push(b);
        }
        for d in listing.dirs {
            if self.enter(&d) {
                let climb = chain && !host_like(&file_name(&d));
                let t = if climb { top.to_path_buf() } else { d.clone() };
                self.walk(&d, &t, depth + 1);
            }
        }
    }

    /// The bundle of the host folder `top`, whose files all lie under `dir` (the folders
    /// between them hold nothing else and were entered already).
    fn host_folder(&mut self, top: &Path, dir: &Path, depth: u32) {
        let mut files = Vec::new();
        self.collect(dir, depth, &mut files);
        let name = file_name(top);
        let b = Bundle {
            name: top.display().to_string(),
            key: rel_key(self.root, top),
            kind: BundleKind::Folder,
            host_hint: host_like(&name).then_some(name),
            disk_bytes: files.iter().map(|f| size_of(f)).sum(),
            files,
            error: None,
        };
        self.out.bundles.push(b);
    }

    fn collect(&mut self, dir: &Path, depth: u32, files: &mut Vec<PathBuf>) {
        if depth > 32 {
            self.out.notes.push(format!(
                "{}: folder nesting deeper than 32, not descended",
                dir.display()
            ));
            return;
        }
        match list(self.root, dir, &mut self.out.notes) {
            Ok(l) => {
                files.extend(l.files);
                for d in l.dirs {
                    if self.enter(&d) {
                        self.collect(&d, depth + 1, files);
                    }
                }
            }
            Err(e) => self
                .out
                .notes
                .push(format!("{}: cannot list folder: {e}", dir.display())),
        }
    }
}

/// Groups the files under `paths` into bundles (see the module documentation for the rules).
/// Paths that cannot be read become [`BundleKind::Unreadable`] bundles, so that they show in
/// the output like any other bundle that failed.
pub fn discover(paths: &[String]) -> Discovery {
    let mut out = Discovery::default();
    for arg in paths {
        let path = PathBuf::from(arg);
        let key = file_name(&path);
        if arg == "-" {
            let why = "standard input cannot be scanned: use `faultline analyze -`";
            out.bundles.push(unreadable(arg.clone(), key, why.into()));
            continue;
        }
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                let mut w = Walker {
                    root: &path,
                    visited: BTreeSet::new(),
                    out: &mut out,
                };
                if w.enter(&path) {
                    w.walk(&path, &path, 0);
                }
            }
            Ok(m) if m.is_file() => {
                let kind = classify_file(&path);
                out.bundles.push(single(arg.clone(), key, path, kind));
            }
            Ok(_) => out.bundles.push(unreadable(
                arg.clone(),
                key,
                "not a regular file or folder (FIFO, socket or device)".into(),
            )),
            Err(e) => out
                .bundles
                .push(unreadable(arg.clone(), key, format!("cannot read: {e}"))),
        }
    }
    let mut seen = BTreeSet::new();
    out.bundles.retain(|b| seen.insert(b.name.clone()));
    out
}
