//! Asynchronous signal handling, with `tokio::signal`'s API: [`ctrl_c`]
//! and, on Unix, [`unix::signal`] for any [`unix::SignalKind`].
//!
//! # Why it works this way
//!
//! A signal handler may do almost nothing: no lock, no allocation, no
//! waker call. So the handler Tempo installs (once per signal number, for
//! the life of the process, through `signal-hook-registry`, which chains
//! with handlers other libraries install) does two async-signal-safe
//! things: it bumps that signal's delivery counter and writes one byte to
//! a non-blocking socket pair shared by the whole process. Each
//! [`unix::Signal`] registers its own duplicate of the pair's read end
//! with the reactor of the runtime it was created in, so the byte wakes
//! it through the ordinary I/O path (under throttling, at the next tick),
//! whichever runtime and thread it lives on; it then compares the counter
//! with the last value it saw. Hence:
//!
//! * a signal delivered after a `Signal` was created and before its
//!   `recv` is awaited is not lost;
//! * every `Signal` of a kind receives each delivery, however many there
//!   are, in one runtime or several;
//! * deliveries that arrive before `recv` runs again are coalesced into
//!   one, as the OS itself coalesces pending signals;
//! * once a kind has a listener, its default action (for `SIGINT`,
//!   terminating the process) no longer happens, even after the last
//!   `Signal` is dropped, as with tokio.
//!
//! The module lives in `tempo` rather than `tempo-io` because it only needs
//! tempo-io's public [`UnixStream`](crate::net::UnixStream), and because a
//! process-wide signal handler is a policy of the application's runtime,
//! not of a reactor crate that a host may embed on its own.
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
