//! Writing the JSON report: its one field list, and the writers of a built report and of an
//! analysis whose events are turned into their JSON form as they are written (in parallel
//! batches, [`pretty::array`]).

use super::view::{write_event, write_event_json, Titles};
use super::{build_rest, pretty, Report};
use crate::catalog::Catalog;
use crate::timeline::Event;
use crate::Analysis;
use serde::Serialize;
use std::io::Write;

impl Serialize for Report {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeStruct;
        struct Struct<T>(T);
        impl<T: SerializeStruct> Fields for Struct<T> {
            type Error = T::Error;
            fn field<V: ?Sized + Serialize>(
                &mut self,
                name: &'static str,
                v: &V,
            ) -> Result<(), T::Error> {
                self.0.serialize_field(name, v)
            }
        }
        let mut st = Struct(s.serialize_struct("Report", 11)?);
        report_fields(self, &mut st, |st| st.field("events", &self.events))?;
        st.0.end()
    }
}

/// Where the report's fields go: a serde struct, or the pieces of [`pretty`].
trait Fields {
    type Error;
    fn field<V: ?Sized + Serialize>(
        &mut self,
        name: &'static str,
        v: &V,
    ) -> Result<(), Self::Error>;
}

/// The one list of the report's fields, in order, `events` writing the event list in its place
/// (for the report as built and for [`write_taking`]).
fn report_fields<F: Fields>(
    r: &Report,
    f: &mut F,
    events: impl FnOnce(&mut F) -> Result<(), F::Error>,
) -> Result<(), F::Error> {
    f.field("schema", r.schema)?;
    f.field("tool", &r.tool)?;
    f.field("inputs", &r.inputs)?;
    events(f)?;
    f.field("incidents", &r.incidents)?;
    f.field("verdict", &r.verdict)?;
    if !r.hosts.is_empty() {
        f.field("hosts", &r.hosts)?;
    }
    if !r.gpus.is_empty() {
        f.field("gpus", &r.gpus)?;
    }
    if let Some(j) = &r.job {
        f.field("job", j)?;
    }
    if !r.notes.is_empty() {
        f.field("notes", &r.notes)?;
    }
    if !r.known_issues.is_empty() {
        f.field("known_issues", &r.known_issues)?;
    }
    f.field("accounting", &r.accounting)
}

impl<W: ?Sized + Write> Fields for pretty::Object<'_, W> {
    type Error = std::io::Error;
    fn field<V: ?Sized + Serialize>(&mut self, name: &'static str, v: &V) -> std::io::Result<()> {
        pretty::Object::field(self, name, v)
    }
}

/// Writes the report `r` with its events written by `events` (at level 1, after their key), as
/// pretty JSON with a final newline, through a large buffer.
fn write_report(
    r: &Report,
    w: &mut dyn Write,
    events: impl FnOnce(&mut dyn Write) -> std::io::Result<()>,
) -> std::io::Result<()> {
    let mut out = std::io::BufWriter::with_capacity(1 << 20, w);
    let mut o = pretty::Object::begin(&mut out)?;
    report_fields(r, &mut o, |o| events(o.key("events")?))?;
    o.end()?;
    out.write_all(b"\n")?;
    out.flush()
}

/// Writes the report of `a`: the bytes [`write`] writes for the report [`build`](super::build)
/// makes, each event's JSON form written straight from the event (the events are never held a
/// second time, and nothing is copied per event), batches of events in parallel. The analysis
/// is left as it was; it is taken mutably for the callers of the former version, which moved
/// the events' texts out.
pub fn write_taking(a: &mut Analysis, catalog: &Catalog, w: &mut dyn Write) -> std::io::Result<()> {
    let rest = build_rest(a);
    write_report(&rest, w, |w| {
        pretty::array(
            w,
            1,
            &a.events,
            Titles::default,
            warm_event,
            |buf, e, titles| {
                write_event(buf, 2, e, catalog, titles);
                Ok(())
            },
        )
    })
}

/// Writes the report of `a` with its values rewritten first (`--redact`): the report without its
/// events by `rest`, each event's JSON form by `event` as it is written, in parallel batches, so
/// that the events are never held a second time (the bytes of [`write`] of the report built and
/// rewritten whole).
pub fn write_rewritten(
    a: &Analysis,
    catalog: &Catalog,
    w: &mut dyn Write,
    rest: impl FnOnce(&mut Report),
    event: impl Fn(&mut super::EventJson) + Sync,
) -> std::io::Result<()> {
    let mut r = build_rest(a);
    rest(&mut r);
    write_report(&r, w, |w| {
        pretty::array(
            w,
            1,
            &a.events,
            || (),
            |_| (),
            |buf, e, _| {
                let mut j = super::build::event_json_of(e, catalog);
                event(&mut j);
                write_event_json(buf, 2, &j);
                Ok(())
            },
        )
    })
}

/// Fetches the texts of `e` into the caches ahead of writing it: the events' texts lie apart
/// on the heap, and waiting for each in turn would cost more than writing them.
fn warm_event(e: &Event) {
    for s in [&*e.source.path, e.kind, &e.message] {
        pretty::prefetch(s.as_ptr());
    }
    for s in [e.host.as_deref(), e.gpu.as_deref()].into_iter().flatten() {
        pretty::prefetch(s.as_ptr());
    }
    // (this one reads where the details' text is: the last, so that the fetches above are
    // under way while it waits)
    if let Some(k) = e.attrs.keys().next() {
        pretty::prefetch(k.as_ptr());
    }
}

/// Writes the report as pretty JSON with a final newline (the bytes of [`to_string`]), streamed
/// into `w`, batches of events serialized in parallel.
pub fn write(r: &Report, w: &mut dyn Write) -> std::io::Result<()> {
    write_report(r, w, |w| {
        pretty::array(
            w,
            1,
            &r.events,
            || (),
            |_| (),
            |buf, e, _| {
                write_event_json(buf, 2, e);
                Ok(())
            },
        )
    })
}

/// Serializes the report as pretty JSON with a final newline.
pub fn to_string(r: &Report) -> String {
    let mut v = Vec::new();
    match write(r, &mut v).map(|_| String::from_utf8(v)) {
        Ok(Ok(s)) => s,
        Ok(Err(e)) => format!("{{\"error\":\"{e}\"}}\n"),
        Err(e) => format!("{{\"error\":\"{e}\"}}\n"),
    }
}
