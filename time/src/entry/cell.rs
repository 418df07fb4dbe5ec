//! The part of a timer entry the wheel links into its lists, and
//! [`EntryRef`], the raw pointer the lists hold (sound by the rules in the
//! [`entry`](super) module docs).

use std::ptr::NonNull;
use std::task::Waker;

use crate::sync::{AtomicBool, Ordering, UnsafeCell};
use crate::Instant;

/// Where the wheel filed an entry.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    /// In no list.
    Unlinked,
    /// In `levels[level].slots[slot]`.
    Slot { level: u8, slot: u8 },
    /// In the wheel's list of due entries not yet handed to the driver.
    Due,
    /// In the wheel's list of entries for the end of the current tick.
    ThisTick,
    /// In the wheel's list of entries for the next fire pass.
    NextPass,
}

/// The life cycle of an entry, as the wheel sees it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum EntryState {
    /// Not registered (a new `Sleep` that was never polled).
    Idle,
    /// In the wheel, waiting for its tick.
    Linked,
    /// Its deadline passed: the future completes.
    Fired,
    /// The driver shut down while the entry was registered.
    Shutdown,
}

/// The part of an entry the wheel reads and writes, under its lock.
#[derive(Debug)]
pub(crate) struct EntryShared {
    /// Previous entry in the same list.
    pub(crate) prev: Option<EntryRef>,
    /// Next entry in the same list.
    pub(crate) next: Option<EntryRef>,
    /// Which list the entry is in.
    pub(crate) location: Location,
    /// The tick the wheel files the entry under: `deadline_tick`, plus the
    /// firing window for never-early entries.
    pub(crate) tick: u64,
    /// The deadline in wheel ticks, rounded up.
    pub(crate) deadline_tick: u64,
    /// The exact deadline, for the error histogram.
    pub(crate) deadline: Instant,
    /// Fire only once the deadline has passed, ignoring the window.
    pub(crate) at_least: bool,
    pub(crate) state: EntryState,
    /// The task to wake when the entry fires.
    pub(crate) waker: Option<Waker>,
}

/// What the wheel's lists point to: the shared part and the fired flag.
#[derive(Debug)]
pub(crate) struct EntryCell {
    /// The entry fired and the driver is done with it. Stored `true`
    /// (`Release`) by the fire pass as its last access to the entry, and to
    /// the state a registration leaves (both under the lock).
    pub(super) fired: AtomicBool,
    pub(super) shared: UnsafeCell<EntryShared>,
}

/// A pointer to an entry's [`EntryCell`], as stored in the wheel's lists.
///
/// Invariant (see the [`entry`](super) docs): it points to a live, pinned entry for as
/// long as it is reachable from the wheel, and it is dereferenced (by
/// [`EntryRef::with`]) only under the wheel lock, never nested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryRef(NonNull<EntryCell>);

// SAFETY: an EntryRef is only dereferenced under the wheel lock (invariant
// above), so moving it to the thread that holds the lock is sound; the data
// it points to (a Waker, plain integers) is Send.
unsafe impl Send for EntryRef {}

impl EntryRef {
    pub(super) fn new(cell: &EntryCell) -> EntryRef {
        EntryRef(NonNull::from(cell))
    }

    fn cell(&self) -> &EntryCell {
        // SAFETY: by the EntryRef invariant the entry (and so its cell) is
        // alive while anyone can reach this EntryRef; the cell itself is only
        // ever borrowed shared.
        unsafe { self.0.as_ref() }
    }

    /// Publishes the state to the owner's fired fast path, under the lock;
    /// `true` only as the fire pass's last access to the entry.
    pub(crate) fn set_fired(self, fired: bool) {
        self.cell().fired.store(fired, Ordering::Release);
    }

    /// Runs `f` with exclusive access to the entry's shared part. Callers
    /// hold the wheel lock (or own an unseen entry) and never nest `with`.
    pub(crate) fn with<R>(self, f: impl FnOnce(&mut EntryShared) -> R) -> R {
        self.cell().shared.with_mut(|ptr| {
            // SAFETY: by the EntryRef invariant the pointee is alive (its
            // owner unlinks it under the lock before dropping it) and the
            // caller holds the lock without nesting, so this is the only live
            // reference.
            f(unsafe { &mut *ptr })
        })
    }

    /// Runs `f` with shared access: for an owner holding `&TimerEntry` of an
    /// entry the wheel has never seen (other `&` holders only read too).
    pub(super) fn read<R>(self, f: impl FnOnce(&EntryShared) -> R) -> R {
        self.cell().shared.with(|ptr| {
            // SAFETY: the entry is alive (borrowed by the caller) and nobody
            // holds `&mut` to it: writes need `&mut TimerEntry` or the lock,
            // and an entry the wheel never saw is not reachable under the
            // lock.
            f(unsafe { &*ptr })
        })
    }
}
