//! The timeline picture of the HTML report: inline SVG, one panel per clock (wall time, then the
//! kernel uptime of each host whose lines carry no date), one lane per host/GPU, one mark per
//! event coloured by layer, incident windows as bands, the primary fault of each incident ringed.
//! Hovering a mark shows its time, kind and verbatim line (an SVG `<title>`, no script).
//!
//! The time axis ([`Axis`]) is independent of the marks: a later chart on the same clock (a
//! throughput curve of a slowdown incident, say) builds an [`Axis`] over its own times and draws
//! with [`Axis::x`] and [`Axis::ticks_svg`].

pub use super::axis::{Axis, Clock};
use super::Page;
use crate::report::json::{EventJson, Report};
use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

/// Width of the SVG coordinate system.
pub const WIDTH: f64 = 1200.0;
/// Left edge of the plot area (lane labels sit left of it).
pub const PLOT_X0: f64 = 270.0;
/// Right edge of the plot area.
pub const PLOT_X1: f64 = 1185.0;
const LANE_H: f64 = 16.0;
const TOP: f64 = 30.0;
const AXIS_H: f64 = 40.0;
/// Most lanes drawn in one panel; the rest share one last lane.
pub const MAX_LANES: usize = 96;
/// Most marks drawn in one panel (primary faults are always drawn).
pub const MAX_MARKS: usize = 3000;

/// Which clock a panel or chart runs on.
/// Wall time of an event in microseconds, parsed back from the report.
pub fn wall_us(e: &EventJson) -> Option<i64> {
    e.time
        .as_deref()
        .and_then(|t| chrono::DateTime::parse_from_rfc3339(t).ok())
        .map(|d| d.timestamp_micros())
}

/// One panel: the events on one clock.
struct Panel<'a> {
    clock: Clock,
    title: String,
    events: Vec<(i64, &'a EventJson)>,
}

/// Events that can be placed on no clock (no wall time, no uptime).
pub fn untimed(r: &Report) -> Vec<&EventJson> {
    r.events
        .iter()
        .filter(|e| wall_us(e).is_none() && e.uptime_s.is_none())
        .collect()
}

fn panels(r: &Report) -> Vec<Panel<'_>> {
    let mut wall = Vec::new();
    let mut up: BTreeMap<Option<&str>, Vec<(i64, &EventJson)>> = BTreeMap::new();
    for e in &r.events {
        if let Some(t) = wall_us(e) {
            wall.push((t, e));
        } else if let Some(u) = e.uptime_s {
            up.entry(e.host.as_deref())
                .or_default()
                .push(((u * 1e6).round() as i64, e));
        }
    }
    let mut out = Vec::new();
    if !wall.is_empty() {
        out.push(Panel {
            clock: Clock::Wall,
            title: "Wall clock (UTC)".into(),
            events: wall,
        });
    }
    for (host, events) in up {
        out.push(Panel {
            clock: Clock::Uptime,
            title: format!(
                "Kernel uptime on {} (no wall time in these lines)",
                host.unwrap_or("a host not named in the lines")
            ),
            events,
        });
    }
    out
}

/// The layers that marks of the picture use, in the contract's order.
pub fn layers_drawn(r: &Report) -> BTreeSet<&'static str> {
    r.events
        .iter()
        .filter(|e| wall_us(e).is_some() || e.uptime_s.is_some())
        .map(|e| e.layer)
        .collect()
}

type LaneKey<'a> = (Option<&'a str>, Option<&'a str>);

fn lane_key(e: &EventJson) -> LaneKey<'_> {
    (e.host.as_deref(), e.gpu.as_deref())
}

/// Renders every panel: one `<figure>` with its caption and SVG per clock.
pub fn render(p: &Page, r: &Report) -> String {
    // the primary fault of each incident, and which of them is the verdict's
    let primaries: BTreeMap<&str, (String, bool)> = crate::report::postmortem::primaries(r)
        .into_iter()
        .map(|(ev, (inc, top))| {
            let observed = crate::report::postmortem::marks::observed_at(r, ev);
            let label = if let Some(t) = observed.and_then(|_| when_of(r, ev)) {
                format!("{inc}: state observed at {t}")
            } else if top {
                format!("{inc}: first fault")
            } else {
                inc.to_string()
            };
            (ev, (label, top))
        })
        .collect();
    let suspects: BTreeSet<(Option<&str>, &str)> = r
        .gpus
        .iter()
        .filter(|g| g.suspect)
        .map(|g| (g.host.as_deref(), g.bus_id.as_str()))
        .collect();
    let mut o = String::new();
    for (n, panel) in panels(r).iter().enumerate() {
        let d = Drawing {
            p,
            r,
            panel,
            primaries: &primaries,
            suspects: &suspects,
        };
        d.svg(n, &mut o);
    }
    o
}

