//! The order of a packed searcher's literals that puts literals alike in their first bytes into
//! one bucket.
//!
//! Teddy (aho-corasick's packed searcher) looks for the first `m` bytes of its literals (`m`
//! is the shortest literal's length, at most 4) by their low and high halves: for each bucket
//! and each of the `m` positions, the set of low halves and the set of high halves its
//! literals have there. A spot of the text fits a bucket when every byte's low half and high
//! half are in that position's sets, so a bucket accepts every combination of its literals'
//! halves, and each spot that fits is then compared with the bucket's literals. The fewer the
//! combinations, the fewer the comparisons: `NVRM` and `NVSwitch` together accept little
//! beyond themselves, `NVRM` and `grade` accept `gVRM`, `nRad` and many more.
//!
//! Teddy fills its buckets in turn by the literals' order (bucket `B - 1 - i % B` for the
//! `i`-th literal, unless a literal before it has the same low halves, whose bucket it then
//! shares). [`order`] chooses the literals of each bucket (sorted, cut into runs of the same
//! size, then improved by swaps between buckets while the accepted combinations decrease) and
//! returns them in the order that lands each set in one bucket. A search for lines is
//! indifferent to the order: the leftmost hit is found whatever literal it is.

/// Buckets of a searcher of more than 32 literals (Fat Teddy, with AVX2), and of one of fewer.
const FAT_BUCKETS: usize = 16;
const SLIM_BUCKETS: usize = 8;
/// Rounds of swaps at most (each one tries every pair of literals in two buckets): the set is
/// ordered at every start, so the work is bounded whatever the literals.
const ROUNDS: usize = 8;

/// The halves of a literal's first bytes, each as a one-bit set.
#[derive(Clone, Copy)]
struct Halves([(u16, u16); 4]);

impl Halves {
    fn of(lit: &[u8], m: usize) -> Halves {
        let mut h = [(0u16, 0u16); 4];
        for (j, &b) in lit.iter().take(m).enumerate() {
            h[j] = (1 << (b & 15), 1 << (b >> 4));
        }
        Halves(h)
    }
}

/// How many byte combinations a bucket of `members` accepts (a product over the positions of
/// the counts of low and high halves; 0 for an empty bucket).
fn accepted(members: &[usize], halves: &[Halves], m: usize) -> u64 {
    if members.is_empty() {
        return 0;
    }
    (0..m)
        .map(|j| {
            let (lo, hi) = members.iter().fold((0u16, 0u16), |(lo, hi), &k| {
                (lo | halves[k].0[j].0, hi | halves[k].0[j].1)
            });
            u64::from(lo.count_ones() * hi.count_ones())
        })
        .product()
}

/// `group`'s literals in the order that gives each bucket of its packed searcher literals alike
/// in their first bytes (see the module doc). The same literals, each once.
pub(super) fn order<'a>(group: &[&'a String]) -> Vec<&'a String> {
    let n = group.len();
    let buckets = if n > 32 { FAT_BUCKETS } else { SLIM_BUCKETS };
    if n <= buckets {
        return group.to_vec();
    }
    let mut sorted = group.to_vec();
    sorted.sort();
    let m = sorted.iter().map(|l| l.len()).min().unwrap_or(0).min(4);
    let halves: Vec<Halves> = sorted.iter().map(|l| Halves::of(l.as_bytes(), m)).collect();
    // runs of the sorted literals, the first `n % buckets` one longer
    let (q, r) = (n / buckets, n % buckets);
    let mut sets: Vec<Vec<usize>> = Vec::with_capacity(buckets);
    let mut at = 0;
    for b in 0..buckets {
        let len = q + usize::from(b < r);
        sets.push((at..at + len).collect());
        at += len;
    }
    improve(&mut sets, &halves, m);
    // one literal of each set in turn: the `i`-th literal lands in the bucket of set `i % B`
    // (the longer sets first, so that every turn but the last takes one of each)
    let mut out = Vec::with_capacity(n);
    for turn in 0..=q {
        for s in sets.iter().filter(|s| turn < s.len()) {
            out.push(sorted[s[turn]]);
        }
    }
    out
}

