//! `tempo::io::unix::AsyncFd` on both schedulers: a pipe, an eventfd, a
//! timerfd and a socketpair; readiness cached until cleared (and a clear
//! never erasing a newer edge); the errors (regular file, no driver, a
//! runtime dropped under a registered fd); the cooperative budget.
//!
//! Deterministic: each test drives its descriptors from one task (or from
//! a thread whose write lands before or after the wait, with the same
//! outcome), and counts reads, expirations and polls, never time.

use std::fs::File;
use std::future::{poll_fn, Future};
use std::io::{self, Read, Write};
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};
use std::os::unix::net::UnixStream;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::time::Duration;

use tempo::io::unix::AsyncFd;
use tempo::io::{Interest, Ready};

mod support;
use support::on_each_flavor;

/// A non-blocking pipe: (read end, write end).
fn pipe() -> (File, File) {
    let mut fds = [0; 2];
    // SAFETY: `fds` has room for the two descriptors pipe2 writes.
    let rc = unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_NONBLOCK | libc::O_CLOEXEC) };
    assert_eq!(rc, 0, "pipe2: {}", io::Error::last_os_error());
    // SAFETY: pipe2 succeeded: both descriptors are open and owned by
    // nothing else.
    unsafe { (File::from_raw_fd(fds[0]), File::from_raw_fd(fds[1])) }
}

/// A non-blocking eventfd with a zero counter.
fn eventfd() -> File {
    // SAFETY: plain FFI call with constant flags.
    let fd = unsafe { libc::eventfd(0, libc::EFD_NONBLOCK | libc::EFD_CLOEXEC) };
    assert!(fd >= 0, "eventfd: {}", io::Error::last_os_error());
    // SAFETY: a fresh descriptor owned by nothing else.
    unsafe { File::from_raw_fd(fd) }
}

/// A non-blocking monotonic timerfd expiring every `interval`, first after
/// `interval`.
fn timerfd(interval: Duration) -> OwnedFd {
    // SAFETY: plain FFI call with constant arguments.
    let fd = unsafe {
        libc::timerfd_create(
            libc::CLOCK_MONOTONIC,
            libc::TFD_NONBLOCK | libc::TFD_CLOEXEC,
        )
    };
    assert!(fd >= 0, "timerfd_create: {}", io::Error::last_os_error());
    // SAFETY: a fresh descriptor owned by nothing else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    let spec = libc::timespec {
        tv_sec: interval.as_secs() as libc::time_t,
        tv_nsec: interval.subsec_nanos() as libc::c_long,
    };
    let value = libc::itimerspec {
        it_interval: spec,
        it_value: spec,
    };
    // SAFETY: `fd` is a timerfd; `value` is a valid itimerspec and the old
    // value pointer may be null.
    let rc = unsafe { libc::timerfd_settime(fd.as_raw_fd(), 0, &value, std::ptr::null_mut()) };
    assert_eq!(rc, 0, "timerfd_settime: {}", io::Error::last_os_error());
    fd
}

/// Reads the 8-byte counter of an eventfd or timerfd.
fn read_u64(fd: &impl AsRawFd) -> io::Result<u64> {
    let mut buf = [0u8; 8];
    // SAFETY: `buf` is 8 writable bytes; `fd` is open for the call.
    let n = unsafe { libc::read(fd.as_raw_fd(), buf.as_mut_ptr().cast(), buf.len()) };
    if n < 0 {
        return Err(io::Error::last_os_error());
    }
    assert_eq!(n, 8);
    Ok(u64::from_ne_bytes(buf))
}

/// Whether `future` is ready on its first poll (its waker is dropped).
fn ready_now<F: Future>(future: F) -> Option<F::Output> {
    let waker = futures::task::noop_waker();
    match pin!(future).poll(&mut Context::from_waker(&waker)) {
        Poll::Ready(output) => Some(output),
        Poll::Pending => None,
    }
}

/// Reads `fd` until `WouldBlock` through guards, returning the bytes read;
/// the last `try_io` cleared the readiness.
async fn drain(fd: &AsyncFd<File>) -> io::Result<usize> {
    let mut total = 0;
    let mut buf = [0u8; 4096];
    let mut guard = fd.readable().await?;
    for _ in 0..1_000 {
        match guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
            Ok(n) => total += n?,
            Err(_would_block) => return Ok(total),
        }
    }
    panic!("pipe never drained");
}

