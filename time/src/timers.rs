//! [`Timers`]: every timer of one driver, shared by the [`Driver`](crate::Driver)
//! and its [`Handle`](crate::Handle)s: the wheel under a lock, the tick the
//! driver is parked towards, and the inner driver's unpark handle. The
//! policies (firing window, grid, end-of-tick pass) are in `docs/timers.md`.
//!
//! Invariants:
//! * Ticks are whole milliseconds since `origin`; a deadline's tick rounds
//!   *up*, `now`'s *down*, so with a zero window no timer fires early.
//! * A pass fires nearest-tick entries up to its horizon, `g_tick + window`
//!   for a pass given a grid instant `g` ([`Timers::set_next_pass_grid`]),
//!   else `now_tick + window`, never below `now_tick`; one found past it
//!   waits for the next pass. A never-early entry is filed at
//!   `deadline_tick + window` and re-filed if found before its deadline.
//! * An entry registered after a pass with its deadline inside that pass's
//!   window never completes in its registering poll: it fires at the next
//!   pass or the end-of-tick pass, by its [`InWindow`]. A deadline at or
//!   before the last pass's `now` completes on its first poll.
//! * Before blocking, the driver stores under the lock the tick it wakes at
//!   (`parked_until`); a registration with an earlier wake tick lowers it
//!   and unparks the inner driver after releasing the lock. While the
//!   driver runs (`NOT_PARKED`) none unparks it: it recomputes its
//!   deadline under the lock before parking.

use std::any::Any;
use std::fmt;
use std::panic::{self, AssertUnwindSafe};
use std::task::Waker;
use std::time::Duration;

use tempo_park::Unpark;

use crate::entry::cell::{EntryRef, EntryState};
use crate::histogram::TimerErrorHistogram;
use crate::sync::{AtomicBool, AtomicU64, Mutex, MutexGuard, Ordering};
use crate::wheel::{AlreadyDue, Wheel};
use crate::{Clock, Instant};

/// `parked_until` value while the driver is not blocked: no tick is earlier.
pub(crate) const NOT_PARKED: u64 = 0;

/// `next_pass_grid` value when the next pass has no grid instant: its
/// horizon is measured from `now`.
const NO_GRID: u64 = u64::MAX;

/// Wakers collected under the lock and woken after releasing it.
const WAKE_BATCH: usize = 32;

/// The state behind the lock.
pub(crate) struct WheelState {
    pub(crate) wheel: Wheel,
    pub(crate) shutdown: bool,
    pub(crate) histogram: TimerErrorHistogram,
    /// The nearest-tick horizon of the last fire pass; a nearest-tick
    /// entry past it fires at the next pass.
    pub(crate) grid_horizon: u64,
}

/// The timer configuration ([`Timers::config`], changed by
/// [`Timers::configure`]).
#[derive(Debug, Clone, Copy)]
pub(crate) struct TimerConfig {
    /// The firing window, in ticks.
    pub(crate) window_ticks: u64,
    /// Every timer is never-early.
    pub(crate) never_early: bool,
    /// The scheduler's pass period in ticks (0: parked until the next
    /// timer): how late a never-early timer can be.
    pub(crate) pass_period_ticks: u64,
}

/// Where an entry fires when its deadline falls inside the window a pass
/// already processed (after that pass's `now`, at or before its horizon).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum InWindow {
    /// At the next pass: deadlines measured from the clock, so a loop over
    /// them runs at most once per pass.
    NextTick,
    /// At the end-of-tick pass, later in this tick: deadlines fixed
    /// independently of the clock.
    ThisTick,
}

