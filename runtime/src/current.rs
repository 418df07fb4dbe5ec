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
//!
//! Enter guards form a stack, counted by a depth as in tokio: a guard
//! dropped while a later one is alive panics instead of restoring a stale
//! runtime, and a runtime whose `Runtime` was dropped is never current
//! (a leaked guard cannot make `spawn` queue a task that never runs).
//! Every access uses `try_with`: a runtime dropped by a thread-local
//! destructor at thread exit finds these thread-locals gone and shuts
//! down without them.

use std::cell::{Cell, RefCell};
use std::future::Future;
use std::marker::PhantomData;
use std::rc::Rc;

use crate::driver::{DriverEnterGuard, DriverHandles};
use crate::scheduler::basic::Core;
use crate::sync::thread_local;
use crate::task::JoinHandle;

struct Context {
    core: RefCell<Option<Rc<Core>>>,
    running: Cell<bool>,
    /// How many enter guards ([`SetCurrentGuard`], [`DepthGuard`]) are
    /// alive on this thread; each guard remembers the depth it created, so
    /// that a guard dropped out of order is caught instead of restoring a
    /// stale runtime.
    depth: Cell<usize>,
}

#[cfg(not(loom))]
thread_local! {
    static CONTEXT: Context = const {
        Context {
            core: RefCell::new(None),
            running: Cell::new(false),
            depth: Cell::new(0),
        }
    };
}

// loom's `thread_local!` has no `const` form.
#[cfg(loom)]
thread_local! {
    static CONTEXT: Context = Context {
        core: RefCell::new(None),
        running: Cell::new(false),
        depth: Cell::new(0),
    };
}

/// The panic message of an enter guard dropped out of order.
const OUT_OF_ORDER: &str = "`EnterGuard` values dropped out of order. Guards returned by \
                            `Runtime::enter()` and `Handle::enter()` must be dropped in the \
                            reverse order they were acquired.";

/// One level of the thread's enter stack: checks on drop that it is the
/// innermost one. `!Send`.
///
/// [`Handle::enter`](crate::runtime::Handle::enter) only enters drivers, not
/// the runtime, but it still takes a level, so that it cannot be
/// interleaved with [`Runtime::enter`](crate::runtime::Runtime::enter)
/// guards either: the driver thread-locals of `tempo-io` and `tempo-time`
/// restore their previous handle as a stack too.
#[derive(Debug)]
pub(crate) struct DepthGuard {
    /// The depth this guard set; `None` if the thread-local was already
    /// destroyed (thread exit): nothing to check or restore.
    depth: Option<usize>,
    _not_send: PhantomData<*const ()>,
}

impl DepthGuard {
    pub(crate) fn new() -> DepthGuard {
        let depth = CONTEXT
            .try_with(|cx| {
                let depth = cx.depth.get().checked_add(1).expect("enter depth overflow");
                cx.depth.set(depth);
                depth
            })
            .ok();
        DepthGuard {
            depth,
            _not_send: PhantomData,
        }
    }

    /// Leaves this level. Returns `false` if the guard is not the innermost
    /// one (it then changes nothing, and the caller must not restore
    /// anything either); `true` if it left, or if there is nothing to leave.
    fn leave(&mut self) -> bool {
        let Some(depth) = self.depth.take() else {
            return true;
        };
        CONTEXT
            .try_with(|cx| {
                if cx.depth.get() != depth {
                    return false;
                }
                cx.depth.set(depth - 1);
                true
            })
            .unwrap_or(true)
    }
}

impl Drop for DepthGuard {
    fn drop(&mut self) {
        if !self.leave() {
            out_of_order(None);
        }
    }
}

/// Keeps a runtime's drivers entered on this thread at one level of the
/// enter stack; see [`Handle::enter`](crate::runtime::Handle::enter).
#[derive(Debug)]
pub(crate) struct DriversGuard {
    level: DepthGuard,
    drivers: Option<DriverEnterGuard>,
}

