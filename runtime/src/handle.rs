//! [`Handle`]: a `Send + Sync` reference to a runtime, for other threads.

use std::fmt;
use std::future::Future;
use std::pin::pin;
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, Thread};

use crate::current::EnterLevel;
use crate::metrics::RuntimeMetrics;
use crate::scheduler::core::{current_shared, is_running, SchedulerShared};
use crate::task::JoinHandle;

/// A cheap, cloneable reference to a [`Runtime`](crate::runtime::Runtime)
/// that can spawn onto it from any thread (see the [module](crate::runtime)
/// example); a remote spawn wakes the runtime's thread only if it is parked.
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<SchedulerShared>,
}

/// The error of [`Handle::try_current`]: this thread is not in a Tempo
/// runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TryCurrentError(());

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "there is no Tempo runtime on this thread: call this from inside \
             Runtime::block_on, a task, or after Runtime::enter",
        )
    }
}

impl std::error::Error for TryCurrentError {}

impl Handle {
    /// Returns the handle of the runtime entered on this thread.
    ///
    /// Panics outside a runtime; see [`try_current`](Handle::try_current).
    #[track_caller]
    pub fn current() -> Handle {
        match Handle::try_current() {
            Ok(handle) => handle,
            Err(e) => panic!("Handle::current: {e}"),
        }
    }

    /// The handle of the runtime entered on this thread, or an error if none.
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        current_shared()
            .map(|shared| Handle { shared })
            .ok_or(TryCurrentError(()))
    }

    /// Spawns a future onto the runtime, from any thread. After shutdown the
    /// future is dropped and the handle resolves cancelled.
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shared.spawn(future)
    }

    /// Runs `f` on the runtime's blocking pool, from any thread; see
    /// [`spawn_blocking`](crate::task::spawn_blocking).
    pub fn spawn_blocking<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        self.shared.blocking.spawn(f)
    }

    /// Number of driver unparks issued by remote spawns and wakes (only a
    /// parked runtime is unparked, once per burst).
    pub fn unpark_count(&self) -> u64 {
        self.shared.unpark_count()
    }

    /// Wakes the runtime's thread now, whatever it is doing: for control
    /// operations that must not wait for the next tick (a state change, a
    /// shutdown), called after queueing the work. Costs a syscall only if the
    /// thread sleeps or parks.
    pub fn unpark(&self) {
        self.shared.unpark();
    }

    /// [`spawn`](Self::spawn), then [`unpark`](Self::unpark): the task runs
    /// without waiting for the next tick.
    pub fn spawn_and_unpark<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        let join = self.spawn(future);
        self.unpark();
        join
    }

    /// Runs `future` on the runtime's thread (unlike tokio's, not the
    /// caller's) and blocks the calling thread until it completes; it starts at
    /// once even under throttling.
    ///
    /// Panics on a thread that runs a Tempo runtime or owns this one (it would wait
    /// for work only it can do), if `future` panics (resumed here), or if the
    /// runtime shuts down first.
    ///
    /// ```
    /// use std::sync::mpsc;
    /// use tokio::sync::oneshot;
    ///
    /// let (handle_tx, handle_rx) = mpsc::channel();
    /// let (stop_tx, stop_rx) = oneshot::channel::<()>();
    /// let runtime_thread = std::thread::spawn(move || {
    ///     let rt = tempo::runtime::Builder::new_current_thread().enable_all().build().unwrap();
    ///     handle_tx.send(rt.handle().clone()).unwrap();
    ///     rt.block_on(async { stop_rx.await.ok() });
    /// });
    /// let handle = handle_rx.recv().unwrap();
    /// let addr = handle.block_on(async {
    ///     let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     socket.local_addr()
    /// })?;
    /// assert!(addr.ip().is_loopback());
    /// stop_tx.send(()).unwrap();
    /// runtime_thread.join().unwrap();
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        if is_running() {
            panic!(
                "Cannot call Handle::block_on from a thread that runs a Tempo runtime (inside \
                 block_on, turn or a task, e.g. on a context's own thread): it would wait for \
                 work that only this thread can do. Use .await, or spawn the future instead."
            );
        }
        if thread::current().id() == self.shared.owner {
            panic!(
                "Cannot call Handle::block_on on the thread that owns the runtime (the thread \
                 that built it): only this thread runs the runtime's tasks, so it would wait \
                 forever. Call Runtime::block_on on this thread instead, or call \
                 Handle::block_on from another thread."
            );
        }
        let mut join = pin!(self.spawn_and_unpark(future));
        let waker = Waker::from(Arc::new(ThreadWaker(thread::current())));
        let mut cx = Context::from_waker(&waker);
        let result = loop {
            match join.as_mut().poll(&mut cx) {
                Poll::Ready(result) => break result,
                // A spurious return polls again.
                Poll::Pending => thread::park(),
            }
        };
        match result {
            Ok(output) => output,
            Err(error) if error.is_panic() => std::panic::resume_unwind(error.into_panic()),
            Err(_) => panic!("Handle::block_on: the runtime shut down before the future completed"),
        }
    }

    /// Enters the runtime on this thread (any thread) until the guard is
    /// dropped, as tokio's `Handle::enter`: sockets and timers created here
    /// register with its drivers and [`tempo::spawn`](crate::spawn) finds it. It
    /// does not run the runtime here. Guards must be dropped innermost first.
    pub fn enter(&self) -> HandleEnterGuard {
        HandleEnterGuard {
            _drivers: EnterLevel::handle(&self.shared),
        }
    }

    /// A snapshot of the runtime's metrics (at most one tick old).
    pub fn metrics(&self) -> RuntimeMetrics {
        self.shared.metrics()
    }

    /// The runtime's throttling period; `Duration::ZERO` for the basic
    /// scheduler.
    pub fn max_throttling(&self) -> std::time::Duration {
        self.shared.flavor.period()
    }
}

/// Keeps a runtime entered on this thread; see [`Handle::enter`].
#[derive(Debug)]
#[must_use = "the drivers are only entered while the guard is alive"]
pub struct HandleEnterGuard {
    _drivers: EnterLevel,
}

/// Wakes a thread blocked in [`Handle::block_on`].
struct ThreadWaker(Thread);

impl Wake for ThreadWaker {
    fn wake(self: Arc<Self>) {
        self.0.unpark();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.unpark();
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("shared", &self.shared)
            .finish()
    }
}
