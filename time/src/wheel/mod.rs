//! The hierarchical timing wheel: 6 levels of 64 slots, 1 ms ticks.
//!
//! Ticks are milliseconds since the driver's origin. Level 0 has 1 ms slots
//! and spans 64 ms; level 5 has slots of 64^5 ms (about 12.4 days) and
//! spans 64^6 ms (about 2.2 years).
//!
//! # Invariants
//!
//! * `elapsed` is the last tick the wheel has processed up to; it never goes
//!   backwards. Every entry in a slot has `tick > elapsed`, and every entry
//!   in `due` has `tick <= elapsed`.
//! * An entry is filed at the level of the highest 6-bit digit in which its
//!   tick differs from `elapsed` (so on levels 0-4 it is always in a slot
//!   *after* the one `elapsed` is in, and the slot's first tick is at or
//!   before the entry's tick). Ticks that differ above 36 bits, i.e. more
//!   than the wheel's span away, are clamped to level 5 in the slot of their
//!   tick's level-5 digit: the wheel reaches that slot no later than the
//!   real tick, and then *re-checks* the entry and files it again. Nothing
//!   overflows and a `Duration::MAX` timer costs one re-filing per 2.2
//!   years.
//! * Processing a slot moves `elapsed` to the slot's first tick, then files
//!   each of its entries again: entries whose tick is now `<= elapsed` go to
//!   `due`, the others cascade to a lower level (their ticks now share every
//!   digit above with `elapsed`).
//! * `this_tick` holds entries whose tick the wheel had already processed
//!   when they registered, but which fire later in the current scheduler
//!   tick (see [`Wheel::insert_this_tick`]): [`Wheel::poll_this_tick`] hands
//!   out only them, [`Wheel::poll`] hands them out with the due ones.
//! * `next_pass` holds entries whose tick the wheel has processed but which
//!   fire at the next fire pass, not this one (see
//!   [`Wheel::defer_to_next_pass`]): [`Wheel::begin_pass`] moves them to
//!   `due`. A pass cannot put them in `due` itself, which it is draining.
//!
//! Insert, remove and re-file are O(1); [`Wheel::poll`] hands out due
//! entries one at a time so the caller can drop the lock between batches.

mod level;

use crate::entry::cell::{EntryRef, Location};
use crate::list::List;
use level::{Expiration, Level, SLOT_BITS};

/// Number of levels.
pub(crate) const LEVELS: usize = 6;

/// The deadline was not after `elapsed`: the caller fires the entry itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct AlreadyDue;

/// A hierarchical timing wheel of intrusive entries. See the module docs.
#[derive(Debug)]
pub(crate) struct Wheel {
    elapsed: u64,
    levels: [Level; LEVELS],
    /// Entries found due by `poll` and not yet handed out.
    due: List,
    /// Entries for the end-of-tick pass (or, failing that, the next poll).
    this_tick: List,
    /// Entries for the next fire pass (moved to `due` when it begins).
    next_pass: List,
}

impl Wheel {
    pub(crate) fn new() -> Wheel {
        Wheel {
            elapsed: 0,
            levels: std::array::from_fn(Level::new),
            due: List::default(),
            this_tick: List::default(),
            next_pass: List::default(),
        }
    }

    /// Files `entry` (unlinked) under `tick`, or says it is already due.
    pub(crate) fn insert(&mut self, entry: EntryRef, tick: u64) -> Result<(), AlreadyDue> {
        if tick <= self.elapsed {
            return Err(AlreadyDue);
        }
        entry.with(|e| {
            debug_assert_eq!(e.location, Location::Unlinked);
            e.tick = tick;
        });
        self.file(entry, tick);
        Ok(())
    }

    /// Files `entry` (unlinked) with the due entries, whatever its tick:
    /// the next [`Wheel::poll`] hands it out first.
    pub(crate) fn insert_due(&mut self, entry: EntryRef, tick: u64) {
        entry.with(|e| {
            debug_assert_eq!(e.location, Location::Unlinked);
            e.tick = tick;
            e.location = Location::Due;
        });
        self.due.push_front(entry);
    }

    /// Files `entry` (unlinked) for the end of the current scheduler tick
    /// ([`Wheel::poll_this_tick`], or the next [`Wheel::poll`]).
    pub(crate) fn insert_this_tick(&mut self, entry: EntryRef, tick: u64) {
        entry.with(|e| {
            debug_assert_eq!(e.location, Location::Unlinked);
            e.tick = tick;
            e.location = Location::ThisTick;
        });
        self.this_tick.push_front(entry);
    }

    /// Files `entry` (unlinked) for the next fire pass, whatever its tick
    /// ([`Wheel::begin_pass`] moves it to the due entries).
    pub(crate) fn defer_to_next_pass(&mut self, entry: EntryRef, tick: u64) {
        entry.with(|e| {
            debug_assert_eq!(e.location, Location::Unlinked);
            e.tick = tick;
            e.location = Location::NextPass;
        });
        self.next_pass.push_front(entry);
    }

    /// A fire pass begins: the entries deferred to it become due (the
    /// pass's first [`Wheel::poll`] hands them out).
    pub(crate) fn begin_pass(&mut self) {
        while let Some(entry) = self.next_pass.pop_front() {
            entry.with(|e| e.location = Location::Due);
            self.due.push_front(entry);
        }
    }

