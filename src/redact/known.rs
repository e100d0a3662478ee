//! Finding the values the analysis knows (host names, serial numbers) in a text, with no size
//! cliff however many there are: the literal values go into one Aho-Corasick automaton built
//! once ([`Literals`]), and the shapes of the host names (`gpu-node-07` → `gpu-node-#`) into a
//! hash set that each dash-separated run of the text is looked up in ([`Shapes`]). Both cost a
//! bounded amount per byte of text and a few bytes per known value (200 000 host names: one
//! automaton of a few MiB), where one regex over the alternatives had a size limit past which
//! the rule used to be dropped.

use aho_corasick::{AhoCorasick, AhoCorasickBuilder, AhoCorasickKind, Input, MatchKind};
use std::collections::{BTreeSet, HashSet};

fn alnum(b: &[u8], i: Option<usize>) -> bool {
    i.and_then(|i| b.get(i))
        .is_some_and(u8::is_ascii_alphanumeric)
}

/// Whether `s..e` of `b` touches a letter or digit on a side where the value has one.
pub(super) fn glued(b: &[u8], s: usize, e: usize) -> bool {
    (alnum(b, Some(s)) && alnum(b, s.checked_sub(1)))
        || (alnum(b, e.checked_sub(1)) && alnum(b, Some(e)))
}

/// The end of the domain labels that follow `e` (`.cluster.local`), if `domain`.
fn domain_end(b: &[u8], mut e: usize) -> usize {
    let label = |c: &u8| c.is_ascii_alphanumeric() || *c == b'-';
    while b.get(e) == Some(&b'.') && b.get(e + 1).is_some_and(label) {
        e += 1;
        while b.get(e).is_some_and(label) {
            e += 1;
        }
    }
    e
}

/// Literal values, matched case-insensitively (ASCII), not glued to a letter or digit.
pub(super) struct Literals {
    ac: AhoCorasick,
    /// Domain labels after a value belong to it (`gpu-node-07.cluster.local`).
    domain: bool,
}

impl Literals {
    /// The automaton of `values`; `None` when there are none; an error when it cannot be built
    /// (the caller stops the run: a rule that cannot be built must not be dropped).
    pub(super) fn new(values: &[&str], domain: bool) -> Result<Option<Literals>, String> {
        if values.is_empty() {
            return Ok(None);
        }
        let ac = AhoCorasickBuilder::new()
            .ascii_case_insensitive(true)
            .match_kind(MatchKind::LeftmostLongest)
            .kind(Some(AhoCorasickKind::ContiguousNFA))
            .build(values)
            .map_err(|e| format!("the automaton of {} known values: {e}", values.len()))?;
        Ok(Some(Literals { ac, domain }))
    }

    /// Every value in `t`, as `(start, end)`, left to right, not overlapping.
    pub(super) fn find(&self, t: &str, out: &mut Vec<(usize, usize)>) {
        let b = t.as_bytes();
        let mut pos = 0;
        while pos < b.len() {
            let Some(m) = self.ac.find(Input::new(b).range(pos..)) else {
                break;
            };
            let e = if self.domain {
                domain_end(b, m.end())
            } else {
                m.end()
            };
            if glued(b, m.start(), e) {
                // a shorter or later value may still start after this one's first byte
                pos = next_char(t, m.start());
                continue;
            }
            out.push((m.start(), e));
            pos = e.max(pos + 1);
        }
    }
}

fn next_char(t: &str, i: usize) -> usize {
    t[i..].chars().next().map_or(t.len(), |c| i + c.len_utf8())
}

/// The shape of a short host name: lower case, each run of digits one `#`; `None` when the name
/// has fewer than three letters or no digit (a shape would then match too much).
fn shape_of(h: &[u8]) -> Option<Vec<u8>> {
    let letters = h.iter().filter(|c| c.is_ascii_alphabetic()).count();
    if letters < 3 || !h.iter().any(u8::is_ascii_digit) {
        return None;
    }
    let mut out = Vec::with_capacity(h.len());
    for &c in h {
        if c.is_ascii_digit() {
            if out.last() != Some(&b'#') {
                out.push(b'#');
            }
        } else {
            out.push(c.to_ascii_lowercase());
        }
    }
    Some(out)
}

/// The shapes of the known host names: a host of the same fleet (`gpu-node-12` beside
/// `gpu-node-07`) is found though no input names it as a host.
pub(super) struct Shapes {
    set: HashSet<Vec<u8>>,
    /// The numbers of dash-separated segments the shapes have, most first.
    segments: Vec<usize>,
    /// The longest shape.
    longest: usize,
}

