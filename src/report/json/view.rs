//! An event's JSON form borrowed from the event (or from its [`super::EventJson`]): the fields
//! of [`super::EventJson`], in its order and with its names, written by hand as serde_json's
//! pretty printer writes that struct, so that it gives the same bytes; nothing of the event is
//! copied, its time is formatted on the stack and its strings are escaped a word at a time
//! ([`pretty::string`]).

use super::pretty::{self, indent};
use super::{EventJson, SourceJson};
use crate::catalog::Catalog;
use crate::model::{Attrs, SourceRef};
use crate::scan::FastMap;
use crate::timeline::{numbered_into, Event, NUMBERED};

/// A place an event was seen: a [`SourceRef`] or a [`SourceJson`].
pub(super) trait Place {
    fn path(&self) -> &str;
    fn line(&self) -> u64;
}

impl Place for SourceRef {
    fn path(&self) -> &str {
        &self.path
    }
    fn line(&self) -> u64 {
        self.line
    }
}

impl Place for SourceJson {
    fn path(&self) -> &str {
        &self.path
    }
    fn line(&self) -> u64 {
        self.line
    }
}

/// One event as [`super::EventJson`] writes it, borrowed.
struct EventView<'a, P> {
    id: &'a str,
    time: Option<&'a str>,
    time_quality: &'static str,
    host: Option<&'a str>,
    source: &'a P,
    kind: &'a str,
    code: Option<i64>,
    gpu: Option<&'a str>,
    gpu_uuid: Option<&'a str>,
    rank: Option<i64>,
    layer: &'static str,
    severity: &'static str,
    title: &'a str,
    message: &'a str,
    uptime_s: Option<f64>,
    time_of_day: Option<std::borrow::Cow<'a, str>>,
    day_in_file: Option<u64>,
    details: &'a Attrs,
    also_seen: &'a [P],
    suppressed: u64,
}

/// The fields of one JSON object being written at a level (its keys one level deeper).
struct Fields<'b> {
    out: &'b mut Vec<u8>,
    level: usize,
    first: bool,
}

impl<'b> Fields<'b> {
    /// Opens an object whose first line is already indented to `level`.
    fn begin(out: &'b mut Vec<u8>, level: usize) -> Self {
        out.push(b'{');
        Fields {
            out,
            level,
            first: true,
        }
    }

    /// Starts the next field: its separator and indentation.
    fn next(&mut self) -> &mut Vec<u8> {
        self.out
            .extend_from_slice(if self.first { b"\n" } else { b",\n" });
        self.first = false;
        let _ = indent(self.out, self.level + 1);
        self.out
    }

    /// Writes the key of the next field (a plain name).
    fn key(&mut self, name: &str) -> &mut Vec<u8> {
        self.next();
        self.out.push(b'"');
        self.out.extend_from_slice(name.as_bytes());
        self.out.extend_from_slice(b"\": ");
        self.out
    }

    fn str(&mut self, name: &str, v: &str) {
        pretty::string(self.key(name), v);
    }

    fn opt_str(&mut self, name: &str, v: Option<&str>) {
        if let Some(v) = v {
            self.str(name, v);
        }
    }

    /// A number, as serde_json writes it (`null` for a float that is not finite).
    fn num(&mut self, name: &str, v: impl serde::Serialize) {
        let out = self.key(name);
        let _ = serde_json::to_writer(out, &v);
    }

    /// Closes the object.
    fn end(self) {
        if !self.first {
            self.out.push(b'\n');
            let _ = indent(self.out, self.level);
        }
        self.out.push(b'}');
    }
}

