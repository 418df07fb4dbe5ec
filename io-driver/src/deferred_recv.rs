//! The deferred-receive rule of datagram sockets, in one place.
//!
//! # The rule
//!
//! A receiver that loops `recv_from().await` until `WouldBlock` pays, per
//! datagram, one `recvfrom` that returns it and one that finds the socket
//! empty. Under a throttling scheduler the second one is almost always
//! wasted: the next datagram of a low-rate stream arrives one period
//! later. So, when [enabled](DeferredRecv::set_enabled) (the runtime
//! enables it under throttling), counting in *dispatch rounds* (one round
//! per `park*` call of the driver):
//!
//! 1. The first receive of a socket in a round makes the syscall.
//! 2. After a receive that returned data, the next receive of that socket
//!    in the same round makes no syscall: it is *deferred* to the next
//!    round. The socket's token goes on the deferred queue (once per
//!    round), and the next `park*` polls with a zero timeout instead of
//!    blocking and wakes every reader of the socket.
//! 3. If that deferred retry finds data, the socket may hold a backlog (no
//!    syscall-free signal tells one fresh datagram from several queued
//!    ones), so its receives *drain* until `WouldBlock` for the rest of
//!    that round.
//!
//! # The invariant
//!
//! **Every datagram queued on a socket when a round starts is received by
//! the end of the next round at the latest, at any rate of arrival**, and a
//! deferred receive is never lost: its waker is stored before the token is
//! queued, and a receive that queues its token after the driver took the
//! queue (the round moved meanwhile) wakes itself.
//!
//! Cost at one datagram per socket per round: three `recvfrom` per two
//! datagrams (a drain loop: four), plus one `epoll_wait` per round.
//!
//! # Counting
//!
//! Each deferred retry the driver wakes counts as **one I/O event** in
//! [`DriverStats::io_events`](tempo_park::DriverStats::io_events), like a
//! readiness event: it is driver work that wakes tasks, and a round whose
//! only work was deferred retries must not look idle to a scheduler (the
//! park contract, rule 7).
//!
//! # Batch receives
//!
//! The rule is per *receive operation*, not per datagram: "a receive that
//! returned data" may return one datagram (`recv_from`) or a batch (a future
//! `recvmmsg`-based `recv_many`). A batch form goes through
//! [`DeferredRecv::poll_recv`] exactly as a single receive does; only its
//! `attempt` closure differs.

use std::io;
use std::sync::atomic::{
    AtomicBool, AtomicU64 as StdAtomicU64, Ordering::Relaxed, Ordering::SeqCst,
};
use std::task::{Context, Poll, Waker};

use mio::Token;

use crate::registration_set::RegistrationSet;
use crate::sync::AtomicU64;

/// "No round yet" for the per-socket round fields. Not `u64::MAX`: at round
/// 0, `round - 1` wraps to `u64::MAX`, and the deferred-retry check compares
/// with it. The driver never reaches this round.
const NO_ROUND: u64 = u64::MAX - 1;

/// The driver-wide side of the rule: whether it is on, the current dispatch
/// round, and the queue of sockets whose receive was deferred to the next
/// round.
#[derive(Debug)]
pub(crate) struct DeferredRecv {
    enabled: AtomicBool,
    /// The driver's dispatch round: the number of `park*` calls so far.
    round: StdAtomicU64,
    /// Tokens of the sockets whose receive was deferred in this round.
    queue: parking_lot::Mutex<Vec<Token>>,
}

/// The per-socket side of the rule (lives in the socket's
/// [`ScheduledIo`](crate::scheduled_io::ScheduledIo)).
#[derive(Debug)]
pub(crate) struct RecvPacing {
    /// Round of the last receive that returned data.
    last_recv_round: AtomicU64,
    /// Round in which the socket's token was queued, so that it is queued at
    /// most once per round.
    deferred_in_round: AtomicU64,
    /// Round in which receives drain until `WouldBlock` instead of
    /// deferring (a deferred retry found data).
    drain_round: AtomicU64,
}

impl RecvPacing {
    pub(crate) fn new() -> RecvPacing {
        RecvPacing {
            last_recv_round: AtomicU64::new(NO_ROUND),
            deferred_in_round: AtomicU64::new(NO_ROUND),
            drain_round: AtomicU64::new(NO_ROUND),
        }
    }
}

impl DeferredRecv {
    /// Off, at round 0, with an empty queue.
    pub(crate) fn new() -> DeferredRecv {
        DeferredRecv {
            enabled: AtomicBool::new(false),
            round: StdAtomicU64::new(0),
            queue: parking_lot::Mutex::new(Vec::new()),
        }
    }

