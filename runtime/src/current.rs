//! Entering a runtime on this thread: one [`EnterLevel`] enters the
//! drivers, the scheduler and (with `tokio-compat`) tokio's helper, and
//! leaves them in reverse order. Invariant: levels nest as a stack counted
//! in the thread's [`EnterDepth`]; a guard dropped while a later one lives
//! panics instead of restoring a stale runtime. A nested `block_on` would
//! stall the outer one's tasks, so it panics too.

use std::rc::Rc;
use std::sync::Arc;

use tempo_park::scoped::{EnterDepth, ScopedGuard};

use crate::driver::DriverEnterGuard;
use crate::scheduler::core::{
    core_of, enter_on_thread, is_running, Entered, SchedulerCore, SchedulerShared,
};

/// One level of the thread's enter stack: the drivers entered and the
/// runtime (its core, or for `Handle::enter` its shared half). `!Send`.
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
    /// Enters the runtime behind `shared` from any thread (`Handle::enter`);
    /// on its owning thread the core stays entered, keeping local wakes fast.
    pub(crate) fn handle(shared: &Arc<SchedulerShared>) -> EnterLevel {
        let entry = Entered {
            core: core_of(shared),
            remote: Some(shared.clone()),
            running: is_running(),
        };
        EnterLevel::new(shared, entry, Compat::Start)
    }

    /// The one constructor: a depth level, then the drivers, the runtime
    /// and tokio's helper, in the order [`Drop`] undoes.
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
            // Out of order: restore nothing (a few leaked words on this
            // error path; `current_core` never hands out a dropped runtime),
            // then panic unless already panicking.
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

/// Enters `core` to shut it down; does not start the tokio-compat helper.
pub(crate) fn enter_for_shutdown(core: Rc<SchedulerCore>) -> EnterLevel {
    enter_as(core, is_running(), Compat::IfStarted)
}

/// Whether an enter level may start the tokio-compat helper.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Compat {
    /// Start it: the runtime is about to run or be used.
    Start,
    /// Only if it runs already: a shutdown starts no thread.
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

/// Enters `core` and marks this thread as running a scheduler. Panics if
/// it already runs one (a nested `block_on` or `turn`).
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
