//! [`Attrs`]: an event's details, a small map from names to values kept compact (one text and
//! its boundaries, not a tree of strings): a timeline of many events holds many of them.

use serde::ser::{Serialize, SerializeMap, Serializer};
use std::collections::BTreeMap;

/// An event's details: names to values, each name once, in name order (as a `BTreeMap` would
/// keep them, and serialized the same way: a JSON object with sorted keys).
#[derive(Clone, Default, PartialEq, Eq, Hash)]
pub struct Attrs {
    /// Names and values one after the other, in name order.
    text: String,
    /// Where each name and each value ends in `text` (two per entry).
    ends: Vec<u32>,
}

impl Attrs {
    /// No details.
    pub fn new() -> Attrs {
        Attrs::default()
    }

    /// How many entries.
    pub fn len(&self) -> usize {
        self.ends.len() / 2
    }

    /// True when there is no entry.
    pub fn is_empty(&self) -> bool {
        self.ends.is_empty()
    }

    /// The name and value of entry `i` (in name order).
    fn entry_at(&self, i: usize) -> (&str, &str) {
        let start = self.start(i);
        let mid = self.ends[2 * i] as usize;
        let end = self.ends[2 * i + 1] as usize;
        (&self.text[start..mid], &self.text[mid..end])
    }

    /// Where `key` is, or where it would go.
    fn find(&self, key: &str) -> Result<usize, usize> {
        let (mut lo, mut hi) = (0, self.len());
        while lo < hi {
            let m = (lo + hi) / 2;
            match self.entry_at(m).0.cmp(key) {
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
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> + '_ {
        (0..self.len()).map(|i| self.entry_at(i))
    }

    /// The names in order.
    pub fn keys(&self) -> impl Iterator<Item = &str> + '_ {
        self.iter().map(|(k, _)| k)
    }

    /// The values in name order.
    pub fn values(&self) -> impl Iterator<Item = &str> + '_ {
        self.iter().map(|(_, v)| v)
    }

    /// Sets `key` to `value`; returns the value it replaces (as `BTreeMap::insert`).
    pub fn insert(&mut self, key: &str, value: String) -> Option<String> {
        self.insert_str(key, &value)
    }

    /// Sets `key` to `value`; returns the value it replaces.
    pub fn insert_str(&mut self, key: &str, value: &str) -> Option<String> {
        if self.text.len() + key.len() + value.len() > u32::MAX as usize {
            return None;
        }
        match self.find(key) {
            Ok(i) => {
                let (mid, end) = (self.ends[2 * i] as usize, self.ends[2 * i + 1] as usize);
                let old = self.text[mid..end].to_string();
                self.text.replace_range(mid..end, value);
                self.shift(2 * i + 1, value.len() as i64 - old.len() as i64);
                Some(old)
            }
            Err(i) => {
                let at = self.start(i);
                self.text.insert_str(at, value);
                self.text.insert_str(at, key);
                self.shift(2 * i, (key.len() + value.len()) as i64);
                let (k_end, v_end) = (at + key.len(), at + key.len() + value.len());
                self.ends.splice(2 * i..2 * i, [k_end as u32, v_end as u32]);
                None
            }
        }
    }

    /// Where entry `i` starts in `text`.
    fn start(&self, i: usize) -> usize {
        if i == 0 {
            0
        } else {
            self.ends[2 * i - 1] as usize
        }
    }

    /// Moves the boundaries from `from` on by `delta` bytes.
    fn shift(&mut self, from: usize, delta: i64) {
        for e in &mut self.ends[from..] {
            *e = (*e as i64 + delta) as u32;
        }
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
        let (start, mid, end) = (
            self.start(i),
            self.ends[2 * i] as usize,
            self.ends[2 * i + 1] as usize,
        );
        let old = self.text[mid..end].to_string();
        self.text.replace_range(start..end, "");
        self.ends.drain(2 * i..2 * i + 2);
        self.shift(2 * i, -((end - start) as i64));
        Some(old)
    }

    /// Replaces every value with what `f` makes of its name and value.
    pub fn map_values(&mut self, mut f: impl FnMut(&str, &str) -> String) {
        let mut out = Attrs::with_capacity(self.text.len());
        for (k, v) in self.iter() {
            out.push(k, &f(k, v));
        }
        *self = out;
    }

    fn with_capacity(bytes: usize) -> Attrs {
        Attrs {
            text: String::with_capacity(bytes),
            ends: Vec::new(),
        }
    }

    /// Appends an entry whose name sorts after every name present. A text past 4 GiB is not
    /// kept (no line of an input is that long).
    fn push(&mut self, key: &str, value: &str) {
        let end = self.text.len() + key.len() + value.len();
        let Ok(end) = u32::try_from(end) else { return };
        self.text.push_str(key);
        self.ends.push(end - value.len() as u32);
        self.text.push_str(value);
        self.ends.push(end);
    }
}

impl From<BTreeMap<String, String>> for Attrs {
    fn from(m: BTreeMap<String, String>) -> Attrs {
        let mut a = Attrs::with_capacity(m.iter().map(|(k, v)| k.len() + v.len()).sum());
        a.ends.reserve_exact(2 * m.len());
        for (k, v) in &m {
            a.push(k, v);
        }
        a
    }
}

impl<K: AsRef<str>, V: AsRef<str>> FromIterator<(K, V)> for Attrs {
    fn from_iter<I: IntoIterator<Item = (K, V)>>(it: I) -> Attrs {
        let mut a = Attrs::new();
        a.extend(it);
        a
    }
}

impl<K: AsRef<str>, V: AsRef<str>> Extend<(K, V)> for Attrs {
    fn extend<I: IntoIterator<Item = (K, V)>>(&mut self, it: I) {
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
