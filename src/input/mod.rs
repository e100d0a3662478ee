//! Inputs: discovery of files and folders (deterministic order, regular files only, no symlink
//! loops), stdin, and opening each one as plain bytes (read, or streamed when large) or as decoded members of
//! gzip/zstd/tar containers, within limits.

pub mod container;
pub mod journal_file;
pub mod mapped;

use std::collections::BTreeSet;
use std::fs::File;
use std::io::Read;
use std::path::{Path, PathBuf};

/// Caps that protect against hostile or huge inputs.
#[derive(Clone, Copy, Debug)]
pub struct Limits {
    /// Decompressed bytes kept per member.
    pub max_member_bytes: u64,
    /// Decompressed bytes in total across all inputs.
    pub max_total_bytes: u64,
    /// Largest allowed ratio of decompressed to compressed size (checked past 64 MiB).
    pub max_ratio: u64,
    /// Container nesting depth.
    pub max_depth: u32,
    /// Events kept per kind per GPU of one input (more exactly: per host, kind, code, GPU and
    /// rank); occurrences past it are counted, not kept, so counts stay exact while memory stays
    /// bounded (a storm of ten million identical Xid lines keeps this many events).
    pub max_events_per_kind: u64,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            max_member_bytes: 4 << 30,
            max_total_bytes: 64 << 30,
            max_ratio: 1000,
            max_depth: 4,
            max_events_per_kind: crate::scan::DEFAULT_EVENTS_PER_KIND,
        }
    }
}

/// Plain text files at least this large that cannot be memory-mapped are read as a stream of
/// blocks, so that memory stays bounded; smaller files (and containers) are read into memory.
pub const STREAM_PLAIN_THRESHOLD: u64 = 32 << 20;

/// Plain text files at least this large are memory-mapped (behind the SIGBUS guard of
/// [`mapped`]); smaller ones are read, which is faster for them.
pub const MAP_THRESHOLD: u64 = 1 << 20;

/// Bytes of one input: an owned buffer of read or decoded data, or a guarded memory map.
pub enum Bytes {
    /// Read or decoded data.
    Owned(Vec<u8>),
    /// A plain file, memory-mapped.
    Mapped(mapped::GuardedMap),
}

impl Bytes {
    /// Whether the mapped file shrank while it was read (the part past its new end read as NUL
    /// bytes); always false for read data.
    pub fn shrunk(&self) -> bool {
        match self {
            Bytes::Owned(_) => false,
            Bytes::Mapped(m) => m.shrunk(),
        }
    }
}

impl AsRef<[u8]> for Bytes {
    fn as_ref(&self) -> &[u8] {
        self
    }
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

/// One input ready for scanning.
pub struct Input {
    /// Path as given, or `archive!member`.
    pub path: String,
    /// Host implied by the path (`PATH@HOST`, folder per host, file name).
    pub host_hint: Option<String>,
    /// Its bytes.
    pub bytes: Bytes,
    /// Size on disk (compressed size for members of compressed files).
    pub disk_bytes: u64,
    /// Modification time of the file (seconds since the epoch), a year anchor for syslog.
    pub mtime: Option<i64>,
    /// Problems met while reading it.
    pub warnings: Vec<String>,
    /// For large compressed text: the decoder that yields what follows `bytes` (read in blocks,
    /// so memory stays bounded whatever the decompressed size).
    pub stream: Option<container::Stream>,
}

impl Input {
    /// An input of which nothing could be read: it still appears in the report with its warnings.
    pub fn unread(
        path: String,
        host_hint: Option<String>,
        disk_bytes: u64,
        mtime: Option<i64>,
        warnings: Vec<String>,
    ) -> Input {
        Input {
            path,
            host_hint,
            bytes: Bytes::Owned(Vec::new()),
            disk_bytes,
            mtime,
            warnings,
            stream: None,
        }
    }
}

/// A file found by discovery.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct Found {
    /// Path on disk (`-` for stdin).
    pub path: PathBuf,
    /// Path to show.
    pub display: String,
    /// Host forced with `PATH@HOST` or implied by a host folder.
    pub host: Option<String>,
}

/// Splits `PATH@HOST` when the part after `@` looks like a host name and PATH exists.
pub fn split_host(arg: &str) -> (String, Option<String>) {
    if let Some((p, h)) = arg.rsplit_once('@') {
        let host_ok = !h.is_empty()
            && h.len() <= 253
            && h.bytes()
                .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_');
        if host_ok && !Path::new(arg).exists() && (Path::new(p).exists() || p == "-") {
            return (p.to_string(), Some(h.to_string()));
        }
    }
    (arg.to_string(), None)
}

