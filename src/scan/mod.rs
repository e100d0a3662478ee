//! The per-byte stage: split a buffer into newline-aligned chunks, count lines, find candidate
//! lines with the anchor automaton, and run the owning recognizers on those lines only.

mod account;
mod bursts;
mod candidate;
mod cap;
mod chunk;
mod counts;
mod deferred;
mod fold;
mod found;
pub mod journal_json;
pub mod kreport;
mod lines;
mod longline;
mod memo;
mod output;
mod record;
mod sign;
mod skeleton;
mod tally;

pub use account::{sampled, SAMPLE_HEAD, SAMPLE_PERIOD, SAMPLE_WINDOW};
pub use bursts::collapse_bursts;
pub use chunk::{memo_enabled, scan_buffer, scan_chunk};
pub use fold::SAMPLED_KEYS;
pub use output::MAX_PROGRESS_SAMPLES;

pub(crate) use cap::FastSet;
pub use cap::{
    cap_by_key, cap_capped, kind_total, CapKey, Capped, FastBuild, FastHasher, FastMap,
    DEFAULT_EVENTS_PER_KIND, KEPT_PER_KIND,
};

use crate::events::Draft;
use crate::model::LineStamp;

pub use crate::events::text::{normalize_body, MAX_RECORD_BYTES};
/// Verbatim evidence is kept up to this many bytes per line.
pub const MAX_MESSAGE_BYTES: usize = 4096;
/// Chunk size for parallel scanning of one buffer.
pub const CHUNK_BYTES: usize = 8 << 20;

/// The chunk size in use: [`CHUNK_BYTES`], or `FAULTLINE_CHUNK_BYTES` from the environment
/// (at least 256; for the tests that compare chunked and serial scanning on small inputs).
pub fn chunk_bytes() -> usize {
    static CHUNK: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *CHUNK.get_or_init(|| {
        std::env::var("FAULTLINE_CHUNK_BYTES")
            .ok()
            .and_then(|v| v.parse::<usize>().ok())
            .map_or(CHUNK_BYTES, |n| n.max(256))
    })
}

/// A draft located in its input, with its time fields and verbatim text.
#[derive(Clone, Debug)]
pub struct Located {
    /// 1-based line of the record's first line.
    pub line: u64,
    /// The recognizer's output.
    pub draft: Draft,
    /// Time fields of the line, or of a neighbour (`borrowed`).
    pub stamp: LineStamp,
    /// The stamp came from a neighbouring line.
    pub borrowed: bool,
    /// Host named by the line prefix (or the neighbour that lent the time): one text shared by
    /// the events of a host (see [`ScanOutput::share_host`]).
    pub host: Option<std::sync::Arc<str>>,
    /// Verbatim record: one text shared by the events of one record (an Xid and the kinds
    /// derived from it).
    pub message: std::sync::Arc<str>,
    /// Message after the prefix: a place in `message` when it ends it (nearly always), so that
    /// the text is held once.
    pub body: crate::model::Body,
    /// Further occurrences of this event (same host, kind, code, GPU and rank) past the events
    /// cap: counted here, not kept (see [`cap_by_key`]).
    pub suppressed: u64,
    /// Counted in the events cap's counts of the list holding it (see [`counts::Counts`]).
    pub(crate) counted: bool,
    /// Offered to the budget of keys per kind (see [`fold`]).
    pub(crate) sampled: bool,
    /// Counted under its kind's key for keys past the budget (see [`fold`]).
    pub(crate) folded: bool,
}

impl Located {
    /// Draft `d` located at `line`, with the time and host of its line (`stamp`, `borrowed`,
    /// `host`) unless the record named its own (see [`Draft::told`]), and its verbatim text.
    pub(crate) fn new(
        mut d: Draft,
        line: u64,
        (stamp, borrowed, host): (LineStamp, bool, Option<std::sync::Arc<str>>),
        (message, body): (std::sync::Arc<str>, crate::model::Body),
    ) -> Located {
        let told = d.told.take().map(|t| *t).unwrap_or_default();
        Located {
            line,
            borrowed: told.stamp.is_none() && borrowed,
            stamp: told.stamp.unwrap_or(stamp),
            host: told.host.map(std::sync::Arc::from).or(host),
            message,
            body,
            draft: d,
            suppressed: 0,
            counted: false,
            sampled: false,
            folded: false,
        }
    }
}

/// What scanning one buffer produced.
#[derive(Clone, Debug, Default)]
pub struct ScanOutput {
    /// Lines counted (`wc -l`, plus one for a final line without newline).
    pub lines: u64,
    /// Lines whose prefix a format reader understood, or that gave an event: among the lines of
    /// the sample while scanning ([`sampled`]), over the whole input once settled
    /// ([`ScanOutput::settle_recognized`]).
    pub recognized: u64,
    /// Lines of the sample read so far (all of them for an input within [`SAMPLE_HEAD`]).
    walked: u64,
    /// Events.
    pub events: Vec<Located>,
    /// Captures to merge into other events or the inventory.
    pub attachments: Vec<Located>,
    /// 1-based lines where a new boot starts (journal separators, uptime zero).
    pub boot_lines: Vec<u64>,
    /// Lines longer than [`MAX_RECORD_BYTES`].
    pub long_lines: u64,
    /// Anchors in long lines that recognizers did not read (neither in the head nor in the
    /// window around the line's last anchor).
    pub lost_anchors: u64,
    /// Count of lines per prefix shape, over the sampled and the candidate lines.
    pub shapes: [u64; crate::formats::SHAPES],
    /// Progress samples met while scanning, kept or not.
    progress_seen: u64,
    /// One progress sample in this many is kept (a power of two).
    progress_stride: u64,
    /// Progress samples kept.
    progress_kept: usize,
    /// Events counted before they were built, in line order (see [`deferred`]).
    deferred: Vec<deferred::Stub>,
    /// Keys of the deferred events.
    keys: Vec<deferred::OwnedKey>,
    /// The events cap's counts of the events and stubs counted so far.
    counts: counts::Counts,
    /// The keys of each kind that keep a key of their own (see [`fold`]).
    sample: fold::Sample,
    /// The events cap's counts of the attachments counted so far.
    attachment_counts: counts::Counts,
    /// The hosts met lately, each text held once (see [`ScanOutput::share_host`]).
    hosts: Vec<std::sync::Arc<str>>,
    /// The GPU ids met, each text held once (see [`ScanOutput::share_gpu`]).
    gpus: FastSet<std::sync::Arc<str>>,
}

impl ScanOutput {
    /// The shared text of host `h`: the events of one host hold one copy, not one each.
    pub(crate) fn share_host(&mut self, h: String) -> std::sync::Arc<str> {
        const HOSTS: usize = 16;
        if let Some(i) = self.hosts.iter().position(|k| **k == *h) {
            let k = self.hosts[i].clone();
            if i > 0 {
                // the most recent first: a host's lines come together
                self.hosts[..=i].rotate_right(1);
            }
            return k;
        }
        let k: std::sync::Arc<str> = h.into();
        self.hosts.truncate(HOSTS - 1);
        self.hosts.insert(0, k.clone());
        k
    }

    /// The shared text of GPU id `g`: the events of one GPU (of a chunk) hold one copy.
    pub(crate) fn share_gpu(&mut self, g: std::sync::Arc<str>) -> std::sync::Arc<str> {
        if let Some(k) = self.gpus.get(&*g) {
            return k.clone();
        }
        self.gpus.insert(g.clone());
        g
    }
}
