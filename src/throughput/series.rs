//! Progress series: the step-time or throughput samples of one job (per host and rank when the
//! lines tell them), in order, with the samples that fall in known pauses marked.

use crate::model::TimeQuality;
use crate::timeline::Event;
use std::collections::BTreeMap;

/// The most samples kept per series; longer series are thinned evenly (the shape stays).
pub const MAX_SAMPLES_PER_SERIES: usize = 200_000;

/// What a series measures.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum Metric {
    /// Time per step or iteration, in milliseconds (Megatron, tqdm `s/it` and `it/s`).
    StepTime,
    /// Samples per second (DeepSpeed, Hugging Face summary).
    SamplesPerSec,
    /// nccl-tests average bus bandwidth, GB/s.
    BusBandwidth,
    /// Tokens per second (torchtitan `tps`).
    TokensPerSec,
    /// Time per epoch, in seconds (nnU-Net): epoch times count like step times.
    EpochTime,
    /// TFLOP/s per GPU, from lines that carry no step time (Megatron's job summary).
    TflopsPerGpu,
}

impl Metric {
    /// Stable name used in JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Metric::StepTime => "step_time_ms",
            Metric::SamplesPerSec => "samples_per_s",
            Metric::BusBandwidth => "busbw_gb_s",
            Metric::TokensPerSec => "tokens_per_s",
            Metric::EpochTime => "epoch_time_s",
            Metric::TflopsPerGpu => "tflops_per_gpu",
        }
    }

    /// Unit for people.
    pub fn unit(self) -> &'static str {
        match self {
            Metric::StepTime => "ms/step",
            Metric::SamplesPerSec => "samples/s",
            Metric::BusBandwidth => "GB/s",
            Metric::TokensPerSec => "tokens/s",
            Metric::EpochTime => "s/epoch",
            Metric::TflopsPerGpu => "TFLOP/s/GPU",
        }
    }

    /// True when a larger value is better (a throughput), false for a time per step or epoch.
    pub fn higher_is_better(self) -> bool {
        !matches!(self, Metric::StepTime | Metric::EpochTime)
    }

    /// The value as a cost (larger = slower), so that every series is analyzed the same way.
    pub fn cost(self, value: f64) -> f64 {
        if self.higher_is_better() {
            1.0 / value
        } else {
            value
        }
    }

    /// The printed value back from a cost.
    pub fn value(self, cost: f64) -> f64 {
        if self.higher_is_better() {
            1.0 / cost
        } else {
            cost
        }
    }
}

/// A known pause that explains one slow interval.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pause {
    /// A checkpoint was written in the interval.
    Checkpoint,
    /// An evaluation ran in the interval.
    Evaluation,
    /// The first sample of a series (start-up, compilation, warm caches).
    Warmup,
}

impl Pause {
    /// Name for people and JSON.
    pub fn as_str(self) -> &'static str {
        match self {
            Pause::Checkpoint => "checkpoint",
            Pause::Evaluation => "evaluation",
            Pause::Warmup => "warmup",
        }
    }
}

/// One progress figure.
#[derive(Clone, Debug)]
pub struct Sample {
    /// UTC microseconds, when known.
    pub time_us: Option<i64>,
    /// How far the time can be trusted.
    pub quality: TimeQuality,
    /// Input index.
    pub input: usize,
    /// Input path.
    pub path: std::sync::Arc<str>,
    /// 1-based line.
    pub line: u64,
    /// Position among the updates glued into one line (progress bars).
    pub segment: u32,
    /// The verbatim figure's text (the matched update for glued bars, else the whole line).
    pub text: String,
    /// Iteration or step number, when printed.
    pub iter: Option<i64>,
    /// The figure in the metric's unit.
    pub value: f64,
    /// Set when the sample falls in a known pause.
    pub pause: Option<Pause>,
    /// A progress bar's own elapsed-time counter, in seconds.
    pub elapsed_s: Option<i64>,
    /// Epoch of the figure, when printed (MXNet restarts its batch count every epoch).
    pub epoch: Option<i64>,
    /// Set for a cumulative average (the mean since the start, as tf_cnn_benchmarks prints it):
    /// half a unit of its last printed digit, which bounds how finely intervals can be read.
    pub cumulative: Option<f64>,
}

