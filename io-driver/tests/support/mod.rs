//! A minimal single-threaded executor for tests: polls futures and parks the
//! I/O driver in between, the way the runtime will. Shared by the
//! integration tests and `examples/udp_recv_count.rs`.
#![allow(dead_code)]

use std::future::Future;
use std::os::fd::AsRawFd;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, ThreadId};
use std::time::{Duration, Instant};

use tempo_io::net::{TcpListener, TcpStream};
use tempo_io::{Driver, Handle};
use tempo_park::Park;
use tempo_test_support::net::{rmem_alloc, sent_and_queued};

/// Wakes the test's main future: sets a flag, and unparks the driver only
/// when woken from another thread (a wake during dispatch costs nothing).
struct FlagWaker {
    woken: AtomicBool,
    owner: ThreadId,
    handle: Handle,
}

impl Wake for FlagWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.woken.store(true, SeqCst);
        if thread::current().id() != self.owner {
            self.handle.unpark();
        }
    }
}

/// The result of [`block_on`]: the output and how many times the driver
/// was parked.
pub struct Outcome<T> {
    pub output: T,
    pub parks: u64,
}

/// Runs `future` to completion on `driver` (entered as the current
/// reactor), parking the driver whenever the future is pending. Panics
/// after `max_parks` parks, so a lost wake-up fails the test instead of
/// hanging it (each park blocks at most 10 s).
pub fn block_on_bounded<F: Future>(
    driver: &mut Driver,
    max_parks: u64,
    future: F,
) -> Outcome<F::Output> {
    let handle = driver.handle();
    let _enter = handle.enter();
    let flag = Arc::new(FlagWaker {
        woken: AtomicBool::new(true),
        owner: thread::current().id(),
        handle: handle.clone(),
    });
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut future = pin!(future);
    let mut parks = 0;
    loop {
        if flag.woken.swap(false, SeqCst) {
            if let Poll::Ready(output) = future.as_mut().poll(&mut cx) {
                return Outcome { output, parks };
            }
            continue;
        }
        assert!(
            parks < max_parks,
            "future still pending after {max_parks} parks: lost wake-up?"
        );
        driver
            .park_timeout(Duration::from_secs(10))
            .expect("driver park failed");
        parks += 1;
    }
}

/// [`block_on_bounded`] with a generous bound.
pub fn block_on<F: Future>(driver: &mut Driver, future: F) -> F::Output {
    block_on_bounded(driver, 10_000_000, future).output
}

/// A connected TCP pair over loopback, `(client, accepted)`, on the current
/// driver (run it inside [`block_on`]).
pub async fn tcp_pair() -> (TcpStream, TcpStream) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let (client, accepted) = futures::join!(
        TcpStream::connect(listener.local_addr().unwrap()),
        listener.accept()
    );
    (client.unwrap(), accepted.unwrap().0)
}

/// A wait for datagrams sent to a socket in one call (`send_many`) to be
/// queued on it, as
/// [`sent_all_and_queued`](tempo_test_support::net::sent_all_and_queued)
/// waits for datagrams sent one per call: made before the send, it
/// measures what one datagram of the size adds to a receive queue's
/// charge on a probe socket; [`wait`](Self::wait) after the send waits
/// until the receiver's charge has grown by that many.
pub struct BatchQueued {
    charged: u32,
}

impl BatchQueued {
    /// Before sending `count` datagrams of `len` bytes each to
    /// `receiver`, which nothing may receive from until the wait ends.
    pub fn expect(receiver: &impl AsRawFd, count: usize, len: usize) -> BatchQueued {
        let probe = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let to = probe.local_addr().unwrap();
        let before = rmem_alloc(&probe);
        sent_and_queued(&probe, || probe.send_to(&vec![0; len], to).unwrap());
        let one = rmem_alloc(&probe) - before;
        BatchQueued {
            charged: rmem_alloc(receiver) + one * count as u32,
        }
    }

    /// After the send: waits until all are queued on `receiver`. Panics
    /// after 10 s.
    pub fn wait(self, receiver: &impl AsRawFd) {
        let deadline = Instant::now() + Duration::from_secs(10);
        while rmem_alloc(receiver) < self.charged {
            assert!(
                Instant::now() < deadline,
                "datagrams sent over loopback were not queued within 10 s"
            );
            thread::sleep(Duration::from_millis(1));
        }
        // As `sent_all_and_queued`: let the softirq section that charged
        // the last one finish linking it and signalling readiness.
        thread::sleep(Duration::from_millis(1));
    }
}

/// Raises the soft RLIMIT_NOFILE to `want` (capped at the hard limit);
/// returns the new soft limit.
pub fn raise_fd_limit(want: libc::rlim_t) -> libc::rlim_t {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit for getrlimit to fill.
    let rc = unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) };
    assert_eq!(rc, 0, "getrlimit failed");
    if lim.rlim_cur >= want {
        return lim.rlim_cur;
    }
    lim.rlim_cur = want.min(lim.rlim_max);
    // SAFETY: `lim` is a valid rlimit with cur <= max.
    let rc = unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    assert_eq!(rc, 0, "setrlimit failed");
    lim.rlim_cur
}
