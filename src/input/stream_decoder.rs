//! A gzip or zstd stream decoded by the thread that reads it: through [`Read`], or for zstd
//! straight into the scan's blocks ([`super::zstd_blocks`]); the expansion ratio is checked as
//! bytes are produced, and problems become notes that end the stream.

use super::decode::{note, read_ahead, Counting, CountingBuf, Notes, CHUNK, RATIO_FLOOR};
use super::zstd_blocks::{starts_modern, ZstdBlocks};
use super::Limits;
use std::io::{BufRead, Read};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;

/// A gzip or zstd stream decoded by the thread that reads it, straight into the reader's
/// buffer (for a streamed input, the block the scan reads: no copy between the decoder's output
/// and the scan). The expansion ratio is checked at every `CHUNK` of output, as a decoder
/// thread checks it; problems become notes and end the stream.
pub struct StreamDecoder {
    dec: Option<Dec>,
    what: &'static str,
    limits: Limits,
    out: u64,
    /// What the decoder had to say about this stream (read at its end).
    pub notes: Notes,
    /// Compressed bytes the decoder consumed so far (for the per-member ratio of a tar inside).
    pub consumed: Option<Arc<AtomicU64>>,
}

/// The decoder of a stream: any, or zstd's that can also fill the caller's buffers in place.
enum Dec {
    Any(Box<dyn Read + Send>),
    Blocks(Box<ZstdBlocks>),
}

impl Read for Dec {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Dec::Any(r) => r.read(buf),
            Dec::Blocks(z) => z.read(buf),
        }
    }
}

impl StreamDecoder {
    /// Whether [`StreamDecoder::fill_in_place`] decodes straight into the buffer given (a zstd
    /// stream that is not of the legacy format, until it ends).
    pub fn in_place(&self) -> bool {
        matches!(self.dec, Some(Dec::Blocks(_)))
    }

    /// The bytes the next buffer of [`StreamDecoder::fill_in_place`] must take before it is
    /// sealed (0: any number, also when the stream does not fill in place).
    pub fn min_segment(&self) -> usize {
        match self.dec.as_ref() {
            Some(Dec::Blocks(z)) => z.min_segment(),
            _ => 0,
        }
    }

    /// Decodes into `buf[from..]` up to at least `want` bytes unless the stream ends (then
    /// short of it; problems become notes, as with a read); returns where the decoded bytes
    /// end, at most [`super::zstd_blocks::BLOCK_MAX`] past `want` (`buf` has that room). Without a decoder in place
    /// it returns `from`. A buffer filled is handed back with [`StreamDecoder::seal`] before
    /// another is filled.
    pub fn fill_in_place(&mut self, buf: &mut [u8], from: usize, want: usize) -> usize {
        let Some(Dec::Blocks(z)) = self.dec.as_mut() else {
            return from;
        };
        let (end, err) = match z.fill(buf, from, want) {
            // short of `want`: the end, or an error the next fill tells
            Ok(end) if end < want => (end, z.fill(buf, end, want).err()),
            Ok(end) => (end, None),
            Err(e) => (from, Some(e)),
        };
        self.out += (end - from) as u64;
        if let Some(w) = self.ratio() {
            self.end(Some(w));
        } else if end < want {
            let w = err.map(|e| self.corrupt(&e));
            self.end(w);
        }
        end
    }

    /// Ends the filling of `buf` (see [`ZstdBlocks::seal`]): shared, as the decoder may still
    /// read it back while it fills the next buffer.
    pub fn seal(&mut self, buf: Vec<u8>) -> Arc<Vec<u8>> {
        match self.dec.as_mut() {
            Some(Dec::Blocks(z)) => z.seal(buf),
            _ => Arc::new(buf),
        }
    }

    fn corrupt(&self, e: &std::io::Error) -> String {
        format!(
            "{}: corrupt or truncated stream after {} decompressed bytes: {e}; the part before is analyzed",
            self.what, self.out
        )
    }

    fn end(&mut self, why: Option<String>) {
        self.dec = None;
        if let Some(w) = why {
            note(&self.notes, w);
        } else if self.out == 0 && self.notes.lock().map(|n| n.is_empty()).unwrap_or(false) {
            note(
                &self.notes,
                format!(
                    "{}: the compressed stream holds no data (header only)",
                    self.what
                ),
            );
        }
    }

