//! The registry: running contexts by name, one process-wide map behind a
//! mutex, holding weak references. Rule: **no reference to a context is
//! dropped while the registry lock is held** (the last strong one's drop
//! calls [`Registry::forget`], which takes the lock). Generic over
//! [`Counted`] so the loom model `loom-tests/tests/context_registry.rs`
//! runs this code with a stand-in for `Arc` / `Weak`.

use std::collections::BTreeMap;
use std::io;
use std::sync::{Arc, Weak};

use crate::sync::Mutex;

/// A counted reference and its weak form: what the registry needs of a
/// reference to a context.
pub trait Counted: Sized {
    /// The weak form, stored in the registry.
    type Weak;
    /// A weak reference to `this`.
    fn downgrade(this: &Self) -> Self::Weak;
    /// A strong reference, unless every strong one is gone.
    fn upgrade(weak: &Self::Weak) -> Option<Self>;
    /// Whether every strong reference is gone.
    fn is_dead(weak: &Self::Weak) -> bool;
}

impl<T> Counted for Arc<T> {
    type Weak = Weak<T>;

    fn downgrade(this: &Self) -> Weak<T> {
        Arc::downgrade(this)
    }

    fn upgrade(weak: &Weak<T>) -> Option<Arc<T>> {
        weak.upgrade()
    }

    fn is_dead(weak: &Weak<T>) -> bool {
        weak.strong_count() == 0
    }
}

/// A bug the loom model must catch, injected into [`Registry::acquire`].
#[cfg(loom)]
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RegistryMutant {
    /// A refusal drops the upgraded reference before the guard.
    DropRefusedUnderLock,
}

/// Contexts by name. Entries are weak; a dead entry is replaced by the
/// next `acquire`.
pub struct Registry<S: Counted> {
    entries: Mutex<BTreeMap<String, S::Weak>>,
    #[cfg(loom)]
    mutant: Option<RegistryMutant>,
}

impl<S: Counted> Registry<S> {
    /// An empty registry.
    pub fn new() -> Self {
        Registry {
            entries: Mutex::new(BTreeMap::new()),
            #[cfg(loom)]
            mutant: None,
        }
    }

    /// An empty registry whose `acquire` has the bug `mutant`.
    #[cfg(loom)]
    pub fn with_mutant(mutant: RegistryMutant) -> Self {
        Registry {
            mutant: Some(mutant),
            ..Registry::new()
        }
    }

    /// The running context called `name`, unless `conflict` refuses (an
    /// `AlreadyExists` error); else a new one from `start` (run under the
    /// lock), whose call receives its weak reference after the lock.
    pub fn acquire<P: FnOnce(S::Weak)>(
        &self,
        name: &str,
        conflict: impl FnOnce(&S) -> Option<String>,
        start: impl FnOnce() -> io::Result<(S, P)>,
    ) -> io::Result<S> {
        let mut entries = self.entries.lock();
        if let Some(found) = entries.get(name).and_then(S::upgrade) {
            let Some(conflict) = conflict(&found) else {
                return Ok(found);
            };
            let refused = io::Error::new(io::ErrorKind::AlreadyExists, conflict);
            #[cfg(loom)]
            if self.mutant == Some(RegistryMutant::DropRefusedUnderLock) {
                drop(found);
                drop(entries);
                return Err(refused);
            }
            // `found` may be the last strong reference by now: unlock first.
            drop(entries);
            drop(found);
            return Err(refused);
        }
        let (started, publish) = start()?;
        let replaced = entries.insert(name.to_owned(), S::downgrade(&started));
        // No reference of either kind is dropped under the lock: one rule.
        drop(entries);
        drop(replaced);
        publish(S::downgrade(&started));
        Ok(started)
    }

    /// Forgets `name` unless a new context already replaced the dead entry;
    /// the removed weak reference is dropped after the guard.
    pub fn forget(&self, name: &str) {
        let removed = {
            let mut entries = self.entries.lock();
            if entries.get(name).is_some_and(S::is_dead) {
                entries.remove(name)
            } else {
                None
            }
        };
        drop(removed);
    }

    /// Whether `name` has an entry (live or dead).
    #[cfg(any(test, loom))]
    pub fn is_registered(&self, name: &str) -> bool {
        self.entries.lock().contains_key(name)
    }
}

impl<S: Counted> Default for Registry<S> {
    fn default() -> Self {
        Registry::new()
    }
}
