//! [`Attrs`]: an event's details, a small map from names to values kept compact: one shared
//! block holding the boundaries and the text (not a tree of strings, not two blocks), none when
//! empty, behind a pointer of one word. A timeline of many events holds many of them, and the
//! events derived from one line share their line's block (a clone is a count, a change makes a
//! block of its own). A long value that is a part of the event's own record (an Xid's text is
//! the end of its line) is held as a place in that text, not copied ([`Attrs::share`]).

use serde::ser::{Serialize, SerializeMap, Serializer};
use std::collections::BTreeMap;
use std::sync::Arc;

/// A block of details: the text values may point into (its header), and the bytes laid out as
/// [`Attrs::block`] says. One allocation, one word to point at it.
type Block = triomphe::ThinArc<Option<Arc<str>>, u8>;

/// An event's details: names to values, each name once, in name order (as a `BTreeMap` would
/// keep them, and serialized the same way: a JSON object with sorted keys).
#[derive(Clone, Default)]
pub struct Attrs {
    /// `None` when there is no entry; else, one after the other: a flag byte (its low bits: the
    /// width of the numbers that follow, 2 when the text and the count fit in 16 bits, nearly
    /// always, else 4; [`OUTSIDE`]: one value lies in the shared text), the number of entries
    /// `n` (little-endian), where each name and each value ends in the text (`2n` of them, the
    /// same), with [`OUTSIDE`] the entry whose value is in the shared text (a number) and its
    /// place there (start and length, 4 bytes each), then the names and values, in name order
    /// (the outside value takes no byte there). The text is made only of whole `&str`s (see
    /// [`Attrs::build`]) and every boundary is one of theirs, so each slice between two
    /// boundaries is UTF-8; the outside value's place is that of a `&str` found in the shared
    /// text, so it is UTF-8 too.
    block: Option<Block>,
}

/// Bytes of the flag in front of the block's numbers.
const WIDTH: usize = 1;
/// Flag bit: one value lies in the shared text.
const OUTSIDE: u8 = 0x80;
/// Values at least this long are looked for in the record's text by [`Attrs::share`].
const SHARED_FROM: usize = 32;

impl Attrs {
    /// No details.
    pub fn new() -> Attrs {
        Attrs::default()
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.block.as_ref().map_or(0, |b| word(&b.slice, 0))
    }

    /// The block's flag byte.
    fn flags(&self) -> u8 {
        self.bytes().first().copied().unwrap_or(4)
    }

