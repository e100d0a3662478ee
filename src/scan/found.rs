//! The one pass over a chunk's bytes: the prefilter's candidate lines and, while each part is in
//! the cache just after the prefilter read it, its newlines counted (per [`COUNT_PIECE`]) and
//! the lines the line accounting must read whatever the sample (journal boot separators, dmesg
//! lines at uptime zero) found. [`super::account`] works from this without counting again.

use crate::events::RecognizerSet;

/// Newlines are counted per piece of this many bytes of the region.
pub(super) const COUNT_PIECE: usize = 1024;
/// The prefilter searches a part of this many bytes, then the part is counted.
const PART: usize = 256 << 10;

/// What the pass over a region found (offsets in the region).
pub(super) struct Found {
    /// The prefilter's candidate lines (start, end).
    pub lines: Vec<(usize, usize)>,
    /// Newlines of each [`COUNT_PIECE`] of the region, from the piece `first` on.
    pub newlines: Vec<u16>,
    first: usize,
    /// Starts of the journal's boot separators and of lines holding dmesg's uptime zero.
    pub marks: Vec<usize>,
}

impl Found {
    /// Appends what the text after this one found.
    fn append(&mut self, mut b: Found) {
        self.lines.append(&mut b.lines);
        self.marks.append(&mut b.marks);
        let end = self.first + self.newlines.len();
        let mut rest = &b.newlines[..];
        if b.first + 1 == end {
            // the piece across the boundary was counted in part by each
            if let (Some(l), Some(f)) = (self.newlines.last_mut(), rest.first()) {
                *l += f;
            }
            rest = &rest[1..];
        }
        self.newlines.extend_from_slice(rest);
    }
}

/// The pass over `region` (see the module doc). On a thread of the pool (one chunk among
/// others) the region is searched in halves split at a line start, with `rayon::join`: a thread
/// out of chunks takes half of what another one still has to search, so the last chunks of a
/// buffer end together. The lines are the same (a literal holds no newline, so each hit lies in
/// one half; with a literal that holds one the region is searched whole). Without `split` the
/// region is searched whole on this thread.
pub(super) fn found(set: &RecognizerSet, region: &[u8], split: bool) -> Found {
    let multiline = set.prefilter_literals.iter().any(|l| l.contains('\n'));
    halves(set, region, 0, (multiline, split))
}

/// [`found`] for `region[base..]` given as `hay`.
fn halves(set: &RecognizerSet, hay: &[u8], base: usize, (multiline, split): (bool, bool)) -> Found {
    const HALF: usize = 1 << 20;
    let whole = hay.len() < 2 * HALF
        || rayon::current_thread_index().is_none()
        || rayon::current_num_threads() < 2
        || multiline
        || !split;
    let mid = memchr::memchr(b'\n', &hay[hay.len() / 2..]).map(|p| hay.len() / 2 + p + 1);
    let Some(mid) = mid.filter(|&m| !whole && m < hay.len()) else {
        return leaf(set, hay, base, multiline);
    };
    let (mut a, b) = rayon::join(
        || halves(set, &hay[..mid], base, (multiline, split)),
        || halves(set, &hay[mid..], base + mid, (multiline, split)),
    );
    a.append(b);
    a
}

/// The pass over `hay` (`region[base..]`, starting at a line start), part by part.
fn leaf(set: &RecognizerSet, hay: &[u8], base: usize, multiline: bool) -> Found {
    let first = base / COUNT_PIECE;
    let pieces = (base + hay.len()).div_ceil(COUNT_PIECE) - first;
    let mut f = Found {
        lines: Vec::new(),
        newlines: vec![0; pieces],
        first,
        marks: Vec::new(),
    };
    if multiline {
        f.lines = set.prefilter.lines(hay);
    }
    let mut s = 0usize;
    while s < hay.len() {
        let e = if multiline {
            hay.len()
        } else {
            let to = (s + PART).min(hay.len());
            memchr::memchr(b'\n', &hay[to.saturating_sub(1)..]).map_or(hay.len(), |p| to + p)
        };
        if !multiline {
            let found = set.prefilter.lines(&hay[s..e]);
            f.lines
                .extend(found.into_iter().map(|(a, b)| (base + s + a, base + s + b)));
        }
        count(hay, base, (s, e), &mut f);
        marks(hay, base, (s, e), &mut f.marks);
        s = e;
    }
    if multiline {
        for l in f.lines.iter_mut() {
            *l = (l.0 + base, l.1 + base);
        }
    }
    f.marks.sort_unstable();
    f.marks.dedup();
    f
}

/// Counts the newlines of `hay[s..e]` into the pieces of `f` (`hay` is `region[base..]`).
fn count(hay: &[u8], base: usize, (s, e): (usize, usize), f: &mut Found) {
    let mut x = s;
    while x < e {
        let i = (base + x) / COUNT_PIECE;
        let pe = ((i + 1) * COUNT_PIECE - base).min(e);
        f.newlines[i - f.first] += bytecount::count(&hay[x..pe], b'\n') as u16;
        x = pe;
    }
}

