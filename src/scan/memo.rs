//! Counting before building: a per-chunk memo of "line signature -> the keys of the events the
//! recognizers gave". A storm repeats a few messages millions of times; the first line of each
//! signature in a chunk is read in full (and checked by a probe, below), the others only get
//! their keys from the memo and are counted ([`super::tally`]) or deferred
//! ([`super::deferred::Stub`]), never built unless the events cap keeps them.
//!
//! Only a *simple* line is memoized: one line (no continuation before or after, at most
//! [`MAX_RECORD_BYTES`], no terminal escapes) with a prefix that carries its own time or names
//! its host ([`self_contained`]: an untimed NCCL line borrows only a time, which reading it again
//! in the same buffer borrows alike), whose recognizers read no context. The keys of its events
//! are then a function of the `Record` recognizers see: `full` (the line: read for anchors and
//! context words only), `body` (after the prefix) and `rank`, plus the line's host. The signature
//! holds the host, the rank, the prefix with its digits dropped, and the body with the digits of
//! every detail value masked:
//! - prefix digits are its timestamps (wall, monotonic) and a program tag's pid (or NCCL's pid,
//!   thread and device): the time of the record and who logged it, never part of an event's key
//!   (host and rank, which a prefix also carries, are in the signature as parsed);
//! - detail values are the `[[memo_detail]]` table of data/recognizers.toml
//!   ([`crate::events::details`]): `pid=N` (the process a driver line names), a peer's address,
//!   an opcode, a length, a sequence number, which change on every line of a storm and are
//!   details, never keys.
//!
//! Both masks are checked, not assumed: when a signature comes back, its first line is read a
//! second time with every masked digit changed, and the signature is memoized only if both
//! readings give the same keys (otherwise every line of that signature is read in full). The
//! check waits for the second line of the signature, so a signature met once (a log of distinct
//! lines) costs one reading, not two.

use super::lines::{is_continuation, is_hard_wrap, next_line, trim_cr, MIN_WRAPPED_WIDTH};
#[cfg(test)]
use super::skeleton::mask_details;
use super::skeleton::Skeletons;
use super::{FastBuild, FastMap, MAX_RECORD_BYTES};
use crate::events::details::DetailValues;
use crate::events::host_guard::{HostGuard, Reach};
use crate::events::RecognizerSet;
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

/// Which values of a line a signature masks (besides its prefix's digits); its first byte.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Masks {
    /// The table's values whose `after` ends in `=` (`pid=`), found from each `=`: cheap, what
    /// every line is signed with first (a storm of one message whose pid changes).
    Plain = 1,
    /// Every value of the table, found through the skeletons: what a line whose plain signature
    /// is new is signed with next (a storm of one message to many peers, or with many lengths).
    Detailed = 2,
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
    /// Which digit runs of a message are detail values, by its skeleton.
    skeletons: Skeletons,
    /// A plain signature found new while the line is signed in detail, and whether it is kept
    /// (see [`Memo::defer_plain`]).
    plain: Vec<u8>,
    plain_new: bool,
    /// What can touch each host met (see [`crate::events::host_guard::HostGuard::reach`]).
    hosts: FastMap<Box<[u8]>, Option<Reach>>,
    /// Lines signed in detail, and how many of their signatures were found.
    detailed: (u64, u64),
}

/// Hosts a chunk's memo remembers what can touch (past them, a host is looked at every time).
const MAX_HOSTS: usize = 16 * 1024;

