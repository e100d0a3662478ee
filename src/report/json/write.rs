//! Writing the JSON report: its one field list, and the writers of a built report and of an
//! analysis whose events are turned into their JSON form as they are written.

use super::view::{serialize_event, Titles};
use super::{build_rest, Report};
use crate::catalog::Catalog;
use crate::timeline::Event;
use crate::Analysis;
use serde::Serialize;
use std::cell::RefCell;

impl Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        serialize_report(self, &self.events, s)
    }
}

/// Serializes `r` with `events` in the place of its event list: the one list of the report's
/// fields, for the report as built and for [`write_taking`].
fn serialize_report<S: serde::Serializer>(
    r: &Report,
    events: impl Serialize,
    s: S,
) -> Result<S::Ok, S::Error> {
    use serde::ser::SerializeStruct;
    let mut st = s.serialize_struct("Report", 11)?;
    st.serialize_field("schema", r.schema)?;
    st.serialize_field("tool", &r.tool)?;
    st.serialize_field("inputs", &r.inputs)?;
    st.serialize_field("events", &events)?;
    st.serialize_field("incidents", &r.incidents)?;
    st.serialize_field("verdict", &r.verdict)?;
    if !r.hosts.is_empty() {
        st.serialize_field("hosts", &r.hosts)?;
    }
    if !r.gpus.is_empty() {
        st.serialize_field("gpus", &r.gpus)?;
    }
    if let Some(j) = &r.job {
        st.serialize_field("job", j)?;
    }
    if !r.notes.is_empty() {
        st.serialize_field("notes", &r.notes)?;
    }
    st.serialize_field("accounting", &r.accounting)?;
    st.end()
}

/// The events of an analysis, each written in its JSON form straight from the event
/// ([`super::view`]): nothing is copied, and no event's texts are made and freed again.
struct ViewedEvents<'a> {
    events: &'a [Event],
    catalog: &'a Catalog,
    titles: RefCell<Titles<'a>>,
}

/// One event of [`ViewedEvents`].
struct Viewed<'a, 'v> {
    event: &'a Event,
    list: &'v ViewedEvents<'a>,
}

impl Serialize for Viewed<'_, '_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut titles = self.list.titles.borrow_mut();
        serialize_event(self.event, self.list.catalog, &mut titles, s)
    }
}

impl Serialize for ViewedEvents<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(self.events.iter().map(|event| Viewed { event, list: self }))
    }
}

/// Writes the report of `a`: the bytes [`write`] writes for the report [`build`](super::build)
/// makes, each event's JSON form written straight from the event (the events are never held a
/// second time, and nothing is copied per event). The analysis is left as it was; it is taken
/// mutably for the callers of the former version, which moved the events' texts out.
pub fn write_taking(
    a: &mut Analysis,
    catalog: &Catalog,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let rest = build_rest(a);
    let events = ViewedEvents {
        events: &a.events,
        catalog,
        titles: RefCell::default(),
    };
    let mut ser = serde_json::Serializer::pretty(&mut *w);
    serialize_report(&rest, &events, &mut ser).map_err(std::io::Error::other)?;
    w.write_all(b"\n")
}

/// Writes the report as pretty JSON with a final newline (the bytes of [`to_string`]), streamed
/// into `w`.
pub fn write(r: &Report, w: &mut dyn std::io::Write) -> std::io::Result<()> {
    serde_json::to_writer_pretty(&mut *w, r).map_err(std::io::Error::other)?;
    w.write_all(b"\n")
}

/// Serializes the report as pretty JSON with a final newline.
pub fn to_string(r: &Report) -> String {
    let mut s =
        serde_json::to_string_pretty(r).unwrap_or_else(|e| format!("{{\"error\":\"{e}\"}}"));
    s.push('\n');
    s
}
