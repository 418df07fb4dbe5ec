//! [`TimerShared`]: the timer state shared by a [`Driver`](crate::Driver) and its
//! [`Handle`](crate::Handle)s: the wheel under a lock, the tick the driver
//! is parked towards, and the inner driver's unpark handle.
//!
//! # Ticks
//!
//! Wheel ticks are whole milliseconds since `origin` (the clock's time when
//! the driver was created). A deadline's tick is rounded *up*, the current
//! time's tick *down*, so that with a zero firing window a timer never fires
//! before its deadline.
//!
//! # Firing window and the two timer policies
//!
//! A fire pass at time `now` fires every entry whose tick is at or before
//! `now_tick + window_ticks`:
//!
//! * **nearest tick** (the default): a scheduler that fires every `T` with
//!   a window of `T/2` fires each timer at the tick closest to its
//!   deadline: error within `±T/2`, mean about zero;
//! * **never early** (`sleep_at_least`, `interval_at_least`, or
//!   [`Driver::set_never_early`](crate::Driver::set_never_early)): the entry
//!   is filed at `deadline_tick + window_ticks`, and a pass that finds it
//!   with `deadline_tick > now_tick` (the window changed since) files it
//!   again instead of firing it. Error within `[0, T]`: tokio's rule.
//!
//! # Timers created inside the window: never in the creating poll
//!
//! A pass moves the wheel to `now_tick + window`, so a timer registered
//! after it with a deadline inside that window finds its tick already
//! processed. Firing it at once would complete a future deadline in the
//! poll that created it: under a throttle of 20 ms, `loop { sleep(1 ms) }`
//! then spun through the window (millions of iterations per second) until
//! the next tick moved it. Such an entry is instead filed with the due
//! entries and fires at the *next* pass, the nearest tick after the one
//! that created it; a driver blocked meanwhile is unparked. So a timer
//! whose deadline is in the future completes at a later pass, and a loop
//! over one costs at most a poll per tick.
//!
//! Only a deadline at or before the `now` of the last locked pass
//! (`WheelState::last_pass`) is known to have passed without reading the clock:
//! that one still completes on its first poll, as in tokio. With a zero
//! window (the basic scheduler) every processed tick is at or before that
//! `now`, so nothing changes there.
//!
//! # Cross-thread registration
//!
//! Before blocking, the driver stores in `parked_until` the tick it will wake
//! at, under the wheel lock. A registration (under the same lock) whose wake
//! tick is earlier lowers `parked_until` and unparks the inner driver after
//! releasing the lock. While the driver runs (`parked_until == NOT_PARKED`)
//! no registration unparks it: the driver recomputes its deadline under the
//! lock before it parks again, so nothing is lost.

use std::any::Any;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::task::Waker;
use std::time::Duration;

use tempo_park::Unpark;

use crate::entry::{EntryRef, EntryState};
use crate::histogram::TimerErrorHistogram;
use crate::sync::{AtomicU64, Mutex, MutexGuard, Ordering};
use crate::wheel::{AlreadyDue, Wheel};
use crate::{Clock, Instant};

/// `parked_until` value while the driver is not blocked: no tick is earlier.
pub(crate) const NOT_PARKED: u64 = 0;

/// Wakers collected under the lock and woken after releasing it.
const WAKE_BATCH: usize = 32;

/// The state behind the lock.
pub(crate) struct WheelState {
    pub(crate) wheel: Wheel,
    pub(crate) window_ticks: u64,
    pub(crate) never_early: bool,
    pub(crate) shutdown: bool,
    pub(crate) histogram: TimerErrorHistogram,
    /// The `now` of the last fire pass that took the lock (the one that
    /// moved the wheel to `now_tick + window`): a deadline at or before it
    /// had passed when that pass ran.
    pub(crate) last_pass: Instant,
}

/// What a driver and its handles share.
pub(crate) struct TimerShared {
    state: Mutex<WheelState>,
    /// The tick the driver is blocked towards, `NOT_PARKED` while it runs,
    /// `u64::MAX` when it blocks with no deadline. Written under the lock.
    parked_until: AtomicU64,
    /// The tick at which a fire pass can next find work (the wheel's next
    /// expiration, cascades included, minus the firing window, exactly what
    /// `prepare_park` wakes at), or 0 for "unknown": a pass before it
    /// returns without taking the lock. Only a locked pass sets it; every
    /// insert and configuration change resets it to 0 (under the lock), so
    /// it is never stale-high. A registration from another thread that a
    /// lock-free pass misses is seen by the locked `prepare_park` before the
    /// driver blocks, and unparks it if it is blocked.
    next_wake: AtomicU64,
    /// Timers fired so far (all fire passes, by the driver or `advance`).
    timers_fired: AtomicU64,
    unpark: Box<dyn Unpark>,
    clock: Clock,
    origin: std::time::Instant,
}

