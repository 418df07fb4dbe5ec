//! One stream of the timer-stream benchmark: a source task driven by a
//! periodic timer hands a small buffer to its sink, by one of three designs
//! (threadshare's `ts-standalone` sinks):
//!
//! - `sync-mutex`: the source calls the sink directly under a
//!   `std::sync::Mutex` (cheapest; the lock must not be held across `.await`);
//! - `async-mutex`: the same under an async mutex (`tokio::sync::Mutex`);
//! - `channel`: the buffer goes through a bounded async channel
//!   (`tokio::sync::mpsc`) to a sink task of its own.
//!
//! Only the timer is runtime-specific ([`Ticker`]): tokio's `sync` primitives
//! are runtime-agnostic (they need no tokio runtime, only a waker; see the
//! test below that drives them with a bare executor), so every runtime runs
//! exactly this code.

use std::future::Future;
use std::sync::Arc;

use crate::clock::monotonic_ns;
use crate::window::{MeasureWindow, Phase};

use super::stats::with_thread_stats;

/// Capacity of each stream's channel in the `channel` design.
pub const CHANNEL_CAPACITY: usize = 8;

/// How a source hands its buffers to its sink.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum SinkKind {
    /// Direct call under `std::sync::Mutex`.
    SyncMutex,
    /// Direct call under `tokio::sync::Mutex`.
    AsyncMutex,
    /// Bounded `tokio::sync::mpsc` channel to a sink task.
    Channel,
}

impl SinkKind {
    /// Every kind, in report order.
    pub const ALL: [SinkKind; 3] = [SinkKind::SyncMutex, SinkKind::AsyncMutex, SinkKind::Channel];

    /// The name on the command line and in reports.
    pub fn name(self) -> &'static str {
        match self {
            SinkKind::SyncMutex => "sync-mutex",
            SinkKind::AsyncMutex => "async-mutex",
            SinkKind::Channel => "channel",
        }
    }

    /// Parses [`SinkKind::name`].
    pub fn parse(name: &str) -> Result<SinkKind, String> {
        SinkKind::ALL
            .into_iter()
            .find(|k| k.name() == name)
            .ok_or_else(|| format!("unknown sink `{name}` (sync-mutex, async-mutex, channel)"))
    }
}

/// A periodic timer as a runtime provides it.
pub trait Ticker {
    /// Waits for the next tick; returns the tick's deadline as
    /// CLOCK_MONOTONIC nanoseconds (see [`crate::clock`]).
    fn tick(&mut self) -> impl Future<Output = u64> + Send;
}

/// The small buffer a source produces at each tick.
#[derive(Debug, Clone, Copy)]
pub struct Buffer {
    /// Sequence number within the stream.
    pub seq: u64,
    /// CLOCK_MONOTONIC nanoseconds when the source created it.
    pub created_ns: u64,
    /// Payload (20 ms of 8 kHz audio would be 160 bytes; the size does not
    /// matter here, the hand-off does).
    pub payload: [u8; 32],
}

/// The sink's state: what it expects next.
#[derive(Debug)]
pub struct Sink {
    next_seq: u64,
    window: MeasureWindow,
}

impl Sink {
    /// A sink that counts inside `window`.
    pub fn new(window: MeasureWindow) -> Sink {
        Sink {
            next_seq: 0,
            window,
        }
    }

    /// Accounts one buffer arriving now. Returns false once the window is over.
    pub fn handle(&mut self, buffer: Buffer) -> bool {
        let now = monotonic_ns();
        let phase = self.window.phase(now);
        if phase == Phase::Measured {
            with_thread_stats(|s| {
                s.buffers += 1;
                s.gaps += buffer.seq.saturating_sub(self.next_seq);
                s.latency.record_ns(now.saturating_sub(buffer.created_ns));
            });
        }
        self.next_seq = buffer.seq + 1;
        phase != Phase::Done
    }
}

/// The futures of one stream, to be spawned by the runtime under test.
pub struct StreamTasks<S, K> {
    /// The source task.
    pub source: S,
    /// The sink task (`channel` design only).
    pub sink: Option<K>,
}

/// How a source reaches its sink.
enum SinkHandle {
    Sync(Arc<std::sync::Mutex<Sink>>),
    Async(Arc<tokio::sync::Mutex<Sink>>),
    Channel(tokio::sync::mpsc::Sender<Buffer>),
}

impl SinkHandle {
    async fn push(&self, buffer: Buffer) -> bool {
        match self {
            SinkHandle::Sync(m) => m
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .handle(buffer),
            SinkHandle::Async(m) => m.lock().await.handle(buffer),
            SinkHandle::Channel(tx) => tx.send(buffer).await.is_ok(),
        }
    }
}