    /// The width of the block's numbers.
    fn width(&self) -> usize {
        usize::from(self.flags() & !OUTSIDE)
    }

    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.block.is_none()
    }

    /// The block (empty when there is no entry).
    fn bytes(&self) -> &[u8] {
        self.block.as_ref().map_or(&[], |b| &b.slice)
    }

    /// The text a value may lie in.
    fn shared(&self) -> Option<&Arc<str>> {
        self.block.as_ref().and_then(|b| b.header.header.as_ref())
    }

    /// Where the numbers of the block end: the outside value's entry and place follow (with
    /// [`OUTSIDE`]), then the text.
    fn numbers_end(&self) -> usize {
        WIDTH + self.width() * (1 + 2 * self.len())
    }

    /// The entry whose value lies in the shared text, and its place there.
    fn outside(&self) -> Option<(usize, usize, usize)> {
        if self.flags() & OUTSIDE == 0 {
            return None;
        }
        let b = self.bytes();
        let four = |k: usize| u32::from_le_bytes([b[k], b[k + 1], b[k + 2], b[k + 3]]) as usize;
        let place = self.numbers_end() + self.width();
        Some((word(b, 1 + 2 * self.len()), four(place), four(place + 4)))
    }

    /// Boundary `j` (`2i`: where name `i` ends, `2i + 1`: where its value ends).
    fn end(&self, j: usize) -> usize {
        word(self.bytes(), 1 + j)
    }

    /// The text between boundaries `a..b`.
    fn text(&self, a: usize, b: usize) -> &str {
        let mut base = self.numbers_end();
        if self.flags() & OUTSIDE != 0 {
            base += self.width() + 8;
        }
        let bytes = &self.bytes()[base + a..base + b];
        debug_assert!(std::str::from_utf8(bytes).is_ok());
        // SAFETY: the text is whole `&str`s one after the other and `a`, `b` are boundaries of
        // them (see `Attrs::block`), so the bytes are UTF-8
        unsafe { std::str::from_utf8_unchecked(bytes) }
    }

    /// Where entry `i` starts in the text.
    fn start(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.end(2 * i - 1)
        }
    }

    /// The name and value of entry `i` (in name order).
    fn entry_at(&self, i: usize) -> (&str, &str) {
        let (start, mid, end) = (self.start(i), self.end(2 * i), self.end(2 * i + 1));
        let name = self.text(start, mid);
        match (self.outside(), self.shared()) {
            (Some((k, at, len)), Some(t)) if k == i => (name, &t[at..at + len]),
            _ => (name, self.text(mid, end)),
        }
    }

    /// Where `key` is, or where it would go.
    fn find(&self, key: &str) -> Result<usize, usize> {
        let Some(block) = &self.block else {
            return Err(0);
        };
        // the block's layout read once, not at each step of the search
        let b: &[u8] = &block.slice;
        let width = usize::from(b[0] & !OUTSIDE);
        let n = word(b, 0);
        let mut base = WIDTH + width * (1 + 2 * n);
        if b[0] & OUTSIDE != 0 {
            base += width + 8;
        }
        let end = |j: usize| word(b, 1 + j);
        let (mut lo, mut hi) = (0, n);
        while lo < hi {
            let m = (lo + hi) / 2;
            let start = if m == 0 { 0 } else { end(2 * m - 1) };
            let name = &b[base + start..base + end(2 * m)];
            match name.cmp(key.as_bytes()) {
                std::cmp::Ordering::Equal => return Ok(m),
                std::cmp::Ordering::Less => lo = m + 1,
                std::cmp::Ordering::Greater => hi = m,
            }
        }
        Err(lo)
    }

    /// The value of `key`.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.find(key).ok().map(|i| self.entry_at(i).1)
    }

    /// True when `key` has a value.
    pub fn contains_key(&self, key: &str) -> bool {
        self.find(key).is_ok()
    }

    /// The entries in name order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + Clone + '_ {
        (0..self.len()).map(|i| self.entry_at(i))
    }

    /// The names in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + Clone + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// The values in name order.
    pub fn values(&self) -> impl Iterator<Item = &str> + Clone + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// Sets `key` to `value`; returns the value it replaces (as `BTreeMap::insert`).
    pub fn insert(&mut self, key: &str, value: String) -> Option<String> {
        self.insert_str(key, &value)
    }

    /// Sets `key` to `value`; returns the value it replaces. A text past 4 GiB is not kept (no
    /// line of an input is that long).
    pub fn insert_str(&mut self, key: &str, value: &str) -> Option<String> {
        let shared = self.shared().cloned();
        let (next, old) = match self.find(key) {
            Ok(i) => {
                let old = self.entry_at(i).1;
                if old == value {
                    return Some(old.to_string());
                }
                let entries = self.iter().take(i);
                let rest = self.iter().skip(i + 1);
                let next = Attrs::build(entries.chain([(key, value)]).chain(rest), shared);
                (next, Some(old.to_string()))
            }
            Err(i) => {
                let entries = self.iter().take(i);
                let rest = self.iter().skip(i);
                (
                    Attrs::build(entries.chain([(key, value)]).chain(rest), shared),
                    None,
                )
            }
        };
        if let Some(next) = next {
            *self = next;
        }
        old
    }

    /// Holds the longest value found whole in `text` (the event's record, kept anyway) as a
    /// place in it rather than a copy. Values shorter than [`SHARED_FROM`] bytes are kept as
    /// they are. Changes nothing that the other methods tell.
    pub(crate) fn share(&mut self, text: &Arc<str>) {
        if self.shared().is_some_and(|t| Arc::ptr_eq(t, text)) {
            return;
        }
        // the value `build` would hold in the text (the first of the longest)
        let longest = self
            .values()
            .filter(|v| v.len() >= SHARED_FROM)
            .reduce(|l, v| if v.len() > l.len() { v } else { l });
        let Some(longest) = longest else { return };
        if self.shared().is_none()
            && memchr::memmem::find(text.as_bytes(), longest.as_bytes()).is_none()
        {
            // it would be a copy again: the block as it is
            return;
        }
        if let Some(next) = Attrs::build(self.iter(), Some(text.clone())) {
            *self = next;
        }
    }

    /// True when both are the same block (a clone of the other), not only equal.
    pub(crate) fn same_block(&self, other: &Attrs) -> bool {
        match (&self.block, &other.block) {
            (Some(a), Some(b)) => a.ptr() == b.ptr(),
            (None, None) => true,
            _ => false,
        }
    }

    /// The details of `entries` (in name order, each name once); `None` past 4 GiB of text.
    /// With `shared`, the longest value of at least [`SHARED_FROM`] bytes found whole in it is
    /// held as a place there.
    fn build<'a>(
        entries: impl Iterator<Item = (&'a str, &'a str)> + Clone,
        shared: Option<Arc<str>>,
    ) -> Option<Attrs> {
        let (mut n, mut longest) = (0usize, None::<(usize, &str)>);
        for (i, (_, v)) in entries.clone().enumerate() {
            n += 1;
            if v.len() >= SHARED_FROM && longest.is_none_or(|(_, l)| v.len() > l.len()) {
                longest = Some((i, v));
            }
        }
        if n == 0 {
            return Some(Attrs::default());
        }
        // the outside value: its entry and its place in the shared text
        let outside = match (&shared, longest) {
            (Some(t), Some((i, v))) => {
                memchr::memmem::find(t.as_bytes(), v.as_bytes()).and_then(|at| {
                    let place = (u32::try_from(at).ok()?, u32::try_from(v.len()).ok()?);
                    Some((i, place))
                })
            }
            _ => None,
        };
        let mut text = 0usize;
        for (i, (k, v)) in entries.clone().enumerate() {
            text += k.len();
            if outside.is_none_or(|(o, _)| o != i) {
                text += v.len();
            }
        }
        u32::try_from(text).ok()?;
        let narrow = text <= usize::from(u16::MAX) && n <= usize::from(u16::MAX);
        let width = if narrow { 2 } else { 4 };
        let mut b = Vec::with_capacity(WIDTH + width * (2 + 2 * n) + 8 + text);
        b.push(width as u8 | if outside.is_some() { OUTSIDE } else { 0 });
        let put = |b: &mut Vec<u8>, x: usize| {
            if narrow {
                b.extend_from_slice(&(x as u16).to_le_bytes());
            } else {
                b.extend_from_slice(&(x as u32).to_le_bytes());
            }
        };
        put(&mut b, n);
        let mut at = 0usize;
        for (i, (k, v)) in entries.clone().enumerate() {
            at += k.len();
            put(&mut b, at);
            if outside.is_none_or(|(o, _)| o != i) {
                at += v.len();
            }
            put(&mut b, at);
        }
        if let Some((i, (start, len))) = outside {
            put(&mut b, i);
            b.extend_from_slice(&start.to_le_bytes());
            b.extend_from_slice(&len.to_le_bytes());
        }
        for (i, (k, v)) in entries.enumerate() {
            b.extend_from_slice(k.as_bytes());
            if outside.is_none_or(|(o, _)| o != i) {
                b.extend_from_slice(v.as_bytes());
            }
        }
        let header = if outside.is_some() { shared } else { None };
        Some(Attrs {
            block: Some(Block::from_header_and_slice(header, &b)),
        })
    }

    /// Sets `key` to `value` unless it has a value already.
    pub fn insert_if_absent(&mut self, key: &str, value: &str) {
        if !self.contains_key(key) {
            self.insert_str(key, value);
        }
    }

    /// Removes `key`; returns its value.
    pub fn remove(&mut self, key: &str) -> Option<String> {
        let i = self.find(key).ok()?;
        let old = self.entry_at(i).1.to_string();
        let shared = self.shared().cloned();
        let next = Attrs::build(self.iter().take(i).chain(self.iter().skip(i + 1)), shared);
        *self = next.unwrap_or_default();
        Some(old)
    }

    /// Replaces every value with what `f` makes of its name and value.
    pub fn map_values(&mut self, mut f: impl FnMut(&str, &str) -> String) {
        let values: Vec<String> = self.iter().map(|(k, v)| f(k, v)).collect();
        let shared = self.shared().cloned();
        let next = Attrs::build(self.keys().zip(values.iter().map(String::as_str)), shared);
        *self = next.unwrap_or_default();
    }
}

