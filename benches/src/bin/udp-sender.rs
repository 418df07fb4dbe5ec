//! `udp-sender`: N streams of S-byte datagrams every I ms on 127.0.0.1.
//!
//! ```text
//! udp-sender --streams 2000 [--base-port 20000] [--size 160] [--interval-ms 20]
//!            [--secs 10] [--burst] [--quantum-us 500] [--cpu 0] [--header] [--help]
//! ```
//! Prints one CSV row on stdout (with `--header`, the header line first) and a
//! summary on stderr, including whether it fell behind schedule.

use std::process::ExitCode;

fn main() -> ExitCode {
    tempo_benches::udp_cli::sender_main(tempo_benches::args::Args::from_env())
}
