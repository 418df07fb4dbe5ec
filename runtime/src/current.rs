//! Entering a runtime on this thread: one [`EnterLevel`] enters the
//! drivers (so that sockets and timers register with them), the scheduler
//! (so that [`Handle::current`](crate::runtime::Handle::current),
//! [`spawn`](crate::spawn) and local wakes find it; see
//! [`scheduler::core`](crate::scheduler::core)) and, with `tokio-compat`,
//! tokio's helper runtime, and leaves them in reverse order.
//!
//! Levels nest as a stack, and each takes one level of the thread's
//! [`EnterDepth`] (as tokio's guards): a guard dropped while a later one is
//! alive panics instead of restoring a stale runtime, and leaves the driver
//! thread-locals as they are. Running (inside `block_on` or `turn`) is
//! recorded too: a nested `block_on` would stall every task of the outer
//! one, so it panics instead.

use std::rc::Rc;
use std::sync::Arc;

use tempo_park::scoped::{EnterDepth, ScopedGuard};

use crate::driver::DriverEnterGuard;
use crate::scheduler::core::{
    core_of, enter_on_thread, is_running, Entered, SchedulerCore, SchedulerShared,
};

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
    tokio: Option<crate::tokio_compat::HelperEntered>,
}

impl EnterLevel {
    /// Enters the runtime behind `shared` at a new level, from any thread
    /// ([`Handle::enter`](crate::runtime::Handle::enter)): its drivers, so
    /// that sockets and timers register with them, and the runtime itself,
    /// so that `Handle::current` and `spawn` find it. On the thread that
    /// owns it (inside its `block_on`), the core stays entered, so local
    /// wakes keep their fast path.
    pub(crate) fn handle(shared: &Arc<SchedulerShared>) -> EnterLevel {
        let entry = Entered {
            core: core_of(shared),
            remote: Some(shared.clone()),
            running: is_running(),
        };
        EnterLevel::new(shared, entry, Compat::Start)
    }

    /// The one constructor: takes a depth level, then enters the drivers
    /// behind `shared`, the runtime, and tokio's helper (see
    /// [`crate::tokio_compat`]), in the order [`Drop`] undoes.
    fn new(shared: &SchedulerShared, entry: Entered, compat: Compat) -> EnterLevel {
        let depth = EnterDepth::enter();
        let drivers = Some(shared.handles.enter());
        let runtime = Some(enter_on_thread(entry));
        #[cfg(not(feature = "tokio-compat"))]
        let _ = compat;
        EnterLevel {
            depth,
            drivers,
            runtime,
            #[cfg(feature = "tokio-compat")]
            tokio: match compat {
                Compat::Start => crate::tokio_compat::enter(),
                Compat::IfStarted => crate::tokio_compat::enter_if_started(),
            },
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
enum Compat {
    /// Start it: the runtime is about to run or be used.
    Start,
    /// Enter it only if it runs already: a runtime shutting down (which
    /// may never have run) does not start a thread to drop its tasks.
    IfStarted,
}

fn enter_as(core: Rc<SchedulerCore>, running: bool, compat: Compat) -> EnterLevel {
    let shared = core.shared.clone();
    let entry = Entered {
        core: Some(core),
        remote: None,
        running,
    };
    EnterLevel::new(&shared, entry, compat)
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
