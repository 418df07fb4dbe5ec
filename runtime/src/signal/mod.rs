//! Asynchronous signal handling, with `tokio::signal`'s API: [`ctrl_c`]
//! and, on Unix, [`unix::signal`] for any [`unix::SignalKind`].
//!
//! The handler (installed once per signal number through
//! `signal-hook-registry`) takes no lock and calls no waker: it bumps the
//! signal's delivery counter and writes a byte to a process-wide socket
//! pair, whose read end each [`unix::Signal`] registers with its reactor.
//! So a delivery after a `Signal`'s creation is not lost, every `Signal` of
//! a kind sees it, and deliveries before the next `recv` coalesce. Once a
//! kind has a listener its default action no longer happens, as in tokio.
//! A process-wide handler is the application's policy, hence in `tempo`,
//! not `tempo-io`.
//!
//! ```no_run
//! #[tempo::main]
//! async fn main() -> std::io::Result<()> {
//!     println!("press ctrl-c to stop");
//!     tempo::signal::ctrl_c().await?;
//!     println!("stopping");
//!     Ok(())
//! }
//! ```
#![cfg(unix)]

pub(crate) mod listeners;
mod registry;
pub mod unix;

use std::io;

/// Completes when the process receives `SIGINT` (ctrl-c). The listener is
/// registered at the first poll; from then on `SIGINT` no longer terminates
/// the process.
///
/// Errors: outside a runtime with I/O enabled, or if the handler cannot be installed.
pub async fn ctrl_c() -> io::Result<()> {
    let mut interrupt = unix::signal(unix::SignalKind::interrupt())?;
    match interrupt.recv().await {
        Some(()) => Ok(()),
        None => Err(io::Error::other(
            "the runtime's I/O driver shut down while waiting for ctrl-c",
        )),
    }
}
