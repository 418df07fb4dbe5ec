//! tokio's ecosystem inside Tempo (feature `tokio-compat`): while a Tempo
//! runtime is entered on a thread, tokio's thread-local points at one
//! shared **helper tokio runtime** (one worker, I/O and time, started at
//! the first enter, living as long as the process), so tokio's
//! runtime-bound calls in dependencies work unchanged. What runs where, the
//! timing under throttling and what is not provided:
//! `docs/coming-from-tokio.md`.
//!
//! The helper's context is entered once per Tempo enter level
//! (`current::EnterLevel`), not per task poll, and its guard dropped with
//! the level, so tokio's guard stack and Tempo's stay in step.

use std::io;
use std::sync::OnceLock;

use parking_lot::Mutex;

/// The name of the helper tokio runtime's threads (its worker and its
/// blocking pool).
pub const THREAD_NAME: &str = "tempo-tokio-compat";

/// The helper runtime, once started; a `static`, never dropped.
static HELPER: OnceLock<tokio::runtime::Runtime> = OnceLock::new();

/// Serialises starts, so two threads start one helper.
static STARTING: Mutex<()> = Mutex::new(());

/// The handle of the helper tokio runtime, starting it if needed: for
/// threads that are not a Tempo runtime's (inside one, tokio's calls find it).
///
/// # Errors
///
/// The OS error if the helper cannot be started; a later call tries again.
///
/// ```
/// let helper = tempo::tokio_compat::handle()?;
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
        // One worker: the drivers and `tokio::spawn`'s tasks.
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

/// Enters the helper's context on this thread, starting it if needed;
/// `None` if it cannot start or tokio's thread-local is gone (thread exit).
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