    /// Turns the rule on or off.
    pub(crate) fn set_enabled(&self, enabled: bool) {
        self.enabled.store(enabled, Relaxed);
    }

    /// Driver side, at the start of each `park*`: publishes `round` and
    /// moves the tokens deferred to it into `due` (empty on entry). Returns
    /// whether any retry is due: the park must then not block.
    ///
    /// The round is stored before the queue is taken: a receive on another
    /// thread that queues its token after the swap sees the new round and
    /// wakes itself.
    pub(crate) fn begin_round(&self, round: u64, due: &mut Vec<Token>) -> bool {
        self.round.store(round, SeqCst);
        std::mem::swap(&mut *self.queue.lock(), due);
        !due.is_empty()
    }

    /// Driver side, during dispatch: moves the reader wakers of every
    /// socket in `due` into `wakers` (stale tokens are skipped) and returns
    /// how many sockets that was: the I/O events these retries count as.
    pub(crate) fn take_due_readers(
        due: &mut Vec<Token>,
        registrations: &RegistrationSet,
        wakers: &mut Vec<Waker>,
    ) -> u64 {
        let mut retries = 0;
        for token in due.drain(..) {
            if let Some(io) = registrations.get(token) {
                io.take_readers(wakers);
                retries += 1;
            }
        }
        retries
    }

    /// Socket side: one receive under the rule. `wait` is where the
    /// operation leaves its waker; `register` stores the task's waker there
    /// for a deferred receive; `attempt` runs the receive (budget, syscall,
    /// readiness) and is called only when the rule lets the syscall happen.
    pub(crate) fn poll_recv<W, R>(
        &self,
        pacing: &RecvPacing,
        token: Token,
        cx: &mut Context<'_>,
        wait: &mut W,
        register: impl FnOnce(&mut W, &mut Context<'_>),
        attempt: impl FnOnce(&mut W, &mut Context<'_>) -> Poll<io::Result<R>>,
    ) -> Poll<io::Result<R>> {
        if !self.enabled.load(Relaxed) {
            return attempt(wait, cx);
        }
        let round = self.round.load(SeqCst);
        let last_recv = pacing.last_recv_round.load(Relaxed);
        let draining = pacing.drain_round.load(Relaxed) == round;
        if last_recv == round && !draining {
            // Already received this round: retry at the next one.
            register(wait, cx);
            if pacing.deferred_in_round.swap(round, Relaxed) != round {
                self.queue.lock().push(token);
            }
            if self.round.load(SeqCst) != round {
                // The driver took the queue before our push: it will not
                // wake us, so retry now.
                cx.waker().wake_by_ref();
            }
            return Poll::Pending;
        }
        let result = attempt(wait, cx);
        if let Poll::Ready(Ok(_)) = result {
            let deferred_retry = last_recv != round
                && pacing.deferred_in_round.load(Relaxed) == round.wrapping_sub(1);
            if deferred_retry {
                pacing.drain_round.store(round, Relaxed);
            }
            pacing.last_recv_round.store(round, Relaxed);
        }
        result
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::{Context, Wake, Waker};
    use std::time::Duration;

    use tempo_park::Park;

    use crate::net::UdpSocket;
    use crate::Driver;

    struct CountWaker(AtomicUsize);
    impl Wake for CountWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    /// A round whose only work is one deferred receive's retry counts one
    /// I/O event (park contract, rule 7): the throttling scheduler must not
    /// take it for an idle tick.
    #[test]
    fn a_deferred_retry_counts_as_one_io_event_and_wakes_the_reader() {
        let mut driver = Driver::new().unwrap();
        driver.set_defer_drain_retry(true);
        let _entered = driver.handle().enter();
        let std_receiver = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = std_receiver.local_addr().unwrap();
        let receiver = UdpSocket::from_std(std_receiver).unwrap();
        let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        for payload in [b"one", b"two"] {
            sender.send_to(payload, to).unwrap();
        }
        // Dispatch the datagrams' readiness, so that the round below has no
        // readiness event left to count.
        driver.park_timeout(Duration::ZERO).unwrap();

        let count = Arc::new(CountWaker(AtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        let mut buf = [0u8; 8];
        assert!(receiver.poll_recv(&mut cx, &mut buf).is_ready());
        assert!(
            receiver.poll_recv(&mut cx, &mut buf).is_pending(),
            "the second receive of a round is deferred"
        );

        let before = driver.stats();
        driver.park_timeout(Duration::ZERO).unwrap();
        assert_eq!((driver.stats() - before).io_events, 1);
        assert_eq!(count.0.load(SeqCst), 1, "the deferred reader is woken");
        assert!(receiver.poll_recv(&mut cx, &mut buf).is_ready());
    }
}
