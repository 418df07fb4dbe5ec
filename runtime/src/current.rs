//! Which runtime this thread is in.
//!
//! A thread-local records the runtime *entered* on this thread (by
//! `block_on`, `turn`, [`Runtime::enter`](crate::runtime::Runtime::enter),
//! and shutdown; or, from any thread, by
//! [`Handle::enter`](crate::runtime::Handle::enter), which enters the
//! runtime's shared half only, as tokio's does) and whether it is
//! *running* (inside `block_on` or `turn`).
//! Entering is what makes [`Handle::current`](crate::runtime::Handle::current),
//! [`spawn`](crate::spawn) and [`spawn_local`](crate::spawn_local) work,
//! and what routes a wake on this thread to the local run queue. Running is
//! what `block_on` checks: a nested `block_on` would stall every task of
//! the outer one, so it panics instead.
//!
//! The thread-local and its guards are `tempo_park::scoped`'s, the one home
//! of the "current X" pattern of the stack: guards nest as a stack, every
//! access uses `try_with` (a runtime dropped by a thread-local destructor
//! at thread exit finds the thread-local gone and shuts down without it).
//! Two rules are this module's own:
//!
//! * **Depth-checked guards.** Every [`EnterLevel`] (from `Runtime::enter`,
//!   `Handle::enter`, `block_on`, `turn`) takes one level of the thread's
//!   [`EnterDepth`], as in tokio: a guard dropped while a later one is
//!   alive panics instead of restoring a stale runtime, and leaves the
//!   driver thread-locals as they are too.
//! * **Released runtimes are never current.** A runtime whose `Runtime` was
//!   dropped is removed when found (a leaked or out-of-order guard can
//!   leave it there), so `spawn` cannot queue a task that never runs.

use std::future::Future;
use std::rc::Rc;
use std::sync::Arc;

use tempo_park::scoped::{EnterDepth, ScopedGuard};

use crate::driver::DriverEnterGuard;
use crate::scheduler::core::{SchedulerCore, SchedulerShared};
use crate::task::JoinHandle;

/// What this thread has entered.
#[derive(Clone)]
struct Entered {
    /// The runtime; `None` once a released one was removed, or when only
    /// `remote` was entered.
    core: Option<Rc<SchedulerCore>>,
    /// The runtime entered through [`Handle::enter`](crate::runtime::Handle::enter).
    /// Only used when `core` is `None` (a thread that does not own it, or
    /// does not run it): spawns then go to its injection queue.
    remote: Option<Arc<SchedulerShared>>,
    /// Inside `block_on` or `turn` (of this runtime or an outer one).
    running: bool,
}

tempo_park::scoped_thread_local! {
    static ENTERED: Entered
}

/// One level of the thread's enter stack: the drivers entered, and the
/// runtime (its core for `Runtime::enter`, `block_on`, `turn`; its shared
/// half, plus its core where this thread has it entered already, for
/// [`Handle::enter`](crate::runtime::Handle::enter)). `!Send`.
///
/// Every level, `Handle::enter`'s included, counts in the thread's
/// [`EnterDepth`], so that no guard can be interleaved with another: the
/// driver thread-locals of `tempo-io` and `tempo-time` restore their
/// previous handle as a stack too.
pub(crate) struct EnterLevel {
    depth: EnterDepth,
    drivers: Option<DriverEnterGuard>,
    runtime: Option<ScopedGuard<Entered>>,
    /// The helper tokio runtime's context (see [`crate::tokio_compat`]):
    /// entered last, left first.
    #[cfg(feature = "tokio-compat")]
    tokio: Option<crate::tokio_compat::Entered>,
}

impl EnterLevel {
    /// Enters the runtime behind `shared` at a new level, from any thread
    /// ([`Handle::enter`](crate::runtime::Handle::enter)): its drivers, so
    /// that sockets and timers register with them, and the runtime itself,
    /// so that `Handle::current` and `spawn` find it. On the thread that
    /// owns it (inside its `block_on`), the core stays entered, so local
    /// wakes keep their fast path.
    pub(crate) fn handle(shared: &Arc<SchedulerShared>) -> EnterLevel {
        let depth = EnterDepth::enter();
        let drivers = Some(shared.handles.enter());
        let core = core_of(shared);
        let runtime = Some(ENTERED.enter(Entered {
            core,
            remote: Some(shared.clone()),
            running: is_running(),
        }));
        EnterLevel {
            depth,
            drivers,
            runtime,
            #[cfg(feature = "tokio-compat")]
            tokio: crate::tokio_compat::enter(Compat::Start),
        }
    }
}

