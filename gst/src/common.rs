//! What the elements share: the context properties, acquiring a context,
//! waiting for a task transition from a state change, and the data queue
//! that `tempoqueue` and `tempoudpsink` hand their input over with.

use std::collections::VecDeque;
use std::sync::{Condvar, Mutex, MutexGuard};
use std::task::{Context as TaskCx, Poll, Waker};
use std::time::Duration;

use gst::glib;
use gst::prelude::*;
use tempo::context::Context;
use tempo_media::{Ack, FlowError, TransitionError, Trigger};

/// How long a state change waits for a task transition. A transition
/// waits for the item being handled (a push downstream); only a
/// downstream element that blocks the context's thread makes it this long.
pub(crate) const ACK_TIMEOUT: Duration = Duration::from_secs(10);

/// The `context` and `context-wait` properties every element has.
pub(crate) fn context_properties() -> [glib::ParamSpec; 2] {
    [
        glib::ParamSpecString::builder("context")
            .nick("Context")
            .blurb(
                "Name of the Tempo context (thread) this element runs on; elements naming \
                 the same context share its thread (empty: a context of its own, named after \
                 the element)",
            )
            .default_value(Some(""))
            .mutable_ready()
            .build(),
        glib::ParamSpecUInt::builder("context-wait")
            .nick("Context Wait")
            .blurb(
                "Throttling period of the context in ms: it wakes at most once per period \
                 and serves everything due (0: wake on every event; else 1 to 1000)",
            )
            .maximum(1000)
            .default_value(0)
            .mutable_ready()
            .build(),
    ]
}

/// The context called `name` (the element's own name if empty), started
/// with a throttling period of `wait_ms` if it is not running.
pub(crate) fn acquire_context(
    element: &gst::Element,
    name: &str,
    wait_ms: u32,
) -> Result<Context, gst::ErrorMessage> {
    let name = if name.is_empty() {
        element.name().to_string()
    } else {
        name.to_owned()
    };
    let wait = Duration::from_millis(wait_ms.into());
    Context::acquire(&name, wait).map_err(|err| {
        if err.kind() == std::io::ErrorKind::AlreadyExists {
            gst::error_msg!(
                gst::LibraryError::Settings,
                ("Context '{name}' already runs with another context-wait than {wait_ms} ms: \
                     give every element of a context the same context-wait, or use another \
                     context name"),
                ["{err}"]
            )
        } else {
            gst::error_msg!(
                gst::LibraryError::Init,
                ("Could not start context '{name}': {err}. Check the process's thread and \
                  file descriptor limits"),
                ["{err:?}"]
            )
        }
    })
}

/// The trigger a streaming task's loop error leads to, as `basesrc`
/// pauses its task: a flush pauses (until a flush stop or a state change),
/// EOS stops, and an error goes on the bus, naming the element's task,
/// before the task goes to `Error`.
pub(crate) fn loop_error_trigger(element: Option<gst::Element>, error: FlowError) -> Trigger {
    match error {
        FlowError::Flushing => Trigger::Pause,
        FlowError::Eos => Trigger::Stop,
        FlowError::Error(err) => {
            if let Some(element) = element {
                let name = element.factory().map(|f| f.name()).unwrap_or_default();
                gst::element_error!(
                    element,
                    gst::StreamError::Failed,
                    ("Streaming stopped: {err}"),
                    ["{name} task error"]
                );
            }
            Trigger::Error
        }
    }
}

/// Waits for `ack` (a transition asked by a state change): an error
/// message for the bus if the transition failed or did not answer.
pub(crate) fn wait_ack(ack: Ack, what: &str) -> Result<(), gst::ErrorMessage> {
    match ack.wait(ACK_TIMEOUT) {
        Ok(_) => Ok(()),
        Err(TransitionError::Failed { error, .. }) => Err(gst::error_msg!(
            gst::ResourceError::Failed,
            ("Could not {what}: {error}")
        )),
        Err(TransitionError::TimedOut { trigger }) => Err(gst::error_msg!(
            gst::CoreError::StateChange,
            (
                "Could not {what}: the task did not answer within {} s. A downstream element \
                 blocks the context's thread: give it sync=false / async=false, or put a \
                 queue in front of it",
                ACK_TIMEOUT.as_secs()
            ),
            ["{trigger:?} timed out"]
        )),
        Err(err) => Err(gst::error_msg!(
            gst::CoreError::StateChange,
            ("Could not {what}: {err}")
        )),
    }
}

/// What a queue holds: a buffer, or a serialized event kept in order with
/// the buffers.
pub(crate) enum Item {
    Buffer(gst::Buffer),
    Event(gst::Event),
}

/// The limits of a [`DataQueue`]; 0 means no limit.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Limits {
    pub(crate) buffers: u32,
    pub(crate) bytes: u32,
    pub(crate) time: gst::ClockTime,
}

/// Why [`DataQueue::push`] did not queue a buffer.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum PushError {
    /// The queue is flushing: the caller returns `FLUSHING`.
    Flushing,
    /// The queue is full and the caller runs on a context's thread, which
    /// must not block: the buffer was dropped.
    Dropped,
}

