//! Contexts: named threads that each run a throttling scheduler, shared by
//! every element that asks for the same name.
//!
//! This is the thread-sharing model of GStreamer's threadshare elements: a
//! pipeline with 1,000 UDP sources does not start 1,000 threads; each source
//! [`acquire`](Context::acquire)s a context by name (`"audio-1"`), and all
//! sources that name the same context share its thread and its tick. Scale
//! out is by more contexts (more names), one thread each, never by work
//! stealing: the model is "pin streams to a context".
//!
//! A context lives as long as a [`Context`] value refers to it. When the
//! last one is dropped, the context thread drops every task it still owns
//! (on that thread), then exits; a later `acquire` of the same name starts a
//! new one.
//!
//! # Which reference to store
//!
//! A [`Context`] is a strong reference: it keeps the context, and its
//! thread, running. An element that *uses* a context holds a `Context`
//! (that is how the context knows it is still needed). Anything that only
//! needs to find its way back to the context, and must not keep it alive,
//! stores a [`WeakContext`] ([`Context::downgrade`],
//! [`Context::current_weak`]) and calls [`WeakContext::upgrade`] when it
//! needs it. In particular, a task that stores the result of
//! [`Context::current`] in a structure owned by the context itself (a
//! task's state, a socket's callback) creates a cycle: the context would
//! never stop. Store a `WeakContext` there.
//!
//! ```
//! use std::time::Duration;
//! use tempo::context::Context;
//!
//! let a = Context::acquire("doc-audio", Duration::from_millis(20)).unwrap();
//! let b = Context::acquire("doc-audio", Duration::from_millis(20)).unwrap();
//! assert_eq!(a.thread_id(), b.thread_id()); // same name, same thread
//!
//! let answer = a.block_on(async { 6 * 7 });
//! assert_eq!(answer, 42);
//! ```
//!
//! # Configuring a context's runtime
//!
//! [`Context::acquire`] starts a context with the default configuration
//! (I/O and timers on, the nearest-tick timer policy, the default events
//! buffer and blocking pool). [`Context::acquire_with`] takes a
//! [`ContextBuilder`] for the rest: timer policy, events capacity, tick
//! budget, blocking pool. Which settings must agree when a context is
//! already running: see [`Context::acquire_with`].
//!
//! # The registry lock
//!
//! Names map to running contexts through one process-wide registry behind
//! a mutex, holding weak references. Dropping the last [`Context`] of a
//! context takes that lock (to forget the name), so **no reference to a
//! context is dropped while the registry lock is held**: on a thread that
//! holds it, dropping what turned out to be the last strong reference
//! would take the lock again and deadlock that thread. A reference taken
//! under the lock (an upgraded entry that turns out to run with another
//! configuration, an entry replaced or removed) is dropped after the
//! guard. Weak references follow the same rule although their drop never
//! takes the lock, so that the rule has no exception. The loom model
//! `loom-tests/tests/context_registry.rs` races an `acquire` with the last
//! drop.
//!
//! # Files
//!
//! * `api.rs`: the public [`Context`] and [`WeakContext`], thin over the
//!   shared state;
//! * `builder.rs`: [`ContextBuilder`], what a context's runtime is built
//!   with, and which of it must match a running context;
//! * `registry.rs`: the name to context map and its lock rule, generic
//!   over the counted reference (so that loom runs it);
//! * `thread.rs`: the context thread (start, run until told to stop, stop
//!   and join on the last drop), the shared state, `ContextInner`, and the
//!   process-wide registry of them.

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
