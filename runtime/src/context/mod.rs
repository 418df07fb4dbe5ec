//! Contexts: named threads that each run a throttling scheduler, shared by
//! every element that asks for the same name, as GStreamer's threadshare
//! does (`docs/contexts.md`). A context lives while a [`Context`] refers to
//! it; state the context itself owns stores a [`WeakContext`] instead, or
//! the cycle keeps it running forever.
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
//! Invariant: dropping the last `Context` takes the registry lock, so **no
//! context reference is dropped while that lock is held** (`registry.rs`).

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