/// Walks the arguments; returns files in deterministic order and warnings for what was skipped.
pub fn discover(args: &[String]) -> (Vec<Found>, Vec<String>) {
    let mut found = Vec::new();
    let mut warnings = Vec::new();
    for arg in args {
        let (p, host) = split_host(arg);
        if p == "-" {
            found.push(Found {
                path: PathBuf::from("-"),
                display: "-".into(),
                host,
            });
            continue;
        }
        let path = PathBuf::from(&p);
        match std::fs::metadata(&path) {
            Ok(m) if m.is_dir() => {
                let mut visited = BTreeSet::new();
                if let Ok(c) = path.canonicalize() {
                    visited.insert(c);
                }
                walk(
                    &path,
                    &path,
                    host.as_deref(),
                    &mut visited,
                    &mut found,
                    &mut warnings,
                    0,
                );
            }
            Ok(m) if m.is_file() => found.push(Found {
                display: p.clone(),
                path,
                host,
            }),
            Ok(_) => warnings.push(format!(
                "{p}: not a regular file (FIFO, socket or device), skipped"
            )),
            Err(e) => warnings.push(format!("{p}: cannot read: {e}")),
        }
    }
    (found, warnings)
}

fn walk(
    root: &Path,
    dir: &Path,
    host: Option<&str>,
    visited: &mut BTreeSet<PathBuf>,
    found: &mut Vec<Found>,
    warnings: &mut Vec<String>,
    depth: u32,
) {
    if depth > 32 {
        warnings.push(format!(
            "{}: folder nesting deeper than 32, not descended",
            dir.display()
        ));
        return;
    }
    let entries = match std::fs::read_dir(dir) {
        Ok(e) => e,
        Err(e) => {
            warnings.push(format!("{}: cannot list folder: {e}", dir.display()));
            return;
        }
    };
    let mut names: Vec<PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
    names.sort();
    for p in names {
        let name = p
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if name.starts_with('.') {
            continue;
        }
        let meta = match std::fs::metadata(&p) {
            Ok(m) => m,
            Err(e) => {
                warnings.push(format!("{}: cannot read: {e}", p.display()));
                continue;
            }
        };
        if meta.is_dir() {
            match p.canonicalize() {
                Ok(c) if visited.insert(c.clone()) => {
                    walk(root, &p, host, visited, found, warnings, depth + 1)
                }
                Ok(_) => warnings.push(format!("{}: symlink loop, not followed", p.display())),
                Err(e) => warnings.push(format!("{}: cannot resolve: {e}", p.display())),
            }
        } else if meta.is_file() {
            let host = host.map(str::to_string).or_else(|| host_folder(root, &p));
            found.push(Found {
                display: p.display().to_string(),
                path: p,
                host,
            });
        } else {
            warnings.push(format!(
                "{}: not a regular file (FIFO, socket or device), skipped",
                p.display()
            ));
        }
    }
}

/// The folder-per-host convention: the first folder below the given root names the host when it
/// looks like a host name (letters, digits, `-`, `.`, `_`, and at least one letter).
fn host_folder(root: &Path, file: &Path) -> Option<String> {
    let rel = file.strip_prefix(root).ok()?;
    let mut comps = rel.components();
    let first = comps.next()?.as_os_str().to_string_lossy().into_owned();
    comps.next()?; // the file itself must be below it
    let ok = first.bytes().any(|c| c.is_ascii_alphabetic())
        && first
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_')
        && !matches!(
            first.as_str(),
            "var" | "log" | "logs" | "tmp" | "etc" | "proc" | "sys" | "run"
        );
    ok.then_some(first)
}

/// Opens one discovered file and returns its inputs (several for archives). Plain text of at
/// least [`MAP_THRESHOLD`] bytes is memory-mapped behind a SIGBUS guard (a file truncated while
/// mapped reads as NUL bytes past its new end and gets a warning, instead of killing the
/// process); other files are read, or streamed in blocks when they are large plain text that
/// could not be mapped.
pub fn open(found: &Found, limits: &Limits, budget: &std::sync::atomic::AtomicU64) -> Vec<Input> {
    if found.display == "-" {
        let mut warnings = Vec::new();
        let mut v = Vec::new();
        if let Err(e) = std::io::stdin()
            .lock()
            .take(limits.max_member_bytes)
            .read_to_end(&mut v)
        {
            warnings.push(format!("-: read error after {} bytes: {e}", v.len()));
        }
        let n = v.len() as u64;
        let mut out = Vec::new();
        container::expand(
            found.display.clone(),
            found.host.clone(),
            Bytes::Owned(v),
            n,
            None,
            warnings,
            limits,
            0,
            budget,
            &mut out,
        );
        return out;
    }
    match File::open(&found.path) {
        Ok(f) => {
            let meta = f.metadata().ok();
            let len = meta.as_ref().map_or(0, |m| m.len());
            let mtime = meta
                .and_then(|m| m.modified().ok())
                .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
                .map(|d| d.as_secs() as i64);
            if let Some(input) = map_plain(found, &f, len, mtime, limits) {
                return vec![input];
            }
            open_reader(found, Box::new(f), len, mtime, limits, budget)
        }
        Err(e) => vec![Input::unread(
            found.display.clone(),
            found.host.clone(),
            0,
            None,
            vec![format!("cannot open: {e}")],
        )],
    }
}

