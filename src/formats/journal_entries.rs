//! The structured journalctl outputs, entry by entry: `-o json` (and `json-sse`), `json-seq`
//! (RS-prefixed), `json-pretty` (one object over many lines), `export` (`KEY=value` blocks with
//! length-prefixed binary fields) and `verbose` (a dated header, then indented fields).
//! Each entry becomes a [`JsonEntry`] with the line to cite (its MESSAGE line).

use super::journal::{json_entry, JsonEntry, MAX_FIELD_BYTES};
use crate::model::WallStamp;

/// Which structured output a buffer holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// One JSON object per line (`json`, `json-seq`, `json-sse`).
    JsonLines,
    /// `json-pretty`: `{` and `}` alone on their lines, one field per line between.
    JsonPretty,
    /// `export`: the journal export format.
    Export,
    /// `verbose`: `Thu 2024-03-21 05:46:40.123456 UTC [s=…]` and `    KEY=value` lines.
    Verbose,
}

/// One entry and where it is: the 1-based line of its MESSAGE (or of its start) and how many
/// lines it spans (separators included).
#[derive(Debug)]
pub struct Located {
    /// The decoded fields.
    pub entry: JsonEntry,
    /// The line to cite.
    pub line: u64,
    /// Byte range of that line in the buffer.
    pub span: (usize, usize),
    /// Lines the entry covers (counted as recognized).
    pub lines: u64,
}

/// Decides which structured journal output the first lines are, if any.
pub fn detect(window: &[u8]) -> Option<Mode> {
    let (mut json, mut pretty, mut export, mut verbose, mut total) = (0, 0, 0, 0, 0);
    for line in window.split(|&c| c == b'\n').take(400) {
        let line = line.strip_suffix(b"\r").unwrap_or(line);
        if line.trim_ascii().is_empty() {
            continue;
        }
        total += 1;
        let bare = line.strip_prefix(b"\x1e").unwrap_or(line);
        let bare = bare.strip_prefix(b"data: ").unwrap_or(bare);
        if bare.first() == Some(&b'{') && memchr::memmem::find(bare, b"\"MESSAGE\"").is_some() {
            json += 1;
        } else if line.starts_with(b"\t\"") && memchr::memmem::find(line, b"\" : ").is_some() {
            pretty += 1;
        } else if line == b"{" || line == b"}" {
            pretty += usize::from(pretty > 0);
        } else if line.starts_with(b"__CURSOR=")
            || line.starts_with(b"__REALTIME_TIMESTAMP=")
            || line.starts_with(b"__MONOTONIC_TIMESTAMP=")
        {
            export += 1;
        } else if verbose_header(line).is_some() {
            verbose += 1;
        } else if line.starts_with(b"    ") && field_name(&line[4..]).is_some() {
            verbose += usize::from(verbose > 0);
        }
    }
    if total == 0 {
        return None;
    }
    if json * 2 >= total {
        Some(Mode::JsonLines)
    } else if pretty * 2 >= total {
        Some(Mode::JsonPretty)
    } else if export > 0 && export * 8 >= total {
        Some(Mode::Export)
    } else if verbose * 2 >= total {
        Some(Mode::Verbose)
    } else {
        None
    }
}

/// Every entry of `buf` in `mode`, in order; JSON lines are decoded one at a time as the
/// iterator is read (a long journal is never held decoded whole).
pub fn entries(buf: &[u8], mode: Mode) -> Box<dyn Iterator<Item = Located> + '_> {
    match mode {
        Mode::JsonLines => Box::new(json_lines(buf)),
        Mode::JsonPretty => Box::new(json_pretty(buf).into_iter()),
        Mode::Export => Box::new(export(buf).into_iter()),
        Mode::Verbose => Box::new(verbose(buf).into_iter()),
    }
}

