//! Model: the I/O readiness protocol of `tempo_io`'s registrations
//! (`ScheduledIo`): the driver ORs an event's readiness in and takes the
//! wakers, while a task that got `WouldBlock` clears the readiness it saw
//! (checked against the event sequence number `event_seq`) and stores its waker. No edge may be lost: a task that
//! ends up `Pending` after data arrived must be woken.
#![cfg(loom)]

use std::sync::Arc as StdArc;
use std::task::{Context, Poll, Wake, Waker};

use loom::sync::atomic::{AtomicBool, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};
use loom::thread;
use tempo_io::loom_model::{Direction, Ready, ScheduledIo};

/// A waker that records that it was woken.
struct Flag(AtomicBool);

impl Wake for Flag {
    fn wake(self: StdArc<Self>) {
        self.0.store(true, SeqCst);
    }
}

/// How a task's receive attempt ended.
enum Outcome {
    /// The "syscall" found the datagram.
    Received,
    /// `WouldBlock`, readiness cleared, waker stored.
    Pending,
}

/// The socket's receive queue is a `Mutex<bool>` (is a datagram queued?),
/// not an `AtomicBool`: loom 0.7.3 loses a `store(true)` that follows a
/// `swap(false)` on `false` in modification order (a two-line model shows
/// it), which made an earlier version of this model fail spuriously.
///
/// One receive poll, as `Registration::poll_io` does it: snapshot, syscall,
/// on `WouldBlock` clear (checked against the event sequence number `event_seq`) and `poll_ready`; a new event makes
/// it retry (bounded here).
fn receive(io: &ScheduledIo, queued: &Mutex<bool>, cx: &mut Context<'_>) -> Outcome {
    receive_loop(io, queued, None, cx)
}

/// The loop of [`receive`]; with `drained` (a throttled receive), the "syscall"
/// is skipped while the drained knowledge holds for the snapshot, and a
/// syscall that finds the queue empty records it.
fn receive_loop(
    io: &ScheduledIo,
    queued: &Mutex<bool>,
    drained: Option<&Drained>,
    cx: &mut Context<'_>,
) -> Outcome {
    for _ in 0..3 {
        let seen = io.snapshot();
        if !skips(drained, seen.event_seq())
            && std::mem::replace(&mut *queued.lock().unwrap(), false)
        {
            return Outcome::Received;
        }
        if let Some(drained) = drained {
            *drained.lock().unwrap() = Some(seen.event_seq());
        }
        io.clear_readiness(seen, Direction::Read);
        match io.poll_ready(cx, Direction::Read) {
            Poll::Pending => return Outcome::Pending,
            Poll::Ready(result) => {
                result.unwrap();
            }
        }
    }
    panic!("more retries than events");
}

/// The drained mark (`DrainedMark`, `readiness/registration.rs`), reduced to what the
/// operation loop reads: the event sequence number at which the last
/// receive found the socket drained.
type Drained = Mutex<Option<usize>>;

/// Whether a receive seeing `event_seq` skips its syscall.
fn skips(drained: Option<&Drained>, event_seq: usize) -> bool {
    drained.is_some_and(|d| *d.lock().unwrap() == Some(event_seq))
}

/// A thread where a datagram arrives: the kernel queues it, the driver
/// dispatches its readable event and wakes the wakers it took.
fn datagram_arrives(io: &Arc<ScheduledIo>, queued: &Arc<Mutex<bool>>) -> thread::JoinHandle<()> {
    let (io, queued) = (io.clone(), queued.clone());
    thread::spawn(move || {
        *queued.lock().unwrap() = true;
        io.set_readiness(Ready::READABLE);
        let mut wakers = Vec::new();
        io.take_wakers(Ready::READABLE, &mut wakers);
        wakers.into_iter().for_each(Waker::wake);
    })
}

