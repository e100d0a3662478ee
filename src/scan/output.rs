//! What scanning gives, and how outputs of consecutive text are put together.

use super::counts::cap_counted;
use super::deferred::cap_joint;
use super::ScanOutput;

impl ScanOutput {
    /// Applies the events cap ([`cap_by_key`]) to the events (progress samples are never
    /// capped) and the attachments.
    pub fn cap(&mut self, cap: u64) {
        let keys = &self.keys;
        let kinds = |k: u32| keys[k as usize].1;
        if super::fold::fold(
            &mut self.events,
            (&mut self.deferred, &kinds),
            &mut self.sample,
        ) {
            self.counts.clear();
        }
        cap_joint(
            (&mut self.events, &mut self.deferred),
            &self.keys,
            cap,
            &mut self.counts,
        );
        cap_counted(&mut self.attachments, cap, &mut self.attachment_counts);
        if !self.deferred.is_empty() {
            self.compact_keys();
        }
    }

    /// Whether the events are known to be within the events cap `cap` (all of them counted, no
    /// count over it, nothing deferred): capping them again would change nothing.
    pub fn events_within_cap(&self, cap: u64) -> bool {
        self.deferred.is_empty() && self.counts.within(cap) && self.events.iter().all(|e| e.counted)
    }

    /// The kinds with more distinct keys than the budget ([`super::SAMPLED_KEYS`]): the events
    /// of their keys past it were counted together.
    pub fn folded_kinds(&self) -> Vec<&'static str> {
        self.sample.folded_kinds()
    }

    /// Total occurrences past the cap, over all events.
    pub fn suppressed(&self) -> u64 {
        self.events.iter().map(|e| e.suppressed).sum()
    }

    /// Appends the output of the text that follows this one (line numbers shift by our lines).
    pub fn append(&mut self, mut p: ScanOutput) {
        let base = self.lines;
        for e in p.events.iter_mut().chain(p.attachments.iter_mut()) {
            e.line += base;
        }
        // grown by what comes, not doubled: the list of a long input is the scan's largest
        // allocation, and a large block grows in place
        move_all(&mut self.events, std::mem::take(&mut p.events));
        self.attachments.reserve_exact(p.attachments.len());
        self.attachments.append(&mut p.attachments);
        self.append_stubs(&mut p, base);
        self.sample.merge(std::mem::take(&mut p.sample));
        // what `p` counted is counted here now
        self.counts.merge(std::mem::take(&mut p.counts));
        self.attachment_counts
            .merge(std::mem::take(&mut p.attachment_counts));
        self.boot_lines
            .extend(p.boot_lines.iter().map(|l| l + base));
        self.lines += p.lines;
        self.recognized += p.recognized;
        self.walked += p.walked;
        self.long_lines += p.long_lines;
        self.lost_anchors += p.lost_anchors;
        for (a, b) in self.shapes.iter_mut().zip(p.shapes) {
            *a += b;
        }
        self.thin_progress();
    }

    /// Turns the count of recognized lines of the sample into the input's: the sample's, plus
    /// the lines outside it at the sample's share (rounded down). Unchanged when every line was
    /// in the sample. Called once, on the output of a whole input.
    pub fn settle_recognized(&mut self) {
        let (rec, walked) = (self.recognized.min(self.walked), self.walked);
        if walked > 0 && walked < self.lines {
            let rest = (self.lines - walked) as u128 * rec as u128 / walked as u128;
            self.recognized = rec + rest as u64;
            self.walked = self.lines;
        }
        self.recognized = self.recognized.min(self.lines);
    }

    /// Takes back the first line of this output, which continues the last line of the text
    /// before (a line longer than a stream's block, cut inside it): one line less, and that
    /// line (`first`, starting at input offset `at`) neither long nor sampled here. Line
    /// numbers are the caller's to shift.
    pub fn forget_first_line(&mut self, first: &[u8], at: u64) {
        self.lines = self.lines.saturating_sub(1);
        let first = first.strip_suffix(b"\r").unwrap_or(first);
        if first.len() > super::MAX_RECORD_BYTES {
            self.long_lines = self.long_lines.saturating_sub(1);
        }
        if super::sampled(at) {
            self.walked = self.walked.saturating_sub(1);
            if crate::formats::quick_shape(first).is_some() {
                self.recognized = self.recognized.saturating_sub(1);
            }
        }
    }

    /// Keeps memory bounded on endless progress output: past [`MAX_PROGRESS_SAMPLES`] trainer
    /// progress samples, every other one is dropped (repeatedly, so at most the cap remain, spread
    /// evenly over the input and always keeping the last); the series keep their shape.
    pub fn thin_progress(&mut self) {
        self.thin_progress_to(MAX_PROGRESS_SAMPLES);
    }

    /// Whether the next progress sample is kept: one in `progress_stride`; when more than
    /// [`CHUNK_PROGRESS_SAMPLES`] are kept, every other kept one goes and the stride doubles, so
    /// the kept samples stay evenly spread over the text scanned so far.
    pub fn admit_progress(&mut self) -> bool {
        let stride = self.progress_stride.max(1);
        let keep = self.progress_seen % stride == 0;
        self.progress_seen += 1;
        if !keep {
            return false;
        }
        if self.progress_kept + 1 > CHUNK_PROGRESS_SAMPLES {
            let mut ordinal = 0usize;
            self.events.retain(|e| {
                if e.draft.kind != "progress" {
                    return true;
                }
                ordinal += 1;
                ordinal % 2 == 1
            });
            self.progress_kept = ordinal.div_ceil(2);
            self.progress_stride = stride * 2;
            self.events.shrink_to_fit();
            // the sample at hand was admitted under the old stride: keep it only if the new one does
            let keep_now = (self.progress_seen - 1) % self.progress_stride == 0;
            if keep_now {
                self.progress_kept += 1;
            }
            return keep_now;
        }
        self.progress_kept += 1;
        true
    }

    /// Thins the progress samples to at most `cap` (see [`ScanOutput::thin_progress`]).
    pub fn thin_progress_to(&mut self, cap: usize) {
        let count = self
            .events
            .iter()
            .filter(|e| e.draft.kind == "progress")
            .count();
        if count <= cap.max(1) {
            return;
        }
        let stride = count.div_ceil(cap.max(1)).next_power_of_two();
        let mut ordinal = 0usize;
        self.events.retain(|e| {
            if e.draft.kind != "progress" {
                return true;
            }
            ordinal += 1;
            ordinal % stride == 0 || ordinal == count
        });
        self.events.shrink_to_fit();
    }
}

