//! What both schedulers share: the task queues, the owned-task list, the
//! driver, the metrics, the park handshake with other threads, and the
//! core entered on this thread. [`SchedulerCore`] is the owning thread's
//! side (`!Send`), [`SchedulerShared`] the side other threads reach; the
//! loops of [`scheduler`](super) run over [`run_ready`](SchedulerCore::run_ready)
//! and [`park_driver`](SchedulerCore::park_driver)
//! (`docs/schedulers-and-ticks.md`).
//!
//! A task whose cooperative budget ran out is **deferred** until after the
//! next driver poll, so an always-ready task cannot hold timers back; since
//! only a driver poll wakes the list, nothing may block while it is not
//! empty.
//!
//! # The park handshake (why no wake-up is lost)
//!
//! `park_state` is `RUNNING`, `PARKED`, or a state of a loop's own in which
//! it waits outside the driver (the throttling scheduler's `SLEEPING`).
//! Only `PARKED` makes a remote wake unpark.
//!
//! ```text
//! scheduler                                  remote thread
//! S1 swap(park_state, PARKED)                R1 push onto inject: fetch_add(len, 1)
//! S2 if fetch_add(len, 0) > 0 (or local      R2 if CAS(park_state, PARKED -> RUNNING):
//!       work, or block_on woken):                  unpark_count += 1; driver.unpark()
//!        store(park_state, RUNNING); poll
//!    else driver.park(timeout)
//! S3 store(park_state, RUNNING)
//! ```
//!
//! Every step is a read-modify-write, so each reads the latest value of its
//! location, and the argument needs only acquire/release (which is also
//! what loom checks; it treats `SeqCst` as acquire/release):
//!
//! * If S2 comes after R1 in `len`'s modification order, S2 sees the task
//!   and the scheduler does not block.
//! * Otherwise R1 reads S2's value, so S2 (and S1 before it) happens-before
//!   R1, and R2 (after R1) reads `PARKED` or a later value: either R2 wins
//!   the CAS and unparks (the park contract makes an unpark before the park
//!   return at once), or another remote won it first and already unparked,
//!   or the scheduler already stored `RUNNING` in S3, having returned from
//!   the park; then its next iteration starts by draining the queue.
//!
//! Only one remote wins the CAS per park, so a burst of remote wakes to a
//! parked scheduler costs one unpark, and wakes to a running scheduler cost
//! none. The `block_on` wake flag (`main_woken`) follows the same pattern:
//! a `swap` by the waker, a `fetch_or(false)` by the scheduler.

use std::cell::{Cell, RefCell};
use std::collections::VecDeque;
use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;
use std::task::Wake;
use std::thread::ThreadId;
use std::time::{Duration, Instant};

use tempo_park::scoped::ScopedGuard;
use tempo_park::{coop, Unpark, UnparkThread};

use super::flavor::Flavor;
use super::inject::InjectQueue;
use super::run_next::{Offer, RunNext};
use super::turn::Turn;
use crate::blocking::BlockingPool;
use crate::driver::{Driver, DriverHandles};
use crate::metrics::{LocalCounters, RuntimeMetrics, SharedCounters};
use crate::sync::{AtomicBool, AtomicU64, AtomicUsize, Ordering::Relaxed, Ordering::SeqCst};
use crate::task::{self, ArcWakerRef, JoinHandle, Notified, OwnedTasks, Schedule};

/// `park_state`: running tasks (or about to); remote wakes only queue.
pub(crate) const RUNNING: usize = 0;
/// `park_state`: parked in the driver (or about to); the first remote wake unparks.
pub(crate) const PARKED: usize = 1;

/// The scheduler settings the builder passes down.
#[derive(Debug, Clone, Copy)]
pub(crate) struct SchedulerConfig {
    /// Task polls between two driver polls.
    pub(crate) event_interval: u32,
    /// Which scheduler runs, as the builder decided it.
    pub(crate) flavor: Flavor,
}