/// The lines of `buf` with their byte ranges (without the `\n`, `\r` kept).
fn lines(buf: &[u8]) -> impl Iterator<Item = (usize, usize)> + '_ {
    let body = buf.strip_suffix(b"\n").unwrap_or(buf);
    let mut at = 0;
    body.split(|&c| c == b'\n').map(move |l| {
        let start = at;
        at += l.len() + 1;
        (start, start + l.len())
    })
}

fn trim_cr(l: &[u8]) -> &[u8] {
    l.strip_suffix(b"\r").unwrap_or(l)
}

fn json_lines(buf: &[u8]) -> impl Iterator<Item = Located> + '_ {
    lines(buf).enumerate().filter_map(|(i, (s, e))| {
        json_entry(trim_cr(&buf[s..e])).map(|entry| Located {
            entry,
            line: i as u64 + 1,
            span: (s, e),
            lines: 1,
        })
    })
}

fn json_pretty(buf: &[u8]) -> Vec<Located> {
    let mut out = Vec::new();
    let mut object: Vec<u8> = Vec::new();
    let mut first = None;
    let mut message = None;
    let mut cut_any = false;
    for (i, (s, e)) in lines(buf).enumerate() {
        let line = trim_cr(&buf[s..e]);
        let no = i as u64 + 1;
        if line == b"{" {
            object.clear();
            cut_any = false;
            first = Some(no);
            message = None;
        }
        if first.is_none() {
            continue;
        }
        if line.starts_with(b"\t\"MESSAGE\" : ") {
            message = Some((no, s, e));
        }
        // a field line is cut before it is kept: the object stays small whatever its values
        let (kept, cut) = super::json_cut::cut_long_values(line, MAX_FIELD_BYTES);
        cut_any |= cut;
        object.extend_from_slice(&kept);
        object.push(b'\n');
        if line == b"}" {
            let start = first.take().unwrap_or(no);
            let compact: Vec<u8> = object
                .iter()
                .map(|&c| if c == b'\n' { b' ' } else { c })
                .collect();
            if let Some(mut entry) = json_entry(&compact) {
                entry.cut |= std::mem::take(&mut cut_any);
                let (line, ms, me) = message.unwrap_or((start, s, e));
                out.push(Located {
                    entry,
                    line,
                    span: (ms, me),
                    lines: no - start + 1,
                });
            }
        }
    }
    out
}

/// A journal field name: upper-case letters, digits and `_`, not starting with a digit.
fn field_name(b: &[u8]) -> Option<usize> {
    let n = b
        .iter()
        .take_while(|c| c.is_ascii_uppercase() || c.is_ascii_digit() || **c == b'_')
        .count();
    (n > 0 && !b[0].is_ascii_digit()).then_some(n)
}

/// Collects the fields the analysis uses into an entry.
#[derive(Default)]
struct Fields {
    entry: JsonEntry,
    message_line: Option<(u64, usize, usize)>,
    any: bool,
}

impl Fields {
    fn set(&mut self, key: &[u8], value: &[u8]) {
        self.any = true;
        let text = || String::from_utf8_lossy(value).into_owned();
        let e = &mut self.entry;
        match key {
            b"MESSAGE" => e.message = text(),
            b"__REALTIME_TIMESTAMP" => e.realtime_us = parse_realtime(value),
            // verbose prints no __REALTIME_TIMESTAMP; the sender's own stamp stands in
            b"_SOURCE_REALTIME_TIMESTAMP" if e.realtime_us.is_none() && e.local.is_none() => {
                e.realtime_us = parse_realtime(value)
            }
            b"_SOURCE_MONOTONIC_TIMESTAMP" => {
                e.source_mono_us = std::str::from_utf8(value)
                    .ok()
                    .and_then(|s| s.parse::<u64>().ok())
                    .filter(|&m| m <= super::time::MAX_UPTIME_S * 1_000_000)
            }
            b"_HOSTNAME" => e.host = Some(text()),
            b"_BOOT_ID" => e.boot_id = Some(text()),
            _ => {}
        }
    }

