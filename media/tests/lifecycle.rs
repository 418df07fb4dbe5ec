//! The lifecycle scenarios: the nominal path, pauses, flushes, errors,
//! drops and requests from inside a context, each on a context of its own.
//! Tests wait for the element's events and for acks, in order; none
//! depends on time or on which thread runs first.

mod support;

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::Duration;

use support::{context, element, Cmd, Options, HANG};
use tempo_media::{
    Ack, BoxError, FlowError, Task, TaskImpl, TaskState, Transition, TransitionError, Trigger,
};
use tokio::sync::oneshot;

use TaskState::*;

#[track_caller]
fn wait(ack: Ack) -> Transition {
    match ack.wait(HANG) {
        Ok(t) => t,
        Err(e) => panic!("transition failed: {e}"),
    }
}

fn complete(trigger: Trigger, from: TaskState, to: TaskState) -> Transition {
    Transition::Complete { trigger, from, to }
}

fn skipped(trigger: Trigger, state: TaskState) -> Transition {
    Transition::Skipped { trigger, state }
}

#[test]
fn nominal_lifecycle() {
    let ctx = context("media-nominal");
    let task = Task::new();
    let (elem, probe) = element(None, Options::default());

    assert_eq!(task.state(), Unprepared);
    assert_eq!(
        wait(task.prepare(elem, ctx)),
        complete(Trigger::Prepare, Unprepared, Prepared)
    );
    probe.expect("prepare");
    assert_eq!(task.state(), Prepared);

    assert_eq!(
        wait(task.start()),
        complete(Trigger::Start, Prepared, Started)
    );
    probe.expect("start");
    probe.send(Cmd::Item(1));
    probe.send(Cmd::Item(2));
    probe.expect("item 1");
    probe.expect("item 2");

    assert_eq!(
        wait(task.pause()),
        complete(Trigger::Pause, Started, Paused)
    );
    probe.expect("pause");
    // Paused: an item sent now waits (the cancelled try_next lost nothing).
    probe.send(Cmd::Item(3));
    assert_eq!(wait(task.pause()), skipped(Trigger::Pause, Paused));
    probe.expect_none();

    assert_eq!(
        wait(task.start()),
        complete(Trigger::Start, Paused, Started)
    );
    probe.expect("start");
    probe.expect("item 3");
    assert_eq!(wait(task.start()), skipped(Trigger::Start, Started));

    assert_eq!(wait(task.stop()), complete(Trigger::Stop, Started, Stopped));
    probe.expect("stop");
    assert_eq!(
        wait(task.unprepare()),
        complete(Trigger::Unprepare, Stopped, Unprepared)
    );
    probe.expect("unprepare");
    // The element is dropped before the unprepare is acknowledged.
    assert_eq!(probe.drops.load(Ordering::SeqCst), 1);
    probe.expect("dropped");
    assert_eq!(task.state(), Unprepared);
    // Nothing to do any more.
    assert!(matches!(
        task.start().wait(HANG),
        Err(TransitionError::Refused {
            trigger: Trigger::Start,
            state: Unprepared
        })
    ));
}

#[test]
fn unprepare_while_running_is_refused() {
    let ctx = context("media-unprepare-running");
    let task = Task::new();
    let (elem, probe) = element(None, Options::default());
    wait(task.prepare(elem, ctx));
    wait(task.start());
    assert!(matches!(
        task.unprepare().wait(HANG),
        Err(TransitionError::Refused {
            trigger: Trigger::Unprepare,
            state: Started
        })
    ));
    probe.send(Cmd::Item(7));
    probe.expect("prepare");
    probe.expect("start");
    probe.expect("item 7");
}