/// What one panel is drawn from.
struct Drawing<'a> {
    p: &'a Page<'a>,
    r: &'a Report,
    panel: &'a Panel<'a>,
    /// The primary fault of each incident: its ring's label, and whether it is the verdict's.
    primaries: &'a BTreeMap<&'a str, (String, bool)>,
    suspects: &'a BTreeSet<(Option<&'a str>, &'a str)>,
}

/// A panel's lanes: the lane of each key, and how many keys share the last lane.
struct Lanes<'a> {
    of: BTreeMap<LaneKey<'a>, usize>,
    /// Lanes drawn (the shared one included).
    count: usize,
    /// Keys folded into the shared last lane.
    folded: usize,
}

impl<'a> Drawing<'a> {
    fn primary(&self, e: &EventJson) -> bool {
        self.primaries.contains_key(e.id.as_str())
    }

    fn suspect(&self, k: &LaneKey) -> bool {
        k.1.is_some_and(|g| self.suspects.contains(&(k.0, g)))
    }

    fn svg(&self, n: usize, o: &mut String) {
        let (p, panel) = (self.p, self.panel);
        let lanes = self.lanes();
        let drawn = self.drawn();
        let not_drawn = panel.events.len() - drawn.len();
        let times: Vec<i64> = panel.events.iter().map(|(t, _)| *t).collect();
        let axis = Axis::new(&times, panel.clock, PLOT_X0, PLOT_X1);
        let plot_h = lanes.count as f64 * LANE_H;
        let height = TOP + plot_h + AXIS_H;
        let _ = writeln!(
            o,
            r#"<figure class="panel" id="timeline-{n}"><figcaption>{}{}</figcaption>"#,
            p.t(&panel.title),
            if not_drawn > 0 {
                format!(
                    " — {not_drawn} of {} events not drawn (all are in the event table)",
                    panel.events.len()
                )
            } else {
                String::new()
            }
        );
        let _ = writeln!(
            o,
            r#"<svg class="tl-svg" viewBox="0 0 {WIDTH:.0} {height:.0}" width="{WIDTH:.0}" height="{height:.0}" role="img" aria-label="{}">"#,
            p.t(&format!(
                "{}: {} events on {} lanes",
                panel.title,
                panel.events.len(),
                lanes.count
            ))
        );
        self.lanes_svg(&lanes, o);
        self.bands_svg(&axis, plot_h, o);
        axis.ticks_svg(o, TOP, TOP + plot_h + 6.0);
        let rings = self.marks_svg(&drawn, &lanes, &axis, o);
        self.rings_svg(rings, o);
        let _ = writeln!(o, "</svg></figure>");
    }