impl TimerShared {
    pub(crate) fn new(unpark: Box<dyn Unpark>, clock: Clock) -> TimerShared {
        let origin = clock.now().into_std();
        TimerShared {
            state: Mutex::new(WheelState {
                wheel: Wheel::new(),
                window_ticks: 0,
                never_early: false,
                shutdown: false,
                histogram: TimerErrorHistogram::default(),
                last_pass: Instant::from_std(origin),
            }),
            parked_until: AtomicU64::new(NOT_PARKED),
            next_wake: AtomicU64::new(0),
            timers_fired: AtomicU64::new(0),
            unpark,
            clock,
            origin,
        }
    }

    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    pub(crate) fn lock_state(&self) -> MutexGuard<'_, WheelState> {
        self.state.lock()
    }

    /// Changes the window or the timer policy, which moves wake ticks: the
    /// next fire pass takes the lock and recomputes `next_wake`.
    pub(crate) fn configure(&self, change: impl FnOnce(&mut WheelState)) {
        change(&mut self.state.lock());
        self.next_wake.store(0, Ordering::SeqCst);
    }

    pub(crate) fn timers_fired(&self) -> u64 {
        self.timers_fired.load(Ordering::Relaxed)
    }

    /// The deadline's tick, rounded up.
    pub(crate) fn deadline_tick(&self, deadline: Instant) -> u64 {
        let nanos = deadline
            .into_std()
            .saturating_duration_since(self.origin)
            .as_nanos();
        u64::try_from(nanos.div_ceil(1_000_000)).unwrap_or(u64::MAX)
    }

    /// The current time's tick, rounded down.
    pub(crate) fn now_tick(&self, now: Instant) -> u64 {
        let millis = now
            .into_std()
            .saturating_duration_since(self.origin)
            .as_millis();
        u64::try_from(millis).unwrap_or(u64::MAX)
    }

    /// The instant a tick starts at.
    ///
    /// Not capped at [`Instant::FAR_FUTURE`] from `origin`: deadlines are
    /// capped at `FAR_FUTURE` from the instant they were computed from
    /// (`now + Duration::MAX`), which is later than `origin + FAR_FUTURE`
    /// once the clock has moved. A cap here would put the wake tick of such
    /// a deadline before the deadline for ever, and a paused clock that
    /// auto-advances to wake ticks would never reach it (it spun instead).
    pub(crate) fn tick_instant(&self, tick: u64) -> Instant {
        let offset = Duration::from_millis(tick);
        match self.origin.checked_add(offset) {
            Some(instant) => Instant::from_std(instant),
            // Beyond what the platform's clock represents: no deadline is
            // there either, so the latest instant reachable is as good.
            None => Instant::from_std(self.origin).saturating_add(offset),
        }
    }

    /// (Re-)registers `entry` with `deadline`: unlinks it if linked, files it
    /// in the wheel, or marks it fired if already due. Returns the new state.
    ///
    /// `waker` (from a poll) replaces the stored one; `wake_if_due` (from a
    /// reset) wakes the stored waker when the new deadline is already due.
    pub(crate) fn register(
        &self,
        entry: EntryRef,
        deadline: Instant,
        at_least: bool,
        waker: Option<&Waker>,
        wake_if_due: bool,
    ) -> EntryState {
        let deadline_tick = self.deadline_tick(deadline);
        let mut old_waker = None;
        let mut to_wake = None;
        let mut unpark = false;
        let new_state;
        {
            let mut state = self.state.lock();
            if state.shutdown {
                entry.with(|e| e.state = EntryState::Shutdown);
                return EntryState::Shutdown;
            }
            state.wheel.remove(entry);
            let never_early = at_least || state.never_early;
            let (tick, wake_tick) = if never_early {
                (
                    deadline_tick.saturating_add(state.window_ticks),
                    deadline_tick,
                )
            } else {
                (
                    deadline_tick,
                    deadline_tick.saturating_sub(state.window_ticks),
                )
            };
            entry.with(|e| {
                e.deadline = deadline;
                e.deadline_tick = deadline_tick;
                e.at_least = at_least;
                if let Some(w) = waker {
                    if !e.waker.as_ref().is_some_and(|old| old.will_wake(w)) {
                        old_waker = e.waker.replace(w.clone());
                    }
                }
            });
            let wake_tick = match state.wheel.insert(entry, tick) {
                Ok(()) => Some(wake_tick),
                Err(AlreadyDue) if deadline > state.last_pass => {
                    // The last pass processed the tick, but the deadline is
                    // after that pass: still in the future for all we know
                    // (no clock read). It fires at the next pass, which
                    // must come at once (a wake tick of 0 unparks).
                    state.wheel.insert_due(entry, tick);
                    Some(0)
                }
                Err(AlreadyDue) => None,
            };
            new_state = match wake_tick {
                Some(wake_tick) => {
                    self.next_wake.store(0, Ordering::SeqCst);
                    if wake_tick < self.parked_until.load(Ordering::Relaxed) {
                        self.parked_until.store(wake_tick, Ordering::Relaxed);
                        unpark = true;
                    }
                    EntryState::Linked
                }
                None => EntryState::Fired,
            };
            entry.with(|e| {
                e.state = new_state;
                if new_state == EntryState::Fired && wake_if_due {
                    to_wake = e.waker.take();
                }
            });
        }
        drop(old_waker);
        if unpark {
            self.unpark.unpark();
        }
        if let Some(w) = to_wake {
            w.wake();
        }
        new_state
    }

    /// Poll of a registered entry: its state, with the waker updated if it
    /// is still pending.
    pub(crate) fn poll_registered(&self, entry: EntryRef, waker: &Waker) -> EntryState {
        let mut old_waker = None;
        let state = {
            let _guard = self.state.lock();
            entry.with(|e| {
                if e.state == EntryState::Linked
                    && !e.waker.as_ref().is_some_and(|old| old.will_wake(waker))
                {
                    old_waker = e.waker.replace(waker.clone());
                }
                e.state
            })
        };
        drop(old_waker);
        state
    }

    /// Unlinks an entry that is going away.
    pub(crate) fn deregister(&self, entry: EntryRef) {
        let waker = {
            let mut state = self.state.lock();
            state.wheel.remove(entry);
            entry.with(|e| e.waker.take())
        };
        drop(waker);
    }

    /// Under the lock: the tick the driver should wake at (the next
    /// expiration minus the window), and records `min(that, cap)` as the
    /// tick it parks towards. `None`: no timer.
    pub(crate) fn prepare_park(&self, cap_tick: Option<u64>) -> Option<u64> {
        let state = self.state.lock();
        let wake = state
            .wheel
            .next_expiration_tick()
            .map(|t| t.saturating_sub(state.window_ticks));
        let parked_until = match (wake, cap_tick) {
            (Some(w), Some(c)) => w.min(c),
            (Some(t), None) | (None, Some(t)) => t,
            (None, None) => u64::MAX,
        };
        // A wake tick of 0 would read as NOT_PARKED; it means "due now",
        // so the driver does not block anyway.
        self.parked_until.store(parked_until, Ordering::Relaxed);
        wake
    }

    /// The driver is running again: registrations need not unpark it.
    pub(crate) fn unparked(&self) {
        self.parked_until.store(NOT_PARKED, Ordering::Relaxed);
    }

    /// Fires every entry due at `now` (within the window), waking their
    /// tasks in batches outside the lock. Returns how many fired.
    pub(crate) fn fire(&self, now: Instant) -> u64 {
        let now_tick = self.now_tick(now);
        if now_tick < self.next_wake.load(Ordering::SeqCst) {
            // Nothing can be due: no lock, no wheel walk (the common case of
            // the zero-timeout poll each tick / each event interval).
            return 0;
        }
        let mut wakers: [Option<Waker>; WAKE_BATCH] = Default::default();
        let mut waking = PanicSafeWaking::default();
        let mut fired = 0u64;
        loop {
            let mut count = 0;
            let mut more = false;
            {
                let mut guard = self.state.lock();
                let state = &mut *guard;
                state.last_pass = state.last_pass.max(now);
                let horizon = now_tick.saturating_add(state.window_ticks);
                while let Some(entry) = state.wheel.poll(horizon) {
                    let (at_least, deadline_tick, deadline) =
                        entry.with(|e| (e.at_least, e.deadline_tick, e.deadline));
                    if (at_least || state.never_early) && deadline_tick > now_tick {
                        // Never early: file it again at its deadline plus the
                        // window, which is after `horizon`.
                        let tick = deadline_tick.saturating_add(state.window_ticks);
                        if state.wheel.insert(entry, tick).is_ok() {
                            continue;
                        }
                    }
                    let waker = entry.with(|e| {
                        e.state = EntryState::Fired;
                        e.waker.take()
                    });
                    state.histogram.record(error_micros(now, deadline));
                    fired += 1;
                    if let Some(w) = waker {
                        wakers[count] = Some(w);
                        count += 1;
                        if count == WAKE_BATCH {
                            more = true;
                            break;
                        }
                    }
                }
                if !more {
                    let wake = state
                        .wheel
                        .next_expiration_tick()
                        .map_or(u64::MAX, |t| t.saturating_sub(state.window_ticks));
                    self.next_wake.store(wake, Ordering::SeqCst);
                }
            }
            waking.wake_all(&mut wakers[..count]);
            if !more {
                break;
            }
        }
        if fired != 0 {
            self.timers_fired.fetch_add(fired, Ordering::Relaxed);
        }
        waking.finish();
        fired
    }

    /// Marks the driver shut down and every registered entry with it, waking
    /// their tasks (whose next poll of the timer panics with a clear message).
    ///
    /// A waker that panics does not stop the others (see
    /// [`PanicSafeWaking`]); the first panic is re-raised after all are
    /// woken, unless the thread is already unwinding (a driver dropped
    /// during a panic), where a second panic would abort: then it is
    /// dropped.
    pub(crate) fn shutdown(&self) {
        let mut wakers: [Option<Waker>; WAKE_BATCH] = Default::default();
        let mut waking = PanicSafeWaking::default();
        loop {
            let mut count = 0;
            let mut drained = false;
            {
                let mut state = self.state.lock();
                state.shutdown = true;
                while count < WAKE_BATCH {
                    let Some(entry) = state.wheel.drain_one() else {
                        drained = true;
                        break;
                    };
                    if let Some(w) = entry.with(|e| {
                        e.state = EntryState::Shutdown;
                        e.waker.take()
                    }) {
                        wakers[count] = Some(w);
                        count += 1;
                    }
                }
            }
            waking.wake_all(&mut wakers[..count]);
            if drained {
                break;
            }
        }
        if !std::thread::panicking() {
            waking.finish();
        }
    }
}

