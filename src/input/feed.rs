//! What a stream of the pipeline reads: any reader, or a decoder that fills the scan's blocks
//! in place ([`super::zstd_blocks`]), behind the bytes its format was told by.

use super::stream_decoder::StreamDecoder;
use std::io::{Cursor, Read};

/// What a [`Stream`](super::container::Stream) reads: any reader, or a decoder that can fill
/// the pipeline's blocks in place, behind the bytes already read from it (those its format was
/// told by).
pub enum Feed {
    /// Read through [`Read`].
    Any(Box<dyn Read + Send>),
    /// Its first bytes, then the decoder's.
    Decoded(Cursor<Vec<u8>>, Box<StreamDecoder>),
}

impl Feed {
    /// Any reader.
    pub fn any(r: impl Read + Send + 'static) -> Feed {
        Feed::Any(Box::new(r))
    }

    /// This feed with `head` (bytes read from it) in front again.
    pub(super) fn after(self, head: Vec<u8>) -> Feed {
        match self {
            Feed::Any(r) => Feed::Any(Box::new(Cursor::new(head).chain(r))),
            Feed::Decoded(pre, dec) => {
                let mut all = head;
                all.extend_from_slice(&pre.get_ref()[pre.position() as usize..]);
                Feed::Decoded(Cursor::new(all), dec)
            }
        }
    }

    /// As a plain reader (what a tar or a journal reads).
    pub(super) fn boxed(self) -> Box<dyn Read + Send> {
        match self {
            Feed::Any(r) => r,
            Feed::Decoded(pre, dec) => Box::new(pre.chain(dec)),
        }
    }

    /// The decoder, when it is the next to read and fills in place.
    pub(super) fn in_place(&mut self) -> Option<&mut StreamDecoder> {
        match self {
            Feed::Decoded(pre, dec) if pre.position() as usize >= pre.get_ref().len() => {
                dec.in_place().then_some(&mut **dec)
            }
            _ => None,
        }
    }
}

impl Read for Feed {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        match self {
            Feed::Any(r) => r.read(buf),
            Feed::Decoded(pre, dec) => match pre.read(buf)? {
                0 => dec.read(buf),
                n => Ok(n),
            },
        }
    }
}
