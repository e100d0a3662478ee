//! A horizontal time axis for the HTML charts: long quiet gaps are left out and drawn as breaks,
//! so that an incident of ten minutes stays readable next to a checkpoint saved hours before it.

use crate::report::postmortem::human_span;
use std::fmt::Write;

/// Width of a break between two drawn stretches of time.
const BREAK_W: f64 = 26.0;
/// Narrowest stretch drawn.
const MIN_SEG: f64 = 70.0;
/// Room left at both ends of a stretch.
const PAD: f64 = 8.0;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Clock {
    /// UTC wall time, microseconds since the epoch.
    Wall,
    /// Kernel uptime of one host, microseconds since boot.
    Uptime,
}

/// A stretch of time drawn without interruption.
#[derive(Clone, Debug)]
struct Seg {
    t0: i64,
    t1: i64,
    x0: f64,
    x1: f64,
}

/// A horizontal time axis that leaves out long quiet gaps (drawn as breaks), so that an
/// incident of ten minutes stays readable next to a checkpoint saved four hours before it.
#[derive(Clone, Debug)]
pub struct Axis {
    clock: Clock,
    segs: Vec<Seg>,
}

const STEPS_S: [i64; 22] = [
    1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600, 7200, 10800, 21600, 43200, 86400,
    172800, 604800, 2592000, 31536000,
];

impl Axis {
    /// An axis over these times (any order, duplicates allowed) between `x0` and `x1`.
    pub fn new(times: &[i64], clock: Clock, x0: f64, x1: f64) -> Axis {
        let mut t: Vec<i64> = times.to_vec();
        t.sort_unstable();
        t.dedup();
        if t.is_empty() {
            t.push(0);
        }
        let span = t[t.len() - 1] - t[0];
        // a gap is left out when it is longer than ten minutes and a fifth of the whole span
        let min_gap = (span / 5).max(600_000_000);
        let mut clusters: Vec<(i64, i64)> = vec![(t[0], t[0])];
        for &v in &t[1..] {
            let last = clusters.last_mut().expect("one cluster");
            if v - last.1 > min_gap {
                clusters.push((v, v));
            } else {
                last.1 = v;
            }
        }
        let n = clusters.len() as f64;
        let avail = (x1 - x0) - (n - 1.0) * BREAK_W;
        let min_w = (avail / n).min(MIN_SEG);
        let total: f64 = clusters.iter().map(|c| (c.1 - c.0) as f64).sum();
        let mut x = x0;
        let mut segs = Vec::new();
        for c in &clusters {
            let share = if total > 0.0 {
                (c.1 - c.0) as f64 / total
            } else {
                1.0 / n
            };
            let w = min_w + (avail - n * min_w) * share;
            segs.push(Seg {
                t0: c.0,
                t1: c.1,
                x0: x,
                x1: x + w,
            });
            x += w + BREAK_W;
        }
        Axis { clock, segs }
    }

    /// The x coordinate of a time; times between two stretches fall inside the break.
    pub fn x(&self, t: i64) -> f64 {
        let first = &self.segs[0];
        if t <= first.t0 {
            return inner(first, first.t0);
        }
        for (i, s) in self.segs.iter().enumerate() {
            if t <= s.t1 {
                return inner(s, t);
            }
            if let Some(next) = self.segs.get(i + 1) {
                if t < next.t0 {
                    let f = (t - s.t1) as f64 / (next.t0 - s.t1) as f64;
                    return s.x1 + f * (next.x0 - s.x1);
                }
            }
        }
        let last = &self.segs[self.segs.len() - 1];
        inner(last, last.t1)
    }

    /// Tick marks, labels and breaks along `y`, with dashed break lines up to `top`.
    pub fn ticks_svg(&self, o: &mut String, top: f64, y: f64) {
        let _ = writeln!(
            o,
            r#"<line class="axis" x1="{:.1}" y1="{y:.1}" x2="{:.1}" y2="{y:.1}"/>"#,
            self.segs[0].x0,
            self.segs[self.segs.len() - 1].x1
        );
        for (i, s) in self.segs.iter().enumerate() {
            let w = s.x1 - s.x0;
            let dur = s.t1 - s.t0;
            let (step, ticks) = ticks_of(s);
            // a narrow stretch has one tick, labelled with its date; a wide one gets the date
            // (or the uptime in days) once, on a second row
            let narrow = w < 170.0;
            for &k in &ticks {
                let x = self.x(k);
                let label = if narrow && dur < step {
                    self.short_stretch_label(k)
                } else {
                    self.tick_label(k, step)
                };
                let _ = writeln!(
                    o,
                    r#"<line class="tick" x1="{x:.1}" y1="{y:.1}" x2="{x:.1}" y2="{:.1}"/><text class="tl" x="{x:.1}" y="{:.1}"><title>{}</title>{label}</text>"#,
                    y + 4.0,
                    y + 15.0,
                    self.stretch_label(k)
                );
            }
            if !narrow {
                let _ = writeln!(
                    o,
                    r#"<text class="tl date" x="{:.1}" y="{:.1}">{}</text>"#,
                    if s.t0 == s.t1 {
                        inner(s, s.t0)
                    } else {
                        s.x0 + 12.0
                    },
                    y + 29.0,
                    self.stretch_label(s.t0)
                );
            }
            if let Some(next) = self.segs.get(i + 1) {
                let mx = (s.x1 + next.x0) / 2.0;
                let _ = writeln!(
                    o,
                    r#"<g class="brk"><title>{} without events</title><line x1="{mx:.1}" y1="{top:.1}" x2="{mx:.1}" y2="{y:.1}"/><text class="tl end" x="{:.1}" y="{:.1}">≈{}</text></g>"#,
                    human_span(next.t0 - s.t1),
                    mx + 2.0,
                    y + 29.0,
                    human_span(next.t0 - s.t1)
                );
            }
        }
    }

