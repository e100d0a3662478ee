//! Progress of `analyze` and `timeline` on stderr (a terminal only, not with --quiet): a bar of
//! the bytes read from disk out of the inputs' size on disk (compressed bytes for compressed
//! inputs, so that the bar and the total agree), with the throughput and the time left; drawn
//! from the first second on so that small inputs show nothing, and cleared when the analysis
//! is done. Standard input, whose size is unknown, shows the bytes read and the throughput.

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::time::Duration;

/// The spinner; cleared when dropped.
pub(super) struct Spinner {
    bar: ProgressBar,
}

/// Bytes on disk under the given paths (folders walked, links not followed; capped walk).
fn disk_bytes(paths: &[String]) -> u64 {
    let mut total = 0u64;
    let mut stack: Vec<std::path::PathBuf> = paths
        .iter()
        .map(|p| std::path::PathBuf::from(faultline::input::split_host(p).0))
        .collect();
    let mut seen = 0usize;
    while let Some(p) = stack.pop() {
        seen += 1;
        if seen > 100_000 {
            break;
        }
        let Ok(m) = std::fs::symlink_metadata(&p) else {
            continue;
        };
        if m.is_dir() {
            if let Ok(rd) = std::fs::read_dir(&p) {
                stack.extend(rd.flatten().map(|e| e.path()));
            }
        } else if m.is_file() {
            total += m.len();
        }
    }
    total
}

impl Spinner {
    /// Starts the bar for `what` over `paths`.
    pub(super) fn start(what: &str, paths: &[String]) -> Spinner {
        let total = disk_bytes(paths);
        let from = faultline::input::progress::read_bytes();
        let bar = ProgressBar::with_draw_target(Some(total.max(1)), ProgressDrawTarget::hidden());
        let template = if total > 0 {
            "{msg} [{bar:30}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec}, {eta} left [{elapsed_precise}]"
        } else {
            "{spinner} {msg} {binary_bytes} read, {binary_bytes_per_sec} [{elapsed_precise}]"
        };
        let style = ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
        bar.set_style(style);
        bar.set_message(what.to_string());
        let shown = bar.clone();
        // drawn only once a second has passed: quick runs print nothing
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if shown.is_finished() {
                return;
            }
            shown.set_draw_target(ProgressDrawTarget::stderr());
            while !shown.is_finished() {
                let read = faultline::input::progress::read_bytes().saturating_sub(from);
                // a chunk read twice must not push the bar past its end
                shown.set_position(if total > 0 { read.min(total) } else { read });
                shown.tick();
                std::thread::sleep(Duration::from_millis(120));
            }
        });
        Spinner { bar }
    }
}

impl Drop for Spinner {
    fn drop(&mut self) {
        self.bar.finish_and_clear();
    }
}
