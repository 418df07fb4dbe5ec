//! The "current X of this thread" pattern, written once for every crate of
//! the stack (not API: `#[doc(hidden)]`).
//!
//! Every per-thread "current" value of Tempo (drivers, runtime, task,
//! context) follows these rules:
//!
//! * **Scoped.** A value is made current by an enter guard; dropping the
//!   guard restores the previous value, so guards nest like a stack.
//! * **`try_with` on every path.** At thread exit the thread-local may be
//!   destroyed already: then nothing is current, entering enters nothing
//!   and leaving restores nothing; no path panics.
//! * **Replaced values are dropped outside the borrow.** The value a guard
//!   replaces may be the last reference to something whose destructor
//!   reads the same thread-local again.
//! * **Loom.** Under `cfg(loom)` the thread-local is loom's, so that each
//!   modelled thread has its own (loom runs its threads on one OS thread).
//!
//! The depth-checked form (a guard dropped while a later one is alive is a
//! bug, caught instead of restoring a stale value) is [`EnterDepth`]: one
//! counter per thread, shared by every caller that wants the check.
//!
//! A crate declares a slot with [`scoped_thread_local!`](crate::scoped_thread_local)
//! and then uses [`Scoped::enter`], [`Scoped::get`] and [`Scoped::with`].
//! A `Copy` value set and restored around every task poll (the current
//! task's id) is a plain `Cell` thread-local under the same rules instead:
//! it has no destructor to keep outside a borrow, and needs no borrow flag.

use std::cell::{Cell, RefCell};
use std::marker::PhantomData;

#[cfg(loom)]
#[doc(hidden)]
pub use loom::thread::LocalKey;
#[cfg(not(loom))]
#[doc(hidden)]
pub use std::thread::LocalKey;

#[cfg(loom)]
#[doc(hidden)]
pub use loom::thread_local as __thread_local;

/// A per-thread slot holding the current `T`, if any; see the
/// [module docs](self). Declared with
/// [`scoped_thread_local!`](crate::scoped_thread_local).
pub struct Scoped<T: 'static> {
    key: &'static LocalKey<RefCell<Option<T>>>,
}

impl<T: 'static> Scoped<T> {
    /// A slot over `key` (used by the declaring macro).
    #[doc(hidden)]
    pub const fn new(key: &'static LocalKey<RefCell<Option<T>>>) -> Scoped<T> {
        Scoped { key }
    }

    /// Makes `value` current on this thread until the guard is dropped;
    /// the guard then restores the value current before it. Enters nothing
    /// if the thread-local is already destroyed (thread exit).
    #[inline]
    pub fn enter(&'static self, value: T) -> ScopedGuard<T> {
        ScopedGuard {
            prev: self.replace(Some(value)).flatten(),
            slot: self,
            _not_send: PhantomData,
        }
    }

    /// Calls `f` with the current value (`None` if there is none, or if the
    /// thread-local is destroyed).
    #[inline]
    pub fn with<R>(&'static self, f: impl FnOnce(Option<&T>) -> R) -> R {
        let mut f = Some(f);
        let done = self.key.try_with(|slot| {
            let f = f.take().expect("called once");
            f(slot.borrow().as_ref())
        });
        match done {
            Ok(out) => out,
            Err(_) => (f.take().expect("not called"))(None),
        }
    }

    /// Replaces the current value; `None` if the thread-local is destroyed
    /// (then `value` is dropped), else `Some(previous)`. The caller drops
    /// the previous value, outside any borrow of the slot.
    #[inline]
    pub fn replace(&'static self, value: Option<T>) -> Option<Option<T>> {
        self.key.try_with(|slot| slot.replace(value)).ok()
    }

    /// Removes the current value if `stale` says so, and returns it (to be
    /// dropped by the caller, outside the borrow).
    pub fn take_if(&'static self, stale: impl FnOnce(&T) -> bool) -> Option<T> {
        self.key
            .try_with(|slot| {
                let is_stale = slot.borrow().as_ref().is_some_and(stale);
                if is_stale {
                    slot.borrow_mut().take()
                } else {
                    None
                }
            })
            .ok()
            .flatten()
    }
}

impl<T: Clone + 'static> Scoped<T> {
    /// A clone of the current value, if any.
    #[inline]
    pub fn get(&'static self) -> Option<T> {
        self.with(|value| value.cloned())
    }
}

impl<T: 'static> std::fmt::Debug for Scoped<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Scoped").finish_non_exhaustive()
    }
}

/// Restores the previously current value when dropped; see
/// [`Scoped::enter`]. `!Send`: it restores thread-local state.
#[must_use = "the value is current only while the guard lives"]
pub struct ScopedGuard<T: 'static> {
    prev: Option<T>,
    slot: &'static Scoped<T>,
    _not_send: PhantomData<*const ()>,
}

impl<T: 'static> ScopedGuard<T> {
    /// Drops the guard without restoring anything: the value it entered
    /// stays current, and the value it replaced is dropped. For a guard
    /// found out of order, where restoring would reinstate a stale value.
    pub fn forget(mut self) {
        drop(self.prev.take());
        std::mem::forget(self);
    }
}

impl<T: 'static> Drop for ScopedGuard<T> {
    #[inline]
    fn drop(&mut self) {
        let prev = self.prev.take();
        // Dropped here, outside the slot's borrow: it may be the last
        // reference to something whose destructor reads this slot.
        drop(self.slot.replace(prev));
    }
}

