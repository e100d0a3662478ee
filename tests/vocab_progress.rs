//! Coverage of the trainers' progress vocabulary (../shared/vocab/trainer-progress.tsv): every
//! row's rendered example is scanned as its emitter prints it and must give a `progress` sample
//! (a figure that feeds a throughput series) or carry a recorded decision (a row that states no
//! rate: a loss, a step marker, a latency). Skips with a message when the table is absent.

use faultline::events::RecognizerSet;
use faultline::scan::scan_buffer;
use faultline::Knowledge;
use std::path::Path;

/// Rows that state no rate, by a word of their `metric` column, and why they feed no series.
const NO_RATE: [(&str, &str); 4] = [
    ("loss", "a loss value, not a rate"),
    ("train_loss", "a loss value, not a rate"),
    (
        "step",
        "a step counter without a time (DeepSpeed's engine step line)",
    ),
    (
        "TTFT/TPOT/ITL",
        "serving latencies of a benchmark, not a throughput",
    ),
];

/// Rows that are not a series of their own: a rate that follows the batch's content, a field
/// shown apart that the whole line's row already reads.
const NOT_A_SERIES: [(&str, &str); 2] = [
    (
        "input throughput",
        "SGLang prefill throughput follows the new tokens of each batch",
    ),
    (
        "throughput per GPU",
        "a field of the Megatron iteration line, read with it (its step time is the series)",
    ),
];

/// The capture names that carry a figure (src/throughput/series.rs reads these).
const FIGURES: [&str; 15] = [
    "step_ms",
    "step_s",
    "step_time",
    "epoch_s",
    "it_per_s",
    "s_per_it",
    "steps_per_s",
    "samples_per_s",
    "samples_per_s2",
    "cum_samples_per_s",
    "tokens_per_s",
    "tokens_per_s2",
    "tflops",
    "busbw",
    "train_samples_per_second",
];

fn figure_of(set: &RecognizerSet, line: &str) -> Option<String> {
    let buf = format!("{line}\n");
    let out = scan_buffer(buf.as_bytes(), set, false, 1000);
    out.events
        .iter()
        .filter(|e| e.draft.kind == "progress")
        .find_map(|e| {
            FIGURES
                .iter()
                .find(|f| e.draft.attrs.get(f).is_some())
                .map(|f| format!("{} ({f})", e.draft.recognizer()))
        })
}

#[test]
fn every_trainer_progress_row_feeds_a_series_or_has_a_decision() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/vocab");
    let Ok(text) = std::fs::read_to_string(dir.join("trainer-progress.tsv")) else {
        eprintln!("SKIPPED: ../shared/vocab/trainer-progress.tsv is absent");
        return;
    };
    let k = Knowledge::load(&[]).expect("built-in knowledge loads");
    let set = &k.recognizers;
    let (mut fed, mut decided, mut missed) = (0, 0, Vec::new());
    for row in text.lines().skip(2) {
        let cols: Vec<&str> = row.split('\t').collect();
        let (Some(framework), Some(example), Some(metric)) =
            (cols.first(), cols.get(3), cols.get(4))
        else {
            continue;
        };
        let example = example.replace("\\t", "\t");
        let decision = NO_RATE
            .iter()
            .chain(NOT_A_SERIES.iter())
            .find(|(m, _)| metric == m);
        match (figure_of(set, &example), decision) {
            (Some(by), _) => {
                fed += 1;
                eprintln!("feeds    {framework:<40} {metric:<32} {by}");
            }
            (None, Some((_, why))) => {
                decided += 1;
                eprintln!("decision {framework:<40} {metric:<32} {why}");
            }
            (None, None) => missed.push(format!("{framework}: {example}")),
        }
    }
    eprintln!(
        "trainer-progress.tsv: {fed} rows feed a series, {decided} carry a decision, {} neither",
        missed.len()
    );
    assert!(fed > 0, "no row was read");
    assert!(missed.is_empty(), "rows that feed no series: {missed:#?}");
}
