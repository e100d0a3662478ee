//! The Markdown report's timeline table: warnings and worse and every evidence line, the first
//! fault marked, repeated consequences folded into one row and listed below the table.

use super::escape::{self, row, Md};
use super::MAX_TABLE_ROWS;
use crate::report::json::{EventJson, Report};
use crate::report::postmortem as pm;
use std::fmt::Write;

/// The columns of the timeline table.
const TIMELINE_HEAD: [&str; 11] = [
    "mark",
    "id",
    "time (UTC)",
    "quality",
    "host",
    "GPU",
    "rank",
    "event",
    "layer",
    "severity",
    "source",
];

/// The timeline table: warnings and worse and every evidence line, the first fault marked.
pub(super) fn timeline(m: Md, r: &Report, o: &mut String) {
    let _ = writeln!(o, "## Timeline\n");
    let (rows, n) = pm::table_rows(r, MAX_TABLE_ROWS);
    if rows.is_empty() {
        let _ = writeln!(
            o,
            "No event of severity warning or worse among {} events.\n",
            r.events.len()
        );
        return;
    }
    timeline_intro(r, rows.len(), n, o);
    let primaries = pm::primaries(r);
    table_head(o);
    let csq = pm::marks::consequences(r);
    let mut folded: Vec<Vec<&EventJson>> = Vec::new();
    for item in pm::marks::group(r, &rows) {
        match item {
            pm::marks::Row::One(e) => {
                let mark = match primaries.get(e.id.as_str()) {
                    Some((inc, _)) if pm::marks::observed_at(r, &e.id).is_some() => {
                        format!("**◇ state observed at** ({})", m.text(inc))
                    }
                    Some((inc, true)) => format!("**▶ first fault** ({})", m.text(inc)),
                    Some((inc, false)) => format!("*primary* ({})", m.text(inc)),
                    None if csq.contains(e.id.as_str()) => "↳".to_string(),
                    None => String::new(),
                };
                let _ = writeln!(o, "{}", row(&event_cells(m, e, mark)));
            }
            pm::marks::Row::Group(g) => {
                let _ = writeln!(o, "{}", row(&group_cells(m, &g)));
                folded.push(g);
            }
        }
    }
    let _ = writeln!(o);
    for g in folded {
        let _ = writeln!(
            o,
            "<details><summary>{} × {} on {}</summary>\n",
            g.len(),
            m.html(&pm::what(g[0])),
            m.html(g[0].host.as_deref().unwrap_or("an unnamed host"))
        );
        table_head(o);
        for e in g {
            let _ = writeln!(o, "{}", row(&event_cells(m, e, "↳".into())));
        }
        let _ = writeln!(o, "\n</details>\n");
    }
}

/// What the table shows of the `n` events it could show (`shown` rows), and its marks.
fn timeline_intro(r: &Report, shown: usize, n: usize, o: &mut String) {
    let what = if n > shown {
        format!(
            "{n} of {} events are of severity warning or worse or cited as evidence; the first {shown} are shown (evidence lines always), the JSON report has all",
            r.events.len(),
        )
    } else {
        format!(
            "{n} of {} events: those of severity warning or worse and every evidence line",
            r.events.len()
        )
    };
    let _ = writeln!(
        o,
        "{what}. **▶ first fault** marks the primary fault of the verdict's incident (where its chain starts), *primary* that of another incident, **◇ state observed at** a snapshot taken after its incident began; ↳ marks a consequence (what followed a fault), and repeated consequences of one kind on one host are folded into one row, listed below the table.\n"
    );
}

/// The timeline table's header and rule rows.
fn table_head(o: &mut String) {
    let _ = writeln!(o, "{}", escape::head(&TIMELINE_HEAD));
}

/// One row for repeated consequences of one kind on one host (`g`: at least two, in order).
fn group_cells(m: Md, g: &[&EventJson]) -> [String; 11] {
    let first = g[0];
    let ranks: Vec<i64> = g.iter().filter_map(|e| e.rank).collect();
    [
        "↳".to_string(),
        format!("{} (+{})", m.text(&first.id), g.len() - 1),
        format!(
            "{} → {}",
            m.text(&pm::when(first)),
            m.text(&pm::when(g[g.len() - 1]))
        ),
        m.text(first.time_quality),
        m.text(first.host.as_deref().unwrap_or("-")),
        "-".into(),
        m.text(&pm::ranks(&ranks)),
        format!(
            "{} ×{} — {} (consequences, listed below)",
            m.text(&pm::what(first)),
            g.len(),
            m.text(&first.title)
        ),
        m.text(first.layer),
        m.text(first.severity),
        m.code_cell(&format!("{}:{}", first.source.path, first.source.line)),
    ]
}

fn event_cells(m: Md, e: &EventJson, mark: String) -> [String; 11] {
    [
        mark,
        m.text(&e.id),
        m.text(&pm::when(e)),
        m.text(e.time_quality),
        m.text(e.host.as_deref().unwrap_or("-")),
        e.gpu.as_deref().map_or("-".into(), |x| m.code_cell(x)),
        e.rank.map_or("-".into(), |x| x.to_string()),
        format!("{} — {}", m.text(&pm::what(e)), m.text(&e.title)),
        m.text(e.layer),
        m.text(e.severity),
        m.code_cell(&format!("{}:{}", e.source.path, e.source.line)),
    ]
}
