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
use super::sign::{host_and_rank, host_span, mask_digits, mask_with, rank, HOST_FREE};
use super::skeleton::Skeletons;
use super::{FastBuild, FastMap, MAX_RECORD_BYTES};
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

    /// Writes the signature of a simple line (see [`super::sign`]) into `self.sig`; `repeated` is
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
        reach.as_ref().is_some_and(|r| r.neutral(line, s, guard))
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