    fn tick_label(&self, t: i64, step: i64) -> String {
        match self.clock {
            Clock::Wall => {
                let fmt = if step >= 86_400_000_000 {
                    "%m-%d"
                } else if step >= 60_000_000 {
                    "%H:%M"
                } else {
                    "%H:%M:%S"
                };
                chrono::DateTime::from_timestamp_micros(t)
                    .map_or_else(|| t.to_string(), |d| d.format(fmt).to_string())
            }
            Clock::Uptime => format!("{} s", t / 1_000_000),
        }
    }

    fn short_stretch_label(&self, t: i64) -> String {
        match self.clock {
            Clock::Wall => chrono::DateTime::from_timestamp_micros(t)
                .map_or_else(|| t.to_string(), |d| d.format("%m-%d %H:%M").to_string()),
            Clock::Uptime => format!("{} s", t / 1_000_000),
        }
    }

    fn stretch_label(&self, t: i64) -> String {
        match self.clock {
            Clock::Wall => chrono::DateTime::from_timestamp_micros(t).map_or_else(
                || t.to_string(),
                |d| d.format("%Y-%m-%d %H:%M:%S UTC").to_string(),
            ),
            Clock::Uptime => format!("uptime {}", human_span(t)),
        }
    }
}

/// The tick step of a stretch (the first of [`STEPS_S`] that gives a tick per 95 px at most) and
/// its ticks: the step's multiples inside it, or its start alone when it is shorter than a step.
fn ticks_of(s: &Seg) -> (i64, Vec<i64>) {
    let (w, dur) = (s.x1 - s.x0, s.t1 - s.t0);
    let step = STEPS_S
        .iter()
        .map(|s| s * 1_000_000)
        .find(|&st| dur as f64 / st as f64 <= (w / 95.0).max(1.0))
        .unwrap_or(STEPS_S[STEPS_S.len() - 1] * 1_000_000);
    if dur < step {
        return (step, vec![s.t0]);
    }
    let mut ticks = Vec::new();
    let mut k = s.t0.div_euclid(step) * step;
    if k < s.t0 {
        k += step;
    }
    while k <= s.t1 {
        ticks.push(k);
        k += step;
    }
    (step, ticks)
}

fn inner(s: &Seg, t: i64) -> f64 {
    let (a, b) = (s.x0 + PAD, s.x1 - PAD);
    if s.t1 == s.t0 {
        (a + b) / 2.0
    } else {
        a + (t - s.t0) as f64 / (s.t1 - s.t0) as f64 * (b - a)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn long_quiet_gaps_become_breaks_and_times_stay_in_order() {
        let h = 3_600_000_000i64;
        let times = [0, 4 * h, 4 * h + 600_000_000, 4 * h + 1_200_000_000];
        let a = Axis::new(&times, Clock::Wall, 100.0, 1100.0);
        assert_eq!(a.segs.len(), 2, "{:?}", a.segs);
        // the ten minutes of the incident get most of the width
        assert!(a.segs[1].x1 - a.segs[1].x0 > 800.0, "{:?}", a.segs);
        let xs: Vec<f64> = times.iter().map(|&t| a.x(t)).collect();
        assert!(xs.windows(2).all(|w| w[0] < w[1]), "{xs:?}");
        // a time inside the gap lands inside the break
        let mid = a.x(2 * h);
        assert!(mid > a.segs[0].x1 && mid < a.segs[1].x0, "{mid}");
        // one instant only: one stretch, the mark in its middle
        let one = Axis::new(&[5], Clock::Uptime, 0.0, 100.0);
        assert!((one.x(5) - 50.0).abs() < 1e-9);
    }
}
