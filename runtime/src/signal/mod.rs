//! Asynchronous signal handling, with `tokio::signal`'s API: [`ctrl_c`]
//! and, on Unix, [`unix::signal`] for any [`unix::SignalKind`].
//!
//! A signal handler may take no lock, allocate nothing and call no waker.
//! So Tempo's handler (installed once per signal number for the life of the
//! process, through `signal-hook-registry`, which chains with other
//! libraries' handlers) bumps that signal's delivery counter and writes one
//! byte to a process-wide non-blocking socket pair. Each [`unix::Signal`]
//! registers its own duplicate of the read end with its runtime's reactor,
//! so the byte wakes it through the ordinary I/O path (under throttling, at
//! the next tick), and compares the counter with the last value it saw.
//! Hence a delivery between a `Signal`'s creation and its `recv` is not
//! lost; every `Signal` of a kind sees each delivery, in one runtime or
//! several; deliveries before the next `recv` coalesce (as the OS's do);
//! and once a kind has a listener its default action (for `SIGINT`,
//! terminating the process) no longer happens, as with tokio.
//!
//! It lives in `tempo`, not `tempo-io`: a process-wide handler is a policy
//! of the application's runtime, not of a reactor a host may embed.
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

/// Completes when the process receives `SIGINT` (ctrl-c in a terminal).
///
/// The listener is registered when the returned future is first polled;
/// a `SIGINT` that arrives after that is not lost, even if the future is
/// polled again only later. From the first call on, `SIGINT` no longer
/// terminates the process (for the rest of its life, as with tokio).
///
/// # Errors
///
/// If called outside a runtime with I/O enabled, or if the handler cannot
/// be installed.
///
/// ```
/// use std::time::Duration;
///
/// let rt = tempo::runtime::Builder::new_current_thread()
///     .enable_all()
///     .build()
///     .unwrap();
/// rt.block_on(async {
///     // Wait for ctrl-c, or give up after 10 ms.
///     let stopped = tempo::time::timeout(Duration::from_millis(10), tempo::signal::ctrl_c()).await;
///     assert!(stopped.is_err(), "nobody pressed ctrl-c");
/// });
/// ```
pub async fn ctrl_c() -> io::Result<()> {
    let mut interrupt = unix::signal(unix::SignalKind::interrupt())?;
    match interrupt.recv().await {
        Some(()) => Ok(()),
        None => Err(io::Error::other(
            "the runtime's I/O driver shut down while waiting for ctrl-c",
        )),
    }
}
