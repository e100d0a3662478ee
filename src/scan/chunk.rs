//! Chunks of a buffer: the prefilter's candidates, line accounting, and the merge of chunks.

use super::account::{self, sampled, Candidate};
use super::candidate::{candidate, recognize};
use super::deferred::{cap_joint, materialize, Stub};
use super::found;
use super::lines::{continues, next_line, prev_line, trim_cr};
use super::memo::Masks;
use super::MAX_PROGRESS_SAMPLES;
use super::{chunk_bytes, longline, memo, normalize_body, sign, tally, ScanOutput};
use crate::events::RecognizerSet;
use crate::formats::repeat::HeadCache;
use crate::formats::wrapper::FileWrappers;
use crate::formats::{parse_head_with, LineHead};
use rayon::prelude::*;

/// Scans a whole buffer; uses rayon over chunks when it is large and `parallel` is set. At most
/// `cap` events (and attachments) per host, kind, code, GPU and rank are kept; the others are
/// counted in the `suppressed` field of the last one kept. Progress samples are not capped but
/// thinned (see [`ScanOutput::thin_progress`]).
pub fn scan_buffer(buf: &[u8], set: &RecognizerSet, parallel: bool, cap: u64) -> ScanOutput {
    let fw = FileWrappers::learn(buf, |t| set.prefilter.find(t).is_some());
    let chunk = chunk_bytes();
    if !parallel || buf.len() <= chunk * 2 {
        let mut out = chunk_output(buf, (0, buf.len(), 0), set, cap, &fw, true);
        materialize(buf, set, &fw, &mut out);
        out.settle_recognized();
        return out;
    }
    let mut bounds = vec![0usize];
    let mut pos = chunk;
    while pos < buf.len() {
        match memchr::memchr(b'\n', &buf[pos..]) {
            Some(p) => {
                bounds.push(pos + p + 1);
                pos = pos + p + 1 + chunk;
            }
            None => break,
        }
    }
    if *bounds.last().unwrap_or(&0) < buf.len() {
        bounds.push(buf.len());
    }
    // each chunk keeps its share of the progress samples, and a few chunks run at a time, capped
    // as they are appended in order, so that memory stays bounded
    let share = (MAX_PROGRESS_SAMPLES / bounds.len().max(1)).max(500);
    let windows: Vec<(usize, usize)> = bounds.windows(2).map(|w| (w[0], w[1])).collect();
    // only the last chunks (one per thread) split their search between threads: before them a
    // thread out of work takes the next chunk, and a split would make the thread that finishes
    // its half first wait for the other half (for the whole of it when that thread is held up,
    // as a virtual CPU often is: idle time of both workers 22-34 ms a run on the 256 MiB syslog,
    // 6 ms with the split kept for the tail)
    let tail_from = windows[windows.len().saturating_sub(rayon::current_num_threads())].0;
    let scan = |&(s, e): &(usize, usize)| {
        let mut part = chunk_output(buf, (s, e, 0), set, cap, &fw, s >= tail_from);
        part.thin_progress_to(share);
        // a mapped file's pages of this chunk are given back now, in this thread, not all at
        // once when the input is unmapped (what is read again later is mapped again)
        crate::input::mapped::release(&buf[s..e]);
        // what building many events left free in this thread's arena goes back too: a log of many
        // distinct events would otherwise hold it beside the next chunks' events
        if part.events.len() + part.attachments.len() >= CHUNK_GIVE_BACK {
            crate::alloc::give_back();
        }
        part
    };
    let mut out = ScanOutput::default();
    if rayon::current_num_threads() > 1 && rayon::current_thread_index().is_none() {
        stream_chunks(&windows, scan, |p| {
            out.append(p);
            out.cap(cap);
        });
    } else {
        // inside a pool worker (a fleet scan runs inputs in the pool): a blocking merge here
        // could wait on tasks queued behind it, so chunks go in batches
        for batch in windows.chunks(rayon::current_num_threads().max(1) * 2) {
            let parts: Vec<ScanOutput> = batch.par_iter().map(scan).collect();
            for p in parts {
                out.append(p);
                out.cap(cap);
            }
        }
    }
    materialize(buf, set, &fw, &mut out);
    out.settle_recognized();
    out
}

/// Events of one chunk past which the allocator's free pages are given back after it.
const CHUNK_GIVE_BACK: usize = 10_000;

