//! Counting before building: a per-chunk memo of "line signature -> the keys of the events the
//! recognizers gave". A storm repeats a few messages millions of times; the first line of each
//! signature in a chunk is read in full (and checked by a probe, below), the others only get
//! their keys from the memo and are counted ([`super::tally`]) or deferred
//! ([`super::deferred::Stub`]), never built unless the events cap keeps them.
//!
//! Only a *simple* line is memoized: one line (no continuation before or after, at most
//! [`MAX_RECORD_BYTES`], no terminal escapes) with a prefix that carries its own time, whose
//! recognizers read no context. Its events are then a function of the `Record` recognizers see:
//! `full` (the line: read for anchors and context words only), `body` (after the prefix) and
//! `rank`, plus the line's host. The signature holds the host, the rank, the prefix with its
//! digits dropped, and the body with the decimal value of every `pid=` field masked:
//! - prefix digits are its timestamps (wall, monotonic) and a program tag's pid: the time of the
//!   record and who logged it, never part of an event's key (host and rank, which a prefix also
//!   carries, are in the signature as parsed);
//! - `pid=N` is the process a driver line names (NVRM Xid `pid=`, kernel `pid=`), which changes on
//!   every line of a storm and is a detail, never a key.
//!
//! Both masks are checked, not assumed: when a signature comes back, its first line is read a
//! second time with every masked digit changed, and the signature is memoized only if both
//! readings give the same keys (otherwise every line of that signature is read in full). The
//! check waits for the second line of the signature, so a signature met once (a log of distinct
//! lines) costs one reading, not two.

use super::lines::{is_continuation, is_hard_wrap, next_line, trim_cr, MIN_WRAPPED_WIDTH};
use super::{FastBuild, FastMap, MAX_RECORD_BYTES};
use crate::formats::wrapper::FileWrappers;
use crate::formats::LineHead;
use std::hash::BuildHasher;

/// What the memo knows of a signature.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(super) enum Known {
    /// The recognizers gave nothing.
    Nothing,
    /// The events' keys (ids in the chunk's tally), distinct, each a plain event (see
    /// [`super::tally::Tally::count`]).
    Keys(Vec<u32>),
    /// Read every line in full (the probe disagreed, or the events need more than their line).
    Full,
}

/// Signatures with the same hash, each with what is known of it and, until its masks are
/// checked, where its first line is (start, end).
type Bucket = Vec<(Box<[u8]>, Known, Option<(usize, usize)>)>;

/// Signatures met in one chunk.
#[derive(Default)]
pub(super) struct Memo {
    map: FastMap<u64, Bucket>,
    len: usize,
    hasher: FastBuild,
    /// The signature being read (reused).
    pub sig: Vec<u8>,
    /// The start of the signatures of the lines that repeat one syslog prefix (host, rank and the
    /// masked prefix up to its tag's end), and which prefix that is (see [`crate::formats::repeat::HeadCache::repeated`]).
    head_sig: Vec<u8>,
    head_of: Option<u64>,
}

/// Signatures one chunk remembers at most (a log of distinct lines stops learning there). A
/// storm repeats a few signatures; each one kept costs some 300 bytes, in every chunk in flight.
const MAX_SIGNATURES: usize = 4 * 1024;

impl Memo {
    /// What is known of the signature in `self.sig`, and where its first line is while its
    /// masks are unchecked.
    pub(super) fn get(&self) -> Option<(&Known, Option<(usize, usize)>)> {
        let h = self.hasher.hash_one(&self.sig[..]);
        self.map
            .get(&h)?
            .iter()
            .find(|(s, _, _)| s[..] == self.sig[..])
            .map(|(_, k, at)| (k, *at))
    }

    /// Remembers `known` for the signature in `self.sig`, its masks still to be checked on its
    /// first line `at` (or checked, with `None`).
    pub(super) fn put(&mut self, known: Known, at: Option<(usize, usize)>) {
        if self.len >= MAX_SIGNATURES {
            return;
        }
        let h = self.hasher.hash_one(&self.sig[..]);
        self.map
            .entry(h)
            .or_default()
            .push((self.sig.clone().into_boxed_slice(), known, at));
        self.len += 1;
    }

