//! Times of records whose lines carry none of their own, and the prefixes of package logs.
//!
//! Several logs write one event as a record of `key: value` lines with the time on one of them:
//! `racadm lclog view` (`Timestamp = 2026-02-11 03:41:09`, or `2019-11-16T13:31:02-0600`),
//! `racadm getsel` (`Date/Time: 11/16/2019 01:31:02 PM`), Redfish `LogEntry` JSON (`"Created":`,
//! `"EventTimestamp":`, on one line or pretty-printed), apt `history.log` (`Start-Date:` …
//! `End-Date:`), `dnf`/`yum history info` (`Begin time : …`). The line that names the event
//! takes the time of its own record: records end at blank lines, dashed separators and the
//! braces of a JSON object, never at a neighbouring record. `nvidia-installer.log` has one time
//! for the whole file (`creation time:`), lent to its lines as an estimate.
//!
//! Package logs with a time on every line (`dpkg.log`, `dnf.rpm.log`, `yum.log`) get a prefix
//! of their own: their second word is an action or a log level, not a host.

use super::time::{
    civil_secs, clock12, ctime_datetime, digits, hms, is_weekday, iso_datetime, month_abbrev,
    number, syslog_datetime, us_date, zone_word,
};
use super::{Prefix, Shape};
use crate::model::{LineStamp, WallStamp};

/// Lines a record may span on either side of the line that named the event.
const RECORD_LINES: usize = 64;
/// Lines searched back for a file-level time (`creation time:` of nvidia-installer).
const HEADER_LINES: usize = 256;

/// Words that follow the time in `dpkg.log`.
const DPKG_ACTIONS: [&[u8]; 9] = [
    b"install ",
    b"upgrade ",
    b"remove ",
    b"purge ",
    b"configure ",
    b"trigproc ",
    b"status ",
    b"startup ",
    b"conffile ",
];

/// Log levels that follow the time in `dnf.log` / `dnf.rpm.log` / `dnf.librepo.log`.
const DNF_LEVELS: [&[u8]; 8] = [
    b"SUBDEBUG ",
    b"DDEBUG ",
    b"DEBUG ",
    b"TRACE ",
    b"INFO ",
    b"WARNING ",
    b"ERROR ",
    b"CRITICAL ",
];

/// Actions that follow the (year-less) time in `yum.log`.
const YUM_ACTIONS: [&[u8]; 7] = [
    b"Installed: ",
    b"Updated: ",
    b"Erased: ",
    b"Obsoleted: ",
    b"Dep-Installed: ",
    b"Reinstalled: ",
    b"Downgraded: ",
];

fn package_prefix(stamp: WallStamp, msg_start: usize) -> Prefix<'static> {
    Prefix {
        stamp: LineStamp {
            wall: Some(stamp),
            mono_us: None,
            tod_us: None,
        },
        host: None,
        msg_start,
        shape: Shape::Package,
    }
}

/// `2025-06-11 06:25:40 upgrade pkg …` (dpkg), `2025-04-02T09:14:51+0000 SUBDEBUG Upgrade: …`
/// (dnf), `Apr 02 09:14:51 Installed: pkg` (yum). The host comes from the input, never the line.
pub fn package_line(line: &[u8]) -> Option<Prefix<'static>> {
    if line.first()?.is_ascii_digit() {
        let (ws, n) = iso_datetime(line)?;
        let rest = line.get(n + 1..)?;
        if line[n] != b' ' {
            return None;
        }
        if line[10] == b' '
            && ws.offset.is_none()
            && DPKG_ACTIONS.iter().any(|a| rest.starts_with(a))
        {
            return Some(package_prefix(ws, n + 1));
        }
        let level = DNF_LEVELS.iter().find(|l| rest.starts_with(l))?;
        return Some(package_prefix(ws, n + 1 + level.len()));
    }
    let (ws, n) = syslog_datetime(line)?;
    let rest = line.get(n + 1..)?;
    if line[n] != b' ' || !YUM_ACTIONS.iter().any(|a| rest.starts_with(a)) {
        return None;
    }
    Some(package_prefix(ws, n + 1))
}

/// Where a time line sits: in the event's own record, or at the head of the file.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Scope {
    /// The record's own time (lclog, getsel, Redfish, apt, dnf history).
    Record,
    /// One time for the whole file (nvidia-installer's creation time): an estimate for each line.
    File,
}

