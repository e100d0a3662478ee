//! Robust change-point segmentation. A running median (5 points) first removes isolated
//! outliers (one slow step, a garbage collection); binary segmentation under a squared-error cost
//! then splits the series wherever the gain beats a noise-scaled penalty, which also finds a slow
//! phase in the middle of a run; finally neighbouring segments whose medians differ by less than
//! the noise-based and relative thresholds are merged back, so only real level shifts remain.

/// The most points segmented directly; longer series are first reduced to medians of bins.
pub const MAX_POINTS: usize = 600;

/// Width of the running median applied before segmentation.
const SMOOTH: usize = 5;

/// Thresholds for accepting a split.
#[derive(Clone, Copy, Debug)]
pub struct Params {
    /// Shortest segment, in points.
    pub min_len: usize,
    /// Smallest relative change of the median (0.1 = 10 %).
    pub min_rel_shift: f64,
    /// Smallest change of the median in units of the step-to-step noise.
    pub min_noise_multiple: f64,
}

/// Median of a slice (NaN-free input); 0 for an empty slice.
pub fn median(x: &[f64]) -> f64 {
    if x.is_empty() {
        return 0.0;
    }
    let mut v = x.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    }
}

/// Step-to-step noise: the median absolute difference of neighbours, scaled to a standard
/// deviation; a level shift moves only one difference, so it barely moves this estimate.
pub fn noise(x: &[f64]) -> f64 {
    if x.len() < 2 {
        return 0.0;
    }
    let d: Vec<f64> = x.windows(2).map(|w| (w[1] - w[0]).abs()).collect();
    median(&d) / (0.6745 * std::f64::consts::SQRT_2)
}

fn running_median(x: &[f64]) -> Vec<f64> {
    let h = SMOOTH / 2;
    (0..x.len())
        .map(|i| median(&x[i.saturating_sub(h)..(i + h + 1).min(x.len())]))
        .collect()
}

/// Prefix sums of values and squares, for O(1) squared-error costs of any range.
struct Sums {
    s: Vec<f64>,
    q: Vec<f64>,
}

impl Sums {
    fn new(x: &[f64]) -> Sums {
        let mut s = vec![0.0; x.len() + 1];
        let mut q = vec![0.0; x.len() + 1];
        for (i, v) in x.iter().enumerate() {
            s[i + 1] = s[i] + v;
            q[i + 1] = q[i] + v * v;
        }
        Sums { s, q }
    }

    fn cost(&self, a: usize, b: usize) -> f64 {
        let n = (b - a) as f64;
        if n == 0.0 {
            return 0.0;
        }
        let sum = self.s[b] - self.s[a];
        (self.q[b] - self.q[a] - sum * sum / n).max(0.0)
    }
}

/// Splits `x` into segments of steady level; returns the boundaries `[0, b1, …, len]`.
pub fn segments(x: &[f64], p: Params) -> Vec<usize> {
    let n = x.len();
    if n == 0 {
        return vec![0];
    }
    // reduce long series to bin medians, then map the boundaries back
    let bin = n.div_ceil(MAX_POINTS).max(1);
    let reduced: Vec<f64> = x.chunks(bin).map(median).collect();
    let min_len = p.min_len.div_ceil(bin).max(2);
    // floor the noise so that a perfectly flat series does not make every wiggle significant
    let sigma = noise(&reduced).max(median(&reduced).abs() * 1e-3);
    let smooth = running_median(&reduced);
    let sums = Sums::new(&smooth);
    let penalty = 6.0 * sigma * sigma * (reduced.len() as f64).ln().max(1.0);
    let mut cuts = vec![0, reduced.len()];
    split(&sums, 0, reduced.len(), min_len, penalty, 0, &mut cuts);
    cuts.sort_unstable();
    cuts.dedup();
    let cuts = merge(&reduced, cuts, min_len, sigma, p);
    let mut out: Vec<usize> = cuts.into_iter().map(|c| (c * bin).min(n)).collect();
    out.dedup();
    if bin > 1 {
        refine(x, &mut out, bin);
    }
    out
}

/// Moves each inner boundary found on bin medians to the best split point of the full series
/// within one bin either side (so the start of a slowdown is exact, not rounded to a bin).
fn refine(x: &[f64], cuts: &mut [usize], bin: usize) {
    let smooth = running_median(x);
    let sums = Sums::new(&smooth);
    for i in 1..cuts.len().saturating_sub(1) {
        let (a, b) = (cuts[i - 1], cuts[i + 1]);
        let lo = cuts[i].saturating_sub(bin).max(a + 1);
        let hi = (cuts[i] + bin).min(b.saturating_sub(1));
        let whole = sums.cost(a, b);
        let mut best = (cuts[i], f64::MIN);
        for k in lo..=hi {
            let gain = whole - sums.cost(a, k) - sums.cost(k, b);
            if gain > best.1 {
                best = (k, gain);
            }
        }
        cuts[i] = best.0;
    }
}

