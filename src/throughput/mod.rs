//! Slowdowns: the throughput stage. Trainer progress lines (Megatron iteration times, DeepSpeed
//! samples/sec, tqdm/Lightning/Hugging Face progress bars, nccl-tests bus bandwidth) become one
//! series per job, host and rank ([`series`]); robust change-point segmentation finds sustained
//! level shifts ([`changepoint`]); each shift that makes the job slower becomes a
//! `throughput_drop` event and an incident of kind `slowdown`, whose cause is the best-supported
//! event near its start ([`attribution`], rules in `data/rules.toml`).

pub mod attribution;
pub mod changepoint;
pub mod hang;
pub mod series;
mod short;

use crate::model::{Layer, Severity, SourceRef, TimeQuality};
use crate::rules::SlowdownParams;
use crate::timeline::Event;
use series::{Metric, Series};
use std::collections::BTreeMap;

/// A sustained slowdown found in one series.
#[derive(Clone, Debug)]
pub struct Slowdown {
    /// What was measured.
    pub metric: Metric,
    /// Which progress figure.
    pub label: String,
    /// Host that printed the series.
    pub host: Option<String>,
    /// Rank that printed it.
    pub rank: Option<i64>,
    /// Level before (in the metric's unit).
    pub baseline: f64,
    /// Level during the slow phase.
    pub degraded: f64,
    /// Throughput during the slow phase relative to before (0.6 = 60 % of the old speed).
    pub ratio: f64,
    /// Time of the first slow sample.
    pub start_us: Option<i64>,
    /// Time of the last slow sample.
    pub end_us: Option<i64>,
    /// Time of the first sample back at the old level, when the job recovered.
    pub recovered_us: Option<i64>,
    /// The slow phase lasted to the end of the series.
    pub ongoing: bool,
    /// Samples in the slow phase.
    pub samples: usize,
    /// Found in a series too short for segmentation (a clear step in a few samples): the
    /// confidence is lower.
    pub short: Option<ShortSeries>,
    /// Iteration of the first slow sample, when printed.
    pub start_iter: Option<i64>,
    /// Samples left out as known pauses (by kind).
    pub pauses: BTreeMap<String, usize>,
    /// The series for display: at most [`CURVE_POINTS`] points.
    pub curve: Vec<CurvePoint>,
    /// Index range of the slow phase within `curve`.
    pub curve_slow: (usize, usize),
    /// Evidence: the first slow sample.
    pub first: SourceRef,
    /// Its verbatim text.
    pub first_text: String,
    /// Time quality of the first slow sample.
    pub quality: TimeQuality,
    /// Input of the first slow sample.
    pub input: usize,
}

/// How few samples a slowdown of a short series rests on.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ShortSeries {
    /// Samples of the whole series read.
    pub samples: usize,
    /// Of which before the step.
    pub before: usize,
}

/// One point of a slowdown's curve: the time of its first sample (when known) and the median
/// value of the samples it stands for.
pub type CurvePoint = (Option<i64>, f64);

/// Points kept for the curve of a slowdown.
pub const CURVE_POINTS: usize = 120;

/// Finds the sustained slowdowns in every series.
pub fn detect(all: &[Series], p: &SlowdownParams) -> Vec<Slowdown> {
    let mut out = Vec::new();
    for s in all {
        out.extend(detect_one(s, p));
    }
    out
}

/// The slowdowns of one series: sustained segments whose cost is at least `min_ratio` times the
/// segment's before.
fn detect_one(s: &Series, p: &SlowdownParams) -> Vec<Slowdown> {
    let metric = s.key.metric;
    let kept: Vec<&series::Sample> = s.samples.iter().filter(|x| x.pause.is_none()).collect();
    let costs: Vec<f64> = kept.iter().map(|x| metric.cost(x.value)).collect();
    let mut pauses: BTreeMap<String, usize> = BTreeMap::new();
    for x in s.samples.iter().filter_map(|x| x.pause) {
        *pauses.entry(x.as_str().to_string()).or_default() += 1;
    }
    if costs.len() < 2 * p.min_samples {
        return short::detect(s, p, &pauses).into_iter().collect();
    }
    slow_spans(&costs, p)
        .into_iter()
        .map(|span| slowdown(s, &kept, span, &pauses))
        .collect()
}