fn wall(y: i32, mo: u32, d: u32, sod: u32, offset: Option<i32>) -> Option<WallStamp> {
    Some(WallStamp {
        naive_secs: civil_secs(y, mo, d, sod)?,
        micros: 0,
        offset,
        has_year: true,
    })
}

fn after_key<'a>(line: &'a [u8], key: &[u8], sep: u8) -> Option<&'a [u8]> {
    let rest = line.strip_prefix(key)?;
    let rest = rest.trim_ascii_start();
    Some(rest.strip_prefix(&[sep])?.trim_ascii_start())
}

/// `MM/DD/YYYY HH:MM:SS[ AM|PM][ zone]`.
fn us_datetime(b: &[u8]) -> Option<WallStamp> {
    let (y, mo, d, n) = us_date(b)?;
    let rest = b.get(n..)?.trim_ascii_start();
    let (sod, tl) = clock12(rest)?;
    let offset = rest
        .get(tl..)
        .and_then(|z| z.strip_prefix(b" "))
        .and_then(zone_word)
        .and_then(|(o, _)| o);
    wall(y, mo, d, sod, offset)
}

/// `YYYY-MM-DD  HH:MM:SS` (apt history pads with two spaces).
fn apt_datetime(b: &[u8]) -> Option<WallStamp> {
    if b.get(4) != Some(&b'-') || b.get(7) != Some(&b'-') {
        return None;
    }
    let y = digits(b, 4)? as i32;
    let mo = digits(&b[5..], 2)?;
    let d = digits(&b[8..], 2)?;
    let sod = hms(b.get(10..)?.trim_ascii_start())?;
    wall(y, mo, d, sod, None)
}

/// `Wed 02 Apr 2025 09:14:48 AM UTC` (dnf, `%c` in en_US) or `Wed Apr  2 09:14:48 2025` (yum).
fn history_datetime(b: &[u8]) -> Option<WallStamp> {
    if let Some((ws, _)) = ctime_datetime(b) {
        return Some(ws);
    }
    if !is_weekday(b) || b.get(3) != Some(&b' ') {
        return None;
    }
    let (d, dl) = number(&b[4..])?;
    let mut i = 4 + dl + 1;
    let mo = month_abbrev(b.get(i..)?)?;
    i += 4;
    let y = digits(b.get(i..)?, 4)? as i32;
    i += 5;
    let (sod, tl) = clock12(b.get(i..)?)?;
    i += tl;
    let offset = b
        .get(i..)
        .and_then(|z| z.strip_prefix(b" "))
        .and_then(zone_word)
        .and_then(|(o, _)| o);
    wall(y, mo, d as u32, sod, offset)
}

/// Redfish members that carry an entry's time.
const JSON_TIME_KEYS: [&[u8]; 2] = [b"\"Created\"", b"\"EventTimestamp\""];

fn json_value(rest: &[u8]) -> Option<WallStamp> {
    let rest = rest
        .trim_ascii_start()
        .strip_prefix(b":")?
        .trim_ascii_start();
    iso_datetime(rest.strip_prefix(b"\"")?).map(|(ws, _)| ws)
}

/// A Redfish time member anywhere in a one-line object: `"Created": "2026-03-14T02:12:27-05:00"`.
fn json_time_anywhere(line: &[u8]) -> Option<WallStamp> {
    // every key is quoted: one search for a quote spares a search per key of a line without
    memchr::memchr(b'"', line)?;
    JSON_TIME_KEYS.iter().find_map(|key| {
        let p = memchr::memmem::find(line, key)?;
        json_value(&line[p + key.len()..])
    })
}