impl<P: Place> EventView<'_, P> {
    /// Writes the event at `level` (its first line already indented).
    fn write(&self, out: &mut Vec<u8>, level: usize) {
        let mut f = Fields::begin(out, level);
        f.str("id", self.id);
        match self.time {
            Some(t) => f.str("time", t),
            None => f.key("time").extend_from_slice(b"null"),
        }
        f.str("time_quality", self.time_quality);
        f.opt_str("host", self.host);
        place(f.key("source"), self.source, level + 1);
        f.str("kind", self.kind);
        if let Some(c) = self.code {
            f.num("code", c);
        }
        f.opt_str("gpu", self.gpu);
        f.opt_str("gpu_uuid", self.gpu_uuid);
        if let Some(r) = self.rank {
            f.num("rank", r);
        }
        f.str("layer", self.layer);
        f.str("severity", self.severity);
        f.str("title", self.title);
        f.str("message", self.message);
        if let Some(u) = self.uptime_s {
            f.num("uptime_s", u);
        }
        if let Some(t) = &self.time_of_day {
            f.str("time_of_day", t);
        }
        if let Some(d) = self.day_in_file {
            f.num("day_in_file", d);
        }
        if !self.details.is_empty() {
            let mut d = Fields::begin(f.key("details"), level + 1);
            for (k, v) in self.details.iter() {
                let out = d.next();
                pretty::string(out, k);
                out.extend_from_slice(b": ");
                pretty::string(out, v);
            }
            d.end();
        }
        if !self.also_seen.is_empty() {
            let out = f.key("also_seen");
            out.push(b'[');
            for (i, p) in self.also_seen.iter().enumerate() {
                out.extend_from_slice(if i == 0 { b"\n" } else { b",\n" });
                let _ = indent(out, level + 2);
                place(out, p, level + 2);
            }
            out.push(b'\n');
            let _ = indent(out, level + 1);
            out.push(b']');
        }
        if self.suppressed != 0 {
            f.num("suppressed", self.suppressed);
        }
        f.end();
    }
}

/// Writes a place (`path`, `line`) at `level`.
fn place(out: &mut Vec<u8>, p: &impl Place, level: usize) {
    let mut f = Fields::begin(out, level);
    f.str("path", p.path());
    f.num("line", p.line());
    f.end();
}

/// Titles by kind and code, each made once from the catalog for a whole report.
#[derive(Default)]
pub(super) struct Titles<'a> {
    made: FastMap<(&'a str, Option<i64>), Box<str>>,
}

impl<'a> Titles<'a> {
    /// The catalog's title of `kind` and `code`.
    fn get(&mut self, catalog: &Catalog, kind: &'a str, code: Option<i64>) -> &str {
        self.made
            .entry((kind, code))
            .or_insert_with(|| catalog.title(kind, code).into_boxed_str())
    }
}

/// Writes the JSON form of `e` at `level` (the bytes serde_json's pretty printer writes for
/// [`super::build::event_json`] of it there).
pub(super) fn write_event<'a>(
    out: &mut Vec<u8>,
    level: usize,
    e: &'a Event,
    catalog: &Catalog,
    titles: &mut Titles<'a>,
) {
    let mut buf = [0u8; 27];
    let mut id = [0u8; NUMBERED];
    let long: String;
    let tod = e
        .time_of_day_us()
        .map(super::time_of_day_parts)
        .map_or((None, None), |(t, d)| (Some(t), d));
    let time = match e.time_us {
        None => None,
        Some(us) => match iso_on_stack(us, &mut buf) {
            Some(t) => Some(t),
            None => {
                long = super::iso_us(us);
                Some(long.as_str())
            }
        },
    };
    EventView {
        id: id_on_stack(e.id, &mut id),
        time,
        time_quality: e.quality.as_str(),
        host: e.host.as_deref(),
        source: &e.source,
        kind: e.kind,
        code: e.code,
        gpu: e.gpu.as_deref(),
        gpu_uuid: e.gpu_uuid(),
        rank: e.rank,
        layer: e.layer.as_str(),
        severity: e.severity.as_str(),
        title: titles.get(catalog, e.kind, e.code),
        message: &e.message,
        uptime_s: e.uptime_us.map(|u| u as f64 / 1e6),
        time_of_day: tod.0.map(Into::into),
        day_in_file: tod.1,
        details: &e.attrs,
        also_seen: e.also_seen(),
        suppressed: e.suppressed,
    }
    .write(out, level);
}

