//! [`ParkThread`]: a driver with no events, only unparks and timeouts.
//!
//! The protocol is one atomic state word plus a mutex and condition variable
//! that are touched only when the thread really blocks:
//!
//! ```text
//!            unpark                      park (consumes)
//!   EMPTY ----------> NOTIFIED ---------------------------> EMPTY
//!     |  park (lock held)                      ^
//!     v                                        | parker wakes, consumes
//!   PARKED --- unpark: swap to NOTIFIED, lock, notify_one ---+
//! ```
//!
//! * `unpark` swaps the state to `NOTIFIED`. Only if the previous state was
//!   `PARKED` does it take the lock and signal the condvar: an unpark of a
//!   thread that is running costs one atomic swap, no syscall.
//! * `park` first tries to consume a `NOTIFIED` without locking (the "unpark
//!   before park" case). Otherwise it takes the lock and moves `EMPTY ->
//!   PARKED`; the unparker's lock-then-notify can't slip between that
//!   transition and the wait, because the parker holds the lock across both.
//! * Every exit from `park*` leaves the state `EMPTY`.

use std::time::{Duration, Instant};

use crate::sync::{Arc, AtomicUsize, Condvar, Mutex, Ordering::SeqCst};
use crate::{Park, Unpark};

const EMPTY: usize = 0;
const PARKED: usize = 1;
const NOTIFIED: usize = 2;

/// A [`Park`] driver that blocks the thread on a condition variable and has
/// no events of its own: it returns on unpark or timeout only.
///
/// ```
/// use std::time::Duration;
/// use tempo_park::{Park, ParkThread, Unpark};
///
/// let mut parker = ParkThread::new();
/// let unpark = parker.unpark();
/// let t = std::thread::spawn(move || unpark.unpark());
/// parker.park().unwrap(); // returns once the other thread unparked
/// t.join().unwrap();
/// ```
#[derive(Debug)]
pub struct ParkThread {
    inner: Arc<ParkInner>,
}

/// The [`Unpark`] handle of a [`ParkThread`]. Cheap to clone.
#[derive(Debug, Clone)]
pub struct UnparkThread {
    inner: Arc<ParkInner>,
}

#[derive(Debug)]
struct ParkInner {
    state: AtomicUsize,
    mutex: Mutex<()>,
    condvar: Condvar,
}

impl ParkThread {
    /// Creates a parker with no pending notification.
    pub fn new() -> ParkThread {
        ParkThread {
            inner: Arc::new(ParkInner {
                state: AtomicUsize::new(EMPTY),
                mutex: Mutex::new(()),
                condvar: Condvar::new(),
            }),
        }
    }
}

impl ParkThread {
    /// Consumes a pending unpark without blocking; says whether there was
    /// one (for a scheduler that only simulates a wait).
    pub fn take_notification(&mut self) -> bool {
        self.inner
            .state
            .compare_exchange(NOTIFIED, EMPTY, SeqCst, SeqCst)
            .is_ok()
    }
}

impl Default for ParkThread {
    fn default() -> Self {
        ParkThread::new()
    }
}

impl Park for ParkThread {
    type Unpark = UnparkThread;
    type Error = std::convert::Infallible;

    fn unpark(&self) -> UnparkThread {
        UnparkThread {
            inner: self.inner.clone(),
        }
    }

    fn park(&mut self) -> Result<(), Self::Error> {
        self.inner.park(None);
        Ok(())
    }

    fn park_timeout(&mut self, duration: Duration) -> Result<(), Self::Error> {
        if duration.is_zero() {
            // Never block: consume a pending notification, if any.
            self.take_notification();
            return Ok(());
        }
        // A deadline that does not fit in an `Instant` means "forever".
        self.inner.park(Instant::now().checked_add(duration));
        Ok(())
    }
}

impl Unpark for UnparkThread {
    fn unpark(&self) {
        self.inner.unpark();
    }
}

