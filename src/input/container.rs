//! Containers, detected by magic bytes and read as streams: gzip (all members), zstd (all
//! frames), tar (entries read, never extracted), nested up to the depth cap. Nothing is held
//! whole: each decoder runs in a thread of its own ([`super::decode`]) and the scanner reads its
//! output block by block; the bytes that come out of a container count against the member cap
//! and the global budget ([`super::budget`]) as they are read.

use super::budget::Budget;
use super::decode::{self, Notes, TarItem};
use super::feed::Feed;
use super::stream_decoder;
use super::zstd_blocks::BLOCK_MAX;
use super::{Bytes, Input, Limits};
use std::io::{Cursor, Read};
use std::sync::atomic::AtomicU64;
use std::sync::Arc;

/// The first block of an input read before it is handed to the scanner (format detection reads
/// it); an input that ends within it is scanned whole, a longer one block by block.
pub const STREAM_HEAD: usize = 4 << 20;

/// A compressed file at least this large is read ahead in a thread of its own.
const READ_AHEAD_FROM: u64 = 1 << 20;

/// A source of decoded or read bytes, read in blocks by the pipeline, within the member cap and
/// the global budget; problems go to `warnings`.
pub struct Stream {
    reader: Feed,
    read: u64,
    limits: Limits,
    budget: Option<(Arc<Budget>, usize)>,
    done: bool,
    /// For a plain file: the size it had when opened (a shorter read means it shrank).
    expected: Option<u64>,
    /// What the decoder below had to say, read when the stream ends.
    notes: Option<Notes>,
    /// What stopped the stream early, if anything.
    pub warnings: Vec<String>,
}

impl Stream {
    /// A stream over `reader` within the member cap of `limits` (no global budget).
    pub fn new(reader: Box<dyn Read + Send>, limits: Limits) -> Stream {
        Stream::over(Feed::Any(reader), limits)
    }

    fn over(reader: Feed, limits: Limits) -> Stream {
        Stream {
            reader,
            read: 0,
            limits,
            budget: None,
            done: false,
            expected: None,
            notes: None,
            warnings: Vec::new(),
        }
    }

    /// Marks the source as a plain file of `len` bytes: ending earlier adds a warning.
    pub fn expect_len(&mut self, len: u64) {
        self.expected = Some(len);
    }

    /// Whether the stream has ended (nothing more to read).
    pub fn is_done(&self) -> bool {
        self.done
    }

    fn finish(&mut self) {
        self.done = true;
        if let Some(n) = self.notes.take() {
            let mut n = n.lock().unwrap_or_else(|e| e.into_inner());
            self.warnings.append(&mut n);
        }
    }

    /// Reads the next block of up to `max` bytes into `buf` (appending); returns bytes added, 0
    /// at the end.
    pub fn fill(&mut self, buf: &mut Vec<u8>, max: usize) -> usize {
        const STEP: usize = 4 << 20;
        let start = buf.len();
        while !self.done && buf.len() - start < max {
            let at = buf.len();
            // the step grows with what was read (64 KiB, then doubling up to STEP): a small input
            // does not pay for zeroing a 4 MiB buffer it never fills
            let step = STEP
                .min(max - (at - start))
                .min((self.read as usize).max(64 << 10));
            buf.resize(at + step, 0);
            let n = self.fill_slice(&mut buf[at..]);
            buf.truncate(at + n);
        }
        buf.len() - start
    }

    /// Fills `buf[from..]` (grown as needed, never zeroed twice) up to at least `want` bytes
    /// unless the stream ends before; returns where its bytes end. A decoder that can writes
    /// straight into `buf` (up to [`BLOCK_MAX`] past `want`); the buffer is then handed back with
    /// [`Stream::seal`] before the next one is filled.
    pub fn fill_block(&mut self, buf: &mut Vec<u8>, from: usize, want: usize) -> usize {
        if self.done {
            return from;
        }
        let Some(dec) = self.reader.in_place() else {
            if buf.len() < want {
                buf.resize(want, 0);
            }
            return from + self.fill_slice(&mut buf[from..want]);
        };
        if buf.len() < want + BLOCK_MAX {
            buf.resize(want + BLOCK_MAX, 0);
        }
        let end = dec.fill_in_place(buf, from, want);
        let kept = self.admit(end - from);
        if kept < end - from || end < want {
            self.finish();
        }
        from + kept
    }