/// The time a line gives its record (or its file), if it is a time line.
pub fn time_line(line: &[u8]) -> Option<(WallStamp, Scope)> {
    // a time line begins with one of these: the end of a long line is not trimmed for nothing
    let first = *line.trim_ascii_start().first()?;
    if !matches!(first, b'T' | b'D' | b'S' | b'E' | b'B' | b'c' | b'"') {
        return None;
    }
    let t = line.trim_ascii();
    let record = |ws: Option<WallStamp>| ws.map(|w| (w, Scope::Record));
    match t.first()? {
        b'T' => {
            let v = after_key(t, b"Timestamp", b'=')?;
            record(iso_datetime(v).map(|(ws, _)| ws).or_else(|| us_datetime(v)))
        }
        b'D' => record(us_datetime(after_key(t, b"Date/Time", b':')?)),
        b'S' => record(apt_datetime(after_key(t, b"Start-Date", b':')?)),
        b'E' => record(apt_datetime(after_key(t, b"End-Date", b':')?)),
        b'B' => record(history_datetime(after_key(t, b"Begin time", b':')?)),
        b'c' => {
            let v = after_key(t, b"creation time", b':')?;
            ctime_datetime(v).map(|(ws, _)| (ws, Scope::File))
        }
        b'"' => record(
            JSON_TIME_KEYS
                .iter()
                .find_map(|k| t.strip_prefix(*k).and_then(json_value)),
        ),
        _ => None,
    }
}

mod near;

fn is_boundary(t: &[u8]) -> bool {
    t.is_empty() || (t.len() >= 8 && t.iter().all(|&c| c == b'-' || c == b'='))
}

/// Brace balance of a line: `{` minus `}`.
fn braces(t: &[u8]) -> i32 {
    t.iter().fold(0, |n, &c| match c {
        b'{' => n + 1,
        b'}' => n - 1,
        _ => n,
    })
}

fn trim_cr(l: &[u8]) -> &[u8] {
    l.strip_suffix(b"\r").unwrap_or(l)
}

/// A record's time and where the record lies.
#[derive(Clone, Copy, Debug)]
pub struct RecordTime {
    /// The time.
    pub stamp: LineStamp,
    /// The record's own time, or the file's.
    pub scope: Scope,
    /// Byte range of the whole record (the lines that named the event for a file time).
    pub span: (usize, usize),
}

/// Lines of a record around the lines that named an event: each line's range and whether it
/// sits at the record's own level (not inside a nested JSON object).
struct Bounds {
    before: Vec<(usize, usize, bool)>,
    after: Vec<(usize, usize, bool)>,
}

fn bounds(buf: &[u8], start: usize, end: usize) -> Bounds {
    let mut out = Bounds {
        before: Vec::new(),
        after: Vec::new(),
    };
    let first = buf[start..end]
        .split(|&c| c == b'\n')
        .next()
        .unwrap_or_default();
    let first = trim_cr(first).trim_ascii();
    // a one-line JSON object is a record of its own
    if (first.starts_with(b"{") && braces(first) == 0) || is_boundary(first) {
        return out;
    }
    let mut depth = 0;
    let mut pos = start;
    while pos > 0 && out.before.len() < RECORD_LINES {
        let le = pos - 1;
        let ls = memchr::memrchr(b'\n', &buf[..le]).map_or(0, |p| p + 1);
        pos = ls;
        let t = trim_cr(&buf[ls..le]).trim_ascii();
        if is_boundary(t) {
            break;
        }
        depth += braces(t);
        // the line that opens the JSON object (`{ "Created": …,`) still belongs to it
        out.before
            .push((ls, le, depth == 0 || (depth == 1 && t.starts_with(b"{"))));
        if depth > 0 {
            break;
        }
    }
    let mut depth = 0;
    let mut pos = end;
    while pos + 1 < buf.len() && out.after.len() < RECORD_LINES {
        let ls = pos + 1;
        let le = memchr::memchr(b'\n', &buf[ls..]).map_or(buf.len(), |p| ls + p);
        pos = le;
        let t = trim_cr(&buf[ls..le]).trim_ascii();
        if is_boundary(t) {
            break;
        }
        depth -= braces(t);
        out.after.push((ls, le, depth == 0));
        if depth > 0 {
            break;
        }
    }
    out
}