    /// The note of a ratio past the cap, if it is.
    fn ratio(&self) -> Option<String> {
        let hit =
            self.out > RATIO_FLOOR && self.out / self.consumed().max(1) > self.limits.max_ratio;
        hit.then(|| format!(
            "{}: expansion ratio passed {}:1 after {} bytes (decompression bomb?); the rest is not read",
            self.what, self.limits.max_ratio, self.out
        ))
    }

    /// At the end: the ratio of a last chunk shorter than [`CHUNK`] (a full one was checked).
    fn partial_ratio(&self) -> Option<String> {
        (self.out % CHUNK as u64 != 0)
            .then(|| self.ratio())
            .flatten()
    }

    fn consumed(&self) -> u64 {
        self.consumed
            .as_ref()
            .map_or(0, |c| c.load(Ordering::Relaxed))
    }
}

impl Read for StreamDecoder {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let Some(dec) = self.dec.as_mut() else {
            return Ok(0);
        };
        // never past the next chunk boundary, where the ratio is checked
        let room = CHUNK - (self.out % CHUNK as u64) as usize;
        let want = buf.len().min(room);
        let n = loop {
            match dec.read(&mut buf[..want]) {
                Ok(n) => break n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => {
                    // a partial last chunk is checked before the error is told
                    let w = self.partial_ratio().unwrap_or_else(|| self.corrupt(&e));
                    self.end(Some(w));
                    return Ok(0);
                }
            }
        };
        if n == 0 {
            let w = self.partial_ratio();
            self.end(w);
            return Ok(0);
        }
        self.out += n as u64;
        if self.out % CHUNK as u64 == 0 {
            if let Some(w) = self.ratio() {
                self.end(Some(w));
            }
        }
        Ok(n)
    }
}

/// Opens a gzip (`gzip == true`) or zstd stream over `source`, decoded as it is read (by the
/// thread that reads it: see [`StreamDecoder`]). The ratio counts the compressed bytes read
/// from `source` (through a buffer of the decoder's input size).
pub fn open_stream(source: Box<dyn Read + Send>, gzip: bool, limits: Limits) -> StreamDecoder {
    let consumed = Arc::new(AtomicU64::new(0));
    let counted = Counting {
        inner: source,
        n: consumed.clone(),
    };
    // the buffer sizes the decoders give a plain reader (flate2: 32 KiB)
    let cap = if gzip {
        32 << 10
    } else {
        zstd::zstd_safe::DCtx::in_size()
    };
    let buffered = Box::new(std::io::BufReader::with_capacity(cap, counted));
    decoder(buffered, consumed, gzip, limits)
}

/// [`open_stream`] over a compressed file read ahead ([`read_ahead`]): the decoder reads its
/// chunks in place; the ratio counts the compressed bytes it consumed.
pub fn open_stream_ahead(
    source: Box<dyn Read + Send>,
    gzip: bool,
    limits: Limits,
) -> StreamDecoder {
    let consumed = Arc::new(AtomicU64::new(0));
    let counted = CountingBuf {
        inner: read_ahead(source),
        n: consumed.clone(),
    };
    decoder(Box::new(counted), consumed, gzip, limits)
}

fn decoder(
    source: Box<dyn BufRead + Send>,
    consumed: Arc<AtomicU64>,
    gzip: bool,
    limits: Limits,
) -> StreamDecoder {
    let notes: Notes = Arc::default();
    let what = if gzip { "gzip" } else { "zstd" };
    let dec = if gzip {
        Ok(Dec::Any(Box::new(flate2::bufread::MultiGzDecoder::new(
            source,
        ))))
    } else {
        zstd_decoder(source)
    };
    let dec = dec
        .map_err(|e| note(&notes, format!("zstd: cannot start decoding: {e}")))
        .ok();
    StreamDecoder {
        dec,
        what,
        limits,
        out: 0,
        notes,
        consumed: Some(consumed),
    }
}

/// A zstd decoder over `source`: libzstd's buffer-less one ([`ZstdBlocks`]), or its streaming
/// one for a stream of the legacy (pre-1.0) format or too short to tell.
fn zstd_decoder(mut source: Box<dyn BufRead + Send>) -> std::io::Result<Dec> {
    let modern = source.fill_buf().map(starts_modern).unwrap_or(false);
    if modern {
        return Ok(Dec::Blocks(Box::new(ZstdBlocks::new(source)?)));
    }
    let d = zstd::stream::read::Decoder::with_buffer(source)?;
    Ok(Dec::Any(Box::new(d)))
}