    /// The bytes the next buffer of [`Stream::fill_block`] must take before it is sealed (0:
    /// any number).
    pub fn min_segment(&mut self) -> usize {
        self.reader.in_place().map_or(0, |d| d.min_segment())
    }

    /// Hands back the buffer [`Stream::fill_block`] filled last, shared: the decoder may read it
    /// back until the next one is sealed.
    pub fn seal(&mut self, buf: Vec<u8>) -> Arc<Vec<u8>> {
        match &mut self.reader {
            Feed::Decoded(_, dec) => dec.seal(buf),
            Feed::Any(_) => Arc::new(buf),
        }
    }

    /// Reads into all of `buf` (bytes already there are overwritten, none is zeroed first) unless
    /// the stream ends before; returns the bytes read.
    pub fn fill_slice(&mut self, buf: &mut [u8]) -> usize {
        if self.done {
            return 0;
        }
        let (got, end) = decode::read_full(&mut self.reader, buf);
        let kept = self.admit(got);
        if kept < got {
            self.finish();
            return kept;
        }
        match end {
            Some(None) => {
                if let Some(len) = self.expected.filter(|&l| self.read < l) {
                    self.warnings.push(format!(
                        "file shrank while being read: {} of {len} bytes; the part read is analyzed",
                        self.read
                    ));
                }
                self.finish();
            }
            Some(Some(e)) => {
                self.warnings.push(format!(
                    "corrupt or truncated stream after {} bytes: {e}; the part before is analyzed",
                    self.read
                ));
                self.finish();
            }
            None => {}
        }
        kept
    }

    /// How many of `n` bytes just read may be kept: the member cap, then the global budget.
    fn admit(&mut self, n: usize) -> usize {
        if n == 0 {
            return 0;
        }
        let room = self.limits.max_member_bytes.saturating_sub(self.read);
        let mut keep = (n as u64).min(room);
        if keep < n as u64 {
            self.warnings.push(format!(
                "decompressed size passed the cap of {} bytes (--max-member-bytes); the rest is not read",
                self.limits.max_member_bytes
            ));
        }
        if let Some((b, slot)) = &self.budget {
            let g = b.request(*slot, keep);
            if g < keep {
                keep = g;
                self.warnings.push(format!(
                    "total decompressed bytes passed the cap of {} (--max-total-bytes, counted in input order); the rest is not read",
                    self.limits.max_total_bytes
                ));
            }
        }
        self.read += keep;
        keep as usize
    }
}

/// What the first bytes say.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Magic {
    /// gzip member.
    Gzip,
    /// zstd frame (or skippable frame).
    Zstd,
    /// POSIX or GNU tar.
    Tar,
    /// Formats recognized but not decoded.
    Unsupported(&'static str),
    /// systemd binary journal.
    Journal,
    /// Anything else: text (or junk) to scan.
    Plain,
}

/// Sniffs the container type.
pub fn sniff(b: &[u8]) -> Magic {
    if b.starts_with(&[0x1f, 0x8b]) {
        Magic::Gzip
    } else if b.starts_with(&[0x28, 0xb5, 0x2f, 0xfd])
        || (b.len() >= 4 && b[0] & 0xf0 == 0x50 && b[1..4] == [0x2a, 0x4d, 0x18])
    {
        Magic::Zstd
    } else if b.len() >= 262 && &b[257..262] == b"ustar" {
        Magic::Tar
    } else if b.starts_with(&[0xfd, b'7', b'z', b'X', b'Z', 0]) {
        Magic::Unsupported("xz")
    } else if b.starts_with(b"BZh") && b.get(3).is_some_and(|c| c.is_ascii_digit()) {
        Magic::Unsupported("bzip2")
    } else if b.starts_with(&[0x04, 0x22, 0x4d, 0x18]) {
        Magic::Unsupported("lz4")
    } else if b.starts_with(b"PK\x03\x04") {
        Magic::Unsupported("zip")
    } else if b.starts_with(b"LPKSHHRH") {
        Magic::Journal
    } else {
        Magic::Plain
    }
}

