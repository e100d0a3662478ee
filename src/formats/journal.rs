//! systemd journal exports: `journalctl -o short-full|short-unix` text and `-o json` lines.
//! (`short`, `short-precise` and `short-iso` share the syslog shapes in `syslog.rs`,
//! `short-monotonic` the dmesg shape in `kernel.rs`; the other structured modes are read entry
//! by entry in `journal_entries.rs`.)

use super::time::{civil_secs, digits, fraction, hms, is_weekday, number};
use super::{Prefix, Shape};
use crate::model::{LineStamp, WallStamp};

/// `Thu 2024-03-21 02:07:08 UTC host tag: msg` (`-o short-full`).
pub fn short_full(line: &[u8]) -> Option<Prefix<'_>> {
    if !is_weekday(line) || line.get(3) != Some(&b' ') || line.len() < 24 {
        return None;
    }
    let b = &line[4..];
    if b[4] != b'-' || b[7] != b'-' || b[10] != b' ' {
        return None;
    }
    let y = digits(b, 4)? as i32;
    let mo = digits(&b[5..], 2)?;
    let d = digits(&b[8..], 2)?;
    let sod = hms(&b[11..])?;
    let mut i = 4 + 19;
    let (micros, fl) = fraction(&line[i..]);
    i += fl;
    if line.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    let zstart = i;
    while i < line.len() && line[i] != b' ' {
        i += 1;
    }
    let offset = matches!(&line[zstart..i], b"UTC" | b"GMT").then_some(0);
    let ws = WallStamp {
        naive_secs: civil_secs(y, mo, d, sod)?,
        micros,
        offset,
        has_year: true,
    };
    let mut p = host_tag(line, i)?;
    p.stamp.wall = Some(ws);
    p.shape = Shape::JournalFull;
    Some(p)
}

/// `1711000000.123456 host tag: msg` (`-o short-unix`).
pub fn short_unix(line: &[u8]) -> Option<Prefix<'_>> {
    let (secs, n) = number(line)?;
    if n != 10 {
        return None;
    }
    let (micros, fl) = fraction(&line[n..]);
    if fl == 0 {
        return None;
    }
    let ws = WallStamp {
        naive_secs: secs as i64,
        micros,
        offset: Some(0),
        has_year: true,
    };
    let mut p = host_tag(line, n + fl)?;
    p.stamp.wall = Some(ws);
    p.shape = Shape::JournalUnix;
    Some(p)
}

fn host_tag(line: &[u8], mut i: usize) -> Option<Prefix<'_>> {
    if line.get(i) != Some(&b' ') {
        return None;
    }
    i += 1;
    let host_end = i + line[i..].iter().take(255).position(|&c| c == b' ')?;
    let host = &line[i..host_end];
    let rest = &line[host_end + 1..];
    let tag = super::find_colon_space(&rest[..rest.len().min(96)])?;
    Some(Prefix {
        stamp: LineStamp::default(),
        host: Some(host),
        msg_start: host_end + 1 + tag + 2,
        shape: Shape::JournalFull,
    })
}

/// Fields of one `journalctl -o json` entry that the analysis uses.
#[derive(Debug, Default)]
pub struct JsonEntry {
    /// MESSAGE, decoded from a string or a byte array (lossy UTF-8).
    pub message: String,
    /// `__REALTIME_TIMESTAMP` in microseconds since the epoch.
    pub realtime_us: Option<i64>,
    /// `_SOURCE_MONOTONIC_TIMESTAMP` (kernel entries: the printk clock) in microseconds.
    pub source_mono_us: Option<u64>,
    /// `_HOSTNAME`.
    pub host: Option<String>,
    /// `_BOOT_ID`.
    pub boot_id: Option<String>,
    /// A wall-clock time of unknown offset (the header of `-o verbose` in a zone other than UTC),
    /// when no `__REALTIME_TIMESTAMP` is given.
    pub local: Option<WallStamp>,
    /// True when a value longer than [`MAX_FIELD_BYTES`] was cut before decoding.
    pub cut: bool,
}

/// The longest JSON value decoded whole; longer ones are cut first (a recognizer reads at most
/// this much of a line anyway).
pub const MAX_FIELD_BYTES: usize = 64 * 1024;