/// Progress samples one chunk holds at most while scanning (see [`ScanOutput::admit_progress`]).
pub(super) const CHUNK_PROGRESS_SAMPLES: usize = 8192;

/// The most trainer progress samples kept per input (see [`ScanOutput::thin_progress`]).
pub const MAX_PROGRESS_SAMPLES: usize = 20_000;

/// Moves every item of `from` to the end of `to`, giving back `from`'s memory part by part as
/// its items are moved (the moving starts at its end), so that a long list appended to another
/// is never held twice: appending a chunk's events at once held both copies of them, for a
/// moment, at the peak of a long scan.
fn move_all<T>(to: &mut Vec<T>, mut from: Vec<T>) {
    /// Bytes moved between two releases (few releases, each a cut of a large block's end).
    const PART: usize = 4 << 20;
    let part = (PART / std::mem::size_of::<T>().max(1)).max(1);
    let n = from.len();
    to.reserve_exact(n);
    let base = to.len();
    let spare = &mut to.spare_capacity_mut()[..n];
    let mut left = n;
    while left > 0 {
        let start = left.saturating_sub(part);
        for (slot, item) in spare[start..left].iter_mut().zip(from.drain(start..)) {
            slot.write(item);
        }
        from.shrink_to_fit();
        left = start;
    }
    // SAFETY: the `n` slots past `base` were each written above (every part of `from`, from its
    // end down to its start, went to the same places of `spare`), and `reserve_exact` made room
    // for them
    unsafe { to.set_len(base + n) };
}

#[cfg(test)]
mod move_tests {
    #[test]
    fn moves_in_order_and_drops_each_once() {
        use std::rc::Rc;
        let token = Rc::new(());
        for (had, more) in [(0, 0), (0, 5), (3, 0), (7, 300_000)] {
            let mut to: Vec<(usize, Rc<()>)> = (0..had).map(|i| (i, token.clone())).collect();
            let from: Vec<(usize, Rc<()>)> =
                (had..had + more).map(|i| (i, token.clone())).collect();
            super::move_all(&mut to, from);
            assert_eq!(to.len(), had + more);
            assert!(to.iter().enumerate().all(|(i, (v, _))| *v == i));
            assert_eq!(Rc::strong_count(&token), 1 + had + more);
        }
        assert_eq!(Rc::strong_count(&token), 1);
    }
}