impl<T: 'static> std::fmt::Debug for ScopedGuard<T> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ScopedGuard").finish_non_exhaustive()
    }
}

/// Declares a [`Scoped`] slot: a `static NAME: Scoped<T>` backed by a
/// thread-local (std's, or loom's under `cfg(loom)`).
///
/// ```
/// tempo_park::scoped_thread_local!(static CURRENT_NAME: &'static str);
///
/// assert_eq!(CURRENT_NAME.get(), None);
/// let outer = CURRENT_NAME.enter("outer");
/// {
///     let _inner = CURRENT_NAME.enter("inner");
///     assert_eq!(CURRENT_NAME.get(), Some("inner"));
/// }
/// assert_eq!(CURRENT_NAME.get(), Some("outer"));
/// drop(outer);
/// assert_eq!(CURRENT_NAME.get(), None);
/// ```
#[macro_export]
macro_rules! scoped_thread_local {
    ($(#[$attr:meta])* $vis:vis static $name:ident: $t:ty) => {
        $(#[$attr])*
        $vis static $name: $crate::scoped::Scoped<$t> = {
            #[cfg(not(loom))]
            ::std::thread_local! {
                static SLOT: ::std::cell::RefCell<::std::option::Option<$t>> =
                    const { ::std::cell::RefCell::new(::std::option::Option::None) };
            }
            // loom's `thread_local!` has no `const` form.
            #[cfg(loom)]
            $crate::scoped::__thread_local! {
                static SLOT: ::std::cell::RefCell<::std::option::Option<$t>> =
                    ::std::cell::RefCell::new(::std::option::Option::None);
            }
            $crate::scoped::Scoped::new(&SLOT)
        };
    };
}

/// The message of an enter guard dropped out of order.
pub const OUT_OF_ORDER: &str = "`EnterGuard` values dropped out of order. Guards returned by \
                                `Runtime::enter()` and `Handle::enter()` must be dropped in the \
                                reverse order they were acquired.";

#[cfg(not(loom))]
std::thread_local! {
    static DEPTH: Cell<usize> = const { Cell::new(0) };
}

#[cfg(loom)]
loom::thread_local! {
    static DEPTH: Cell<usize> = Cell::new(0);
}

/// One level of this thread's enter stack: remembers the depth it created,
/// so that leaving it out of order is caught. `!Send`.
#[derive(Debug)]
pub struct EnterDepth {
    /// The depth this level set; `None` if the thread-local was already
    /// destroyed (thread exit): nothing to check or restore.
    depth: Option<usize>,
    _not_send: PhantomData<*const ()>,
}

impl EnterDepth {
    /// Enters one level deeper.
    pub fn enter() -> EnterDepth {
        let depth = DEPTH
            .try_with(|cell| {
                let depth = cell.get().checked_add(1).expect("enter depth overflow");
                cell.set(depth);
                depth
            })
            .ok();
        EnterDepth {
            depth,
            _not_send: PhantomData,
        }
    }

    /// Leaves this level. Returns `false` if it is not the innermost one
    /// (it then changes nothing, and the caller must restore nothing
    /// either); `true` if it left, or if there is nothing to leave. A second
    /// call returns `true` and does nothing.
    pub fn leave(&mut self) -> bool {
        let Some(depth) = self.depth.take() else {
            return true;
        };
        DEPTH
            .try_with(|cell| {
                if cell.get() != depth {
                    return false;
                }
                cell.set(depth - 1);
                true
            })
            .unwrap_or(true)
    }
}

impl Drop for EnterDepth {
    fn drop(&mut self) {
        if !self.leave() && !std::thread::panicking() {
            panic!("{OUT_OF_ORDER}");
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    crate::scoped_thread_local!(static NUMBER: u32);

    #[test]
    fn guards_nest_and_restore() {
        assert_eq!(NUMBER.get(), None);
        let a = NUMBER.enter(1);
        let b = NUMBER.enter(2);
        assert_eq!(NUMBER.with(|n| n.copied()), Some(2));
        drop(b);
        assert_eq!(NUMBER.get(), Some(1));
        drop(a);
        assert_eq!(NUMBER.get(), None);
    }

    #[test]
    fn take_if_removes_only_a_stale_value() {
        let _a = NUMBER.enter(7);
        assert_eq!(NUMBER.take_if(|n| *n == 8), None);
        assert_eq!(NUMBER.take_if(|n| *n == 7), Some(7));
        assert_eq!(NUMBER.get(), None);
    }

    #[test]
    fn a_forgotten_guard_leaves_its_value_current() {
        let a = NUMBER.enter(3);
        a.forget();
        assert_eq!(NUMBER.get(), Some(3));
        assert_eq!(NUMBER.replace(None), Some(Some(3)));
    }

    #[test]
    fn depth_levels_left_in_order_pass() {
        let mut outer = EnterDepth::enter();
        let mut inner = EnterDepth::enter();
        assert!(inner.leave());
        assert!(outer.leave());
    }

    #[test]
    fn a_depth_level_left_out_of_order_is_refused() {
        let mut outer = EnterDepth::enter();
        let mut inner = EnterDepth::enter();
        assert!(!outer.leave());
        assert!(inner.leave());
    }

    #[test]
    #[should_panic(expected = "dropped out of order")]
    fn dropping_a_depth_level_out_of_order_panics() {
        let outer = EnterDepth::enter();
        let _inner = EnterDepth::enter();
        drop(outer);
    }
}