/// Scans the chunks `windows` as tasks of the pool, at most one per thread and one more in
/// flight, and hands their outputs to `merge` in chunk order as they come back, with no barrier
/// between chunks. Runs on a thread outside the pool (which only waits and merges).
fn stream_chunks(
    windows: &[(usize, usize)],
    scan: impl Fn(&(usize, usize)) -> ScanOutput + Sync,
    mut merge: impl FnMut(ScanOutput),
) {
    let limit = rayon::current_num_threads() + 1;
    let (done_tx, done) = std::sync::mpsc::channel::<(usize, ScanOutput)>();
    let mut ready: std::collections::BTreeMap<usize, ScanOutput> = Default::default();
    let mut next = 0usize;
    let mut put = |k: usize, part: ScanOutput| {
        ready.insert(k, part);
        while let Some(p) = ready.remove(&next) {
            merge(p);
            next += 1;
        }
    };
    let scan = &scan;
    rayon::in_place_scope(|s| {
        let mut in_flight = 0usize;
        for (i, w) in windows.iter().enumerate() {
            while let Ok((k, part)) = done.try_recv() {
                put(k, part);
                in_flight -= 1;
            }
            if in_flight >= limit {
                if let Ok((k, part)) = done.recv() {
                    put(k, part);
                    in_flight -= 1;
                }
            }
            let tx = done_tx.clone();
            in_flight += 1;
            s.spawn(move |_| {
                let _ = tx.send((i, scan(w)));
            });
        }
        drop(done_tx);
        for (k, part) in done.iter() {
            put(k, part);
        }
    });
}

/// Scans `buf[start..end]` (newline aligned); line numbers are relative to `start`; at most `cap`
/// events per host, kind, code, GPU and rank are kept (the cap is applied as events accumulate).
/// `fw` is what the file's first lines said about wrappers; `origin` is the offset of `buf[0]`
/// in the input (the sample is defined by input offsets, see [`super::sampled`]). The count of
/// recognized lines is the sample's (see [`ScanOutput::settle_recognized`]).
pub fn scan_chunk(
    buf: &[u8],
    (start, end, origin): (usize, usize, u64),
    set: &RecognizerSet,
    cap: u64,
    fw: &FileWrappers,
) -> ScanOutput {
    let mut out = chunk_output(buf, (start, end, origin), set, cap, fw, true);
    materialize(buf, set, fw, &mut out);
    out
}

/// [`scan_chunk`] with the events counted before building still deferred (see
/// [`super::deferred`]). `origin` is the input offset of `buf[0]`; `split`: the prefilter's
/// search may be shared with idle threads (see [`found::found`]).
fn chunk_output(
    buf: &[u8],
    (start, end, origin): (usize, usize, u64),
    set: &RecognizerSet,
    cap: u64,
    fw: &FileWrappers,
    split: bool,
) -> ScanOutput {
    let mut out = ScanOutput::default();
    // the prefilter finds the candidate lines (few) in the whole region; the lines are counted
    // and the sample read between them (see [`super::account`])
    let found = found::found(set, &buf[start..end], split);
    let at = (start, end, origin + start as u64);
    let learned = fw.learned.as_deref();
    let (candidates, hits) = account::account(buf, at, &found, set, learned, &mut out);
    drop(found);
    // recognizers on the candidate lines
    let mut record_end = 0usize;
    let mut event_lines = read_candidates(
        buf,
        (start, end),
        (&candidates, &hits),
        set,
        cap,
        fw,
        (&mut out, &mut record_end),
    );
    event_lines += read_past_end(buf, (start, end, origin), set, fw, (&mut out, record_end));
    super::collapse_bursts(&mut out.events, set.nvrm_recognizers());
    out.cap(cap);
    // sampled event lines whose prefix was not understood still count as recognized
    out.recognized = (out.recognized + event_lines).min(out.walked);
    out.thin_progress();
    out
}

/// A record whose head is in the chunk `buf[start..end]` is this chunk's, even where its
/// continuation lines (the ones with the anchor) lie past its end: the next chunk leaves them
/// alone, this one reads them (from `record_end`, where the last record read ended). Returns
/// the sampled lines without a known prefix that gave an event.
fn read_past_end(
    buf: &[u8],
    (start, end, origin): (usize, usize, u64),
    set: &RecognizerSet,
    fw: &FileWrappers,
    (out, mut record_end): (&mut ScanOutput, usize),
) -> u64 {
    let mut event_lines = 0u64;
    super::record::forget_stamps();
    let mut prev = prev_line(buf, end).unwrap_or((start, start));
    let mut at = end.saturating_sub(1);
    for k in 1..=8u64 {
        let Some((ns, ne)) = next_line(buf, at).filter(|_| end < buf.len()) else {
            break;
        };
        let (pl, nl) = (trim_cr(&buf[prev.0..prev.1]), trim_cr(&buf[ns..ne]));
        if !continues(pl, nl, fw) {
            break;
        }
        let hits = set.prefilter.starts(&buf[ns..ne]);
        if !hits.is_empty() && ns >= record_end {
            let far = longline::window(buf, (ns, ne), &hits, ns, out);
            let no = out.lines + k;
            let r = candidate(buf, ((ns, ne, no), far), (start, end), set, out, fw, None);
            event_lines += (r.gave && sampled(origin + ns as u64)) as u64;
            record_end = r.end;
        }
        prev = (ns, ne);
        at = ne;
    }
    event_lines
}

