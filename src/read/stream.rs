//! Streamed text (a large decoded or read input): cut into blocks of whole lines by a thread of
//! its own while the decoder below runs in another ([`crate::input::decode`]), each block
//! scanned as a task of the rayon pool on the other cores, and the blocks' outputs merged in
//! order as they come back, with no barrier between blocks. Memory stays at a few blocks per
//! input whatever the decoded size.
//!
//! A block is scanned with the end of the block before it (its look-behind) and the start of the
//! block after it (its look-ahead) in the same buffer, so that a record cut by the boundary is
//! read whole, once, as in a file scanned in one piece: the continuation lines of a record are
//! read by the block that holds its head, a line without a time borrows one across the boundary.

use super::{Ctx, Parsed};
use crate::formats::wrapper::FileWrappers;
use crate::input::container::Stream;
use crate::scan::{self, ScanOutput};
use std::collections::BTreeMap;
use std::sync::mpsc::{channel, sync_channel, Receiver, Sender, SyncSender};
use std::sync::Arc;

/// Bytes of lines each block owns (one task scans them).
pub const BLOCK: usize = 4 << 20;

/// The block size in use: [`BLOCK`], or `FAULTLINE_STREAM_BLOCK` from the environment (at least
/// 4096; for the tests that compare a streamed input with the same text scanned whole).
fn block_bytes() -> usize {
    static SIZE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *SIZE.get_or_init(|| {
        std::env::var("FAULTLINE_STREAM_BLOCK")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(BLOCK, |n| n.max(4096))
    })
}
/// Bytes before a block kept with it: what a record's first lines read back (its head, a
/// borrowed time, preceding lines).
const BEHIND: usize = 256 << 10;
/// Bytes after a block read before it is cut: continuation and trace lines of its last record,
/// following lines.
const AHEAD: usize = 256 << 10;

/// One block of lines, with its context.
struct Block {
    /// Look-behind, own lines, look-ahead (its first `len` bytes; the rest is spare room).
    /// Shared: a decoder that filled it in place may read it back while it fills the next.
    buf: Arc<Vec<u8>>,
    len: usize,
    /// The range of `buf` this block owns.
    own: (usize, usize),
    /// The offset of its own lines in the decoded input.
    at: u64,
    /// Its first line is the rest of the last line of the block before (a line longer than a
    /// block, cut inside).
    continued: bool,
}

/// Reads `stream` (after its first bytes `head`) block by block: see the module doc.
pub fn read(head: Vec<u8>, stream: &mut Stream, ctx: &Ctx, warnings: &mut Vec<String>) -> Parsed {
    let fw = FileWrappers::learn(&head, |t| ctx.set.prefilter.find(t).is_some());
    let pooled =
        ctx.parallel && rayon::current_num_threads() > 1 && rayon::current_thread_index().is_none();
    let mut merge = Merge::new(ctx.cap);
    let source = &mut *stream;
    std::thread::scope(|s| {
        let (tx, blocks) = sync_channel(1);
        // scanned blocks' buffers go back to the cutter, which fills them again
        let (back, spare) = channel();
        s.spawn(move || cut_blocks(head, source, &tx, &spare));
        if pooled {
            scan_pooled(&blocks, &back, ctx, &fw, &mut merge);
        } else {
            // inside a pool worker (a fleet scan runs bundles in the pool), or one core: this
            // thread scans, while the decoder and the cutter still run in theirs
            for (i, b) in blocks.iter().enumerate() {
                merge.put(i, scan_block(b, &back, ctx, &fw));
            }
        }
    });
    let mut out = merge.out;
    out.settle_recognized();
    warnings.extend(stream.warnings.drain(..).map(|w| format!("stream: {w}")));
    Parsed::scanned(out, merge.bytes)
}

