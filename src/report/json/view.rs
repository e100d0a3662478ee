//! An event's JSON form borrowed from the event: the fields of [`super::EventJson`], in its
//! order and with its names, so that it serializes to the same bytes; nothing of the event is
//! copied, and its time is formatted on the stack.

use crate::catalog::Catalog;
use crate::model::{Attrs, SourceRef};
use crate::scan::FastMap;
use crate::timeline::Event;
use serde::{Serialize, Serializer};

/// One event as [`super::EventJson`] writes it, borrowed.
#[derive(Serialize)]
pub(super) struct EventView<'a> {
    id: &'a str,
    time: Option<IsoTime>,
    time_quality: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    host: Option<&'a str>,
    source: &'a SourceRef,
    kind: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    code: Option<i64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    gpu_uuid: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    rank: Option<i64>,
    layer: &'static str,
    severity: &'static str,
    title: &'a str,
    message: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    uptime_s: Option<f64>,
    #[serde(skip_serializing_if = "no_details")]
    details: &'a Attrs,
    #[serde(skip_serializing_if = "<[SourceRef]>::is_empty")]
    also_seen: &'a [SourceRef],
    #[serde(skip_serializing_if = "is_zero")]
    suppressed: u64,
}

fn no_details(a: &&Attrs) -> bool {
    a.is_empty()
}

fn is_zero(n: &u64) -> bool {
    *n == 0
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

/// Serializes the JSON form of `e` into `s` (the bytes [`super::event_json`] gives).
pub(super) fn serialize_event<'a, S: Serializer>(
    e: &'a Event,
    catalog: &Catalog,
    titles: &mut Titles<'a>,
    s: S,
) -> Result<S::Ok, S::Error> {
    EventView {
        id: &e.id,
        time: e.time_us.map(IsoTime),
        time_quality: e.quality.as_str(),
        host: e.host.as_deref(),
        source: &e.source,
        kind: &e.kind,
        code: e.code,
        gpu: e.gpu.as_deref(),
        gpu_uuid: e.gpu_uuid.as_deref(),
        rank: e.rank,
        layer: e.layer.as_str(),
        severity: e.severity.as_str(),
        title: titles.get(catalog, &e.kind, e.code),
        message: &e.message,
        uptime_s: e.uptime_us.map(|u| u as f64 / 1e6),
        details: &e.attrs,
        also_seen: &e.also_seen,
        suppressed: e.suppressed,
    }
    .serialize(s)
}

/// A UTC microsecond time, written as [`super::super::iso_us`] writes it.
struct IsoTime(i64);

impl Serialize for IsoTime {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut buf = [0u8; 27];
        match iso_on_stack(self.0, &mut buf) {
            Some(t) => s.serialize_str(t),
            None => s.serialize_str(&super::iso_us(self.0)),
        }
    }
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
    use super::iso_on_stack;

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
