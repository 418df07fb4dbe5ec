//! The throttling scheduler: one wake-up per period `T`, however many
//! streams (`docs/schedulers-and-ticks.md`). Each *tick*:
//!
//! 1. polls the driver once with a zero timeout: every pending I/O event,
//!    the timers due by `grid + T/2` (`grid`: the tick's slot on the
//!    [pacer](pacer::ThrottlePacer)'s grid, so windows tile the time axis
//!    whatever the jitter), and the injected tasks;
//! 2. runs every ready task within the tick budget and one period of work;
//!    deferred tasks get an I/O poll and run on unless the period is spent;
//!    a dispatch that filled the events buffer earns up to
//!    [`MAX_SECOND_LOOKS`] more I/O polls (any dispatch, when the driver
//!    [looks for backlogs](tempo_park::IoDriver::looks_for_backlogs)), and
//!    a dispatch the driver stopped part-way one more, whatever the count
//!    ([`dispatch_continues`](tempo_park::IoDriver::dispatch_continues)),
//!    while the tick has not worked a period; then
//!    an end-of-tick pass fires timers registered during the tick with a
//!    *given* deadline inside its window (`sleep(d)` waits for the next);
//! 3. if it ran past `start + T` or left work, the next starts at once (an
//!    **overrun**);
//! 4. else sleeps until `start + T` **without polling the driver**, in
//!    `SLEEPING`: remote wakes only queue; `Handle::unpark` cuts it short;
//! 5. **idle**: a tick that found nothing blocks in the driver (`PARKED`)
//!    until an event, an unpark, or the next timer minus `T/2`.

use std::cell::{Cell, RefCell};
use std::convert::Infallible;
use std::future::Future;
use std::pin::pin;
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use tempo_park::{Park, ParkThread, UnparkThread};

use super::core::{SchedulerCore, RUNNING};
use super::flavor::ThrottleConfig;
use super::turn::Turn;
use crate::sync::Ordering::SeqCst;
use pacer::{ThrottlePacer, TickEnd};

mod pacer;
mod steps;

/// `park_state` (see [`core`](super::core)): sleeping between ticks. Not
/// `PARKED`, so remote wakes only queue; only `SchedulerShared::unpark`
/// cuts the sleep short.
pub(super) const SLEEPING: usize = 2;

/// Everything the throttling scheduler keeps between ticks.
#[derive(Debug)]
pub(crate) struct Throttle {
    /// The tick grid; owns the period `T`.
    pacer: RefCell<ThrottlePacer>,
    /// The firing window between regular ticks.
    firing_window: Duration,
    /// Task polls per tick at most.
    tick_budget: u32,
    /// The last tick, for the firing window of the next one.
    last: Cell<LastTick>,
    /// Where the scheduler sleeps between ticks; its unpark handle is the
    /// core's sleeper.
    sleeper: RefCell<ParkThread>,
}

/// What the next tick needs to know about the last one.
#[derive(Debug, Clone, Copy)]
struct LastTick {
    /// When it began (by the runtime's clock); `None` before the first.
    began: Option<Instant>,
    /// It overran: the next one starts at once.
    overran: bool,
    /// The firing window in force (narrowed while ticks run back to back).
    window: Duration,
}

/// The task-running phase of one tick, and whether it stopped with work
/// left (budget or period spent).
struct TickWork {
    /// Polls made this tick (tasks, and the block_on future).
    polled: u64,
    /// The tick stopped running tasks with work possibly left: an overrun.
    cut: bool,
    /// `tick_budget`.
    budget: u64,
    /// When the tick has worked a whole period `T` (real clock: work takes
    /// real time even when the timer clock is paused).
    period_end: Instant,
    /// The same by the runtime's clock, which the deferred rounds check so
    /// a paused test or loom model stays deterministic.
    clock_period_end: Instant,
    /// What the deferred rounds' I/O polls dispatched, for the tick's
    /// [`Turn`].
    found: Turn,
}