impl ParkInner {
    fn park(&self, deadline: Option<Instant>) {
        // Fast path: an unpark already happened.
        if self
            .state
            .compare_exchange(NOTIFIED, EMPTY, SeqCst, SeqCst)
            .is_ok()
        {
            return;
        }

        let mut guard = self.mutex.lock();
        match self.state.compare_exchange(EMPTY, PARKED, SeqCst, SeqCst) {
            Ok(_) => {}
            Err(NOTIFIED) => {
                // Unparked between the fast path and the lock.
                self.state.store(EMPTY, SeqCst);
                return;
            }
            Err(actual) => panic!("ParkThread: inconsistent park state {actual}; was one ParkThread parked from two threads?"),
        }

        loop {
            let timed_out = match deadline {
                None => {
                    guard = self.condvar.wait(guard);
                    false
                }
                Some(deadline) => {
                    let now = Instant::now();
                    if now >= deadline {
                        true
                    } else {
                        let (woken, timed_out) =
                            self.condvar
                                .wait_timeout(guard, deadline - now, &self.mutex);
                        guard = woken;
                        timed_out
                    }
                }
            };
            if timed_out {
                // The swap also consumes a notification that raced with the
                // timeout, leaving EMPTY.
                self.state.swap(EMPTY, SeqCst);
                return;
            }
            if self
                .state
                .compare_exchange(NOTIFIED, EMPTY, SeqCst, SeqCst)
                .is_ok()
            {
                return;
            }
            // Spurious wake-up: loop re-checks the deadline.
        }
    }

    fn unpark(&self) {
        match self.state.swap(NOTIFIED, SeqCst) {
            EMPTY | NOTIFIED => {} // not blocked: no syscall
            PARKED => {
                // Taking the lock orders this notify after the parker's wait
                // began (it holds the lock from PARKED until it waits).
                drop(self.mutex.lock());
                self.condvar.notify_one();
            }
            actual => panic!("ParkThread: inconsistent unpark state {actual}"),
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::thread;

    #[test]
    fn unpark_before_park_returns_at_once() {
        let mut p = ParkThread::new();
        p.unpark().unpark();
        p.park().unwrap();
        assert_eq!(p.inner.state.load(SeqCst), EMPTY);
    }

    #[test]
    fn several_unparks_collapse_into_one() {
        let mut p = ParkThread::new();
        let u = p.unpark();
        u.unpark();
        u.unpark();
        p.park().unwrap();
        // The second park must not see a leftover notification.
        p.park_timeout(Duration::from_millis(1)).unwrap();
        assert_eq!(p.inner.state.load(SeqCst), EMPTY);
    }

    #[test]
    fn zero_timeout_consumes_notification_and_never_blocks() {
        let mut p = ParkThread::new();
        p.park_timeout(Duration::ZERO).unwrap(); // nothing pending: returns
        p.unpark().unpark();
        p.park_timeout(Duration::ZERO).unwrap();
        assert_eq!(p.inner.state.load(SeqCst), EMPTY);
    }

    #[test]
    fn take_notification_reports_and_consumes() {
        let mut p = ParkThread::new();
        assert!(!p.take_notification());
        p.unpark().unpark();
        assert!(p.take_notification());
        assert!(!p.take_notification());
    }

    #[test]
    fn timeout_elapses() {
        let mut p = ParkThread::new();
        let start = Instant::now();
        p.park_timeout(Duration::from_millis(5)).unwrap();
        assert!(start.elapsed() >= Duration::from_millis(5));
        assert_eq!(p.inner.state.load(SeqCst), EMPTY);
    }

    #[test]
    fn unpark_from_another_thread_during_park() {
        let mut p = ParkThread::new();
        let u = p.unpark();
        let t = thread::spawn(move || {
            // Wait until the parker is blocked, then wake it.
            while u.inner.state.load(SeqCst) != PARKED {
                thread::yield_now();
            }
            u.unpark();
        });
        p.park_timeout(Duration::MAX).unwrap();
        t.join().unwrap();
    }

    #[test]
    fn unpark_after_parker_dropped_is_harmless() {
        let p = ParkThread::new();
        let u = p.unpark();
        drop(p);
        u.unpark();
    }

    #[test]
    fn park_is_object_safe_behind_box() {
        let mut p: Box<ParkThread> = Box::default();
        p.unpark().unpark();
        p.park().unwrap();
        assert_eq!(p.stats(), crate::DriverStats::default());
    }
}
