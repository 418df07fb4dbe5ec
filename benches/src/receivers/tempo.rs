//! Tempo: one task per socket, `recv_from().await`, the same loop as the
//! tokio receiver with Tempo's runtime and `tempo::net::UdpSocket`.
//!
//! `tempo` is the basic scheduler, `tempo-throttled:T` the throttling
//! scheduler with period T. `tempo-throttled-batch:T` is the throttling
//! scheduler with a loop that takes each tick's datagrams of its socket
//! with one `recv_many` (one `recvmmsg`) into a reused
//! [`RecvBatch`](tempo::net::RecvBatch) of [`BATCH`] buffers.
//! `tempo-throttled-splitG:T` is the plain loop on G throttling runtimes,
//! one thread each. `tempo-throttled-threadbuf:T` is the plain loop with
//! `recv_from_with`: every datagram into the thread's one receive buffer
//! (the hand-written loops' discipline) instead of the task's own;
//! `tempo-throttled-batch-threadbuf:T` the batch loop with one
//! `RecvBatch` per thread, lent to each task's `poll_recv_many`.

use std::io;
use std::net::UdpSocket;

use crate::recv_stats::StreamTracker;
use std::time::Duration;

use crate::window::{MeasureWindow, Phase};

use super::RECV_BUF_LEN;

/// Runs one task per socket on a Tempo runtime (throttled with period
/// `throttle` if given) until `window` ends.
pub fn run(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Option<Duration>,
) -> io::Result<()> {
    run_tasks(sockets, window, throttle, |sock, tracker| {
        tempo::spawn(receive_loop(sock, tracker));
        Ok(())
    })
}

/// `tempo-throttled-splitG:T`: the plain receiver on `groups` throttling
/// runtimes, each on a thread of its own, socket `i` on runtime
/// `i % groups` (as the `pipeline` benchmark deals streams to its
/// contexts); until `window` ends.
pub fn run_split(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Duration,
    groups: usize,
) -> io::Result<()> {
    let mut dealt: Vec<Vec<(u32, UdpSocket)>> = (0..groups).map(|_| Vec::new()).collect();
    for (i, sock) in sockets.into_iter().enumerate() {
        dealt[i % groups].push((i as u32, sock));
    }
    std::thread::scope(|scope| {
        let threads: Vec<_> = dealt
            .into_iter()
            .map(|group| {
                scope.spawn(move || {
                    let rt = crate::tempo_runtime::build(Some(throttle))?;
                    rt.block_on(async move {
                        for (id, sock) in group {
                            sock.set_nonblocking(true)?;
                            let sock = tempo::net::UdpSocket::from_std(sock)?;
                            tempo::spawn(receive_loop(sock, StreamTracker::new(id, window)));
                        }
                        until_the_window_ends(window).await;
                        Ok::<(), io::Error>(())
                    })
                })
            })
            .collect();
        threads
            .into_iter()
            .try_for_each(|t| t.join().expect("a receiver thread panicked"))
    })
}

/// Waits until `window` is over, never before: the runtime stops (and
/// drops every task and socket) only after the controller has read its
/// counters at the window's end. A `sleep_until` would fire at the tick
/// nearest the end, up to `T/2` early, and the teardown (a deregistration
/// and a close per socket, and its allocations) fell inside the window
/// (hundreds to thousands of allocations counted in the window).
async fn until_the_window_ends(window: MeasureWindow) {
    tempo::time::sleep_at_least(window.remaining()).await;
}

/// The set-up both receivers share: registers every socket with the
/// runtime, starts its task with `spawn_one`, and runs until `window` ends.
fn run_tasks(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Option<Duration>,
    spawn_one: impl Fn(tempo::net::UdpSocket, StreamTracker) -> io::Result<()>,
) -> io::Result<()> {
    let rt = crate::tempo_runtime::build(throttle)?;
    rt.block_on(async move {
        for (i, sock) in sockets.into_iter().enumerate() {
            sock.set_nonblocking(true)?;
            let sock = tempo::net::UdpSocket::from_std(sock)?;
            spawn_one(sock, StreamTracker::new(i as u32, window))?;
        }
        until_the_window_ends(window).await;
        Ok::<(), io::Error>(())
    })?;
    if std::env::var_os("TEMPO_BENCH_METRICS").is_some() {
        let m = rt.metrics();
        eprintln!(
            "tempo metrics: ticks {} overruns {} polls {} io_events {} busy {:?} parked {:?}",
            m.ticks, m.overruns, m.tasks_polled, m.io_events, m.busy, m.parked
        );
    }
    // Dropping the runtime drops the tasks still waiting for a datagram.
    drop(rt);
    Ok(())
}

