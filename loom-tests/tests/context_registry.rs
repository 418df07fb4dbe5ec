//! Model: `Context::acquire` racing the last drop of the context it finds
//! (`runtime/src/context/registry.rs`, issue 19). The rule under test: no
//! reference to a context is dropped while the registry lock is held, because
//! dropping the last strong reference runs `ContextInner::drop`, which
//! takes that lock to forget the name.
//!
//! Unlike the other models, this one re-implements the protocol instead of
//! running the real code: a context is an OS thread with a runtime, and
//! loom has no `Weak`. What it keeps is what the deadlock depends on:
//!
//! * [`Strong`] / [`WeakRef`] are `Arc` / `Weak` reduced to their strong
//!   count, on a loom atomic so that loom can interleave another thread's
//!   drop between an upgrade and the drop of what it returned; dropping
//!   the last `Strong` runs [`last_drop`], the model of
//!   `ContextInner::drop`'s registry step.
//! * [`Registry`] is the registry for one name: a loom mutex around the
//!   entry (a `WeakRef`), locked by [`acquire`] and by [`last_drop`].
//! * [`acquire`] mirrors `Context::acquire`: upgrade the entry under the
//!   lock; the same period returns it, another period is refused (the
//!   reference is dropped *after* the guard), a dead or missing entry is
//!   replaced by a new context (the replaced entry dropped after the guard).
//!
//! Mutation check, kept as a test: [`acquire_dropping_under_the_lock`] is
//! the code before the fix (a refusal drops the upgraded reference while
//! the guard is alive). Loom finds the interleaving where the other thread
//! drops its reference between the upgrade and that drop, and reports the
//! deadlock (the refusing thread waits for the lock it holds);
//! `dropping_the_refused_reference_under_the_lock_deadlocks` checks that it
//! does, so the model is known to see the bug it guards against.
#![cfg(loom)]

use std::process::Command;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::{Arc, Mutex, MutexGuard};
use loom::thread;

/// A context: its period, its strong count, and how many times its
/// `ContextInner::drop` ran (exactly once, in every interleaving).
struct Inner {
    period: u32,
    strong: AtomicUsize,
    dropped: AtomicUsize,
}

/// The registry for one name: the entry, weak.
type Registry = Arc<Mutex<Option<WeakRef>>>;

/// A strong reference (`Context`): keeps the context running.
struct Strong {
    inner: Arc<Inner>,
    registry: Registry,
}

/// A weak reference (the registry's entry).
#[derive(Clone)]
struct WeakRef(Arc<Inner>);

impl Strong {
    /// A new context (`start`): one strong reference.
    fn start(period: u32, registry: &Registry) -> Strong {
        Strong {
            inner: Arc::new(Inner {
                period,
                strong: AtomicUsize::new(1),
                dropped: AtomicUsize::new(0),
            }),
            registry: registry.clone(),
        }
    }

    fn downgrade(&self) -> WeakRef {
        WeakRef(self.inner.clone())
    }
}

impl WeakRef {
    /// `Weak::upgrade`: a strong reference unless the count reached zero.
    fn upgrade(&self, registry: &Registry) -> Option<Strong> {
        let mut count = self.0.strong.load(SeqCst);
        loop {
            if count == 0 {
                return None;
            }
            match self
                .0
                .strong
                .compare_exchange(count, count + 1, SeqCst, SeqCst)
            {
                Ok(_) => {
                    return Some(Strong {
                        inner: self.0.clone(),
                        registry: registry.clone(),
                    })
                }
                Err(now) => count = now,
            }
        }
    }

    fn is_dead(&self) -> bool {
        self.0.strong.load(SeqCst) == 0
    }
}

impl Drop for Strong {
    fn drop(&mut self) {
        if self.inner.strong.fetch_sub(1, SeqCst) == 1 {
            last_drop(&self.inner, &self.registry);
        }
    }
}

/// `ContextInner::drop`'s registry step: forget the entry unless a new
/// context already replaced it; drop the removed entry after the guard.
fn last_drop(inner: &Inner, registry: &Registry) {
    inner.dropped.fetch_add(1, SeqCst);
    let removed = {
        let mut entry = registry.lock().unwrap();
        if entry.as_ref().is_some_and(WeakRef::is_dead) {
            entry.take()
        } else {
            None
        }
    };
    drop(removed);
}

/// What `acquire` returned: the context, or `AlreadyExists`.
type Acquired = Result<Strong, ()>;

/// `Context::acquire`, as fixed: nothing is dropped under the lock.
fn acquire(registry: &Registry, period: u32) -> Acquired {
    let entry = registry.lock().unwrap();
    if let Some(found) = entry.as_ref().and_then(|weak| weak.upgrade(registry)) {
        if found.inner.period == period {
            return Ok(found);
        }
        drop(entry);
        drop(found);
        return Err(());
    }
    start_under(entry, registry, period)
}

/// `Context::acquire` before the fix: a refusal drops the upgraded
/// reference while the guard is alive (locals drop in reverse order).
fn acquire_dropping_under_the_lock(registry: &Registry, period: u32) -> Acquired {
    let entry = registry.lock().unwrap();
    if let Some(found) = entry.as_ref().and_then(|weak| weak.upgrade(registry)) {
        if found.inner.period == period {
            return Ok(found);
        }
        drop(found);
        drop(entry);
        return Err(());
    }
    start_under(entry, registry, period)
}

/// Starts a context under the lock and registers it; the replaced entry is
/// dropped after the guard.
fn start_under(
    mut entry: MutexGuard<'_, Option<WeakRef>>,
    registry: &Registry,
    period: u32,
) -> Acquired {
    let started = Strong::start(period, registry);
    let replaced = entry.replace(started.downgrade());
    drop(entry);
    drop(replaced);
    Ok(started)
}

/// A 5 ms context held by one thread, which drops it, while another
/// thread acquires the name with 10 ms (and drops what it gets). Every
/// context's last drop runs once, and the registry ends with no entry.
fn race(acquire: fn(&Registry, u32) -> Acquired) {
    let registry: Registry = Arc::new(Mutex::new(None));
    let first = acquire(&registry, 5).expect("the name is free");
    let first_inner = first.inner.clone();

    let holder = thread::spawn(move || drop(first));
    let other = acquire(&registry, 10);
    let other_inner = other.as_ref().ok().map(|c| c.inner.clone());
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
        registry.lock().unwrap().is_none(),
        "an entry outlived every reference to its context"
    );
}

#[test]
fn acquire_racing_the_last_drop_neither_deadlocks_nor_leaks_the_entry() {
    loom::model(|| race(acquire));
}

/// Set in the child process that runs the mutant model.
const MUTANT_ENV: &str = "TEMPO_LOOM_CONTEXT_REGISTRY_MUTANT";

/// The mutation check, kept: the code before the fix must deadlock in the
/// model. Loom's deadlock panic aborts the process (its guards panic again
/// while unwinding), so the mutant runs in a child process of this test.
#[test]
fn dropping_the_refused_reference_under_the_lock_deadlocks() {
    if std::env::var_os(MUTANT_ENV).is_some() {
        loom::model(|| race(acquire_dropping_under_the_lock));
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "dropping_the_refused_reference_under_the_lock_deadlocks",
            "--test-threads=1",
            "--nocapture",
        ])
        .env(MUTANT_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "the mutant passed: the model does not see the deadlock\n{stdout}"
    );
    assert!(
        stderr.contains("deadlock;"),
        "the mutant failed, but not with loom's deadlock ({}):\n{stderr}",
        output.status
    );
}
