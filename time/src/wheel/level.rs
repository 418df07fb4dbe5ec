//! One level of the timing wheel: 64 slots and a bitmap of occupied slots.
//!
//! Level `L` has slots of `64^L` ticks, so it spans `64^(L+1)` ticks. An
//! entry is filed at the level of the highest 6-bit digit in which its tick
//! differs from the wheel's `elapsed` tick, in the slot given by that digit
//! of its tick. Finding the next occupied slot is a rotate and a
//! trailing-zeros count on the bitmap: O(1).

use crate::entry::cell::EntryRef;
use crate::list::List;

/// Slots per level, and the base of the tick digits.
pub(crate) const SLOTS: usize = 64;
/// Bits per digit.
pub(crate) const SLOT_BITS: u32 = 6;

/// A slot that is due: the wheel processes it when `deadline <= horizon`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Expiration {
    pub(crate) level: usize,
    pub(crate) slot: usize,
    /// The first tick the slot covers (its entries' ticks are at or after).
    pub(crate) deadline: u64,
}

/// One level of the wheel.
#[derive(Debug)]
pub(crate) struct Level {
    level: usize,
    /// Bit `i` set iff `slots[i]` is not empty.
    occupied: u64,
    slots: [List; SLOTS],
}

/// Ticks covered by one slot of `level`.
pub(crate) fn slot_range(level: usize) -> u64 {
    1u64 << (SLOT_BITS as usize * level)
}

/// Ticks covered by the whole `level`.
pub(crate) fn level_range(level: usize) -> u64 {
    slot_range(level) << SLOT_BITS
}

/// The slot of `level` that `tick` falls in.
pub(crate) fn slot_for(tick: u64, level: usize) -> usize {
    ((tick >> (SLOT_BITS as usize * level)) & (SLOTS as u64 - 1)) as usize
}

impl Level {
    pub(crate) fn new(level: usize) -> Level {
        Level {
            level,
            occupied: 0,
            slots: std::array::from_fn(|_| List::default()),
        }
    }

    /// Files `entry` in the slot of `tick`; returns that slot.
    pub(crate) fn add(&mut self, entry: EntryRef, tick: u64) -> usize {
        let slot = slot_for(tick, self.level);
        self.slots[slot].push_front(entry);
        self.occupied |= 1 << slot;
        slot
    }

    /// Unlinks `entry` from `slot`.
    pub(crate) fn remove(&mut self, entry: EntryRef, slot: usize) {
        self.slots[slot].remove(entry);
        if self.slots[slot].is_empty() {
            self.occupied &= !(1 << slot);
        }
    }

    /// Empties `slot` and returns its entries.
    pub(crate) fn take_slot(&mut self, slot: usize) -> List {
        self.occupied &= !(1 << slot);
        std::mem::take(&mut self.slots[slot])
    }

    /// The next occupied slot after `elapsed`, in the order the wheel
    /// reaches them (the current slot last). Only the top level can hold
    /// entries a turn ahead: they are re-checked when their slot comes.
    pub(crate) fn next_expiration(&self, elapsed: u64) -> Option<Expiration> {
        if self.occupied == 0 {
            return None;
        }
        let current = slot_for(elapsed, self.level);
        let after = (current + 1) % SLOTS;
        let distance = self.occupied.rotate_right(after as u32).trailing_zeros() as usize;
        let slot = (after + distance) % SLOTS;
        let level_start = elapsed & !(level_range(self.level) - 1);
        let mut deadline = level_start.saturating_add(slot as u64 * slot_range(self.level));
        if slot <= current {
            deadline = deadline.saturating_add(level_range(self.level));
        }
        Some(Expiration {
            level: self.level,
            slot,
            deadline,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges() {
        assert_eq!(slot_range(0), 1);
        assert_eq!(level_range(0), 64);
        assert_eq!(slot_range(1), 64);
        assert_eq!(level_range(5), 1 << 36);
        assert_eq!(slot_for(130, 0), 2);
        assert_eq!(slot_for(130, 1), 2);
        assert_eq!(slot_for(64 * 64 * 3 + 5, 2), 3);
    }
}