/// Reads the candidate lines of the chunk `own`: a simple line whose signature the memo knows
/// is only counted or deferred, any other is read in full (see [`super::memo`]). Returns the
/// sampled lines without a known prefix that gave an event; `record_end` is where the last
/// record read ends.
fn read_candidates(
    buf: &[u8],
    own: (usize, usize),
    (candidates, hits): (&[Candidate], &[usize]),
    set: &RecognizerSet,
    cap: u64,
    fw: &FileWrappers,
    (out, record_end): (&mut ScanOutput, &mut usize),
) -> u64 {
    let mut event_lines = 0u64;
    super::record::forget_stamps();
    let mut next_cap = cap.saturating_mul(2).max(4096);
    let mut tally = tally::Tally::new(cap);
    let mut memo = memo::Memo::default();
    let mut heads = HeadCache::default();
    let learned = fw.learned.as_deref();
    for &(ls, le, no, h0, h1, walked) in candidates {
        // a hit inside the continuation lines of the record just read belongs to that record
        if ls < *record_end {
            continue;
        }
        // whether the memo learns what reading the line gives, and whether under its last signature
        let (mut learn, mut new_sig) = (false, false);
        if let Some(t) = tally.as_mut().filter(|_| memo_enabled()) {
            let line = trim_cr(&buf[ls..le]);
            let head = heads.parse(line, learned);
            if memo::simple(buf, le, line, &head, fw) {
                let mut r = Recall::Read { new: true };
                // signed plainly first; in detail when that signature is new
                for masks in [Masks::Plain, Masks::Detailed] {
                    memo.sign(line, (&head, heads.repeated()), (set, masks));
                    r = recall(
                        buf,
                        &mut memo,
                        (set, learned),
                        (t, &head),
                        (ls, le, no),
                        out,
                    );
                    if masks == Masks::Detailed {
                        memo.detailed_found(!matches!(r, Recall::Read { .. }));
                    }
                    match r {
                        Recall::Read { new: true }
                            if masks == Masks::Plain && memo.details_worth() =>
                        {
                            memo.defer_plain()
                        }
                        _ => break,
                    }
                }
                match r {
                    Recall::Nothing => {
                        *record_end = le;
                        continue;
                    }
                    Recall::Counted => {
                        *record_end = le;
                        hold(out, set, cap, t, &mut next_cap);
                        continue;
                    }
                    Recall::Read { new } => (learn, new_sig) = (new || memo.plain_new(), new),
                }
            }
        }
        let far = longline::window(buf, (ls, le), &hits[h0..h1], own.0, out);
        let r = candidate(buf, ((ls, le, no), far), own, set, out, fw, tally.as_mut());
        event_lines += (r.gave && walked) as u64;
        *record_end = r.end;
        if let (true, Some(known)) = (learn, r.known) {
            // a new signature: its masks are checked when it comes back (nothing to check when
            // its lines are read in full anyway)
            let at = (known != memo::Known::Full).then_some((ls, le));
            memo.put(known, at, (new_sig, r.hosted));
        }
        match tally.as_mut() {
            Some(t) => hold(out, set, cap, t, &mut next_cap),
            None => {
                let held = (out.events.len() + out.attachments.len()) as u64;
                if held >= next_cap {
                    super::collapse_bursts(&mut out.events, set.nvrm_recognizers());
                    out.cap(cap);
                    let after = (out.events.len() + out.attachments.len()) as u64;
                    next_cap = after.saturating_mul(2).max(next_cap);
                }
            }
        }
    }
    if let Some(t) = tally {
        t.finish(out);
    }
    event_lines
}

/// What the memo of line signatures tells of a signed candidate line.
enum Recall {
    /// The line gives nothing.
    Nothing,
    /// Its keys were counted (and stubs made of those the cap may keep).
    Counted,
    /// The line is to be read in full; `new`: its signature is new (the memo learns it).
    Read { new: bool },
}