    /// Hands out the next entry filed for the end of the current tick,
    /// unlinked; `None` when there is none. Moves nothing else.
    pub(crate) fn poll_this_tick(&mut self) -> Option<EntryRef> {
        let entry = self.this_tick.pop_front()?;
        entry.with(|e| e.location = Location::Unlinked);
        Some(entry)
    }

    /// Files an entry whose `tick > elapsed` at its level.
    fn file(&mut self, entry: EntryRef, tick: u64) {
        let level = level_for(self.elapsed, tick);
        let slot = self.levels[level].add(entry, tick);
        entry.with(|e| {
            e.location = Location::Slot {
                level: level as u8,
                slot: slot as u8,
            }
        });
    }

    /// Unlinks `entry` from wherever the wheel filed it (no-op if nowhere).
    pub(crate) fn remove(&mut self, entry: EntryRef) {
        match entry.with(|e| e.location) {
            Location::Unlinked => return,
            Location::Slot { level, slot } => {
                self.levels[level as usize].remove(entry, slot as usize)
            }
            Location::Due => self.due.remove(entry),
            Location::ThisTick => self.this_tick.remove(entry),
            Location::NextPass => self.next_pass.remove(entry),
        }
        entry.with(|e| e.location = Location::Unlinked);
    }

    /// The earliest tick at which [`Wheel::poll`] has work (a fire or a
    /// cascade): `elapsed` if entries are due already, `None` if empty.
    pub(crate) fn next_expiration_tick(&self) -> Option<u64> {
        if !self.due.is_empty() || !self.this_tick.is_empty() || !self.next_pass.is_empty() {
            return Some(self.elapsed);
        }
        self.next_expiration().map(|e| e.deadline)
    }

    fn next_expiration(&self) -> Option<Expiration> {
        let mut best: Option<Expiration> = None;
        for level in &self.levels {
            if let Some(exp) = level.next_expiration(self.elapsed) {
                if best.is_none_or(|b| exp.deadline < b.deadline) {
                    best = Some(exp);
                }
            }
        }
        best
    }

    /// Hands out the next entry with `tick <= horizon`, unlinked,
    /// cascading slots as needed; at `None`, `elapsed` has reached `horizon`.
    pub(crate) fn poll(&mut self, horizon: u64) -> Option<EntryRef> {
        loop {
            if let Some(entry) = self.due.pop_front() {
                entry.with(|e| e.location = Location::Unlinked);
                return Some(entry);
            }
            if let Some(entry) = self.poll_this_tick() {
                return Some(entry);
            }
            match self.next_expiration() {
                Some(exp) if exp.deadline <= horizon => self.process(exp),
                _ => {
                    self.elapsed = self.elapsed.max(horizon);
                    return None;
                }
            }
        }
    }

    fn process(&mut self, exp: Expiration) {
        let mut entries = self.levels[exp.level].take_slot(exp.slot);
        debug_assert!(exp.deadline >= self.elapsed);
        self.elapsed = exp.deadline;
        while let Some(entry) = entries.pop_front() {
            let tick = entry.with(|e| e.tick);
            if tick <= self.elapsed {
                self.due.push_front(entry);
                entry.with(|e| e.location = Location::Due);
            } else {
                self.file(entry, tick);
            }
        }
    }

    /// Unlinks and returns any one entry (for shutdown), or `None` if empty.
    pub(crate) fn drain_one(&mut self) -> Option<EntryRef> {
        if let Some(entry) = self.due.pop_front() {
            entry.with(|e| e.location = Location::Unlinked);
            return Some(entry);
        }
        if let Some(entry) = self.poll_this_tick() {
            return Some(entry);
        }
        if let Some(entry) = self.next_pass.pop_front() {
            entry.with(|e| e.location = Location::Unlinked);
            return Some(entry);
        }
        let exp = self.next_expiration()?;
        let mut list = self.levels[exp.level].take_slot(exp.slot);
        let first = list.pop_front();
        while let Some(entry) = list.pop_front() {
            self.due.push_front(entry);
            entry.with(|e| e.location = Location::Due);
        }
        if let Some(entry) = first {
            entry.with(|e| e.location = Location::Unlinked);
        }
        first
    }
}

/// The level an entry with `tick` is filed at when the wheel is at
/// `elapsed`: the highest differing 6-bit digit, clamped to the top level.
pub(crate) fn level_for(elapsed: u64, tick: u64) -> usize {
    let differing = (elapsed ^ tick) | ((1 << SLOT_BITS) - 1);
    let highest_bit = (u64::BITS - 1 - differing.leading_zeros()) as usize;
    (highest_bit / SLOT_BITS as usize).min(LEVELS - 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn level_is_the_highest_differing_digit() {
        assert_eq!(level_for(0, 1), 0);
        assert_eq!(level_for(0, 63), 0);
        assert_eq!(level_for(0, 64), 1);
        assert_eq!(level_for(63, 64), 1);
        assert_eq!(level_for(64, 127), 0);
        assert_eq!(level_for(0, 64 * 64), 2);
        assert_eq!(level_for(0, (1 << 36) - 1), 5);
        assert_eq!(level_for(0, 1 << 36), 5, "beyond the span: clamped");
        assert_eq!(level_for(5, u64::MAX), 5);
    }
}
