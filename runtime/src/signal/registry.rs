//! The process-wide half of signal handling: one socket pair, one
//! delivery counter per signal number, and the handler that links them.
//!
//! Invariant: the handler increments a signal's counter *before* it writes
//! the wake-up byte, so a listener woken by the byte, or finding it
//! drained, always sees the new count.

use std::io::{self, Write};
use std::os::unix::net::UnixStream;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::OnceLock;

use super::listeners::SignalListeners;

/// Signal numbers up to this bound (exclusive) can be listened to; it
/// covers every standard and real-time signal of Linux and the BSDs.
const SIGNAL_SLOTS: usize = 65;

/// What the whole process shares for signal handling.
struct SignalGlobals {
    /// Written by the handler; non-blocking, so a full buffer (nobody
    /// reading) drops the byte instead of blocking inside a handler.
    wake_sender: UnixStream,
    /// Duplicated for every listener, which registers its copy with its
    /// own runtime's reactor.
    wake_receiver: UnixStream,
    /// Every listener's waker, woken by whichever drains a byte.
    listeners: SignalListeners,
    slots: [SignalSlot; SIGNAL_SLOTS],
}

/// One signal number's state.
struct SignalSlot {
    /// How many times the signal was delivered since its handler was
    /// installed.
    deliveries: AtomicU64,
    /// The outcome of installing the handler, decided once.
    installed: OnceLock<Result<(), (io::ErrorKind, String)>>,
}

fn globals() -> io::Result<&'static SignalGlobals> {
    static GLOBALS: OnceLock<Result<SignalGlobals, (io::ErrorKind, String)>> = OnceLock::new();
    let globals = GLOBALS.get_or_init(|| {
        let create = || -> io::Result<SignalGlobals> {
            let (wake_sender, wake_receiver) = UnixStream::pair()?;
            wake_sender.set_nonblocking(true)?;
            wake_receiver.set_nonblocking(true)?;
            Ok(SignalGlobals {
                wake_sender,
                wake_receiver,
                listeners: SignalListeners::new(),
                slots: std::array::from_fn(|_| SignalSlot {
                    deliveries: AtomicU64::new(0),
                    installed: OnceLock::new(),
                }),
            })
        };
        create().map_err(|e| (e.kind(), e.to_string()))
    });
    globals
        .as_ref()
        .map_err(|(kind, message)| io::Error::new(*kind, message.clone()))
}

/// One listener's view of one signal number: where to read the count, a
/// fresh duplicate of the wake-up socket to register with a reactor, and
/// the process's listeners (the caller joins them).
pub(super) struct SignalSubscription {
    pub(super) deliveries: &'static AtomicU64,
    pub(super) wake_receiver: UnixStream,
    pub(super) listeners: &'static SignalListeners,
}

/// Installs the handler for `signum` if it is not yet installed, and
/// returns a subscription to it.
pub(super) fn subscribe(signum: libc::c_int) -> io::Result<SignalSubscription> {
    if signal_hook_registry::FORBIDDEN.contains(&signum) {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "refusing to listen to signal {signum}: it cannot be caught (SIGKILL, SIGSTOP) \
                 or it reports a fault of the process itself (SIGSEGV, SIGILL, SIGFPE)"
            ),
        ));
    }
    let slot_index = usize::try_from(signum)
        .ok()
        .filter(|&i| i > 0 && i < SIGNAL_SLOTS)
        .ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "signal number {signum} is out of range (1 to {})",
                    SIGNAL_SLOTS - 1
                ),
            )
        })?;
    let globals = globals()?;
    let slot = &globals.slots[slot_index];
    slot.installed
        .get_or_init(|| install_handler(globals, signum, slot_index))
        .clone()
        .map_err(|(kind, message)| io::Error::new(kind, message))?;
    Ok(SignalSubscription {
        deliveries: &slot.deliveries,
        wake_receiver: globals.wake_receiver.try_clone()?,
        listeners: &globals.listeners,
    })
}

fn install_handler(
    globals: &'static SignalGlobals,
    signum: libc::c_int,
    slot_index: usize,
) -> Result<(), (io::ErrorKind, String)> {
    let on_signal = move || {
        globals.slots[slot_index]
            .deliveries
            .fetch_add(1, Ordering::SeqCst);
        // A full buffer means a wake-up is already pending: dropping this
        // byte loses nothing, the count above is what listeners read.
        let _ = (&globals.wake_sender).write(&[1]);
    };
    // SAFETY: `register` requires the action to be async-signal-safe and
    // not to panic. `on_signal` only does an atomic increment on static
    // data and one non-blocking `write(2)` whose result it ignores: no
    // lock, no allocation, no panic path. `signum` is not in `FORBIDDEN`
    // (checked by `subscribe`).
    let registered = unsafe { signal_hook_registry::register(signum, on_signal) };
    registered.map(|_| ()).map_err(|e| {
        (
            e.kind(),
            format!("cannot install a handler for signal {signum}: {e}"),
        )
    })
}