impl JsonEntry {
    /// The entry's time: `__REALTIME_TIMESTAMP` (UTC) or the local header time.
    pub fn wall(&self) -> Option<WallStamp> {
        self.realtime_us
            .map(|us| WallStamp {
                naive_secs: us.div_euclid(1_000_000),
                micros: us.rem_euclid(1_000_000) as u32,
                offset: Some(0),
                has_year: true,
            })
            .or(self.local)
    }
}

fn json_str(v: &serde_json::Value) -> Option<String> {
    match v {
        serde_json::Value::String(s) => Some(s.clone()),
        serde_json::Value::Array(items) => {
            // byte array, or a repeated field (take the first string)
            if items.iter().all(|x| x.is_u64()) {
                let bytes: Vec<u8> = items
                    .iter()
                    .filter_map(|x| x.as_u64())
                    .map(|x| x as u8)
                    .collect();
                Some(String::from_utf8_lossy(&bytes).into_owned())
            } else {
                items.iter().find_map(json_str)
            }
        }
        serde_json::Value::Number(n) => Some(n.to_string()),
        _ => None,
    }
}

/// Parses one `journalctl -o json` line (also `json-seq` with a leading RS byte).
pub fn json_entry(line: &[u8]) -> Option<JsonEntry> {
    let line = line.strip_prefix(b"\x1e").unwrap_or(line);
    let line = line.strip_prefix(b"data: ").unwrap_or(line);
    if line.first() != Some(&b'{') {
        return None;
    }
    let (line, cut) = super::json_cut::cut_long_values(line, MAX_FIELD_BYTES);
    let v: serde_json::Value = serde_json::from_slice(&line).ok()?;
    let obj = v.as_object()?;
    let get = |k: &str| obj.get(k).and_then(json_str);
    Some(JsonEntry {
        message: get("MESSAGE").unwrap_or_default(),
        // out-of-range stamps are not times (and would overflow the sums of the timeline)
        realtime_us: get("__REALTIME_TIMESTAMP")
            .and_then(|s| s.parse::<i64>().ok())
            .filter(|t| (-super::time::MAX_WALL_US..=super::time::MAX_WALL_US).contains(t)),
        source_mono_us: get("_SOURCE_MONOTONIC_TIMESTAMP")
            .and_then(|s| s.parse::<u64>().ok())
            .filter(|&m| m <= super::time::MAX_UPTIME_S * 1_000_000),
        host: get("_HOSTNAME"),
        boot_id: get("_BOOT_ID"),
        local: None,
        cut,
    })
}

/// True for journal lines that are not entries: `-- Boot … --`, `-- Reboot --`, `-- Logs begin at … --`, `-- No entries --`.
pub fn is_marker(line: &[u8]) -> bool {
    line.starts_with(b"-- ") && line.trim_ascii_end().ends_with(b" --")
}

/// True for the boot separators of journalctl.
pub fn is_boot_marker(line: &[u8]) -> bool {
    line.starts_with(b"-- Boot ") || line.starts_with(b"-- Reboot --")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn full_and_unix() {
        let l = b"Thu 2024-03-21 02:07:08 UTC gpu3 kernel: NVRM: Xid";
        let p = short_full(l).unwrap();
        assert_eq!(p.host, Some(&b"gpu3"[..]));
        assert_eq!(p.stamp.wall.unwrap().offset, Some(0));
        assert_eq!(&l[p.msg_start..], b"NVRM: Xid");
        let l = b"1711000000.123456 gpu3 kernel: NVRM: Xid";
        let p = short_unix(l).unwrap();
        assert_eq!(p.stamp.wall.unwrap().naive_secs, 1711000000);
        assert_eq!(&l[p.msg_start..], b"NVRM: Xid");
    }

    #[test]
    fn json_message_as_bytes() {
        let e = json_entry(
            br#"{"MESSAGE":[72,105],"__REALTIME_TIMESTAMP":"1342540861416409","_HOSTNAME":"h"}"#,
        )
        .unwrap();
        assert_eq!(e.message, "Hi");
        assert_eq!(e.realtime_us, Some(1342540861416409));
        assert_eq!(e.host.as_deref(), Some("h"));
        assert!(json_entry(b"{not json").is_none());
    }

    #[test]
    fn markers() {
        assert!(is_boot_marker(
            b"-- Boot 0123456789abcdef0123456789abcdef --"
        ));
        assert!(is_marker(b"-- No entries --"));
        assert!(!is_marker(b"--help"));
    }
}
