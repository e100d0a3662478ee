//! Whether the host a line's prefix names can change what the recognizers make of the line. They
//! read the message after the prefix, and the whole line only to find anchors and the words that
//! make a parser read the lines around a record (NVRM's terminal words, the CUDA phrases of
//! [`super::RecognizerSet::needs_context`]). A host none of those can touch is a name and nothing
//! else: the scan's memo may then sign the line without it (`src/scan/memo.rs`), and lines that
//! differ only in their host are read once.
//!
//! The test: the host's bytes are `[A-Za-z0-9.-]` and the bytes around it are not; so a literal
//! that overlaps it either lies inside it, or crosses one of its ends, where the literal holds a
//! byte of another kind. Compared lowercase (a superset of the case-sensitive matches), the host
//! holds none of the literals made of host bytes; and each literal with a run of host bytes after
//! another byte that starts the host (or before another byte that ends it) is compared with the
//! line where it would stand.

use aho_corasick::AhoCorasick;

/// The longest host the test takes.
const MAX_HOST: usize = 64;

/// A byte a host name may hold.
fn host_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'.' || c == b'-'
}

/// The literals' pieces a host must not hold, start or end with (see the module doc).
#[derive(Debug)]
pub struct HostGuard {
    /// The literals, lowercase.
    literals: Vec<Vec<u8>>,
    /// Literals made of host bytes only.
    inner: Option<AhoCorasick>,
    /// Runs of host bytes that follow another byte in a literal, and for each run its literals
    /// and where in them it starts.
    starts: Option<AhoCorasick>,
    start_at: Vec<Vec<(usize, usize)>>,
    /// Runs of host bytes that another byte follows in a literal, reversed, and for each run its
    /// literals and where in them it starts.
    ends: Option<AhoCorasick>,
    end_at: Vec<Vec<(usize, usize)>>,
}

/// An automaton of `pats` that is quick to build (it searches a few host names a line; a DFA of
/// the anchors' runs took milliseconds to build at every start).
fn nfa(pats: &[Vec<u8>]) -> AhoCorasick {
    AhoCorasick::builder()
        .kind(Some(aho_corasick::AhoCorasickKind::NoncontiguousNFA))
        .build(pats)
        .expect("literals build an automaton")
}

/// Runs and where they stand, each run once.
#[derive(Default)]
struct Runs {
    pats: Vec<Vec<u8>>,
    at: Vec<Vec<(usize, usize)>>,
    index: std::collections::HashMap<Vec<u8>, usize>,
}

impl Runs {
    fn add(&mut self, run: Vec<u8>, place: (usize, usize)) {
        let k = *self.index.entry(run.clone()).or_insert_with(|| {
            self.pats.push(run);
            self.at.push(Vec::new());
            self.pats.len() - 1
        });
        self.at[k].push(place);
    }

    fn build(self) -> (Option<AhoCorasick>, Vec<Vec<(usize, usize)>>) {
        let ac = (!self.pats.is_empty()).then(|| nfa(&self.pats));
        (ac, self.at)
    }
}

