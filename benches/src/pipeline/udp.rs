//! The UDP source: a task per socket whose `try_next` is `recv_from` on a
//! [`tempo::net::UdpSocket`], fed by the benchmark's own sender
//! ([`crate::udp_sender`]), and the same streams the way a tokio user
//! writes them (a socket loop per stream on a current-thread runtime).
//!
//! Both push each datagram, in a pooled [`Buffer`], to a sink task on the
//! same thread through a bounded channel; the sink accounts sequence gaps
//! and one-way latency with the UDP receivers' own
//! [`crate::recv_stats::StreamTracker`], so the figures are
//! comparable with the UDP sweep's `tempo-throttled` row.

use std::future::poll_fn;
use std::io;
use std::net::UdpSocket as StdUdpSocket;
use std::sync::Arc;
use std::task::{ready, Poll};
use std::time::Duration;

use tempo::context::Context;
use tempo_media::{BoxError, FlowError, Task, TaskImpl};
use tokio::sync::mpsc;

use super::buffer::{Buffer, BufferPool, GroupPools};
use super::sink::{sink, SinkShared};
use super::timer::CHANNEL_CAPACITY;
use crate::recv_stats::StreamTracker;

/// The UDP source element: one socket.
pub struct UdpSource {
    /// Until `prepare`: the socket is registered with the context's reactor
    /// on the context itself.
    std_socket: Option<StdUdpSocket>,
    socket: Option<tempo::net::UdpSocket>,
    /// The buffer `try_next` receives into, kept here so that a cancelled
    /// `try_next` (pause, flush, stop) does not lose it. Taken from the
    /// pool only once the socket is readable: a buffer held through the
    /// wait for a datagram would be a period old, cold, when the kernel
    /// copies into it (and a shared pool's freshly returned buffer is hot).
    next: Option<Buffer>,
    pool: BufferPool,
    tx: tempo_media::channel::Sender<Buffer>,
}

impl UdpSource {
    /// A source receiving on `socket` (registered on the context by
    /// `prepare`) into buffers of `pool`, pushing them to `tx`.
    pub fn new(
        socket: StdUdpSocket,
        pool: BufferPool,
        tx: tempo_media::channel::Sender<Buffer>,
    ) -> UdpSource {
        UdpSource {
            std_socket: Some(socket),
            socket: None,
            next: None,
            pool,
            tx,
        }
    }
}

impl TaskImpl for UdpSource {
    type Item = Buffer;

    async fn prepare(&mut self) -> Result<(), BoxError> {
        let std_socket = self.std_socket.take().ok_or("prepared twice")?;
        std_socket.set_nonblocking(true)?;
        self.socket = Some(tempo::net::UdpSocket::from_std(std_socket)?);
        Ok(())
    }

    async fn unprepare(&mut self) {
        self.socket = None;
    }

    async fn try_next(&mut self) -> Result<Buffer, FlowError> {
        let socket = self.socket.as_ref().ok_or(FlowError::Eos)?;
        let (next, pool) = (&mut self.next, &self.pool);
        // One `poll_fn`, the `poll_*` forms: the socket's one waker slot
        // per direction, no waiter entry to add and remove per datagram
        // (the task is the socket's only reader).
        poll_fn(|cx| {
            if next.is_none() {
                ready!(socket.poll_recv_ready(cx)).map_err(flow_error)?;
            }
            let buffer = next.get_or_insert_with(|| pool.take());
            let (len, _from) =
                ready!(socket.poll_recv_from(cx, &mut buffer.data)).map_err(flow_error)?;
            let mut buffer = next.take().expect("the buffer received into");
            buffer.len = len;
            Poll::Ready(Ok(buffer))
        })
        .await
    }

    async fn handle_item(&mut self, buffer: Buffer) -> Result<(), FlowError> {
        self.tx.send(buffer).await.map_err(|_| FlowError::Eos)
    }

    /// A flush drops in-flight data: the socket holds none (what it has
    /// not received is in the kernel's queue, which a flush leaves).
    async fn flush_start(&mut self) -> Result<(), BoxError> {
        Ok(())
    }
}