/// What opening one input needs besides its bytes: the caps, the global budget and the input's
/// slot in it (its discovery order), and the `--exclude` patterns (also applied to members).
#[derive(Clone)]
pub struct Ctx {
    /// Caps.
    pub limits: Limits,
    /// The budget of decoded bytes shared by all inputs.
    pub budget: Arc<Budget>,
    /// This input's place in discovery order.
    pub slot: usize,
    /// Glob patterns of files and members to skip.
    pub exclude: Arc<Vec<String>>,
}

impl Ctx {
    /// A context for one input alone: `limits`, no budget shared with others, nothing excluded.
    pub fn alone(limits: &Limits) -> Ctx {
        Ctx {
            limits: *limits,
            budget: Arc::new(Budget::new(limits.max_total_bytes, 1)),
            slot: 0,
            exclude: Arc::default(),
        }
    }
}

/// One source of bytes being opened: where it comes from and what is known of it.
pub struct Source {
    /// Path as shown (`archive!member` inside a tar).
    pub path: String,
    /// Host implied by the path.
    pub host: Option<String>,
    /// Size on disk of the file it comes from.
    pub disk: u64,
    /// Modification time.
    pub mtime: Option<i64>,
    /// Problems met so far.
    pub warnings: Vec<String>,
    /// Container nesting so far.
    pub depth: u32,
    /// Its bytes come out of a container: they count against the global budget.
    pub decoded: bool,
    /// A plain file's size when opened.
    pub expected: Option<u64>,
    /// Compressed bytes consumed below it (for the per-member ratio of a tar).
    pub consumed: Option<Arc<AtomicU64>>,
    /// The notes of the decoder that produces it.
    pub notes: Option<Notes>,
}

impl Source {
    /// A file (or stdin) at the top: nothing decoded yet.
    pub fn top(path: String, host: Option<String>, disk: u64, mtime: Option<i64>) -> Source {
        Source {
            path,
            host,
            disk,
            mtime,
            warnings: Vec::new(),
            depth: 0,
            decoded: false,
            expected: None,
            consumed: None,
            notes: None,
        }
    }

    fn unread(mut self, warning: Option<String>) -> Input {
        if let Some(n) = self.notes.take() {
            self.warnings
                .append(&mut n.lock().unwrap_or_else(|e| e.into_inner()));
        }
        self.warnings.extend(warning);
        Input::unread(self.path, self.host, self.disk, self.mtime, self.warnings)
    }
}