/// What a driver and its handles share.
pub(crate) struct Timers {
    state: Mutex<WheelState>,
    /// The tick the driver is blocked towards, `NOT_PARKED` while it runs,
    /// `u64::MAX` when it blocks with no deadline. Written under the lock.
    parked_until: AtomicU64,
    /// The tick at which a pass can next find work (what `prepare_park`
    /// wakes at), or 0 for "unknown"; a pass before it takes no lock.
    /// Invariant: never stale-high: only a locked pass sets it, and every
    /// insert and configuration change resets it to 0 under the lock. A
    /// registration a lock-free pass misses is seen by the locked
    /// `prepare_park` before the driver blocks.
    next_wake: AtomicU64,
    /// Timers fired so far (all fire passes, by the driver or `advance`).
    timers_fired: AtomicU64,
    /// The `now` of the last fire pass (lock-free ones included), in
    /// nanoseconds since `origin`.
    last_pass_nanos: AtomicU64,
    /// Entries wait for the end-of-tick pass (set under the lock).
    end_of_tick_pending: AtomicBool,
    /// The grid instant of the next pass (nanoseconds since `origin`), or
    /// [`NO_GRID`]; taken by that pass.
    next_pass_grid: AtomicU64,
    /// The [`TimerConfig`], written only by [`Timers::configure`] under
    /// the lock; readable without it.
    config_window_ticks: AtomicU64,
    config_never_early: AtomicBool,
    config_pass_period_ticks: AtomicU64,
    #[cfg(test)]
    locks_taken: std::sync::atomic::AtomicU64,
    unpark: Box<dyn Unpark>,
    clock: Clock,
    origin: std::time::Instant,
}

impl Timers {
    pub(crate) fn new(unpark: Box<dyn Unpark>, clock: Clock) -> Timers {
        let origin = clock.now().into_std();
        Timers {
            state: Mutex::new(WheelState {
                wheel: Wheel::new(),
                shutdown: false,
                histogram: TimerErrorHistogram::default(),
                grid_horizon: 0,
            }),
            parked_until: AtomicU64::new(NOT_PARKED),
            next_wake: AtomicU64::new(0),
            timers_fired: AtomicU64::new(0),
            last_pass_nanos: AtomicU64::new(0),
            end_of_tick_pending: AtomicBool::new(false),
            next_pass_grid: AtomicU64::new(NO_GRID),
            config_window_ticks: AtomicU64::new(0),
            config_never_early: AtomicBool::new(false),
            config_pass_period_ticks: AtomicU64::new(0),
            #[cfg(test)]
            locks_taken: std::sync::atomic::AtomicU64::new(0),
            unpark,
            clock,
            origin,
        }
    }

    pub(crate) fn clock(&self) -> &Clock {
        &self.clock
    }

