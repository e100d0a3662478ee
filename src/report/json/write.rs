//! Writing the JSON report: its one field list, and the writers of a built report and of an
//! analysis whose events are turned into their JSON form as they are written.

use super::{build_rest, event_json_taking, Report};
use crate::catalog::Catalog;
use crate::timeline::Event;
use crate::Analysis;
use serde::Serialize;

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

/// The events of an analysis, each turned into its JSON form (texts moved out of it) only when
/// it is written.
struct TakenEvents<'a> {
    events: std::cell::RefCell<&'a mut [Event]>,
    catalog: &'a Catalog,
}

impl Serialize for TakenEvents<'_> {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut events = self.events.borrow_mut();
        s.collect_seq(
            events
                .iter_mut()
                .map(|e| event_json_taking(e, self.catalog)),
        )
    }
}

/// Writes the report of `a` as [`write`] writes the one [`build_taking`](super::build_taking) makes (the same bytes),
/// each event's JSON form made as it is written: the events are never held a second time. The
/// events' texts are moved out as by [`build_taking`](super::build_taking).
pub fn write_taking(
    a: &mut Analysis,
    catalog: &Catalog,
    w: &mut dyn std::io::Write,
) -> std::io::Result<()> {
    let rest = build_rest(a);
    let events = TakenEvents {
        events: std::cell::RefCell::new(&mut a.events),
        catalog,
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