    /// Writes the signature of a simple line (see [`signature`]) into `self.sig`; `repeated` is
    /// what the head cache said of the line ([`crate::formats::repeat::HeadCache::repeated`]): the start of the
    /// signature of a line that repeats a prefix is the same as the previous such line's.
    pub(super) fn sign(
        &mut self,
        line: &[u8],
        head: &LineHead<'_>,
        repeated: Option<(u64, usize)>,
    ) {
        let ms = head.msg_start.min(line.len());
        let Some((of, m)) = repeated.filter(|&(_, m)| m <= ms) else {
            signature(&mut self.sig, line, head);
            return;
        };
        if self.head_of != Some(of) {
            self.head_sig.clear();
            host_and_rank(&mut self.head_sig, head);
            mask_digits(&mut self.head_sig, &line[..m]);
            self.head_of = Some(of);
        }
        self.sig.clear();
        self.sig.extend_from_slice(&self.head_sig);
        // no digit run crosses `m` (a space stands before it)
        mask_digits(&mut self.sig, &line[m..ms]);
        self.sig.push(0xff);
        mask_pids(&mut self.sig, &line[ms..]);
    }

    /// Sets what is known of the signature in `self.sig` (met before), its masks checked.
    pub(super) fn settle(&mut self, known: Known) {
        let h = self.hasher.hash_one(&self.sig[..]);
        let sig = &self.sig;
        if let Some(e) = self
            .map
            .get_mut(&h)
            .and_then(|b| b.iter_mut().find(|(s, _, _)| s[..] == sig[..]))
        {
            e.1 = known;
            e.2 = None;
        }
    }
}

/// Whether the candidate line ending at `le` (`line`, without its CR) is a simple record (see the
/// module doc): exactly the records whose events `candidate` reads from the line alone.
pub(super) fn simple(
    buf: &[u8],
    le: usize,
    line: &[u8],
    head: &LineHead<'_>,
    fw: &FileWrappers,
) -> bool {
    if line.len() > MAX_RECORD_BYTES
        || head.prefix.is_none_or(|p| p.stamp.is_empty())
        || memchr::memchr(b'\x1b', line).is_some()
        || is_continuation(line)
    {
        return false;
    }
    let wrapped = fw.mostly_wrapped && head.wrapped && line.len() >= MIN_WRAPPED_WIDTH;
    // a continuation starts with 8 blanks: most next lines are told apart by their first bytes,
    // without finding where they end
    let ns = le + 1;
    if !wrapped
        && buf
            .get(ns..ns + 8)
            .is_none_or(|h| h.iter().any(|&c| c != b' ' && c != b'\t'))
    {
        return true;
    }
    let Some((ns, ne)) = next_line(buf, le) else {
        return true;
    };
    let next = trim_cr(&buf[ns..ne]);
    let hard_wrap = wrapped && is_hard_wrap(next, fw);
    !hard_wrap && !is_continuation(next)
}

/// The masked spans of `line` (see the module doc), as (start, end) offsets in order: each digit
/// run of the prefix and the digits of each `pid=` value in the body.
fn masked(line: &[u8], msg_start: usize, mut f: impl FnMut(usize, usize)) {
    let ms = msg_start.min(line.len());
    let mut i = 0;
    while i < ms {
        if line[i].is_ascii_digit() {
            let n = line[i..ms]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count();
            f(i, i + n);
            i += n;
        } else {
            i += 1;
        }
    }
    pid_values(&line[ms..], |s, e| f(ms + s, ms + e));
}

/// Writes the signature of a simple line into `sig`: host, rank, then the line with each masked
/// digit run (see [`masked`]) written as one 0xfe byte (so `pid=7` and `pid=12345` sign alike)
/// and 0xff where the message starts.
pub(super) fn signature(sig: &mut Vec<u8>, line: &[u8], head: &LineHead<'_>) {
    sig.clear();
    host_and_rank(sig, head);
    let (prefix, body) = line.split_at(head.msg_start.min(line.len()));
    mask_digits(sig, prefix);
    sig.push(0xff);
    mask_pids(sig, body);
}

/// The start of a signature: the line's host and rank.
fn host_and_rank(sig: &mut Vec<u8>, head: &LineHead<'_>) {
    let host = head.prefix.and_then(|p| p.host).or(head.host);
    match host {
        Some(h) => {
            sig.push(1);
            sig.extend_from_slice(h);
        }
        None => sig.push(0),
    }
    sig.push(0xff);
    match head.rank {
        Some(r) => {
            sig.push(1);
            sig.extend_from_slice(&r.to_le_bytes());
        }
        None => sig.push(0),
    }
}

/// Appends `text` with each digit run written as one 0xfe byte.
fn mask_digits(sig: &mut Vec<u8>, text: &[u8]) {
    let mut i = 0;
    while let Some(p) = text[i..].iter().position(u8::is_ascii_digit) {
        sig.extend_from_slice(&text[i..i + p]);
        sig.push(0xfe);
        i += p;
        i += text[i..].iter().take_while(|c| c.is_ascii_digit()).count();
    }
    sig.extend_from_slice(&text[i..]);
}

