//! The receive loops compared by `udp-receiver`, one module per runtime.
//!
//! Every receiver gets the same bound sockets and the same
//! [`MeasureWindow`]; it runs one receive loop per socket (a task, a thread,
//! or a slot in a hand-written event loop) that reads each datagram into a
//! reused buffer and hands it to a [`StreamTracker`](crate::recv_stats::StreamTracker),
//! and it returns when the window is over.
//!
//! One thing differs besides the runtime: *whose* buffer. The task
//! receivers (`tempo*`, `tokio`) keep a buffer per task, as
//! `recv_from(&mut buf).await` in a loop does; the hand-written loops
//! (`mio-*`) have one buffer for every socket, always in cache. At one
//! datagram per socket per tick the per-task buffer is cold at every
//! datagram: one buffer per thread costs a throttled receiver less CPU per
//! datagram (the README's headline table). The `*-threadbuf` receivers take the loops'
//! discipline with each runtime's own means: `tempo-throttled-threadbuf:T`
//! with `UdpSocket::recv_from_with` (the thread's receive buffer),
//! `tokio-threadbuf` with `poll_recv_from` into a thread-local buffer.
//! The other way round, `mio-throttled-lt-streambuf:T` gives the
//! level-triggered loop a buffer per stream, the task receivers'
//! discipline. Compare like with like.
//!
//! `uring-throttled:T` is no epoll loop: a throttled loop on io_uring
//! (`uring_loop.rs`), the kernel's side of a regime with no syscall per
//! datagram; `tempo-throttled-uring:T` (`tempo_uring.rs`) is Tempo's
//! throttling scheduler with a task per socket on the same kernel side
//! (`tempo::net::UdpRingReceiver`). `tempo-throttled-uring-taskbuf:T`
//! and `tempo-throttled-uring-dense-taskbuf:T` copy each datagram into a
//! buffer of the task's own (`UdpRingReceiver::recv_from`), the plain
//! receiver's discipline: what a `UdpSocket` receiving on io_uring would
//! cost.
//!
//! Adding a runtime is one module with a `run(sockets, window) -> io::Result<()>`
//! function, one [`ReceiverRuntime`] variant, one line in
//! [`ReceiverRuntime::parse`] and one arm in [`ReceiverRuntime::run`].

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

pub use crate::runtime_name::RuntimeNameError;
use crate::runtime_name::{fmt_ms, parse_period};
use crate::window::MeasureWindow;
use mio_loop::Buffers::{PerStream, Shared};
use mio_loop::Drain;
use tempo_uring::Read::{InPlace, TaskBuffer};
use tempo_uring::{DENSE_DATAGRAM, MTU_DATAGRAM};

pub mod mio_loop;
pub mod tempo;
pub mod tempo_uring;
pub mod threads;
pub mod tokio_current_thread;
pub mod uring_loop;

/// Size of the reused receive buffer of every loop (larger than any datagram
/// the sender makes by default, like a GStreamer udpsrc's MTU-sized buffer).
pub const RECV_BUF_LEN: usize = 2048;

/// Every runtime name `udp-receiver --runtime` knows of, in sweep order.
/// `:T` names take a throttling period in milliseconds.
pub const RUNTIME_NAMES: &[&str] = &[
    "tempo",
    "tempo-throttled:T",
    "tempo-throttled-batch:T",
    "tempo-throttled-batch-threadbuf:T",
    "tempo-throttled-splitG:T",
    "tempo-throttled-threadbuf:T",
    "tempo-throttled-uring:T",
    "tempo-throttled-uring-dense:T",
    "tempo-throttled-uring-taskbuf:T",
    "tempo-throttled-uring-dense-taskbuf:T",
    "tokio",
    "tokio-threadbuf",
    "threads",
    "mio-loop",
    "mio-throttled:T",
    "mio-throttled-mmsg:T",
    "mio-throttled-lt:T",
    "mio-throttled-lt-streambuf:T",
    "uring-throttled:T",
    "uring-throttled-dense:T",
];