/// A datagram arriving (readiness event) while the task handles the
/// `WouldBlock` of its previous receive: the task either receives it now
/// or is woken to receive it.
#[test]
fn event_racing_clear_after_would_block_is_not_lost() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let queued = Arc::new(Mutex::new(false));
        // An old event: readiness is set, but the socket is empty.
        io.set_readiness(Ready::READABLE);

        let driver = datagram_arrives(&io, &queued);

        let flag = StdArc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let outcome = receive(&io, &queued, &mut cx);
        driver.join().unwrap();

        match outcome {
            Outcome::Received => {}
            Outcome::Pending => {
                // Lost-edge check: the task must have been woken, and its
                // next poll must find the datagram.
                assert!(
                    flag.0.load(SeqCst),
                    "datagram arrived but the waiting task was never woken"
                );
                assert!(matches!(receive(&io, &queued, &mut cx), Outcome::Received));
            }
        }
    });
}

/// Two events and a writer: readiness of one direction never erases the
/// other's, and both wakers are taken by the event that concerns them.
#[test]
fn reader_and_writer_are_woken_independently() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let reader = StdArc::new(Flag(AtomicBool::new(false)));
        let writer = StdArc::new(Flag(AtomicBool::new(false)));
        let (rw, ww) = (Waker::from(reader.clone()), Waker::from(writer.clone()));
        assert!(io
            .poll_ready(&mut Context::from_waker(&rw), Direction::Read)
            .is_pending());

        let driver = {
            let io = io.clone();
            thread::spawn(move || {
                io.set_readiness(Ready::WRITABLE);
                let mut wakers = Vec::new();
                io.take_wakers(Ready::WRITABLE, &mut wakers);
                wakers.into_iter().for_each(Waker::wake);
            })
        };
        let writable = io.poll_ready(&mut Context::from_waker(&ww), Direction::Write);
        driver.join().unwrap();
        assert!(
            writable.is_ready() || writer.0.load(SeqCst),
            "writer lost its edge"
        );
        assert!(!reader.0.load(SeqCst), "a write event woke the reader");
    });
}

/// One receive poll as `Registration::poll_receive_as` makes it with
/// a drained mark: if the receive would skip its syscall (drained at the
/// current event), wait at once (store the waker, re-check) and return
/// `Pending` unless the re-check finds an event; otherwise (or then) the
/// loop of [`receive_loop`] with the drained knowledge.
fn receive_skipping(
    io: &ScheduledIo,
    queued: &Mutex<bool>,
    drained: &Drained,
    cx: &mut Context<'_>,
) -> Outcome {
    if skips(Some(drained), io.snapshot().event_seq())
        && io.poll_ready(cx, Direction::Read).is_pending()
    {
        return Outcome::Pending;
    }
    receive_loop(io, queued, Some(drained), cx)
}

/// A datagram arriving (and its event dispatched) while a receive that
/// knows the socket drained takes the shortcut (waits without the budget
/// or the operation): the receive either gets it now or is woken for it.
/// The shortcut relies on the re-check after storing the waker; without it
/// (returning `Pending` right after the store) this model fails.
#[test]
fn drained_receive_waiting_at_once_does_not_lose_an_event() {
    loom::model(|| {
        let io = Arc::new(ScheduledIo::new());
        let queued = Arc::new(Mutex::new(false));
        let drained: Arc<Drained> = Arc::new(Mutex::new(None));
        // The last receive found the socket drained at the current event
        // and cleared the readiness it saw.
        io.set_readiness(Ready::READABLE);
        let seen = io.snapshot();
        *drained.lock().unwrap() = Some(seen.event_seq());
        io.clear_readiness(seen, Direction::Read);

        let driver = datagram_arrives(&io, &queued);

        let flag = StdArc::new(Flag(AtomicBool::new(false)));
        let waker = Waker::from(flag.clone());
        let mut cx = Context::from_waker(&waker);
        let outcome = receive_skipping(&io, &queued, &drained, &mut cx);
        driver.join().unwrap();

        if let Outcome::Pending = outcome {
            assert!(
                flag.0.load(SeqCst),
                "datagram arrived but the drained receive was never woken"
            );
            assert!(matches!(
                receive_skipping(&io, &queued, &drained, &mut cx),
                Outcome::Received
            ));
        }
    });
}
