//! Model: `Context::acquire` racing the last drop of the context it finds,
//! on the registry's code (`runtime/src/context/registry.rs`). The rule
//! under test: no reference to a context is dropped while the registry
//! lock is held, because dropping the last strong reference runs
//! `ContextInner::drop`, which takes that lock to forget the name.
//!
//! The registry (`Registry::acquire`, `Registry::forget`, its lock from the
//! sync shim) is the library's; what stands in for a context is
//! [`Strong`] / `WeakRef`: `Arc<ContextInner>` / `Weak<ContextInner>`
//! reduced to a strong count on a loom atomic (loom has no `Weak`, and a
//! context is an OS thread with a runtime), so that loom can interleave
//! another thread's drop between an upgrade and the drop of what it
//! returned. Dropping the last `Strong` calls `Registry::forget`, as
//! `ContextInner::drop` does.
//!
//! Mutant, kept as a test: `RegistryMutant::DropRefusedUnderLock` makes
//! the real `acquire` drop a refused reference before the guard. Loom
//! finds the interleaving where the other thread drops its reference
//! between the upgrade and that drop, and reports the deadlock (the
//! refusing thread waits for the lock it holds).
#![cfg(loom)]

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::Arc;
use loom::thread;
use tempo::context::__loom::{Counted, Registry, RegistryMutant};
use tempo_loom_tests::{is_mutant_run, must_catch};

const NAME: &str = "x";

/// A context: its period, its strong count, and how many times its
/// `ContextInner::drop` ran (exactly once, in every interleaving).
struct Inner {
    period: u32,
    strong: AtomicUsize,
    dropped: AtomicUsize,
    registry: Arc<Registry<Strong>>,
}

/// A strong reference (`Context`): keeps the context running.
struct Strong(Arc<Inner>);

/// A weak reference (the registry's entry).
struct WeakRef(Arc<Inner>);

impl Counted for Strong {
    type Weak = WeakRef;

    fn downgrade(this: &Strong) -> WeakRef {
        WeakRef(this.0.clone())
    }

    fn upgrade(weak: &WeakRef) -> Option<Strong> {
        let mut count = weak.0.strong.load(SeqCst);
        loop {
            if count == 0 {
                return None;
            }
            match weak
                .0
                .strong
                .compare_exchange(count, count + 1, SeqCst, SeqCst)
            {
                Ok(_) => return Some(Strong(weak.0.clone())),
                Err(now) => count = now,
            }
        }
    }

    fn is_dead(weak: &WeakRef) -> bool {
        weak.0.strong.load(SeqCst) == 0
    }
}

impl Drop for Strong {
    /// The last drop runs `ContextInner::drop`'s registry step.
    fn drop(&mut self) {
        if self.0.strong.fetch_sub(1, SeqCst) == 1 {
            self.0.dropped.fetch_add(1, SeqCst);
            self.0.registry.forget(NAME);
        }
    }
}

/// `Context::acquire(NAME, period)`: the real `Registry::acquire`, with
/// the period as the configuration that must match.
fn acquire(registry: &Arc<Registry<Strong>>, period: u32) -> Result<Strong, ()> {
    registry
        .acquire(
            NAME,
            |running| (running.0.period != period).then(|| "another period".to_owned()),
            || {
                let inner = Arc::new(Inner {
                    period,
                    strong: AtomicUsize::new(1),
                    dropped: AtomicUsize::new(0),
                    registry: registry.clone(),
                });
                Ok((Strong(inner), |_weak| {}))
            },
        )
        .map_err(|_| ())
}

/// A 5 ms context held by one thread, which drops it, while another
/// thread acquires the name with 10 ms (and drops what it gets). Every
/// context's last drop runs once, and the registry ends with no entry.
fn race(mutant: Option<RegistryMutant>) {
    let registry = Arc::new(match mutant {
        Some(mutant) => Registry::with_mutant(mutant),
        None => Registry::new(),
    });
    let first = acquire(&registry, 5).expect("the name is free");
    let first_inner = first.0.clone();

    let holder = thread::spawn(move || drop(first));
    let other = acquire(&registry, 10);
    let other_inner = other.as_ref().ok().map(|c| c.0.clone());
    drop(other);
    holder.join().unwrap();

    assert_eq!(first_inner.dropped.load(SeqCst), 1);
    if let Some(inner) = other_inner {
        // Refused only while the 5 ms context ran; otherwise it started one.
        assert_eq!(inner.period, 10);
        assert_eq!(inner.dropped.load(SeqCst), 1);
    }
    // Whoever dropped a context last forgot its entry.
    assert!(
        !registry.is_registered(NAME),
        "an entry outlived every reference to its context"
    );
}

#[test]
fn acquire_racing_the_last_drop_neither_deadlocks_nor_leaks_the_entry() {
    loom::model(|| race(None));
}

/// Set in the child process that runs the mutant.
const MUTANT_ENV: &str = "TEMPO_LOOM_CONTEXT_REGISTRY_MUTANT";

#[test]
fn mutant_drop_refused_under_lock_deadlocks() {
    if is_mutant_run(MUTANT_ENV) {
        loom::model(|| race(Some(RegistryMutant::DropRefusedUnderLock)));
        return;
    }
    must_catch(
        "mutant_drop_refused_under_lock_deadlocks",
        MUTANT_ENV,
        "deadlock",
    );
}