struct QueueState {
    items: VecDeque<Item>,
    buffers: u32,
    bytes: u64,
    flushing: bool,
    limits: Limits,
    /// The consumer's waker (the task of the queue's context).
    waker: Option<Waker>,
}

impl QueueState {
    fn timestamp(item: &Item) -> Option<gst::ClockTime> {
        match item {
            Item::Buffer(b) => b.dts_or_pts(),
            Item::Event(_) => None,
        }
    }

    /// The time between the oldest and the newest timestamped buffer.
    fn level_time(&self) -> gst::ClockTime {
        let first = self.items.iter().find_map(Self::timestamp);
        let last = self.items.iter().rev().find_map(Self::timestamp);
        match (first, last) {
            (Some(first), Some(last)) => last.saturating_sub(first),
            _ => gst::ClockTime::ZERO,
        }
    }

    fn is_full(&self) -> bool {
        let l = self.limits;
        (l.buffers != 0 && self.buffers >= l.buffers)
            || (l.bytes != 0 && self.bytes >= u64::from(l.bytes))
            || (!l.time.is_zero() && self.level_time() >= l.time)
    }
}

/// A bounded queue from any thread to one consumer task on a context.
///
/// A producer off a context blocks while the queue is full (GStreamer's
/// `queue` does the same); a producer on a context's thread must not block
/// that thread, so a full queue drops its buffer. Events are never
/// dropped. A flushing queue refuses buffers and drops what it holds.
pub(crate) struct DataQueue {
    state: Mutex<QueueState>,
    not_full: Condvar,
}

impl DataQueue {
    pub(crate) fn new(limits: Limits) -> DataQueue {
        DataQueue {
            state: Mutex::new(QueueState {
                items: VecDeque::new(),
                buffers: 0,
                bytes: 0,
                flushing: true,
                limits,
                waker: None,
            }),
            not_full: Condvar::new(),
        }
    }

    fn lock(&self) -> MutexGuard<'_, QueueState> {
        // No code that can panic runs under the lock but VecDeque growth.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    pub(crate) fn set_limits(&self, limits: Limits) {
        self.lock().limits = limits;
        self.not_full.notify_all();
    }

    /// Queues a buffer (waiting for room, see the type docs).
    pub(crate) fn push_buffer(&self, buffer: gst::Buffer) -> Result<(), PushError> {
        let mut state = self.lock();
        let mut on_context = None;
        while !state.flushing && state.is_full() {
            if *on_context.get_or_insert_with(|| Context::current().is_some()) {
                return Err(PushError::Dropped);
            }
            state = self.not_full.wait(state).unwrap_or_else(|e| e.into_inner());
        }
        if state.flushing {
            return Err(PushError::Flushing);
        }
        state.buffers += 1;
        state.bytes += buffer.size() as u64;
        state.items.push_back(Item::Buffer(buffer));
        Self::wake(state);
        Ok(())
    }

    /// Queues a serialized event behind the buffers; refused (`false`)
    /// while flushing.
    pub(crate) fn push_event(&self, event: gst::Event) -> bool {
        let mut state = self.lock();
        if state.flushing {
            return false;
        }
        state.items.push_back(Item::Event(event));
        Self::wake(state);
        true
    }

    fn wake(mut state: MutexGuard<'_, QueueState>) {
        let waker = state.waker.take();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    /// The next item, or pending until one is queued.
    pub(crate) fn poll_pop(&self, cx: &mut TaskCx<'_>) -> Poll<Item> {
        let mut state = self.lock();
        match state.items.pop_front() {
            Some(item) => {
                if let Item::Buffer(b) = &item {
                    state.buffers -= 1;
                    state.bytes -= b.size() as u64;
                }
                drop(state);
                self.not_full.notify_one();
                Poll::Ready(item)
            }
            None => {
                if !state
                    .waker
                    .as_ref()
                    .is_some_and(|w| w.will_wake(cx.waker()))
                {
                    state.waker = Some(cx.waker().clone());
                }
                Poll::Pending
            }
        }
    }

    /// Starts (`true`: drops everything queued, refuses new buffers and
    /// releases blocked producers) or ends a flush.
    pub(crate) fn set_flushing(&self, flushing: bool) {
        let dropped = {
            let mut state = self.lock();
            state.flushing = flushing;
            state.buffers = 0;
            state.bytes = 0;
            std::mem::take(&mut state.items)
        };
        self.not_full.notify_all();
        // Buffers and events are released outside the lock.
        drop(dropped);
    }

    /// Current fill level: (buffers, bytes, time).
    pub(crate) fn level(&self) -> (u32, u64, gst::ClockTime) {
        let state = self.lock();
        (state.buffers, state.bytes, state.level_time())
    }
}

/// Whether pushing to `peer` (the element downstream) may block the
/// context's thread: it is not in PLAYING, with no state change pending.
///
/// A sink left at `async=true` takes the first buffer of a live pipeline
/// as its preroll and holds the pushing thread until every sink of the
/// pipeline has prerolled and the pipeline is PLAYING; on a context shared
/// by N sources, the first such push would keep the other N-1 from ever
/// prerolling. The same holds in PAUSED, where a sink prerolls again.
pub(crate) fn peer_may_block(peer: Option<&gst::Element>) -> bool {
    let Some(peer) = peer else {
        return false;
    };
    let (_, current, pending) = peer.state(gst::ClockTime::ZERO);
    current != gst::State::Playing || pending != gst::State::VoidPending
}

