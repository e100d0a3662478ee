//! zstd decoded straight into the scan's blocks. libzstd's streaming decoder writes each block
//! into a window of its own and copies it out: on a large `.zst` that copy is a seventh of the
//! decoding thread's time, and that thread is the one the run waits on. Its buffer-less API
//! decodes a block into any memory, provided the bytes the block refers back to (up to the
//! frame's window) are in the same contiguous run of output or in the run before it. So:
//!
//! - Read as a plain [`Read`] (sniffing, tar members, small inputs), or filled a little at a
//!   time, blocks are decoded into a round buffer of this decoder's own (a window and two
//!   blocks) and copied out: the streaming decoder's work, done here.
//! - Once a fill ([`ZstdBlocks::fill`]) has room for a window and a block, the frame's blocks
//!   are decoded straight into the caller's buffer. A buffer is a run of output (a *segment*);
//!   when the caller moves on to another buffer it first hands the filled one over
//!   ([`ZstdBlocks::seal`]) and gets it back shared: the decoder keeps a reference to it, so the
//!   run before the current one can be neither changed nor freed while libzstd may read it, and
//!   it lets go of the one before. Each buffer must then take at least
//!   [`ZstdBlocks::min_segment`] decoded bytes, so that the run before always holds the rest of
//!   the window; one sealed shorter stops the stream with an error, never a wrong byte.
//!
//! A frame whose window is larger than [`DIRECT_WINDOW`] is decoded through the round buffer
//! (a block of the scan would have to hold a window); one larger than libzstd's default limit
//! (`MAX_WINDOW`, 128 MiB) is refused as the streaming decoder refuses it. Skippable frames are skipped
//! without being held. Legacy (pre-1.0) frames are left to the streaming decoder: see
//! [`starts_modern`]. A corrupt block is told by libzstd (and by the frame's checksum, which
//! is verified), as by the streaming decoder.

use std::io::{self, BufRead, Read};
use std::mem::MaybeUninit;
use std::ptr::NonNull;
use std::sync::Arc;
use zstd_sys as z;

/// Decoded bytes of one zstd block at most: a fill writes up to this much past what it was
/// asked for.
pub const BLOCK_MAX: usize = 128 << 10;
/// The largest window decoded straight into the caller's buffers.
pub const DIRECT_WINDOW: u64 = 8 << 20;
/// The largest window decoded at all (libzstd's default `ZSTD_d_windowLogMax`, 2^27).
const MAX_WINDOW: u64 = 1 << 27;
/// A frame header is at most this long (`ZSTD_FRAMEHEADERSIZE_MAX`).
const HEADER_MAX: usize = 18;

/// Whether a zstd stream that starts with `head` is one this decoder reads: a zstd frame or a
/// skippable one (a legacy frame's magic is another number).
pub fn starts_modern(head: &[u8]) -> bool {
    head.len() >= 4
        && (head[..4] == [0x28, 0xb5, 0x2f, 0xfd]
            || (head[0] & 0xf0 == 0x50 && head[1..4] == [0x2a, 0x4d, 0x18]))
}

/// An owned decompression context.
struct Dctx(NonNull<z::ZSTD_DCtx>);

// SAFETY: a ZSTD_DCtx holds no thread-bound state; it is used by one thread at a time (`&mut`).
unsafe impl Send for Dctx {}

impl Drop for Dctx {
    fn drop(&mut self) {
        // SAFETY: created by ZSTD_createDCtx, freed once.
        unsafe { z::ZSTD_freeDCtx(self.0.as_ptr()) };
    }
}

fn zerr(code: usize) -> io::Error {
    // SAFETY: ZSTD_getErrorName returns a static NUL-terminated string for any code.
    let name = unsafe { std::ffi::CStr::from_ptr(z::ZSTD_getErrorName(code)) };
    io::Error::new(
        io::ErrorKind::InvalidData,
        name.to_string_lossy().into_owned(),
    )
}

fn is_error(code: usize) -> bool {
    // SAFETY: a pure function of its argument.
    unsafe { z::ZSTD_isError(code) != 0 }
}

