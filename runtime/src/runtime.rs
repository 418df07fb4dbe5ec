//! The runtime: building it ([`Builder`]), running it ([`Runtime`]),
//! reaching it from other threads ([`Handle`]), driving it from a host loop
//! ([`Runtime::turn`], [`Turn`]).
//!
//! ```
//! use std::time::Duration;
//! use tempo::runtime::Builder;
//!
//! let rt = Builder::new_current_thread()
//!     .enable_all()
//!     .max_throttling(Duration::from_millis(10))
//!     .build()?;
//! let handle = rt.handle().clone(); // for other threads
//! let from_elsewhere = std::thread::spawn(move || handle.spawn(async { 2 }))
//!     .join()
//!     .unwrap();
//! let out = rt.block_on(async { from_elsewhere.await.unwrap() * 21 });
//! assert_eq!(out, 42);
//! # Ok::<(), std::io::Error>(())
//! ```

use std::fmt;
use std::future::Future;
use std::marker::PhantomData;
use std::rc::Rc;
use std::time::Duration;

use crate::current::{self, EnterLevel};
use crate::scheduler::{Scheduler, SchedulerCore};
use crate::task::JoinHandle;

pub use crate::builder::{Builder, TimerPolicy, MAX_THROTTLING, MIN_THROTTLING};
pub use crate::driver::IoReactor;
pub use crate::handle::{Handle, HandleEnterGuard, TryCurrentError};
pub use crate::metrics::RuntimeMetrics;
pub use crate::scheduler::Turn;
/// Renamed [`IoReactor`]: `tempo_park::IoDriver` is the trait it implements.
#[deprecated(note = "renamed `IoReactor`; `tempo::park::IoDriver` is the trait")]
pub type IoDriver = IoReactor;
/// The handle of a runtime's I/O driver (`IoHandle::current()` inside the
/// runtime), e.g. to install a [`Resolve`](crate::net::Resolve) of your own
/// with [`IoHandle::set_resolver`].
pub use tempo_io::Handle as IoHandle;

/// A single-thread Tempo runtime: a scheduler, its driver, and its tasks.
/// Build one with [`Builder`], then run it with [`block_on`](Runtime::block_on)
/// or from your own loop with [`turn`](Runtime::turn).
///
/// # `!Send`, unlike tokio's
///
/// It owns the `!Send` futures of [`spawn_local`](crate::spawn_local) and
/// drops them on its thread; other threads use a [`Handle`].
///
/// ```compile_fail
/// fn assert_send<T: Send>() {}
/// assert_send::<tempo::runtime::Runtime>();
/// ```
///
/// # Shutdown
///
/// Dropping it drops every task's future and output on this thread (their
/// JoinHandles, and later spawns through a `Handle`, resolve cancelled), then
/// shuts the blocking pool down: queued closures are dropped, running ones
/// cannot be interrupted, so drop **waits for them** as tokio does;
/// [`shutdown_timeout`](Runtime::shutdown_timeout) waits at most its timeout
/// and [`shutdown_background`](Runtime::shutdown_background) not at all.
pub struct Runtime {
    core: Rc<SchedulerCore>,
    /// The loop that runs `core`, with its state.
    scheduler: Scheduler,
    handle: Handle,
}

/// Keeps a runtime entered on this thread; see [`Runtime::enter`].
#[must_use = "the runtime is only entered while the guard is alive"]
pub struct EnterGuard<'a> {
    _guard: EnterLevel,
    _runtime: PhantomData<&'a Runtime>,
}

impl Runtime {
    pub(crate) fn new(core: Rc<SchedulerCore>, scheduler: Scheduler) -> Runtime {
        let handle = Handle {
            shared: core.shared.clone(),
        };
        Runtime {
            core,
            scheduler,
            handle,
        }
    }

    /// Runs `future` to completion on this thread, running spawned tasks
    /// meanwhile, and returns its output.
    ///
    /// Panics if this thread is already running a Tempo runtime (inside `block_on`,
    /// `turn` or a task), or if the driver fails.
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        let _guard = current::enter_running(self.core.clone(), "block_on");
        self.scheduler.block_on(&self.core, future)
    }

    /// Runs one scheduler iteration for a host loop and reports what it did:
    /// moves remote spawns and wakes to the run queue, polls at most
    /// `event_interval` ready tasks, then polls the driver, waiting up to
    /// `max_wait` only if no task is ready.
    ///
    /// Panics if called from inside a task or `block_on` on this thread, or if the
    /// driver fails.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
    /// let job = rt.spawn(async { tempo::time::sleep(Duration::from_millis(2)).await });
    /// let mut turns = 0;
    /// while !job.is_finished() && turns < 1_000 {
    ///     let _report = rt.turn(Duration::from_millis(10)); // then the host's own work
    ///     turns += 1;
    /// }
    /// assert!(job.is_finished());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn turn(&self, max_wait: Duration) -> Turn {
        let _guard = current::enter_running(self.core.clone(), "turn");
        self.scheduler.turn(&self.core, max_wait)
    }

    /// Spawns a future onto this runtime; it runs when the runtime runs.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.core.spawn(future)
    }

    /// Runs `f` on this runtime's blocking pool; see
    /// [`spawn_blocking`](crate::task::spawn_blocking).
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle().spawn_blocking(f)
    }

    /// The runtime's handle (`Send + Sync`), for other threads.
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// A snapshot of the runtime's metrics; see [`RuntimeMetrics`].
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// Enters the runtime on this thread without running it, so that
    /// [`Handle::current`] and [`spawn`](crate::spawn) work until the guard is
    /// dropped. Guards (with [`Handle::enter`]'s) must be dropped innermost
    /// first; dropping another panics.
    pub fn enter(&self) -> EnterGuard<'_> {
        EnterGuard {
            _guard: current::enter(self.core.clone()),
            _runtime: PhantomData,
        }
    }

    /// Shuts the runtime down, waiting at most `timeout` for running blocking
    /// closures, which are then left to finish on their own threads; see
    /// [Shutdown](Runtime#shutdown).
    pub fn shutdown_timeout(self, timeout: Duration) {
        self.shutdown_tasks();
        self.handle.shared.blocking.shutdown(Some(timeout));
    }

    /// `shutdown_timeout(Duration::ZERO)`: for dropping a runtime where one must
    /// not block, such as in a task of another runtime.
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    /// Drops every task on this thread (idempotent), then releases the core so
    /// no enter guard, leaked or stale, makes it current.
    fn shutdown_tasks(&self) {
        {
            // Entered: the destructors' spawns and wakes land in the drained queue.
            let _guard = current::enter_for_shutdown(self.core.clone());
            self.core.shutdown();
        }
        self.core.release();
    }
}

impl Drop for Runtime {
    fn drop(&mut self) {
        self.shutdown_tasks();
        // A no-op if `shutdown_timeout` already ran: it does not wait twice.
        self.handle.shared.blocking.shutdown(None);
    }
}

impl fmt::Debug for Runtime {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Runtime")
            .field("core", &self.core)
            .field("scheduler", &self.scheduler)
            .finish()
    }
}

impl fmt::Debug for EnterGuard<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}
