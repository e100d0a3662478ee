//! The scan itself: discover bundles, keep this shard's, analyze each one with
//! [`crate::analyze`] on the rayon pool (bundles in parallel, chunks of big files in parallel
//! inside each analysis), and fold the fleet summary. A bundle that cannot be read, or whose
//! analysis fails, becomes a line with its warnings; it never stops the others.

use super::bundle::{self, BundleLine};
use super::discovery::{self, Bundle};
use super::progress::Progress;
use super::shard::Shard;
use super::summary::{self, FleetSummary};
use crate::input::Limits;
use crate::timeline::TimeOptions;
use crate::{Knowledge, Options};
use rayon::prelude::*;
use std::panic::AssertUnwindSafe;
use std::time::{Duration, Instant};

/// What shapes a scan.
#[derive(Clone, Debug)]
pub struct ScanOptions {
    /// Scan roots: files and folders.
    pub paths: Vec<String>,
    /// This worker's shard ([`Shard::ALL`] for the whole archive).
    pub shard: Shard,
    /// Time options for every bundle.
    pub time: TimeOptions,
    /// Input caps, per bundle.
    pub limits: Limits,
    /// Draw progress on stderr.
    pub progress: bool,
    /// `--exclude` globs: files and archive members not read (see [`discovery::Discovery::exclude`]).
    pub exclude: Vec<String>,
}

/// The result of a scan.
#[derive(Clone, Debug)]
pub struct ScanResult {
    /// One line per bundle of this shard, in discovery order.
    pub lines: Vec<BundleLine>,
    /// The fleet summary of those lines.
    pub summary: FleetSummary,
    /// Things discovery skipped (FIFOs, link loops), for stderr.
    pub notes: Vec<String>,
    /// Wall time of the analyses.
    pub elapsed: Duration,
}

impl ScanResult {
    /// True when there were bundles and not one could be read.
    pub fn nothing_read(&self) -> bool {
        !self.lines.is_empty() && self.lines.iter().all(|l| l.unreadable)
    }

    /// The JSON Lines output: one line per bundle, then the fleet line.
    pub fn to_jsonl(&self) -> String {
        let mut out = String::new();
        for l in &self.lines {
            out.push_str(&to_line(l));
        }
        out.push_str(&to_line(&self.summary));
        out
    }
}

/// One value as a JSON line with its newline.
pub fn to_line<T: serde::Serialize>(v: &T) -> String {
    let mut s = serde_json::to_string(v).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}

/// The bundles of one shard, in discovery order.
pub fn select(bundles: Vec<Bundle>, shard: Shard) -> Vec<Bundle> {
    bundles.into_iter().filter(|b| shard.owns(&b.key)).collect()
}

fn panic_text(p: &(dyn std::any::Any + Send)) -> String {
    p.downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| p.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "unknown panic".into())
}

/// Analyzes one bundle; never panics, never fails: problems end up in the line's warnings.
pub fn analyze_bundle(b: &Bundle, opts: &ScanOptions, k: &Knowledge) -> BundleLine {
    if let Some(e) = &b.error {
        return BundleLine::failed(b, e);
    }
    let o = Options {
        paths: b.analyze_paths(),
        rule_files: Vec::new(),
        time: opts.time.clone(),
        limits: opts.limits,
        parallel_chunks: true,
        filter: Default::default(),
        exclude: opts.exclude.clone(),
    };
    let run = std::panic::catch_unwind(AssertUnwindSafe(|| {
        let a = crate::analyze(&o, k);
        let rep = crate::report::json::build(&a, &k.catalog);
        bundle::build(b, &a, &rep)
    }));
    run.unwrap_or_else(|p| {
        let why = format!(
            "analysis failed (internal error: {}); the other bundles are not affected",
            panic_text(p.as_ref())
        );
        BundleLine::failed(b, &why)
    })
}

/// Analyzes the given bundles in parallel, advancing `progress`; lines keep the bundles' order.
pub fn analyze_all(
    bundles: &[Bundle],
    opts: &ScanOptions,
    k: &Knowledge,
    progress: &Progress,
) -> Vec<BundleLine> {
    bundles
        .par_iter()
        .with_max_len(1)
        .map(|b| {
            let line = analyze_bundle(b, opts, k);
            progress.advance(b.disk_bytes);
            line
        })
        .collect()
}

/// Runs a whole scan: discovery, shard selection, analyses, summary.
pub fn scan(opts: &ScanOptions, k: &Knowledge) -> ScanResult {
    let mut found = discovery::discover(&opts.paths);
    found.exclude(&opts.exclude);
    let bundles = select(found.bundles, opts.shard);
    let bytes = bundles.iter().map(|b| b.disk_bytes).sum();
    let progress = Progress::new(opts.progress, bundles.len() as u64, bytes);
    let start = Instant::now();
    let lines = analyze_all(&bundles, opts, k, &progress);
    let elapsed = start.elapsed();
    progress.finish();
    let mut summary = summary::fold(&lines);
    if opts.shard.count > 1 {
        summary.shard = Some(opts.shard.to_string());
    }
    ScanResult {
        lines,
        summary,
        notes: found.notes,
        elapsed,
    }
}