/// Scans the blocks as tasks of the pool, at most one per thread and one more in flight; this
/// thread (never a pool worker) receives the blocks and merges what comes back.
fn scan_pooled(
    blocks: &Receiver<Block>,
    back: &Sender<Arc<Vec<u8>>>,
    ctx: &Ctx,
    fw: &FileWrappers,
    merge: &mut Merge,
) {
    let limit = rayon::current_num_threads() + 1;
    let (done_tx, done) = channel::<(usize, (ScanOutput, u64))>();
    rayon::in_place_scope(|s| {
        let mut in_flight = 0usize;
        for (i, b) in blocks.iter().enumerate() {
            while let Ok((k, part)) = done.try_recv() {
                merge.put(k, part);
                in_flight -= 1;
            }
            if in_flight >= limit {
                if let Ok((k, part)) = done.recv() {
                    merge.put(k, part);
                    in_flight -= 1;
                }
            }
            let (tx, back) = (done_tx.clone(), back.clone());
            in_flight += 1;
            s.spawn(move |_| {
                let part = scan_block(b, &back, ctx, fw);
                let _ = tx.send((i, part));
            });
        }
        drop(done_tx);
        for (k, part) in done.iter() {
            merge.put(k, part);
        }
    });
}

/// Scans the lines a block owns (line numbers count from its first own line), then hands its
/// buffer `back`.
fn scan_block(
    b: Block,
    back: &Sender<Arc<Vec<u8>>>,
    ctx: &Ctx,
    fw: &FileWrappers,
) -> (ScanOutput, u64) {
    let origin = b.at - b.own.0 as u64;
    let own = (b.own.0, b.own.1, origin);
    let mut part = scan::scan_chunk(&b.buf[..b.len], own, ctx.set, ctx.cap, fw);
    if b.continued && part.lines > 0 {
        continue_line(&mut part, &b.buf[b.own.0..b.own.1], b.at);
    }
    let _ = back.send(b.buf);
    (part, (b.own.1 - b.own.0) as u64)
}

/// The blocks' outputs, appended in block order as they come back (in any order).
struct Merge {
    next: usize,
    ready: BTreeMap<usize, (ScanOutput, u64)>,
    out: ScanOutput,
    bytes: u64,
    cap: u64,
}

impl Merge {
    fn new(cap: u64) -> Merge {
        Merge {
            next: 0,
            ready: BTreeMap::new(),
            out: ScanOutput::default(),
            bytes: 0,
            cap,
        }
    }

    fn put(&mut self, i: usize, part: (ScanOutput, u64)) {
        self.ready.insert(i, part);
        while let Some((p, n)) = self.ready.remove(&self.next) {
            self.out.append(p);
            self.out.cap(self.cap);
            self.bytes += n;
            self.next += 1;
        }
    }
}

/// Reads the stream into blocks of whole lines and sends them in order, each with its context;
/// the first `cur` holds the stream's first bytes. Buffers come back from the scan on `spare`
/// and are filled again in place (zeroed once, when first grown), once the decoder below lets
/// go of them too.
fn cut_blocks(
    mut cur: Vec<u8>,
    stream: &mut Stream,
    tx: &SyncSender<Block>,
    spare: &Receiver<Arc<Vec<u8>>>,
) {
    let mut len = cur.len();
    let mut behind = 0usize;
    let mut continued = false;
    let mut at = 0u64;
    // buffers back from the scan, the last one back on top: it is refilled first, while its
    // bytes are still in the cache (a decoder writing into cold memory is slower)
    let mut pool: Vec<Arc<Vec<u8>>> = Vec::new();
    loop {
        // a decoder filling in place needs a window's worth in each buffer it fills
        let want = (behind + block_bytes() + AHEAD).max(len + stream.min_segment());
        if len < want {
            len = stream.fill_block(&mut cur, len, want);
        }
        let last = stream.is_done();
        let cut = if last {
            len
        } else {
            cut_point(&cur[..len], behind)
        };
        let inside = cut > behind && cur[cut - 1] != b'\n';
        // a line cut inside has no look-behind: the block after reads on from the cut
        let keep = if inside {
            cut
        } else {
            context_start(&cur, cut)
        };
        let filled = len;
        pool.extend(spare.try_iter());
        // a new buffer only when none is back: as many exist as the blocks in flight at once
        // (the scan's limit, the channel, this one), whatever the input's size; one dropped
        // here would be allocated and faulted in again a block later
        let mut next = take_free(&mut pool);
        if !last {
            let n = filled - keep;
            if next.len() < n {
                next.resize(n, 0);
            }
            next[..n].copy_from_slice(&cur[keep..filled]);
            len = n;
        }
        let block = Block {
            buf: stream.seal(cur),
            len: filled,
            own: (behind, cut),
            at,
            continued,
        };
        if tx.send(block).is_err() || last {
            return;
        }
        continued = inside;
        at += (cut - behind) as u64;
        behind = cut - keep;
        cur = next;
    }
}