/// Counts wakes.
#[derive(Default)]
struct CountWaker(AtomicUsize);

impl Wake for CountWaker {
    fn wake(self: Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

on_each_flavor! {
    #[test]
    fn pipe_readable_after_write_and_cleared_by_would_block() {
        let rt = builder().enable_io().build().unwrap();
        rt.block_on(async {
            let (rx, mut tx) = pipe();
            let rx = AsyncFd::new(rx)?;
            assert!(ready_now(rx.readable()).is_none(), "empty pipe is not readable");

            tx.write_all(b"hello")?;
            assert_eq!(drain(&rx).await?, 5);
            // Drained and cleared: not readable until the next write.
            assert!(ready_now(rx.readable()).is_none(), "readiness must be cleared");

            tx.write_all(b"again")?;
            assert_eq!(drain(&rx).await?, 5);
            Ok::<_, io::Error>(())
        })
        .unwrap();
    }

    #[test]
    fn readiness_is_cached_until_cleared() {
        let rt = builder().enable_io().build().unwrap();
        rt.block_on(async {
            let (rx, mut tx) = pipe();
            let rx = AsyncFd::new(rx)?;
            tx.write_all(b"x")?;
            rx.readable().await?.retain_ready();
            // No I/O, no clear: every wait completes at once.
            for _ in 0..3 {
                let guard = ready_now(rx.readable()).expect("cached readiness")?;
                assert!(guard.ready().is_readable());
            }
            // Clearing without WouldBlock loses the edge (documented misuse):
            // the byte is still there, yet no wait completes.
            rx.readable().await?.clear_ready();
            assert!(ready_now(rx.readable()).is_none());
            Ok::<_, io::Error>(())
        })
        .unwrap();
    }

    #[test]
    fn clear_ready_keeps_an_edge_that_arrived_after_the_guard() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            let (rx, mut tx) = pipe();
            let rx = AsyncFd::new(rx)?;
            tx.write_all(b"first")?;
            let mut guard = rx.readable().await?;
            let mut buf = [0u8; 16];
            assert_eq!(rx.get_ref().read(&mut buf)?, 5);
            let would_block = rx.get_ref().read(&mut buf).unwrap_err();
            assert_eq!(would_block.kind(), io::ErrorKind::WouldBlock);
            // Before the clear, new data arrives and the driver dispatches
            // its edge (the sleep parks the scheduler, which turns it).
            tx.write_all(b"second")?;
            tempo::time::sleep(Duration::from_millis(1)).await;
            guard.clear_ready();
            // The clear applied to the guard's snapshot only: the newer
            // edge is kept, so the wait completes at once.
            let guard = ready_now(rx.readable()).expect("the newer edge was kept")?;
            assert!(guard.ready().is_readable());
            drop(guard);
            assert_eq!(drain(&rx).await?, 6);
            Ok::<_, io::Error>(())
        })
        .unwrap();
    }

    #[test]
    fn pipe_write_end_writable_again_after_reader_drains() {
        let rt = builder().enable_io().build().unwrap();
        rt.block_on(async {
            let (mut rx, tx) = pipe();
            let tx = AsyncFd::with_interest(tx, Interest::WRITABLE)?;
            let chunk = [7u8; 4096];
            let mut written = 0;
            // Fill the pipe until a write blocks (the pipe holds 64 KiB by
            // default; the bound only stops a broken test).
            let mut guard = tx.writable().await?;
            for _ in 0..1_000 {
                match guard.try_io(|fd| fd.get_ref().write(&chunk)) {
                    Ok(n) => written += n?,
                    Err(_would_block) => break,
                }
            }
            assert!(written > 0);
            assert!(ready_now(tx.writable()).is_none(), "a full pipe is not writable");
            let mut buf = vec![0u8; written];
            rx.read_exact(&mut buf)?;
            let guard = tx.writable().await?;
            assert!(guard.ready().is_writable());
            Ok::<_, io::Error>(())
        })
        .unwrap();
    }

    #[test]
    fn eventfd_wakes_a_waiting_task_from_another_thread() {
        let rt = builder().enable_io().build().unwrap();
        rt.block_on(async {
            let efd = AsyncFd::with_interest(eventfd(), Interest::READABLE)?;
            let writer = efd.get_ref().try_clone()?;
            // Whether the write lands before or after the wait starts, the
            // wait completes and reads the same counter.
            let thread = std::thread::spawn(move || (&writer).write_all(&3u64.to_ne_bytes()));
            let count = loop {
                let mut guard = efd.readable().await?;
                match guard.try_io(|fd| read_u64(fd.get_ref())) {
                    Ok(count) => break count?,
                    Err(_would_block) => continue,
                }
            };
            assert_eq!(count, 3);
            thread.join().unwrap()?;
            // The counter is zero again: the next read blocks and clears.
            let mut guard = ready_now(efd.readable()).expect("readiness cached")?;
            assert!(guard.try_io(|fd| read_u64(fd.get_ref())).is_err());
            assert!(ready_now(efd.readable()).is_none());
            Ok::<_, io::Error>(())
        })
        .unwrap();
    }

    #[test]
    fn timerfd_expirations_make_it_readable() {
        let rt = builder().enable_io().build().unwrap();
        rt.block_on(async {
            let mut tfd = AsyncFd::with_interest(timerfd(Duration::from_millis(1)), Interest::READABLE)?;
            let mut expirations = 0;
            let mut reads = 0;
            // Counts, not timings: each read returns at least one expiration.
            while reads < 3 {
                let mut guard = tfd.readable_mut().await?;
                match guard.try_io(|fd| read_u64(fd.get_ref())) {
                    Ok(count) => {
                        let count = count?;
                        assert!(count >= 1);
                        expirations += count;
                        reads += 1;
                    }
                    Err(_would_block) => continue,
                }
            }
            assert!(expirations >= 3);
            Ok::<_, io::Error>(())
        })
        .unwrap();
    }

    #[test]
    fn socketpair_both_directions() {
        let rt = builder().enable_io().build().unwrap();
        rt.block_on(async {
            let (a, b) = UnixStream::pair()?;
            a.set_nonblocking(true)?;
            b.set_nonblocking(true)?;
            let (a, b) = (AsyncFd::new(a)?, AsyncFd::new(b)?);

            async fn send(fd: &AsyncFd<UnixStream>, msg: &[u8]) -> io::Result<()> {
                loop {
                    let mut guard = fd.writable().await?;
                    if let Ok(n) = guard.try_io(|fd| fd.get_ref().write(msg)) {
                        assert_eq!(n?, msg.len());
                        return Ok(());
                    }
                }
            }
            async fn recv(fd: &AsyncFd<UnixStream>) -> io::Result<Vec<u8>> {
                let mut buf = [0u8; 64];
                loop {
                    let mut guard = fd.ready(Interest::READABLE | Interest::WRITABLE).await?;
                    if !guard.ready().is_readable() {
                        // Only writable: wait for readability alone.
                        let mut guard = fd.readable().await?;
                        if let Ok(n) = guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
                            return Ok(buf[..n?].to_vec());
                        }
                        continue;
                    }
                    match fd.get_ref().read(&mut buf) {
                        Ok(n) => return Ok(buf[..n].to_vec()),
                        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                            guard.clear_ready_matching(Ready::READABLE);
                        }
                        Err(e) => return Err(e),
                    }
                }
            }

            send(&a, b"ping").await?;
            assert_eq!(recv(&b).await?, b"ping");
            send(&b, b"pong").await?;
            assert_eq!(recv(&a).await?, b"pong");
            // Closing one end makes the other readable with end of stream.
            drop(b);
            let guard = a.readable().await?;
            assert!(guard.ready().is_readable());
            assert_eq!(a.get_ref().read(&mut [0u8; 4])?, 0);
            Ok::<_, io::Error>(())
        })
        .unwrap();
    }

    #[test]
    fn async_io_and_try_io_on_an_eventfd() {
        let rt = builder().enable_io().build().unwrap();
        rt.block_on(async {
            let efd = AsyncFd::new(eventfd())?;
            // Empty: try_io calls the closure, which blocks, and clears.
            let e = efd.try_io(Interest::READABLE, read_u64).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::WouldBlock);
            assert!(ready_now(efd.readable()).is_none());
            let writer = efd.get_ref().try_clone()?;
            let thread = std::thread::spawn(move || (&writer).write_all(&5u64.to_ne_bytes()));
            assert_eq!(efd.async_io(Interest::READABLE, read_u64).await?, 5);
            thread.join().unwrap()?;
            let both = Interest::READABLE | Interest::WRITABLE;
            let e = efd.try_io(both, read_u64).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
            Ok::<_, io::Error>(())
        })
        .unwrap();
    }

    #[test]
    fn a_regular_file_is_a_clear_error() {
        let rt = builder().enable_io().build().unwrap();
        rt.block_on(async {
            let file = File::open(concat!(env!("CARGO_MANIFEST_DIR"), "/Cargo.toml")).unwrap();
            let e = AsyncFd::new(file).unwrap_err();
            assert_eq!(e.kind(), io::ErrorKind::PermissionDenied);
            let msg = e.to_string();
            assert!(msg.contains("epoll does not support"), "{msg}");
            assert!(msg.contains("regular file"), "{msg}");
        });
    }

    #[test]
    fn without_enable_io_the_error_is_the_sockets_one() {
        let rt = builder().build().unwrap();
        rt.block_on(async {
            let (a, _b) = UnixStream::pair().unwrap();
            let fd_error = AsyncFd::new(a).unwrap_err();
            let (s, _t) = UnixStream::pair().unwrap();
            let socket_error = tempo::net::UnixStream::from_std(s).unwrap_err();
            assert_eq!(fd_error.kind(), socket_error.kind());
            assert_eq!(fd_error.to_string(), socket_error.to_string());
            assert!(fd_error.to_string().contains("enable_io"), "{fd_error}");
        });
    }

    #[test]
    fn runtime_dropped_gives_an_error_not_a_hang() {
        let rt = builder().enable_io().build().unwrap();
        let (rx, mut tx) = pipe();
        let rx = rt.block_on(async { AsyncFd::new(rx) }).unwrap();
        // A wait left pending on the runtime's driver...
        let count = Arc::new(CountWaker::default());
        let waker = Waker::from(count.clone());
        let mut waiting = Box::pin(rx.readable());
        assert!(waiting.as_mut().poll(&mut Context::from_waker(&waker)).is_pending());
        drop(rt);
        // ...is woken by the shutdown and completes with an error.
        assert_eq!(count.0.load(SeqCst), 1, "the shutdown wakes the waiter");
        match waiting.as_mut().poll(&mut Context::from_waker(&waker)) {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("shut down"), "{e}"),
            other => panic!("expected the shutdown error, got {other:?}"),
        }
        drop(waiting);
        // Every later wait fails at once, data or not, from another runtime too.
        tx.write_all(b"x").unwrap();
        assert!(ready_now(rx.readable()).expect("fails at once").is_err());
        assert!(ready_now(rx.writable()).expect("fails at once").is_err());
        let other = builder().enable_io().build().unwrap();
        assert!(other.block_on(rx.readable()).is_err());
        let poll = ready_now(poll_fn(|cx| rx.poll_read_ready(cx).map_ok(|_| ())));
        assert!(poll.expect("fails at once").is_err());
        // Making one on a dropped runtime's handle fails too.
        let (a, _b) = UnixStream::pair().unwrap();
        let rt = builder().enable_io().build().unwrap();
        let handle = rt.handle().clone();
        drop(rt);
        let _enter = handle.enter();
        assert!(AsyncFd::new(a).is_err());
    }

    #[test]
    fn readiness_waits_spend_the_budget() {
        const WAITS: usize = 1_000;
        let rt = builder().enable_io().build().unwrap();
        let polls = rt.block_on(async {
            let (rx, mut tx) = pipe();
            let rx = AsyncFd::new(rx)?;
            tx.write_all(b"x")?; // never read: always readable
            let task = tempo::spawn(async move {
                let polls = AtomicUsize::new(0);
                let mut waits = pin!(async {
                    for _ in 0..WAITS {
                        rx.readable().await?.retain_ready();
                    }
                    for _ in 0..WAITS {
                        poll_fn(|cx| rx.poll_read_ready(cx).map_ok(|mut g| g.retain_ready()))
                            .await?;
                    }
                    Ok::<_, io::Error>(())
                });
                poll_fn(|cx| {
                    polls.fetch_add(1, SeqCst);
                    waits.as_mut().poll(cx)
                })
                .await?;
                Ok::<_, io::Error>(polls.load(SeqCst))
            });
            task.await.unwrap()
        })
        .unwrap();
        // 128 units per poll: 2,000 ready waits need at least 16 polls.
        let budget = usize::from(tempo_park::coop::INITIAL_BUDGET);
        assert!(polls >= 2 * WAITS.div_ceil(budget), "{polls} polls");
    }
}
