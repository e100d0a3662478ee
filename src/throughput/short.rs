//! Slowdowns in short series: a pasted excerpt, a log split over files, epoch times (a few per
//! day). Segmentation needs `2 * min_samples` samples; below that, a clear step still counts:
//! every sample after it at least `short_min_ratio` times slower than the median before it and
//! slower than any sample before it, held to the end of the series, and lasting at least
//! `short_min_held` intervals of the earlier level. Two slow samples are needed, or one interval
//! of a cumulative average (which is itself read over many steps). Such a slowdown is marked
//! [`ShortSeries`] and judged with less confidence.

use super::changepoint::median;
use super::series::{Pause, Sample, Series};
use super::{slowdown, ShortSeries, SlowSpan, Slowdown};
use crate::rules::SlowdownParams;
use std::collections::BTreeMap;

/// A first sample slower than this many times the next ones is a warm-up and left out; one at
/// their level (or faster) is the best view of the level before a step.
const WARMUP_RATIO: f64 = 1.2;

/// The slowdown of short series `s`, if it has a clear step.
pub(super) fn detect(
    s: &Series,
    p: &SlowdownParams,
    pauses: &BTreeMap<String, usize>,
) -> Option<Slowdown> {
    let metric = s.key.metric;
    let kept = kept(s);
    let costs: Vec<f64> = kept.iter().map(|x| metric.cost(x.value)).collect();
    let cumulative = s.samples.iter().any(|x| x.cumulative.is_some());
    let span = step(&costs, cumulative, p)?;
    let info = ShortSeries {
        samples: costs.len(),
        before: span.a,
    };
    let mut pauses = pauses.clone();
    if kept.first().is_some_and(|x| x.pause == Some(Pause::Warmup)) {
        // the first sample was kept as the level before the step: not left out
        if let Some(w) = pauses.get_mut(Pause::Warmup.as_str()) {
            *w -= 1;
        }
        pauses.retain(|_, n| *n > 0);
    }
    let mut sd = slowdown(s, &kept, span, &pauses);
    sd.short = Some(info);
    Some(sd)
}

/// The samples outside pauses, with the first one back when it is no slower than the next
/// ones (so not a warm-up).
fn kept(s: &Series) -> Vec<&Sample> {
    let metric = s.key.metric;
    let mut kept: Vec<&Sample> = s.samples.iter().filter(|x| x.pause.is_none()).collect();
    if let Some(first) = s.samples.first().filter(|x| x.pause == Some(Pause::Warmup)) {
        let next: Vec<f64> = kept.iter().take(3).map(|x| metric.cost(x.value)).collect();
        if !next.is_empty() && metric.cost(first.value) <= WARMUP_RATIO * median(&next) {
            kept.insert(0, first);
        }
    }
    kept
}

/// The earliest clear step in `costs` (larger = slower), held to the end.
fn step(costs: &[f64], cumulative: bool, p: &SlowdownParams) -> Option<SlowSpan> {
    let n = costs.len();
    if n < 3 {
        return None;
    }
    let min_after = if cumulative { 1 } else { 2 };
    (1..=n - min_after).find_map(|k| {
        let (before, after) = costs.split_at(k);
        let base = median(before);
        let slowest_before = before.iter().copied().fold(f64::MIN, f64::max);
        let fastest_after = after.iter().copied().fold(f64::MAX, f64::min);
        let held: f64 = after.iter().sum::<f64>() / base;
        let clear = base > 0.0
            && fastest_after >= p.short_min_ratio * base
            && fastest_after > slowest_before
            && held >= p.short_min_held;
        clear.then(|| SlowSpan {
            base,
            degraded: median(after),
            a: k,
            b: n,
            recovered: false,
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p() -> SlowdownParams {
        SlowdownParams::default()
    }

    #[test]
    fn epoch_times_that_double_in_a_second_window() {
        let s = step(&[984.6, 797.6, 878.6, 1896.5, 1396.6], false, &p()).unwrap();
        assert_eq!((s.a, s.b), (3, 5));
    }

    #[test]
    fn a_collapse_in_the_last_two_samples() {
        let speeds = [95.71, 94.49, 94.29, 90.31, 89.77, 97.99, 46.48, 23.47];
        let costs: Vec<f64> = speeds.iter().map(|v| 1.0 / v).collect();
        assert_eq!(step(&costs, false, &p()).unwrap().a, 6);
    }

    #[test]
    fn steady_noise_and_one_slow_sample_are_not_steps() {
        assert!(step(
            &[5912.1, 5571.1, 5718.9, 5361.6, 5470.7, 5829.9],
            false,
            &p()
        )
        .is_none());
        assert!(step(&[100.0, 102.0, 99.0, 400.0], false, &p()).is_none());
        // two samples at 1.3x: not a clear step
        assert!(step(&[100.0, 101.0, 99.0, 130.0, 131.0], false, &p()).is_none());
    }

    #[test]
    fn one_stalled_interval_of_a_cumulative_average_counts() {
        let costs = [1.0 / 195.8, 1.0 / 195.8, 1.0 / 32.7];
        assert_eq!(step(&costs, true, &p()).unwrap().a, 2);
        assert!(step(&costs, false, &p()).is_none());
    }

    #[test]
    fn a_short_stall_is_not_held() {
        // two samples at 1.4x: neither 1.5x nor held for three intervals
        assert!(step(&[100.0, 100.0, 140.0, 140.0], false, &p()).is_none());
    }
}