/// The buffer back last that nothing else holds (the decoder holds the one it filled before
/// the current), taken out of `pool`; a new one when there is none.
fn take_free(pool: &mut Vec<Arc<Vec<u8>>>) -> Vec<u8> {
    let Some(i) = pool.iter().rposition(|b| Arc::strong_count(b) == 1) else {
        return Vec::new();
    };
    Arc::try_unwrap(pool.remove(i)).unwrap_or_default()
}

/// Where the block that starts at `behind` in `cur` ends: after its last newline before the
/// look-ahead; in a line longer than a block, after that line's end when the look-ahead holds
/// it, else inside the line.
fn cut_point(cur: &[u8], behind: usize) -> usize {
    let lim = cur.len().saturating_sub(AHEAD).max(behind);
    if let Some(p) = memchr::memrchr(b'\n', &cur[behind..lim]) {
        return behind + p + 1;
    }
    memchr::memchr(b'\n', &cur[lim..]).map_or(lim, |p| lim + p + 1)
}

/// The start of the look-behind of the block that starts at `cut`: the first line start at most
/// [`BEHIND`] bytes before it.
fn context_start(cur: &[u8], cut: usize) -> usize {
    let from = cut.saturating_sub(BEHIND);
    if from == 0 {
        return 0;
    }
    memchr::memchr(b'\n', &cur[from - 1..cut]).map_or(cut, |p| from + p)
}

/// Joins the first line of a block (at input offset `at`) to the last line of the block before,
/// which the boundary cut (a line longer than a block): one line less, line numbers one less,
/// and that line counted once as long and in the sample.
fn continue_line(part: &mut ScanOutput, bytes: &[u8], at: u64) {
    for e in part.events.iter_mut().chain(part.attachments.iter_mut()) {
        e.line = e.line.saturating_sub(1);
    }
    for b in part.boot_lines.iter_mut() {
        *b = b.saturating_sub(1);
    }
    part.boot_lines.retain(|&b| b > 0);
    let first = memchr::memchr(b'\n', bytes).map_or(bytes, |p| &bytes[..p]);
    part.forget_first_line(first, at);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_block_ends_after_its_last_newline_before_the_look_ahead() {
        let mut cur = vec![b'a'; BLOCK + AHEAD];
        cur[10] = b'\n';
        cur[BLOCK - 5] = b'\n';
        cur[BLOCK + 7] = b'\n';
        assert_eq!(cut_point(&cur, 0), BLOCK - 4);
        // no newline before the look-ahead: after the line's end in the look-ahead
        cur[BLOCK - 5] = b'a';
        cur[10] = b'a';
        assert_eq!(cut_point(&cur, 0), BLOCK + 8);
        // none at all: inside the line
        cur[BLOCK + 7] = b'a';
        assert_eq!(cut_point(&cur, 0), BLOCK);
    }

    #[test]
    fn the_look_behind_starts_at_a_line_start() {
        let mut cur = vec![b'a'; BEHIND * 2];
        let cut = BEHIND * 2;
        cur[cut - BEHIND + 3] = b'\n';
        assert_eq!(context_start(&cur, cut), cut - BEHIND + 4);
        // a newline right before the window: the window starts a line
        cur[cut - BEHIND + 3] = b'a';
        cur[cut - BEHIND - 1] = b'\n';
        assert_eq!(context_start(&cur, cut), cut - BEHIND);
        assert_eq!(context_start(&cur[..100], 100), 0);
    }
}