/// The part of the scheduler other threads touch.
pub(crate) struct SchedulerShared {
    /// Spawns and wakes from other threads.
    pub(super) inject: InjectQueue<Notified<Arc<SchedulerShared>>>,
    /// `RUNNING`, `PARKED`, or a loop's own waiting state (module docs).
    pub(crate) park_state: AtomicUsize,
    /// Wakes the driver.
    unpark: Arc<dyn Unpark>,
    /// Driver unparks issued by remote spawns and wakes.
    unpark_count: AtomicU64,
    /// The `block_on` future was woken.
    pub(crate) main_woken: AtomicBool,
    /// The owned-task list id of this runtime.
    id: u64,
    /// The drivers' handles (I/O reactor, timers), for `Handle::enter`.
    pub(crate) handles: DriverHandles,
    /// Cuts short the loop's own wait outside the driver (the throttling
    /// sleep between ticks), if it has one.
    sleeper: Option<UnparkThread>,
    /// Published metrics.
    pub(crate) counters: SharedCounters,
    /// Which scheduler runs; read by `Handle::max_throttling` on any thread.
    pub(crate) flavor: Flavor,
    /// The thread that built the runtime, the only one that can run it.
    pub(crate) owner: ThreadId,
    /// The blocking pool (`spawn_blocking`); shut down by the `Runtime`.
    pub(crate) blocking: BlockingPool,
}

impl SchedulerShared {
    /// Unparks the driver if the scheduler is parked (or about to be).
    fn notify_parked(&self) {
        if self
            .park_state
            .compare_exchange(PARKED, RUNNING, SeqCst, SeqCst)
            .is_ok()
        {
            self.unpark_count.fetch_add(1, Relaxed);
            self.unpark.unpark();
        }
    }

    /// `true` if this thread runs this scheduler right now.
    fn is_current(self: &Arc<Self>) -> bool {
        core_of(self).is_some()
    }

    /// Queues a task locally on the owning thread, else remotely; gives it
    /// back if the runtime is shut down.
    fn submit(
        self: &Arc<Self>,
        task: Notified<Arc<SchedulerShared>>,
    ) -> Result<(), Notified<Arc<SchedulerShared>>> {
        if let Some(core) = core_of(self) {
            core.run_queue.borrow_mut().push_back(task);
            return Ok(());
        }
        self.submit_remote(task)
    }

    /// Queues a task on the injection queue, unparking a parked scheduler.
    fn submit_remote(
        &self,
        task: Notified<Arc<SchedulerShared>>,
    ) -> Result<(), Notified<Arc<SchedulerShared>>> {
        self.inject.push(task)?;
        self.notify_parked();
        Ok(())
    }

    /// Spawns a `Send` future from any thread.
    pub(crate) fn spawn<F>(self: &Arc<Self>, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        task::spawn_send(future, self.clone(), self.id, |task| self.submit(task))
    }

    /// `true` once the runtime shut down: spawns are refused.
    pub(crate) fn is_shut_down(&self) -> bool {
        self.inject.is_closed()
    }

    pub(crate) fn unpark_count(&self) -> u64 {
        self.unpark_count.load(Relaxed)
    }

    /// Wakes the scheduler now, whatever it is doing: cuts a sleep between
    /// ticks short, unparks a parked driver, or makes the next sleep return.
    pub(crate) fn unpark(&self) {
        // A ParkThread unpark is remembered until the next sleep.
        if let Some(sleeper) = &self.sleeper {
            sleeper.unpark();
        }
        if self.park_state.load(SeqCst) != RUNNING {
            self.notify_parked();
        }
    }

    /// A snapshot of the runtime's metrics.
    pub(crate) fn metrics(&self) -> RuntimeMetrics {
        let timer_error = self
            .handles
            .time
            .as_ref()
            .map(|time| time.timer_error_histogram());
        let mut metrics = self.counters.snapshot(self.unpark_count(), timer_error);
        let pool = self.blocking.stats();
        metrics.blocking_threads = pool.threads;
        metrics.idle_blocking_threads = pool.idle_threads;
        metrics.blocking_queue_depth = pool.queue_depth;
        metrics
    }
}

