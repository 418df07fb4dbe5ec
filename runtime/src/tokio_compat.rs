//! tokio's ecosystem inside Tempo (feature `tokio-compat`): a helper tokio
//! runtime whose context every Tempo runtime enters on its thread.
//!
//! # Why
//!
//! A program moved from tokio to Tempo imports Tempo's names, but a crate it
//! depends on (an HTTP or gRPC stack, a database driver, a library that
//! calls `tokio::time::sleep` or `tokio::fs::File`) still calls tokio's
//! runtime-bound functions. Those look for tokio's runtime in a thread-local
//! of tokio's, find none on a Tempo thread, and panic with "there is no
//! reactor running". The program cannot change someone else's imports.
//!
//! With this feature every Tempo runtime sets that thread-local to the
//! handle of one **helper tokio runtime** while it is entered, so those
//! calls work unchanged from Tempo tasks:
//!
//! * tokio's sockets, timers, `tokio::fs` (including `File`),
//!   `tokio::process` and `tokio::signal` register with the helper's
//!   drivers, which the helper's thread polls; their futures are still
//!   polled by the Tempo task that awaits them, on Tempo's thread.
//! * `tokio::spawn` runs the task **on the helper's worker thread**, not on
//!   Tempo's (spawn your own tasks with [`tempo::spawn`](crate::spawn));
//!   its `JoinHandle` can be awaited from a Tempo task, and a panic in it
//!   reaches the awaiting task as a `tokio::task::JoinError`, as under
//!   tokio.
//! * `tokio::task::spawn_blocking` runs on the helper's blocking pool.
//!
//! The helper is a multi-thread tokio runtime with one worker thread, I/O
//! and time enabled, its threads (worker and blocking pool) named
//! [`THREAD_NAME`]. It is started the first time a Tempo runtime is entered
//! in the process (its first `block_on`, `turn`, `enter` or
//! `Handle::enter`), is shared by every Tempo runtime and context of the
//! process, and lives as long as the process. It is *not* started by a
//! program that never enters a Tempo runtime, nor by a runtime that is
//! built and dropped without running. If the OS refuses it (no thread, no
//! epoll instance), the runtime runs without it, tokio's calls panic as
//! they would without the feature, and the next enter tries again.
//!
//! # Wakes under throttling
//!
//! tokio's drivers run on the helper's thread, so an event they deliver (a
//! socket ready, a tokio timer fired, a `tokio::spawn`ed task finished) is
//! a wake *from another thread* for the Tempo task that waits for it, and
//! follows Tempo's rule for those: on a throttled runtime
//! (`max_throttling(T)`) it is queued without a syscall while the runtime
//! sleeps between ticks and runs at the next tick, up to `T` later; a
//! parked, idle runtime is woken at once. So a tokio socket on a throttled
//! runtime has the same latency as a Tempo socket (up to `T`), and a
//! `tokio::time::sleep` fires on the first tick after its deadline (never
//! early, up to `T` late), not at the nearest tick as `tempo::time::sleep`
//! does. On the basic scheduler each such wake unparks the runtime at once.
//! tokio's clock is the helper's: a Tempo runtime's paused clock
//! (`start_paused`, `tempo::time::advance`) does not move it.
//!
//! # Design: enter once per runtime entry, not per task poll
//!
//! tokio's context is a stack of guards, like Tempo's. The two choices were
//! entering the helper's context around each task poll, or once per entry
//! of a runtime on a thread. This module does the latter: the guard is one
//! more part of Tempo's own enter level (`current::EnterLevel`), taken by
//! `block_on`, `turn`, `Runtime::enter` and `Handle::enter`, and dropped
//! with it. Every task poll happens inside the `block_on` or `turn` that
//! entered it, so polls cost nothing extra; `block_on` pays one enter and
//! exit, and a host loop one per `turn` (a thread-local swap and a
//! reference count: 40 to 60 ns more per enter and exit, no measurable
//! change per task poll, in `benches/benches/compat.rs`). This covers every thread a runtime runs on: a
//! context's thread (its `block_on`), the caller's thread of
//! `Runtime::block_on`, a host's thread calling `turn`, and nested
//! runtimes, whose levels nest with tokio's guards in the same order.
//!
//! A guard held for the thread's whole life instead would have to be
//! created and dropped by someone who knows the thread's life (the user's
//! thread calling `block_on` is not Tempo's), and tokio's guards are `!Send`
//! and must be dropped in reverse order: one left behind on the user's
//! thread would make the user's own later `tokio::runtime::Handle::enter`
//! guards drop out of order. Tying it to Tempo's levels keeps both stacks
//! in step.
//!
//! Consequences: on a Tempo thread, the helper's context replaces any tokio
//! context entered before (it is restored when the Tempo level ends); Tempo
//! enter guards and tokio's `EnterGuard`s form one stack, dropped in
//! reverse order (as each kind already must be). tokio's
//! `task::block_in_place` and `LocalSet` are not provided (Tempo's thread
//! is not a tokio worker); `tempo::spawn_local` needs no `LocalSet`.
//!
//! With the feature off this module, the guard field and its calls are
//! compiled out: nothing is entered and nothing is paid.

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
pub(crate) struct Entered {
    _guard: tokio::runtime::EnterGuard<'static>,
}

/// Enters the helper's context on this thread, starting the helper if
/// needed; `None` if it cannot be started, or if tokio's thread-local is
/// gone (a runtime dropped by a thread-local destructor at thread exit,
/// where tokio's `enter` would panic).
pub(crate) fn enter() -> Option<Entered> {
    enter_with(|| helper().ok())
}

/// As [`enter`], but only if the helper runs already.
pub(crate) fn enter_if_started() -> Option<Entered> {
    enter_with(|| HELPER.get())
}

fn enter_with(rt: impl FnOnce() -> Option<&'static tokio::runtime::Runtime>) -> Option<Entered> {
    if tokio::runtime::Handle::try_current().is_err_and(|e| e.is_thread_local_destroyed()) {
        return None;
    }
    Some(Entered {
        _guard: rt()?.handle().enter(),
    })
}
