//! [`RingHome`]: where a driver keeps its io_uring, made by the first ring
//! receiver and turned by the driver's park.
//!
//! The home lives in what the driver shares with its handles, so a
//! receiver reaches its driver's ring through the handle it was made
//! with, as a socket reaches its reactor. The driver is `Send`, the ring
//! is not (single issuer), so the ring is [`ThreadBound`] to the thread
//! of the first receiver: a park on that thread turns it, a park anywhere
//! else does not, and a receiver made on another thread falls back to
//! the epoll driver. Until a ring exists a park pays one relaxed load.

use std::cell::RefCell;
use std::io;
use std::rc::Rc;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::OnceLock;
use std::time::Duration;

use crate::handle::Handle;
use crate::readiness::wake_batch;
use crate::sys::uring::ThreadBound;

use super::recv_ring::RecvRing;

/// A driver's io_uring, if its receivers made one (see the module docs).
#[derive(Default)]
pub(crate) struct RingHome {
    /// Whether a ring was made: the one load of a park without one.
    made: AtomicBool,
    /// Bound to the thread of the first ring receiver.
    state: OnceLock<ThreadBound<RefCell<State>>>,
}

/// What a driver has of io_uring.
#[derive(Default)]
enum State {
    /// No ring receiver yet.
    #[default]
    Unmade,
    /// The ring, shared with its receivers.
    Made(Rc<RefCell<RecvRing>>),
    /// None: io_uring is missing or forbidden here, or the driver is gone.
    Off,
}

impl std::fmt::Debug for RingHome {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingHome")
            .field("made", &self.made.load(Relaxed))
            .finish_non_exhaustive()
    }
}

impl RingHome {
    /// The ring of `handle`'s driver (this home's), made if it has none;
    /// `Ok(None)` where a receiver falls back to the epoll driver:
    /// io_uring is not available, or the ring is another thread's. Other
    /// errors (no memory, no fd) are the caller's.
    pub(crate) fn get_or_make(&self, handle: &Handle) -> io::Result<Option<Rc<RefCell<RecvRing>>>> {
        let bound = self
            .state
            .get_or_init(|| ThreadBound::new(RefCell::new(State::Unmade)));
        let Some(state) = bound.get() else {
            return Ok(None);
        };
        let mut state = state.borrow_mut();
        match &*state {
            State::Made(ring) => return Ok(Some(ring.clone())),
            State::Off => return Ok(None),
            State::Unmade => {}
        }
        match RecvRing::new(handle) {
            Ok(ring) => {
                let ring = Rc::new(RefCell::new(ring));
                *state = State::Made(ring.clone());
                self.made.store(true, Relaxed);
                Ok(Some(ring))
            }
            Err(e) if io_uring_unavailable(&e) => {
                *state = State::Off;
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    /// Runs `f` on the ring, if there is one and this is its thread.
    #[inline]
    fn with_ring<R>(&self, f: impl FnOnce(&RefCell<RecvRing>) -> R) -> Option<R> {
        if !self.made.load(Relaxed) {
            return None;
        }
        let state = self.state.get()?.get()?.borrow();
        match &*state {
            State::Made(ring) => Some(f(ring)),
            State::Unmade | State::Off => None,
        }
    }

    /// `wait`, shortened to how long the driver may block before the
    /// ring's next turn.
    #[inline]
    pub(crate) fn wait_limit(&self, wait: Option<Duration>) -> Option<Duration> {
        let limit = self
            .with_ring(|ring| ring.try_borrow().ok()?.wait_limit())
            .flatten();
        match (wait, limit) {
            (Some(wait), Some(limit)) => Some(wait.min(limit)),
            (wait, None) => wait,
            (None, limit) => limit,
        }
    }

    /// Turns the ring: returns the completions handed to receivers (each
    /// may have woken a task). A waker that panics is re-raised after
    /// every other task of the turn was woken.
    #[inline]
    pub(crate) fn turn(&self) -> io::Result<u64> {
        let turned = self.with_ring(|ring| {
            let mut ring = ring.borrow_mut();
            let turned = ring.turn().map(|()| ring.handed());
            (turned, ring.take_panic())
        });
        let Some((handed, panic)) = turned else {
            return Ok(0);
        };
        wake_batch::reraise(panic);
        handed
    }

    /// Whether the ring's last turn stopped at its chunk with receives
    /// possibly left (see `recv_ring.rs`).
    #[inline]
    pub(crate) fn continues(&self) -> bool {
        self.with_ring(|ring| ring.try_borrow().is_ok_and(|ring| ring.continues()))
            .unwrap_or(false)
    }

    /// The driver is gone: its ring's waiting receivers are woken to an
    /// error, and the ring closes when the last of them goes (at once if
    /// none is left). Only on the ring's thread; elsewhere the ring stays
    /// until the home is dropped, and is leaked off its thread.
    pub(crate) fn driver_gone(&self) {
        let Some(state) = self.state.get().and_then(ThreadBound::get) else {
            return;
        };
        self.made.store(false, Relaxed);
        let state = std::mem::replace(&mut *state.borrow_mut(), State::Off);
        if let State::Made(ring) = state {
            let panic = {
                let mut ring = ring.borrow_mut();
                ring.driver_gone();
                ring.take_panic()
            };
            drop(ring);
            if !std::thread::panicking() {
                wake_batch::reraise(panic);
            }
        }
    }
}

/// Whether making a ring failed because this system has no usable
/// io_uring (then a receiver falls back to epoll), rather than for want
/// of a resource (then the error is the caller's).
fn io_uring_unavailable(error: &io::Error) -> bool {
    error.kind() == io::ErrorKind::Unsupported
        || matches!(
            error.raw_os_error(),
            Some(libc::ENOSYS | libc::EPERM | libc::EACCES | libc::EINVAL | libc::EOPNOTSUPP)
        )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn only_a_missing_or_forbidden_io_uring_falls_back() {
        for errno in [
            libc::ENOSYS,
            libc::EPERM,
            libc::EACCES,
            libc::EINVAL,
            libc::EOPNOTSUPP,
        ] {
            assert!(
                io_uring_unavailable(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
        assert!(io_uring_unavailable(&io::Error::new(
            io::ErrorKind::Unsupported,
            "old"
        )));
        for errno in [libc::EMFILE, libc::ENFILE, libc::ENOMEM] {
            assert!(
                !io_uring_unavailable(&io::Error::from_raw_os_error(errno)),
                "{errno}"
            );
        }
    }
}