impl TickWork {
    /// The task-running phase of the tick begun at `start` (real clock).
    fn new(throttle: &Throttle, start: Instant) -> TickWork {
        let period = throttle.pacer.borrow().period();
        let began = throttle.last.get().began.unwrap_or(start);
        TickWork {
            polled: 0,
            cut: false,
            budget: u64::from(throttle.tick_budget),
            period_end: start + period,
            clock_period_end: began + period,
            found: Turn::default(),
        }
    }

    /// Runs up to `event_interval` ready tasks (within the tick budget);
    /// `true` if the tick should go on (full chunk, budget and period not
    /// spent, or `main` woken). A tick ends after a period of work because
    /// an always-ready task is requeued in the same tick and would starve
    /// timers and I/O for the whole budget.
    fn run_chunk(&mut self, core: &SchedulerCore, main: bool) -> bool {
        let left = self.budget.saturating_sub(self.polled);
        let chunk = left.min(u64::from(core.event_interval));
        let chunk = u32::try_from(chunk).unwrap_or(u32::MAX);
        let ran = core.run_ready(chunk);
        self.polled += ran;
        if self.polled >= self.budget {
            self.cut = true;
            return false;
        }
        if core.has_deferred() {
            return self.deferred_round(core);
        }
        if ran < u64::from(chunk) {
            // The run queue is empty.
            return main && core.main_woken();
        }
        if Instant::now() >= self.period_end {
            self.cut = true;
            return false;
        }
        true
    }
}

impl TickWork {
    /// The chunk left tasks whose budget ran out: cuts the tick if it has
    /// worked a period (the next tick fires timers before waking them),
    /// else polls the I/O driver (no timers) and wakes them. `true` if the
    /// tick goes on.
    fn deferred_round(&mut self, core: &SchedulerCore) -> bool {
        if core.clock_now() >= self.clock_period_end {
            self.cut = true;
            return false;
        }
        let look = steps::look(core);
        self.found = self.found.then(look);
        core.wake_deferred();
        true
    }
}

/// The most second looks one tick takes (see the module docs).
const MAX_SECOND_LOOKS: u32 = 4;

/// A tick's second looks: I/O polls (no timers) after its tasks ran, while
/// the tick is not cut and either the last dispatch reached the threshold
/// with fewer than [`MAX_SECOND_LOOKS`] taken, or the driver stopped it
/// part-way and the tick has not worked a period. Looks that continue a
/// dispatch are not counted.
struct SecondLooks {
    /// `None`: no I/O driver, no looks.
    threshold: Option<u64>,
    /// I/O events of the last dispatch (the tick's park, then each look).
    last_dispatch: u64,
    taken: u32,
    /// What the looks dispatched, for the tick's [`Turn`].
    found: Turn,
}

impl SecondLooks {
    fn new(core: &SchedulerCore, first_dispatch: u64) -> SecondLooks {
        SecondLooks {
            threshold: steps::look_threshold(core),
            last_dispatch: first_dispatch,
            taken: 0,
            found: Turn::default(),
        }
    }

    /// Takes a look if one is due; `true` if it did.
    fn look_again(&mut self, core: &SchedulerCore, tick: &TickWork) -> bool {
        let Some(threshold) = self.threshold else {
            return false;
        };
        if tick.cut {
            return false;
        }
        let continues = steps::dispatch_continues(core);
        let due = if continues {
            core.clock_now() < tick.clock_period_end
        } else {
            self.last_dispatch >= threshold && self.taken < MAX_SECOND_LOOKS
        };
        if !due {
            return false;
        }
        let look = steps::look(core);
        if !continues {
            self.taken += 1;
        }
        self.last_dispatch = look.io_events;
        self.found = self.found.then(look);
        true
    }
}