/// A flush started and stopped by a task on another context, awaiting the
/// acks.
#[test]
fn flush_from_another_context() {
    let ctx = context("media-flush-other-a");
    let other = context("media-flush-other-b");
    let task = Task::new();
    let (elem, probe) = element(None, Options::default());
    wait(task.prepare(elem, ctx));
    wait(task.start());
    probe.send(Cmd::Item(1));
    probe.expect("prepare");
    probe.expect("start");
    probe.expect("item 1");

    let task_ref = task.task_ref();
    let (flush_start, flush_stop) = other.block_on(async move {
        let a = task_ref.flush_start().await.unwrap();
        let b = task_ref.flush_stop().await.unwrap();
        (a, b)
    });
    assert_eq!(
        flush_start,
        complete(Trigger::FlushStart, Started, Flushing)
    );
    assert_eq!(flush_stop, complete(Trigger::FlushStop, Flushing, Started));
    probe.expect("flush_start");
    probe.expect("flush_stop");
    probe.expect("start");
    probe.send(Cmd::Item(2));
    probe.expect("item 2");
}

/// The same from another task of the task's own context: awaiting works
/// (the state machine is a task of its own), and a blocking wait there
/// does not block (it would stop the context).
#[test]
fn flush_from_the_same_context() {
    let ctx = context("media-flush-same");
    let task = Task::new();
    let (elem, probe) = element(None, Options::default());
    wait(task.prepare(elem, ctx.clone()));
    wait(task.start());

    let task_ref = task.task_ref();
    let (not_waiting, flush_start, flush_stop) = ctx.block_on(async move {
        // A blocking wait on the context's thread returns at once: the
        // request is queued, and the state machine cannot have run yet
        // (this task holds the thread).
        let not_waiting = task_ref.pause().wait(HANG).unwrap();
        let a = task_ref.flush_start().await.unwrap();
        let b = task_ref.flush_stop().await.unwrap();
        (not_waiting, a, b)
    });
    assert_eq!(
        not_waiting,
        Transition::NotWaiting {
            trigger: Trigger::Pause
        }
    );
    // The pause ran first: flushing a paused task keeps it paused.
    assert_eq!(
        flush_start,
        complete(Trigger::FlushStart, Paused, PausedFlushing)
    );
    assert_eq!(
        flush_stop,
        complete(Trigger::FlushStop, PausedFlushing, Paused)
    );
    for event in ["prepare", "start", "pause", "flush_start", "flush_stop"] {
        probe.expect(event);
    }
    assert_eq!(task.state(), Paused);
}

/// `handle_item` requests a flush start and awaits it: the ack resolves at
/// once (the state machine is busy running `handle_item`), and the flush
/// runs as soon as `handle_item` returns.
#[test]
fn flush_requested_by_the_loop() {
    let ctx = context("media-flush-loop");
    let task = Task::new();
    let (elem, probe) = element(Some(task.task_ref()), Options::default());
    wait(task.prepare(elem, ctx));
    wait(task.start());
    probe.send(Cmd::FlushFromHandleItem);
    // Never reached: the flush cancels the next try_next first.
    probe.send(Cmd::Item(1));
    probe.expect("prepare");
    probe.expect("start");
    probe.expect("handle_item requested flush: FlushStart not waiting");
    probe.expect("flush_start");
    // Queued after the loop's request: it sees the task flushing.
    assert_eq!(
        wait(task.flush_start()),
        skipped(Trigger::FlushStart, Flushing)
    );
    assert_eq!(
        wait(task.flush_stop()),
        complete(Trigger::FlushStop, Flushing, Started)
    );
    probe.expect("flush_stop");
    probe.expect("start");
    probe.expect("item 1");
}

/// `try_next` requests a pause and awaits it, then returns an item: the
/// item is handled (an item produced is never dropped by the loop), then
/// the task pauses.
#[test]
fn pause_requested_by_the_loop() {
    let ctx = context("media-pause-loop");
    let task = Task::new();
    let (elem, probe) = element(Some(task.task_ref()), Options::default());
    wait(task.prepare(elem, ctx));
    wait(task.start());
    probe.send(Cmd::PauseFromTryNext);
    probe.expect("prepare");
    probe.expect("start");
    probe.expect("try_next requested pause: Pause not waiting");
    probe.expect("item after pause request");
    probe.expect("pause");
    assert_eq!(wait(task.pause()), skipped(Trigger::Pause, Paused));
}