impl DriversGuard {
    pub(crate) fn new(handles: &DriverHandles) -> DriversGuard {
        let level = DepthGuard::new();
        DriversGuard {
            level,
            drivers: Some(handles.enter()),
        }
    }
}

impl Drop for DriversGuard {
    fn drop(&mut self) {
        if !self.level.leave() {
            out_of_order(self.drivers.take());
        }
        // Innermost: the field's drop restores the previous driver handles.
    }
}

/// An enter guard was dropped out of order: leaves the driver
/// thread-locals as they are (consistent with the runtime context, which
/// is not restored either; the guard's clones of the handles are leaked,
/// a few words, on this programming-error path only), then panics, unless
/// the thread already panics (a second panic would abort).
fn out_of_order(drivers: Option<DriverEnterGuard>) {
    std::mem::forget(drivers);
    if !std::thread::panicking() {
        panic!("{OUT_OF_ORDER}");
    }
}

/// Restores the previously entered runtime when dropped. `!Send`.
#[derive(Debug)]
pub(crate) struct SetCurrentGuard {
    /// `false` if the thread-local was already destroyed (a runtime dropped
    /// by a thread-local destructor): nothing was entered.
    active: bool,
    level: DepthGuard,
    /// Keeps the runtime's I/O and timer drivers entered too.
    drivers: Option<DriverEnterGuard>,
    prev: Option<Rc<Core>>,
    was_running: bool,
}

/// Enters `core` on this thread (not running it).
pub(crate) fn enter(core: Rc<Core>) -> SetCurrentGuard {
    let level = DepthGuard::new();
    let drivers = Some(core.shared.handles.enter());
    let entered = CONTEXT.try_with(|cx| (cx.core.replace(Some(core)), cx.running.get()));
    match entered {
        Ok((prev, was_running)) => SetCurrentGuard {
            active: true,
            level,
            drivers,
            prev,
            was_running,
        },
        Err(_) => SetCurrentGuard {
            active: false,
            level,
            drivers,
            prev: None,
            was_running: false,
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
        if !self.level.leave() {
            // Out of order: restore nothing. A runtime left entered this
            // way is never handed out once dropped: see `with_core`.
            out_of_order(self.drivers.take());
            return;
        }
        // Innermost: restore the previous driver handles, then the runtime.
        drop(self.drivers.take());
        if !self.active {
            return;
        }
        let prev = self.prev.take();
        let was_running = self.was_running;
        // During thread teardown the context may be gone: nothing to restore.
        let replaced = CONTEXT.try_with(|cx| {
            let replaced = cx.core.replace(prev);
            cx.running.set(was_running);
            replaced
        });
        // Dropped outside the borrow: the last `Rc<Core>` may be this one.
        drop(replaced);
    }
}

/// `true` if this thread runs a scheduler (inside `block_on` or `turn`).
pub(crate) fn is_running() -> bool {
    CONTEXT.try_with(|cx| cx.running.get()).unwrap_or(false)
}

/// Calls `f` with the runtime entered on this thread, if any.
///
/// A runtime that was dropped is not current, whatever the context says
/// (a leaked or out-of-order enter guard can leave it there): it is
/// removed instead, so that no spawn or wake lands in its dead run queue.
pub(crate) fn with_core<R>(f: impl FnOnce(&Core) -> R) -> Option<R> {
    current_core().map(|core| f(&core))
}

/// The runtime entered on this thread, if any and not dropped.
fn current_core() -> Option<Rc<Core>> {
    let (current, stale) = CONTEXT
        .try_with(|cx| {
            let released = cx.core.borrow().as_ref().is_some_and(|c| c.is_released());
            if released {
                (None, cx.core.take())
            } else {
                (cx.core.borrow().clone(), None)
            }
        })
        .ok()?;
    // Dropped outside the borrow: it may be the core's last reference.
    drop(stale);
    current
}

/// Spawns a `!Send` future on the runtime entered on this thread.
pub(crate) fn spawn_local<F>(future: F) -> Option<JoinHandle<F::Output>>
where
    F: Future + 'static,
    F::Output: 'static,
{
    Some(current_core()?.spawn_local(future))
}