/// The element downstream of `pad` (its peer's parent), if linked.
pub(crate) fn peer_element(pad: &gst::Pad) -> Option<gst::Element> {
    pad.peer().and_then(|peer| peer.parent_element())
}

/// Pushes `buffer` on `pad`, from a short-lived thread of its own when
/// `peer_may_block` (see there): the context's thread awaits the result
/// instead of blocking in a downstream preroll. Buffers stay in order
/// because the caller awaits each push.
pub(crate) async fn push_buffer(
    pad: &gst::Pad,
    peer: Option<&gst::Element>,
    buffer: gst::Buffer,
) -> Result<gst::FlowSuccess, gst::FlowError> {
    if !peer_may_block(peer) {
        return pad.push(buffer);
    }
    struct Slot {
        result: Mutex<Option<Result<gst::FlowSuccess, gst::FlowError>>>,
        waker: Mutex<Option<Waker>>,
    }
    let slot = std::sync::Arc::new(Slot {
        result: Mutex::new(None),
        waker: Mutex::new(None),
    });
    let (thread_slot, thread_pad) = (slot.clone(), pad.clone());
    // The buffer comes back if the thread cannot start (then it is pushed
    // here, as without a helper).
    let buffer = std::sync::Arc::new(Mutex::new(Some(buffer)));
    let thread_buffer = buffer.clone();
    let spawned = std::thread::Builder::new()
        .name("tempo-preroll".into())
        .spawn(move || {
            let buffer = thread_buffer.lock().unwrap().take();
            let result = match buffer {
                Some(buffer) => thread_pad.push(buffer),
                None => Err(gst::FlowError::Error),
            };
            *thread_slot.result.lock().unwrap() = Some(result);
            if let Some(waker) = thread_slot.waker.lock().unwrap().take() {
                waker.wake();
            }
        });
    let Ok(thread) = spawned else {
        let buffer = buffer.lock().unwrap().take().expect("thread did not start");
        return pad.push(buffer);
    };
    let result = std::future::poll_fn(|cx| {
        if let Some(result) = slot.result.lock().unwrap().take() {
            return Poll::Ready(result);
        }
        *slot.waker.lock().unwrap() = Some(cx.waker().clone());
        // Stored before this second look: a result sent in between is seen.
        match slot.result.lock().unwrap().take() {
            Some(result) => Poll::Ready(result),
            None => Poll::Pending,
        }
    })
    .await;
    // The thread has sent its result and is exiting: no thread outlives
    // the push.
    let _ = thread.join();
    result
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;
    use std::task::Waker;

    fn buffer(len: usize, pts_ms: u64) -> gst::Buffer {
        let mut b = gst::Buffer::with_size(len).unwrap();
        b.get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_mseconds(pts_ms));
        b
    }

    fn limits(buffers: u32, bytes: u32, time_ms: u64) -> Limits {
        Limits {
            buffers,
            bytes,
            time: gst::ClockTime::from_mseconds(time_ms),
        }
    }

    #[test]
    fn each_limit_makes_the_queue_full_and_a_pop_makes_room() {
        gst::init().unwrap();
        let cases = [
            (limits(2, 0, 0), [(10, 0), (10, 1)]),
            (limits(0, 100, 0), [(60, 0), (40, 1)]),
            (limits(0, 0, 20), [(10, 0), (10, 20)]),
        ];
        for (limits, pushes) in cases {
            let q = DataQueue::new(limits);
            q.set_flushing(false);
            let mut state = q.lock();
            for (len, pts) in pushes {
                assert!(!state.is_full(), "{limits:?} full too early");
                state.buffers += 1;
                state.bytes += len as u64;
                state.items.push_back(Item::Buffer(buffer(len, pts)));
            }
            assert!(state.is_full(), "{limits:?} not full");
            drop(state);
            let mut cx = TaskCx::from_waker(Waker::noop());
            assert!(q.poll_pop(&mut cx).is_ready());
            assert!(!q.lock().is_full(), "{limits:?} still full after a pop");
        }
    }

    #[test]
    fn a_flush_refuses_buffers_drops_the_queued_and_releases_a_blocked_producer() {
        gst::init().unwrap();
        let q = Arc::new(DataQueue::new(limits(1, 0, 0)));
        assert_eq!(q.push_buffer(buffer(1, 0)), Err(PushError::Flushing));
        q.set_flushing(false);
        q.push_buffer(buffer(1, 0)).unwrap();
        let producer = {
            let q = q.clone();
            // Blocks on the full queue until the flush.
            std::thread::spawn(move || q.push_buffer(buffer(1, 1)))
        };
        q.set_flushing(true);
        assert_eq!(producer.join().unwrap(), Err(PushError::Flushing));
        assert_eq!(q.level().0, 0);
        assert!(!q.push_event(gst::event::Eos::new()));
    }
}