impl Schedule for Arc<SchedulerShared> {
    #[inline]
    fn schedule(&self, task: Notified<Self>) {
        // A wake on the thread running this runtime (a dispatch in its
        // park, or one of its tasks) queues the task in place.
        if let Some(task) = schedule_if_entered(self, task) {
            schedule_elsewhere(self, task);
        }
    }

    fn yield_now(&self, task: Notified<Self>) {
        // As above, but never into the run-next slot: to the back.
        let _ = self.submit(task);
    }
}

/// The `block_on` future's waker.
impl Wake for SchedulerShared {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.main_woken.swap(true, SeqCst);
        if !self.is_current() {
            self.notify_parked();
        }
    }
}

impl std::fmt::Debug for SchedulerShared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchedulerShared")
            .field("injected", &self.inject.len())
            .field("park_state", &self.park_state.load(Relaxed))
            .field("unpark_count", &self.unpark_count())
            .field("flavor", &self.flavor)
            .finish_non_exhaustive()
    }
}

/// The owning thread's side of the scheduler (`!Send`, in an `Rc`).
pub(crate) struct SchedulerCore {
    pub(crate) shared: Arc<SchedulerShared>,
    run_queue: RefCell<VecDeque<Notified<Arc<SchedulerShared>>>>,
    /// The task woken by the running task, polled next.
    run_next: RunNext<Notified<Arc<SchedulerShared>>>,
    owned: RefCell<OwnedTasks<Arc<SchedulerShared>>>,
    pub(super) driver: RefCell<Driver>,
    /// Tasks whose budget ran out, woken after the next driver poll.
    deferred: coop::Deferred,
    /// Task polls between two driver polls (`event_interval`).
    pub(super) event_interval: u32,
    pub(super) counters: LocalCounters,
    shut_down: Cell<bool>,
    /// Its `Runtime` was dropped: never the current runtime again, even
    /// if a leaked or out-of-order guard left it entered.
    released: Cell<bool>,
}

impl SchedulerCore {
    /// A core over `driver`; `sleeper` cuts the loop's own wait short.
    pub(crate) fn new(
        driver: Driver,
        config: SchedulerConfig,
        blocking: BlockingPool,
        sleeper: Option<UnparkThread>,
    ) -> Rc<SchedulerCore> {
        let owned = OwnedTasks::new();
        let shared = Arc::new(SchedulerShared {
            inject: InjectQueue::new(),
            park_state: AtomicUsize::new(RUNNING),
            unpark: driver.unpark(),
            unpark_count: AtomicU64::new(0),
            main_woken: AtomicBool::new(false),
            id: owned.id(),
            handles: driver.handles().clone(),
            sleeper,
            counters: SharedCounters::new(),
            flavor: config.flavor,
            owner: std::thread::current().id(),
            blocking,
        });
        Rc::new(SchedulerCore {
            shared,
            run_queue: RefCell::new(VecDeque::new()),
            run_next: RunNext::new(),
            owned: RefCell::new(owned),
            driver: RefCell::new(driver),
            deferred: coop::Deferred::new(),
            event_interval: config.event_interval,
            counters: LocalCounters::default(),
            shut_down: Cell::new(false),
            released: Cell::new(false),
        })
    }

