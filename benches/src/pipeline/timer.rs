//! The timer-driven source: a buffer every period on a never-early
//! deadline, no network. It measures the scheduler, the timers, the
//! channels and the lifecycle, and nothing else.

use std::sync::Arc;
use std::time::Duration;

use tempo::context::Context;
use tempo_media::{FlowError, Task, TaskImpl};
use tokio::sync::mpsc;

use super::buffer::{Buffer, BufferPool, GroupPools};
use super::sink::{sink, SinkShared};

/// Capacity of the channel from a source to its sink.
pub const CHANNEL_CAPACITY: usize = 4;

/// Buffers per stream: the channel full, one in the source, one in the
/// sink, and one spare.
pub const POOL_BUFFERS: usize = CHANNEL_CAPACITY + 3;

/// Bytes per buffer of the timer source (a 20 ms audio frame of 8 kHz
/// 8-bit samples; the source does not write them, the size only makes the
/// pool realistic).
pub const TIMER_BUFFER_LEN: usize = 160;

/// The timer-driven source element.
pub struct TimerSource {
    period: Duration,
    next: tempo::time::Instant,
    seq: u64,
    pool: BufferPool,
    tx: tempo_media::channel::Sender<Buffer>,
}

impl TaskImpl for TimerSource {
    type Item = u64;

    async fn start(&mut self) -> Result<(), tempo_media::BoxError> {
        self.next = tempo::time::Instant::now() + self.period;
        Ok(())
    }

    async fn try_next(&mut self) -> Result<u64, FlowError> {
        tempo::time::sleep_until(self.next).await;
        self.next += self.period;
        self.seq += 1;
        Ok(self.seq)
    }

    async fn handle_item(&mut self, seq: u64) -> Result<(), FlowError> {
        let mut buffer = self.pool.take();
        buffer.seq = seq;
        buffer.len = buffer.data.len();
        self.tx.send(buffer).await.map_err(|_| FlowError::Eos)
    }
}

/// Spawns the sink of a new timer-driven stream on `context` and prepares
/// its source there, both using buffers of the stream's pool from
/// `pools`; returns the (prepared, not started) task and the prepare
/// acknowledgement.
pub fn prepare_timer_stream(
    context: &Context,
    period: Duration,
    late_after: Duration,
    shared: Arc<SinkShared>,
    pools: &GroupPools,
) -> (Task, tempo_media::Ack) {
    let (tx, rx) = tempo_media::channel(CHANNEL_CAPACITY);
    // After the channel, as every stream's allocations have always been
    // made: heap layout moves these figures by tens of per cent.
    let pool = pools.for_stream();
    drop(context.spawn(sink(rx, pool.clone(), late_after, shared, |_, _| {})));
    let task = Task::new();
    let source = TimerSource {
        period,
        next: tempo::time::Instant::now(),
        seq: 0,
        pool,
        tx,
    };
    let ack = task.prepare(source, context.clone());
    (task, ack)
}

/// The same stream the way a tokio user writes it: a task with a
/// `tokio::time::interval`, on the current tokio runtime.
pub fn spawn_tokio_timer_stream(
    period: Duration,
    late_after: Duration,
    shared: Arc<SinkShared>,
    pools: &GroupPools,
) {
    let (tx, rx) = mpsc::channel(CHANNEL_CAPACITY);
    let pool = pools.for_stream();
    tokio::spawn(sink(rx, pool.clone(), late_after, shared, |_, _| {}));
    tokio::spawn(async move {
        let mut interval = tokio::time::interval(period);
        let mut seq = 0u64;
        loop {
            interval.tick().await;
            seq += 1;
            let mut buffer = pool.take();
            buffer.seq = seq;
            buffer.len = buffer.data.len();
            if tx.send(buffer).await.is_err() {
                break;
            }
        }
    });
}