/// `flush_start` (an action) requests `flush_stop`: no deadlock, and the
/// flush stop runs right after, before any later request.
#[test]
fn transition_requested_from_inside_an_action() {
    let ctx = context("media-from-action");
    let task = Task::new();
    let options = Options {
        flush_stop_from_flush_start: true,
        ..Options::default()
    };
    let (elem, probe) = element(Some(task.task_ref()), options);
    wait(task.prepare(elem, ctx));
    wait(task.start());
    assert_eq!(
        wait(task.flush_start()),
        complete(Trigger::FlushStart, Started, Flushing)
    );
    // Queued after the action's own request.
    assert_eq!(wait(task.start()), skipped(Trigger::Start, Started));
    for event in [
        "prepare",
        "start",
        "flush_start",
        "flush_start requested flush_stop: FlushStop not waiting",
        "flush_stop",
        "start",
    ] {
        probe.expect(event);
    }
}

/// Start and flush start from two threads at once, on a paused task:
/// whichever runs first, the task ends flushing, and flush stop restarts
/// it.
#[test]
fn flush_racing_start() {
    let ctx = context("media-flush-race");
    for round in 0..20 {
        let task = Task::new();
        let (elem, probe) = element(None, Options::default());
        wait(task.prepare(elem, ctx.clone()));
        wait(task.pause());
        let starter = task.task_ref();
        let flusher = task.task_ref();
        let start = std::thread::spawn(move || wait(starter.start()));
        let flush = std::thread::spawn(move || wait(flusher.flush_start()));
        let (start, flush) = (start.join().unwrap(), flush.join().unwrap());
        let start_first = (
            complete(Trigger::Start, Paused, Started),
            complete(Trigger::FlushStart, Started, Flushing),
        );
        let flush_first = (
            complete(Trigger::Start, PausedFlushing, Flushing),
            complete(Trigger::FlushStart, Paused, PausedFlushing),
        );
        assert!(
            (start, flush) == start_first || (start, flush) == flush_first,
            "round {round}: {start:?} {flush:?}"
        );
        assert_eq!(task.state(), Flushing);
        assert_eq!(
            wait(task.flush_stop()),
            complete(Trigger::FlushStop, Flushing, Started)
        );
        probe.send(Cmd::Item(round));
        loop {
            let event = probe.next();
            if event.starts_with("item") {
                assert_eq!(event, format!("item {round}"));
                break;
            }
        }
    }
}

/// An error in `prepare`: the requester gets it, the task goes to `Error`
/// (the default handler), refuses to start, and unprepares.
#[test]
fn error_in_prepare_then_unprepare() {
    let ctx = context("media-prepare-error");
    let task = Task::new();
    let options = Options {
        fail_prepare: true,
        ..Options::default()
    };
    let (elem, probe) = element(None, options);
    match task.prepare(elem, ctx).wait(HANG) {
        Err(TransitionError::Failed {
            trigger: Trigger::Prepare,
            state: Unprepared,
            error,
        }) => assert_eq!(error.to_string(), "no such device"),
        other => panic!("{other:?}"),
    }
    // The recovery trigger was queued before the answer.
    assert!(matches!(
        task.start().wait(HANG),
        Err(TransitionError::Refused {
            trigger: Trigger::Start,
            state: Error
        })
    ));
    assert_eq!(task.state(), Error);
    assert_eq!(
        wait(task.unprepare()),
        complete(Trigger::Unprepare, Error, Unprepared)
    );
    for event in ["prepare", "unprepare", "dropped"] {
        probe.expect(event);
    }
}

/// A loop error goes through `handle_loop_error`: end of stream stops the
/// task (the default).
#[test]
fn end_of_stream_stops_the_task() {
    let ctx = context("media-eos");
    let task = Task::new();
    let (elem, probe) = element(None, Options::default());
    wait(task.prepare(elem, ctx));
    wait(task.start());
    probe.send(Cmd::Fail(FlowError::Eos));
    for event in ["prepare", "start", "stop"] {
        probe.expect(event);
    }
    assert_eq!(wait(task.stop()), skipped(Trigger::Stop, Stopped));
}

