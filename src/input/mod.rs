//! Inputs: discovery of files and folders (deterministic order, regular files only, no symlink
//! loops), stdin, and opening each one as plain bytes (mapped, read, or streamed when large) or
//! as decoded members of gzip/zstd/tar containers, streamed within the caps and a global
//! budget applied in input order ([`run`]).

pub mod budget;
pub mod container;
pub mod decode;
pub mod exclude;
pub mod feed;
pub mod journal_file;
pub mod mapped;
pub mod progress;
pub mod stream_decoder;
pub mod zstd_blocks;

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
    /// bounded (a storm of ten million identical Xid lines keeps this many events). A kind keeps
    /// at most [`crate::scan::kind_total`] of this in all, over its keys.
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

/// Block formats (bug reports, nvidia-smi and dcgmi dumps, journal JSON) are parsed whole up to
/// this many bytes held in memory; past it the rest of such an input is scanned line by line.
pub const MAX_HELD_BYTES: u64 = 192 << 20;

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

    /// The bytes as an owned buffer (a copy only for a map).
    pub fn into_vec(self) -> Vec<u8> {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m.to_vec(),
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

static FOLLOW_LINKS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// `--follow-links`: follow symbolic links inside an input folder wherever they lead (off by
/// default: a link whose target is outside the folder is skipped with a warning).
pub fn set_follow_links(on: bool) {
    FOLLOW_LINKS.store(on, std::sync::atomic::Ordering::Relaxed);
}

/// Whether `p`, an entry of the input folder `root`, is a symbolic link whose target lies
/// outside `root` and must not be followed: the warning that names it, or `None` to go on.
/// A bundle is untrusted: `kern.log -> /var/log/kern.log` would quote the analyzing machine's
/// own logs back to whoever uploaded the folder.
pub fn outside_link(root: &Path, p: &Path) -> Option<String> {
    if FOLLOW_LINKS.load(std::sync::atomic::Ordering::Relaxed) {
        return None;
    }
    let meta = std::fs::symlink_metadata(p).ok()?;
    if !meta.file_type().is_symlink() {
        return None;
    }
    let target = std::fs::read_link(p)
        .map(|t| t.display().to_string())
        .unwrap_or_default();
    let inside = match (root.canonicalize(), p.canonicalize()) {
        (Ok(r), Ok(t)) => t.starts_with(&r),
        // a dangling link: opening it fails later with its own warning
        (Ok(_), Err(_)) => return None,
        _ => false,
    };
    (!inside).then(|| {
        format!(
            "{}: symbolic link to {target}, outside the input folder: skipped (--follow-links follows it)",
            p.display()
        )
    })
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
        if let Some(w) = outside_link(root, &p) {
            warnings.push(w);
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
    host_like(&first).then_some(first)
}

/// Whether a folder name looks like a host name (letters, digits, `-`, `.`, `_`, at least one
/// letter) and not like a system folder.
fn host_like(name: &str) -> bool {
    name.bytes().any(|c| c.is_ascii_alphabetic())
        && name
            .bytes()
            .all(|c| c.is_ascii_alphanumeric() || c == b'-' || c == b'.' || c == b'_')
        && !generic_folder(name)
}

/// Folder names that hold logs but name no host (`slurm/`, `logs/`, `nodes/`): never taken as
/// hosts, by folder per host or by redaction (which would alias `SLURM` inside
/// `SLURM_JOB_NODELIST`).
pub fn generic_folder(name: &str) -> bool {
    matches!(
        name.to_ascii_lowercase().as_str(),
        "var"
            | "log"
            | "logs"
            | "tmp"
            | "temp"
            | "etc"
            | "proc"
            | "sys"
            | "run"
            | "home"
            | "root"
            | "slurm"
            | "nodes"
            | "node"
            | "hosts"
            | "host"
            | "jobs"
            | "job"
            | "data"
            | "output"
            | "outputs"
            | "results"
            | "result"
            | "bundle"
            | "bundles"
            | "reports"
            | "report"
            | "journal"
            | "syslog"
            | "kubernetes"
            | "k8s"
            | "pods"
            | "containers"
            | "nvidia"
            | "gpu"
            | "gpus"
            | "case"
            | "cases"
            | "incident"
            | "incidents"
            | "collected"
            | "dump"
    )
}

/// Folder per host inside an archive: the first folder of a member's name names its host
/// (`bundle.tgz!gpu-node-07/var/log/kern.log`), as a folder below a scan root does on disk.
pub fn member_host(name: &str) -> Option<String> {
    let mut comps = name.split('/').filter(|c| !c.is_empty() && *c != ".");
    let first = comps.next()?;
    comps.next()?; // the member itself must be below it
    host_like(first).then(|| first.to_string())
}

/// Opens every found file and hands each of its inputs to `process` while it is read (members
/// of archives and compressed files as streams, never held whole); returns what `process`
/// returned, in discovery order (and member order within a file). `workers` files are read at
/// a time. Files matching an `exclude` pattern are skipped (members too). The global budget of
/// decoded bytes ([`Limits::max_total_bytes`]) is applied in discovery order whatever the
/// scheduling ([`budget`]).
pub fn run<R, F>(
    found: &[Found],
    limits: &Limits,
    exclude: &[String],
    workers: usize,
    process: F,
) -> Vec<R>
where
    R: Send,
    F: Fn(Input) -> R + Sync,
{
    let exclude = std::sync::Arc::new(exclude.to_vec());
    let found: Vec<&Found> = found
        .iter()
        .filter(|f| f.display == "-" || !exclude::excluded(&f.display, &exclude))
        .collect();
    let budget = std::sync::Arc::new(budget::Budget::new(limits.max_total_bytes, found.len()));
    let ctx = container::Ctx {
        limits: *limits,
        budget,
        slot: 0,
        exclude,
    };
    let mut results = run_slots(&found, &ctx, workers, &process, None);
    if let Some(over) = ctx.budget.overdrawn() {
        // inputs that read past their share in input order (only when the cap was reached out
        // of order): read again with exactly that share
        let mut allow = ctx.budget.shares();
        for &(i, share) in &over {
            allow[i] = share;
        }
        let fixed = container::Ctx {
            budget: std::sync::Arc::new(budget::Budget::fixed(allow)),
            ..ctx.clone()
        };
        let slots: Vec<usize> = over.iter().map(|o| o.0).collect();
        for (i, r) in slots
            .iter()
            .zip(run_slots(&found, &fixed, 1, &process, Some(&slots)))
        {
            results[*i] = r;
        }
    }
    results.into_iter().flatten().collect()
}

/// Reads the files of `only` (all when `None`) with `workers` threads, each taking the next
/// file in order; returns each file's results at its slot (or in the order of `only`).
fn run_slots<R, F>(
    found: &[&Found],
    ctx: &container::Ctx,
    workers: usize,
    process: &F,
    only: Option<&[usize]>,
) -> Vec<Vec<R>>
where
    R: Send,
    F: Fn(Input) -> R + Sync,
{
    let slots: Vec<usize> = only.map_or_else(|| (0..found.len()).collect(), <[usize]>::to_vec);
    // one file, in its own budget slot (finished however the read ends)
    let open_slot = |slot: usize| {
        let _finish = budget::FinishGuard(&ctx.budget, slot);
        let one = container::Ctx {
            slot,
            ..ctx.clone()
        };
        let mut out = Vec::new();
        open_into(found[slot], &one, &mut |i| process(i), &mut out);
        out
    };
    if workers <= 1 || slots.len() <= 1 || rayon::current_thread_index().is_some() {
        // one at a time on this thread: inside a rayon worker (fleet scan runs bundles in the
        // pool) threads of our own would block pool threads that the scan's chunks need
        return slots.iter().map(|&slot| open_slot(slot)).collect();
    }
    let next = std::sync::atomic::AtomicUsize::new(0);
    let done: std::sync::Mutex<Vec<(usize, Vec<R>)>> = std::sync::Mutex::default();
    std::thread::scope(|s| {
        for _ in 0..workers.clamp(1, slots.len().max(1)) {
            s.spawn(|| loop {
                let k = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                let Some(&slot) = slots.get(k) else { break };
                let out = open_slot(slot);
                done.lock()
                    .unwrap_or_else(|e| e.into_inner())
                    .push((k, out));
            });
        }
    });
    let mut done = done.into_inner().unwrap_or_else(|e| e.into_inner());
    done.sort_by_key(|d| d.0);
    done.into_iter().map(|d| d.1).collect()
}

/// File names that say compressed: an empty one is worth a warning.
fn compressed_name(name: &str) -> bool {
    [
        ".gz", ".tgz", ".zst", ".tzst", ".xz", ".bz2", ".lz4", ".zip", ".tar",
    ]
    .iter()
    .any(|e| name.ends_with(e))
}

/// Opens one discovered file: plain text of at least [`MAP_THRESHOLD`] bytes is memory-mapped
/// behind a SIGBUS guard (a file truncated while mapped reads as NUL bytes past its new end and
/// gets a warning, instead of killing the process); anything else is read as a stream, and
/// containers are decoded as streams ([`container::expand_reader`]). Each input goes to
/// `process` in order.
pub fn open_into<R>(
    found: &Found,
    ctx: &container::Ctx,
    process: &mut dyn FnMut(Input) -> R,
    out: &mut Vec<R>,
) {
    use container::Source;
    if found.display == "-" {
        let src = Source::top("-".into(), found.host.clone(), 0, None);
        container::expand_reader(src, feed::Feed::any(std::io::stdin()), ctx, process, out);
        return;
    }
    let f = match File::open(&found.path) {
        Ok(f) => f,
        Err(e) => {
            let w = vec![format!("cannot open: {e}")];
            out.push(process(Input::unread(
                found.display.clone(),
                found.host.clone(),
                0,
                None,
                w,
            )));
            return;
        }
    };
    let meta = f.metadata().ok();
    let len = meta.as_ref().map_or(0, |m| m.len());
    let mtime = meta
        .and_then(|m| m.modified().ok())
        .and_then(|t| t.duration_since(std::time::UNIX_EPOCH).ok())
        .map(|d| d.as_secs() as i64);
    if let Some(input) = map_plain(found, &f, len, mtime, &ctx.limits) {
        out.push(process(input));
        return;
    }
    let mut src = Source::top(found.display.clone(), found.host.clone(), len, mtime);
    src.expected = Some(len);
    if len == 0 && compressed_name(&found.display) {
        src.warnings.push(
            "empty file (0 bytes) where a compressed file or archive was expected".to_string(),
        );
    }
    // the bytes taken from disk (compressed ones for a compressed file) move the progress bar
    let feed = feed::Feed::any(progress::Counted(f));
    container::expand_reader(src, feed, ctx, process, out);
}

/// Opens one discovered file and returns its inputs, each read to its end within the caps
/// (tools and tests; the analysis streams them through [`run`]).
pub fn open(found: &Found, limits: &Limits) -> Vec<Input> {
    let mut out = Vec::new();
    let ctx = container::Ctx::alone(limits);
    open_into(found, &ctx, &mut container::materialize, &mut out);
    out
}

/// Opens the content of `found` from `reader`, whose size was `len` bytes when it was opened
/// (the part of [`open`] after the file is opened; a test can hand it any reader). Inputs are
/// returned as read (a long one with its stream). A source that ends before `len` bytes (a file
/// that shrank while being read) gets a warning with both sizes; what was read is analyzed.
pub fn open_reader(
    found: &Found,
    reader: Box<dyn Read + Send>,
    len: u64,
    mtime: Option<i64>,
    limits: &Limits,
) -> Vec<Input> {
    let mut out = Vec::new();
    let mut src = container::Source::top(found.display.clone(), found.host.clone(), len, mtime);
    src.expected = Some(len);
    let ctx = container::Ctx::alone(limits);
    container::expand_reader(src, feed::Feed::Any(reader), &ctx, &mut |i| i, &mut out);
    out
}

/// A plain text file of at least [`MAP_THRESHOLD`] bytes (and at most the member cap) as a
/// memory-mapped input; `None` for anything else, or when it cannot be mapped (or is one of
/// faultline's own reports).
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
        && container::own_report(head).is_none()
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