/// Looks the signed line `(ls, le, no)` up in `memo`: on a signature's second line, its masks
/// are checked on its first; a line known to give keys only has them counted in `t`.
fn recall(
    buf: &[u8],
    memo: &mut memo::Memo,
    (set, learned): (&RecognizerSet, Option<&[u8]>),
    (t, head): (&mut tally::Tally, &LineHead<'_>),
    (ls, le, no): (usize, usize, u64),
    out: &mut ScanOutput,
) -> Recall {
    let mut got = memo.get();
    if let Some((known, Some((fs, fe)))) = got {
        // the signature's second line: check its masks on its first
        let known = known.clone();
        let first = trim_cr(&buf[fs..fe]);
        let fhead = parse_head_with(first, learned);
        let masks = (memo.masks(), memo.host_free());
        let agreed = probe_agrees(set, (first, &fhead, masks), &known, t);
        memo.settle(if agreed { known } else { memo::Known::Full });
        got = memo.get();
    }
    match got.map(|(k, _)| k) {
        Some(memo::Known::Nothing) => Recall::Nothing,
        Some(memo::Known::Keys(ids)) => {
            // without its host, the signature's keys are its first line's: this line's host
            // takes their host's place
            let rehosted;
            let ids = if memo.host_free() {
                // a host the guard let through is ASCII: its text is always there
                let Some(h) = sign::host_text(head) else {
                    return Recall::Read { new: false };
                };
                let Some(v) = t.rehost(ids, h) else {
                    // the tally is full: lines of other hosts will not be counted
                    memo.stop_details();
                    return Recall::Read { new: false };
                };
                rehosted = v;
                &rehosted[..]
            } else {
                &ids[..]
            };
            if !t.count_ids(ids, (ls, le, no)) {
                out.deferred.extend(ids.iter().map(|&key| Stub {
                    at: (ls, le),
                    line: no,
                    key,
                    hash: t.hash_of(key),
                    suppressed: 0,
                    counted: false,
                    sampled: false,
                    folded: false,
                }));
            }
            Recall::Counted
        }
        Some(memo::Known::Full) => Recall::Read { new: false },
        None => Recall::Read { new: true },
    }
}

/// Keeps what a chunk holds bounded: past `next_cap` events, attachments and stubs, bursts are
/// collapsed and the cap applied, and the bound doubles from what is left.
fn hold(out: &mut ScanOutput, set: &RecognizerSet, cap: u64, t: &tally::Tally, next_cap: &mut u64) {
    let held = (out.events.len() + out.attachments.len() + out.deferred.len()) as u64;
    if held < *next_cap {
        return;
    }
    super::collapse_bursts(&mut out.events, set.nvrm_recognizers());
    let kinds = |k: u32| t.keys()[k as usize].1;
    if super::fold::fold(
        &mut out.events,
        (&mut out.deferred, &kinds),
        &mut out.sample,
    ) {
        out.counts.clear();
    }
    cap_joint(
        (&mut out.events, &mut out.deferred),
        t.keys(),
        cap,
        &mut out.counts,
    );
    super::counts::cap_counted(&mut out.attachments, cap, &mut out.attachment_counts);
    let after = (out.events.len() + out.attachments.len() + out.deferred.len()) as u64;
    *next_cap = after.saturating_mul(2).max(*next_cap);
}

/// The memo's check of its masks (see [`super::memo`]): the line with its masked digits changed
/// gives the same keys as the line.
fn probe_agrees(
    set: &RecognizerSet,
    (line, head, (masks, host_free)): (&[u8], &LineHead<'_>, (Masks, bool)),
    known: &memo::Known,
    t: &tally::Tally,
) -> bool {
    let probe = sign::probe(line, head.msg_start, (&set.details, masks));
    let full = String::from_utf8_lossy(&probe);
    let body = normalize_body(&String::from_utf8_lossy(
        &probe[head.msg_start.min(probe.len())..],
    ));
    let (drafts, used) = recognize(set, (&full, &body, head.rank), |_| (Vec::new(), Vec::new()));
    // without its host, no event of the line may name a host of its own
    if used || (host_free && drafts.iter().any(|d| d.host().is_some())) {
        return false;
    }
    let host = head
        .prefix
        .and_then(|p| p.host)
        .or(head.host)
        .map(String::from_utf8_lossy);
    let got = if drafts.is_empty() {
        memo::Known::Nothing
    } else {
        match t.known_ids(&drafts, host.as_deref(), set.nvrm_recognizers()) {
            Some(ids) => memo::Known::Keys(ids),
            None => memo::Known::Full,
        }
    };
    &got == known
}

/// Whether simple lines are memoized (`FAULTLINE_SCAN_MEMO=0` turns it off: for the tests that
/// compare the fast path with reading every line in full).
pub fn memo_enabled() -> bool {
    static ON: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *ON.get_or_init(|| std::env::var("FAULTLINE_SCAN_MEMO").map_or(true, |v| v != "0"))
}
