//! Measurement library shared by the Tempo benchmark binaries.
//!
//! The binaries (`udp-sender`, `udp-receiver`, `udp-sweep`, `timer-streams`)
//! compare Tempo with what a user would pick instead (tokio's current-thread
//! runtime, a thread per stream, a hand-written mio loop) in the same run.
//! Everything they measure with lives here, one concept per module, so that
//! every runtime is measured by the same code.

pub mod affinity;
pub mod alloc_count;
pub mod args;
pub mod child_process;
pub mod clock;
pub mod controller;
pub mod fd_limit;
pub mod latency;
pub mod median;
pub mod os_threads;
pub mod out_dir;
pub mod packet;
pub mod pipeline;
pub mod plot;
pub mod receivers;
pub mod recv_stats;
pub mod report;
pub mod runtime_name;
pub mod rusage;
pub mod tempo_runtime;
pub mod thread_stats;
pub mod timer_error;
pub mod timer_streams;
pub mod udp_cli;
pub mod udp_drops;
pub mod udp_receiver;
pub mod udp_sender;
pub mod udp_socket;
pub mod udp_sweep;
mod uring;
pub mod window;