/// Buffers per socket of the batch receiver: a stream sends one datagram
/// per period, so a few cover a late tick; `BATCH x RECV_BUF_LEN` bytes per
/// socket.
pub const BATCH: usize = 4;

/// Runs one `recv_many` task per socket on a throttling Tempo runtime of
/// period `throttle` until `window` ends.
pub fn run_batch(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Duration,
) -> io::Result<()> {
    run_tasks(sockets, window, Some(throttle), |sock, tracker| {
        let batch = tempo::net::RecvBatch::new(BATCH, RECV_BUF_LEN)?;
        tempo::spawn(batch_loop(sock, batch, tracker));
        Ok(())
    })
}

/// `tempo-throttled-batch-threadbuf:T`: [`run_batch`] with one
/// [`RecvBatch`](tempo::net::RecvBatch) per thread, lent to each task's
/// `poll_recv_many` inside its poll (the batch of the thread, in cache,
/// where a batch per task is cold at every datagram).
pub fn run_batch_thread_buf(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Duration,
) -> io::Result<()> {
    run_tasks(sockets, window, Some(throttle), |sock, tracker| {
        tempo::spawn(batch_thread_buf_loop(sock, tracker));
        Ok(())
    })
}

thread_local! {
    static THREAD_BATCH: std::cell::RefCell<Option<tempo::net::RecvBatch>> =
        const { std::cell::RefCell::new(None) };
}

async fn batch_thread_buf_loop(sock: tempo::net::UdpSocket, mut tracker: StreamTracker) {
    loop {
        let received = std::future::poll_fn(|cx| {
            THREAD_BATCH.with_borrow_mut(|batch| {
                let batch = match batch {
                    Some(batch) => batch,
                    None => batch.insert(tempo::net::RecvBatch::new(BATCH, RECV_BUF_LEN)?),
                };
                let n = std::task::ready!(sock.poll_recv_many(cx, batch))?;
                let mut phase = Phase::WarmUp;
                for i in 0..n {
                    phase = tracker.on_datagram(batch.payload(i));
                    if phase == Phase::Done {
                        break;
                    }
                }
                std::task::Poll::Ready(Ok::<_, io::Error>(phase))
            })
        })
        .await;
        if !tracker.goes_on(received) {
            return;
        }
    }
}

async fn batch_loop(
    sock: tempo::net::UdpSocket,
    mut batch: tempo::net::RecvBatch,
    mut tracker: StreamTracker,
) {
    loop {
        match sock.recv_many(&mut batch).await {
            Ok(n) => {
                for i in 0..n {
                    if tracker.on_datagram(batch.payload(i)) == Phase::Done {
                        return;
                    }
                }
            }
            Err(_) => {
                tracker.on_error();
                return;
            }
        }
    }
}

/// `tempo-throttled-threadbuf:T`: one task per socket on a throttling
/// runtime of period `throttle`, each datagram received with
/// `recv_from_with` into the thread's receive buffer; until `window` ends.
pub fn run_thread_buf(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Duration,
) -> io::Result<()> {
    run_tasks(sockets, window, Some(throttle), |sock, tracker| {
        tempo::spawn(thread_buf_loop(sock, tracker));
        Ok(())
    })
}

async fn thread_buf_loop(sock: tempo::net::UdpSocket, mut tracker: StreamTracker) {
    loop {
        let received = sock
            .recv_from_with(|datagram, _from| tracker.on_datagram(datagram))
            .await;
        if !tracker.goes_on(received) {
            return;
        }
    }
}

async fn receive_loop(sock: tempo::net::UdpSocket, mut tracker: StreamTracker) {
    let mut buf = vec![0u8; RECV_BUF_LEN];
    loop {
        match sock.recv_from(&mut buf).await {
            Ok((n, _from)) => {
                if tracker.on_datagram(&buf[..n]) == Phase::Done {
                    return;
                }
            }
            Err(_) => {
                tracker.on_error();
                return;
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::clock::monotonic_ns;

    /// Under throttling, a receiver's runtime stops only once its window is
    /// over: its teardown must not fall inside the measured window. (A
    /// `sleep_until` of the window's end fires at the nearest tick, up to
    /// `T/2` before it: a 7 ms window under `T` = 20 ms ended at once.)
    #[test]
    fn a_throttled_receiver_runs_until_its_window_is_over() {
        let rt = crate::tempo_runtime::build(Some(Duration::from_millis(20))).unwrap();
        for _ in 0..3 {
            let window = MeasureWindow::after_warmup(Duration::ZERO, Duration::from_millis(7));
            rt.block_on(until_the_window_ends(window));
            assert!(
                monotonic_ns() >= window.end_ns,
                "stopped before the window's end"
            );
        }
    }
}