async fn source_loop<T: Ticker>(mut ticker: T, sink: SinkHandle, window: MeasureWindow) {
    let mut seq = 0u64;
    // Bounded: every tick moves the clock forward; the loop ends with the window.
    loop {
        let deadline = ticker.tick().await;
        let now = monotonic_ns();
        match window.phase(now) {
            Phase::Done => return,
            Phase::Measured => with_thread_stats(|s| {
                s.ticks += 1;
                s.timer_error.record(deadline, now);
            }),
            Phase::WarmUp => {}
        }
        let buffer = Buffer {
            seq,
            created_ns: now,
            payload: [0; 32],
        };
        seq += 1;
        if !sink.push(buffer).await {
            return;
        }
    }
}

async fn sink_task(mut rx: tokio::sync::mpsc::Receiver<Buffer>, mut sink: Sink) {
    // Bounded: ends when the source drops its sender or the window is over.
    while let Some(buffer) = rx.recv().await {
        if !sink.handle(buffer) {
            return;
        }
    }
}

/// Builds the tasks of one stream: a source on `ticker` and, for the
/// `channel` design, a sink task. The runtime spawns them.
pub fn stream_tasks<T>(
    kind: SinkKind,
    ticker: T,
    window: MeasureWindow,
) -> StreamTasks<impl Future<Output = ()> + Send + 'static, impl Future<Output = ()> + Send + 'static>
where
    T: Ticker + Send + 'static,
{
    let (handle, sink) = match kind {
        SinkKind::SyncMutex => (
            SinkHandle::Sync(Arc::new(std::sync::Mutex::new(Sink::new(window)))),
            None,
        ),
        SinkKind::AsyncMutex => (
            SinkHandle::Async(Arc::new(tokio::sync::Mutex::new(Sink::new(window)))),
            None,
        ),
        SinkKind::Channel => {
            let (tx, rx) = tokio::sync::mpsc::channel(CHANNEL_CAPACITY);
            (
                SinkHandle::Channel(tx),
                Some(sink_task(rx, Sink::new(window))),
            )
        }
    };
    StreamTasks {
        source: source_loop(ticker, handle, window),
        sink,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::pin::Pin;
    use std::sync::atomic::{AtomicBool, Ordering};
    use std::task::{Context, Poll, Wake, Waker};
    use std::time::Duration;

    /// A ticker that fires at once (after yielding once), deadline = now.
    struct ImmediateTicker;

    struct YieldOnce(bool);

    impl Future for YieldOnce {
        type Output = ();
        fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
            if self.0 {
                Poll::Ready(())
            } else {
                self.0 = true;
                cx.waker().wake_by_ref();
                Poll::Pending
            }
        }
    }

    impl Ticker for ImmediateTicker {
        async fn tick(&mut self) -> u64 {
            YieldOnce(false).await;
            monotonic_ns()
        }
    }

    struct Flag(AtomicBool);

    impl Wake for Flag {
        fn wake(self: Arc<Self>) {
            self.0.store(true, Ordering::SeqCst);
        }
    }

    /// A bare round-robin executor with no runtime at all: if tokio's sync
    /// types needed a tokio runtime, they would panic here.
    fn run_all(mut futures: Vec<Pin<Box<dyn Future<Output = ()> + Send>>>, limit: Duration) {
        let flag = Arc::new(Flag(AtomicBool::new(true)));
        let waker = Waker::from(Arc::clone(&flag));
        let mut cx = Context::from_waker(&waker);
        let deadline = monotonic_ns() + limit.as_nanos() as u64;
        while !futures.is_empty() && monotonic_ns() < deadline {
            flag.0.store(false, Ordering::SeqCst);
            futures.retain_mut(|f| f.as_mut().poll(&mut cx).is_pending());
        }
        assert!(futures.is_empty(), "tasks did not finish");
    }

    #[test]
    fn every_sink_design_runs_without_a_tokio_runtime() {
        for kind in SinkKind::ALL {
            let before = super::super::stats::collect();
            let window = MeasureWindow::after_warmup(Duration::ZERO, Duration::from_millis(20));
            let tasks = stream_tasks(kind, ImmediateTicker, window);
            let mut futures: Vec<Pin<Box<dyn Future<Output = ()> + Send>>> =
                vec![Box::pin(tasks.source)];
            if let Some(sink) = tasks.sink {
                futures.push(Box::pin(sink));
            }
            assert_eq!(futures.len(), if kind == SinkKind::Channel { 2 } else { 1 });
            run_all(futures, Duration::from_secs(10));
            let after = super::super::stats::collect();
            assert!(after.ticks > before.ticks, "{}", kind.name());
            assert!(after.buffers > before.buffers, "{}", kind.name());
        }
    }

    #[test]
    fn sink_names_round_trip() {
        for k in SinkKind::ALL {
            assert_eq!(SinkKind::parse(k.name()), Ok(k));
        }
        assert!(SinkKind::parse("queue").is_err());
    }
}
