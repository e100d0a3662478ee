//! Progress of `analyze` and `timeline` on stderr (a terminal only, not with --quiet): a
//! spinner with the inputs' size on disk and the elapsed time, drawn from the first second on
//! so that small inputs show nothing, and cleared when the analysis is done.

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
    /// Starts the spinner for `what` over `paths`.
    pub(super) fn start(what: &str, paths: &[String]) -> Spinner {
        let bytes = disk_bytes(paths);
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::hidden());
        let style = ProgressStyle::with_template("{spinner} {msg} [{elapsed_precise}]")
            .unwrap_or_else(|_| ProgressStyle::default_spinner());
        bar.set_style(style);
        bar.set_message(format!(
            "{what} {} on disk",
            faultline::fleet::text::human_bytes(bytes)
        ));
        let shown = bar.clone();
        // drawn only once a second has passed: quick runs print nothing
        std::thread::spawn(move || {
            std::thread::sleep(Duration::from_secs(1));
            if !shown.is_finished() {
                shown.set_draw_target(ProgressDrawTarget::stderr());
                shown.enable_steady_tick(Duration::from_millis(120));
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