/// Who printed a series and what it measures.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub struct SeriesKey {
    /// Metric.
    pub metric: Metric,
    /// Host.
    pub host: Option<String>,
    /// Rank.
    pub rank: Option<i64>,
    /// Which progress figure (`iteration`, a progress bar's name and length, …).
    pub label: String,
}

/// One series.
#[derive(Clone, Debug)]
pub struct Series {
    /// Key.
    pub key: SeriesKey,
    /// Samples in order.
    pub samples: Vec<Sample>,
    /// Samples dropped by thinning.
    pub thinned: usize,
}

fn parse_num(s: Option<&str>) -> Option<f64> {
    s.and_then(|v| v.parse::<f64>().ok())
        .filter(|v| v.is_finite() && *v > 0.0)
}

/// `HH:MM:SS` or `MM:SS` of a progress bar's elapsed time, in seconds.
fn elapsed_s(s: &str) -> Option<i64> {
    let mut total = 0i64;
    for part in s.split(':') {
        total = total
            .checked_mul(60)?
            .checked_add(part.parse::<i64>().ok()?)?;
    }
    Some(total)
}

fn is_eval_label(desc: &str) -> bool {
    let d = desc.to_ascii_lowercase();
    ["valid", "eval", "test", "predict", "sanity"]
        .iter()
        .any(|w| d.contains(w))
}

/// What one progress line measured: the metric, the figure, the series' label, and for a
/// cumulative average half a unit of its last printed digit.
struct Reading {
    metric: Metric,
    value: f64,
    label: String,
    cumulative: Option<f64>,
}

/// `, run of N` when the line says how many steps its run has (two runs, two series).
fn run_of(a: &crate::model::Attrs) -> String {
    a.get("total")
        .map(|t| format!(", run of {t} steps"))
        .unwrap_or_default()
}

/// Half a unit of the last digit of a printed number (`195.8` → 0.05).
fn half_ulp(s: &str) -> f64 {
    let decimals = s.split_once('.').map_or(0, |(_, f)| f.len()) as i32;
    0.5 * 10f64.powi(-decimals)
}

/// The label of a serving engine's or trainer's rate: its name, the split it measured and the
/// load it was measured at (`running` requests: throughput follows the load).
fn rate_label(a: &crate::model::Attrs, what: &str, unit: &str) -> String {
    let mut label = what.to_string();
    if let Some(s) = a.get("split") {
        label.push(' ');
        label.push_str(s);
    }
    label.push(' ');
    label.push_str(unit);
    if let Some(r) = a.get("running") {
        label.push_str(&format!(" at {r} running requests"));
    }
    label
}