/// Swaps literals between two sets while that lowers the two sets' accepted combinations, for
/// at most [`ROUNDS`] rounds.
fn improve(sets: &mut [Vec<usize>], halves: &[Halves], m: usize) {
    for _ in 0..ROUNDS {
        let mut better = false;
        for a in 0..sets.len() {
            for b in a + 1..sets.len() {
                better |= improve_pair(sets, (a, b), halves, m);
            }
        }
        if !better {
            return;
        }
    }
}

/// One pass of swaps between sets `a` and `b` (`a < b`); whether one was made.
fn improve_pair(
    sets: &mut [Vec<usize>],
    (a, b): (usize, usize),
    halves: &[Halves],
    m: usize,
) -> bool {
    let (left, right) = sets.split_at_mut(b);
    let (sa, sb) = (&mut left[a], &mut right[0]);
    let mut better = false;
    let mut now = accepted(sa, halves, m) + accepted(sb, halves, m);
    for x in 0..sa.len() {
        for y in 0..sb.len() {
            std::mem::swap(&mut sa[x], &mut sb[y]);
            let after = accepted(sa, halves, m) + accepted(sb, halves, m);
            if after < now {
                now = after;
                better = true;
            } else {
                std::mem::swap(&mut sa[x], &mut sb[y]);
            }
        }
    }
    better
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The order is a permutation, and the buckets it makes accept no more than the sorted runs
    /// it starts from.
    #[test]
    fn the_order_keeps_every_literal_and_does_not_make_buckets_worse() {
        let set = crate::events::RecognizerSet::load(&[]).expect("built-in recognizers");
        let lits = &set.prefilter_literals;
        for group in lits.chunks(lits.len().div_ceil(2)) {
            let refs: Vec<&String> = group.iter().collect();
            let got = order(&refs);
            let mut a: Vec<&String> = got.clone();
            let mut b = refs.clone();
            a.sort();
            b.sort();
            assert_eq!(a, b);
            let cost = |lits: &[&String]| -> u64 {
                let m = lits.iter().map(|l| l.len()).min().unwrap().min(4);
                let h: Vec<Halves> = lits.iter().map(|l| Halves::of(l.as_bytes(), m)).collect();
                // the buckets Teddy makes of this order (ignoring shared low halves)
                let mut sets = vec![Vec::new(); FAT_BUCKETS];
                for i in 0..lits.len() {
                    sets[i % FAT_BUCKETS].push(i);
                }
                sets.iter().map(|s| accepted(s, &h, m)).sum()
            };
            let mut runs_order = Vec::new();
            let mut sorted = refs.clone();
            sorted.sort();
            let (q, r) = (sorted.len() / FAT_BUCKETS, sorted.len() % FAT_BUCKETS);
            let mut starts = Vec::new();
            let mut at = 0;
            for bk in 0..FAT_BUCKETS {
                starts.push(at);
                at += q + usize::from(bk < r);
            }
            for turn in 0..=q {
                for (bk, &s) in starts.iter().enumerate() {
                    if turn < q + usize::from(bk < r) {
                        runs_order.push(sorted[s + turn]);
                    }
                }
            }
            assert!(
                cost(&got) <= cost(&runs_order),
                "{} > {}",
                cost(&got),
                cost(&runs_order)
            );
            assert!(cost(&got) < cost(&refs), "no better than the sorted order");
        }
    }

    /// Sorted runs pair `A…` with `A…`; the swaps pair each `A` literal with the `Q` literal of
    /// the same tail (`A` and `Q` share their low half), which accepts two combinations where a
    /// pair of tails accepts dozens.
    #[test]
    fn literals_alike_in_their_first_bytes_share_a_bucket() {
        let tails = ["bcd", "XYZ", "123", "+-/", "mno", "TUV", "789", "{|}"];
        let lits: Vec<String> = ["A", "Q"]
            .iter()
            .flat_map(|h| tails.iter().map(move |t| format!("{h}{t}!")))
            .collect();
        let refs: Vec<&String> = lits.iter().collect();
        let got = order(&refs);
        // 16 literals, slim: 8 buckets; the bucket of the i-th literal is i % 8
        let bucket_of = |s: &str| got.iter().position(|l| *l == s).unwrap() % SLIM_BUCKETS;
        for t in tails {
            assert_eq!(
                bucket_of(&format!("A{t}!")),
                bucket_of(&format!("Q{t}!")),
                "{t}"
            );
        }
    }
}