/// A zstd stream read as a [`Read`] or filled into the caller's buffers (see the module doc).
pub struct ZstdBlocks {
    dctx: Dctx,
    src: Box<dyn BufRead + Send>,
    /// Compressed bytes gathered where the source's buffer holds fewer than a step needs.
    staged: Vec<u8>,
    /// The window of the frame being decoded; `None` between frames.
    window: Option<u64>,
    /// The round buffer of the [`Read`] path: blocks are decoded at `pos`, read out from `out`.
    /// Not zeroed: a stream's pages are touched only as far as it is decoded (a fleet of small
    /// `.zst` files, each with a 2 MiB window, would otherwise zero 2.3 MiB apiece); only the
    /// bytes libzstd wrote (`..pos` of this run, and the run before) are ever read.
    ring: Box<[MaybeUninit<u8>]>,
    pos: usize,
    out: usize,
    /// The ring went round in this frame: the frame's history is no longer all in the ring's
    /// current run (which starts at 0).
    wrapped: bool,
    /// This frame is being decoded into the caller's buffers.
    direct: bool,
    /// The caller's buffer being filled (its address) and the end of its decoded bytes.
    open: Option<(usize, usize)>,
    /// Where decoding straight into the open buffer began (bytes before it there came from
    /// elsewhere: its look-behind, or the ring); `None` before its first direct step.
    seg_from: Option<usize>,
    /// An error met after some bytes of a fill: returned by the next call.
    pending: Option<io::Error>,
    /// The buffer of the run before the open one (libzstd reads its window from it).
    held: Option<Arc<Vec<u8>>>,
    /// A buffer sealed with less than a window of a frame that goes on: the next cannot be
    /// filled (a caller's fault, told rather than decoded wrong).
    short: bool,
    done: bool,
}

impl ZstdBlocks {
    /// A decoder of the compressed bytes of `src`.
    pub fn new(src: Box<dyn BufRead + Send>) -> io::Result<ZstdBlocks> {
        // SAFETY: no precondition; a null result is checked.
        let raw = unsafe { z::ZSTD_createDCtx() };
        let dctx = NonNull::new(raw)
            .map(Dctx)
            .ok_or_else(|| io::Error::other("zstd: cannot allocate a decoder"))?;
        Ok(ZstdBlocks {
            dctx,
            src,
            staged: Vec::new(),
            window: None,
            ring: Box::default(),
            pos: 0,
            out: 0,
            wrapped: false,
            direct: false,
            open: None,
            seg_from: None,
            pending: None,
            held: None,
            short: false,
            done: false,
        })
    }

    /// The decoded bytes the buffer about to be filled by [`ZstdBlocks::fill`] must take from
    /// where its filling starts before it is sealed (0: any number): a window and a block while
    /// a frame is decoded in place. A frame that could go in place asks that much room past
    /// what the round buffer still holds (a smaller fill copies).
    pub fn min_segment(&self) -> usize {
        match self.window {
            Some(w) if w <= DIRECT_WINDOW && self.direct => w as usize + BLOCK_MAX,
            Some(w) if w <= DIRECT_WINDOW => w as usize + BLOCK_MAX + (self.pos - self.out),
            _ => 0,
        }
    }

    /// The next `n` bytes of compressed input, contiguous, not consumed (fewer at its end).
    fn peek(&mut self, n: usize) -> io::Result<&[u8]> {
        if self.staged.is_empty() {
            let len = self.src.fill_buf()?.len();
            if len >= n || len == 0 {
                let b = self.src.fill_buf()?;
                return Ok(&b[..n.min(b.len())]);
            }
        }
        while self.staged.len() < n {
            let b = self.src.fill_buf()?;
            if b.is_empty() {
                break;
            }
            let take = (n - self.staged.len()).min(b.len());
            self.staged.extend_from_slice(&b[..take]);
            self.src.consume(take);
        }
        Ok(&self.staged[..n.min(self.staged.len())])
    }

    /// Consumes `n` bytes of what [`ZstdBlocks::peek`] gave.
    fn eat(&mut self, n: usize) {
        if self.staged.is_empty() {
            self.src.consume(n);
        } else {
            self.staged.drain(..n);
        }
    }

