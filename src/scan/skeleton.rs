//! Which digit runs of a message are detail values ([`crate::events::details`]), found once per
//! *skeleton*: the message with each digit run written as one 0xfe byte. The table's `after`s
//! hold no digit and a value ends at a byte that is not one, so which runs are detail values
//! depends on the skeleton alone; the lines of a storm share a few skeletons, and the table's
//! search (an automaton over the message, some 0.8 us a line) runs once for each.

use super::{FastBuild, FastMap};
use crate::events::details::DetailValues;
use std::hash::BuildHasher;

/// Skeletons one chunk remembers at most (past them, a message is searched every time).
const MAX_SKELETONS: usize = 1024;

/// Skeletons with the same hash, each with which of its digit runs are detail values.
type Bucket = Vec<(Box<[u8]>, Box<[bool]>)>;

/// The skeletons met in one chunk.
#[derive(Default)]
pub(super) struct Skeletons {
    map: FastMap<u64, Bucket>,
    len: usize,
    hasher: FastBuild,
    /// The skeleton being read and its digit runs (reused).
    skel: Vec<u8>,
    runs: Vec<(usize, usize)>,
    edges: Vec<u32>,
}

impl Skeletons {
    /// Appends `body` to `sig` with each digit run of a detail value written as one 0xfe byte:
    /// what [`mask_details`] appends.
    pub(super) fn mask(&mut self, sig: &mut Vec<u8>, body: &[u8], details: &DetailValues) {
        if body.len() >= u32::MAX as usize {
            mask_details(sig, body, details);
            return;
        }
        self.read(body);
        if self.runs.is_empty() {
            sig.extend_from_slice(body);
            return;
        }
        let h = self.hasher.hash_one(&self.skel[..]);
        let skel = &self.skel;
        let found = self
            .map
            .get(&h)
            .and_then(|b| b.iter().find(|(s, _)| s[..] == skel[..]));
        if let Some((_, d)) = found {
            write(sig, body, &self.runs, d);
            return;
        }
        let d = detail_runs(body, &self.runs, details);
        write(sig, body, &self.runs, &d);
        if self.len < MAX_SKELETONS {
            let b = self.map.entry(h).or_default();
            b.push((self.skel.clone().into_boxed_slice(), d));
            self.len += 1;
        }
    }

    /// Reads `body` into the skeleton and its digit runs, in one pass without branches on the
    /// bytes (the runs of a message with addresses are many and short: a branch per byte was
    /// mispredicted at each run's ends).
    fn read(&mut self, body: &[u8]) {
        let n = body.len();
        self.skel.clear();
        self.skel.resize(n, 0);
        self.edges.clear();
        self.edges.resize(n + 1, 0);
        // slices held in locals: a byte stored through a `Vec` may alias its length, which was
        // then read again at every byte
        let (skel, edges) = (&mut self.skel[..], &mut self.edges[..]);
        let (mut i, mut j, mut k, mut prev) = (0usize, 0usize, 0usize, false);
        while i < n {
            // eight bytes without a digit after a byte that is none are copied as they are
            if !prev && i + 8 <= n {
                let w: [u8; 8] = body[i..i + 8].try_into().expect("eight bytes");
                if !has_digit(u64::from_le_bytes(w)) {
                    skel[j..j + 8].copy_from_slice(&w);
                    (i, j) = (i + 8, j + 8);
                    continue;
                }
            }
            let c = body[i];
            let d = c.wrapping_sub(b'0') < 10;
            skel[j] = if d { 0xfe } else { c };
            j += usize::from(!(d & prev));
            edges[k] = i as u32;
            k += usize::from(d != prev);
            prev = d;
            i += 1;
        }
        edges[k] = n as u32;
        k += usize::from(prev);
        self.skel.truncate(j);
        self.runs.clear();
        let pairs = self.edges[..k].chunks_exact(2);
        self.runs
            .extend(pairs.map(|e| (e[0] as usize, e[1] as usize)));
    }
}

