//! A minimal single-threaded executor for tests: polls futures and parks the
//! I/O driver in between, the way the runtime will. Shared by the
//! integration tests.
#![allow(dead_code)]

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};
use std::thread::{self, ThreadId};
use std::time::Duration;

use tempo_io::net::{TcpListener, TcpStream};
use tempo_io::{Driver, Handle};
use tempo_park::Park;

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

/// A waker that counts its wakes.
#[derive(Default)]
pub struct WakeCount(pub AtomicUsize);

impl Wake for WakeCount {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// A counting waker and its count.
pub fn counting() -> (Arc<WakeCount>, Waker) {
    let count = Arc::new(WakeCount::default());
    (count.clone(), Waker::from(count))
}

/// What [`panicking`]'s waker panics with.
pub const PANIC_MESSAGE: &str = "foreign waker panicked on purpose";

/// A user's waker that panics when woken.
struct PanickingWaker;

impl Wake for PanickingWaker {
    fn wake(self: Arc<Self>) {
        panic!("{PANIC_MESSAGE}");
    }
}

/// A waker that panics with [`PANIC_MESSAGE`] when woken.
pub fn panicking() -> Waker {
    Waker::from(Arc::new(PanickingWaker))
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

/// A fresh directory for socket paths, named after `name` and the
/// process, removed on drop.
pub struct TempDir(pub std::path::PathBuf);

impl TempDir {
    pub fn new(name: &str) -> TempDir {
        let dir = std::env::temp_dir().join(format!("tempo-io-{}-{name}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