    fn finish(&mut self, lines: u64, out: &mut Vec<Located>, fallback: (u64, usize, usize)) {
        let f = std::mem::take(self);
        if f.any {
            let (line, s, e) = f.message_line.unwrap_or(fallback);
            out.push(Located {
                entry: f.entry,
                line,
                span: (s, e),
                lines,
            });
        }
    }
}

fn parse_realtime(value: &[u8]) -> Option<i64> {
    std::str::from_utf8(value)
        .ok()
        .and_then(|s| s.parse::<i64>().ok())
        .filter(|t| (-super::time::MAX_WALL_US..=super::time::MAX_WALL_US).contains(t))
}

/// The journal export format: fields `KEY=value\n`, or `KEY\n` + 64-bit little-endian length +
/// bytes + `\n` for values with newlines or binary data; entries end with an empty line.
fn export(buf: &[u8]) -> Vec<Located> {
    let mut out = Vec::new();
    let mut fields = Fields::default();
    let (mut at, mut line) = (0usize, 1u64);
    let mut start = (1u64, 0usize, 0usize);
    while at < buf.len() {
        let end = memchr::memchr(b'\n', &buf[at..]).map_or(buf.len(), |p| at + p);
        let l = trim_cr(&buf[at..end]);
        if !fields.any {
            start = (line, at, end);
        }
        if l.is_empty() {
            fields.finish(line - start.0 + 1, &mut out, start);
            at = end + 1;
            line += 1;
            continue;
        }
        if let Some(eq) = memchr::memchr(b'=', l).filter(|&p| field_name(l).is_some_and(|n| n == p))
        {
            if &l[..eq] == b"MESSAGE" {
                fields.message_line = Some((line, at, end));
            }
            fields.set(&l[..eq], &l[eq + 1..]);
            at = end + 1;
            line += 1;
            continue;
        }
        // a binary field: the name alone, then the length and the bytes
        let len_at = end + 1;
        let len = buf
            .get(len_at..len_at + 8)
            .map(|b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
        match len {
            Some(n) if field_name(l) == Some(l.len()) && n <= (buf.len() - len_at - 8) as u64 => {
                let vs = len_at + 8;
                let ve = vs + n as usize;
                let value = &buf[vs..ve];
                let spanned = bytecount::count(&buf[at..ve.min(buf.len())], b'\n') as u64;
                if l == b"MESSAGE" {
                    fields.message_line = Some((line, at, ve));
                }
                fields.set(l, value);
                at = ve + 1;
                line += spanned + u64::from(buf.get(ve) == Some(&b'\n'));
            }
            _ => {
                at = end + 1;
                line += 1;
            }
        }
    }
    fields.finish(line.saturating_sub(start.0).max(1), &mut out, start);
    out
}

/// The header of a `-o verbose` entry: `Thu 2024-03-21 05:46:40.123456 UTC [s=…]`.
fn verbose_header(line: &[u8]) -> Option<WallStamp> {
    let open = memchr::memmem::find(line, b" [s=")?;
    if !line.ends_with(b"]") || open < 24 {
        return None;
    }
    let mut dated = line[..open].to_vec();
    dated.extend_from_slice(b" h t: x");
    super::journal::short_full(&dated)?.stamp.wall
}

fn verbose(buf: &[u8]) -> Vec<Located> {
    let mut out = Vec::new();
    let mut fields = Fields::default();
    let mut start = (1u64, 0usize, 0usize);
    let mut current: Option<(Vec<u8>, Vec<u8>)> = None;
    let mut last = 0u64;
    for (i, (s, e)) in lines(buf).enumerate() {
        let no = i as u64 + 1;
        last = no;
        let l = trim_cr(&buf[s..e]);
        if let Some(wall) = verbose_header(l) {
            if let Some((k, v)) = current.take() {
                fields.set(&k, &v);
            }
            fields.finish(no - start.0, &mut out, start);
            start = (no, s, e);
            fields.any = true;
            if wall.offset == Some(0) {
                fields.entry.realtime_us =
                    Some(wall.naive_secs * 1_000_000 + i64::from(wall.micros));
            } else {
                fields.entry.local = Some(wall);
            }
            continue;
        }
        let Some(rest) = l.strip_prefix(b"    ") else {
            continue;
        };
        match field_name(rest).filter(|&n| rest.get(n) == Some(&b'=')) {
            Some(n) => {
                if let Some((k, v)) = current.take() {
                    fields.set(&k, &v);
                }
                if &rest[..n] == b"MESSAGE" {
                    fields.message_line = Some((no, s, e));
                }
                current = Some((rest[..n].to_vec(), rest[n + 1..].to_vec()));
            }
            None => {
                // a value's next line, indented under its first
                if let Some((_, v)) = current.as_mut() {
                    v.push(b'\n');
                    v.extend_from_slice(rest.trim_ascii_start());
                }
            }
        }
    }
    if let Some((k, v)) = current.take() {
        fields.set(&k, &v);
    }
    fields.finish(last + 1 - start.0, &mut out, start);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn one(buf: &[u8]) -> Vec<Located> {
        entries(buf, detect(buf).expect("detected")).collect()
    }

    #[test]
    fn export_with_a_binary_field() {
        let mut b = b"__CURSOR=s=1\n__REALTIME_TIMESTAMP=1711000000123456\n_HOSTNAME=n7\nMESSAGE=NVRM: Xid 79\n\n__CURSOR=s=2\n__REALTIME_TIMESTAMP=1711000001000000\n_HOSTNAME=n7\nMESSAGE\n".to_vec();
        b.extend_from_slice(&10u64.to_le_bytes());
        b.extend_from_slice(b"two\nlines!\n\n");
        let es = one(&b);
        assert_eq!(es.len(), 2);
        assert_eq!(es[0].entry.message, "NVRM: Xid 79");
        assert_eq!(es[0].line, 4);
        assert_eq!(es[0].entry.host.as_deref(), Some("n7"));
        assert_eq!(es[1].entry.message, "two\nlines!");
        assert_eq!(es[1].entry.realtime_us, Some(1_711_000_001_000_000));
        assert_eq!(es[1].line, 9);
    }

    #[test]
    fn pretty_seq_and_verbose() {
        let p = b"{\n\t\"_HOSTNAME\" : \"n7\",\n\t\"MESSAGE\" : \"NVRM: Xid\",\n\t\"__REALTIME_TIMESTAMP\" : \"1711000000123456\"\n}\n";
        let es = one(p);
        assert_eq!(detect(p), Some(Mode::JsonPretty));
        assert_eq!((es.len(), es[0].line, es[0].lines), (1, 3, 5));
        assert_eq!(es[0].entry.realtime_us, Some(1_711_000_000_123_456));
        let s = b"\x1e{\"MESSAGE\":\"NVRM: Xid\",\"_HOSTNAME\":\"n7\"}\n";
        assert_eq!(detect(s), Some(Mode::JsonLines));
        assert_eq!(one(s)[0].entry.host.as_deref(), Some("n7"));
        let v = b"Thu 2024-03-21 05:46:40.123456 UTC [s=abc;i=1]\n    _HOSTNAME=n7\n    MESSAGE=multi\n            line\nThu 2024-03-21 05:46:41.000000 CET [s=abc;i=2]\n    MESSAGE=x\n";
        assert_eq!(detect(v), Some(Mode::Verbose));
        let es = one(v);
        assert_eq!(es.len(), 2);
        assert_eq!(es[0].entry.message, "multi\nline");
        assert_eq!(es[0].entry.realtime_us, Some(1_711_000_000_123_456));
        assert_eq!((es[0].line, es[0].lines), (3, 4));
        assert!(es[1].entry.realtime_us.is_none() && es[1].entry.local.is_some());
    }

    #[test]
    fn plain_text_is_none_of_them() {
        assert_eq!(detect(b"Mar 21 05:46:40 n7 kernel: NVRM: Xid\n"), None);
        assert_eq!(detect(b""), None);
    }
}
