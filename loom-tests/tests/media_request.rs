//! Model: tempo-media's request/acknowledge protocol, a trigger racing the
//! loop's iteration.
//!
//! The core of `media/src/task.rs` and `media/src/machine.rs`, restated
//! over loom's primitives (tempo-media uses std's, so loom cannot explore
//! the crate itself): a requester pushes a trigger to the task's queue,
//! raises the `pending` flag and clones the state machine's waker under
//! the same lock, then wakes it. The state machine stores its waker under
//! that lock only when it differs from the one it stored last (it keeps a
//! copy of its own to compare without the lock), then reads the flag
//! without the lock: before each `try_next` poll of the `Started` loop
//! (biased) and before popping a request when idle. Then it answers through
//! the request's ack slot (result + waker under one lock, as `Ack` does).
//!
//! Whatever the interleaving, the request must be seen: a lost wake-up
//! leaves the state machine waiting on a `try_next` that never completes,
//! and loom reports a deadlock. The requester must get its answer the same
//! way.
//!
//! Mutation checks (each made once when this model was written, and loom
//! reported the deadlock): read the flag *before* storing the waker (the
//! requester's whole critical section fits between the read and the store,
//! finds no waker, and the request waits for nobody:
//! `trigger_racing_a_waiting_try_next`, `two_triggers_racing_the_loop`);
//! let the requester take the waker instead of cloning it (the machine's
//! copy says "stored" while the core holds none: `two_triggers_racing_the_loop`);
//! skip the store when the machine already stored *a* waker, whatever its
//! identity (`a_changed_waker_is_stored_again`).
#![cfg(loom)]

use std::collections::VecDeque;
use std::future::poll_fn;
use std::task::{Poll, Waker};

use loom::sync::atomic::{AtomicBool, Ordering};
use loom::sync::{Arc, Mutex};
use loom::thread;
use tempo_loom_tests::block_on;

/// One request's answer: what `Ack`'s slot holds.
#[derive(Default)]
struct Slot {
    inner: Mutex<(Option<u8>, Option<Waker>)>,
}

impl Slot {
    fn answer(&self, value: u8) {
        let waker = {
            let mut inner = self.inner.lock().unwrap();
            inner.0 = Some(value);
            inner.1.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
    }

    async fn wait(&self) -> u8 {
        poll_fn(|cx| {
            let mut inner = self.inner.lock().unwrap();
            match inner.0 {
                Some(value) => Poll::Ready(value),
                None => {
                    inner.1 = Some(cx.waker().clone());
                    Poll::Pending
                }
            }
        })
        .await
    }
}

struct Request {
    trigger: u8,
    ack: Arc<Slot>,
}

#[derive(Default)]
struct Core {
    queue: VecDeque<Request>,
    waker: Option<Waker>,
}

#[derive(Default)]
struct Shared {
    /// `!core.queue.is_empty()`, written under the lock.
    pending: AtomicBool,
    core: Mutex<Core>,
}

impl Shared {
    /// `Shared::request` + `Shared::wake`.
    fn request(&self, trigger: u8) -> Arc<Slot> {
        let ack = Arc::new(Slot::default());
        let waker = {
            let mut core = self.core.lock().unwrap();
            core.queue.push_back(Request {
                trigger,
                ack: ack.clone(),
            });
            self.pending.store(true, Ordering::Release);
            core.waker.clone()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        ack
    }
}

/// `machine::Registered`: the waker the machine stored last.
#[derive(Default)]
struct Registered(Option<Waker>);

impl Registered {
    /// `Registered::request_pending`: store the waker if it changed (under
    /// the lock), then read the flag (without it).
    fn request_pending(&mut self, shared: &Shared, waker: &Waker) -> bool {
        if !self.0.as_ref().is_some_and(|w| w.will_wake(waker)) {
            shared.core.lock().unwrap().waker = Some(waker.clone());
            self.0 = Some(waker.clone());
        }
        shared.pending.load(Ordering::Acquire)
    }

