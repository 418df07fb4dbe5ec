//! The intrusive timer entry, and every `unsafe` of the crate outside
//! [`list`](crate::list): pin projections and the raw entry pointer.
//!
//! # Ownership
//!
//! A [`TimerEntry`] is embedded in a [`Sleep`] (and so in an `Interval` or a
//! [`Timeout`]) and pinned there. It has two parts:
//!
//! * owner fields (`handle`, `deadline`, `at_least`, `linked_once`), touched
//!   only through the owner's `&mut`/`&`;
//! * an [`EntryCell`]: the [`EntryShared`] the wheel links into its lists
//!   through [`EntryRef`] raw pointers, in an `UnsafeCell`, and the
//!   `fired` flag next to it. Once the entry has been handed to the wheel
//!   (`linked_once`), every access to `EntryShared`, by the owner or by the
//!   driver, happens while holding the wheel lock of the entry's
//!   [`TimerShared`](crate::timer_shared::TimerShared), with one exception,
//!   the fired fast path below.
//!
//! # The fired fast path
//!
//! A `Sleep` is polled once more after it fires (to complete) and is then
//! dropped or reset: with the lock on both, every period of a
//! `sleep_until` loop paid three lock round trips where one (the
//! registration) is needed. So the driver, when it fires an entry (under
//! the lock, after unlinking it and taking its waker), stores `fired =
//! true` with `Release` as its **last access** to that entry; every
//! registration (under the lock) stores `fired` to match the state it
//! leaves. An owner that loads `fired == true` with `Acquire` therefore
//! knows that the driver is done with the entry and cannot reach it again
//! (it is in no list, and only a registration by the owner files it): it
//! completes the poll, answers `is_elapsed` and drops the entry without
//! the lock. tokio's entries carry an atomic state for the same reason.
//!
//! # Why this is sound
//!
//! 1. The wheel only holds pointers to entries that are pinned: registration
//!    takes `Pin<&mut TimerEntry>`, and `TimerEntry` is `!Unpin`.
//! 2. `TimerEntry::drop` takes the lock and unlinks the entry before its
//!    memory goes away, so a pointer in the wheel is never dangling; an
//!    entry whose `fired` flag it loads as set is in no list (fired entries
//!    are unlinked first), so it needs no unlinking.
//! 3. Every [`EntryRef::with`] runs under the lock (or before the entry was
//!    ever handed to the wheel, when nothing else can reach it, or after
//!    the owner loaded `fired == true`, when the driver cannot reach it,
//!    see above), and calls to `with` are never nested on the same entry,
//!    so the `&mut EntryShared` they create never alias.
//! 4. `&mut TimerEntry` coexisting with the driver's raw-pointer access to
//!    the `UnsafeCell` is allowed because `TimerEntry` is `!Unpin` (the same
//!    rule every intrusive async primitive relies on).
//! 5. Wakers are never dropped or woken while the lock is held: a waker may
//!    run arbitrary code, including dropping another `Sleep` (which locks).

use std::marker::PhantomPinned;
use std::pin::Pin;
use std::ptr::NonNull;
use std::task::{Context, Poll, Waker};

use crate::handle::Handle;
use crate::sleep::Sleep;
use crate::sync::{AtomicBool, Ordering, UnsafeCell};
use crate::timeout::Timeout;
use crate::timer_shared::InWindow;
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
    /// In the wheel's list of entries for the next fire pass: processed
    /// ticks, but past the grid horizon of the pass that processed them.
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
    /// The deadline in wheel ticks (milliseconds since the driver's origin,
    /// rounded up so that a timer never fires before its deadline with a
    /// zero window).
    pub(crate) deadline_tick: u64,
    /// The exact deadline, for the error histogram.
    pub(crate) deadline: Instant,
    /// Fire only once the deadline has passed, ignoring the window.
    pub(crate) at_least: bool,
    pub(crate) state: EntryState,
    /// The task to wake when the entry fires.
    pub(crate) waker: Option<Waker>,
}

/// What the wheel's lists point to: an entry's shared part and the flag
/// of its fired fast path (see the module docs).
#[derive(Debug)]
pub(crate) struct EntryCell {
    /// The entry fired and the driver is done with it. Stored `true`
    /// (`Release`) by the fire pass as its last access to the entry, and to
    /// the state a registration leaves (both under the lock).
    fired: AtomicBool,
    shared: UnsafeCell<EntryShared>,
}

