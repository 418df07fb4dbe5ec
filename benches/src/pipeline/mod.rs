//! The elements and measurements of the `pipeline` benchmark:
//! N streams, each a source element (a [`tempo_media::Task`]) pushing a
//! buffer every period to a sink task on the same context through a
//! bounded channel.
//!
//! They live in the library rather than in the binary so that a test can
//! run the very elements the benchmark measures (the 0-allocations-per-
//! buffer guard, `benches/tests/pipeline_allocations.rs`).
//!
//! * [`buffer`]: the buffers and the per-stream pool they come back to;
//! * [`sink`]: the sink task and its lateness statistics;
//! * [`timer`]: the timer-driven source (no network);
//! * [`timer_run`]: the timer-driven runs, Tempo against tokio;
//! * [`layout`]: the order a timer run makes its streams in (a UDP run
//!   always makes them grouped);
//! * [`results`]: the result files (every run, medians, two figures);
//! * [`udp`]: the UDP source (a task per socket) and its tokio baseline;
//! * [`udp_run`]: the UDP runs: sender and receiver processes.

/// Streams of group `g` (context / tokio runtime) when `streams` are dealt
/// round-robin over `groups`.
pub fn streams_in_group(streams: usize, groups: usize, g: usize) -> usize {
    streams / groups + usize::from(g < streams % groups)
}

pub mod buffer;
pub mod layout;
pub mod results;
pub mod sink;
pub mod timer;
pub mod timer_run;
pub mod udp;
pub mod udp_run;