fn flow_error(e: io::Error) -> FlowError {
    FlowError::Error(e.into())
}

/// The sink's accounting of one stream: the UDP receivers' tracker, fed
/// the sink's own clock read (the time the buffer reached the sink).
fn tracker_sink(
    stream: u32,
    window: crate::window::MeasureWindow,
) -> impl FnMut(&Buffer, u64) + Send + 'static {
    let mut tracker = StreamTracker::new(stream, window);
    move |buffer: &Buffer, now_ns: u64| {
        crate::recv_stats::with_thread_stats(|stats| {
            tracker.on_datagram_at(buffer.bytes(), now_ns, stats);
        });
    }
}

/// Spawns the sink of stream `stream` (socket `socket`) on `context` and
/// prepares its source there.
pub fn prepare_udp_stream(
    context: &Context,
    stream: u32,
    socket: StdUdpSocket,
    window: crate::window::MeasureWindow,
    late_after: Duration,
    shared: Arc<SinkShared>,
    pools: &GroupPools,
) -> (Task, tempo_media::Ack) {
    let (tx, rx) = tempo_media::channel(CHANNEL_CAPACITY);
    let pool = pools.for_stream();
    let inspect = tracker_sink(stream, window);
    drop(context.spawn(sink(rx, pool.clone(), late_after, shared, inspect)));
    let task = Task::new();
    let source = UdpSource::new(socket, pool, tx);
    let ack = task.prepare(source, context.clone());
    (task, ack)
}

/// The tokio baseline of one stream, on the current tokio runtime: a
/// socket loop pushing to a sink task through the same channel and pool.
pub fn spawn_tokio_udp_stream(
    stream: u32,
    socket: StdUdpSocket,
    window: crate::window::MeasureWindow,
    late_after: Duration,
    shared: Arc<SinkShared>,
    pools: &GroupPools,
) -> io::Result<()> {
    socket.set_nonblocking(true)?;
    let socket = tokio::net::UdpSocket::from_std(socket)?;
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let pool = pools.for_stream();
    let inspect = tracker_sink(stream, window);
    tokio::spawn(sink(rx, pool.clone(), late_after, shared, inspect));
    tokio::spawn(async move {
        loop {
            // As the Tempo source: the buffer is taken once there is data.
            if socket.readable().await.is_err() {
                return;
            }
            let mut buffer = pool.take();
            match socket.recv_from(&mut buffer.data).await {
                Ok((len, _from)) => {
                    buffer.len = len;
                    if tx.send(buffer).await.is_err() {
                        return;
                    }
                }
                Err(_) => return,
            }
        }
    });
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::receivers::RECV_BUF_LEN;

    /// The element's actions called in order on a throttling runtime,
    /// whose datagram sockets are level-triggered and take one datagram
    /// per readiness report: nothing is ever received ahead, so a flush
    /// finds nothing held, and what the kernel queued before it comes
    /// after it, in order ("2" then "3"; dropping the kernel's queue is
    /// not a flush's job, as in threadshare's `udpsrc`).
    #[test]
    fn a_flush_finds_nothing_received_ahead() {
        let rt = crate::tempo_runtime::build(Some(Duration::from_millis(1))).unwrap();
        let receiver = StdUdpSocket::bind("127.0.0.1:0").unwrap();
        let to = receiver.local_addr().unwrap();
        let (tx, _rx) = tempo_media::channel(CHANNEL_CAPACITY);
        let mut source = UdpSource::new(receiver, BufferPool::new(2, RECV_BUF_LEN), tx);
        rt.block_on(async move {
            source.prepare().await.unwrap();
            let sender = StdUdpSocket::bind("127.0.0.1:0").unwrap();
            for payload in [b"1", b"2", b"3"] {
                sender.send_to(payload, to).unwrap();
            }
            let first = source.try_next().await.unwrap();
            assert_eq!(first.bytes(), b"1");
            source.flush_start().await.unwrap();
            source.flush_stop().await.unwrap();
            for expected in [b"2", b"3"] {
                let next = source.try_next().await.unwrap();
                assert_eq!(next.bytes(), expected);
            }
        });
    }
}
