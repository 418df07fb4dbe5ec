//! Unix signals: [`signal`] returns a [`Signal`] that yields each delivery
//! of one [`SignalKind`] (as `tokio::signal::unix`).
//!
//! ```no_run
//! use tempo::signal::unix::{signal, SignalKind};
//!
//! #[tempo::main]
//! async fn main() -> std::io::Result<()> {
//!     let mut terminate = signal(SignalKind::terminate())?;
//!     let mut reload = signal(SignalKind::hangup())?;
//!     tempo::spawn_local(async move {
//!         while reload.recv().await.is_some() {
//!             // ... re-read the configuration ...
//!         }
//!     });
//!     terminate.recv().await; // runs until SIGTERM
//!     Ok(())
//! }
//! ```

use std::future::poll_fn;
use std::io;
use std::sync::atomic::{AtomicU64, Ordering};
use std::task::{Context, Poll};

use super::listeners::SignalListeners;
use super::registry;
use crate::net::UnixStream;

/// A kind of Unix signal, by number.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SignalKind(libc::c_int);

impl SignalKind {
    /// Any signal by its number (a real-time signal, ...); [`signal`] rejects
    /// the ones that cannot be listened to.
    pub const fn from_raw(signum: std::os::raw::c_int) -> SignalKind {
        SignalKind(signum)
    }

    /// The signal's number.
    pub const fn as_raw_value(&self) -> std::os::raw::c_int {
        self.0
    }

    /// `SIGALRM`: a real-time timer expired.
    pub const fn alarm() -> SignalKind {
        SignalKind(libc::SIGALRM)
    }

    /// `SIGCHLD`: a child process changed state.
    pub const fn child() -> SignalKind {
        SignalKind(libc::SIGCHLD)
    }

    /// `SIGHUP`: the terminal hung up; daemons take it as "reload".
    pub const fn hangup() -> SignalKind {
        SignalKind(libc::SIGHUP)
    }

    /// `SIGINT`: interrupt from the terminal (ctrl-c).
    pub const fn interrupt() -> SignalKind {
        SignalKind(libc::SIGINT)
    }

    /// `SIGIO`: I/O is possible on a descriptor set up for it.
    pub const fn io() -> SignalKind {
        SignalKind(libc::SIGIO)
    }

    /// `SIGPIPE`: a write to a pipe or socket with no reader.
    pub const fn pipe() -> SignalKind {
        SignalKind(libc::SIGPIPE)
    }

    /// `SIGQUIT`: quit from the terminal (ctrl-\\).
    pub const fn quit() -> SignalKind {
        SignalKind(libc::SIGQUIT)
    }

    /// `SIGTERM`: a polite request to terminate.
    pub const fn terminate() -> SignalKind {
        SignalKind(libc::SIGTERM)
    }

    /// `SIGUSR1`: meaning defined by the application.
    pub const fn user_defined1() -> SignalKind {
        SignalKind(libc::SIGUSR1)
    }

    /// `SIGUSR2`: meaning defined by the application.
    pub const fn user_defined2() -> SignalKind {
        SignalKind(libc::SIGUSR2)
    }

    /// `SIGWINCH`: the terminal's window size changed.
    pub const fn window_change() -> SignalKind {
        SignalKind(libc::SIGWINCH)
    }
}

impl From<std::os::raw::c_int> for SignalKind {
    fn from(signum: std::os::raw::c_int) -> SignalKind {
        SignalKind::from_raw(signum)
    }
}

impl From<SignalKind> for std::os::raw::c_int {
    fn from(kind: SignalKind) -> std::os::raw::c_int {
        kind.as_raw_value()
    }
}

/// Listens to one kind of signal, made by [`signal`] (see the module
/// example): [`recv`](Signal::recv) completes once per delivery since the
/// previous `recv` (deliveries in between coalesce).
#[derive(Debug)]
pub struct Signal {
    deliveries: &'static AtomicU64,
    /// The count of deliveries this listener has already reported.
    seen: u64,
    /// This listener's duplicate of the wake-up socket, on its reactor.
    wake_receiver: UnixStream,
    /// The process's listeners, woken by whichever drains a wake-up byte.
    listeners: &'static SignalListeners,
    /// This listener's key in `listeners`.
    listener: usize,
}

/// Starts listening to `kind`, installing Tempo's handler for it if this
/// is the first listener in the process.
///
/// # Errors
///
/// Outside a runtime with I/O enabled; `InvalidInput` naming the signal for
/// one that cannot be listened to (`SIGKILL`, `SIGSTOP`, `SIGSEGV`, ...);
/// if the handler cannot be installed.
pub fn signal(kind: SignalKind) -> io::Result<Signal> {
    // Outside a runtime, fail before installing a handler for nothing.
    tempo_io::Handle::try_current()?;
    let subscription = registry::subscribe(kind.as_raw_value())?;
    let seen = subscription.deliveries.load(Ordering::SeqCst);
    let wake_receiver = UnixStream::from_std(subscription.wake_receiver)?;
    Ok(Signal {
        deliveries: subscription.deliveries,
        seen,
        wake_receiver,
        listeners: subscription.listeners,
        listener: subscription.listeners.join(),
    })
}

impl Signal {
    /// Waits for the next delivery; `None` once the runtime's I/O driver is
    /// gone. Cancel-safe.
    pub async fn recv(&mut self) -> Option<()> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next delivery (see [`recv`](Signal::recv)); only the last
    /// task to poll is woken.
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<()>> {
        let mut drain = [0u8; 64];
        loop {
            // Read the counter after every read: the handler counts before
            // it writes, so the count is visible whoever drained the byte.
            let read = self.wake_receiver.poll_read(cx, &mut drain);
            if matches!(read, Poll::Ready(Ok(n)) if n > 0) {
                // Other listeners' reactors may poll after this drain: wake them.
                self.listeners.wake_all_but(self.listener);
            }
            if self.take_delivery() {
                return Poll::Ready(Some(()));
            }
            match read {
                // Woken by the reactor, or by a later drainer (`wait_unless`).
                Poll::Pending => {
                    let (deliveries, seen) = (self.deliveries, self.seen);
                    let delivered = self.listeners.wait_unless(self.listener, cx.waker(), || {
                        deliveries.load(Ordering::SeqCst) != seen
                    });
                    if delivered {
                        self.take_delivery();
                        return Poll::Ready(Some(()));
                    }
                    return Poll::Pending;
                }
                Poll::Ready(Ok(n)) if n > 0 => continue,
                Poll::Ready(Err(e)) if e.kind() == io::ErrorKind::Interrupted => continue,
                // End of stream or a driver error: nothing more will come.
                Poll::Ready(_) => return Poll::Ready(None),
            }
        }
    }

    /// Marks an unseen delivery as seen; whether there was one.
    fn take_delivery(&mut self) -> bool {
        let deliveries = self.deliveries.load(Ordering::SeqCst);
        let new = deliveries != self.seen;
        self.seen = deliveries;
        new
    }
}

impl Drop for Signal {
    fn drop(&mut self) {
        self.listeners.leave(self.listener);
    }
}