    /// `Registered::poll_request`: the next request, or `None` with the
    /// waker stored.
    fn poll_request(&mut self, shared: &Shared, waker: &Waker) -> Option<Request> {
        if !self.request_pending(shared, waker) {
            return None;
        }
        let mut core = shared.core.lock().unwrap();
        let request = core.queue.pop_front();
        shared
            .pending
            .store(!core.queue.is_empty(), Ordering::Release);
        request
    }
}

/// The `Started` loop (`run_loop`) with a `try_next` that yields `items`
/// items, then waits forever (nothing else would ever wake it); then the
/// state machine answers every queued request (`step`). Returns the number
/// of items handled.
async fn machine(shared: &Shared, items: usize, requests: usize) -> usize {
    machine_with(shared, &mut Registered::default(), items, requests).await
}

/// [`machine`], with the waker copy `registered` left by earlier polls.
async fn machine_with(
    shared: &Shared,
    registered: &mut Registered,
    items: usize,
    requests: usize,
) -> usize {
    let mut handled = 0;
    loop {
        let next = poll_fn(|cx| {
            if registered.request_pending(shared, cx.waker()) {
                return Poll::Ready(None);
            }
            // try_next: ready `items` times, then pending for good.
            if handled < items {
                Poll::Ready(Some(()))
            } else {
                Poll::Pending
            }
        })
        .await;
        match next {
            Some(()) => handled += 1, // handle_item
            None => break,
        }
    }
    let mut answered = 0;
    while answered < requests {
        // Further requests may still be on their way: wait for them the way
        // the idle state machine does (`poll_request`).
        let request = poll_fn(|cx| match registered.poll_request(shared, cx.waker()) {
            Some(request) => Poll::Ready(request),
            None => Poll::Pending,
        })
        .await;
        request.ack.answer(request.trigger);
        answered += 1;
    }
    handled
}

/// A pause from another thread races the loop: with `items` items ready,
/// it lands between the queue check and `try_next`, during `handle_item`,
/// or while `try_next` waits; the loop always stops and the requester
/// always gets its answer.
fn pause_racing_the_loop(items: usize) {
    loom::model(move || {
        let shared = Arc::new(Shared::default());
        let requester = {
            let shared = shared.clone();
            thread::spawn(move || {
                let ack = shared.request(7);
                block_on(ack.wait())
            })
        };
        let handled = block_on(machine(&shared, items, 1));
        assert!(handled <= items);
        assert_eq!(requester.join().unwrap(), 7);
    });
}

/// `try_next` waits from its first poll: only the wake-up can end the loop.
#[test]
fn trigger_racing_a_waiting_try_next() {
    pause_racing_the_loop(0);
}

/// One item is ready: the trigger may also land during `handle_item`.
#[test]
fn trigger_racing_the_loop_iteration() {
    pause_racing_the_loop(1);
}

/// Two requesters on two threads race each other and the loop: both are
/// answered, each with its own trigger.
#[test]
fn two_triggers_racing_the_loop() {
    loom::model(|| {
        let shared = Arc::new(Shared::default());
        let requesters: Vec<_> = [1u8, 2]
            .into_iter()
            .map(|trigger| {
                let shared = shared.clone();
                thread::spawn(move || {
                    let ack = shared.request(trigger);
                    (trigger, block_on(ack.wait()))
                })
            })
            .collect();
        block_on(machine(&shared, 0, 2));
        for requester in requesters {
            let (asked, answered) = requester.join().unwrap();
            assert_eq!(asked, answered);
        }
    });
}

/// The machine was polled once under another waker (which goes away
/// unwoken: a no-op), then runs under its own: the changed waker must be
/// stored again, or the requester wakes the old one and the machine waits
/// forever.
#[test]
fn a_changed_waker_is_stored_again() {
    loom::model(|| {
        let shared = Arc::new(Shared::default());
        let mut registered = Registered::default();
        let first = registered.request_pending(&shared, Waker::noop());
        assert!(!first, "no request before the requester starts");
        let requester = {
            let shared = shared.clone();
            thread::spawn(move || {
                let ack = shared.request(3);
                block_on(ack.wait())
            })
        };
        block_on(machine_with(&shared, &mut registered, 0, 1));
        assert_eq!(requester.join().unwrap(), 3);
    });
}