impl Throttle {
    pub(super) fn new(config: ThrottleConfig) -> Throttle {
        Throttle {
            pacer: RefCell::new(ThrottlePacer::new(config.period)),
            firing_window: config.firing_window,
            tick_budget: config.tick_budget,
            last: Cell::new(LastTick {
                began: None,
                overran: false,
                window: config.firing_window,
            }),
            sleeper: RefCell::new(ParkThread::new()),
        }
    }

    /// The handle that cuts the sleep between ticks short.
    pub(super) fn sleeper_unpark(&self) -> UnparkThread {
        self.sleeper.borrow().unpark()
    }

    /// The throttling `block_on`: ticks until the future is ready.
    pub(super) fn block_on<F: Future>(&self, core: &SchedulerCore, future: F) -> F::Output {
        let mut future = pin!(future);
        let waker = core.main_waker();
        let mut cx = Context::from_waker(&waker);
        let mut start = Instant::now();
        loop {
            let main = || core.poll_main(future.as_mut(), &mut cx);
            match self.tick(core, start, None, Some(main)) {
                Ok(turn) => start = core.end_iteration(start, turn.parked_for),
                Err(output) => {
                    core.end_iteration(start, Duration::ZERO);
                    return output;
                }
            }
        }
    }

    /// The throttling scheduler's `turn`: exactly one tick.
    pub(super) fn turn(&self, core: &SchedulerCore, max_wait: Duration) -> Turn {
        let start = Instant::now();
        let no_main = None::<fn() -> Option<Poll<Infallible>>>;
        let turn = match self.tick(core, start, Some(max_wait), no_main) {
            Ok(turn) => turn,
            Err(never) => match never {},
        };
        core.end_iteration(start, turn.parked_for);
        Turn {
            tasks_remaining: core.has_ready() || core.has_deferred(),
            ..turn
        }
    }

    /// One tick, begun at `start` (real clock): the driver poll, the task
    /// chunks with their second looks, then the wait until the next tick
    /// (at most `max_wait`). `main` polls a woken `block_on` future before
    /// each chunk; its polls count against the tick budget but not as task
    /// polls in the metrics. Returns the turn, or `main`'s output.
    fn tick<R>(
        &self,
        core: &SchedulerCore,
        start: Instant,
        max_wait: Option<Duration>,
        mut main: Option<impl FnMut() -> Option<Poll<R>>>,
    ) -> Result<Turn, R> {
        let polled = self.begin_tick(core);
        let mut tick = TickWork::new(self, start);
        let mut looks = SecondLooks::new(core, polled.io_events);
        let mut end_of_tick = None;
        loop {
            loop {
                if let Some(main) = main.as_mut() {
                    match main() {
                        Some(Poll::Ready(output)) => return Err(output),
                        Some(Poll::Pending) => tick.polled += 1,
                        None => {}
                    }
                }
                if !tick.run_chunk(core, main.is_some()) {
                    break;
                }
            }
            if looks.look_again(core, &tick) {
                continue;
            }
            // The end-of-tick pass; a cut tick leaves it to the next one.
            if end_of_tick.is_none() && !tick.cut {
                let pass = steps::end_of_tick_timers(core);
                end_of_tick = Some(pass);
                if pass.timers_fired != 0 {
                    continue;
                }
            }
            break;
        }
        let found_nothing = tick.polled == 0 && polled.found_nothing();
        let between = self.between_ticks(core, found_nothing, tick.cut, max_wait, main.is_some());
        Ok(Turn {
            tasks_polled: tick.polled,
            ..polled
                .then(tick.found)
                .then(looks.found)
                .then(end_of_tick.unwrap_or_default())
                .then(between)
        })
    }