/// Number `k` of a block (0: the count of entries, then the boundaries), of the block's width.
fn word(b: &[u8], k: usize) -> usize {
    let width = usize::from(b[0] & !OUTSIDE);
    let at = WIDTH + width * k;
    if width == 2 {
        usize::from(u16::from_le_bytes([b[at], b[at + 1]]))
    } else {
        u32::from_le_bytes([b[at], b[at + 1], b[at + 2], b[at + 3]]) as usize
    }
}

/// Equal when the entries are, however each is held.
impl PartialEq for Attrs {
    fn eq(&self, other: &Attrs) -> bool {
        self.len() == other.len() && self.iter().eq(other.iter())
    }
}

impl Eq for Attrs {}

impl std::hash::Hash for Attrs {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        h.write_usize(self.len());
        for (k, v) in self.iter() {
            k.hash(h);
            v.hash(h);
        }
    }
}

impl From<BTreeMap<String, String>> for Attrs {
    fn from(m: BTreeMap<String, String>) -> Attrs {
        Attrs::build(m.iter().map(|(k, v)| (k.as_str(), v.as_str())), None).unwrap_or_default()
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for Attrs {
    /// The details of the entries, made at once (a later value of a name wins, as when they are
    /// inserted one by one).
    fn from_iter<I: IntoIterator<Item = (K, V)>>(it: I) -> Attrs {
        let mut entries: Vec<(K, V)> = it.into_iter().collect();
        // latest first, and the sort is stable: the first of each name is its last value
        entries.reverse();
        entries.sort_by(|a, b| a.0.as_ref().cmp(b.0.as_ref()));
        entries.dedup_by(|later, kept| later.0.as_ref() == kept.0.as_ref());
        Attrs::build(entries.iter().map(|(k, v)| (k.as_ref(), v.as_ref())), None)
            .unwrap_or_default()
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Extend<(K, V)> for Attrs {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, it: I) {
        if self.is_empty() {
            *self = it.into_iter().collect();
            return;
        }
        for (k, v) in it {
            self.insert_str(k.as_ref(), v.as_ref());
        }
    }
}

impl<'a> IntoIterator for &'a Attrs {
    type Item = (&'a str, &'a str);
    type IntoIter = Box<dyn Iterator<Item = (&'a str, &'a str)> + 'a>;
    fn into_iter(self) -> Self::IntoIter {
        Box::new(self.iter())
    }
}

impl std::ops::Index<&str> for Attrs {
    type Output = str;
    /// The value of `key`; panics when there is none (tests and callers that checked).
    fn index(&self, key: &str) -> &str {
        self.get(key).expect("no such detail")
    }
}

impl std::fmt::Debug for Attrs {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_map().entries(self.iter()).finish()
    }
}

impl Serialize for Attrs {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut m = s.serialize_map(Some(self.len()))?;
        for (k, v) in self.iter() {
            m.serialize_entry(k, v)?;
        }
        m.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keeps_names_in_order_once() {
        let mut a = Attrs::new();
        assert_eq!(a.insert("pid", "1".into()), None);
        assert_eq!(a.insert_str("gpc", "0"), None);
        assert_eq!(a.insert_str("text", "x y"), None);
        assert_eq!(a.insert_str("process", "python3"), None);
        assert_eq!(a.insert_str("pid", "2"), Some("1".to_string()));
        let got: Vec<_> = a.iter().collect();
        assert_eq!(
            got,
            [
                ("gpc", "0"),
                ("pid", "2"),
                ("process", "python3"),
                ("text", "x y")
            ]
        );
        assert_eq!(a.get("pid"), Some("2"));
        assert_eq!(a.get("absent"), None);
        assert_eq!(a.remove("gpc"), Some("0".to_string()));
        assert_eq!(a.remove("gpc"), None);
        assert_eq!(
            a.insert_str("process", "python"),
            Some("python3".to_string())
        );
        assert_eq!(
            a.insert_str("process", "python3"),
            Some("python".to_string())
        );
        assert_eq!(a.len(), 3);
        a.insert_if_absent("pid", "9");
        a.insert_if_absent("a", "");
        assert_eq!(
            format!("{a:?}"),
            r#"{"a": "", "pid": "2", "process": "python3", "text": "x y"}"#
        );
    }

    #[test]
    fn a_text_past_16_bits_is_kept_whole() {
        let long = "x".repeat(70_000);
        let mut a = Attrs::from_iter([("text", long.as_str()), ("b", "1")]);
        assert_eq!(a.get("text"), Some(long.as_str()));
        assert_eq!(a.get("b"), Some("1"));
        assert_eq!(a.remove("text").as_deref(), Some(long.as_str()));
        assert_eq!(a.iter().collect::<Vec<_>>(), [("b", "1")]);
        assert_eq!(a.width(), 2);
        a.insert_str("c", &long);
        assert_eq!(
            (a.width(), a.len(), a.get("c")),
            (4, 2, Some(long.as_str()))
        );
    }

    #[test]
    fn a_value_held_in_the_record_reads_as_a_copy_would() {
        let line: Arc<str> = Arc::from(
            "NVRM: Xid (PCI:0000:01:00): 13, pid=1000, name=python3, Graphics SM Warp Exception on (GPC 0, TPC 1, SM 0): Out Of Range Address",
        );
        let text = &line[line.find("Graphics").unwrap()..];
        let copied = Attrs::from_iter([("pid", "1000"), ("text", text), ("tpc", "1")]);
        let mut held = copied.clone();
        held.share(&line);
        assert!(!held.same_block(&copied), "a block of its own");
        assert_eq!(held.shared().map(|t| Arc::ptr_eq(t, &line)), Some(true));
        assert_eq!(held.get("text"), Some(text));
        assert_eq!(held, copied);
        let hash = |a: &Attrs| {
            use std::hash::{Hash, Hasher};
            let mut h = std::collections::hash_map::DefaultHasher::new();
            a.hash(&mut h);
            h.finish()
        };
        assert_eq!(hash(&held), hash(&copied));
        assert_eq!(
            held.iter().collect::<Vec<_>>(),
            copied.iter().collect::<Vec<_>>()
        );
        assert_eq!(
            serde_json::to_string(&held).unwrap(),
            serde_json::to_string(&copied).unwrap()
        );
        // changes keep the value in the record, and tell the same as on a copy
        let mut a = held.clone();
        let mut b = copied.clone();
        for x in [&mut a, &mut b] {
            x.insert_str("gpc", "0");
            x.remove("pid");
            x.map_values(|k, v| {
                if k == "tpc" {
                    "2".into()
                } else {
                    v.to_string()
                }
            });
        }
        assert_eq!(a, b);
        assert!(a.shared().is_some() && b.shared().is_none());
        assert_eq!(a.get("text"), Some(text));
        // short values, or values not in the text, stay copies
        let mut short = Attrs::from_iter([("pid", "1000")]);
        short.share(&line);
        assert!(short.shared().is_none());
        let mut other = Attrs::from_iter([("text", "a text that is nowhere in that line at all")]);
        other.share(&line);
        assert!(other.shared().is_none());
    }

    #[test]
    fn serializes_as_the_map_it_stands_for() {
        let m: BTreeMap<String, String> = [("b", "2"), ("a", "1"), ("c", "")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let a = Attrs::from(m.clone());
        assert_eq!(
            serde_json::to_string(&a).unwrap(),
            serde_json::to_string(&m).unwrap()
        );
        let mut b = a.clone();
        b.map_values(|k, v| format!("{k}={v}"));
        assert_eq!(b.get("c"), Some("c="));
        assert_eq!(
            Attrs::from_iter([("z", "1"), ("y", "2")])
                .keys()
                .collect::<Vec<_>>(),
            ["y", "z"]
        );
    }
}
