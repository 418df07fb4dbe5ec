//! Loom models of Tempo's concurrent protocols.
//!
//! The models live in `tests/`, one file per protocol, and compile only under
//! `RUSTFLAGS="--cfg loom"`, where the crates under test swap their
//! synchronisation primitives for loom's (see each crate's `sync` module), so
//! loom explores the real code. One exception: `context_registry.rs` models
//! the context registry's locking rule on a re-implementation (a context is
//! an OS thread, and loom has no `Weak`; its docs say what it keeps). Run
//! them with:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release -p tempo-loom-tests --target-dir target/loom
//! ```
//!
//! This library holds what several models share.
#![deny(missing_docs)]

#[cfg(loom)]
mod block_on;
#[cfg(loom)]
mod signal;

#[cfg(loom)]
pub use block_on::block_on;
#[cfg(loom)]
pub use signal::Signal;