impl Shapes {
    /// The shapes of these hosts' short names; `None` when none has a shape.
    pub(super) fn new<'a>(hosts: impl Iterator<Item = &'a str>) -> Option<Shapes> {
        let set: HashSet<Vec<u8>> = hosts
            .filter_map(|h| shape_of(h.split('.').next().unwrap_or(h).as_bytes()))
            .filter(|s| {
                s.iter()
                    .all(|c| c.is_ascii_alphanumeric() || *c == b'-' || *c == b'#')
            })
            .collect();
        if set.is_empty() {
            return None;
        }
        let segments: BTreeSet<usize> = set
            .iter()
            .map(|s| s.iter().filter(|c| **c == b'-').count() + 1)
            .collect();
        let longest = set.iter().map(Vec::len).max().unwrap_or(0);
        Some(Shapes {
            set,
            segments: segments.into_iter().rev().collect(),
            longest,
        })
    }

    /// Every name of a known shape in `t`, with its domain labels, left to right.
    pub(super) fn find(&self, t: &str, out: &mut Vec<(usize, usize)>) {
        let b = t.as_bytes();
        let word = |c: u8| c.is_ascii_alphanumeric() || c == b'-';
        let mut i = 0;
        let mut seg_starts = Vec::new();
        while i < b.len() {
            if !word(b[i]) {
                i += 1;
                continue;
            }
            let run = i;
            while i < b.len() && word(b[i]) {
                i += 1;
            }
            seg_starts.clear();
            seg_starts.push(run);
            seg_starts.extend((run..i).filter(|&k| b[k] == b'-').map(|k| k + 1));
            self.run(b, &seg_starts, i, out);
        }
    }

    /// The names in one run `starts[0]..end` of letters, digits and dashes: at each segment,
    /// the longest known shape that starts there.
    fn run(&self, b: &[u8], starts: &[usize], end: usize, out: &mut Vec<(usize, usize)>) {
        let mut key = Vec::with_capacity(self.longest + 1);
        let mut k = 0;
        'seg: while k < starts.len() {
            for &n in &self.segments {
                let Some(&after) = starts.get(k + n) else {
                    if k + n != starts.len() {
                        continue;
                    }
                    if self.matches(&b[starts[k]..end], &mut key) {
                        out.push((starts[k], domain_end(b, end)));
                        break 'seg;
                    }
                    continue;
                };
                if self.matches(&b[starts[k]..after - 1], &mut key) {
                    out.push((starts[k], after - 1));
                    k += n;
                    continue 'seg;
                }
            }
            k += 1;
        }
    }

    fn matches(&self, v: &[u8], key: &mut Vec<u8>) -> bool {
        key.clear();
        for &c in v {
            if c.is_ascii_digit() {
                if key.last() != Some(&b'#') {
                    key.push(b'#');
                }
            } else {
                key.push(c.to_ascii_lowercase());
            }
            if key.len() > self.longest {
                return false;
            }
        }
        self.set.contains(key.as_slice())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lit(values: &[&str], t: &str) -> Vec<String> {
        let l = Literals::new(values, true).unwrap().unwrap();
        let mut out = Vec::new();
        l.find(t, &mut out);
        out.iter().map(|(s, e)| t[*s..*e].to_string()).collect()
    }

    #[test]
    fn literals_take_the_longest_unglued_value_with_its_domain() {
        assert_eq!(
            lit(&["node-1", "node-12"], "a node-12 b node-1.cluster.local"),
            ["node-12", "node-1.cluster.local"]
        );
        assert_eq!(
            lit(&["athena"], "xathena athena_x ATHENA:1"),
            ["athena", "ATHENA"]
        );
        // a rejected value does not hide one that starts inside it
        assert_eq!(lit(&["a-b", "b-1"], "xa-b-1"), ["b-1"]);
    }

    #[test]
    fn shapes_find_peers_of_the_fleet() {
        let s = Shapes::new(["gpu-node-07.cluster", "dgx17"].into_iter()).unwrap();
        let mut out = Vec::new();
        let t = "dmesg-gpu-node-12.log dgx3.a.b gpu-node-x xdgx4 dgx5-extra";
        s.find(t, &mut out);
        let got: Vec<&str> = out.iter().map(|(a, b)| &t[*a..*b]).collect();
        assert_eq!(got, ["gpu-node-12.log", "dgx3.a.b", "dgx5"]);
        // linear on a long run of dashes
        let long = "a1-".repeat(20_000);
        let t0 = std::time::Instant::now();
        s.find(&long, &mut out);
        assert!(t0.elapsed().as_millis() < 500);
    }
}
