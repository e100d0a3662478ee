//! The throughput curve of a slowdown incident: one SVG line chart of the trainer's own figure
//! (step time or throughput) with the slow phase shaded and the two levels drawn as dashed lines.

use super::escape;
use crate::report::json::SlowdownJson;
use crate::report::postmortem::pretty;
use std::fmt::Write;

const W: f64 = 900.0;
const H: f64 = 220.0;
const LEFT: f64 = 70.0;
const RIGHT: f64 = 20.0;
const TOP: f64 = 16.0;
const BOTTOM: f64 = 40.0;

fn fmt_value(v: f64) -> String {
    if v >= 100.0 {
        format!("{v:.0}")
    } else {
        format!("{v:.2}")
    }
}

/// Writes the section: the measured levels as text, then the chart. `t` makes report text safe
/// for the page (redaction and escaping).
pub fn section(t: &dyn Fn(&str) -> String, sd: &SlowdownJson, o: &mut String) {
    summary(t, sd, o);
    let Some(c) = Chart::new(sd) else {
        return;
    };
    let _ = writeln!(
        o,
        r#"<figure class="panel"><svg class="curve" viewBox="0 0 {W} {H}" width="{W}" height="{H}" role="img" aria-label="throughput curve">"#
    );
    c.slow_phase(o);
    c.axes(o);
    c.series(o);
    c.time_labels(o);
    let _ = writeln!(
        o,
        r#"<text class="xl" x="{:.1}" y="{:.1}" text-anchor="middle">{} ({})</text>"#,
        LEFT + c.pw / 2.0,
        H - 6.0,
        t(&sd.series),
        escape(sd.unit)
    );
    let _ = writeln!(o, "</svg></figure>");
}

/// The levels, the ratio and the span of the slowdown as one sentence.
fn summary(t: &dyn Fn(&str) -> String, sd: &SlowdownJson, o: &mut String) {
    let state = match (&sd.recovered_at, sd.ongoing) {
        (Some(r), _) => format!("recovered at {}", pretty(r)),
        (None, true) => "still slow at the end of the log".into(),
        (None, false) => "then the job stopped".into(),
    };
    let pauses: Vec<String> = sd.pauses.iter().map(|(k, n)| format!("{k} ×{n}")).collect();
    let _ = writeln!(
        o,
        "<h4>Throughput</h4>\n<p>{}: {} → {} {} ({:.0}% of the earlier throughput) over {} samples from {}, {}{}.</p>",
        t(&sd.series),
        fmt_value(sd.baseline),
        fmt_value(sd.degraded),
        escape(sd.unit),
        sd.ratio * 100.0,
        sd.samples,
        sd.start.as_deref().map(pretty).unwrap_or_else(|| "an unknown time".into()),
        state,
        if pauses.is_empty() {
            String::new()
        } else {
            format!("; known pauses left out of the series: {}", pauses.join(", "))
        }
    );
}

/// The chart's scale: the curve's points mapped into the plot area.
struct Chart<'a> {
    sd: &'a SlowdownJson,
    /// Points on the curve (at least two).
    n: usize,
    /// The value at the bottom of the plot (zero or below) and the span to the top.
    lo: f64,
    span: f64,
    /// Width and height of the plot area.
    pw: f64,
    ph: f64,
}