/// A stop requested while `handle_item` runs waits for it to finish.
#[test]
fn stop_during_a_long_handle_item() {
    let ctx = context("media-stop-long");
    let task = Task::new();
    let (elem, probe) = element(None, Options::default());
    wait(task.prepare(elem, ctx));
    wait(task.start());
    let (open, gate) = oneshot::channel();
    probe.send(Cmd::Hold(gate));
    probe.expect("prepare");
    probe.expect("start");
    probe.expect("hold begin");
    let stop = task.stop();
    // handle_item holds the state machine: the stop cannot have run.
    assert_eq!(task.state(), Started);
    probe.expect_none();
    open.send(()).unwrap();
    assert_eq!(wait(stop), complete(Trigger::Stop, Started, Stopped));
    probe.expect("hold end");
    probe.expect("stop");
}

/// Dropping a started task stops and unprepares it on its context; the
/// element is dropped once and the context is released.
#[test]
fn dropping_a_started_task() {
    let ctx = context("media-drop-started");
    let weak = ctx.downgrade();
    let task = Task::new();
    let task_ref = task.task_ref();
    let (elem, probe) = element(None, Options::default());
    wait(task.prepare(elem, ctx.clone()));
    wait(task.start());
    probe.send(Cmd::Item(1));
    for event in ["prepare", "start", "item 1"] {
        probe.expect(event);
    }
    drop(task);
    for event in ["stop", "unprepare", "dropped"] {
        probe.expect(event);
    }
    // The state machine dropped the element, then detached and released the
    // context in the same poll; this runs after that poll.
    ctx.block_on(async {});
    assert_eq!(probe.drops.load(Ordering::SeqCst), 1);
    assert_eq!(task_ref.state(), Unprepared);
    assert!(matches!(
        task_ref.start().wait(HANG),
        Err(TransitionError::Refused {
            state: Unprepared,
            ..
        })
    ));
    drop(ctx);
    // Nothing else held the context: it stopped.
    assert!(weak.upgrade().is_none());
}

/// A source whose `try_next` awaits a timer: the first wait is short, the
/// second one long (pending when the pause comes, so it is cancelled), the
/// later ones short again.
struct Ticker {
    waits: Vec<Duration>,
    ticks: u32,
    events: std::sync::mpsc::Sender<String>,
}

/// Reports the cancellation of a pending `try_next`.
struct CancelGuard<'a>(Option<&'a std::sync::mpsc::Sender<String>>);

impl Drop for CancelGuard<'_> {
    fn drop(&mut self) {
        if let Some(events) = self.0 {
            let _ = events.send("try_next cancelled".into());
        }
    }
}

impl TaskImpl for Ticker {
    type Item = u32;

    async fn try_next(&mut self) -> Result<u32, FlowError> {
        let wait = if self.waits.is_empty() {
            Duration::from_millis(1)
        } else {
            self.waits.remove(0)
        };
        let _ = self.events.send(format!("waiting {wait:?}"));
        let mut guard = CancelGuard(Some(&self.events));
        tempo::time::sleep(wait).await;
        guard.0 = None;
        self.ticks += 1;
        Ok(self.ticks)
    }

    async fn handle_item(&mut self, tick: u32) -> Result<(), FlowError> {
        let _ = self.events.send(format!("tick {tick}"));
        Ok(())
    }

    async fn pause(&mut self) -> Result<(), BoxError> {
        let _ = self.events.send("pause".into());
        Ok(())
    }

    async fn stop(&mut self) -> Result<(), BoxError> {
        let _ = self.events.send("stop".into());
        Ok(())
    }
}