    /// Spawns a `Send` future from the owning thread, onto the local queue.
    pub(crate) fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        task::spawn_send(future, self.shared.clone(), self.shared.id, |task| {
            self.run_queue.borrow_mut().push_back(task);
            Ok(())
        })
    }

    /// Spawns a `!Send` future on the owning thread.
    pub(crate) fn spawn_local<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + 'static,
        F::Output: 'static,
    {
        let (task, join) = self
            .owned
            .borrow()
            .new_local_task(future, self.shared.clone());
        self.run_queue.borrow_mut().push_back(task);
        join
    }

    /// `true` if a task is ready on the local run queue.
    pub(crate) fn has_local_ready(&self) -> bool {
        !self.run_queue.borrow().is_empty()
    }

    /// `true` if a task is ready (local or injected; deferred ones are not).
    pub(crate) fn has_ready(&self) -> bool {
        !self.run_queue.borrow().is_empty() || !self.shared.inject.is_empty()
    }

    /// `true` if deferred tasks wait: the driver must be polled, not parked.
    pub(crate) fn has_deferred(&self) -> bool {
        !self.deferred.is_empty()
    }

    /// Wakes the deferred tasks, behind those the driver just woke.
    pub(crate) fn wake_deferred(&self) {
        self.deferred.wake_all();
    }

    /// Queues a task woken on the owning thread by another: into the
    /// run-next slot during a poll (below the cap), else at the back.
    #[inline]
    fn schedule_local(&self, task: Notified<Arc<SchedulerShared>>) {
        match self.run_next.offer(task) {
            Offer::Placed => {}
            Offer::Displaced(task) | Offer::Refused(task) => {
                self.run_queue.borrow_mut().push_back(task);
            }
        }
    }

    /// Closes the run-next slot; a task left in it goes to the back.
    fn close_run_next(&self) {
        if let Some(task) = self.run_next.close() {
            self.run_queue.borrow_mut().push_back(task);
        }
    }

    /// Drains injected tasks into the local queue, then polls ready tasks
    /// (the run-next slot first) until none is left or `budget` polls;
    /// returns the polls made.
    pub(crate) fn run_ready(&self, budget: u32) -> u64 {
        {
            let mut queue = self.run_queue.borrow_mut();
            self.shared.inject.drain_into(&mut queue);
            // Room for every task that has run, at once (a task is queued
            // at most once): the queue grows as tasks are added (a new one
            // is queued before it joins the list), never at a wake.
            let tasks = self.owned.borrow().len();
            if queue.capacity() < tasks {
                let more = tasks - queue.len();
                queue.reserve(more);
            }
        }
        let mut polled = 0;
        // The slot is closed whenever no batch runs, even on unwind: a wake
        // from outside a task poll must reach the queue the park checks.
        let _close = CloseRunNext(self);
        // Lent once per batch, not per poll.
        coop::lend_deferred(&self.deferred, || {
            while polled < u64::from(budget) {
                let task = match self.run_next.take() {
                    Some(task) => task,
                    None => {
                        let next = self.run_queue.borrow_mut().pop_front();
                        let Some(task) = next else { break };
                        self.run_next.start_chain();
                        task
                    }
                };
                // A fresh budget per poll; if it runs out, the wake is deferred.
                coop::budget_deferring(|| OwnedTasks::run(&self.owned, task));
                polled += 1;
            }
        });
        self.counters.work(polled, 0, 0);
        polled
    }

    /// Parks the driver: `Some(ZERO)` polls it; otherwise it blocks unless
    /// work arrived (checked after announcing `PARKED`) or tasks are
    /// deferred. `main`: a pending `block_on` wake counts as work. Then
    /// wakes the deferred tasks.
    pub(crate) fn park_driver(&self, timeout: Option<Duration>, main: bool) -> Turn {
        let turn = self.park_driver_only(timeout, main);
        self.wake_deferred();
        turn
    }

    /// `park_driver` without waking the deferred tasks.
    fn park_driver_only(&self, timeout: Option<Duration>, main: bool) -> Turn {
        let mut driver = self.driver.borrow_mut();
        let before = driver.stats();
        let mut parked = false;
        let mut parked_for = Duration::ZERO;
        let result = if timeout == Some(Duration::ZERO) {
            driver.park_timeout(timeout)
        } else {
            self.shared.park_state.swap(PARKED, SeqCst);
            let work = !self.run_queue.borrow().is_empty()
                || !self.deferred.is_empty()
                || !self.shared.inject.is_empty_latest()
                || (main && self.shared.main_woken.fetch_or(false, SeqCst));
            if work {
                self.shared.park_state.store(RUNNING, SeqCst);
                driver.park_timeout(Some(Duration::ZERO))
            } else {
                let start = Instant::now();
                let result = driver.park_timeout(timeout);
                parked_for = start.elapsed();
                parked = true;
                self.shared.park_state.store(RUNNING, SeqCst);
                result
            }
        };
        if let Err(error) = result {
            panic!("tempo: the runtime's driver failed to park: {error}");
        }
        let stats = driver.stats() - before;
        self.counters.work(0, stats.io_events, stats.timers_fired);
        Turn {
            parked,
            parked_for,
            io_events: stats.io_events,
            timers_fired: stats.timers_fired,
            ..Turn::default()
        }
    }

    /// Accounts one finished iteration and publishes the counters; returns
    /// the instant read, which starts the next iteration.
    pub(crate) fn end_iteration(&self, start: Instant, parked: Duration) -> Instant {
        let end = Instant::now();
        self.counters
            .iteration(end.saturating_duration_since(start), parked);
        self.counters.publish(&self.shared.counters);
        end
    }

    /// The `block_on` future's waker (borrowing the shared state), with
    /// the woken flag set so the future is polled first. The flag needs no
    /// ordering: only this thread reads it, with a read-modify-write.
    pub(super) fn main_waker(&self) -> ArcWakerRef<'_, SchedulerShared> {
        self.shared.main_woken.store(true, Relaxed);
        task::arc_waker_ref(&self.shared)
    }

    /// Polls the `block_on` future if it was woken, with a fresh budget.
    /// An exhausted budget wakes it at once, not deferred: the driver is
    /// polled before its next poll anyway.
    pub(super) fn poll_main<F: Future>(
        &self,
        future: std::pin::Pin<&mut F>,
        cx: &mut std::task::Context<'_>,
    ) -> Option<std::task::Poll<F::Output>> {
        if !self.shared.main_woken.swap(false, SeqCst) {
            return None;
        }
        Some(coop::budget(|| future.poll(cx)))
    }

    /// `true` if the `block_on` future was woken and not polled since.
    pub(super) fn main_woken(&self) -> bool {
        self.shared.main_woken.load(SeqCst)
    }

    /// The timer driver's clock (virtual when paused), else the real one.
    pub(super) fn clock_now(&self) -> Instant {
        match self.shared.handles.clock() {
            Some(clock) => clock.now().into_std(),
            None => Instant::now(),
        }
    }

    /// Shuts the scheduler down: refuses remote work, drops every task's
    /// future on this thread and every queued reference. Idempotent. The
    /// caller enters first, so destructors' wakes land in the drained queue.
    pub(crate) fn shutdown(&self) {
        if self.shut_down.replace(true) {
            return;
        }
        self.shared.inject.close();
        // Empty outside `run_ready`; drained all the same.
        self.close_run_next();
        OwnedTasks::close_and_shutdown_all(&self.owned);
        // Their tasks are cancelled: drop the wakers, do not wake them.
        self.deferred.clear();
        loop {
            let next = self.run_queue.borrow_mut().pop_front();
            let next = next.or_else(|| self.shared.inject.pop());
            match next {
                Some(task) => OwnedTasks::shutdown_queued(&self.owned, task),
                None => break,
            }
        }
    }

    /// Marks the core released: its `Runtime` was dropped.
    pub(crate) fn release(&self) {
        self.released.set(true);
    }

    /// `true` once the `Runtime` owning this core was dropped.
    pub(crate) fn is_released(&self) -> bool {
        self.released.get()
    }

    /// Live tasks that have run at least once (for tests and debugging).
    #[allow(dead_code)]
    pub(crate) fn owned_len(&self) -> usize {
        self.owned.borrow().len()
    }
}