impl<'a> Chart<'a> {
    /// The scale of `sd`'s curve; `None` when it has fewer than two points.
    fn new(sd: &'a SlowdownJson) -> Option<Chart<'a>> {
        let n = sd.curve.len();
        if n < 2 {
            return None;
        }
        let values = || {
            sd.curve
                .iter()
                .map(|p| p.1)
                .chain([sd.baseline, sd.degraded])
        };
        let hi = values().fold(f64::MIN, f64::max);
        // from zero, so that the drop looks as large as it is
        let lo = values().fold(f64::MAX, f64::min).min(0.0);
        Some(Chart {
            sd,
            n,
            lo,
            span: if hi > lo { hi - lo } else { 1.0 },
            pw: W - LEFT - RIGHT,
            ph: H - TOP - BOTTOM,
        })
    }

    fn x(&self, i: usize) -> f64 {
        LEFT + self.pw * i as f64 / (self.n - 1) as f64
    }

    fn y(&self, v: f64) -> f64 {
        TOP + self.ph * (1.0 - (v - self.lo) / self.span)
    }

    /// The first point of the slow phase and one past its last, within the curve.
    fn slow(&self) -> (usize, usize) {
        let s = self.sd.curve_slow;
        (s.0.min(self.n - 1), s.1.clamp(1, self.n))
    }

    /// The shaded slow phase.
    fn slow_phase(&self, o: &mut String) {
        let (a, b) = self.slow();
        let (xa, xb) = (self.x(a), self.x(b - 1).max(self.x(a) + 2.0));
        let _ = writeln!(
            o,
            r#"<rect class="slow" x="{xa:.1}" y="{TOP}" width="{:.1}" height="{}"><title>slow phase</title></rect>"#,
            xb - xa,
            self.ph
        );
    }

    /// The axes, the two levels as dashed lines, and the value at the bottom.
    fn axes(&self, o: &mut String) {
        let (pw, ph) = (self.pw, self.ph);
        let _ = writeln!(
            o,
            r#"<line class="axis" x1="{LEFT}" y1="{:.1}" x2="{:.1}" y2="{:.1}"/><line class="axis" x1="{LEFT}" y1="{TOP}" x2="{LEFT}" y2="{:.1}"/>"#,
            TOP + ph,
            LEFT + pw,
            TOP + ph,
            TOP + ph
        );
        for (cls, v, label) in [
            ("base", self.sd.baseline, "before"),
            ("deg", self.sd.degraded, "slow"),
        ] {
            let _ = writeln!(
                o,
                r#"<line class="lvl {cls}" x1="{LEFT}" y1="{0:.1}" x2="{1:.1}" y2="{0:.1}"/><text class="yl" x="{2:.1}" y="{3:.1}">{label} {4}</text>"#,
                self.y(v),
                LEFT + pw,
                LEFT - 4.0,
                self.y(v) + 4.0,
                fmt_value(v)
            );
        }
        let _ = writeln!(
            o,
            r#"<text class="yl" x="{:.1}" y="{:.1}">{}</text>"#,
            LEFT - 4.0,
            TOP + ph + 4.0,
            fmt_value(self.lo)
        );
    }

    /// The curve as a line, and each point with its time and value.
    fn series(&self, o: &mut String) {
        let pts: Vec<String> = self
            .sd
            .curve
            .iter()
            .enumerate()
            .map(|(i, p)| format!("{:.1},{:.1}", self.x(i), self.y(p.1)))
            .collect();
        let _ = writeln!(
            o,
            r#"<polyline class="series" points="{}"/>"#,
            pts.join(" ")
        );
        for (i, (when, v)) in self.sd.curve.iter().enumerate() {
            let _ = writeln!(
                o,
                r#"<circle class="pt" cx="{:.1}" cy="{:.1}" r="2.2"><title>{} — {} {}</title></circle>"#,
                self.x(i),
                self.y(*v),
                when.as_deref()
                    .map(pretty)
                    .unwrap_or_else(|| "no time".into()),
                fmt_value(*v),
                escape(self.sd.unit)
            );
        }
    }

    /// Time labels at both ends and at the start of the slow phase.
    fn time_labels(&self, o: &mut String) {
        let a = self.slow().0;
        for (i, anchor) in [(0, "start"), (a, "middle"), (self.n - 1, "end")] {
            if let Some(when) = self.sd.curve[i].0.as_deref() {
                let _ = writeln!(
                    o,
                    r#"<text class="xl" x="{:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
                    self.x(i),
                    H - BOTTOM + 16.0,
                    pretty(when)
                );
            }
        }
    }
}

/// Style of the chart.
pub const CSS: &str = "svg.curve{display:block;max-width:100%;height:auto;font-family:system-ui,sans-serif}\
svg.curve .slow{fill:#e53935;fill-opacity:.12}svg.curve .axis{stroke:#777}\
svg.curve .lvl{stroke-dasharray:5 4;stroke-width:1.2}svg.curve .lvl.base{stroke:#2e7d32}svg.curve .lvl.deg{stroke:#c62828}\
svg.curve .series{fill:none;stroke:#1565c0;stroke-width:1.6}svg.curve .pt{fill:#1565c0}svg.curve .pt:hover{r:4}\
svg.curve .yl{font-size:10.5px;text-anchor:end;fill:#444}svg.curve .xl{font-size:10.5px;fill:#444}\n";