/// Appends `body` with the value of each `pid=` written as one 0xfe byte.
fn mask_pids(sig: &mut Vec<u8>, body: &[u8]) {
    let mut from = 0;
    pid_values(body, |s, e| {
        sig.extend_from_slice(&body[from..s]);
        sig.push(0xfe);
        from = e;
    });
    sig.extend_from_slice(&body[from..]);
}

/// The digits of each `pid=` value of `body` (found from its `=`: cheaper than a substring
/// search on a short line), as (start, end) offsets in order.
fn pid_values(body: &[u8], mut f: impl FnMut(usize, usize)) {
    for q in memchr::memchr_iter(b'=', body) {
        if q < 3 || &body[q - 3..q] != b"pid" {
            continue;
        }
        let v = q + 1;
        let n = body[v..].iter().take_while(|c| c.is_ascii_digit()).count();
        if n > 0 {
            f(v, v + n);
        }
    }
}

/// The probe of the masks: `line` with every masked digit changed (d -> d + 1 mod 10).
pub(super) fn probe(line: &[u8], msg_start: usize) -> Vec<u8> {
    let mut p = line.to_vec();
    masked(line, msg_start, |s, e| {
        for c in &mut p[s..e] {
            *c = b'0' + (*c - b'0' + 1) % 10;
        }
    });
    p
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::formats::parse_head;
    use crate::formats::repeat::HeadCache;

    /// The signature as the masked spans define it: the line with each span one 0xfe byte and
    /// 0xff where the message starts, after host and rank.
    fn by_spans(line: &[u8], head: &LineHead<'_>) -> Vec<u8> {
        let mut sig = Vec::new();
        signature(
            &mut sig,
            b"",
            &LineHead {
                msg_start: 0,
                ..*head
            },
        );
        sig.truncate(sig.len() - 1); // host and rank only
        let ms = head.msg_start.min(line.len());
        let mut from = 0;
        let mut spans = Vec::new();
        masked(line, ms, |s, e| spans.push((s, e)));
        let mut marked = false;
        for (s, e) in spans {
            if !marked && s >= ms {
                sig.extend_from_slice(&line[from..ms]);
                sig.push(0xff);
                (from, marked) = (ms, true);
            }
            sig.extend_from_slice(&line[from..s]);
            sig.push(0xfe);
            from = e;
        }
        if !marked {
            sig.extend_from_slice(&line[from..ms]);
            sig.push(0xff);
            from = ms;
        }
        sig.extend_from_slice(&line[from..]);
        sig
    }

    #[test]
    fn the_signature_masks_prefix_digits_and_pid_values() {
        for l in [
            &b"Jan 12 00:00:00 gpu-node-01 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=13671, name=python3, Ch 00000010"[..],
            b"Jan 12 01:06:39 gpu-node-01 kernel: [ 4099.980000] nvidia-nvswitch1: SXid (PCI:0000:05:00.0): 12028, Non-fatal",
            b"[  12.5] pid=1 pid= xpid=22pid=3 =4",
            b"2026-03-14T02:13:07.412+00:00 node7 kernel: x pid=9",
            b"[rank3]: Jan 12 00:00:00 h kernel: pid=5",
            b"no prefix pid=77",
            b"Jan 12 00:00:00 h kernel:",
            b"pid=",
            b"",
        ] {
            let head = parse_head(l);
            let mut sig = Vec::new();
            signature(&mut sig, l, &head);
            assert_eq!(sig, by_spans(l, &head), "{}", String::from_utf8_lossy(l));
        }
        // through the head cache, lines that repeat a prefix sign as they sign alone
        let lines: [&[u8]; 5] = [
            b"Jan 12 00:00:00 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p",
            b"Jan 12 00:00:01 n1 kernel: [ 12.500000] nvidia-nvswitch1: SXid pid=4",
            b"Jan 12 00:00:02 n1 kernel: [12.5] x",
            b"Jan 12 00:00:02 n2 kernel: [12.5] x",
            b"Jan 12 00:00:03 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p",
        ];
        let (mut cache, mut memo) = (HeadCache::default(), Memo::default());
        for l in lines {
            let head = cache.parse(l, None);
            memo.sign(l, &head, cache.repeated());
            let mut alone = Vec::new();
            signature(&mut alone, l, &head);
            assert_eq!(memo.sig, alone, "{}", String::from_utf8_lossy(l));
        }
        let (a, b) = (
            &b"Jan 12 00:00:00 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p"[..],
            &b"Jan 13 10:20:30 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=12345, name=p"[..],
        );
        let (mut sa, mut sb) = (Vec::new(), Vec::new());
        signature(&mut sa, a, &parse_head(a));
        signature(&mut sb, b, &parse_head(b));
        assert_eq!(sa, sb);
    }
}
