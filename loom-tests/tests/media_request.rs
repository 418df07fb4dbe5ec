//! Model: tempo-media's request/acknowledge protocol, a trigger racing the
//! loop's iteration.
//!
//! The core of `media/src/task.rs` and `media/src/machine.rs`, restated
//! over loom's primitives (tempo-media uses std's, so loom cannot explore
//! the crate itself): a requester pushes a trigger to the task's queue and
//! takes the state machine's waker under the same lock, then wakes it; the
//! state machine, running the `Started` loop, checks the queue before each
//! `try_next` poll (biased) and, finding it empty, stores its waker under
//! that lock before polling `try_next`. Then it answers through the
//! request's ack slot (result + waker under one lock, as `Ack` does).
//!
//! Whatever the interleaving, the request must be seen: a lost wake-up
//! leaves the state machine waiting on a `try_next` that never completes,
//! and loom reports a deadlock. The requester must get its answer the same
//! way.
//!
//! Mutation check: make the state machine store its waker in a second
//! critical section, after the one that found the queue empty (check,
//! unlock, lock, register), as a "cheaper" version might; loom then finds
//! the interleaving where the push and the waker take fall between the two
//! and reports the deadlock in `trigger_racing_a_waiting_try_next` and
//! `two_triggers_racing_the_loop` (checked when this model was written;
//! `trigger_racing_the_loop_iteration` survives it, because the check
//! after `handle_item` catches the request: that is why the model with a
//! waiting `try_next` exists).
#![cfg(loom)]

use std::collections::VecDeque;
use std::future::poll_fn;
use std::task::{Poll, Waker};

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
            core.waker.take()
        };
        if let Some(waker) = waker {
            waker.wake();
        }
        ack
    }

    /// `Shared::request_pending`: whether a request waits, registering the
    /// waker under the same lock if not.
    fn request_pending(&self, waker: &Waker) -> bool {
        let mut core = self.core.lock().unwrap();
        if core.queue.is_empty() {
            core.waker = Some(waker.clone());
            false
        } else {
            true
        }
    }

    /// `Shared::poll_request`: the next request, or `None` after
    /// registering the waker under the same lock.
    fn poll_request(&self, waker: &Waker) -> Option<Request> {
        let mut core = self.core.lock().unwrap();
        let request = core.queue.pop_front();
        if request.is_none() {
            core.waker = Some(waker.clone());
        }
        request
    }
}

/// The `Started` loop (`run_loop`) with a `try_next` that yields `items`
/// items, then waits forever (nothing else would ever wake it); then the
/// state machine answers every queued request (`step`). Returns the number
/// of items handled.
async fn machine(shared: &Shared, items: usize, requests: usize) -> usize {
    let mut handled = 0;
    loop {
        let next = poll_fn(|cx| {
            if shared.request_pending(cx.waker()) {
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
        let request = poll_fn(|cx| match shared.poll_request(cx.waker()) {
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
