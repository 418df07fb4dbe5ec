//! `udp-receiver --runtime R`: receive N streams with runtime R and measure.
//!
//! ```text
//! udp-receiver --runtime tokio|threads|mio-loop|mio-throttled:T|tempo|tempo-throttled:T|tempo-throttled-batch:T
//!              --streams 2000 [--base-port 20000] [--rcvbuf 32768] [--interval-ms 20]
//!              [--warmup-secs 2] [--window-secs 5] [--cpu 1] [--header] [--help]
//! ```
//! Start it before the sender. Prints one CSV row on stdout (the header line
//! first with `--header`) and a summary on stderr.

use std::process::ExitCode;

use tempo_benches::alloc_count::CountingAllocator;
use tempo_benches::udp_cli::receiver_main;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

fn main() -> ExitCode {
    receiver_main(tempo_benches::args::Args::from_env())
}
