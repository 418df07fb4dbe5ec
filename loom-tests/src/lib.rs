//! Loom models of Tempo's concurrent protocols.
//!
//! The models live in `tests/`, one file per protocol, and compile only under
//! `RUSTFLAGS="--cfg loom"`, where the crates under test swap their
//! synchronisation primitives for loom's (see each crate's `sync` module), so
//! loom explores the real code. What each model checks, and the mutant it
//! must catch: `loom-tests/README.md`. Run them with:
//!
//! ```text
//! RUSTFLAGS="--cfg loom" cargo test --release -p tempo-loom-tests --target-dir target/loom
//! ```
//!
//! This library holds what several models share.
#![deny(missing_docs)]

#[cfg(loom)]
mod block_on;
mod mutant;
#[cfg(loom)]
mod signal;

#[cfg(loom)]
pub use block_on::block_on;
pub use mutant::{is_mutant_run, must_catch};
#[cfg(loom)]
pub use signal::Signal;