/// Signatures a chunk's memo knows before it signs lines in detail too.
const DETAIL_AFTER: usize = 16;
/// Lines signed in detail before the memo judges whether that pays (a quarter found).
const DETAIL_TRIAL: u64 = 512;

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

    /// Remembers `known` for the signature in `self.sig` when `new` (its lookup found nothing)
    /// and for the plain signature kept by [`Memo::defer_plain`], their masks still to be checked
    /// on the first line `at` (or checked, with `None`).
    /// A signature without its host keeps keys only when `hosted` (no event of the line names a
    /// host of its own).
    pub(super) fn put(
        &mut self,
        known: Known,
        at: Option<(usize, usize)>,
        (new, hosted): (bool, bool),
    ) {
        if new {
            let sig = self.sig.clone().into_boxed_slice();
            match self.host_free() && !hosted {
                true => self.insert(sig, Known::Full, None),
                false => self.insert(sig, known.clone(), at),
            }
        }
        if std::mem::take(&mut self.plain_new) {
            let sig = self.plain.clone().into_boxed_slice();
            self.insert(sig, known, at);
        }
    }

    fn insert(&mut self, sig: Box<[u8]>, known: Known, at: Option<(usize, usize)>) {
        if self.len >= MAX_SIGNATURES {
            return;
        }
        let h = self.hasher.hash_one(&sig[..]);
        self.map.entry(h).or_default().push((sig, known, at));
        self.len += 1;
    }

    /// Keeps the plain signature in `self.sig`, which the memo does not know, to be learned
    /// with what reading the line gives (see [`Memo::put`]) while the line is signed in detail.
    pub(super) fn defer_plain(&mut self) {
        self.plain.clone_from(&self.sig);
        self.plain_new = true;
    }

    /// Whether the signature in `self.sig` leaves the host out (its keys are the first line's,
    /// with each line's own host).
    pub(super) fn host_free(&self) -> bool {
        self.sig.get(1) == Some(&HOST_FREE)
    }

    /// The masks of the signature in `self.sig`.
    pub(super) fn masks(&self) -> Masks {
        match self.sig.first() {
            Some(&2) => Masks::Detailed,
            _ => Masks::Plain,
        }
    }

    /// Whether a line whose plain signature is new is signed in detail: once the memo knows a
    /// few signatures (a short log never pays for the detailed signature and the host guard),
    /// and while detailed signatures are found often enough to pay for themselves (a log of
    /// distinct keys, a new host or bus id on every line, stops trying).
    pub(super) fn details_worth(&self) -> bool {
        let (tries, found) = self.detailed;
        self.len >= DETAIL_AFTER && (tries < DETAIL_TRIAL || found * 4 >= tries)
    }

    /// Signs no more lines in detail in this chunk.
    pub(super) fn stop_details(&mut self) {
        self.detailed = (u64::MAX / 8, 0);
    }

    /// Counts a line signed in detail, and whether its signature was found.
    pub(super) fn detailed_found(&mut self, found: bool) {
        self.detailed.0 = self.detailed.0.saturating_add(1);
        self.detailed.1 += u64::from(found);
    }

    /// Whether a plain signature waits to be learned.
    pub(super) fn plain_new(&self) -> bool {
        self.plain_new
    }

    /// Writes the signature of a simple line (see [`signature`]) into `self.sig`; `repeated` is
    /// what the head cache said of the line ([`crate::formats::repeat::HeadCache::repeated`]): the
    /// start of the signature of a line that repeats a prefix is the same as the previous such
    /// line's. The message's detail values are found through the skeletons ([`Skeletons`]).
    pub(super) fn sign(
        &mut self,
        line: &[u8],
        (head, repeated): (&LineHead<'_>, Option<(u64, usize)>),
        (set, masks): (&RecognizerSet, Masks),
    ) {
        let ms = head.msg_start.min(line.len());
        if masks == Masks::Plain {
            self.plain_new = false;
        }
        self.sig.clear();
        self.sig.push(masks as u8);
        let details = &set.details;
        // in detail, without a host that can change nothing of the reading
        let free = (masks == Masks::Detailed)
            .then(|| host_span(line, head))
            .flatten()
            .filter(|&(s, e)| e <= ms && self.neutral_host(line, (s, e), set));
        if let Some((s, e)) = free {
            self.sig.push(HOST_FREE);
            self.sig.push(0xff);
            rank(&mut self.sig, head);
            mask_digits(&mut self.sig, &line[..s]);
            self.sig.push(0xfd);
            mask_digits(&mut self.sig, &line[e..ms]);
            self.sig.push(0xff);
            self.skeletons.mask(&mut self.sig, &line[ms..], details);
            return;
        }
        match repeated.filter(|&(_, m)| m <= ms) {
            Some((of, m)) => {
                if self.head_of != Some(of) {
                    self.head_sig.clear();
                    host_and_rank(&mut self.head_sig, head);
                    mask_digits(&mut self.head_sig, &line[..m]);
                    self.head_of = Some(of);
                }
                self.sig.extend_from_slice(&self.head_sig);
                // no digit run crosses `m` (a space stands before it)
                mask_digits(&mut self.sig, &line[m..ms]);
            }
            None => {
                host_and_rank(&mut self.sig, head);
                mask_digits(&mut self.sig, &line[..ms]);
            }
        }
        self.sig.push(0xff);
        match masks {
            Masks::Plain => mask_with(&mut self.sig, &line[ms..], |b, f| details.eq_digits(b, f)),
            Masks::Detailed => self.skeletons.mask(&mut self.sig, &line[ms..], details),
        }
    }

    /// Whether the host at `line[s..e]` can change nothing of the reading (see
    /// [`crate::events::host_guard`]), what can touch it remembered for each host.
    fn neutral_host(&mut self, line: &[u8], (s, e): (usize, usize), set: &RecognizerSet) -> bool {
        let guard = set.host_guard();
        if !HostGuard::bounded(line, (s, e)) {
            return false;
        }
        let host = &line[s..e];
        let reach = match self.hosts.get(host) {
            Some(r) => r,
            None if self.hosts.len() < MAX_HOSTS => {
                let r = guard.reach(host);
                self.hosts.entry(host.into()).or_insert(r)
            }
            None => return guard.neutral(line, (s, e)),
        };
        reach
            .as_ref()
            .is_some_and(|r| r.neutral(line, (s, e), guard))
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
        || !self_contained(head)
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

/// Whether a line's events are a function of the line alone, as far as their keys go: its prefix
/// carries its own time, or it has a prefix and names its host (an untimed NCCL line
/// `host:pid:tid [dev] …`). A line without either borrows its time and its host from a
/// neighbour; one that names its host only borrows a time, which reading the line again in the
/// same buffer borrows alike.
pub(super) fn self_contained(head: &LineHead<'_>) -> bool {
    head.prefix
        .is_some_and(|p| !p.stamp.is_empty() || p.host.is_some() || head.host.is_some())
}

/// The masked spans of `line` (see the module doc), as (start, end) offsets in order: each digit
/// run of the prefix and of each detail value in the body.
fn masked(
    line: &[u8],
    msg_start: usize,
    (details, masks): (&DetailValues, Masks),
    mut f: impl FnMut(usize, usize),
) {
    let ms = msg_start.min(line.len());
    crate::events::details::digit_runs(&line[..ms], &mut f);
    let body = &line[ms..];
    match masks {
        Masks::Plain => details.eq_digits(body, |s, e| f(ms + s, ms + e)),
        Masks::Detailed => details.digits(body, |s, e| f(ms + s, ms + e)),
    }
}

/// Appends `body` with each digit run `values` finds in it written as one 0xfe byte.
fn mask_with(
    sig: &mut Vec<u8>,
    body: &[u8],
    values: impl FnOnce(&[u8], &mut dyn FnMut(usize, usize)),
) {
    let mut from = 0;
    values(body, &mut |s, e| {
        sig.extend_from_slice(&body[from..s]);
        sig.push(0xfe);
        from = e;
    });
    sig.extend_from_slice(&body[from..]);
}

/// Writes the signature of a simple line into `sig`: host, rank, then the line with each masked
/// digit run (see [`masked`]) written as one 0xfe byte (so `pid=7` and `pid=12345` sign alike)
/// and 0xff where the message starts; in detail, a host that can change nothing of the reading
/// left out. What [`Memo::sign`] writes, the table searched every time.
#[cfg(test)]
fn signature(
    sig: &mut Vec<u8>,
    line: &[u8],
    head: &LineHead<'_>,
    (set, masks): (&RecognizerSet, Masks),
) {
    sig.clear();
    sig.push(masks as u8);
    let ms = head.msg_start.min(line.len());
    let (prefix, body) = line.split_at(ms);
    let free = (masks == Masks::Detailed)
        .then(|| host_span(line, head))
        .flatten()
        .filter(|&(s, e)| e <= ms && set.host_guard().neutral(line, (s, e)));
    match free {
        Some((s, e)) => {
            sig.extend_from_slice(&[HOST_FREE, 0xff]);
            rank(sig, head);
            mask_digits(sig, &line[..s]);
            sig.push(0xfd);
            mask_digits(sig, &line[e..ms]);
        }
        None => {
            host_and_rank(sig, head);
            mask_digits(sig, prefix);
        }
    }
    sig.push(0xff);
    match masks {
        Masks::Plain => mask_with(sig, body, |b, f| set.details.eq_digits(b, f)),
        Masks::Detailed => mask_details(sig, body, &set.details),
    }
}

/// What a signature without its host holds in the host's place (see [`Memo::host_free`]).
const HOST_FREE: u8 = 2;

/// Where the host the line's head names stands in `line`, when it is a part of it.
fn host_span(line: &[u8], head: &LineHead<'_>) -> Option<(usize, usize)> {
    let h = head.prefix.and_then(|p| p.host).or(head.host)?;
    let s = (h.as_ptr() as usize).checked_sub(line.as_ptr() as usize)?;
    (s + h.len() <= line.len()).then_some((s, s + h.len()))
}

/// The host the line's head names, as text (the key's host of its events), when it is UTF-8.
pub(super) fn host_text<'a>(head: &LineHead<'a>) -> Option<&'a str> {
    let h = head.prefix.and_then(|p| p.host).or(head.host)?;
    std::str::from_utf8(h).ok()
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
    rank(sig, head);
}