/// The time of the record holding `buf[start..end]` (the lines that named an event), or the
/// file's time for lines that have no record time. `None` when there is neither.
pub fn record_stamp(buf: &[u8], start: usize, end: usize) -> Option<RecordTime> {
    let end = end.min(buf.len());
    let found = |ws: WallStamp, scope, span| {
        Some(RecordTime {
            stamp: LineStamp {
                wall: Some(ws),
                mono_us: None,
                tod_us: None,
            },
            scope,
            span,
        })
    };
    let span_of = |b: &Bounds| {
        (
            b.before.last().map_or(start, |l| l.0),
            b.after.last().map_or(end, |l| l.1),
        )
    };
    for l in buf[start..end].split(|&c| c == b'\n') {
        // a huge line is read up to the record cap, never whole
        let l = trim_cr(&l[..l.len().min(super::MAX_RECORD_BYTES)]);
        let own = match time_line(l) {
            Some((ws, Scope::Record)) => Some(ws),
            _ => json_time_anywhere(l),
        };
        if let Some(ws) = own {
            return found(ws, Scope::Record, span_of(&bounds(buf, start, end)));
        }
    }
    if near::plain_around(buf, start, end, RECORD_LINES) {
        // no line the record could reach gives a time: the bounds would find none
        return file_time(buf, start).and_then(|ws| found(ws, Scope::File, (start, end)));
    }
    let b = bounds(buf, start, end);
    let span = span_of(&b);
    let near = b.before.iter().chain(&b.after).filter(|l| l.2);
    for &(ls, le, _) in near {
        let t = trim_cr(&buf[ls..le]).trim_ascii();
        let t = t.strip_prefix(b"{").map_or(t, <[u8]>::trim_ascii_start);
        if let Some((ws, Scope::Record)) = time_line(t) {
            return found(ws, Scope::Record, span);
        }
    }
    // no record time: the file's, searched further back
    file_time(buf, start).and_then(|ws| found(ws, Scope::File, (start, end)))
}

/// The last search for a file's time in one buffer: the buffer (address, length), the line
/// start searched from, and the time found that many lines before it (`None`: none within
/// [`HEADER_LINES`]). Candidates come in order, so each search goes on from the last one
/// instead of reading the same 256 lines again (issue 37: untimed lines cost 256 reads each).
type FileTimeMemo = Option<((usize, usize), usize, Option<(usize, WallStamp)>)>;

thread_local! {
    static FILE_TIME: std::cell::Cell<FileTimeMemo> = const { std::cell::Cell::new(None) };
}

/// Forgets the last search for a file's time (a buffer's memory is reused for the next block).
pub fn forget_file_time() {
    FILE_TIME.with(|m| m.set(None));
    near::forget();
}

/// The file's time: the nearest line within [`HEADER_LINES`] before `start` whose time has the
/// file's scope; the same result as reading those lines from scratch.
fn file_time(buf: &[u8], start: usize) -> Option<WallStamp> {
    let id = (buf.as_ptr() as usize, buf.len());
    let last = FILE_TIME
        .with(std::cell::Cell::take)
        .filter(|(b, q, _)| *b == id && *q <= start);
    let mut pos = start;
    let mut result = None;
    for k in 1..=HEADER_LINES {
        if let Some((_, q, found)) = &last {
            if pos == *q {
                result = found
                    .filter(|(d, _)| k - 1 + d <= HEADER_LINES)
                    .map(|(d, ws)| (k - 1 + d, ws));
                break;
            }
        }
        if pos == 0 {
            break;
        }
        let le = pos - 1;
        let ls = memchr::memrchr(b'\n', &buf[..le]).map_or(0, |p| p + 1);
        pos = ls;
        if let Some((ws, Scope::File)) = time_line(trim_cr(&buf[ls..le])) {
            result = Some((k, ws));
            break;
        }
    }
    FILE_TIME.with(|m| m.set(Some((id, start, result))));
    result.map(|(_, ws)| ws)
}