impl HostGuard {
    /// The guard of `literals` (anchors and context words; compared lowercase).
    pub fn new<'a>(literals: impl IntoIterator<Item = &'a str>) -> HostGuard {
        let literals: Vec<Vec<u8>> = literals
            .into_iter()
            .map(|l| l.to_ascii_lowercase().into_bytes())
            .filter(|l| !l.is_empty())
            .collect();
        let (mut inner, mut starts, mut ends) = (Vec::new(), Runs::default(), Runs::default());
        for (li, l) in literals.iter().enumerate() {
            if l.iter().all(|&c| host_byte(c)) {
                inner.push(l.clone());
                continue;
            }
            // the maximal runs of host bytes, with whether another byte stands before and after
            let mut i = 0;
            while i < l.len() {
                if !host_byte(l[i]) {
                    i += 1;
                    continue;
                }
                let n = l[i..].iter().take_while(|&&c| host_byte(c)).count();
                if i > 0 {
                    starts.add(l[i..i + n].to_vec(), (li, i));
                }
                if i + n < l.len() {
                    ends.add(l[i..i + n].iter().rev().copied().collect(), (li, i));
                }
                i += n;
            }
        }
        let inner = (!inner.is_empty()).then(|| nfa(&inner));
        let ((starts, start_at), (ends, end_at)) = (starts.build(), ends.build());
        HostGuard {
            literals,
            inner,
            starts,
            start_at,
            ends,
            end_at,
        }
    }

    /// Whether the host at `line[s..e]` can change nothing of what the recognizers make of the
    /// line (see the module doc).
    pub fn neutral(&self, line: &[u8], (s, e): (usize, usize)) -> bool {
        Self::bounded(line, (s, e))
            && self
                .reach(&line[s..e])
                .is_some_and(|r| r.neutral(line, s, self))
    }

    /// Whether `line[s..e]` is a span of the line with bytes a host does not hold around it.
    pub fn bounded(line: &[u8], (s, e): (usize, usize)) -> bool {
        s < e
            && e <= line.len()
            && (s == 0 || !host_byte(line[s - 1]))
            && line.get(e).is_none_or(|&c| !host_byte(c))
    }

    /// What can touch the host `host` whatever the line around it: `None` when a literal lies
    /// inside it (or it is no host), else the literals that would cross its ends and where they
    /// would start, from its start ([`Reach::neutral`] compares them with a line).
    pub fn reach(&self, host: &[u8]) -> Option<Reach> {
        if host.is_empty() || host.len() > MAX_HOST || !host.iter().all(|&c| host_byte(c)) {
            return None;
        }
        let mut lower = [0u8; MAX_HOST];
        let lower = &mut lower[..host.len()];
        lower.copy_from_slice(host);
        lower.make_ascii_lowercase();
        if self.inner.as_ref().is_some_and(|a| a.is_match(&lower[..])) {
            return None;
        }
        let mut at = Vec::new();
        if let Some(a) = &self.starts {
            for m in a
                .find_overlapping_iter(&lower[..])
                .filter(|m| m.start() == 0)
            {
                at.extend(
                    self.start_at[m.pattern()]
                        .iter()
                        .map(|&(li, o)| (li, -(o as isize))),
                );
            }
        }
        if let Some(a) = &self.ends {
            lower.reverse();
            for m in a
                .find_overlapping_iter(&lower[..])
                .filter(|m| m.start() == 0)
            {
                let end = (host.len() - m.len()) as isize;
                at.extend(
                    self.end_at[m.pattern()]
                        .iter()
                        .map(|&(li, o)| (li, end - o as isize)),
                );
            }
        }
        Some(Reach { at })
    }
}

/// The literals that would cross a host's ends, each with where it would start (from the host's
/// start): see [`HostGuard::reach`].
#[derive(Clone, Debug)]
pub struct Reach {
    at: Vec<(usize, isize)>,
}

impl Reach {
    /// Whether none of the literals stands where it would cross the ends of the host that starts
    /// at `line[s]` (bounded by bytes a host does not hold).
    pub fn neutral(&self, line: &[u8], s: usize, guard: &HostGuard) -> bool {
        !self.at.iter().any(|&(li, off)| {
            let l = &guard.literals[li];
            let p = s as isize + off;
            p >= 0
                && line
                    .get(p as usize..p as usize + l.len())
                    .is_some_and(|t| t.eq_ignore_ascii_case(l))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_host_that_a_literal_could_touch_is_not_neutral() {
        let g = HostGuard::new([
            "NVRM: Xid",
            "Xid",
            "kernel:",
            "mlx5",
            "call to cu",
            "oom-kill",
        ]);
        let at = |line: &str, host: &str| {
            let s = line.find(host).unwrap();
            g.neutral(line.as_bytes(), (s, s + host.len()))
        };
        assert!(at("gpu-n0001:1:2 [3] NCCL WARN x", "gpu-n0001"));
        assert!(at("Jan 12 00:00:00 node7 kernel: x", "node7"));
        // inside the host, any case
        assert!(!at("xid-node:1:2 [3] x", "xid-node"));
        assert!(!at("a-MLX5-b:1:2 [3] x", "a-MLX5-b"));
        assert!(!at("oom-kill-7:1:2 [0] x", "oom-kill-7"));
        // across its ends: `NVRM:` ends a host `…nvrm`, `kernel:` likewise, `cu` starts one after
        // `call to `; where the line around the host does not complete the literal, it is neutral
        assert!(!at("gpu-nvrm: Xid x", "gpu-nvrm"));
        assert!(at("gpu-nvrm:1:2 x", "gpu-nvrm"));
        assert!(!at("Jan 12 00:00:00 kernel: x", "kernel"));
        assert!(at("Jan 12 00:00:00 kernel kernel x", "kernel"));
        assert!(!at("call to cuda9:1:2 x", "cuda9"));
        assert!(at("cuda9:1:2 x call to", "cuda9"));
        // not bounded, or bytes a host does not hold
        assert!(at("a_gpu1:1:2 x", "gpu1"));
        assert!(!at("gpu_1:1:2 x", "gpu_1"));
        assert!(!g.neutral(b"x", (0, 0)));
        assert!(!g.neutral(b"x", (0, 2)));
        assert!(g.reach(&[b'a'; 65]).is_none());
    }
}
