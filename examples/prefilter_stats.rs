//! How selective and how fast the line prefilter is (issue 17, item 1): for each file, the
//! prefilter's own throughput on one thread (its search of candidate lines, as the scan runs it) (best of three passes over the mapped file), its
//! candidate lines (lines with at least one literal) in all and per MB, and then the literals
//! that put the most lines forward over all the files, so that a short or common literal shows
//! itself on real background logs.
//!
//! `cargo run --profile fast --example prefilter_stats -- FILE...`
//! (`scripts/bench-vs-rg.sh prefilter` runs it on the 256 MiB benchmark log and `../shared/noise`).

use aho_corasick::AhoCorasick;
use std::time::Instant;

fn main() {
    let files: Vec<String> = std::env::args().skip(1).collect();
    if files.is_empty() {
        eprintln!("usage: prefilter_stats FILE...");
        std::process::exit(2);
    }
    let set = faultline::events::RecognizerSet::load(&[]).expect("built-in recognizers");
    let literals = &set.prefilter_literals;
    let each = AhoCorasick::new(literals).expect("literals");
    let mut by_literal = vec![0u64; literals.len()];
    println!(
        "{} literals\n{:<44} {:>9} {:>10} {:>11} {:>9} {:>11}",
        literals.len(),
        "file",
        "MB",
        "MB/s",
        "candidates",
        "per MB",
        "lines/MB"
    );
    for f in &files {
        let Ok(file) = std::fs::File::open(f) else {
            eprintln!("{f}: cannot open");
            continue;
        };
        // SAFETY: the file is only read, and a benchmark input is not changed while it runs
        let map = match unsafe { memmap2::Mmap::map(&file) } {
            Ok(m) => m,
            Err(e) => {
                eprintln!("{f}: {e}");
                continue;
            }
        };
        let buf: &[u8] = &map;
        let mut best = f64::MAX;
        let mut lines = Vec::new();
        for _ in 0..3 {
            let t = Instant::now();
            lines = set.prefilter.lines(buf);
            best = best.min(t.elapsed().as_secs_f64());
        }
        for &(s, e) in &lines {
            let mut seen = vec![false; literals.len()];
            for m in each.find_overlapping_iter(&buf[s..e]) {
                seen[m.pattern().as_usize()] = true;
            }
            for (i, hit) in seen.into_iter().enumerate() {
                by_literal[i] += u64::from(hit);
            }
        }
        let mb = buf.len() as f64 / 1e6;
        let all_lines = bytecount_lines(buf) as f64;
        let name = f.rsplit('/').next().unwrap_or(f);
        println!(
            "{:<44} {:>9.1} {:>10.0} {:>11} {:>9.1} {:>11.0}",
            name,
            mb,
            mb / best.max(1e-9),
            lines.len(),
            lines.len() as f64 / mb.max(1e-9),
            all_lines / mb.max(1e-9)
        );
    }
    let mut top: Vec<(u64, &String)> = by_literal.iter().copied().zip(literals).collect();
    top.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(b.1)));
    println!("\nliterals that put the most lines forward (all files):");
    for (n, l) in top.iter().take(15).filter(|(n, _)| *n > 0) {
        println!("{n:>11}  {l:?}");
    }
}

/// Newlines in `buf`, plus one for a last line without one.
fn bytecount_lines(buf: &[u8]) -> usize {
    let n = memchr::memchr_iter(b'\n', buf).count();
    n + usize::from(buf.last().is_some_and(|&b| b != b'\n'))
}
