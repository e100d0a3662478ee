//! Progress of a scan on stderr: bundles done of total, bytes, rate and ETA. Drawn only when
//! asked for (the command line asks when stderr is a terminal and `--quiet` is not given).

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

/// A progress display shared by the worker threads; a no-op when disabled.
pub struct Progress {
    bar: Option<ProgressBar>,
    bundles: u64,
    done: AtomicU64,
}

impl Progress {
    /// A display for `bundles` bundles holding `bytes` bytes on disk; hidden unless `enabled`.
    pub fn new(enabled: bool, bundles: u64, bytes: u64) -> Progress {
        let bar = enabled.then(|| {
            let bar = ProgressBar::with_draw_target(Some(bytes), ProgressDrawTarget::stderr());
            let style = ProgressStyle::with_template(
                "{spinner} {msg} [{elapsed_precise}] [{wide_bar}] {binary_bytes}/{binary_total_bytes} {binary_bytes_per_sec} ETA {eta}",
            )
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> ");
            bar.set_style(style);
            bar.set_message(format!("0/{bundles} bundles"));
            bar.enable_steady_tick(Duration::from_millis(200));
            bar
        });
        Progress {
            bar,
            bundles,
            done: AtomicU64::new(0),
        }
    }

    /// A display that never draws.
    pub fn hidden() -> Progress {
        Progress::new(false, 0, 0)
    }

    /// Counts one finished bundle of `disk_bytes` bytes.
    pub fn advance(&self, disk_bytes: u64) {
        let done = self.done.fetch_add(1, Ordering::Relaxed) + 1;
        if let Some(bar) = &self.bar {
            bar.inc(disk_bytes);
            bar.set_message(format!("{done}/{} bundles", self.bundles));
        }
    }

    /// Bundles finished so far.
    pub fn done(&self) -> u64 {
        self.done.load(Ordering::Relaxed)
    }

    /// Removes the display from the terminal.
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