/// A slow span of a series: the cost before it and in it, its samples `a..b` (of those outside
/// pauses), and whether the series got faster again after it.
struct SlowSpan {
    base: f64,
    degraded: f64,
    a: usize,
    b: usize,
    recovered: bool,
}

/// The slow spans of `costs`: a segment (between change points) at `min_ratio` times the one
/// before or more, with the segments after it that stay above half that step, kept when enough
/// of its samples are really at the slow level.
fn slow_spans(costs: &[f64], p: &SlowdownParams) -> Vec<SlowSpan> {
    let half = 1.0 + (p.min_ratio - 1.0) / 2.0;
    let cp = changepoint::Params {
        min_len: p.min_samples,
        min_rel_shift: half - 1.0,
        min_noise_multiple: p.min_noise_multiple,
    };
    let bounds = changepoint::segments(costs, cp);
    let segs: Vec<(usize, usize, f64)> = bounds
        .windows(2)
        .map(|w| (w[0], w[1], changepoint::median(&costs[w[0]..w[1]])))
        .collect();
    let mut found = Vec::new();
    let mut i = 1;
    while i < segs.len() {
        let base = segs[i - 1].2;
        if base > 0.0 && segs[i].2 >= base * p.min_ratio {
            let mut j = i;
            while j + 1 < segs.len() && segs[j + 1].2 >= base * half {
                j += 1;
            }
            let (a, b) = (segs[i].0, segs[j].1);
            // sustained: enough samples really at the slow level, not a segment that only
            // tips over because of its last few points
            let slow = costs[a..b].iter().filter(|&&c| c >= base * half).count();
            if slow >= p.min_samples && slow * 2 > b - a {
                let degraded = changepoint::median(&costs[a..b]);
                let recovered = j + 1 < segs.len();
                found.push(SlowSpan {
                    base,
                    degraded,
                    a,
                    b,
                    recovered,
                });
            }
            i = j + 1;
        } else {
            i += 1;
        }
    }
    found
}

/// The slowdown of series `s` over `span` of its samples outside pauses (`kept`).
fn slowdown(
    s: &Series,
    kept: &[&series::Sample],
    span: SlowSpan,
    pauses: &BTreeMap<String, usize>,
) -> Slowdown {
    let SlowSpan {
        base,
        degraded,
        a,
        b,
        recovered,
    } = span;
    let metric = s.key.metric;
    let first = kept[a];
    let (curve, curve_slow) = curve(kept, a, b);
    Slowdown {
        metric,
        label: s.key.label.clone(),
        host: s.key.host.clone(),
        rank: s.key.rank,
        baseline: round3(metric.value(base)),
        degraded: round3(metric.value(degraded)),
        ratio: round3(base / degraded),
        start_us: first.time_us,
        end_us: kept[b - 1].time_us,
        recovered_us: if recovered {
            kept.get(b).and_then(|x| x.time_us)
        } else {
            None
        },
        ongoing: !recovered,
        samples: b - a,
        short: None,
        start_iter: first.iter,
        pauses: pauses.clone(),
        curve,
        curve_slow,
        first: SourceRef {
            path: first.path.clone(),
            line: first.line,
        },
        first_text: first.text.clone(),
        quality: first.quality,
        input: first.input,
    }
}

fn round3(v: f64) -> f64 {
    (v * 1000.0).round() / 1000.0
}