    /// Starts a tick on the pacer's grid and polls the driver once (zero
    /// timeout). Timers fire when due by `grid + window`, the window being
    /// half the distance to the next tick: `T/2`, or half the last spacing
    /// while overrun ticks run back to back ahead of the grid. A late tick
    /// on its grid slot keeps `T/2`, so the boundary does not move with
    /// jitter.
    fn begin_tick(&self, core: &SchedulerCore) -> Turn {
        let now = core.clock_now();
        let last = self.last.get();
        let slot = self.pacer.borrow_mut().begin_tick(now);
        let window = match last.began {
            Some(began) if last.overran && !slot.on_grid => self
                .firing_window
                .min(now.saturating_duration_since(began) / 2),
            _ => self.firing_window,
        };
        if window != last.window {
            if let Some(time) = &core.shared.handles.time {
                time.set_firing_window(window);
            }
        }
        self.last.set(LastTick {
            began: Some(now),
            window,
            ..last
        });
        if let Some(time) = &core.shared.handles.time {
            // The pass's window is the grid slot's, not the wake-up's.
            time.set_next_pass_grid(tempo_time::Instant::from_std(slot.due));
        }
        core.park_driver(Some(Duration::ZERO), false)
    }

    /// Records whether the tick that just ended overran.
    fn set_overran(&self, overran: bool) {
        let last = self.last.get();
        self.last.set(LastTick { overran, ..last });
    }

    /// Ends a tick: blocks idle in the driver if it found nothing, else
    /// sleeps until the next tick or starts it at once (overrun). Only work
    /// the tick *left behind* makes an overrun: tasks injected while it ran
    /// wait for the next tick, else a trickle of remote wakes would make
    /// every tick overrun. Returns what happened between the ticks.
    fn between_ticks(
        &self,
        core: &SchedulerCore,
        found_nothing: bool,
        budget_spent: bool,
        max_wait: Option<Duration>,
        main: bool,
    ) -> Turn {
        if found_nothing {
            self.pacer.borrow_mut().restart();
            self.set_overran(false);
            return core.park_driver(max_wait, main);
        }
        let left_ready = core.has_local_ready() || (main && core.main_woken());
        let work_remains = (budget_spent && left_ready) || core.has_deferred();
        let now = core.clock_now();
        let end = self.pacer.borrow_mut().end_tick(now, work_remains);
        match end {
            TickEnd::Overrun => {
                self.set_overran(true);
                core.counters.overrun();
                Turn {
                    overrun: true,
                    ..Turn::default()
                }
            }
            TickEnd::SleepUntil(next) => {
                self.set_overran(false);
                Turn {
                    parked: true,
                    parked_for: self.sleep_until(core, now, next, max_wait),
                    ..Turn::default()
                }
            }
        }
    }

    /// Sleeps from `now` until `deadline` (at most `max_wait`) without
    /// polling the driver, in state `SLEEPING`; a paused clock is advanced
    /// instead. A `Handle::unpark` since the last sleep makes it return at
    /// once on either clock (the sleeper's token is checked here for the
    /// virtual sleep). Returns the time slept.
    fn sleep_until(
        &self,
        core: &SchedulerCore,
        now: Instant,
        deadline: Instant,
        max_wait: Option<Duration>,
    ) -> Duration {
        let mut duration = deadline.saturating_duration_since(now);
        if let Some(max_wait) = max_wait {
            duration = duration.min(max_wait);
        }
        if duration.is_zero() {
            return Duration::ZERO;
        }
        if self.sleeper.borrow_mut().take_notification() {
            return Duration::ZERO;
        }
        // SLEEPING on a paused clock too: the same protocol, loom-explorable.
        core.shared.park_state.store(SLEEPING, SeqCst);
        let paused = core
            .shared
            .handles
            .clock()
            .filter(|clock| clock.is_paused());
        let slept = match paused {
            Some(clock) => {
                clock.advance(duration);
                duration
            }
            None => {
                let start = Instant::now();
                let result = self.sleeper.borrow_mut().park_timeout(duration);
                if let Err(never) = result {
                    match never {}
                }
                start.elapsed()
            }
        };
        core.shared.park_state.store(RUNNING, SeqCst);
        slept
    }
}