/// Whether one of the eight bytes of `w` is an ASCII digit (a byte `c ^ 0x30` below 10; bytes
/// of 0x80 and above never count).
fn has_digit(w: u64) -> bool {
    const ONES: u64 = 0x0101_0101_0101_0101;
    let t = w ^ (ONES * 0x30);
    t.wrapping_sub(ONES * 10) & !t & (ONES * 0x80) != 0
}

/// Appends `body` to `sig` with the digit runs `runs` marked in `detail` written as 0xfe.
fn write(sig: &mut Vec<u8>, body: &[u8], runs: &[(usize, usize)], detail: &[bool]) {
    let mut from = 0;
    for (&(s, e), &d) in runs.iter().zip(detail) {
        if d {
            sig.extend_from_slice(&body[from..s]);
            sig.push(0xfe);
            from = e;
        }
    }
    sig.extend_from_slice(&body[from..]);
}

/// Which of the digit runs `runs` of `body` the table finds in a detail value.
fn detail_runs(body: &[u8], runs: &[(usize, usize)], details: &DetailValues) -> Box<[bool]> {
    let mut d = vec![false; runs.len()];
    details.digits(body, |s, _| {
        if let Ok(k) = runs.binary_search_by_key(&s, |r| r.0) {
            d[k] = true;
        }
    });
    d.into_boxed_slice()
}

/// Appends `body` with each digit run of its detail values written as one 0xfe byte (the table
/// searched every time: the reference [`Skeletons::mask`] gives).
pub(super) fn mask_details(sig: &mut Vec<u8>, body: &[u8], details: &DetailValues) {
    let mut from = 0;
    details.digits(body, |s, e| {
        sig.extend_from_slice(&body[from..s]);
        sig.push(0xfe);
        from = e;
    });
    sig.extend_from_slice(&body[from..]);
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The eight-byte test finds a digit exactly where one is.
    #[test]
    fn eight_bytes_hold_a_digit_exactly_when_one_is() {
        let mut r = 0x9e37_79b9_7f4a_7c15u64;
        for _ in 0..20_000 {
            r ^= r << 13;
            r ^= r >> 7;
            r ^= r << 17;
            // bytes drawn near the digits, and anywhere
            let mut w = r.to_le_bytes();
            for (n, b) in w.iter_mut().enumerate() {
                if (r >> (n + 40)) & 1 == 1 {
                    *b = 0x2c + (*b % 16);
                }
            }
            let want = w.iter().any(u8::is_ascii_digit);
            assert_eq!(has_digit(u64::from_le_bytes(w)), want, "{w:?}");
        }
    }

    /// Through the skeletons, messages are masked as the table searched every time masks them,
    /// whether their skeleton was met before or not.
    #[test]
    fn a_skeleton_masks_as_the_table_does() {
        let set = crate::events::RecognizerSet::load(&[]).unwrap();
        let mut sk = Skeletons::default();
        let bodies = [
            "NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4432> with error 12, opcode 129, len 0, vendor err 129 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.7 hca mlx5_3",
            "NCCL WARN NET/IB : Got completion from peer 192.168.10.71<1> with error 5, opcode 1, len 32764, vendor err 1 (Recv) localGid ::ffff:1.2.3.4 remoteGids::ffff:9.9.9.9 hca mlx5_12",
            "NVRM: Xid (PCI:0000:90:00): 45, pid=13671, name=python3, Ch 00000010",
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, name=python3, Ch 00000002",
            "x5len 3 xlen 4 len 5 pid=12ab34 pid=",
            "x7len 3 xlen 4 len 99 pid=1ab2 pid=",
            "no digits at all",
            "",
        ];
        for round in 0..2 {
            for b in bodies {
                let (mut got, mut want) = (Vec::new(), Vec::new());
                sk.mask(&mut got, b.as_bytes(), &set.details);
                mask_details(&mut want, b.as_bytes(), &set.details);
                assert_eq!(got, want, "round {round}: {b}");
            }
        }
        assert!(sk.len > 0 && sk.len < bodies.len());
    }
}