fn split(
    sums: &Sums,
    a: usize,
    b: usize,
    min_len: usize,
    penalty: f64,
    depth: u32,
    cuts: &mut Vec<usize>,
) {
    if depth > 8 || b - a < 2 * min_len {
        return;
    }
    let whole = sums.cost(a, b);
    let mut best: Option<(usize, f64)> = None;
    for k in a + min_len..=b - min_len {
        let gain = whole - sums.cost(a, k) - sums.cost(k, b);
        if best.is_none_or(|(_, g)| gain > g) {
            best = Some((k, gain));
        }
    }
    let Some((k, gain)) = best else { return };
    if gain <= penalty {
        return;
    }
    cuts.push(k);
    split(sums, a, k, min_len, penalty, depth + 1, cuts);
    split(sums, k, b, min_len, penalty, depth + 1, cuts);
}

/// Merges neighbouring segments until every neighbour pair differs significantly and every
/// segment is at least `min_len` long (the closest pair merges first).
fn merge(x: &[f64], mut cuts: Vec<usize>, min_len: usize, sigma: f64, p: Params) -> Vec<usize> {
    loop {
        if cuts.len() <= 2 {
            return cuts;
        }
        let meds: Vec<f64> = cuts.windows(2).map(|w| median(&x[w[0]..w[1]])).collect();
        // the weakest inner boundary: short segments first, then the smallest relative shift
        let mut weakest: Option<(usize, (bool, f64))> = None;
        for i in 1..cuts.len() - 1 {
            let (l, r) = (meds[i - 1], meds[i]);
            let shift = (r - l).abs();
            let base = l.abs().min(r.abs()).max(f64::MIN_POSITIVE);
            let short = cuts[i] - cuts[i - 1] < min_len || cuts[i + 1] - cuts[i] < min_len;
            let weak =
                short || shift < p.min_noise_multiple * sigma || shift / base < p.min_rel_shift;
            if weak {
                let key = (!short, shift / base);
                if weakest.is_none_or(|(_, k)| key < k) {
                    weakest = Some((i, key));
                }
            }
        }
        match weakest {
            Some((i, _)) => {
                cuts.remove(i);
            }
            None => return cuts,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const P: Params = Params {
        min_len: 5,
        min_rel_shift: 0.1,
        min_noise_multiple: 4.0,
    };

    fn wobble(level: f64, n: usize, seed: u64) -> Vec<f64> {
        (0..n)
            .map(|i| level * (1.0 + 0.01 * (((i as u64 * 7919 + seed) % 11) as f64 - 5.0) / 5.0))
            .collect()
    }

    #[test]
    fn finds_one_step_change() {
        let mut x = wobble(1150.0, 40, 1);
        x.extend(wobble(1800.0, 30, 2));
        assert_eq!(segments(&x, P), vec![0, 40, 70]);
    }

    #[test]
    fn single_outliers_are_not_shifts() {
        let mut x = wobble(1150.0, 60, 3);
        x[20] = 1730.0;
        x[45] = 1730.0;
        assert_eq!(segments(&x, P), vec![0, 60]);
    }

    #[test]
    fn slow_phase_and_recovery() {
        let mut x = wobble(100.0, 30, 4);
        x.extend(wobble(160.0, 20, 5));
        x.extend(wobble(100.0, 30, 6));
        assert_eq!(segments(&x, P), vec![0, 30, 50, 80]);
    }

    #[test]
    fn short_slow_phase_in_the_middle() {
        let mut x = wobble(409.0, 34, 9);
        x.extend(wobble(740.0, 16, 10));
        x.extend(wobble(409.0, 29, 11));
        assert_eq!(segments(&x, P), vec![0, 34, 50, 79]);
    }

    #[test]
    fn small_drifts_are_merged_away() {
        let mut x = wobble(100.0, 40, 12);
        x.extend(wobble(104.0, 40, 13));
        assert_eq!(segments(&x, P), vec![0, 80]);
    }

    #[test]
    fn long_series_are_binned() {
        let mut x = wobble(10.0, 3000, 7);
        x.extend(wobble(14.0, 3000, 8));
        let s = segments(&x, P);
        assert_eq!(s, vec![0, 3000, 6000]);
    }

    #[test]
    fn flat_and_tiny_inputs() {
        assert_eq!(segments(&[], P), vec![0]);
        assert_eq!(segments(&[5.0; 3], P), vec![0, 3]);
        assert_eq!(segments(&[5.0; 100], P), vec![0, 100]);
    }
}