/// The metric, value and label of one progress event (None for pause markers and unusable lines).
fn reading(e: &Event) -> Option<Reading> {
    let a = &e.attrs;
    let plain = |metric: Metric, value: f64, label: String| {
        Some(Reading {
            metric,
            value,
            label,
            cumulative: None,
        })
    };
    let trainer = a.get("trainer");
    if let Some(v) = parse_num(a.get("step_ms")) {
        return plain(
            Metric::StepTime,
            v,
            format!("Megatron iteration time{}", run_of(a)),
        );
    }
    let step_ms = parse_num(a.get("step_s")).map(|v| v * 1000.0).or_else(|| {
        let v = parse_num(a.get("step_time"))?;
        match a.get("step_unit")? {
            "s" => Some(v * 1000.0),
            "ms" => Some(v),
            "us" => Some(v / 1000.0),
            _ => None,
        }
    });
    if let Some(v) = step_ms {
        let t = trainer.unwrap_or("trainer");
        return plain(Metric::StepTime, v, format!("{t} step time{}", run_of(a)));
    }
    if let Some(v) = parse_num(a.get("epoch_s")) {
        let t = trainer.unwrap_or("trainer");
        return plain(Metric::EpochTime, v, format!("{t} epoch time"));
    }
    let bar = |rate_ms: f64| {
        let desc: String = a
            .get("desc")
            .map(|d| {
                d.chars()
                    .filter(|c| !c.is_ascii_digit())
                    .collect::<String>()
                    .trim()
                    .to_string()
            })
            .unwrap_or_default();
        let total = a.get("total").map(str::to_string).unwrap_or_default();
        let label = match (trainer, desc.is_empty()) {
            (Some(t), _) => format!("{t} progress bar of {total} steps"),
            (None, true) => format!("progress bar of {total} steps"),
            (None, false) => format!("progress bar '{desc}' of {total} steps"),
        };
        plain(Metric::StepTime, rate_ms, label)
    };
    if let Some(v) = parse_num(a.get("s_per_it")) {
        return bar(v * 1000.0);
    }
    if let Some(v) = parse_num(a.get("it_per_s")) {
        return bar(1000.0 / v);
    }
    if let Some(v) = parse_num(a.get("steps_per_s")) {
        let t = trainer.unwrap_or("trainer");
        return plain(Metric::StepTime, 1000.0 / v, format!("{t} step rate"));
    }
    let tokens = a.get("tokens_per_s");
    if let Some(v) = parse_num(tokens.map(|t| t.replace(',', "")).as_deref()) {
        let label = rate_label(a, trainer.unwrap_or("trainer"), "tokens/s");
        return plain(Metric::TokensPerSec, v, label);
    }
    if let Some(raw) = a.get("cum_samples_per_s") {
        let v = parse_num(Some(raw))?;
        return Some(Reading {
            metric: Metric::SamplesPerSec,
            value: v,
            label: trainer.unwrap_or("cumulative samples/s").to_string(),
            cumulative: Some(half_ulp(raw)),
        });
    }
    if let Some(v) = parse_num(a.get("samples_per_s")) {
        let label = if let Some(t) = trainer {
            rate_label(a, t, "samples/s")
        } else if a.contains_key("iter") {
            "DeepSpeed samples/s".into()
        } else {
            "Hugging Face run summary".into()
        };
        return plain(Metric::SamplesPerSec, v, label);
    }
    if let Some(v) = parse_num(a.get("busbw")) {
        return plain(Metric::BusBandwidth, v, "nccl-tests bus bandwidth".into());
    }
    if let Some(v) = parse_num(a.get("tflops")) {
        let t = trainer.unwrap_or("trainer");
        return plain(Metric::TflopsPerGpu, v, format!("{t} TFLOP/s/GPU"));
    }
    None
}

/// Pause markers per input: (line, pause), sorted by line.
type Markers = BTreeMap<usize, Vec<(u64, Pause)>>;

/// Builds the series from the progress samples and marks the samples that follow a known pause
/// (a checkpoint save or evaluation between the previous sample and this one, in the same input).
pub fn build(progress: &[Event], events: &[Event]) -> Vec<Series> {
    let mut markers: Markers = BTreeMap::new();
    for e in events.iter().filter(|e| e.kind == "checkpoint_saved") {
        markers
            .entry(e.input)
            .or_default()
            .push((e.source.line, Pause::Checkpoint));
    }
    let mut by_key: BTreeMap<SeriesKey, Vec<Sample>> = BTreeMap::new();
    for e in progress {
        if let Some(p) = pause_of(e) {
            markers.entry(e.input).or_default().push((e.source.line, p));
            continue;
        }
        if let Some((key, sample)) = sample_of(e) {
            by_key.entry(key).or_default().push(sample);
        }
    }
    for m in markers.values_mut() {
        m.sort_unstable_by_key(|x| x.0);
    }
    by_key
        .into_iter()
        .map(|(key, samples)| series_of(key, samples, &markers))
        .collect()
}