/// The line's rank, in a signature.
fn rank(sig: &mut Vec<u8>, head: &LineHead<'_>) {
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

/// The probe of the masks: `line` with every masked digit changed (d -> d + 1 mod 10).
pub(super) fn probe(line: &[u8], msg_start: usize, masks: (&DetailValues, Masks)) -> Vec<u8> {
    let mut p = line.to_vec();
    masked(line, msg_start, masks, |s, e| {
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

    /// The built-in recognizers.
    fn set() -> &'static RecognizerSet {
        static SET: std::sync::OnceLock<RecognizerSet> = std::sync::OnceLock::new();
        SET.get_or_init(|| RecognizerSet::load(&[]).unwrap())
    }

    /// The built-in table of detail values.
    fn details() -> &'static DetailValues {
        &set().details
    }

    /// The signature as the masked spans define it: the line with each span one 0xfe byte and
    /// 0xff where the message starts, after host and rank.
    fn by_spans(line: &[u8], head: &LineHead<'_>, masks: Masks) -> Vec<u8> {
        let mut sig = Vec::new();
        signature(
            &mut sig,
            b"",
            &LineHead {
                msg_start: 0,
                ..*head
            },
            (set(), masks),
        );
        sig.truncate(sig.len() - 1); // masks, host and rank only
        let ms = head.msg_start.min(line.len());
        let mut from = 0;
        let mut spans = Vec::new();
        masked(line, ms, (details(), masks), |s, e| spans.push((s, e)));
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
    fn the_signature_masks_prefix_digits_and_detail_values() {
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
            b"gpu-n0001:1234:5678 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4432> with error 12, opcode 129, len 0, vendor err 129 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.7 hca mlx5_3",
        ] {
            let head = parse_head(l);
            for masks in [Masks::Plain, Masks::Detailed] {
                let mut sig = Vec::new();
                signature(&mut sig, l, &head, (set(), masks));
                if sig.get(1) == Some(&HOST_FREE) {
                    // the host left out: checked below
                    continue;
                }
                let want = by_spans(l, &head, masks);
                assert_eq!(sig, want, "{masks:?} {}", String::from_utf8_lossy(l));
            }
        }
        // through the head cache, lines that repeat a prefix sign as they sign alone
        let lines: [&[u8]; 5] = [
            b"Jan 12 00:00:00 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p",
            b"Jan 12 00:00:01 n1 kernel: [ 12.500000] nvidia-nvswitch1: SXid pid=4",
            b"Jan 12 00:00:02 n1 kernel: [12.5] x",
            b"Jan 12 00:00:02 n2 kernel: [12.5] x",
            b"Jan 12 00:00:03 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p",
        ];
        let nccl: [&[u8]; 3] = [
            b"gpu-n0001:1234:5678 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.7<4432> with error 12, opcode 129, len 0, vendor err 129 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.7 hca mlx5_3",
            b"gpu-n0001:1234:5679 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.99<32> with error 12, opcode 1, len 70, vendor err 1 (Recv) localGid ::ffff:10.0.0.8 remoteGids::ffff:10.0.0.7 hca mlx5_3",
            b"gpu-n0001:1234:5679 [3] transport/net_ib.cc:1696 NCCL WARN NET/IB : Got completion from peer 10.0.0.99<32> with error 12, opcode=1 len=70",
        ];
        let (mut cache, mut memo) = (HeadCache::default(), Memo::default());
        for l in lines.iter().chain(&nccl).chain(&lines) {
            let head = cache.parse(l, None);
            for masks in [Masks::Plain, Masks::Detailed] {
                memo.sign(l, (&head, cache.repeated()), (set(), masks));
                let mut alone = Vec::new();
                signature(&mut alone, l, &head, (set(), masks));
                assert_eq!(memo.sig, alone, "{masks:?} {}", String::from_utf8_lossy(l));
            }
        }
        let (a, b) = (
            &b"Jan 12 00:00:00 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=1, name=p"[..],
            &b"Jan 13 10:20:30 n1 kernel: NVRM: Xid (PCI:0000:90:00): 45, pid=12345, name=p"[..],
        );
        let (mut sa, mut sb) = (Vec::new(), Vec::new());
        signature(&mut sa, a, &parse_head(a), (set(), Masks::Plain));
        signature(&mut sb, b, &parse_head(b), (set(), Masks::Plain));
        assert_eq!(sa, sb);
        // NCCL lines that differ in their pid, source line and detail values, not in their device
        // or status, sign alike; another status signs apart
        let nccl = |host: &str, err: &str, peer: &str| {
            let pid = if host == "gpu-n0001" { "1" } else { "48213" };
            let l = format!("{host}:{pid}:5678 [3] transport/net_ib.cc:{pid} NCCL WARN NET/IB : Got completion from peer {peer}<{pid}> with error {err}, opcode {pid}, len 0, vendor err {pid} (Recv) localGid ::ffff:{peer} remoteGids::ffff:{peer} hca mlx5_{pid}");
            let mut sig = Vec::new();
            let masks = (set(), Masks::Detailed);
            signature(&mut sig, l.as_bytes(), &parse_head(l.as_bytes()), masks);
            sig
        };
        // and in detail, their hosts too, unless a host could touch an anchor
        let one = nccl("gpu-n0001", "12", "10.0.0.7");
        assert_eq!(one[1], HOST_FREE);
        assert_eq!(one, nccl("gpu-n0001", "12", "192.168.100.9"));
        assert_eq!(one, nccl("rack7-node-b", "12", "192.168.100.9"));
        assert_ne!(one, nccl("gpu-n0001", "5", "10.0.0.7"));
        let word = set()
            .anchors
            .iter()
            .find(|a| a.len() >= 4 && a.bytes().all(|c| c.is_ascii_alphanumeric()));
        let touched = format!(
            "{}-7",
            word.expect("an anchor made of letters").to_lowercase()
        );
        assert_ne!(one, nccl(&touched, "12", "10.0.0.7"));
        assert_eq!(nccl(&touched, "12", "10.0.0.7")[1], 1);
    }
}
