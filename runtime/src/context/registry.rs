//! The registry: running contexts by name, one process-wide map behind a
//! mutex, holding weak references.
//!
//! The lock rule (see [the registry lock](super#the-registry-lock)): **no
//! reference to a context is dropped while the registry lock is held**.
//! Dropping the last strong reference runs `ContextInner::drop`, which
//! calls [`forget`] and so takes this lock: under the lock, that drop
//! would deadlock the thread. Every reference taken or removed under the
//! lock (an upgraded entry that is refused, an entry replaced or removed,
//! strong or weak alike) is dropped after the guard. The loom model
//! `loom-tests/tests/context_registry.rs` mirrors [`acquire`] and
//! [`forget`]; the stress test `runtime/tests/context_registry.rs` races
//! them on this code.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Weak};

use parking_lot::Mutex;

use super::builder::ContextBuilder;
use super::thread::{self, ContextInner, Started};

/// Running contexts by name. Entries are weak: the registry never keeps a
/// context alive; a dead entry is replaced by the next `acquire`. Nothing
/// that refers to a context is dropped while this lock is held.
static REGISTRY: Mutex<BTreeMap<String, Weak<ContextInner>>> = Mutex::new(BTreeMap::new());

/// The running context called `name` if the request `config` may share it
/// (see [`ContextBuilder::conflict`]), else a new one started with
/// `config` and registered under `name`.
pub(super) fn acquire(name: &str, config: &ContextBuilder) -> io::Result<Arc<ContextInner>> {
    let mut registry = REGISTRY.lock();
    if let Some(inner) = registry.get(name).and_then(Weak::upgrade) {
        let Some(conflict) = config.conflict(name, &inner.config) else {
            return Ok(inner);
        };
        // `inner` may be the last strong reference by now (its other
        // holders dropped theirs since the upgrade): release the lock
        // before it is dropped.
        drop(registry);
        drop(inner);
        return Err(io::Error::new(io::ErrorKind::AlreadyExists, conflict));
    }
    let Started { inner, publish } = thread::start(name, config)?;
    let replaced = registry.insert(name.to_owned(), Arc::downgrade(&inner));
    // A weak reference's drop never runs `ContextInner::drop`, but no
    // reference of either kind is dropped under the lock (the dead entry
    // replaced, or the thread's copy if its send failed): one rule, no
    // exception to reason about.
    drop(registry);
    drop(replaced);
    let _ = publish.send(Arc::downgrade(&inner));
    Ok(inner)
}

/// Forgets `name`, unless a new context of that name already replaced the
/// dead entry. Called by `ContextInner::drop`; the removed (dead) weak
/// reference is dropped once the guard is gone.
pub(super) fn forget(name: &str) {
    let removed = {
        let mut registry = REGISTRY.lock();
        if registry
            .get(name)
            .is_some_and(|weak| weak.strong_count() == 0)
        {
            registry.remove(name)
        } else {
            None
        }
    };
    drop(removed);
}

/// Whether `name` has an entry (live or dead), for tests.
#[cfg(all(test, not(loom)))]
pub(super) fn is_registered(name: &str) -> bool {
    REGISTRY.lock().contains_key(name)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::thread;
    use std::time::Duration;

    use super::super::{Context, ContextBuilder};
    use super::*;
    use crate::runtime::TimerPolicy;

    const T: Duration = Duration::from_millis(5);

    #[test]
    fn same_name_same_thread_different_names_different_threads() {
        let a = Context::acquire("ctx-test-a", T).unwrap();
        let a2 = Context::acquire("ctx-test-a", T).unwrap();
        let b = Context::acquire("ctx-test-b", T).unwrap();
        assert_eq!(a.thread_id(), a2.thread_id());
        assert_ne!(a.thread_id(), b.thread_id());
        assert_eq!(a2.max_throttling(), T);
        assert_eq!(a.name(), "ctx-test-a");
        let on_a = a.block_on(async { thread::current().id() });
        assert_eq!(on_a, a.thread_id());
        let name = b.block_on(async { thread::current().name().map(str::to_owned) });
        assert_eq!(name.as_deref(), Some("ctx-test-b"));
    }

    #[test]
    fn acquiring_a_running_context_with_another_period_is_an_error() {
        let a = Context::acquire("ctx-test-period", T).unwrap();
        let e = Context::acquire("ctx-test-period", Duration::from_millis(10)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let message = e.to_string();
        assert!(message.contains("ctx-test-period"), "{message}");
        assert!(
            message.contains("5ms") && message.contains("10ms"),
            "{message}"
        );
        // The running context is untouched and still acquirable with its
        // own period.
        let again = Context::acquire("ctx-test-period", T).unwrap();
        assert_eq!(again.thread_id(), a.thread_id());
        assert_eq!(again.max_throttling(), T);
        // Once it stopped, the name is free for another period.
        drop((a, again));
        let other = Context::acquire("ctx-test-period", Duration::from_millis(10)).unwrap();
        assert_eq!(other.max_throttling(), Duration::from_millis(10));
    }

    #[test]
    fn acquire_with_shares_a_running_context_whose_period_and_policy_match() {
        let mut first = ContextBuilder::new(T);
        first
            .timer_policy(TimerPolicy::NeverEarly)
            .thread_name("ctx-test-with-first");
        let a = Context::acquire_with("ctx-test-with", &first).unwrap();
        // Other resource settings: the running context, as it was started.
        let mut second = ContextBuilder::new(T);
        second
            .timer_policy(TimerPolicy::NeverEarly)
            .thread_name("ctx-test-with-second")
            .max_blocking_threads(1);
        let b = Context::acquire_with("ctx-test-with", &second).unwrap();
        assert_eq!(a.thread_id(), b.thread_id());
        let name = b.block_on(async {
            crate::task::spawn_blocking(|| thread::current().name().map(str::to_owned))
                .await
                .unwrap()
        });
        assert_eq!(name.as_deref(), Some("ctx-test-with-first"));
    }

    #[test]
    fn acquire_with_another_period_or_policy_is_an_error() {
        let mut never_early = ContextBuilder::new(T);
        never_early.timer_policy(TimerPolicy::NeverEarly);
        let a = Context::acquire_with("ctx-test-with-conflict", &never_early).unwrap();

        // Another policy: `acquire` asks for the default one.
        let e = Context::acquire("ctx-test-with-conflict", T).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let message = e.to_string();
        assert!(
            message.contains("ctx-test-with-conflict")
                && message.contains("NeverEarly")
                && message.contains("NearestTick"),
            "{message}"
        );

        // Another period, same policy.
        let mut slower = ContextBuilder::new(Duration::from_millis(10));
        slower.timer_policy(TimerPolicy::NeverEarly);
        let e = Context::acquire_with("ctx-test-with-conflict", &slower).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let message = e.to_string();
        assert!(
            message.contains("5ms") && message.contains("10ms"),
            "{message}"
        );

        // The running context is untouched; once it stopped, the name is
        // free for another configuration.
        assert_eq!(a.block_on(async { 3 }), 3);
        drop(a);
        let other = Context::acquire("ctx-test-with-conflict", T).unwrap();
        assert_eq!(other.max_throttling(), T);
    }

    #[test]
    fn bad_period_is_an_error_and_registers_nothing() {
        let e = Context::acquire("ctx-test-bad", Duration::from_secs(3600)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("1 ms to 1 s"), "{e}");
        assert!(!is_registered("ctx-test-bad"));
    }
}