/// The lines of `hay[s..e]` (`hay` is `region[base..]`, starting at a line start) that the line
/// accounting reads whatever the sample: the journal's boot separators, and the lines that hold
/// dmesg's uptime zero.
fn marks(hay: &[u8], base: usize, (s, e): (usize, usize), out: &mut Vec<usize>) {
    let is_boot =
        |l: usize| hay[l..].starts_with(b"-- Boot ") || hay[l..].starts_with(b"-- Reboot --");
    if s == 0 && is_boot(0) {
        out.push(base);
    }
    let lo = s.saturating_sub(1);
    let near = &hay[lo..(e + BOOT_SEP.len() - 1).min(hay.len())];
    for h in BOOT.find_iter(near) {
        let l = lo + h + 1;
        if l >= s && l < e && is_boot(l) {
            out.push(base + l);
        }
    }
    let near = &hay[s..(e + ZERO_STAMP.len() - 1).min(hay.len())];
    let mut past = 0usize;
    for h in ZERO.find_iter(near).map(|h| s + h).filter(|&h| h < e) {
        if h < past {
            continue;
        }
        let l = memchr::memrchr(b'\n', &hay[..h]).map_or(0, |i| i + 1);
        out.push(base + l);
        past = memchr::memchr(b'\n', &hay[h..]).map_or(hay.len(), |i| h + i);
    }
}

/// The journal's boot separators (`-- Boot …`, `-- Reboot --`), at a line start.
const BOOT_SEP: &[u8] = b"\n-- ";
static BOOT: std::sync::LazyLock<Rare> = std::sync::LazyLock::new(|| Rare::new(BOOT_SEP, (0, 1)));
/// dmesg's uptime zero (`[%5lu.%06lu]`).
const ZERO_STAMP: &[u8] = b"[    0.000000]";
static ZERO: std::sync::LazyLock<Rare> =
    std::sync::LazyLock::new(|| Rare::new(ZERO_STAMP, (0, 13)));

/// The search for a needle by two of its bytes chosen for their rarity in logs, where AVX2 is
/// there, else by [`memchr::memmem`] (whose own choice, made for any text, is poor here: it
/// picks `-` and space in `\n-- `, which every ` - ` of a log matches, and digits in
/// `[    0.000000]`, where a newline and a dash, and two brackets 13 bytes apart, are rare).
struct Rare {
    needle: &'static [u8],
    #[cfg(target_arch = "x86_64")]
    pair: Option<memchr::arch::x86_64::avx2::packedpair::Finder>,
    any: memchr::memmem::Finder<'static>,
}

impl Rare {
    #[cfg_attr(not(target_arch = "x86_64"), allow(unused_variables))]
    fn new(needle: &'static [u8], (i, j): (u8, u8)) -> Rare {
        Rare {
            needle,
            #[cfg(target_arch = "x86_64")]
            pair: memchr::arch::all::packedpair::Pair::with_indices(needle, i, j)
                .and_then(|p| memchr::arch::x86_64::avx2::packedpair::Finder::with_pair(needle, p)),
            any: memchr::memmem::Finder::new(needle),
        }
    }

    /// The first occurrence in `hay`.
    fn find(&self, hay: &[u8]) -> Option<usize> {
        #[cfg(target_arch = "x86_64")]
        if let Some(f) = self
            .pair
            .as_ref()
            .filter(|f| hay.len() >= f.min_haystack_len())
        {
            return f.find(hay, self.needle);
        }
        self.any.find(hay)
    }

    /// Every occurrence in `hay`, in order.
    fn find_iter<'h>(&'h self, hay: &'h [u8]) -> impl Iterator<Item = usize> + 'h {
        let mut at = 0usize;
        std::iter::from_fn(move || {
            let h = at + self.find(hay.get(at..)?)?;
            at = h + 1;
            Some(h)
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rare_finds_what_memmem_finds() {
        let mut hay = b"x - y\n-- Boot 1 --\n- a\n[    0.000000] Linux\n".repeat(40);
        hay.extend_from_slice(b"-- R");
        for (r, n) in [(&*BOOT, BOOT_SEP), (&*ZERO, ZERO_STAMP)] {
            for from in [0, 3, 700, hay.len() - 20] {
                let h = &hay[from..];
                let want: Vec<usize> = memchr::memmem::find_iter(h, n).collect();
                assert_eq!(r.find_iter(h).collect::<Vec<_>>(), want);
            }
        }
    }

    #[test]
    fn appending_adds_the_piece_across_the_boundary() {
        let mut a = Found {
            lines: vec![(0, 1)],
            newlines: vec![3, 2],
            first: 0,
            marks: vec![],
        };
        let b = Found {
            lines: vec![(1500, 1600)],
            newlines: vec![1, 4],
            first: 1,
            marks: vec![1500],
        };
        a.append(b);
        assert_eq!(a.newlines, vec![3, 3, 4]);
        assert_eq!(a.marks, vec![1500]);
    }
}
