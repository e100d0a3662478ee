//! The global budget of decoded bytes (`--max-total-bytes`), shared by every input and applied
//! in input order, not in the order the workers happen to read: the same inputs are cut at the
//! same byte whatever the scheduling.
//!
//! Inputs are numbered by discovery order (slots). While the bytes granted to all slots stay
//! under the cap, every request is granted at once (nothing is cut, so the order cannot matter).
//! A request that would pass the cap waits until every earlier slot is finished, then gets what
//! the earlier slots left, counted as if they had been read one after the other. A later slot
//! that was granted bytes in the first regime and, once the earlier slots finished, turns out
//! to have taken more than its share in input order is reported by [`Budget::overdrawn`]; the
//! caller reads it again with [`Budget::fixed`] allowances. That second read happens only when
//! the cap is reached and the workers ran out of order.

use std::sync::{Condvar, Mutex};

#[derive(Default)]
struct State {
    used: Vec<u64>,
    done: Vec<bool>,
}

/// A deterministic budget of bytes over numbered slots.
pub struct Budget {
    cap: u64,
    /// Fixed allowances per slot (a second read), instead of the shared cap.
    fixed: Option<Vec<u64>>,
    state: Mutex<State>,
    wake: Condvar,
}

impl Budget {
    /// A budget of `cap` bytes shared by `slots` slots, in slot order.
    pub fn new(cap: u64, slots: usize) -> Budget {
        Budget {
            cap,
            fixed: None,
            state: Mutex::new(State {
                used: vec![0; slots],
                done: vec![false; slots],
            }),
            wake: Condvar::new(),
        }
    }

    /// A budget where slot `i` may take at most `allow[i]` bytes, whatever the others do.
    pub fn fixed(allow: Vec<u64>) -> Budget {
        let n = allow.len();
        let mut b = Budget::new(u64::MAX, n);
        b.fixed = Some(allow);
        b
    }

    /// A budget for one slot that never cuts (tests and tools reading one file).
    pub fn unlimited() -> Budget {
        Budget::new(u64::MAX, 1)
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, State> {
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Asks for `n` bytes for slot `slot`; returns how many are granted (fewer means the budget
    /// is spent: the caller stops reading there). May wait for earlier slots to finish.
    pub fn request(&self, slot: usize, n: u64) -> u64 {
        let mut s = self.lock();
        if slot >= s.used.len() {
            return n;
        }
        if let Some(allow) = &self.fixed {
            let g = n.min(allow[slot].saturating_sub(s.used[slot]));
            s.used[slot] += g;
            return g;
        }
        let total: u64 = s.used.iter().fold(0u64, |a, &b| a.saturating_add(b));
        if total.saturating_add(n) <= self.cap {
            s.used[slot] += n;
            return n;
        }
        while s.done[..slot].iter().any(|d| !d) {
            s = self.wake.wait(s).unwrap_or_else(|e| e.into_inner());
        }
        let before = shares(&s.used[..slot], self.cap).iter().sum::<u64>();
        let left = self.cap.saturating_sub(before).saturating_sub(s.used[slot]);
        let g = n.min(left);
        s.used[slot] += g;
        g
    }

    /// Marks slot `slot` as finished: it asks for nothing more.
    pub fn finish(&self, slot: usize) {
        let mut s = self.lock();
        if let Some(d) = s.done.get_mut(slot) {
            *d = true;
        }
        drop(s);
        self.wake.notify_all();
    }

    /// Slots that took more than their share in input order, with that share: they must be
    /// read again with [`Budget::fixed`] allowances. Call once every slot is finished.
    pub fn overdrawn(&self) -> Option<Vec<(usize, u64)>> {
        if self.fixed.is_some() {
            return None;
        }
        let s = self.lock();
        let share = shares(&s.used, self.cap);
        let over: Vec<(usize, u64)> = (0..s.used.len())
            .filter(|&i| s.used[i] > share[i])
            .map(|i| (i, share[i]))
            .collect();
        (!over.is_empty()).then_some(over)
    }

    /// Each slot's share, in order: what it used, up to what the slots before it left.
    pub fn shares(&self) -> Vec<u64> {
        shares(&self.lock().used, self.cap)
    }
}

fn shares(used: &[u64], cap: u64) -> Vec<u64> {
    let mut left = cap;
    used.iter()
        .map(|&u| {
            let g = u.min(left);
            left -= g;
            g
        })
        .collect()
}

/// Marks a slot finished when dropped, so that a worker that panics does not leave the later
/// slots waiting for it.
pub struct FinishGuard<'a>(pub &'a Budget, pub usize);

impl Drop for FinishGuard<'_> {
    fn drop(&mut self) {
        self.0.finish(self.1);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_under_the_cap_are_granted_at_once_in_any_order() {
        let b = Budget::new(100, 3);
        assert_eq!(b.request(2, 30), 30);
        assert_eq!(b.request(0, 30), 30);
        assert_eq!(b.request(1, 30), 30);
        assert!(b.overdrawn().is_none());
    }

    #[test]
    fn a_later_slot_that_ran_ahead_is_overdrawn_by_its_share_in_order() {
        let b = Budget::new(100, 2);
        assert_eq!(b.request(1, 80), 80);
        // slot 0 passes the cap: no earlier slot, it gets what input order gives it
        assert_eq!(b.request(0, 90), 90);
        b.finish(0);
        b.finish(1);
        assert_eq!(b.overdrawn(), Some(vec![(1, 10)]));
        let f = Budget::fixed(vec![90, 10]);
        assert_eq!(f.request(1, 80), 10);
    }
}
