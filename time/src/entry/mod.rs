//! The intrusive timer entry, and the raw entry pointer; with [`list`](crate::list) and
//! the pin projections of `Sleep` and `Timeout`, every `unsafe` of the crate.
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
//!   [`Timers`](crate::timers::Timers), with one exception,
//!   the fired fast path below.
//!
//! # The fired fast path
//!
//! A fired `Sleep` completes, then is dropped or reset, without the lock:
//! the driver, when it fires an entry (under the lock, after unlinking it
//! and taking its waker), stores `fired = true` with `Release` as its
//! **last access** to that entry; every
//! registration (under the lock) stores `fired` to match the state it
//! leaves. An owner that loads `fired == true` with `Acquire` therefore
//! knows that the driver is done with the entry and cannot reach it again
//! (it is in no list, and only a registration by the owner files it): it
//! completes the poll, answers `is_elapsed` and drops the entry without
//! the lock.
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
use std::task::{Context, Poll};

use crate::handle::Handle;
use crate::sync::{AtomicBool, Ordering, UnsafeCell};
use crate::timers::InWindow;
use crate::Instant;

use cell::{EntryCell, EntryRef, EntryShared, EntryState, Location};

pub(crate) mod cell;

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
        let _guard = self.handle.timers().lock_state();
        entry.with(|e| e.state == EntryState::Fired)
    }

    /// Registers on first poll; completes once fired.
    ///
    /// # Panics
    ///
    /// If the driver shut down while the entry was registered.
    pub(crate) fn poll_elapsed(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        // SAFETY: nothing is moved out of `this`; only plain owner fields are
        // written, the pinned `shared` cell stays where it is.
        let this = unsafe { self.get_unchecked_mut() };
        let entry = EntryRef::new(&this.cell);
        let timers = this.handle.timers();
        if this.linked_once && this.fired_fast() {
            return Poll::Ready(());
        }
        if !this.linked_once {
            if entry.with(|e| e.state == EntryState::Fired) {
                return Poll::Ready(());
            }
            // No clock read: the last pass's `now` says whether it is due.
            this.linked_once = true;
            let state = timers.register(
                entry,
                this.deadline,
                this.at_least,
                this.in_window,
                Some(cx.waker()),
                false,
            );
            return Self::outcome(state);
        }
        Self::outcome(timers.poll_registered(entry, cx.waker()))
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
    /// (woken if the new deadline is already due).
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
            .timers()
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
            // Out of the driver's reach: no lock. Taken through `with` so
            // that a loom model sees the access.
            drop(entry.with(|e| e.waker.take()));
            return;
        }
        self.handle.timers().deregister(entry);
    }
}
