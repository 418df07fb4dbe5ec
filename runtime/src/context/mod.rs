//! Contexts: named threads that each run a throttling scheduler, shared by
//! every element that asks for the same name.
//!
//! This is the thread-sharing model of GStreamer's threadshare elements:
//! 1,000 UDP sources do not start 1,000 threads; each
//! [`acquire`](Context::acquire)s a context by name, and all that name the
//! same context share its thread and its tick. Scale out is by more
//! contexts, one thread each, never by work stealing. The configuration a
//! running context must share with a request: see
//! [`Context::acquire_with`] and [`ContextBuilder`].
//!
//! A context lives as long as a [`Context`] value refers to it. When the
//! last one is dropped, the context thread drops every task it still owns
//! (on that thread), then exits; a later `acquire` of the same name starts
//! a new one.
//!
//! # Which reference to store
//!
//! A [`Context`] keeps the context running: an element that *uses* a
//! context holds one. Whatever only needs to find its way back, and lives
//! in state the context itself owns (a task's state, a socket's callback),
//! stores a [`WeakContext`] ([`Context::downgrade`],
//! [`Context::current_weak`]): a `Context` there is a cycle, and the
//! context never stops.
//!
//! ```
//! use std::time::Duration;
//! use tempo::context::Context;
//!
//! let a = Context::acquire("doc-audio", Duration::from_millis(20)).unwrap();
//! let b = Context::acquire("doc-audio", Duration::from_millis(20)).unwrap();
//! assert_eq!(a.thread_id(), b.thread_id()); // same name, same thread
//! assert_eq!(a.block_on(async { 6 * 7 }), 42);
//! ```
//!
//! # The registry lock
//!
//! Names map to running contexts through one process-wide registry behind
//! a mutex, holding weak references. Dropping the last [`Context`] takes
//! that lock (to forget the name), so **no reference to a context is
//! dropped while the registry lock is held**, or that thread would
//! deadlock on itself; see `registry.rs`.

mod api;
mod builder;
pub(crate) mod registry;
#[cfg(all(test, not(loom)))]
mod tests;
mod thread;

pub use api::{Context, WeakContext};
pub use builder::ContextBuilder;

/// The registry, for the loom model `loom-tests/tests/context_registry.rs`
/// only; not API.
#[cfg(loom)]
#[doc(hidden)]
pub mod __loom {
    pub use super::registry::{Counted, Registry, RegistryMutant};
}