/// Closes the run-next slot when a batch ends, even by unwinding.
struct CloseRunNext<'a>(&'a SchedulerCore);

impl Drop for CloseRunNext<'_> {
    fn drop(&mut self) {
        self.0.close_run_next();
    }
}

impl std::fmt::Debug for SchedulerCore {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SchedulerCore")
            .field("shared", &self.shared)
            .field("ready", &self.run_queue.borrow().len())
            .field("run_next", &self.run_next.is_occupied())
            .field("deferred", &self.deferred.len())
            .field("owned", &self.owned.borrow())
            .field("event_interval", &self.event_interval)
            .finish_non_exhaustive()
    }
}

// The scheduler entered on this thread (a `tempo_park::scoped`
// thread-local set by `crate::current`). Invariant: a released core is
// never handed out; it is removed when found, so no spawn or wake lands
// in a dead run queue.

/// What this thread has entered.
#[derive(Clone)]
pub(crate) struct Entered {
    /// The runtime; `None` once a released one was removed, or for `remote`.
    pub(crate) core: Option<Rc<SchedulerCore>>,
    /// The runtime `Handle::enter` entered, used when `core` is `None`.
    pub(crate) remote: Option<Arc<SchedulerShared>>,
    /// Inside `block_on` or `turn` (of this runtime or an outer one).
    pub(crate) running: bool,
}