/// A receiver runtime, parsed from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiverRuntime {
    /// Tempo's basic scheduler, one task per socket.
    Tempo,
    /// Tempo's throttling scheduler with this period, one task per socket.
    TempoThrottled(Duration),
    /// Tempo's throttling scheduler with this period, one task per socket
    /// taking each tick's datagrams with one `recv_many` (`recvmmsg`).
    TempoThrottledBatch(Duration),
    /// `tempo-throttled-batch-threadbuf:T`: the batch receiver with one
    /// `RecvBatch` per thread, lent to each task's `poll_recv_many`.
    TempoThrottledBatchThreadBuf(Duration),
    /// `tempo-throttled-splitG:T`: G throttling runtimes of this period
    /// on G threads of the process, the sockets dealt round-robin, one
    /// task per socket (the plain receiver on the thread layout of the
    /// `pipeline` benchmark's G contexts).
    TempoThrottledSplit(Duration, u8),
    /// `tempo-throttled-threadbuf:T`: Tempo's throttling scheduler with
    /// this period, one task per socket receiving with `recv_from_with`
    /// into the thread's receive buffer.
    TempoThrottledThreadBuf(Duration),
    /// tokio current_thread runtime, one task per socket.
    Tokio,
    /// `tokio-threadbuf`: tokio current_thread runtime, one task per
    /// socket receiving with `poll_recv_from` into a thread-local buffer.
    TokioThreadBuf,
    /// One blocking std thread per socket (GStreamer udpsrc's model).
    Threads,
    /// One mio `Poll`, each ready socket drained until `WouldBlock`.
    MioLoop,
    /// The mio loop, sleeping until the period has passed since each
    /// iteration began.
    MioThrottled(Duration),
    /// The throttled mio loop draining with two-datagram `recvmmsg` calls:
    /// one receive syscall per lone datagram.
    MioThrottledMmsg(Duration),
    /// `mio-throttled-lt:T`: the throttled loop with level-triggered read
    /// readiness, one `recvfrom` per report.
    MioThrottledLt(Duration),
    /// `mio-throttled-lt-streambuf:T`: the level-triggered loop with a
    /// receive buffer per stream.
    MioThrottledLtStreamBuf(Duration),
    /// `tempo-throttled-uring:T`: Tempo's throttling scheduler, one task
    /// per socket, each with a `UdpRingReceiver` (io_uring, 2 KiB buffers).
    TempoThrottledUring(Duration),
    /// `tempo-throttled-uring-dense:T`: the same for datagrams of up to
    /// 212 bytes (256-byte buffers).
    TempoThrottledUringDense(Duration),
    /// `tempo-throttled-uring-taskbuf:T`: `tempo-throttled-uring:T`
    /// copying each datagram into the task's own 2 KiB buffer.
    TempoThrottledUringTaskBuf(Duration),
    /// `tempo-throttled-uring-dense-taskbuf:T`: the same with 256-byte
    /// ring buffers.
    TempoThrottledUringDenseTaskBuf(Duration),
    /// `uring-throttled:T`: a throttled loop on io_uring, one multishot
    /// `recvmsg` per socket and one `io_uring_enter` per tick.
    UringThrottled(Duration),
    /// `uring-throttled-dense:T`: the io_uring loop with 256-byte
    /// buffers (its receive memory in cache).
    UringThrottledDense(Duration),
}