/// A pointer to an entry's [`EntryCell`], as stored in the wheel's lists.
///
/// Invariant (see the module docs): it points to a live, pinned entry for as
/// long as it is reachable from the wheel, and it is dereferenced (by
/// [`EntryRef::with`]) only under the wheel lock, never nested.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct EntryRef(NonNull<EntryCell>);

// SAFETY: an EntryRef is only dereferenced under the wheel lock (invariant
// above), so moving it to the thread that holds the lock is sound; the data
// it points to (a Waker, plain integers) is Send.
unsafe impl Send for EntryRef {}

impl EntryRef {
    fn new(cell: &EntryCell) -> EntryRef {
        EntryRef(NonNull::from(cell))
    }

    fn cell(&self) -> &EntryCell {
        // SAFETY: by the EntryRef invariant the entry (and so its cell) is
        // alive while anyone can reach this EntryRef; the cell itself is only
        // ever borrowed shared.
        unsafe { self.0.as_ref() }
    }

    /// Publishes the entry's state to its owner's fired fast path: under
    /// the lock, after the state was written. `true` only from the fire
    /// pass's last access to an entry it unlinked (see the module docs).
    pub(crate) fn set_fired(self, fired: bool) {
        self.cell().fired.store(fired, Ordering::Release);
    }

    /// Runs `f` with exclusive access to the entry's shared part.
    ///
    /// Callers hold the wheel lock (or own an entry the wheel has never
    /// seen) and never call `with` on the same entry from inside `f`.
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
    fn read<R>(self, f: impl FnOnce(&EntryShared) -> R) -> R {
        self.cell().shared.with(|ptr| {
            // SAFETY: the entry is alive (borrowed by the caller) and nobody
            // holds `&mut` to it: writes need `&mut TimerEntry` or the lock,
            // and an entry the wheel never saw is not reachable under the
            // lock.
            f(unsafe { &*ptr })
        })
    }
}

/// A timer registration that can be pinned inside a future: the heart of
/// [`Sleep`].
pub(crate) struct TimerEntry {
    handle: Handle,
    deadline: Instant,
    at_least: bool,
    /// Where the deadline fires if it falls inside the window the last
    /// pass processed: set by the constructor and by each reset.
    in_window: InWindow,
    /// The wheel may know this entry: from now on, lock before touching
    /// `cell.shared` (unless `cell.fired` is set), and unlink on drop.
    linked_once: bool,
    cell: EntryCell,
    _pinned: PhantomPinned,
}

// SAFETY: `cell.shared` is only accessed under the wheel lock once the wheel
// knows the entry (or after loading `cell.fired == true`, when the driver is
// done with it), or through `&mut self` before; the owner fields are plain
// data read through `&self` and written through `&mut self`. Waker is
// Send + Sync.
unsafe impl Send for TimerEntry {}
// SAFETY: `&self` methods only read owner fields, or read `cell.shared`
// under the lock or after loading `cell.fired == true` (see `is_elapsed`).
unsafe impl Sync for TimerEntry {}

impl TimerEntry {
    /// A new entry; `elapsed`: the caller knows the deadline has passed
    /// (a zero duration), so the entry starts fired and never registers.
    pub(crate) fn new(
        handle: Handle,
        deadline: Instant,
        at_least: bool,
        in_window: InWindow,
        elapsed: bool,
    ) -> TimerEntry {
        TimerEntry {
            handle,
            deadline,
            at_least,
            in_window,
            linked_once: false,
            cell: EntryCell {
                fired: AtomicBool::new(false),
                shared: UnsafeCell::new(EntryShared {
                    prev: None,
                    next: None,
                    location: Location::Unlinked,
                    tick: 0,
                    deadline_tick: 0,
                    deadline,
                    at_least,
                    state: if elapsed {
                        EntryState::Fired
                    } else {
                        EntryState::Idle
                    },
                    waker: None,
                }),
            },
            _pinned: PhantomPinned,
        }
    }

    pub(crate) fn deadline(&self) -> Instant {
        self.deadline
    }

    pub(crate) fn is_at_least(&self) -> bool {
        self.at_least
    }

    pub(crate) fn handle(&self) -> &Handle {
        &self.handle
    }

    /// Whether the entry fired (its future would complete if polled).
    pub(crate) fn is_elapsed(&self) -> bool {
        let entry = EntryRef::new(&self.cell);
        if !self.linked_once {
            return entry.read(|e| e.state == EntryState::Fired);
        }
        if self.fired_fast() {
            return true;
        }
        let _guard = self.handle.shared().lock_state();
        entry.with(|e| e.state == EntryState::Fired)
    }