/// The series thinned to at most [`CURVE_POINTS`] points (bin medians), and where the slow phase
/// `[a, b)` lies in it.
fn curve(kept: &[&series::Sample], a: usize, b: usize) -> (Vec<CurvePoint>, (usize, usize)) {
    let n = kept.len();
    let bin = n.div_ceil(CURVE_POINTS).max(1);
    let pts: Vec<CurvePoint> = kept
        .chunks(bin)
        .map(|c| {
            let vals: Vec<f64> = c.iter().map(|x| x.value).collect();
            (c[0].time_us, round3(changepoint::median(&vals)))
        })
        .collect();
    (pts, (a / bin, (b - 1) / bin + 1))
}

/// The `throughput_drop` event of a slowdown: placed at its first slow sample and citing it.
pub fn drop_event(s: &Slowdown) -> Event {
    let mut attrs = BTreeMap::new();
    attrs.insert("metric".into(), s.metric.as_str().to_string());
    attrs.insert("baseline".into(), format!("{}", s.baseline));
    attrs.insert("degraded".into(), format!("{}", s.degraded));
    attrs.insert("ratio".into(), format!("{}", s.ratio));
    attrs.insert("series".into(), s.label.clone());
    Event {
        id: 0,
        time_us: s.start_us,
        quality: s.quality,
        uptime_us: None,
        host: s.host.as_deref().map(std::sync::Arc::from),
        source: s.first.clone(),
        input: s.input,
        boot: 0,
        kind: "throughput_drop",
        code: None,
        gpu: None,
        rank: s.rank,
        layer: Layer::Unknown,
        severity: Severity::Warning,
        message: s.first_text.as_str().into(),
        body: crate::model::Body::Tail(0),
        attrs: attrs.into(),
        rare: None,
        bmc: false,
        suppressed: 0,
    }
}

/// Eight-level bar characters for a compact curve.
const BARS: [char; 8] = ['▁', '▂', '▃', '▄', '▅', '▆', '▇', '█'];

/// A sparkline of speeds (higher = faster) in at most `width` columns, with a second line that
/// marks the columns of the slow phase `[slow.0, slow.1)` with `^`. The scale starts at half the
/// top speed or lower, so that a drop to 60 % shows as a drop, not as the bottom of the chart.
pub fn sparkline(speeds: &[f64], slow: (usize, usize), width: usize) -> (String, String) {
    if speeds.is_empty() || width == 0 {
        return (String::new(), String::new());
    }
    let bin = speeds.len().div_ceil(width).max(1);
    let cols: Vec<f64> = speeds.chunks(bin).map(changepoint::median).collect();
    let max = cols.iter().copied().fold(f64::MIN, f64::max);
    let min = cols.iter().copied().fold(f64::MAX, f64::min).min(max * 0.5);
    let line = cols
        .iter()
        .map(|&v| {
            let f = if max > min {
                (v - min) / (max - min)
            } else {
                1.0
            };
            BARS[((f * 7.0).round().max(0.0) as usize).min(7)]
        })
        .collect();
    let marks = (0..cols.len())
        .map(|c| {
            let (a, b) = (c * bin, (c + 1) * bin);
            if a < slow.1 && b > slow.0 {
                '^'
            } else {
                ' '
            }
        })
        .collect::<String>()
        .trim_end()
        .to_string();
    (line, marks)
}

/// Speeds (higher = faster) from values of `metric` as stored in JSON.
pub fn speeds(metric: &str, values: impl Iterator<Item = f64>) -> Vec<f64> {
    values
        .map(|v| {
            let time = [Metric::StepTime, Metric::EpochTime].map(Metric::as_str);
            if time.contains(&metric) && v > 0.0 {
                1.0 / v
            } else {
                v
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sparkline_shows_the_drop_and_marks_it() {
        let mut v = vec![10.0; 20];
        v.extend(vec![6.0; 10]);
        let (line, marks) = sparkline(&v, (20, 30), 30);
        assert!(line.starts_with("████"), "{line}");
        assert!(
            line.ends_with('▂') || line.ends_with('▁') || line.ends_with('▃'),
            "{line}"
        );
        assert_eq!(marks.trim_start().len(), 10);
        assert_eq!(marks.len(), 30);
    }
}