impl ReceiverRuntime {
    /// Parses `tokio`, `threads`, `mio-loop`, `mio-throttled:20`, ...
    pub fn parse(name: &str) -> Result<ReceiverRuntime, RuntimeNameError> {
        let (base, period) = match name.split_once(':') {
            Some((b, p)) => (b, Some(p)),
            None => (name, None),
        };
        match (base, period) {
            ("tokio", None) => Ok(ReceiverRuntime::Tokio),
            ("tokio-threadbuf", None) => Ok(ReceiverRuntime::TokioThreadBuf),
            ("threads", None) => Ok(ReceiverRuntime::Threads),
            ("mio-loop", None) => Ok(ReceiverRuntime::MioLoop),
            ("mio-throttled", Some(p)) => Ok(ReceiverRuntime::MioThrottled(parse_period(name, p)?)),
            ("mio-throttled-mmsg", Some(p)) => {
                Ok(ReceiverRuntime::MioThrottledMmsg(parse_period(name, p)?))
            }
            ("mio-throttled-lt", Some(p)) => {
                Ok(ReceiverRuntime::MioThrottledLt(parse_period(name, p)?))
            }
            ("mio-throttled-lt-streambuf", Some(p)) => Ok(
                ReceiverRuntime::MioThrottledLtStreamBuf(parse_period(name, p)?),
            ),
            ("uring-throttled", Some(p)) => {
                Ok(ReceiverRuntime::UringThrottled(parse_period(name, p)?))
            }
            ("uring-throttled-dense", Some(p)) => {
                Ok(ReceiverRuntime::UringThrottledDense(parse_period(name, p)?))
            }
            ("tempo", None) => Ok(ReceiverRuntime::Tempo),
            ("tempo-throttled", Some(p)) => {
                Ok(ReceiverRuntime::TempoThrottled(parse_period(name, p)?))
            }
            ("tempo-throttled-threadbuf", Some(p)) => Ok(ReceiverRuntime::TempoThrottledThreadBuf(
                parse_period(name, p)?,
            )),
            ("tempo-throttled-uring", Some(p)) => {
                Ok(ReceiverRuntime::TempoThrottledUring(parse_period(name, p)?))
            }
            ("tempo-throttled-uring-dense", Some(p)) => Ok(
                ReceiverRuntime::TempoThrottledUringDense(parse_period(name, p)?),
            ),
            ("tempo-throttled-uring-taskbuf", Some(p)) => Ok(
                ReceiverRuntime::TempoThrottledUringTaskBuf(parse_period(name, p)?),
            ),
            ("tempo-throttled-uring-dense-taskbuf", Some(p)) => Ok(
                ReceiverRuntime::TempoThrottledUringDenseTaskBuf(parse_period(name, p)?),
            ),
            ("tempo-throttled-batch-threadbuf", Some(p)) => Ok(
                ReceiverRuntime::TempoThrottledBatchThreadBuf(parse_period(name, p)?),
            ),
            ("tempo-throttled-batch", Some(p)) => {
                Ok(ReceiverRuntime::TempoThrottledBatch(parse_period(name, p)?))
            }
            (split, Some(p)) if split.starts_with("tempo-throttled-split") => {
                let groups = split["tempo-throttled-split".len()..]
                    .parse::<u8>()
                    .ok()
                    .filter(|g| *g >= 1)
                    .ok_or_else(|| RuntimeNameError::Unknown {
                        name: name.to_string(),
                        known: RUNTIME_NAMES,
                    })?;
                Ok(ReceiverRuntime::TempoThrottledSplit(
                    parse_period(name, p)?,
                    groups,
                ))
            }
            _ => Err(RuntimeNameError::Unknown {
                name: name.to_string(),
                known: RUNTIME_NAMES,
            }),
        }
    }

    /// The canonical name (what `parse` accepts), for reports.
    pub fn name(&self) -> String {
        match self {
            ReceiverRuntime::Tempo => "tempo".into(),
            ReceiverRuntime::TempoThrottled(p) => format!("tempo-throttled:{}", fmt_ms(*p)),
            ReceiverRuntime::TempoThrottledBatch(p) => {
                format!("tempo-throttled-batch:{}", fmt_ms(*p))
            }
            ReceiverRuntime::TempoThrottledSplit(p, g) => {
                format!("tempo-throttled-split{g}:{}", fmt_ms(*p))
            }
            ReceiverRuntime::TempoThrottledBatchThreadBuf(p) => {
                format!("tempo-throttled-batch-threadbuf:{}", fmt_ms(*p))
            }
            ReceiverRuntime::TempoThrottledThreadBuf(p) => {
                format!("tempo-throttled-threadbuf:{}", fmt_ms(*p))
            }
            ReceiverRuntime::TempoThrottledUring(p) => {
                format!("tempo-throttled-uring:{}", fmt_ms(*p))
            }
            ReceiverRuntime::TempoThrottledUringDense(p) => {
                format!("tempo-throttled-uring-dense:{}", fmt_ms(*p))
            }
            ReceiverRuntime::TempoThrottledUringTaskBuf(p) => {
                format!("tempo-throttled-uring-taskbuf:{}", fmt_ms(*p))
            }
            ReceiverRuntime::TempoThrottledUringDenseTaskBuf(p) => {
                format!("tempo-throttled-uring-dense-taskbuf:{}", fmt_ms(*p))
            }
            ReceiverRuntime::Tokio => "tokio".into(),
            ReceiverRuntime::TokioThreadBuf => "tokio-threadbuf".into(),
            ReceiverRuntime::Threads => "threads".into(),
            ReceiverRuntime::MioLoop => "mio-loop".into(),
            ReceiverRuntime::MioThrottled(p) => format!("mio-throttled:{}", fmt_ms(*p)),
            ReceiverRuntime::MioThrottledMmsg(p) => {
                format!("mio-throttled-mmsg:{}", fmt_ms(*p))
            }
            ReceiverRuntime::MioThrottledLt(p) => format!("mio-throttled-lt:{}", fmt_ms(*p)),
            ReceiverRuntime::MioThrottledLtStreamBuf(p) => {
                format!("mio-throttled-lt-streambuf:{}", fmt_ms(*p))
            }
            ReceiverRuntime::UringThrottled(p) => format!("uring-throttled:{}", fmt_ms(*p)),
            ReceiverRuntime::UringThrottledDense(p) => {
                format!("uring-throttled-dense:{}", fmt_ms(*p))
            }
        }
    }

