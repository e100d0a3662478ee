//! Lines over the record cap ([`MAX_RECORD_BYTES`]): recognizers read their head and the
//! window around their last anchor, so a huge line is never copied whole and an anchor at its
//! end still raises its event; anchors in neither part are counted as lost.

use super::lines::trim_cr;
use super::{ScanOutput, MAX_RECORD_BYTES};

/// The head of a line over [`MAX_RECORD_BYTES`] that recognizers read (its prefix and first
/// words); with the window around its last anchor it fits the record cap.
pub(super) const LONG_HEAD: usize = 28 * 1024;
/// Bytes of a long line kept before and after its last anchor.
const LONG_AROUND: (usize, usize) = (8 * 1024, 27 * 1024);

/// For a line over [`MAX_RECORD_BYTES`]: the window (offsets in the line) around its last anchor
/// past [`LONG_HEAD`], which recognizers read after the head, so an anchor at the end of a huge
/// line still raises its event without the line being copied. Anchors in neither part are
/// counted in `out.lost_anchors`. `hits` are the line's anchor positions, relative to `start`.
pub(super) fn window(
    buf: &[u8],
    (ls, le): (usize, usize),
    hits: &[usize],
    start: usize,
    out: &mut ScanOutput,
) -> Option<(usize, usize)> {
    let len = trim_cr(&buf[ls..le]).len();
    if len <= MAX_RECORD_BYTES {
        return None;
    }
    let rel = |h: &usize| (start + h).saturating_sub(ls);
    let last = hits.last().map(rel).filter(|&h| h >= LONG_HEAD)?;
    let w = (
        last.saturating_sub(LONG_AROUND.0).max(LONG_HEAD),
        (last + LONG_AROUND.1).min(len),
    );
    out.lost_anchors += hits
        .iter()
        .map(rel)
        .filter(|&h| h >= LONG_HEAD && !(w.0..w.1).contains(&h))
        .count() as u64;
    Some(w)
}