/// The pause a progress line marks (a checkpoint save, an evaluation), if it marks one.
fn pause_of(e: &Event) -> Option<Pause> {
    let a = &e.attrs;
    if a.contains_key("pause_checkpoint") {
        Some(Pause::Checkpoint)
    } else if a.contains_key("pause_eval") || a.get("desc").is_some_and(is_eval_label) {
        Some(Pause::Evaluation)
    } else {
        None
    }
}

/// The series a progress line belongs to and its sample, if it reads a rate.
fn sample_of(e: &Event) -> Option<(SeriesKey, Sample)> {
    let Reading {
        metric,
        value,
        label,
        cumulative,
    } = reading(e)?;
    let a = &e.attrs;
    let key = SeriesKey {
        metric,
        host: e.host.as_deref().map(str::to_string),
        rank: e.rank,
        label,
    };
    let sample = Sample {
        time_us: e.time_us,
        quality: e.quality,
        input: e.input,
        path: e.source.path.clone(),
        line: e.source.line,
        segment: a.get("segment").and_then(|s| s.parse().ok()).unwrap_or(0),
        text: a
            .get("text")
            .map(str::to_string)
            .unwrap_or_else(|| e.message.to_string()),
        iter: a.get("iter").and_then(|s| s.parse().ok()),
        value,
        pause: None,
        elapsed_s: a.get("elapsed").and_then(elapsed_s),
        epoch: a
            .get("epoch")
            .or_else(|| a.get("epoch2"))
            .and_then(|s| s.parse().ok()),
        cumulative,
    };
    Some((key, sample))
}

/// One series: its samples in time order, repeats of one step folded into one, a cumulative
/// average read back into the rate of each interval, each sample marked with the pause before
/// it (the first with the warm-up), thinned to [`MAX_SAMPLES_PER_SERIES`] (the last one kept).
fn series_of(key: SeriesKey, mut samples: Vec<Sample>, markers: &Markers) -> Series {
    place_bars(&mut samples);
    samples.sort_by_key(|s| (s.time_us.is_none(), s.time_us, s.input, s.line, s.segment));
    let mut samples = fold_repeats(samples);
    let cumulative = samples.iter().any(|s| s.cumulative.is_some());
    if cumulative {
        samples = interval_rates(samples);
    }
    // an epoch's time includes its checkpoint saves and validation by design
    if key.metric != Metric::EpochTime {
        mark_pauses(&mut samples, markers);
    }
    if let Some(first) = samples.first_mut().filter(|_| !cumulative) {
        // a cumulative average leaves the warm-up out itself
        first.pause.get_or_insert(Pause::Warmup);
    }
    let mut thinned = 0;
    if samples.len() > MAX_SAMPLES_PER_SERIES {
        let n = samples.len();
        let step = n.div_ceil(MAX_SAMPLES_PER_SERIES);
        let last = samples.pop();
        samples = samples.into_iter().step_by(step).collect();
        samples.extend(last);
        thinned = n - samples.len();
    }
    Series {
        key,
        samples,
        thinned,
    }
}

/// Consecutive samples of the same step (and epoch) are one figure printed again: by every rank
/// of a job that logs on all ranks, or once per metric (MXNet's Speedometer). They fold into the
/// first, with the median of their values.
fn fold_repeats(samples: Vec<Sample>) -> Vec<Sample> {
    let mut out: Vec<Sample> = Vec::with_capacity(samples.len());
    let mut values: Vec<f64> = Vec::new();
    for s in samples {
        let same = out.last().is_some_and(|p: &Sample| {
            p.iter.is_some() && p.iter == s.iter && p.epoch == s.epoch && p.input == s.input
        });
        if same {
            values.push(s.value);
            continue;
        }
        if let Some(p) = out.last_mut().filter(|_| values.len() > 1) {
            p.value = super::changepoint::median(&values);
        }
        values.clear();
        values.push(s.value);
        out.push(s);
    }
    if let Some(p) = out.last_mut().filter(|_| values.len() > 1) {
        p.value = super::changepoint::median(&values);
    }
    out
}

