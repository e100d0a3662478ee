//! Pretty JSON written piece by piece: the bytes of `serde_json::to_writer_pretty` (two spaces
//! an indent level), from any level of a document, so that the parts of one document (its
//! fields, batches of a long list) can be made apart, in parallel, and written one after the
//! other.

use serde::Serialize;
use serde_json::ser::Formatter;
use std::io::{self, Write};

/// serde_json's pretty formatter, starting at an indent level of a larger document.
struct Pretty {
    level: usize,
    has_value: bool,
}

/// Writes the indentation of `level` (two spaces each) in one piece.
pub(super) fn indent<W: ?Sized + Write>(w: &mut W, level: usize) -> io::Result<()> {
    const SPACES: &[u8; 64] = &[b' '; 64];
    let mut n = 2 * level;
    while n > 0 {
        let k = n.min(SPACES.len());
        w.write_all(&SPACES[..k])?;
        n -= k;
    }
    Ok(())
}

impl Pretty {
    /// Opens an array or an object: one level deeper, nothing in it yet.
    fn open<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level += 1;
        self.has_value = false;
        w.write_all(bracket)
    }

    /// Closes an array or an object, on a line of its own when it holds something.
    fn close<W: ?Sized + Write>(&mut self, w: &mut W, bracket: &[u8]) -> io::Result<()> {
        self.level -= 1;
        if self.has_value {
            w.write_all(b"\n")?;
            indent(w, self.level)?;
        }
        w.write_all(bracket)
    }
}

impl Formatter for Pretty {
    fn begin_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"[")
    }

    fn end_array<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"]")
    }

    fn begin_array_value<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.level)
    }

    fn end_array_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }

    fn begin_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.open(w, b"{")
    }

    fn end_object<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        self.close(w, b"}")
    }

    fn begin_object_key<W: ?Sized + Write>(&mut self, w: &mut W, first: bool) -> io::Result<()> {
        w.write_all(if first { b"\n" } else { b",\n" })?;
        indent(w, self.level)
    }

    fn begin_object_value<W: ?Sized + Write>(&mut self, w: &mut W) -> io::Result<()> {
        w.write_all(b": ")
    }

    fn end_object_value<W: ?Sized + Write>(&mut self, _w: &mut W) -> io::Result<()> {
        self.has_value = true;
        Ok(())
    }
}

/// Writes `v` as pretty JSON whose first line is already indented to `level` (its nested lines
/// are indented from there).
pub(super) fn value<W: ?Sized + Write, T: ?Sized + Serialize>(
    w: &mut W,
    level: usize,
    v: &T,
) -> io::Result<()> {
    v.serialize(&mut serializer(w, level))
        .map_err(io::Error::other)
}

/// A serializer of pretty JSON into `w` whose first line is already indented to `level`.
pub(super) fn serializer<W: Write>(
    w: W,
    level: usize,
) -> serde_json::Serializer<W, impl Formatter> {
    let formatter = Pretty {
        level,
        has_value: false,
    };
    serde_json::Serializer::with_formatter(w, formatter)
}

/// Writes `s` as a JSON string, escaped as serde_json escapes it: `"` and `\\` with a
/// backslash, the control characters below U+0020 as `\b`, `\t`, `\n`, `\f`, `\r` or `\u00xx`
/// (lower-case hex), everything else as it is. Eight bytes at a time while none needs escaping
/// (the common case: log lines are printable).
pub(super) fn string(out: &mut Vec<u8>, s: &str) {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    /// A byte of `x` is zero (exact as a test of the whole word).
    fn zero_in(x: u64) -> bool {
        x.wrapping_sub(ONES) & !x & HIGHS != 0
    }
    /// A byte of `x` needs escaping: below 0x20, or `"`, or `\\`.
    fn escape_in(x: u64) -> bool {
        x.wrapping_sub(ONES * 0x20) & !x & HIGHS != 0
            || zero_in(x ^ (ONES * u64::from(b'"')))
            || zero_in(x ^ (ONES * u64::from(b'\\')))
    }
    let b = s.as_bytes();
    out.reserve(b.len() + 2);
    out.push(b'"');
    let (mut run, mut i) = (0, 0);
    while i < b.len() {
        if let Some(word) = b.get(i..i + 8) {
            let x = u64::from_le_bytes(word.try_into().unwrap_or_default());
            if !escape_in(x) {
                i += 8;
                continue;
            }
        }
        let c = b[i];
        let short = match c {
            b'"' => b'"',
            b'\\' => b'\\',
            0x08 => b'b',
            0x09 => b't',
            0x0a => b'n',
            0x0c => b'f',
            0x0d => b'r',
            0..=0x1f => b'u',
            _ => {
                i += 1;
                continue;
            }
        };
        out.extend_from_slice(&b[run..i]);
        if short == b'u' {
            const HEX: &[u8; 16] = b"0123456789abcdef";
            out.extend_from_slice(&[
                b'\\',
                b'u',
                b'0',
                b'0',
                HEX[usize::from(c >> 4)],
                HEX[usize::from(c & 0xf)],
            ]);
        } else {
            out.extend_from_slice(&[b'\\', short]);
        }
        i += 1;
        run = i;
    }
    out.extend_from_slice(&b[run..]);
    out.push(b'"');
}