    /// Lanes: host, then the host's own lane before its GPUs; past MAX_LANES the lanes of
    /// primary faults and suspect GPUs stay, then the first others, and the rest share one last
    /// lane.
    fn lanes(&self) -> Lanes<'a> {
        let events = &self.panel.events;
        let mut keys: BTreeSet<LaneKey> = events.iter().map(|(_, e)| lane_key(e)).collect();
        let mut folded = 0;
        if keys.len().saturating_sub(MAX_LANES - 1) > 1 {
            let mut kept: BTreeSet<LaneKey> = events
                .iter()
                .filter(|(_, e)| self.primary(e))
                .map(|(_, e)| lane_key(e))
                .chain(keys.iter().filter(|k| self.suspect(k)).copied())
                .collect();
            for k in &keys {
                if kept.len() >= MAX_LANES - 1 {
                    break;
                }
                kept.insert(*k);
            }
            folded = keys.difference(&kept).count();
            keys = kept;
        }
        Lanes {
            count: keys.len() + usize::from(folded > 0),
            of: keys.into_iter().enumerate().map(|(i, k)| (k, i)).collect(),
            folded,
        }
    }

    /// Marks: everything when it fits, else the relevant events, then the first ones.
    fn drawn(&self) -> Vec<&'a (i64, &'a EventJson)> {
        let mut drawn: Vec<&(i64, &EventJson)> = self.panel.events.iter().collect();
        if drawn.len() > MAX_MARKS {
            drawn.retain(|(_, e)| e.severity != "info" || self.primary(e));
        }
        if drawn.len() > MAX_MARKS {
            let mut keep: Vec<&(i64, &EventJson)> = drawn
                .iter()
                .filter(|(_, e)| self.primary(e))
                .copied()
                .collect();
            let room = MAX_MARKS.saturating_sub(keep.len());
            keep.extend(
                drawn
                    .iter()
                    .filter(|(_, e)| !self.primary(e))
                    .take(room)
                    .copied(),
            );
            drawn = keep;
        }
        drawn
    }

    /// The lanes with their labels (a line between hosts, suspect GPUs marked).
    fn lanes_svg(&self, lanes: &Lanes, o: &mut String) {
        let mut last_host: Option<Option<&str>> = None;
        for (k, &i) in &lanes.of {
            let y = TOP + i as f64 * LANE_H;
            let new_host = last_host != Some(k.0);
            last_host = Some(k.0);
            let host = k.0.unwrap_or("(host not named)");
            let label = match (k.0, k.1) {
                (_, Some(g)) if new_host => format!("{host}  {g}"),
                (_, Some(g)) => g.to_string(),
                (Some(h), None) => format!("{h}  (no GPU)"),
                (None, None) => host.to_string(),
            };
            let _ = writeln!(
                o,
                r#"<rect class="lane{}" x="0" y="{y:.1}" width="{PLOT_X1:.0}" height="{LANE_H:.0}"/>{}<text class="ll{}" x="{:.1}" y="{:.1}">{}</text>"#,
                if i % 2 == 1 { " odd" } else { "" },
                if new_host && i > 0 {
                    format!(
                        r#"<line class="hostsep" x1="0" y1="{y:.1}" x2="{PLOT_X1:.0}" y2="{y:.1}"/>"#
                    )
                } else {
                    String::new()
                },
                if self.suspect(k) { " suspect" } else { "" },
                PLOT_X0 - 10.0,
                y + LANE_H - 4.0,
                self.p.t(&label)
            );
        }
        if lanes.folded > 0 {
            let y = TOP + (lanes.count - 1) as f64 * LANE_H;
            let _ = writeln!(
                o,
                r#"<rect class="lane" x="0" y="{y:.1}" width="{PLOT_X1:.0}" height="{LANE_H:.0}"/><text class="ll" x="{:.1}" y="{:.1}">… {} more lanes</text>"#,
                PLOT_X0 - 10.0,
                y + LANE_H - 4.0,
                lanes.folded
            );
        }
    }

    /// The incidents' windows, each a band linked to its incident.
    fn bands_svg(&self, axis: &Axis, plot_h: f64, o: &mut String) {
        let p = self.p;
        for inc in &self.r.incidents {
            let span: Vec<i64> = self
                .panel
                .events
                .iter()
                .filter(|(_, e)| inc.events.iter().any(|m| m.is(&e.id)))
                .map(|(t, _)| *t)
                .collect();
            let (Some(&a), Some(&b)) = (span.iter().min(), span.iter().max()) else {
                continue;
            };
            let (xa, xb) = (axis.x(a) - 4.0, axis.x(b) + 4.0);
            let _ = writeln!(
                o,
                r##"<a href="#{id}"><g class="band"><title>{title}</title><rect x="{xa:.1}" y="{:.1}" width="{:.1}" height="{:.1}"/><text x="{xa:.1}" y="{:.1}">{id}</text></g></a>"##,
                TOP - 14.0,
                xb - xa,
                plot_h + 14.0,
                TOP - 4.0,
                id = p.t(&inc.id),
                title = p.t(&format!(
                    "incident {}: {} ({:.2}), {}",
                    inc.id, inc.root_cause.layer, inc.root_cause.confidence, inc.root_cause.summary
                ))
            );
        }
    }

    /// The marks, info first so that faults are drawn on top; gives back where the primary
    /// faults are, with their ring's label and whether it is the verdict's.
    fn marks_svg(
        &self,
        drawn: &[&(i64, &EventJson)],
        lanes: &Lanes,
        axis: &Axis,
        o: &mut String,
    ) -> Vec<(f64, f64, String, bool)> {
        let mut order: Vec<&&(i64, &EventJson)> = drawn.iter().collect();
        order.sort_by_key(|(_, e)| sev_rank(e.severity));
        let mut rings = Vec::new();
        let csq = crate::report::postmortem::marks::consequences(self.r);
        for (t, e) in order.into_iter().map(|x| (x.0, x.1)) {
            let x = axis.x(t);
            let lane = lanes.of.get(&lane_key(e)).copied();
            let y = TOP + lane.unwrap_or(lanes.count - 1) as f64 * LANE_H + LANE_H / 2.0;
            // what followed a fault: dashed and hollow, apart from faults and unknown events
            let extra = if csq.contains(e.id.as_str()) {
                " csq"
            } else {
                ""
            };
            let mark = shape(e, x, y, &self.p.t(&hover(e, self.panel.clock)), extra);
            let _ = writeln!(o, "{}", self.p.event_link(&e.id, &mark));
            if let Some((label, top)) = self.primaries.get(e.id.as_str()) {
                rings.push((x, y, label.clone(), *top));
            }
        }
        rings
    }

    /// Rings on the primary faults; only the verdict's is labelled (the bands name the others).
    fn rings_svg(&self, rings: Vec<(f64, f64, String, bool)>, o: &mut String) {
        for (x, y, label, top) in rings {
            if !top {
                let _ = writeln!(o, r#"<circle class="ring" cx="{x:.1}" cy="{y:.1}" r="9"/>"#);
                continue;
            }
            let anchor = if x > PLOT_X1 - 120.0 { "end" } else { "start" };
            let dx = if anchor == "end" { -12.0 } else { 12.0 };
            // a later snapshot shows the state then, not where the fault began
            let class = if label.contains(": state observed at ") {
                "obs"
            } else {
                "ff"
            };
            let _ = writeln!(
                o,
                r#"<circle class="ring {class}" cx="{x:.1}" cy="{y:.1}" r="9"/><text class="ringl {class}" x="{:.1}" y="{:.1}" text-anchor="{anchor}">{}</text>"#,
                x + dx,
                y - 7.0,
                self.p.t(&label)
            );
        }
    }
}

