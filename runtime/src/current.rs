//! Which runtime this thread is in.
//!
//! A thread-local records the runtime *entered* on this thread (by
//! `block_on`, `turn`, [`Runtime::enter`](crate::runtime::Runtime::enter),
//! and shutdown) and whether it is *running* (inside `block_on` or `turn`).
//! Entering is what makes [`Handle::current`](crate::runtime::Handle::current),
//! [`spawn`](crate::spawn) and [`spawn_local`](crate::spawn_local) work,
//! and what routes a wake on this thread to the local run queue. Running is
//! what `block_on` checks: a nested `block_on` would stall every task of
//! the outer one, so it panics instead.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::marker::PhantomData;
use std::rc::Rc;

use crate::driver::DriverEnterGuard;
use crate::scheduler::basic::Core;
use crate::sync::thread_local;
use crate::task::JoinHandle;

struct Context {
    core: RefCell<Option<Rc<Core>>>,
    running: Cell<bool>,
}

#[cfg(not(loom))]
thread_local! {
    static CONTEXT: Context = const {
        Context {
            core: RefCell::new(None),
            running: Cell::new(false),
        }
    };
}

// loom's `thread_local!` has no `const` form.
#[cfg(loom)]
thread_local! {
    static CONTEXT: Context = Context {
        core: RefCell::new(None),
        running: Cell::new(false),
    };
}

/// Restores the previously entered runtime when dropped. `!Send`.
#[derive(Debug)]
pub(crate) struct SetCurrentGuard {
    /// `false` if the thread-local was already destroyed (a runtime dropped
    /// by a thread-local destructor): nothing was entered.
    active: bool,
    /// Keeps the runtime's I/O and timer drivers entered too.
    _drivers: DriverEnterGuard,
    prev: Option<Rc<Core>>,
    was_running: bool,
    _not_send: PhantomData<*const ()>,
}

/// Enters `core` on this thread (not running it).
pub(crate) fn enter(core: Rc<Core>) -> SetCurrentGuard {
    let drivers = core.shared.handles.enter();
    let entered = CONTEXT.try_with(|cx| (cx.core.replace(Some(core)), cx.running.get()));
    match entered {
        Ok((prev, was_running)) => SetCurrentGuard {
            active: true,
            _drivers: drivers,
            prev,
            was_running,
            _not_send: PhantomData,
        },
        Err(_) => SetCurrentGuard {
            active: false,
            _drivers: drivers,
            prev: None,
            was_running: false,
            _not_send: PhantomData,
        },
    }
}

/// Enters `core` and marks this thread as running a scheduler.
///
/// # Panics
///
/// If this thread already runs one (a nested `block_on` or `turn`).
#[track_caller]
pub(crate) fn enter_running(core: Rc<Core>, what: &str) -> SetCurrentGuard {
    let already = CONTEXT.try_with(|cx| cx.running.get()).unwrap_or(false);
    if already {
        panic!(
            "Cannot call {what} from inside a Tempo runtime: this thread is already running \
             one (inside block_on, turn or a task), and blocking it would stall every task. \
             Use .await or spawn the future instead."
        );
    }
    let guard = enter(core);
    let _ = CONTEXT.try_with(|cx| cx.running.set(true));
    guard
}

impl Drop for SetCurrentGuard {
    fn drop(&mut self) {
        if !self.active {
            return;
        }
        let prev = self.prev.take();
        let was_running = self.was_running;
        // During thread teardown the context may be gone: nothing to restore.
        let _ = CONTEXT.try_with(|cx| {
            let _entered = cx.core.replace(prev);
            cx.running.set(was_running);
        });
    }
}

/// `true` if this thread runs a scheduler (inside `block_on` or `turn`).
pub(crate) fn is_running() -> bool {
    CONTEXT.try_with(|cx| cx.running.get()).unwrap_or(false)
}

/// Calls `f` with the runtime entered on this thread, if any.
pub(crate) fn with_core<R>(f: impl FnOnce(&Core) -> R) -> Option<R> {
    CONTEXT
        .try_with(|cx| cx.core.borrow().as_ref().map(|core| f(core)))
        .ok()
        .flatten()
}

/// Spawns a `!Send` future on the runtime entered on this thread.
pub(crate) fn spawn_local<F>(future: F) -> Option<JoinHandle<F::Output>>
where
    F: Future + 'static,
    F::Output: 'static,
{
    let core = CONTEXT
        .try_with(|cx| cx.core.borrow().clone())
        .ok()
        .flatten()?;
    Some(core.spawn_local(future))
}