    /// Registers on first poll; completes once fired (on the first poll
    /// already if the deadline had passed at the driver's last fire pass;
    /// never if it is in the future, see `TimerShared::register`).
    ///
    /// # Panics
    ///
    /// If the driver shut down while the entry was registered.
    pub(crate) fn poll_elapsed(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: nothing is moved out of `this`; only plain owner fields are
        // written, the pinned `shared` cell stays where it is.
        let this = unsafe { self.get_unchecked_mut() };
        let entry = EntryRef::new(&this.cell);
        let shared = this.handle.shared();
        if this.linked_once && this.fired_fast() {
            return Poll::Ready(());
        }
        if !this.linked_once {
            if entry.with(|e| e.state == EntryState::Fired) {
                return Poll::Ready(());
            }
            // No clock read here (it would cost a third of a registration):
            // the wheel and the last pass's `now` say whether it is due.
            this.linked_once = true;
            let state = shared.register(
                entry,
                this.deadline,
                this.at_least,
                this.in_window,
                Some(cx.waker()),
                false,
            );
            return Self::outcome(state);
        }
        Self::outcome(shared.poll_registered(entry, cx.waker()))
    }

    /// Whether the driver fired the entry and is done with it (the fired
    /// fast path, see the module docs): then `cell.shared` may be accessed
    /// without the lock until the next registration.
    fn fired_fast(&self) -> bool {
        self.cell.fired.load(Ordering::Acquire)
    }

    fn outcome(state: EntryState) -> Poll<()> {
        match state {
            EntryState::Fired => Poll::Ready(()),
            EntryState::Shutdown => panic!(
                "the Tempo timer driver shut down (its runtime was dropped) while this timer was pending"
            ),
            EntryState::Idle | EntryState::Linked => Poll::Pending,
        }
    }

    /// Moves the deadline; re-arms at once, keeping the registered waker
    /// (and waking it if the new deadline is already due). `in_window`:
    /// where the new deadline fires if it falls inside the window the last
    /// pass processed.
    pub(crate) fn reset(self: Pin<&mut Self>, deadline: Instant, in_window: InWindow) {
        // SAFETY: as in `poll_elapsed`, nothing is moved out.
        let this = unsafe { self.get_unchecked_mut() };
        this.deadline = deadline;
        this.in_window = in_window;
        let entry = EntryRef::new(&this.cell);
        if !this.linked_once {
            entry.with(|e| {
                e.state = EntryState::Idle;
                e.deadline = deadline;
            });
            return;
        }
        this.handle
            .shared()
            .register(entry, deadline, this.at_least, in_window, None, true);
    }
}

impl std::fmt::Debug for TimerEntry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TimerEntry")
            .field("deadline", &self.deadline)
            .field("at_least", &self.at_least)
            .field("registered", &self.linked_once)
            .finish_non_exhaustive()
    }
}

impl Drop for TimerEntry {
    fn drop(&mut self) {
        if !self.linked_once {
            return;
        }
        let entry = EntryRef::new(&self.cell);
        if self.fired_fast() {
            // In no list and out of the driver's reach: no lock. The waker
            // (if a registration left one) goes with the entry, and is
            // taken through `with` so that a loom model sees the access.
            drop(entry.with(|e| e.waker.take()));
            return;
        }
        self.handle.shared().deregister(entry);
    }
}

// Pin projections of the futures that embed an entry. Each type has no
// `Drop` impl that could move its fields, no manual `Unpin` impl (they are
// `!Unpin` through `TimerEntry`'s `PhantomPinned`), and never hands out
// `&mut` to a pinned field other than through these projections.

impl Sleep {
    pub(crate) fn entry_pin(self: Pin<&mut Self>) -> Pin<&mut TimerEntry> {
        // SAFETY: `entry` is structurally pinned in `Sleep` (see above).
        unsafe { self.map_unchecked_mut(|s| &mut s.entry) }
    }
}

impl<F> Timeout<F> {
    pub(crate) fn project(self: Pin<&mut Self>) -> (Pin<&mut F>, Pin<&mut Sleep>) {
        // SAFETY: both fields are structurally pinned in `Timeout` (see
        // above); the two `&mut` borrow disjoint fields.
        unsafe {
            let this = self.get_unchecked_mut();
            (
                Pin::new_unchecked(&mut this.value),
                Pin::new_unchecked(&mut this.delay),
            )
        }
    }
}