/// The rate of each interval of a cumulative average `A(n)` (the mean over steps `1..=n`):
/// the time to step `n` is proportional to `n / A(n)`, so an interval's rate is
/// `(n2 - n1) / (n2 / A2 - n1 / A1)`. An interval is read only once it is long enough for the
/// printed precision (its time known within 10 %): later in a run, intervals grow. A step count
/// that goes back starts a new run.
fn interval_rates(samples: Vec<Sample>) -> Vec<Sample> {
    let mut out = Vec::new();
    // (step, time to it, uncertainty of that time)
    let mut from: (i64, f64, f64) = (0, 0.0, 0.0);
    for mut s in samples {
        let (Some(n), Some(h)) = (s.iter, s.cumulative) else {
            continue;
        };
        if n <= from.0 {
            from = (0, 0.0, 0.0);
        }
        let t = n as f64 / s.value;
        let u = n as f64 * h / (s.value * s.value);
        let dt = t - from.1;
        if n <= 0 || dt <= 0.0 || u + from.2 > 0.1 * dt {
            continue;
        }
        s.value = (n - from.0) as f64 / dt;
        from = (n, t, u);
        out.push(s);
    }
    out
}

/// Marks each sample that follows a known pause in the same input (a checkpoint save or an
/// evaluation between the previous sample and it).
fn mark_pauses(samples: &mut [Sample], markers: &Markers) {
    let mut prev: Option<(usize, u64)> = None;
    for s in samples.iter_mut() {
        if let (Some((pi, pl)), Some(m)) = (prev, markers.get(&s.input)) {
            if pi == s.input && pl < s.line {
                let from = m.partition_point(|x| x.0 <= pl);
                if let Some(&(_, p)) = m[from..].iter().find(|x| x.0 <= s.line) {
                    s.pause = Some(p);
                }
            }
        }
        prev = Some((s.input, s.line));
    }
}

/// Progress-bar updates carry no time of their own: they borrow the time of a nearby line (the
/// same one for every update glued into one line). The bar's own elapsed counter places each
/// update after the first one of its run (a run ends when the counter goes back: a new bar).
fn place_bars(samples: &mut [Sample]) {
    samples.sort_by_key(|s| (s.input, s.line, s.segment));
    let mut anchor: Option<(usize, i64, i64)> = None; // (input, time of run start, its elapsed)
    let mut prev_el: Option<i64> = None;
    for s in samples.iter_mut() {
        let Some(el) = s.elapsed_s else {
            anchor = None;
            prev_el = None;
            continue;
        };
        let new_run = match (anchor, prev_el) {
            (Some((input, _, _)), Some(p)) => input != s.input || el < p,
            _ => true,
        };
        if new_run {
            anchor = s.time_us.map(|t| (s.input, t, el));
        }
        prev_el = Some(el);
        if let (Some((_, t0, el0)), Some(_)) = (anchor, s.time_us) {
            s.time_us = Some(t0 + (el - el0).max(0) * 1_000_000);
            s.quality = TimeQuality::Estimated;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elapsed_counters() {
        assert_eq!(elapsed_s("07:30"), Some(450));
        assert_eq!(elapsed_s("1:02:03"), Some(3723));
        assert_eq!(elapsed_s("x"), None);
    }

    #[test]
    fn eval_bars_are_pauses() {
        assert!(is_eval_label("Validation DataLoader 0"));
        assert!(!is_eval_label("Epoch 3"));
    }
}