/// Asks the processor to fetch the memory at `p` into its caches, for a read soon after (a hint:
/// nothing is read now, and nothing happens on other processors).
pub(super) fn prefetch(p: *const u8) {
    #[cfg(target_arch = "x86_64")]
    // SAFETY: a prefetch reads nothing and cannot fault, whatever the address
    unsafe {
        std::arch::x86_64::_mm_prefetch::<{ std::arch::x86_64::_MM_HINT_T0 }>(p.cast());
    }
    #[cfg(not(target_arch = "x86_64"))]
    let _ = p;
}

/// A JSON object at level 0 (a document), written field by field.
pub(super) struct Object<'w, W: ?Sized + Write> {
    w: &'w mut W,
    first: bool,
}

impl<'w, W: ?Sized + Write> Object<'w, W> {
    /// Opens the object.
    pub(super) fn begin(w: &'w mut W) -> io::Result<Self> {
        w.write_all(b"{")?;
        Ok(Object { w, first: true })
    }

    /// Writes the key of the next field (a plain name, nothing to escape) and returns the
    /// writer for its value, to be written at level 1.
    pub(super) fn key(&mut self, name: &str) -> io::Result<&mut W> {
        debug_assert!(!name.bytes().any(|b| b < 0x20 || b == b'"' || b == b'\\'));
        self.w.write_all(if self.first { b"\n" } else { b",\n" })?;
        self.first = false;
        indent(self.w, 1)?;
        self.w.write_all(b"\"")?;
        self.w.write_all(name.as_bytes())?;
        self.w.write_all(b"\": ")?;
        Ok(&mut *self.w)
    }

    /// Writes a field.
    pub(super) fn field<T: ?Sized + Serialize>(&mut self, name: &str, v: &T) -> io::Result<()> {
        let w = self.key(name)?;
        value(w, 1, v)
    }

    /// Closes the object.
    pub(super) fn end(self) -> io::Result<()> {
        if !self.first {
            self.w.write_all(b"\n")?;
        }
        self.w.write_all(b"}")
    }
}

/// Items serialized in one batch: enough that a batch's work dwarfs its hand-over.
const BATCH: usize = 1024;

/// How many items ahead of the one being written `warm` is called.
const AHEAD: usize = 6;

/// Batches in flight between the serializing threads and the writer (bounds the memory held).
const IN_FLIGHT: usize = 4;

