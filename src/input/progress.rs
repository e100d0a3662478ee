//! How far the reading of the inputs has come, for a progress bar: the bytes taken from the
//! files on disk so far (the compressed bytes of a compressed file, as its decoder consumes
//! them; the bytes of a mapped plain file as its chunks are scanned). One counter for the
//! process, read by the command line's progress thread.

use std::io::Read;
use std::sync::atomic::{AtomicU64, Ordering};

static READ: AtomicU64 = AtomicU64::new(0);

/// Counts `n` more bytes read.
pub fn add(n: u64) {
    READ.fetch_add(n, Ordering::Relaxed);
}

/// Bytes read from disk so far.
pub fn read_bytes() -> u64 {
    READ.load(Ordering::Relaxed)
}

/// A reader that counts what is read through it.
pub struct Counted<R>(pub R);

impl<R: Read> Read for Counted<R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.0.read(buf)?;
        add(n as u64);
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn what_is_read_through_a_counted_reader_is_counted() {
        let before = read_bytes();
        let mut r = Counted(&b"twelve bytes"[..]);
        let mut out = Vec::new();
        r.read_to_end(&mut out).unwrap();
        // other tests may read at the same time: at least these bytes
        assert!(read_bytes() - before >= 12);
    }
}
