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

mod discover;
pub use discover::{
    discover, generic_folder, member_host, outside_link, set_follow_links, split_host, Found,
};

use std::fs::File;
use std::io::Read;

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