/// Opens the bytes of `reader` as `src`: decodes containers (in threads of their own), and hands
/// every plain input to `process`, in order, pushing what it returns to `out`. A member is
/// handed over while it is still being decoded: `process` reads it as a stream.
pub fn expand_reader<R>(
    mut src: Source,
    mut reader: Feed,
    ctx: &Ctx,
    process: &mut dyn FnMut(Input) -> R,
    out: &mut Vec<R>,
) {
    // the first bytes tell what this is (a tar header needs 262)
    let mut head = Vec::with_capacity(512);
    if let Err(e) = (&mut reader).take(512).read_to_end(&mut head) {
        src.warnings
            .push(format!("read error after {} bytes: {e}", head.len()));
    }
    let magic = sniff(&head);
    if magic != Magic::Plain && src.depth >= ctx.limits.max_depth {
        let w = format!(
            "nested containers deeper than {} levels; not opened",
            ctx.limits.max_depth
        );
        out.push(process(src.unread(Some(w))));
        return;
    }
    let rest = reader.after(head.clone());
    match magic {
        Magic::Plain => plain(src, &head, rest, ctx, process, out),
        Magic::Gzip | Magic::Zstd => {
            // a compressed file is read ahead by a thread of its own (the decoder's thread is
            // the one the run waits on); a stream inside a container is already fed by one
            let gzip = magic == Magic::Gzip;
            let rest = rest.boxed();
            let dec = if src.depth == 0 && src.disk >= READ_AHEAD_FROM {
                stream_decoder::open_stream_ahead(rest, gzip, ctx.limits)
            } else {
                stream_decoder::open_stream(rest, gzip, ctx.limits)
            };
            let inner = Source {
                depth: src.depth + 1,
                decoded: true,
                expected: None,
                consumed: dec.consumed.clone(),
                notes: Some(dec.notes.clone()),
                ..src
            };
            let feed = Feed::Decoded(Cursor::default(), Box::new(dec));
            expand_reader(inner, feed, ctx, process, out);
        }
        Magic::Tar => tar(src, rest.boxed(), ctx, process, out),
        Magic::Unsupported(kind) => {
            let w = format!("{kind} compression is not supported; decompress it first");
            out.push(process(src.unread(Some(w))));
        }
        Magic::Journal => journal(src, rest.boxed(), ctx, process, out),
    }
}

/// A binary systemd journal: read through `journalctl --file … -o export` (the file is held,
/// within the member cap, for journalctl to read a copy), else a warning that says how to export
/// it.
fn journal<R>(
    mut src: Source,
    rest: Box<dyn Read + Send>,
    ctx: &Ctx,
    process: &mut dyn FnMut(Input) -> R,
    out: &mut Vec<R>,
) {
    let mut bytes = Vec::new();
    if let Err(e) = rest
        .take(ctx.limits.max_member_bytes)
        .read_to_end(&mut bytes)
    {
        src.warnings
            .push(format!("read error after {} bytes: {e}", bytes.len()));
    }
    match super::journal_file::export(&src.path, &bytes, ctx.limits.max_member_bytes) {
        Ok(export) => {
            drop(bytes);
            src.warnings.push(
                "systemd journal file read through `journalctl --file … -o export`; its lines are those of the export"
                    .to_string(),
            );
            let inner = Source {
                depth: src.depth + 1,
                decoded: true,
                expected: None,
                ..src
            };
            expand_reader(inner, Feed::any(Cursor::new(export)), ctx, process, out);
        }
        Err(w) => out.push(process(src.unread(Some(w)))),
    }
}

fn plain<R>(
    src: Source,
    head: &[u8],
    rest: Feed,
    ctx: &Ctx,
    process: &mut dyn FnMut(Input) -> R,
    out: &mut Vec<R>,
) {
    if let Some(kind) = own_report(head) {
        let w = format!("faultline's own {kind} output: skipped, not read as a log");
        out.push(process(src.unread(Some(w))));
        return;
    }
    let mut stream = Stream::over(rest, ctx.limits);
    stream.expected = src.expected;
    stream.notes = src.notes;
    if src.decoded {
        stream.budget = Some((ctx.budget.clone(), ctx.slot));
    }
    let mut first = Vec::new();
    stream.fill(&mut first, STREAM_HEAD);
    let mut warnings = src.warnings;
    let stream = if stream.done {
        warnings.append(&mut stream.warnings);
        None
    } else {
        Some(stream)
    };
    out.push(process(Input {
        path: src.path,
        host_hint: src.host,
        bytes: Bytes::Owned(first),
        disk_bytes: src.disk,
        mtime: src.mtime,
        warnings,
        stream,
    }));
}