    /// Skips `n` bytes of compressed input (a skippable frame's content).
    fn skip(&mut self, mut n: u64) -> io::Result<()> {
        let s = (self.staged.len() as u64).min(n) as usize;
        self.staged.drain(..s);
        n -= s as u64;
        while n > 0 {
            let len = self.src.fill_buf()?.len();
            if len == 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "skippable frame cut short",
                ));
            }
            let k = (len as u64).min(n) as usize;
            self.src.consume(k);
            n -= k as u64;
        }
        Ok(())
    }

    /// Starts the next frame (skippable ones are skipped): `false` at the end of the input.
    fn start_frame(&mut self) -> io::Result<bool> {
        loop {
            let head = self.peek(HEADER_MAX)?;
            if head.is_empty() {
                return Ok(false);
            }
            let mut h: z::ZSTD_FrameHeader = unsafe { std::mem::zeroed() };
            // SAFETY: `head` is valid for its length; `h` is a plain C struct.
            let r = unsafe { z::ZSTD_getFrameHeader(&mut h, head.as_ptr().cast(), head.len()) };
            if is_error(r) {
                return Err(zerr(r));
            }
            if r > 0 {
                return Err(io::Error::new(
                    io::ErrorKind::UnexpectedEof,
                    "frame header cut short",
                ));
            }
            if h.frameType == z::ZSTD_FrameType_e::ZSTD_skippableFrame {
                self.eat(h.headerSize as usize);
                self.skip(h.frameContentSize)?;
                continue;
            }
            if h.windowSize > MAX_WINDOW {
                return Err(io::Error::new(
                    io::ErrorKind::InvalidData,
                    format!(
                        "frame needs a window of {} bytes, more than the {MAX_WINDOW} accepted",
                        h.windowSize
                    ),
                ));
            }
            // SAFETY: a valid context.
            let r = unsafe { z::ZSTD_decompressBegin(self.dctx.0.as_ptr()) };
            if is_error(r) {
                return Err(zerr(r));
            }
            self.window = Some(h.windowSize.max(1));
            self.direct = false;
            self.wrapped = false;
            return Ok(true);
        }
    }

    /// Decodes the frame's next step into `dst` (room for `cap` bytes, at least a block):
    /// `Some(bytes written)`, possibly 0 (a header or a checksum), or `None` at the frame's end.
    ///
    /// # Safety
    /// `dst` is valid for writes of `cap` bytes, and the output written before it in this frame
    /// is still there, unchanged, as the module doc lays out.
    unsafe fn step(&mut self, dst: *mut u8, cap: usize) -> io::Result<Option<usize>> {
        let ctx = self.dctx.0.as_ptr();
        let need = z::ZSTD_nextSrcSizeToDecompress(ctx);
        if need == 0 {
            self.window = None;
            return Ok(None);
        }
        let src = self.peek(need)?;
        if src.len() < need {
            return Err(io::Error::new(
                io::ErrorKind::UnexpectedEof,
                "zstd frame cut short",
            ));
        }
        let r = z::ZSTD_decompressContinue(ctx, dst.cast(), cap, src.as_ptr().cast(), need);
        if is_error(r) {
            return Err(zerr(r));
        }
        self.eat(need);
        Ok(Some(r))
    }

    /// Decodes the next block into the ring (its read-out part is empty): `false` at the end.
    fn ring_step(&mut self) -> io::Result<bool> {
        loop {
            if self.window.is_none() && !self.start_frame()? {
                return Ok(false);
            }
            let w = self.window.unwrap_or(1) as usize;
            let size = w + 2 * BLOCK_MAX + 64;
            if self.pos == 0 && self.ring.len() < size {
                self.ring = Box::new_uninit_slice(size);
            }
            if self.ring.len() - self.pos < BLOCK_MAX {
                self.pos = 0;
                self.out = 0;
                self.wrapped = true;
            }
            let (at, cap) = (self.pos, self.ring.len() - self.pos);
            // SAFETY: the ring is at least a window and two blocks: a run of it and the run
            // before hold the window (libzstd's round buffer), and it is only written here.
            let dst = unsafe { self.ring.as_mut_ptr().add(at).cast::<u8>() };
            match unsafe { self.step(dst, cap)? } {
                Some(n) => {
                    self.pos += n;
                    if n > 0 {
                        return Ok(true);
                    }
                }
                None => {
                    // the next frame starts the ring again
                    self.pos = 0;
                    self.out = 0;
                }
            }
        }
    }

    /// Copies what the ring holds unread into `buf`; returns the bytes copied.
    fn drain_ring(&mut self, buf: &mut [u8]) -> usize {
        let n = (self.pos - self.out).min(buf.len());
        // SAFETY: `out..pos` of the ring's current run was written by libzstd (initialized).
        let done =
            unsafe { std::slice::from_raw_parts(self.ring.as_ptr().add(self.out).cast::<u8>(), n) };
        buf[..n].copy_from_slice(done);
        self.out += n;
        n
    }

    /// Fills `buf[from..]` until it holds decoded bytes up to at least `want` (or the stream
    /// ends), straight where it can (see the module doc); returns where they end (at most
    /// [`BLOCK_MAX`] past `want`). Short of `want` at the end or on an error, which the next
    /// call returns (the bytes before it come first); at the end the next call returns `from`. `buf` must have room for [`BLOCK_MAX`] bytes past `want`, and
    /// be the buffer filled last time, from where it ended, unless that one was sealed.
    pub fn fill(&mut self, buf: &mut [u8], from: usize, want: usize) -> io::Result<usize> {
        let addr = buf.as_ptr() as usize;
        if want + BLOCK_MAX > buf.len() || from > want {
            return Err(io::Error::other(
                "zstd: a fill needs a block's room past its end",
            ));
        }
        if let Some(e) = self.pending.take() {
            return Err(e);
        }
        match self.open {
            Some((a, end)) if a != addr || end != from => {
                return Err(io::Error::other("zstd: the buffer before was not sealed"));
            }
            None if self.short && !self.done => {
                return Err(io::Error::other(
                    "zstd: a buffer shorter than the window was sealed",
                ));
            }
            None => self.seg_from = None,
            _ => {}
        }
        let mut at = from;
        match self.fill_from(buf, &mut at, want) {
            Ok(()) => Ok(at),
            // the bytes before the error are given first; the error comes with the next call
            Err(e) if at > from => {
                self.pending = Some(e);
                Ok(at)
            }
            Err(e) => Err(e),
        }
    }

    /// [`ZstdBlocks::fill`]'s loop; `at` is where the decoded bytes end, also on an error.
    fn fill_from(&mut self, buf: &mut [u8], at: &mut usize, want: usize) -> io::Result<()> {
        let addr = buf.as_ptr() as usize;
        while *at < want && !self.done {
            *at += self.drain_ring(&mut buf[*at..want]);
            if *at >= want {
                break;
            }
            if self.window.is_none() && !self.start_frame()? {
                self.done = true;
                break;
            }
            let w = self.window.unwrap_or(1);
            // a frame goes in place once its history is in one run of the ring (libzstd reads
            // it there) and this fill has room for a window and a block (the next fill then
            // finds the rest of the window in this one)
            let history_here = !self.wrapped || self.pos as u64 >= w;
            let room = (want - *at) as u64 >= w + BLOCK_MAX as u64;
            if w <= DIRECT_WINDOW && (self.direct || (history_here && room)) {
                self.direct = true;
                self.open = Some((addr, *at));
                self.seg_from.get_or_insert(*at);
                // SAFETY: `buf[at..]` is writable and holds a block; the frame's output before
                // it is contiguous before `at` in this buffer, in the buffer sealed before it
                // (held), or in the ring, which is not written while the frame is direct.
                match unsafe { self.step(buf.as_mut_ptr().add(*at), buf.len() - *at)? } {
                    Some(n) => *at += n,
                    None => (self.pos, self.out) = (0, 0),
                }
                self.open = Some((addr, *at));
            } else if !self.ring_step()? {
                self.done = true;
            }
        }
        Ok(())
    }

    /// Ends the filling of `buf` (the buffer filled last), which the decoder then holds, shared,
    /// until the next buffer has been sealed in turn.
    pub fn seal(&mut self, buf: Vec<u8>) -> Arc<Vec<u8>> {
        let shared = Arc::new(buf);
        let this = shared.as_ptr() as usize;
        if self.open.is_some_and(|(a, _)| a != this) {
            // not the buffer being filled: the decoder has nothing to keep of it
            return shared;
        }
        if let Some((_, end)) = self.open {
            self.open = None;
            let len = (end - self.seg_from.unwrap_or(end)) as u64;
            let goes_on = self.direct && self.window.is_some();
            self.short = goes_on && len < self.window.unwrap_or(0);
            self.held = Some(shared.clone());
        }
        shared
    }
}

impl Read for ZstdBlocks {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.open.is_some() || self.direct {
            return Err(io::Error::other(
                "zstd: read after a fill into the caller's buffers",
            ));
        }
        while self.out == self.pos {
            if self.done || !self.ring_step()? {
                self.done = true;
                return Ok(0);
            }
        }
        Ok(self.drain_ring(buf))
    }
}

#[cfg(test)]
mod tests;