/// A plain text file of at least [`MAP_THRESHOLD`] bytes (and at most the member cap) as a
/// memory-mapped input; `None` for anything else, or when it cannot be mapped.
fn map_plain(
    found: &Found,
    f: &File,
    len: u64,
    mtime: Option<i64>,
    limits: &Limits,
) -> Option<Input> {
    if len < MAP_THRESHOLD || len > limits.max_member_bytes {
        return None;
    }
    let map = mapped::GuardedMap::new(f)?;
    let head = &map[..map.len().min(512)];
    let plain = container::sniff(head) == container::Magic::Plain
        && !head.starts_with(&[0xff, 0xfe])
        && !head.starts_with(&[0xfe, 0xff]);
    plain.then(|| Input {
        path: found.display.clone(),
        host_hint: found.host.clone(),
        disk_bytes: len,
        bytes: Bytes::Mapped(map),
        mtime,
        warnings: Vec::new(),
        stream: None,
    })
}

/// Opens the content of `found` from `reader`, whose size was `len` bytes when it was opened
/// (the part of [`open`] after the file is opened; a test can hand it any reader). Plain text of
/// at least [`STREAM_PLAIN_THRESHOLD`] bytes becomes a streamed input; anything else is read into
/// memory (at most the member cap) and expanded. A source that ends before `len` bytes (a file
/// that shrank while being read) gets a warning with both sizes; what was read is analyzed.
pub fn open_reader(
    found: &Found,
    mut reader: Box<dyn Read + Send>,
    len: u64,
    mtime: Option<i64>,
    limits: &Limits,
    budget: &std::sync::atomic::AtomicU64,
) -> Vec<Input> {
    let mut warnings = Vec::new();
    // the first bytes tell whether this is plain text (a tar header needs 262)
    let mut head = Vec::with_capacity(512);
    if let Err(e) = (&mut reader).take(512).read_to_end(&mut head) {
        warnings.push(format!("read error after {} bytes: {e}", head.len()));
    }
    let plain = container::sniff(&head) == container::Magic::Plain
        && !head.starts_with(&[0xff, 0xfe])
        && !head.starts_with(&[0xfe, 0xff]);
    if plain && len >= STREAM_PLAIN_THRESHOLD && warnings.is_empty() {
        let rest = std::io::Cursor::new(head).chain(reader);
        let mut stream = container::Stream::new(
            Box::new(rest),
            len,
            Limits {
                max_ratio: u64::MAX,
                ..*limits
            },
        );
        stream.expect_len(len);
        let mut first = Vec::new();
        stream.fill(&mut first, container::STREAM_HEAD);
        return vec![Input {
            path: found.display.clone(),
            host_hint: found.host.clone(),
            bytes: Bytes::Owned(first),
            disk_bytes: len,
            mtime,
            warnings,
            stream: Some(stream),
        }];
    }
    let mut v = head;
    if warnings.is_empty() {
        v.reserve(
            len.min(limits.max_member_bytes)
                .saturating_sub(v.len() as u64) as usize,
        );
        let room = limits.max_member_bytes.saturating_sub(v.len() as u64);
        if let Err(e) = (&mut reader).take(room).read_to_end(&mut v) {
            warnings.push(format!("read error after {} bytes: {e}", v.len()));
        }
    }
    let got = v.len() as u64;
    if got < len && got < limits.max_member_bytes {
        warnings.push(format!(
            "file shrank while being read: {got} of {len} bytes; the part read is analyzed"
        ));
    } else if got >= limits.max_member_bytes && len > limits.max_member_bytes {
        warnings.push(format!(
            "file larger than the member cap of {} bytes: the first {got} of {len} bytes are analyzed",
            limits.max_member_bytes
        ));
    }
    let mut out = Vec::new();
    container::expand(
        found.display.clone(),
        found.host.clone(),
        Bytes::Owned(v),
        len,
        mtime,
        warnings,
        limits,
        0,
        budget,
        &mut out,
    );
    out
}