#[test]
fn timer_in_try_next_across_pause_and_start() {
    let ctx = context("media-timer");
    let (events_tx, events) = std::sync::mpsc::channel();
    let next = || events.recv_timeout(HANG).expect("stuck");
    let ticker = Ticker {
        waits: vec![Duration::from_millis(1), Duration::from_secs(3600)],
        ticks: 0,
        events: events_tx,
    };
    let task = Task::new();
    wait(task.prepare(ticker, ctx));
    wait(task.start());
    assert_eq!(next(), "waiting 1ms");
    assert_eq!(next(), "tick 1");
    assert_eq!(next(), "waiting 3600s");
    // The hour-long timer is pending: the pause cancels it.
    assert_eq!(
        wait(task.pause()),
        complete(Trigger::Pause, Started, Paused)
    );
    assert_eq!(next(), "try_next cancelled");
    assert_eq!(next(), "pause");
    // Restarted: a new timer, and the count goes on (no tick lost, none
    // doubled).
    assert_eq!(
        wait(task.start()),
        complete(Trigger::Start, Paused, Started)
    );
    assert_eq!(next(), "waiting 1ms");
    assert_eq!(next(), "tick 2");
    assert_eq!(next(), "waiting 1ms");
    assert_eq!(wait(task.stop()), complete(Trigger::Stop, Started, Stopped));
    // Ticks handled before the stop took effect (the 1 ms timer may fire
    // first): they go on counting from 3, each once.
    let ticks: Vec<String> = std::iter::from_fn(|| events.recv_timeout(HANG).ok())
        .take_while(|e| e != "stop")
        .filter(|e| e.starts_with("tick"))
        .collect();
    for (i, tick) in ticks.iter().enumerate() {
        assert_eq!(*tick, format!("tick {}", i + 3));
    }
}

/// An element that always has an item ready.
struct Busy {
    handled: Arc<AtomicU64>,
}

impl TaskImpl for Busy {
    type Item = ();

    async fn try_next(&mut self) -> Result<(), FlowError> {
        Ok(())
    }

    async fn handle_item(&mut self, _: ()) -> Result<(), FlowError> {
        self.handled.fetch_add(1, Ordering::Relaxed);
        Ok(())
    }
}

/// A task whose `try_next` is always ready does not starve the other tasks
/// of its context, and still obeys requests.
#[test]
fn a_busy_loop_shares_its_context() {
    let ctx = context("media-busy");
    let handled = Arc::new(AtomicU64::new(0));
    let task = Task::new();
    wait(task.prepare(
        Busy {
            handled: handled.clone(),
        },
        ctx.clone(),
    ));
    wait(task.start());
    // Another task of the same context gets to run.
    let (tx, rx) = std::sync::mpsc::channel();
    drop(ctx.spawn(async move { tx.send(()).unwrap() }));
    rx.recv_timeout(HANG)
        .expect("the busy loop starved its context");
    assert_eq!(wait(task.stop()), complete(Trigger::Stop, Started, Stopped));
    let after_stop = handled.load(Ordering::Relaxed);
    assert!(after_stop > 0);
    // Stopped: nothing is handled any more (checked after a round trip
    // through the context).
    ctx.block_on(async {});
    assert_eq!(handled.load(Ordering::Relaxed), after_stop);
}

/// Tasks sharing a context, all looping: each machine answers the requests
/// made to it, in any order, and never those of its neighbours.
#[test]
fn requests_to_neighbours_on_one_context_each_reach_their_own_task() {
    let ctx = context("media-neighbours");
    let tasks: Vec<(Task, Arc<AtomicU64>)> = (0..3)
        .map(|_| {
            let handled = Arc::new(AtomicU64::new(0));
            let task = Task::new();
            let busy = Busy {
                handled: handled.clone(),
            };
            wait(task.prepare(busy, ctx.clone()));
            wait(task.start());
            (task, handled)
        })
        .collect();
    let order = [1, 0, 2];
    for (n, &i) in order.iter().enumerate() {
        let (task, handled) = &tasks[i];
        assert_eq!(
            wait(task.pause()),
            complete(Trigger::Pause, Started, Paused)
        );
        // Paused: nothing more is handled (checked after a round trip).
        let paused_at = handled.load(Ordering::Relaxed);
        ctx.block_on(async {});
        assert_eq!(handled.load(Ordering::Relaxed), paused_at);
        for (j, (other, _)) in tasks.iter().enumerate() {
            let expected = if order[..=n].contains(&j) {
                Paused
            } else {
                Started
            };
            assert_eq!(other.state(), expected, "task {j} after pausing task {i}");
        }
    }
    for &i in order.iter().rev() {
        let task = &tasks[i].0;
        assert_eq!(
            wait(task.start()),
            complete(Trigger::Start, Paused, Started)
        );
    }
}
