//! The counting global allocator behind "allocations per packet": the one
//! implementation in `tempo-test-support`, which Tempo's allocation tests
//! install too, re-exported under the path the benchmark binaries use.
//!
//! A binary installs it with
//! `#[global_allocator] static ALLOC: CountingAllocator = CountingAllocator;`
//! and reads [`allocations`] (every thread of the process) before and after
//! the measured window, and [`live_bytes`] (heap held) for memory per
//! stream.

pub use tempo_test_support::alloc::{allocations, live_bytes, CountingAllocator};