/// Writes `items` as a JSON array at `level` (its first line already indented), each item
/// serialized by `one` at `level + 1`. Batches of items are serialized in parallel (rayon) into
/// buffers written in order, so the bytes are those of one serial pass whatever the number of
/// threads. `state` makes what `one` may keep for a batch (a cache).
pub(super) fn array<'a, W, T, S>(
    w: &mut W,
    level: usize,
    items: &'a [T],
    state: impl Fn() -> S + Sync,
    warm: impl Fn(&'a T) + Sync,
    one: impl Fn(&mut Vec<u8>, &'a T, &mut S) -> io::Result<()> + Sync,
) -> io::Result<()>
where
    W: ?Sized + Write,
    T: Sync,
{
    use rayon::prelude::*;
    if items.is_empty() {
        return w.write_all(b"[]");
    }
    w.write_all(b"[")?;
    let batch = |(n, chunk): (usize, &'a [T])| -> io::Result<Vec<u8>> {
        let mut buf = Vec::with_capacity(chunk.len() * 1024);
        let mut st = state();
        for (i, item) in chunk.iter().enumerate() {
            if let Some(later) = chunk.get(i + AHEAD) {
                warm(later);
            }
            buf.extend_from_slice(if n == 0 && i == 0 { b"\n" } else { b",\n" });
            indent(&mut buf, level + 1)?;
            one(&mut buf, item, &mut st)?;
        }
        Ok(buf)
    };
    // on a thread of the pool (a caller already in parallel), serially: waiting there for the
    // pool could wait for itself
    if items.len() <= BATCH || rayon::current_thread_index().is_some() {
        for (k, chunk) in items.chunks(BATCH).enumerate() {
            w.write_all(&batch((k, chunk))?)?;
        }
    } else {
        // the writer (not `Send`: it may be a locked stdout) stays on this thread; the batches
        // are made on the pool, a bounded number ahead of it
        let (tx, rx) = std::sync::mpsc::sync_channel::<io::Result<Vec<u8>>>(IN_FLIGHT);
        std::thread::scope(|scope| -> io::Result<()> {
            scope.spawn(|| {
                let tx = tx;
                for (g, group) in items.chunks(BATCH * IN_FLIGHT).enumerate() {
                    let made: Vec<io::Result<Vec<u8>>> = group
                        .par_chunks(BATCH)
                        .enumerate()
                        .map(|(k, chunk)| batch((g * IN_FLIGHT + k, chunk)))
                        .collect();
                    for b in made {
                        if tx.send(b).is_err() {
                            return; // the writer stopped
                        }
                    }
                }
            });
            for b in rx {
                w.write_all(&b?)?;
            }
            Ok(())
        })?;
    }
    w.write_all(b"\n")?;
    indent(w, level)?;
    w.write_all(b"]")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[derive(Serialize)]
    struct Item {
        name: String,
        list: Vec<u32>,
        empty: Vec<u32>,
        map: BTreeMap<String, Option<f64>>,
        none: BTreeMap<String, u8>,
    }

    fn item(i: u32) -> Item {
        Item {
            name: format!("item \"{i}\"\n\t\u{1}é"),
            list: (0..i % 4).collect(),
            empty: vec![],
            map: (0..i % 3)
                .map(|k| (format!("k{k}"), (k % 2 == 0).then_some(k as f64 / 3.0)))
                .collect(),
            none: BTreeMap::new(),
        }
    }

    #[derive(Serialize)]
    struct Doc {
        schema: &'static str,
        items: Vec<Item>,
        tail: Vec<Vec<u8>>,
    }

    /// The document written in pieces, with its items in parallel batches.
    fn pieces(d: &Doc) -> Vec<u8> {
        let mut out = Vec::new();
        let mut o = Object::begin(&mut out).unwrap();
        o.field("schema", d.schema).unwrap();
        let w = o.key("items").unwrap();
        array(w, 1, &d.items, || (), |_| (), |b, it, _| value(b, 2, it)).unwrap();
        o.field("tail", &d.tail).unwrap();
        o.end().unwrap();
        out
    }

    #[test]
    fn pieces_make_the_bytes_of_serde_json_pretty() {
        for n in [0, 1, 2, BATCH, BATCH + 1, BATCH * IN_FLIGHT * 2 + 7] {
            let d = Doc {
                schema: "s",
                items: (0..n as u32).map(item).collect(),
                tail: vec![vec![], vec![1, 2]],
            };
            let want = serde_json::to_vec_pretty(&d).unwrap();
            assert_eq!(
                String::from_utf8(pieces(&d)).unwrap(),
                String::from_utf8(want).unwrap(),
                "{n} items"
            );
        }
    }

    #[test]
    fn strings_escape_as_serde_json() {
        let mut samples: Vec<String> = (0u32..0x80)
            .filter_map(char::from_u32)
            .map(|c| format!("{c}"))
            .collect();
        samples.extend(
            [
                "",
                "plain ascii text of some length, no escapes at all here",
                "tab\tin the middle of a long line\\with a backslash and \"quotes\"",
                "\u{7f}\u{80}\u{9f}é中文\u{2028}\u{1f600} and \u{0}\u{1}\u{1f}",
                "0123456\n",
                "01234567\n",
                "012345678\r",
                "\u{1b}[31mred\u{1b}[0m",
            ]
            .map(String::from),
        );
        for s in &samples {
            for cut in 0..s.len().min(9) {
                let t = format!("{}{s}", &"xxxxxxxx"[..cut]);
                let mut out = Vec::new();
                string(&mut out, &t);
                assert_eq!(
                    String::from_utf8(out).unwrap(),
                    serde_json::to_string(&t).unwrap()
                );
            }
        }
    }

    #[test]
    fn deep_values_indent_as_serde_json() {
        let mut v = serde_json::json!(1);
        for depth in 0..40 {
            v = if depth % 2 == 0 {
                serde_json::json!([v, depth])
            } else {
                serde_json::json!({ "k": v, "e": {}, "l": [] })
            };
        }
        let mut out = Vec::new();
        value(&mut out, 0, &v).unwrap();
        assert_eq!(out, serde_json::to_vec_pretty(&v).unwrap());
    }
}