fn tar<R>(
    src: Source,
    rest: Box<dyn Read + Send>,
    ctx: &Ctx,
    process: &mut dyn FnMut(Input) -> R,
    out: &mut Vec<R>,
) {
    let before = out.len();
    let items = decode::spawn_tar(rest, src.consumed.clone(), ctx.limits);
    let mut warnings = Vec::new();
    for item in items {
        let m = match item {
            TarItem::Warn(w) => {
                warnings.push(w);
                continue;
            }
            TarItem::Member(m) => m,
        };
        if super::exclude::excluded(&m.name, &ctx.exclude) {
            // dropping its reader makes the decoder skip to the next member
            continue;
        }
        let member = Source {
            path: format!("{}!{}", src.path, m.name),
            host: super::member_host(&m.name).or_else(|| src.host.clone()),
            disk: src.disk,
            mtime: m.mtime,
            warnings: m.warnings,
            depth: src.depth + 1,
            decoded: true,
            expected: None,
            consumed: None,
            notes: Some(m.data.notes.clone()),
        };
        expand_reader(member, Feed::any(m.data), ctx, process, out);
    }
    let mut archive = src;
    archive.warnings.append(&mut warnings);
    let archive = archive.unread(None);
    if out.len() == before || !archive.warnings.is_empty() {
        // keep the archive's own warnings visible as an input of its own
        out.insert(before, process(archive));
    }
}

/// Which of faultline's own outputs `head` starts, if any (a report written into an input
/// folder, or left beside the logs, is not a log).
pub fn own_report(head: &[u8]) -> Option<&'static str> {
    let start = head
        .iter()
        .position(|c| !c.is_ascii_whitespace())
        .unwrap_or(head.len());
    let h = &head[start..];
    let has = |hay: &[u8], needle: &[u8]| memchr::memmem::find(hay, needle).is_some();
    let first = &h[..memchr::memchr(b'\n', h).unwrap_or(h.len())];
    if h.starts_with(b"{") {
        let near = &h[..h.len().min(200)];
        let tagged =
            has(near, b"\"schema\": \"faultline/") || has(near, b"\"schema\":\"faultline/");
        // the manifest of a `faultline collect` bundle is an input: it names the bundle's host
        return (tagged && !crate::collect::manifest::looks_like(h)).then_some("JSON");
    }
    if h.starts_with(b"<!DOCTYPE html>") && has(h, b"<meta name=\"generator\" content=\"faultline")
    {
        return Some("HTML");
    }
    if h.starts_with(b"# GPU incident report") {
        return Some("Markdown");
    }
    if first.starts_with(b"faultline ")
        && first.get(10).is_some_and(u8::is_ascii_digit)
        && has(first, " — ".as_bytes())
    {
        return Some("text");
    }
    None
}

/// Expands in-memory `data` (a file's bytes) into inputs, each read to its end within the caps
/// (fuzzing and tests; the analysis streams instead).
pub fn expand_bytes(path: &str, data: Vec<u8>, limits: &Limits) -> Vec<Input> {
    let mut out = Vec::new();
    let len = data.len() as u64;
    let src = Source::top(path.to_string(), None, len, None);
    let reader = Feed::any(Cursor::new(data));
    expand_reader(src, reader, &Ctx::alone(limits), &mut materialize, &mut out);
    out
}

/// Reads a streamed input to its end (within its caps) so that it holds all its bytes.
pub fn materialize(mut input: Input) -> Input {
    if let Some(mut s) = input.stream.take() {
        let mut all = std::mem::replace(&mut input.bytes, Bytes::Owned(Vec::new())).to_vec();
        s.fill(&mut all, usize::MAX);
        input.warnings.append(&mut s.warnings);
        input.bytes = Bytes::Owned(all);
    }
    input
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn magic_bytes() {
        assert_eq!(sniff(&[0x1f, 0x8b, 8, 0]), Magic::Gzip);
        assert_eq!(sniff(&[0x28, 0xb5, 0x2f, 0xfd, 0]), Magic::Zstd);
        assert_eq!(sniff(b"LPKSHHRH...."), Magic::Journal);
        assert_eq!(sniff(b"hello"), Magic::Plain);
        let mut t = vec![0u8; 512];
        t[257..262].copy_from_slice(b"ustar");
        assert_eq!(sniff(&t), Magic::Tar);
    }
}