impl Drop for EnterLevel {
    fn drop(&mut self) {
        if !self.depth.leave() {
            // Out of order: restore nothing (the guards' clones of the
            // handles are leaked, a few words, on this programming-error
            // path only). A runtime left entered this way is never handed
            // out once dropped: see `current_core`. Then panic, unless the
            // thread already panics (a second panic would abort). tokio's
            // guard is out of order too, and would panic in its own drop.
            #[cfg(feature = "tokio-compat")]
            std::mem::forget(self.tokio.take());
            std::mem::forget(self.drivers.take());
            if let Some(runtime) = self.runtime.take() {
                runtime.forget();
            }
            if !std::thread::panicking() {
                panic!("{}", tempo_park::scoped::OUT_OF_ORDER);
            }
            return;
        }
        // Innermost: restore tokio's previous context, the previous driver
        // handles, then the runtime.
        #[cfg(feature = "tokio-compat")]
        drop(self.tokio.take());
        drop(self.drivers.take());
        drop(self.runtime.take());
    }
}

impl std::fmt::Debug for EnterLevel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("EnterLevel")
            .field("runtime", &self.runtime.is_some())
            .finish_non_exhaustive()
    }
}

/// Enters `core` on this thread (not running it).
pub(crate) fn enter(core: Rc<SchedulerCore>) -> EnterLevel {
    enter_as(core, is_running(), Compat::Start)
}

/// Enters `core` on this thread to shut it down: as [`enter`], but a
/// runtime that may never have run does not start the tokio-compat helper.
pub(crate) fn enter_for_shutdown(core: Rc<SchedulerCore>) -> EnterLevel {
    enter_as(core, is_running(), Compat::IfStarted)
}

/// Whether an enter level may start the tokio-compat helper runtime (see
/// [`crate::tokio_compat`]; without the feature it is ignored).
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Compat {
    /// Start it: the runtime is about to run or be used.
    Start,
    /// Enter it only if it runs already: a runtime shutting down (which
    /// may never have run) does not start a thread to drop its tasks.
    IfStarted,
}

fn enter_as(core: Rc<SchedulerCore>, running: bool, compat: Compat) -> EnterLevel {
    let depth = EnterDepth::enter();
    let drivers = Some(core.shared.handles.enter());
    let runtime = Some(ENTERED.enter(Entered {
        core: Some(core),
        remote: None,
        running,
    }));
    #[cfg(feature = "tokio-compat")]
    let tokio = crate::tokio_compat::enter(compat);
    #[cfg(not(feature = "tokio-compat"))]
    let _ = compat;
    EnterLevel {
        depth,
        drivers,
        runtime,
        #[cfg(feature = "tokio-compat")]
        tokio,
    }
}

/// Enters `core` and marks this thread as running a scheduler.
///
/// # Panics
///
/// If this thread already runs one (a nested `block_on` or `turn`).
#[track_caller]
pub(crate) fn enter_running(core: Rc<SchedulerCore>, what: &str) -> EnterLevel {
    if is_running() {
        panic!(
            "Cannot call {what} from inside a Tempo runtime: this thread is already running \
             one (inside block_on, turn or a task), and blocking it would stall every task. \
             Use .await or spawn the future instead."
        );
    }
    enter_as(core, true, Compat::Start)
}

/// `true` if this thread runs a scheduler (inside `block_on` or `turn`).
pub(crate) fn is_running() -> bool {
    ENTERED.with(|entered| entered.is_some_and(|e| e.running))
}

/// The core of `shared`'s runtime if it is the one entered on this thread
/// (this thread owns it and runs or entered it), else `None`.
///
/// A runtime that was dropped is not current, whatever the context says
/// (a leaked or out-of-order enter guard can leave it there): it is
/// removed instead, so that no spawn or wake lands in its dead run queue.
pub(crate) fn core_of(shared: &Arc<SchedulerShared>) -> Option<Rc<SchedulerCore>> {
    current_core().filter(|core| Arc::ptr_eq(&core.shared, shared))
}

/// The shared half of the runtime entered on this thread (its core's, or
/// the one [`Handle::enter`](crate::runtime::Handle::enter) entered), if
/// any and not shut down.
pub(crate) fn current_shared() -> Option<Arc<SchedulerShared>> {
    if let Some(core) = current_core() {
        return Some(core.shared.clone());
    }
    let remote = ENTERED.with(|entered| entered.and_then(|e| e.remote.clone()))?;
    (!remote.is_shut_down()).then_some(remote)
}

/// The runtime entered on this thread, if any and not dropped.
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
pub(crate) fn spawn_local<F>(future: F) -> Option<JoinHandle<F::Output>>
where
    F: Future + 'static,
    F::Output: 'static,
{
    Some(current_core()?.spawn_local(future))
}
