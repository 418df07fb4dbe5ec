//! A test element driven by commands, that reports every action and item
//! as an event, so that tests wait for events (in order) instead of time.
#![allow(dead_code)] // each test file uses part of it

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{mpsc, Arc};
use std::time::Duration;

use tempo::context::Context;
use tempo_media::{BoxError, FlowError, TaskImpl, TaskRef, Transition};
use tokio::sync::{mpsc as amsc, oneshot};

/// How long a test waits for an event or an ack before calling it a hang.
/// Never reached by a passing test; not a timing assertion.
pub const HANG: Duration = Duration::from_secs(20);

/// A context of its own for each test (tests run in parallel).
pub fn context(name: &str) -> Context {
    Context::acquire(name, Duration::from_millis(20)).unwrap()
}

/// What the test feeds `try_next` with.
pub enum Cmd {
    /// An item: `handle_item` reports `item N`.
    Item(u32),
    /// `handle_item` reports `hold begin`, waits for the gate, reports
    /// `hold end`.
    Hold(oneshot::Receiver<()>),
    /// `try_next` requests a pause and reports the ack's result.
    PauseFromTryNext,
    /// `handle_item` requests a flush start and reports the ack's result.
    FlushFromHandleItem,
    /// `try_next` fails with this.
    Fail(FlowError),
}

/// Options of the element.
#[derive(Default)]
pub struct Options {
    pub fail_prepare: bool,
    /// `flush_start` requests a flush stop (a request from inside an
    /// action).
    pub flush_stop_from_flush_start: bool,
}

pub struct Element {
    pub events: mpsc::Sender<String>,
    pub commands: amsc::UnboundedReceiver<Cmd>,
    pub task: Option<TaskRef>,
    pub options: Options,
    pub drops: Arc<AtomicUsize>,
}

/// The test's side of an [`Element`].
pub struct Probe {
    pub events: mpsc::Receiver<String>,
    pub commands: amsc::UnboundedSender<Cmd>,
    pub drops: Arc<AtomicUsize>,
}

pub fn element(task: Option<TaskRef>, options: Options) -> (Element, Probe) {
    let (events_tx, events) = mpsc::channel();
    let (commands, commands_rx) = amsc::unbounded_channel();
    let drops = Arc::new(AtomicUsize::new(0));
    (
        Element {
            events: events_tx,
            commands: commands_rx,
            task,
            options,
            drops: drops.clone(),
        },
        Probe {
            events,
            commands,
            drops,
        },
    )
}

impl Probe {
    /// Waits for the next event and checks it.
    #[track_caller]
    pub fn expect(&self, expected: &str) {
        let got = self.next();
        assert_eq!(got, expected);
    }

    /// The next event.
    #[track_caller]
    pub fn next(&self) -> String {
        self.events
            .recv_timeout(HANG)
            .expect("no event: the task is stuck")
    }

    pub fn send(&self, cmd: Cmd) {
        assert!(self.commands.send(cmd).is_ok(), "element gone");
    }

    /// No event is waiting now (without waiting for one).
    #[track_caller]
    pub fn expect_none(&self) {
        if let Ok(event) = self.events.try_recv() {
            panic!("unexpected event {event:?}");
        }
    }
}

impl Element {
    fn report(&self, event: impl Into<String>) {
        // The test may have stopped listening.
        let _ = self.events.send(event.into());
    }
}

pub fn describe(result: &Result<Transition, tempo_media::TransitionError>) -> String {
    match result {
        Ok(Transition::NotWaiting { trigger }) => format!("{trigger:?} not waiting"),
        Ok(other) => format!("{other:?}"),
        Err(e) => format!("error {e}"),
    }
}

impl TaskImpl for Element {
    type Item = Cmd;

    async fn prepare(&mut self) -> Result<(), BoxError> {
        self.report("prepare");
        if self.options.fail_prepare {
            return Err("no such device".into());
        }
        Ok(())
    }

    async fn unprepare(&mut self) {
        self.report("unprepare");
    }

    async fn start(&mut self) -> Result<(), BoxError> {
        self.report("start");
        Ok(())
    }

    async fn try_next(&mut self) -> Result<Cmd, FlowError> {
        match self.commands.recv().await {
            Some(Cmd::PauseFromTryNext) => {
                let task = self.task.clone().expect("element without its TaskRef");
                let result = task.pause().await;
                self.report(format!("try_next requested pause: {}", describe(&result)));
                Ok(Cmd::PauseFromTryNext)
            }
            Some(Cmd::Fail(error)) => Err(error),
            Some(cmd) => Ok(cmd),
            None => Err(FlowError::Eos),
        }
    }

    async fn handle_item(&mut self, cmd: Cmd) -> Result<(), FlowError> {
        match cmd {
            Cmd::Item(n) => self.report(format!("item {n}")),
            Cmd::Hold(gate) => {
                self.report("hold begin");
                let _ = gate.await;
                self.report("hold end");
            }
            Cmd::FlushFromHandleItem => {
                let task = self.task.clone().expect("element without its TaskRef");
                let result = task.flush_start().await;
                self.report(format!(
                    "handle_item requested flush: {}",
                    describe(&result)
                ));
            }
            Cmd::PauseFromTryNext => self.report("item after pause request"),
            Cmd::Fail(_) => unreachable!("failed in try_next"),
        }
        Ok(())
    }

    async fn pause(&mut self) -> Result<(), BoxError> {
        self.report("pause");
        Ok(())
    }

    async fn flush_start(&mut self) -> Result<(), BoxError> {
        self.report("flush_start");
        if self.options.flush_stop_from_flush_start {
            let task = self.task.clone().expect("element without its TaskRef");
            let result = task.flush_stop().await;
            self.report(format!(
                "flush_start requested flush_stop: {}",
                describe(&result)
            ));
        }
        Ok(())
    }

    async fn flush_stop(&mut self) -> Result<(), BoxError> {
        self.report("flush_stop");
        Ok(())
    }

    async fn stop(&mut self) -> Result<(), BoxError> {
        self.report("stop");
        Ok(())
    }
}

impl Drop for Element {
    fn drop(&mut self) {
        self.drops.fetch_add(1, Ordering::SeqCst);
        self.report("dropped");
    }
}