/// The time of an event for a label: `HH:MM:SS` of its wall time.
fn when_of(r: &Report, id: &str) -> Option<String> {
    let e = r.events.iter().find(|e| e.id == id)?;
    let t = crate::report::postmortem::pretty(e.time.as_deref()?);
    Some(t.get(11..19).unwrap_or(&t).to_string())
}

fn sev_rank(s: &str) -> u8 {
    match s {
        "critical" => 3,
        "error" => 2,
        "warning" => 1,
        _ => 0,
    }
}

/// The mark of one event with its hover text (escaped): a diamond for critical, circles
/// shrinking with severity, hollow for info.
fn shape(e: &EventJson, x: f64, y: f64, title: &str, extra: &str) -> String {
    let class = format!("m L-{} S-{}{extra}", e.layer, e.severity);
    match e.severity {
        "critical" => format!(
            r#"<path class="{class}" d="M{x:.1} {:.1}L{:.1} {y:.1}L{x:.1} {:.1}L{:.1} {y:.1}Z"><title>{title}</title></path>"#,
            y - 6.5,
            x + 6.5,
            y + 6.5,
            x - 6.5
        ),
        sev => format!(
            r#"<circle class="{class}" cx="{x:.1}" cy="{y:.1}" r="{}"><title>{title}</title></circle>"#,
            match sev {
                "error" => "4.8",
                "warning" => "3.8",
                _ => "3",
            }
        ),
    }
}

/// The hover text of a mark: time, kind, place and the verbatim line.
fn hover(e: &EventJson, clock: Clock) -> String {
    let when = match (clock, &e.time, e.uptime_s) {
        (Clock::Wall, Some(t), _) => format!("{} ({})", t, e.time_quality),
        (_, _, Some(u)) => format!("uptime {u:.6} s"),
        _ => crate::report::json::undated_time_text(e).unwrap_or_else(|| "no time".into()),
    };
    let what = e
        .code
        .map_or_else(|| e.kind.clone(), |c| format!("{} {c}", e.kind));
    let place: Vec<&str> = [e.host.as_deref(), e.gpu.as_deref()]
        .into_iter()
        .flatten()
        .collect();
    format!(
        "{} · {when}\n{what} — {} [{}, {}]\n{}{}:{}\n{}",
        e.id,
        e.title,
        e.layer,
        e.severity,
        if place.is_empty() {
            String::new()
        } else {
            format!("{} · ", place.join(" "))
        },
        e.source.path,
        e.source.line,
        e.message
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::report::fixture::crowded;

    #[test]
    fn crowded_pictures_fold_lanes_and_marks_but_keep_the_first_fault() {
        let r = crowded();
        let page = Page {
            rows: BTreeSet::new(),
        };
        let svg = render(&page, &r);
        assert_eq!(svg.matches("<rect class=\"lane").count(), MAX_LANES);
        assert!(svg.contains("… 56 more lanes"), "151 lanes, 95 kept");
        assert!(
            svg.contains(">node-zzz  0000:3b:00.0</text>"),
            "the primary's lane stays"
        );
        assert!(
            svg.contains("class=\"ring ff\""),
            "the first fault is drawn"
        );
        // 1600 error marks fit; the 1600 info marks are left out first
        assert_eq!(svg.matches("class=\"m L-").count(), 1600);
        assert!(
            svg.contains("1600 of 3200 events not drawn"),
            "the caption says so"
        );
    }
}