tempo_park::scoped_thread_local! {
    static ENTERED: Entered
}

/// Makes `entered` this thread's until the guard is dropped.
pub(crate) fn enter_on_thread(entered: Entered) -> ScopedGuard<Entered> {
    ENTERED.enter(entered)
}

/// `true` if this thread runs a scheduler (inside `block_on` or `turn`).
pub(crate) fn is_running() -> bool {
    ENTERED.with(|entered| entered.is_some_and(|e| e.running))
}

/// The core of `shared`'s runtime if this thread has it entered.
pub(crate) fn core_of(shared: &Arc<SchedulerShared>) -> Option<Rc<SchedulerCore>> {
    current_core().filter(|core| Arc::ptr_eq(&core.shared, shared))
}

/// Queues `task` on the core of `shared` if this thread has it entered
/// and not released, and returns `None`; otherwise gives `task` back.
/// The core is used inside the slot's borrow, with no counted reference:
/// queueing a task reads and drops nothing that reads the slot.
#[inline]
fn schedule_if_entered(
    shared: &Arc<SchedulerShared>,
    task: Notified<Arc<SchedulerShared>>,
) -> Option<Notified<Arc<SchedulerShared>>> {
    ENTERED.with(|entered| match entered.and_then(|e| e.core.as_deref()) {
        Some(core) if Arc::ptr_eq(&core.shared, shared) && !core.is_released() => {
            core.schedule_local(task);
            None
        }
        _ => Some(task),
    })
}

/// Queues a task woken where [`schedule_if_entered`] could not queue it:
/// from another thread, or after shutdown (the task is already
/// cancelled); a released core found entered is removed first.
#[inline(never)]
fn schedule_elsewhere(shared: &Arc<SchedulerShared>, task: Notified<Arc<SchedulerShared>>) {
    match core_of(shared) {
        Some(core) => core.schedule_local(task),
        None => drop(shared.submit_remote(task)),
    }
}

/// The shared half of the runtime entered on this thread, if not shut down.
pub(crate) fn current_shared() -> Option<Arc<SchedulerShared>> {
    if let Some(core) = current_core() {
        return Some(core.shared.clone());
    }
    let remote = ENTERED.with(|entered| entered.and_then(|e| e.remote.clone()))?;
    (!remote.is_shut_down()).then_some(remote)
}

/// The runtime entered on this thread, if any and not released.
fn current_core() -> Option<Rc<SchedulerCore>> {
    let (core, running) =
        ENTERED.with(|entered| entered.map_or((None, false), |e| (e.core.clone(), e.running)));
    let core = core?;
    if !core.is_released() {
        return Some(core);
    }
    // Keep the running flag: an outer `block_on` may still run.
    let stale = ENTERED.replace(Some(Entered {
        core: None,
        remote: None,
        running,
    }));
    // Dropped outside the borrow: it may be the core's last reference.
    drop(stale);
    drop(core);
    None
}

/// Spawns a `!Send` future on the runtime entered on this thread.
pub(crate) fn try_spawn_local<F>(future: F) -> Option<JoinHandle<F::Output>>
where
    F: Future + 'static,
    F::Output: 'static,
{
    Some(current_core()?.spawn_local(future))
}
