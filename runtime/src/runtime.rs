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

/// A single-thread Tempo runtime: a scheduler, its driver, and every task
/// spawned onto it.
///
/// Build one with [`Builder`], then either hand it
/// the thread with [`block_on`](Runtime::block_on), or drive it from your
/// own loop with [`turn`](Runtime::turn).
///
/// # `!Send`, unlike tokio's
///
/// A `Runtime` stays on the thread that built it, because it owns the
/// `!Send` futures of [`spawn_local`](crate::spawn_local) and drops them
/// there on shutdown. Use a [`Handle`] (`Send + Sync`) to reach it from
/// other threads.
///
/// ```compile_fail
/// fn assert_send<T: Send>() {}
/// assert_send::<tempo::runtime::Runtime>();
/// ```
///
/// # Shutdown
///
/// Dropping the runtime (or [`shutdown_timeout`](Runtime::shutdown_timeout),
/// or [`shutdown_background`](Runtime::shutdown_background)) first drops
/// every task's future and stored output on this thread, makes every
/// JoinHandle resolve to a cancelled [`JoinError`](crate::task::JoinError),
/// and makes later spawns through a `Handle` resolve cancelled.
///
/// Then it shuts the blocking pool down: closures given to
/// [`spawn_blocking`](crate::task::spawn_blocking) that have not started
/// are dropped (their JoinHandles resolve cancelled), and later ones are
/// refused the same way. Closures already running cannot be interrupted:
/// as in tokio, dropping the runtime **waits for them as long as they
/// run**; `shutdown_timeout` waits at most its timeout and
/// `shutdown_background` does not wait, leaving them to finish on their
/// own threads.
///
/// ```
/// use tempo::runtime::Builder;
///
/// let rt = Builder::new_current_thread().build().unwrap();
/// let total = rt.block_on(async {
///     let a = tempo::spawn(async { 1 });
///     let b = tempo::spawn(async { 2 });
///     a.await.unwrap() + b.await.unwrap()
/// });
/// assert_eq!(total, 3);
/// ```
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
    /// # Panics
    ///
    /// Panics if this thread is already running a Tempo runtime (inside
    /// `block_on`, `turn` or a task): use `.await` or spawn instead.
    /// Panics if the driver fails.
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
    /// let echoed = rt.block_on(async {
    ///     let a = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     let b = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     a.send_to(b"ping", b.local_addr()?).await?;
    ///     let mut buf = [0u8; 8];
    ///     let (n, _) = b.recv_from(&mut buf).await?;
    ///     Ok::<_, std::io::Error>(buf[..n].to_vec())
    /// })?;
    /// assert_eq!(echoed, b"ping");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        let _guard = current::enter_running(self.core.clone(), "block_on");
        self.scheduler.block_on(&self.core, future)
    }

    /// Runs one scheduler iteration and reports what it did.
    ///
    /// It moves tasks spawned or woken from other threads to the run queue,
    /// polls ready tasks (at most `event_interval` of them), then parks the
    /// driver: for at most `max_wait` if no task is ready any more
    /// (`Duration::ZERO` polls it without blocking), with a zero timeout
    /// otherwise; the driver is polled on every turn.
    ///
    /// This is how a host loop (a media framework's own thread, a game
    /// loop) drives Tempo instead of giving it the thread.
    ///
    /// # Panics
    ///
    /// Panics if called from inside a task or `block_on` of a runtime on
    /// this thread, or if the driver fails.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = tempo::runtime::Builder::new_current_thread().enable_all().build()?;
    /// let job = rt.spawn(async { tempo::time::sleep(Duration::from_millis(2)).await });
    /// // The host's loop: one turn per iteration, each waiting at most 10 ms.
    /// let mut turns = 0;
    /// while !job.is_finished() && turns < 1_000 {
    ///     let turn = rt.turn(Duration::from_millis(10));
    ///     turns += 1;
    ///     // ... the host's own work, using what `turn` reports ...
    ///     let _ = turn.tasks_polled();
    /// }
    /// assert!(job.is_finished());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn turn(&self, max_wait: Duration) -> Turn {
        let _guard = current::enter_running(self.core.clone(), "turn");
        self.scheduler.turn(&self.core, max_wait)
    }

    /// Spawns a future onto this runtime. It runs when the runtime runs
    /// (`block_on` or `turn`).
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build()?;
    /// let join = rt.spawn(async { 6 * 7 }); // not polled yet
    /// assert_eq!(rt.block_on(join).unwrap(), 42);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.core.spawn(future)
    }

    /// Runs the blocking closure `f` on this runtime's blocking pool; see
    /// [`spawn_blocking`](crate::task::spawn_blocking).
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
    /// let join = rt.spawn_blocking(|| std::thread::current().name().map(str::to_owned));
    /// let name = rt.block_on(join).unwrap();
    /// assert_eq!(name.as_deref(), Some("tempo-blocking"));
    /// ```
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.handle().spawn_blocking(f)
    }

    /// The runtime's handle, for other threads.
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build()?;
    /// let handle = rt.handle().clone(); // Send + Sync, unlike the Runtime
    /// let join = std::thread::spawn(move || handle.spawn(async { 1 })).join().unwrap();
    /// assert_eq!(rt.block_on(join).unwrap(), 1);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn handle(&self) -> &Handle {
        &self.handle
    }

    /// A snapshot of the runtime's metrics; see [`RuntimeMetrics`].
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build()?;
    /// let before = rt.metrics();
    /// rt.block_on(async {
    ///     for _ in 0..3 {
    ///         tempo::spawn(async {}).await.unwrap();
    ///     }
    /// });
    /// let work = rt.metrics().since(&before);
    /// assert!(work.tasks_polled >= 3);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn metrics(&self) -> RuntimeMetrics {
        self.handle.metrics()
    }

    /// Enters the runtime on this thread without running it, so that
    /// [`Handle::current`], [`spawn`](crate::spawn) and
    /// [`spawn_local`](crate::spawn_local) work until the guard is dropped.
    ///
    /// Guards nest: dropping one restores the runtime entered before it.
    /// They must be dropped in the reverse order of their creation, as in
    /// tokio (this includes [`Handle::enter`] guards): dropping one that is
    /// not the innermost panics, rather than leave a stale runtime current.
    ///
    /// ```
    /// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
    /// let join = {
    ///     let _guard = rt.enter();
    ///     tempo::spawn(async { 7 })
    /// };
    /// assert_eq!(rt.block_on(join).unwrap(), 7);
    /// ```
    pub fn enter(&self) -> EnterGuard<'_> {
        EnterGuard {
            _guard: current::enter(self.core.clone()),
            _runtime: PhantomData,
        }
    }

    /// Shuts the runtime down, waiting at most `timeout` for running
    /// blocking closures to return; see the [type docs](Runtime#shutdown).
    ///
    /// Tasks are dropped at once on this thread; only
    /// [`spawn_blocking`](crate::task::spawn_blocking) closures already
    /// running are waited for. Those still running at the timeout are left
    /// to finish on their own threads (which then exit).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
    /// let (tx, rx) = std::sync::mpsc::channel::<()>();
    /// // A closure that blocks until `tx` is dropped.
    /// drop(rt.spawn_blocking(move || rx.recv()));
    /// rt.shutdown_timeout(Duration::from_millis(10));
    /// drop(tx); // the detached closure returns, its thread exits
    /// ```
    pub fn shutdown_timeout(self, timeout: Duration) {
        self.shutdown_tasks();
        self.handle.shared.blocking.shutdown(Some(timeout));
    }

    /// Shuts the runtime down without waiting for running blocking
    /// closures: `shutdown_timeout(Duration::ZERO)`; see the
    /// [type docs](Runtime#shutdown).
    ///
    /// Dropping a runtime waits for its running blocking closures however
    /// long they take; use this to drop one from a place that must not
    /// block, such as a task of another runtime.
    ///
    /// ```
    /// let outer = tempo::runtime::Builder::new_current_thread().build().unwrap();
    /// outer.block_on(async {
    ///     let inner = tempo::runtime::Builder::new_current_thread().build().unwrap();
    ///     drop(inner.spawn_blocking(|| std::thread::sleep(std::time::Duration::from_millis(10))));
    ///     inner.shutdown_background(); // does not wait for the sleep
    /// });
    /// ```
    pub fn shutdown_background(self) {
        self.shutdown_timeout(Duration::ZERO);
    }

    /// Drops every task on this thread (idempotent), then releases the
    /// core: from then on no enter guard, leaked or stale, makes it
    /// current.
    fn shutdown_tasks(&self) {
        {
            // Entered, so that spawns and wakes made by the tasks'
            // destructors land in the local queue, which shutdown drains.
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