    pub(crate) fn lock_state(&self) -> MutexGuard<'_, WheelState> {
        #[cfg(test)]
        self.locks_taken.fetch_add(1, Ordering::Relaxed);
        self.state.lock()
    }

    /// Times the wheel lock was taken (for the lock-free paths' tests).
    #[cfg(test)]
    pub(crate) fn locks_taken(&self) -> u64 {
        self.locks_taken.load(Ordering::Relaxed)
    }

    /// Changes the window or the timer policy, which moves wake ticks: the
    /// next fire pass takes the lock and recomputes `next_wake`.
    pub(crate) fn configure(&self, change: impl FnOnce(&mut TimerConfig)) {
        {
            let _state = self.lock_state();
            let mut config = self.config();
            change(&mut config);
            self.config_window_ticks
                .store(config.window_ticks, Ordering::Relaxed);
            self.config_never_early
                .store(config.never_early, Ordering::Relaxed);
            self.config_pass_period_ticks
                .store(config.pass_period_ticks, Ordering::Relaxed);
        }
        self.next_wake.store(0, Ordering::SeqCst);
    }

    /// The configuration: under the lock, the last one set; without it,
    /// the one set up with the runtime (the only time it changes).
    pub(crate) fn config(&self) -> TimerConfig {
        TimerConfig {
            window_ticks: self.config_window_ticks.load(Ordering::Relaxed),
            never_early: self.config_never_early.load(Ordering::Relaxed),
            pass_period_ticks: self.config_pass_period_ticks.load(Ordering::Relaxed),
        }
    }

    pub(crate) fn timers_fired(&self) -> u64 {
        self.timers_fired.load(Ordering::Relaxed)
    }

    /// `instant` in nanoseconds since `origin` (0 before it, saturating).
    fn nanos_since_origin(&self, instant: Instant) -> u64 {
        nanos_of(self.since_origin(instant))
    }

    /// How long after `origin` `instant` is (zero if not after it).
    fn since_origin(&self, instant: Instant) -> Duration {
        instant.into_std().saturating_duration_since(self.origin)
    }

    /// Whether a deadline `since` after `origin` is at or before the `now`
    /// of the last fire pass.
    fn passed_at_last_pass(&self, since: Duration) -> bool {
        let last_pass = self.last_pass_nanos.load(Ordering::SeqCst);
        // Not after the origin: the nanosecond count says nothing finer.
        since.is_zero() || nanos_of(since) <= last_pass
    }

    /// The deadline's tick, rounded up.
    pub(crate) fn deadline_tick(&self, deadline: Instant) -> u64 {
        tick_of(self.since_origin(deadline))
    }

    /// The current time's tick, rounded down.
    pub(crate) fn now_tick(&self, now: Instant) -> u64 {
        let millis = now
            .into_std()
            .saturating_duration_since(self.origin)
            .as_millis();
        u64::try_from(millis).unwrap_or(u64::MAX)
    }

    /// The instant a tick starts at. Not capped at [`Instant::FAR_FUTURE`]
    /// from `origin`: a paused clock could then never reach a far deadline.
    pub(crate) fn tick_instant(&self, tick: u64) -> Instant {
        let offset = Duration::from_millis(tick);
        match self.origin.checked_add(offset) {
            Some(instant) => Instant::from_std(instant),
            // Beyond what the platform's clock represents: no deadline is
            // there either, so the latest instant reachable is as good.
            None => Instant::from_std(self.origin).saturating_add(offset),
        }
    }

    /// (Re-)registers `entry` with `deadline` (unlinked, then filed or
    /// marked fired); returns the new state. `waker` replaces the stored
    /// one; `wake_if_due` wakes the stored one if already due.
    pub(crate) fn register(
        &self,
        entry: EntryRef,
        deadline: Instant,
        at_least: bool,
        in_window: InWindow,
        waker: Option<&Waker>,
        wake_if_due: bool,
    ) -> EntryState {
        let since = self.since_origin(deadline);
        let deadline_tick = tick_of(since);
        let mut old_waker = None;
        let mut to_wake = None;
        let mut unpark = false;
        let new_state;
        {
            let mut state = self.lock_state();
            if state.shutdown {
                entry.with(|e| e.state = EntryState::Shutdown);
                entry.set_fired(false);
                return EntryState::Shutdown;
            }
            state.wheel.remove(entry);
            let config = self.config();
            let never_early = at_least || config.never_early;
            let (tick, wake_tick) = if never_early {
                (
                    deadline_tick.saturating_add(config.window_ticks),
                    deadline_tick,
                )
            } else {
                (
                    deadline_tick,
                    deadline_tick.saturating_sub(config.window_ticks),
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
            let wake_tick = if self.passed_at_last_pass(since) {
                None
            } else {
                match state.wheel.insert(entry, tick) {
                    Ok(()) => Some(wake_tick),
                    // Processed tick, deadline after the last pass: fires
                    // at the end-of-tick or next pass (a wake tick of 0
                    // unparks a blocked driver).
                    Err(AlreadyDue) => {
                        match in_window {
                            // Past the grid horizon: the next tick's.
                            _ if !never_early && deadline_tick > state.grid_horizon => {
                                state.wheel.defer_to_next_pass(entry, tick)
                            }
                            InWindow::NextTick => state.wheel.insert_due(entry, tick),
                            InWindow::ThisTick => {
                                state.wheel.insert_this_tick(entry, tick);
                                self.end_of_tick_pending.store(true, Ordering::SeqCst);
                            }
                        }
                        Some(0)
                    }
                }
            };
            new_state = match wake_tick {
                Some(wake_tick) => {
                    // Nonzero writes of `next_wake` happen under the lock,
                    // so this load sees the last one or a later 0; if 0, the
                    // next pass takes the lock anyway and the store is moot.
                    if self.next_wake.load(Ordering::Relaxed) != 0 {
                        self.next_wake.store(0, Ordering::SeqCst);
                    }
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
            entry.set_fired(new_state == EntryState::Fired);
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
            let _guard = self.lock_state();
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
            let mut state = self.lock_state();
            state.wheel.remove(entry);
            entry.with(|e| e.waker.take())
        };
        drop(waker);
    }

    /// Under the lock: the tick the driver should wake at (the next
    /// expiration minus the window), and records `min(that, cap)` as the
    /// tick it parks towards. `None`: no timer.
    pub(crate) fn prepare_park(&self, cap_tick: Option<u64>) -> Option<u64> {
        let state = self.lock_state();
        let window_ticks = self.config().window_ticks;
        let wake = state
            .wheel
            .next_expiration_tick()
            .map(|t| t.saturating_sub(window_ticks));
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

    /// The next pass's horizon is `grid + window` (at least `now`) instead
    /// of `now + window`.
    pub(crate) fn set_next_pass_grid(&self, grid: Instant) {
        let nanos = self.nanos_since_origin(grid).min(NO_GRID - 1);
        self.next_pass_grid.store(nanos, Ordering::SeqCst);
    }

    /// The tick a pass at `now_tick` measures its window from: `now_tick`,
    /// or the grid instant set for it (taken), if not after `now_tick`.
    fn take_pass_base(&self, now_tick: u64) -> u64 {
        match self.next_pass_grid.swap(NO_GRID, Ordering::SeqCst) {
            NO_GRID => now_tick,
            grid_nanos => (grid_nanos / 1_000_000).min(now_tick),
        }
    }

    /// Fires every entry due at `now` (within the window, from the grid
    /// instant set for this pass if any), waking their tasks in batches
    /// outside the lock. Returns how many fired.
    pub(crate) fn fire(&self, now: Instant) -> u64 {
        let now_tick = self.now_tick(now);
        let base_tick = self.take_pass_base(now_tick);
        self.last_pass_nanos
            .fetch_max(self.nanos_since_origin(now), Ordering::SeqCst);
        // `base_tick <= now_tick`: below the next wake nothing is due.
        if now_tick < self.next_wake.load(Ordering::SeqCst) {
            // Nothing can be due: no lock, no wheel walk.
            return 0;
        }
        let mut begun = false;
        self.fire_batches(
            now,
            Pass::Tick,
            |state| {
                let window_ticks = self.config().window_ticks;
                if !begun {
                    begun = true;
                    state.wheel.begin_pass();
                    state.grid_horizon = base_tick.saturating_add(window_ticks).max(now_tick);
                }
                state.wheel.poll(now_tick.saturating_add(window_ticks))
            },
            |state| {
                // `poll` handed out the end-of-tick entries too.
                self.end_of_tick_pending.store(false, Ordering::SeqCst);
                let window_ticks = self.config().window_ticks;
                let wake = state
                    .wheel
                    .next_expiration_tick()
                    .map_or(u64::MAX, |t| t.saturating_sub(window_ticks));
                self.next_wake.store(wake, Ordering::SeqCst);
            },
        )
    }

    /// The end-of-tick pass: fires the entries filed for it, waking their
    /// tasks outside the lock; returns how many fired. Without such entries
    /// it takes no lock and reads no clock.
    pub(crate) fn fire_end_of_tick(&self) -> u64 {
        if !self.end_of_tick_pending.load(Ordering::SeqCst) {
            return 0;
        }
        let now = self.clock.now();
        self.fire_batches(
            now,
            Pass::EndOfTick,
            |state| state.wheel.poll_this_tick(),
            |_| self.end_of_tick_pending.store(false, Ordering::SeqCst),
        )
    }

    /// Fires the entries `next` hands out under the lock (never-early ones
    /// not yet due are filed again instead), [`WAKE_BATCH`] wakers at a
    /// time, waking each batch outside the lock; `done` runs under the
    /// lock once `next` has nothing left. Returns how many fired.
    fn fire_batches(
        &self,
        now: Instant,
        pass: Pass,
        mut next: impl FnMut(&mut WheelState) -> Option<EntryRef>,
        done: impl Fn(&mut WheelState),
    ) -> u64 {
        let now_tick = self.now_tick(now);
        let mut wakers: [Option<Waker>; WAKE_BATCH] = Default::default();
        let mut waking = PanicSafeWaking::default();
        let mut fired = 0u64;
        loop {
            let mut count = 0;
            let mut more = false;
            {
                let mut guard = self.lock_state();
                let state = &mut *guard;
                let config = self.config();
                while let Some(entry) = next(state) {
                    let Some(waker) = fire_entry(state, config, entry, now, now_tick, pass) else {
                        continue;
                    };
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
                    done(state);
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

    /// Marks the driver and every registered entry shut down, waking their
    /// tasks (whose next poll panics with a clear message). A waker's panic
    /// is re-raised after all are woken, unless already unwinding.
    pub(crate) fn shutdown(&self) {
        let mut wakers: [Option<Waker>; WAKE_BATCH] = Default::default();
        let mut waking = PanicSafeWaking::default();
        loop {
            let mut count = 0;
            let mut drained = false;
            {
                let mut state = self.lock_state();
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

/// Which kind of pass hands entries to [`fire_entry`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pass {
    /// A tick's fire pass (the wheel walked to its horizon).
    Tick,
    /// The end-of-tick pass: its entries were inside the grid horizon
    /// when they registered.
    EndOfTick,
}

/// Fires `entry`: marks it fired, records its error, returns its waker.
/// `None`: deferred (nearest-tick past the grid horizon) or re-filed
/// (never-early, not yet due).
fn fire_entry(
    state: &mut WheelState,
    config: TimerConfig,
    entry: EntryRef,
    now: Instant,
    now_tick: u64,
    pass: Pass,
) -> Option<Option<Waker>> {
    let (at_least, deadline_tick, deadline, tick) =
        entry.with(|e| (e.at_least, e.deadline_tick, e.deadline, e.tick));
    let never_early = at_least || config.never_early;
    if !never_early && pass == Pass::Tick && deadline_tick > state.grid_horizon {
        state.wheel.defer_to_next_pass(entry, tick);
        return None;
    }
    if never_early && deadline_tick > now_tick {
        let tick = deadline_tick.saturating_add(config.window_ticks);
        if state.wheel.insert(entry, tick).is_ok() {
            return None;
        }
    }
    let waker = entry.with(|e| {
        e.state = EntryState::Fired;
        e.waker.take()
    });
    // The last access to the entry: from here its owner may complete,
    // drop or re-register it without the lock (see `entry.rs`).
    entry.set_fired(true);
    state.histogram.record(error_micros(now, deadline));
    Some(waker)
}

/// Wakes batches of wakers so that a foreign waker that panics cannot
/// strand the others (their timers are already marked fired): each wake
/// runs under `catch_unwind`, and [`finish`](PanicSafeWaking::finish)
/// re-raises the first panic.
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

impl fmt::Debug for Timers {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Timers")
            .field("clock", &self.clock)
            .field("parked_until", &self.parked_until.load(Ordering::Relaxed))
            .field("timers_fired", &self.timers_fired())
            .finish_non_exhaustive()
    }
}

/// The tick of a deadline `since` after the origin: `ceil(nanos / 1e6)`
/// in 64-bit arithmetic (no 128-bit division), saturating.
fn tick_of(since: Duration) -> u64 {
    since
        .as_secs()
        .checked_mul(1_000)
        .and_then(|ms| ms.checked_add(u64::from(since.subsec_nanos().div_ceil(1_000_000))))
        .unwrap_or(u64::MAX)
}

/// `since` in nanoseconds, saturating (64-bit arithmetic, as [`tick_of`]).
fn nanos_of(since: Duration) -> u64 {
    since
        .as_secs()
        .checked_mul(1_000_000_000)
        .and_then(|nanos| nanos.checked_add(u64::from(since.subsec_nanos())))
        .unwrap_or(u64::MAX)
}

#[cfg(test)]
mod tests {
    use std::future::Future;
    use std::pin::Pin;
    use std::task::{Context, Poll, Waker};

    use tempo_park::{Park, ParkThread};

    use crate::{Clock, Driver, Interval, Sleep};

    use super::*;

    const MS: Duration = Duration::from_millis(1);

    /// A waker that does nothing (`Waker::noop` is newer than the MSRV).
    fn noop_waker() -> Waker {
        struct Noop;
        impl std::task::Wake for Noop {
            fn wake(self: std::sync::Arc<Self>) {}
        }
        Waker::from(std::sync::Arc::new(Noop))
    }

    fn poll_sleep(sleep: Pin<&mut Sleep>) -> Poll<()> {
        sleep.poll(&mut Context::from_waker(&noop_waker()))
    }

    /// A driver with a 1 ms timer, registered, then fired by a pass.
    fn fired_sleep() -> (Driver<ParkThread>, Pin<Box<Sleep>>) {
        let mut driver = Driver::new(ParkThread::new(), Clock::paused());
        let handle = driver.handle();
        let mut sleep = Box::pin(Sleep::new(handle.clone(), handle.now() + MS, false));
        assert!(poll_sleep(sleep.as_mut()).is_pending());
        driver.clock().advance(MS);
        driver.park_timeout(Duration::ZERO).unwrap();
        (driver, sleep)
    }

    /// Once a pass fired a timer, completing it, asking whether it
    /// elapsed and dropping it take no lock.
    #[test]
    fn a_fired_sleep_completes_and_drops_without_the_lock() {
        let (driver, mut sleep) = fired_sleep();
        let handle = driver.handle();
        let before = handle.timers().locks_taken();
        assert!(poll_sleep(sleep.as_mut()).is_ready());
        assert!(sleep.is_elapsed());
        drop(sleep);
        assert_eq!(handle.timers().locks_taken(), before);
    }

    /// A pending timer still takes the lock to complete or to go away.
    #[test]
    fn a_pending_sleep_polls_and_drops_under_the_lock() {
        let driver = Driver::new(ParkThread::new(), Clock::paused());
        let handle = driver.handle();
        let mut sleep = Box::pin(Sleep::new(handle.clone(), handle.now() + MS, false));
        assert!(poll_sleep(sleep.as_mut()).is_pending());
        let before = handle.timers().locks_taken();
        assert!(poll_sleep(sleep.as_mut()).is_pending());
        drop(sleep);
        assert_eq!(handle.timers().locks_taken(), before + 2);
    }

    /// After a reset a fired entry waits again until fired again.
    #[test]
    fn a_reset_after_firing_waits_for_the_new_deadline() {
        let (mut driver, mut sleep) = fired_sleep();
        let handle = driver.handle();
        assert!(poll_sleep(sleep.as_mut()).is_ready());

        sleep.as_mut().reset(handle.now() + MS * 5);
        assert!(!sleep.is_elapsed());
        assert!(poll_sleep(sleep.as_mut()).is_pending());
        driver.clock().advance(MS * 5);
        driver.park_timeout(Duration::ZERO).unwrap();
        assert!(sleep.is_elapsed());
        assert!(poll_sleep(sleep.as_mut()).is_ready());
    }

    /// An interval's tick after its timer fired takes one lock: the re-arm.
    #[test]
    fn an_interval_tick_takes_one_lock() {
        let mut driver = Driver::new(ParkThread::new(), Clock::paused());
        let handle = driver.handle();
        let start = handle.now() + MS * 10;
        let mut ticks = Interval::new(handle.clone(), start, MS * 10, false);
        let waker = noop_waker();
        let mut cx = Context::from_waker(&waker);
        assert!(ticks.poll_tick(&mut cx).is_pending());
        driver.clock().advance(MS * 10);
        driver.park_timeout(Duration::ZERO).unwrap();

        let before = handle.timers().locks_taken();
        assert_eq!(ticks.poll_tick(&mut cx), Poll::Ready(start));
        assert_eq!(handle.timers().locks_taken(), before + 1);
    }

    /// `deadline_tick`'s 64-bit arithmetic matches the 128-bit ceiling.
    #[test]
    fn deadline_tick_rounds_nanoseconds_up_to_milliseconds() {
        let driver = Driver::new(ParkThread::new(), Clock::paused());
        let handle = driver.handle();
        let shared = handle.timers();
        let origin = Instant::from_std(shared.origin);
        for nanos in [
            0u64,
            1,
            999_999,
            1_000_000,
            1_000_001,
            1_999_999_999,
            2_000_000_000,
            123_456_789_012,
            1_576_800_000_123_456_789, // about 50 years
        ] {
            let d = Duration::from_nanos(nanos);
            let expected = u64::try_from(d.as_nanos().div_ceil(1_000_000)).unwrap();
            assert_eq!(shared.deadline_tick(origin + d), expected, "{nanos} ns");
        }
        // Before the origin: tick 0.
        assert_eq!(
            shared.deadline_tick(origin.checked_sub(MS).unwrap_or(origin)),
            0
        );
    }

    /// The 64-bit nanosecond count is `as_nanos`, saturating.
    #[test]
    fn nanos_of_is_as_nanos_saturated() {
        for d in [
            Duration::ZERO,
            Duration::from_nanos(1),
            Duration::new(1, 999_999_999),
            Duration::from_nanos(u64::MAX),
            Duration::from_nanos(u64::MAX) + Duration::from_nanos(1),
            Duration::new(u64::MAX / 1_000_000_000 + 1, 0),
            Duration::MAX,
        ] {
            let expected = u64::try_from(d.as_nanos()).unwrap_or(u64::MAX);
            assert_eq!(nanos_of(d), expected, "{d:?}");
        }
    }
}