/// Writes `e` at `level`: the bytes serde_json's pretty printer writes for it there.
pub(super) fn write_event_json(out: &mut Vec<u8>, level: usize, e: &EventJson) {
    EventView {
        id: &e.id,
        time: e.time.as_deref(),
        time_quality: e.time_quality,
        host: e.host.as_deref(),
        source: &e.source,
        kind: &e.kind,
        code: e.code,
        gpu: e.gpu.as_deref(),
        gpu_uuid: e.gpu_uuid.as_deref(),
        rank: e.rank,
        layer: e.layer,
        severity: e.severity,
        title: &e.title,
        message: &e.message,
        uptime_s: e.uptime_s,
        time_of_day: e.time_of_day.as_deref().map(Into::into),
        day_in_file: e.day_in_file,
        details: &e.details,
        also_seen: &e.also_seen,
        suppressed: e.suppressed,
    }
    .write(out, level);
}

/// `e17`: the id of event 17 in `buf` (as [`Event::id_text`] writes it).
fn id_on_stack(n: u32, buf: &mut [u8; NUMBERED]) -> &str {
    numbered_into(b'e', u64::from(n), buf)
}

/// `YYYY-MM-DDTHH:MM:SS.ffffffZ` of `us` in `buf`, for years 0 to 9999 (`None` for others:
/// chrono's own formatting then writes them).
fn iso_on_stack(us: i64, buf: &mut [u8; 27]) -> Option<&str> {
    use chrono::{Datelike, Timelike};
    let d = chrono::DateTime::from_timestamp_micros(us)?;
    let year = u32::try_from(d.year()).ok().filter(|y| *y <= 9999)?;
    let micros = us.rem_euclid(1_000_000) as u32;
    let mut put = |at: usize, width: usize, mut v: u32| {
        for i in (at..at + width).rev() {
            buf[i] = b'0' + (v % 10) as u8;
            v /= 10;
        }
    };
    put(0, 4, year);
    put(5, 2, d.month());
    put(8, 2, d.day());
    put(11, 2, d.hour());
    put(14, 2, d.minute());
    put(17, 2, d.second());
    put(20, 6, micros);
    for (at, c) in [
        (4, b'-'),
        (7, b'-'),
        (10, b'T'),
        (13, b':'),
        (16, b':'),
        (19, b'.'),
        (26, b'Z'),
    ] {
        buf[at] = c;
    }
    std::str::from_utf8(&buf[..]).ok()
}

#[cfg(test)]
mod tests {
    use super::{id_on_stack, iso_on_stack};

    #[test]
    fn stack_ids_read_as_event_ids_are_written() {
        for n in [0u32, 1, 9, 10, 17, 4_294_967_295] {
            let mut buf = [0u8; crate::timeline::NUMBERED];
            assert_eq!(id_on_stack(n, &mut buf), format!("e{n}"));
        }
    }

    #[test]
    fn stack_times_read_as_chrono_writes_them() {
        for us in [
            0i64,
            1_773_454_387_123_456,
            -1,
            -62_135_596_800_000_000, // 0001-01-01
            -62_167_219_200_000_000, // 0000-01-01
            253_402_300_799_999_999, // 9999-12-31T23:59:59.999999
            951_782_400_000_001,     // 2000-02-29
        ] {
            let mut buf = [0u8; 27];
            assert_eq!(
                iso_on_stack(us, &mut buf).unwrap(),
                super::super::super::iso_us(us),
                "{us}"
            );
        }
        let mut buf = [0u8; 27];
        assert!(iso_on_stack(253_402_300_800_000_000, &mut buf).is_none());
    }
}