    /// The throttling period of a throttled runtime.
    pub fn period(&self) -> Option<Duration> {
        match *self {
            ReceiverRuntime::TempoThrottled(p)
            | ReceiverRuntime::TempoThrottledSplit(p, _)
            | ReceiverRuntime::TempoThrottledBatch(p)
            | ReceiverRuntime::TempoThrottledThreadBuf(p)
            | ReceiverRuntime::TempoThrottledBatchThreadBuf(p)
            | ReceiverRuntime::TempoThrottledUring(p)
            | ReceiverRuntime::TempoThrottledUringDense(p)
            | ReceiverRuntime::TempoThrottledUringTaskBuf(p)
            | ReceiverRuntime::TempoThrottledUringDenseTaskBuf(p)
            | ReceiverRuntime::MioThrottled(p)
            | ReceiverRuntime::MioThrottledMmsg(p)
            | ReceiverRuntime::MioThrottledLt(p)
            | ReceiverRuntime::MioThrottledLtStreamBuf(p)
            | ReceiverRuntime::UringThrottled(p)
            | ReceiverRuntime::UringThrottledDense(p) => Some(p),
            ReceiverRuntime::Tempo
            | ReceiverRuntime::Tokio
            | ReceiverRuntime::TokioThreadBuf
            | ReceiverRuntime::Threads
            | ReceiverRuntime::MioLoop => None,
        }
    }

    /// Receives on `sockets` (bound, blocking) until `window` is over.
    pub fn run(&self, sockets: Vec<UdpSocket>, window: MeasureWindow) -> io::Result<()> {
        match *self {
            ReceiverRuntime::Tempo => self::tempo::run(sockets, window, None),
            ReceiverRuntime::TempoThrottled(p) => self::tempo::run(sockets, window, Some(p)),
            ReceiverRuntime::TempoThrottledBatch(p) => self::tempo::run_batch(sockets, window, p),
            ReceiverRuntime::TempoThrottledSplit(p, g) => {
                self::tempo::run_split(sockets, window, p, g.into())
            }
            ReceiverRuntime::TempoThrottledThreadBuf(p) => {
                self::tempo::run_thread_buf(sockets, window, p)
            }
            ReceiverRuntime::TempoThrottledBatchThreadBuf(p) => {
                self::tempo::run_batch_thread_buf(sockets, window, p)
            }
            ReceiverRuntime::TempoThrottledUring(p) => {
                tempo_uring::run(sockets, window, p, MTU_DATAGRAM, InPlace)
            }
            ReceiverRuntime::TempoThrottledUringDense(p) => {
                tempo_uring::run(sockets, window, p, DENSE_DATAGRAM, InPlace)
            }
            ReceiverRuntime::TempoThrottledUringTaskBuf(p) => {
                tempo_uring::run(sockets, window, p, MTU_DATAGRAM, TaskBuffer)
            }
            ReceiverRuntime::TempoThrottledUringDenseTaskBuf(p) => {
                tempo_uring::run(sockets, window, p, DENSE_DATAGRAM, TaskBuffer)
            }
            ReceiverRuntime::Tokio => tokio_current_thread::run(sockets, window),
            ReceiverRuntime::TokioThreadBuf => {
                tokio_current_thread::run_thread_buf(sockets, window)
            }
            ReceiverRuntime::Threads => threads::run(sockets, window),
            ReceiverRuntime::MioLoop => {
                mio_loop::run(sockets, window, None, Drain::RecvFrom, Shared)
            }
            ReceiverRuntime::MioThrottled(p) => {
                mio_loop::run(sockets, window, Some(p), Drain::RecvFrom, Shared)
            }
            ReceiverRuntime::MioThrottledMmsg(p) => {
                mio_loop::run(sockets, window, Some(p), Drain::Mmsg2, Shared)
            }
            ReceiverRuntime::MioThrottledLt(p) => {
                mio_loop::run(sockets, window, Some(p), Drain::LevelOnce, Shared)
            }
            ReceiverRuntime::MioThrottledLtStreamBuf(p) => {
                mio_loop::run(sockets, window, Some(p), Drain::LevelOnce, PerStream)
            }
            ReceiverRuntime::UringThrottled(p) => uring_loop::run(sockets, window, p, RECV_BUF_LEN),
            ReceiverRuntime::UringThrottledDense(p) => {
                uring_loop::run(sockets, window, p, uring_loop::DENSE_BUF_LEN)
            }
        }
    }
}

