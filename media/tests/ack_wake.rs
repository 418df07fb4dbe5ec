//! What cuts a throttled runtime's sleep short. An answer is control,
//! like the request: a requester awaiting an `Ack` on a throttled
//! runtime's thread is unparked by the answer, so it does not wait for
//! that runtime's next tick. A channel item is data: sent from another
//! thread, it waits for the next tick, unless the sender unparks the
//! receiver's runtime.
//!
//! Deterministic: the requester's runtime runs on a paused clock, where the
//! sleep between ticks advances virtual time by the whole period unless an
//! unpark cut it short. The answer is known to be sent (woken and unparked)
//! before the requester's runtime ends its tick, so the question is only
//! whether that tick's sleep is cut: the requester's virtual clock advances
//! by zero, not by a period.

use std::future::pending;
use std::sync::mpsc;
use std::time::Duration;

use tempo::context::Context;
use tempo::runtime::{Builder, Runtime};
use tempo_media::{BoxError, FlowError, Task, TaskImpl, TaskState, Transition, Trigger};
use tokio::sync::oneshot;

const HANG: Duration = Duration::from_secs(20);

/// The requester's period: the longest a context may have.
const PERIOD: Duration = Duration::from_secs(1);

/// Its `pause` waits for a gate; its `flush_start` reports that it ran
/// (so the pause before it was answered in full).
struct Gated {
    gate: Option<oneshot::Receiver<()>>,
    flushed: mpsc::Sender<()>,
}

impl TaskImpl for Gated {
    type Item = ();

    async fn try_next(&mut self) -> Result<(), FlowError> {
        pending().await
    }

    async fn handle_item(&mut self, _: ()) -> Result<(), FlowError> {
        Ok(())
    }

    async fn pause(&mut self) -> Result<(), BoxError> {
        if let Some(gate) = self.gate.take() {
            gate.await?;
        }
        Ok(())
    }

    async fn flush_start(&mut self) -> Result<(), BoxError> {
        self.flushed.send(())?;
        Ok(())
    }
}

#[test]
fn an_answer_cuts_the_requesters_sleep_between_ticks() {
    let target = Context::acquire("media-ack-wake-target", Duration::from_millis(20)).unwrap();
    let (gate_tx, gate) = oneshot::channel();
    let (flushed, flushed_rx) = mpsc::channel();
    let task = Task::new();
    let element = Gated {
        gate: Some(gate),
        flushed,
    };
    task.prepare(element, target).wait(HANG).unwrap();
    task.start().wait(HANG).unwrap();
    let task_ref = task.task_ref();

    let requester = Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .max_throttling(PERIOD)
        .build()
        .unwrap();
    let handle = requester.handle().clone();
    let (answer, elapsed, ticks) = requester.block_on(async move {
        tempo::spawn(async move {
            let pause = task_ref.pause();
            let flush = task_ref.flush_start();
            // Polled after this task's first poll returned (the pause
            // waits for the gate until then), in the same tick: it opens
            // the gate, then blocks this thread until the target ran the
            // flush start, which it does after answering the pause. So
            // the answer's wake and unpark both land before this tick
            // ends.
            drop(tempo::spawn(async move {
                gate_tx.send(()).unwrap();
                flushed_rx.recv_timeout(HANG).unwrap();
            }));
            let start = tempo::time::Instant::now();
            let ticks = handle.metrics().ticks;
            let answer = pause.await;
            let elapsed = start.elapsed();
            let ticks = handle.metrics().ticks - ticks;
            drop(flush);
            (answer, elapsed, ticks)
        })
        .await
        .unwrap()
    });
    assert_eq!(
        answer.unwrap(),
        Transition::Complete {
            trigger: Trigger::Pause,
            from: TaskState::Started,
            to: TaskState::Paused,
        }
    );
    // The tick that ran the request ended in a sleep the answer cut short:
    // the answer was taken by the next tick, which began at once, not a
    // period later.
    assert_eq!(
        ticks, 1,
        "the answer was taken by the tick after the request's"
    );
    assert!(
        elapsed < PERIOD,
        "the answer waited for the requester's next tick: {elapsed:?} of virtual time"
    );
}

fn paused_throttled() -> Runtime {
    Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .max_throttling(PERIOD)
        .build()
        .unwrap()
}

/// A receiver on a throttled runtime awaits an item that another thread
/// sends (then unparks the runtime if `unpark`) while the receiver's tick
/// still runs; returns the virtual time the item took.
fn item_across_threads(unpark: bool) -> Duration {
    let rt = paused_throttled();
    let handle = rt.handle().clone();
    let (tx, mut rx) = tempo_media::channel(1);
    let (go_tx, go) = mpsc::channel::<()>();
    let (sent_tx, sent) = mpsc::channel::<()>();
    let sender = std::thread::spawn(move || {
        go.recv_timeout(HANG).unwrap();
        tx.try_send(7u32).unwrap();
        if unpark {
            handle.unpark();
        }
        sent_tx.send(()).unwrap();
    });
    let elapsed = rt.block_on(async move {
        tempo::spawn(async move {
            // Polled after this task's first poll returned, in the same
            // tick: the item is sent (and the unpark made) before the
            // tick ends.
            drop(tempo::spawn(async move {
                go_tx.send(()).unwrap();
                sent.recv_timeout(HANG).unwrap();
            }));
            let start = tempo::time::Instant::now();
            assert_eq!(rx.recv().await, Some(7));
            start.elapsed()
        })
        .await
        .unwrap()
    });
    sender.join().unwrap();
    elapsed
}

#[test]
fn a_channel_item_from_another_thread_waits_for_the_next_tick() {
    assert!(item_across_threads(false) >= PERIOD);
}

#[test]
fn a_sender_that_unparks_the_receivers_runtime_cuts_its_sleep() {
    assert!(item_across_threads(true) < PERIOD);
}