/// Wakes a batch of wakers so that one that panics cannot strand the
/// others.
///
/// The wakers of due timers are not all the runtime's own: a timer polled
/// by another executor, or by a hand-written future with its own
/// [`Wake`](std::task::Wake) impl, carries a foreign waker that may panic.
/// Letting that panic unwind out of the batch would drop every waker after
/// it unwoken: their timers are marked fired, so nothing would ever wake
/// those tasks again. So each wake runs under `catch_unwind`, every waker of
/// every batch is woken, and the *first* panic is re-raised at the end
/// ([`finish`](PanicSafeWaking::finish)): the caller (`block_on`, `advance`,
/// a driver's drop) still sees it, as it would have without timers.
#[derive(Default)]
struct PanicSafeWaking {
    first_panic: Option<Box<dyn Any + Send>>,
}

impl PanicSafeWaking {
    /// Wakes (and empties) every waker in `wakers`.
    fn wake_all(&mut self, wakers: &mut [Option<Waker>]) {
        for waker in wakers.iter_mut().filter_map(Option::take) {
            // Unwind safety: the waker is consumed either way, and no state
            // of ours is borrowed across the call.
            if let Err(panic) = panic::catch_unwind(AssertUnwindSafe(|| waker.wake())) {
                // Later panics are dropped: one is enough to report.
                self.first_panic.get_or_insert(panic);
            }
        }
    }

    /// Re-raises the first panic, if a waker panicked.
    fn finish(self) {
        if let Some(panic) = self.first_panic {
            panic::resume_unwind(panic);
        }
    }
}

/// `now - deadline` in microseconds, saturating.
fn error_micros(now: Instant, deadline: Instant) -> i64 {
    let (now, deadline) = (now.into_std(), deadline.into_std());
    if now >= deadline {
        i64::try_from((now - deadline).as_micros()).unwrap_or(i64::MAX)
    } else {
        -i64::try_from((deadline - now).as_micros()).unwrap_or(i64::MAX)
    }
}

impl fmt::Debug for TimerShared {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("TimerShared")
            .field("clock", &self.clock)
            .field("parked_until", &self.parked_until.load(Ordering::Relaxed))
            .field("timers_fired", &self.timers_fired())
            .finish_non_exhaustive()
    }
}