/// `streams` bound sockets, each already holding `per_stream` benchmark
/// datagrams (sequence numbers from 0): what the receivers' smoke tests
/// start from.
#[cfg(test)]
pub(crate) fn sockets_with_queued(streams: usize, per_stream: u64) -> Vec<UdpSocket> {
    use crate::packet::{PacketHeader, DEFAULT_SIZE};

    let sockets: Vec<UdpSocket> = (0..streams)
        .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
        .collect();
    let sender = UdpSocket::bind("127.0.0.1:0").unwrap();
    for (stream, sock) in sockets.iter().enumerate() {
        for seq in 0..per_stream {
            let mut datagram = [0u8; DEFAULT_SIZE];
            PacketHeader {
                seq,
                sent_ns: crate::clock::monotonic_ns(),
                stream: stream as u32,
            }
            .write_to(&mut datagram);
            sender
                .send_to(&datagram, sock.local_addr().unwrap())
                .unwrap();
        }
    }
    sockets
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "tokio",
            "threads",
            "mio-loop",
            "mio-throttled:20",
            "mio-throttled:2.5",
            "mio-throttled-mmsg:20",
            "mio-throttled-lt:20",
            "mio-throttled-lt-streambuf:20",
            "uring-throttled:20",
            "uring-throttled-dense:20",
            "tempo-throttled-uring:20",
            "tempo-throttled-uring-dense:20",
            "tempo-throttled-uring-taskbuf:20",
            "tempo-throttled-uring-dense-taskbuf:20",
            "tempo-throttled:20",
            "tempo-throttled-batch:20",
            "tempo-throttled-split2:20",
            "tempo-throttled-threadbuf:20",
            "tempo-throttled-batch-threadbuf:20",
            "tokio-threadbuf",
        ] {
            assert_eq!(ReceiverRuntime::parse(name).unwrap().name(), name);
        }
    }

    #[test]
    fn throttled_runtimes_have_their_period() {
        let period = |name| ReceiverRuntime::parse(name).unwrap().period();
        assert_eq!(
            period("mio-throttled-mmsg:5"),
            Some(Duration::from_millis(5))
        );
        assert_eq!(
            period("tempo-throttled-batch:20"),
            Some(Duration::from_millis(20))
        );
        assert_eq!(period("mio-loop"), None);
        assert_eq!(period("tempo"), None);
    }

    #[test]
    fn bad_names_are_rejected() {
        assert!(matches!(
            ReceiverRuntime::parse("mio-throttled:x"),
            Err(RuntimeNameError::BadPeriod(_))
        ));
        assert!(matches!(
            ReceiverRuntime::parse("tokio:5"),
            Err(RuntimeNameError::Unknown { .. })
        ));
        assert!(matches!(
            ReceiverRuntime::parse("glommio"),
            Err(RuntimeNameError::Unknown { .. })
        ));
    }
}