/// The human-readable message of a record: `Message = …` (lclog), `Description: …` (getsel),
/// `"Message": "…"` (Redfish, one-line or pretty-printed).
pub fn record_message(text: &[u8]) -> Option<String> {
    for l in text.split(|&c| c == b'\n') {
        let t = trim_cr(l).trim_ascii();
        let value = after_key(t, b"Message", b'=').or_else(|| after_key(t, b"Description", b':'));
        if let Some(v) = value.filter(|v| !v.is_empty()) {
            return Some(String::from_utf8_lossy(v).into_owned());
        }
        let json = memchr::memmem::find(t, b"\"Message\"").and_then(|p| {
            let rest = t[p + 9..].trim_ascii_start().strip_prefix(b":")?;
            let rest = rest.trim_ascii_start().strip_prefix(b"\"")?;
            Some(&rest[..memchr::memchr(b'"', rest)?])
        });
        if let Some(v) = json {
            return Some(String::from_utf8_lossy(v).into_owned());
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, needle: &str) -> Option<(i64, Option<i32>, Scope)> {
        let at = text.find(needle).unwrap();
        let s = text[..at].rfind('\n').map_or(0, |p| p + 1);
        let e = at + text[at..].find('\n').unwrap_or(text.len() - at);
        forget_file_time();
        record_stamp(text.as_bytes(), s, e).map(|r| {
            let w = r.stamp.wall.unwrap();
            (w.naive_secs, w.offset, r.scope)
        })
    }

    fn t(y: i32, mo: u32, d: u32, h: u32, mi: u32, s: u32) -> i64 {
        civil_secs(y, mo, d, h * 3600 + mi * 60 + s).unwrap()
    }

    #[test]
    fn lclog_records_take_their_own_timestamp() {
        let text = "SeqNumber       = 18470\nMessage ID      = TMP0103\nSeverity        = Critical\nTimestamp       = 2026-02-11 03:58:02\nMessage         = x\n--------------------------------------------------------------------------------\nSeqNumber       = 18469\nMessage ID      = FAN0001\nTimestamp       = 2019-11-16T13:31:02-0600\nMessage         = y\n";
        assert_eq!(
            at(text, "Message ID      = TMP0103"),
            Some((t(2026, 2, 11, 3, 58, 2), None, Scope::Record))
        );
        // the newer record above is never borrowed
        assert_eq!(
            at(text, "Message ID      = FAN0001"),
            Some((t(2019, 11, 16, 13, 31, 2), Some(-6 * 3600), Scope::Record))
        );
    }

    #[test]
    fn getsel_apt_and_dnf_history() {
        let getsel = "Record:      1\nDate/Time:   11/16/2019 01:31:02 PM\nSource:      system\nSeverity:    Critical\nDescription: A bus fatal error was detected on a component at slot 3.\n-------------------------------------------------------------------------------\n";
        assert_eq!(
            at(getsel, "Description"),
            Some((t(2019, 11, 16, 13, 31, 2), None, Scope::Record))
        );
        let apt = "Start-Date: 2025-06-10  06:31:02\nUpgrade: a\nEnd-Date: 2025-06-10  06:31:09\n\nStart-Date: 2025-06-11  06:25:14\nCommandline: /usr/bin/unattended-upgrade\nUpgrade: libnvidia-cfg1-535:amd64 (1, 2)\nEnd-Date: 2025-06-11  06:27:02\n";
        assert_eq!(
            at(apt, "Upgrade: libnvidia"),
            Some((t(2025, 6, 11, 6, 25, 14), None, Scope::Record))
        );
        let cut = "Commandline: apt-get upgrade\nUpgrade: libnvidia-cfg1-535:amd64 (1, 2)\nEnd-Date: 2025-06-11  06:27:02\n";
        assert_eq!(at(cut, "Upgrade:").unwrap().0, t(2025, 6, 11, 6, 27, 2));
        let dnf = "Transaction ID : 7\nBegin time     : Wed 02 Apr 2025 09:14:48 AM UTC\nEnd time       : Wed 02 Apr 2025 09:15:10 AM UTC (22 seconds)\nPackages Altered:\n    Upgrade  nvidia-driver-3:550.54.15-1.el8.x86_64 @cuda\n";
        assert_eq!(
            at(dnf, "    Upgrade"),
            Some((t(2025, 4, 2, 9, 14, 48), Some(0), Scope::Record))
        );
        let yum = "Transaction ID : 12\nBegin time     : Wed Apr  2 21:14:48 2025\nPackages Altered:\n    Updated nvidia-driver-3:545.23.08-1.el7.x86_64 @cuda\n";
        assert_eq!(at(yum, "    Updated").unwrap().0, t(2025, 4, 2, 21, 14, 48));
    }

    #[test]
    fn redfish_one_line_and_pretty_printed() {
        let lines = "{\"Created\": \"2026-03-14T02:12:27-05:00\", \"MessageId\": \"IDRAC.2.9.PSU0003\"}\n{\"Id\": \"2\", \"MessageId\": \"IDRAC.2.9.PSU0001\"}\n";
        assert_eq!(
            at(lines, "{\"Created"),
            Some((t(2026, 3, 14, 2, 12, 27), Some(-5 * 3600), Scope::Record))
        );
        // a one-line object without a time borrows none from the object above
        assert_eq!(at(lines, "{\"Id\": \"2\""), None);
        let pretty = "{\n  \"Members\": [\n    {\n      \"Created\": \"2026-03-14T02:12:27-05:00\",\n      \"Links\": {\n        \"OriginOfCondition\": {\"@odata.id\": \"/x\"}\n      },\n      \"MessageId\": \"IDRAC.2.9.PSU0003\"\n    },\n    {\n      \"MessageId\": \"IDRAC.2.9.FAN0001\",\n      \"Oem\": {\"Dell\": {\"Created\": \"1999-01-01T00:00:00Z\"}},\n      \"Created\": \"2026-03-14T02:12:40-05:00\"\n    }\n  ]\n}\n";
        assert_eq!(
            at(pretty, "\"MessageId\": \"IDRAC.2.9.PSU0003").unwrap().0,
            t(2026, 3, 14, 2, 12, 27)
        );
        assert_eq!(
            at(pretty, "\"MessageId\": \"IDRAC.2.9.FAN0001").unwrap().0,
            t(2026, 3, 14, 2, 12, 40)
        );
    }

    #[test]
    fn record_messages() {
        let lclog = b"Message ID      = FAN0001\nMessage         = Fan 6A RPM is less than the lower critical threshold.\nMessage Arg   1 = 6A";
        assert_eq!(
            record_message(lclog).as_deref(),
            Some("Fan 6A RPM is less than the lower critical threshold.")
        );
        let redfish = b"{\"Created\": \"x\", \"Message\": \"Power supply 2 failed.\", \"MessageArgs\": [\"2\"]}";
        assert_eq!(
            record_message(redfish).as_deref(),
            Some("Power supply 2 failed.")
        );
        let getsel =
            b"Severity:    Critical\nDescription: The power input for power supply 1 is lost.";
        assert_eq!(
            record_message(getsel).as_deref(),
            Some("The power input for power supply 1 is lost.")
        );
        assert_eq!(record_message(b"Message ID      = FAN0001"), None);
    }

    #[test]
    fn installer_lines_take_the_file_time() {
        let log = "nvidia-installer log file '/var/log/nvidia-installer.log'\ncreation time: Wed Apr  2 09:20:11 2025\ninstaller version: 550.54.15\n\nPATH: /usr/bin\n\n-> Installing NVIDIA driver version 550.54.15.\n";
        assert_eq!(
            at(log, "-> Installing"),
            Some((t(2025, 4, 2, 9, 20, 11), None, Scope::File))
        );
        assert_eq!(at("just a line\nNVRM: x\n", "NVRM"), None);
    }

    #[test]
    fn package_log_prefixes_name_no_host() {
        let l = b"2025-06-11 06:25:40 upgrade nvidia-driver-535:amd64 535.161.08-0ubuntu2.22.04.1 535.183.01-0ubuntu0.22.04.1";
        let p = package_line(l).unwrap();
        assert!(p.host.is_none());
        assert!(l[p.msg_start..].starts_with(b"upgrade nvidia-driver-535"));
        let l =
            b"2025-04-02T09:14:51+0000 SUBDEBUG Upgrade: nvidia-driver-3:550.54.15-1.el8.x86_64";
        let p = package_line(l).unwrap();
        assert_eq!(p.stamp.wall.unwrap().offset, Some(0));
        assert!(l[p.msg_start..].starts_with(b"Upgrade: nvidia"));
        let l = b"Apr 02 09:14:51 Installed: cuda-toolkit-12-4-12.4.1-1.x86_64";
        let p = package_line(l).unwrap();
        assert!(!p.stamp.wall.unwrap().has_year);
        assert!(l[p.msg_start..].starts_with(b"Installed: cuda"));
        for other in [
            &b"2022-07-17T21:00:02.497397-04:00 host kernel: NVRM: x"[..],
            b"2025-06-11 06:25:40 gpu-node-07 kernel: x",
            b"Apr 02 09:14:51 gpu-node-07 kernel: x",
        ] {
            assert!(package_line(other).is_none());
        }
    }
}
