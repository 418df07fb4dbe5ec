//! tokio's ecosystem inside Tempo (feature `tokio-compat`): a helper tokio
//! runtime whose context every Tempo runtime enters on its thread.
//!
//! A crate a program depends on (an HTTP stack, a database driver) may call
//! tokio's runtime-bound functions, which look for tokio's runtime in a
//! thread-local of tokio's and panic on a Tempo thread. With this feature,
//! every Tempo runtime sets that thread-local to the handle of one **helper
//! tokio runtime** while it is entered, so those calls work unchanged:
//!
//! * tokio's sockets, timers, `tokio::fs`, `tokio::process` and
//!   `tokio::signal` register with the helper's drivers (polled on the
//!   helper's thread); their futures are polled by the Tempo task awaiting
//!   them;
//! * `tokio::spawn` runs the task on the helper's worker thread (spawn your
//!   own with [`tempo::spawn`](crate::spawn)); its `JoinHandle` can be
//!   awaited from a Tempo task; `tokio::task::spawn_blocking` runs on the
//!   helper's blocking pool.
//!
//! The helper is a multi-thread tokio runtime with one worker, I/O and time
//! enabled, its threads named [`THREAD_NAME`]. It starts the first time a
//! Tempo runtime is entered in the process (not by a runtime built and
//! dropped without running), is shared by every runtime, and lives as long
//! as the process. If the OS refuses it, the runtime runs without it and
//! the next enter tries again.
//!
//! An event from tokio's drivers is a wake *from another thread*: on a
//! throttled runtime it waits for the next tick (up to `T`), so a
//! `tokio::time::sleep` fires on the first tick after its deadline. tokio's
//! clock is the helper's: a paused Tempo clock does not move it.
//!
//! The helper's context is entered once per Tempo enter level
//! (`current::EnterLevel`: `block_on`, `turn`, `Runtime::enter`,
//! `Handle::enter`), not per task poll, so polls cost nothing extra; and its
//! guard is dropped with the level, which keeps tokio's guard stack and
//! Tempo's in step (a guard held for the thread's life would break the
//! user's own tokio guards' order). On a Tempo thread the helper's context
//! replaces any tokio context entered before, until the level ends.
//! `task::block_in_place` and `LocalSet` are not provided; `tempo::spawn_local`
//! needs no `LocalSet`. With the feature off nothing is entered or paid.

use std::io;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// The name of the helper tokio runtime's threads (its worker and its
/// blocking pool), as a debugger, `top -H` or `/proc/<pid>/task/*/comm`
/// show them.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build()?;
/// let name = rt.block_on(async {
///     // tokio::spawn runs on the helper's worker thread.
///     tokio::spawn(async { std::thread::current().name().map(str::to_owned) })
///         .await
///         .unwrap()
/// });
/// assert_eq!(name.as_deref(), Some(tempo::tokio_compat::THREAD_NAME));
/// # Ok::<(), std::io::Error>(())
/// ```
pub const THREAD_NAME: &str = "tempo-tokio-compat";

/// The helper runtime, once started; it is never dropped (a `static`), so
/// it lives as long as the process.
static HELPER: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

/// Serialises starts, so that two threads entering their first runtime at
/// once start one helper, not two.
static STARTING: Mutex<()> = Mutex::new(());

/// The handle of the helper tokio runtime that runs what tokio's
/// runtime-bound calls need on Tempo threads, starting it if it has not
/// started yet.
///
/// Inside a Tempo runtime nothing needs it: tokio's own calls find it. It
/// is for the other threads of a program, e.g. to hand a tokio-bound
/// client to a thread that is not a Tempo runtime's (`handle.enter()`
/// there), or to `block_on` a tokio future from a plain thread.
///
/// # Errors
///
/// The OS error if the helper cannot be started (no thread or epoll
/// instance to be had); a later call tries again.
///
/// ```
/// let helper = tempo::tokio_compat::handle()?;
/// // A plain thread, not a Tempo runtime's: enter the helper explicitly.
/// let answer = std::thread::spawn(move || helper.block_on(async { 6 * 7 }))
///     .join()
///     .unwrap();
/// assert_eq!(answer, 42);
/// # Ok::<(), std::io::Error>(())
/// ```
pub fn handle() -> io::Result<tokio::runtime::Handle> {
    helper().map(|rt| rt.handle().clone())
}

fn helper() -> io::Result<&'static tokio::runtime::Runtime> {
    if let Some(rt) = HELPER.get() {
        return Ok(rt);
    }
    let _starting = STARTING.lock();
    if let Some(rt) = HELPER.get() {
        return Ok(rt);
    }
    let rt = tokio::runtime::Builder::new_multi_thread()
        // One worker: it polls the drivers and runs what `tokio::spawn`
        // puts there. Tempo's threads poll everything else.
        .worker_threads(1)
        .thread_name(THREAD_NAME)
        .enable_all()
        .build()?;
    Ok(HELPER.get_or_init(|| rt))
}

/// The helper's context entered on this thread: one part of a Tempo enter
/// level. `!Send`, like tokio's guard inside it.
pub(crate) struct HelperEntered {
    _guard: tokio::runtime::EnterGuard<'static>,
}

/// Enters the helper's context on this thread, starting the helper if
/// needed; `None` if it cannot be started, or if tokio's thread-local is
/// gone (a runtime dropped by a thread-local destructor at thread exit,
/// where tokio's `enter` would panic).
pub(crate) fn enter() -> Option<HelperEntered> {
    enter_with(|| helper().ok())
}

/// As [`enter`], but only if the helper runs already.
pub(crate) fn enter_if_started() -> Option<HelperEntered> {
    enter_with(|| HELPER.get())
}

fn enter_with(
    rt: impl FnOnce() -> Option<&'static tokio::runtime::Runtime>,
) -> Option<HelperEntered> {
    if tokio::runtime::Handle::try_current().is_err_and(|e| e.is_thread_local_destroyed()) {
        return None;
    }
    Some(HelperEntered {
        _guard: rt()?.handle().enter(),
    })
}
