//! The task lifecycle of a media runtime on Tempo.
//!
//! A media element (a UDP source, a decoder, an audio sink) runs as a
//! [`Task`] on a [`Context`](tempo::context::Context), the named thread it
//! shares with thousands of other elements. The application (or another
//! element) moves it through the lifecycle GStreamer's thread-sharing
//! elements have: prepare, start, pause, flush (start, then stop), stop,
//! unprepare. This crate gives that lifecycle, with:
//!
//! * one [transition table](transition::transition), in one place, that says
//!   what every trigger does in every state;
//! * requests from any thread, each answered through an [`Ack`]: completed
//!   (from -> to), skipped (in which state), or failed (with the error);
//! * no deadlock from inside a context: an `Ack` awaited by the task's own
//!   actions or loop resolves at once ([`Transition::NotWaiting`]), and
//!   [`Ack::wait`] never blocks a context thread;
//! * no tick of delay, both ways: a request from another thread unparks
//!   the target's context ([`Handle::unpark`](tempo::runtime::Handle::unpark)),
//!   and the answer unparks the runtime the requester awaits it on, so
//!   neither waits for a throttling tick (see [what cuts a sleep
//!   short](#what-cuts-a-sleep-short));
//! * requests take effect in the order they were made, a prepare made
//!   while an unprepare is on its way included;
//! * cancellation where it is safe: pause, flush start and stop cancel a
//!   pending [`try_next`](TaskImpl::try_next) at its await point;
//!   [`handle_item`](TaskImpl::handle_item) always runs to completion.
//!
//! # Writing an element
//!
//! An element implements [`TaskImpl`]: `try_next` produces the next item
//! (here, a tick every 5 ms), `handle_item` handles it (here, sends it
//! downstream on a channel); the other methods are the transitions'
//! actions, all optional. `flush_start` drops in-flight data.
//!
//! ```
//! use std::sync::mpsc;
//! use std::time::Duration;
//!
//! use tempo::context::Context;
//! use tempo_media::{BoxError, FlowError, Task, TaskImpl, TaskState, Transition};
//!
//! /// A source that counts, one buffer per period.
//! struct Counter {
//!     period: Duration,
//!     next: u64,
//!     /// Produced but not pushed yet: what a flush drops.
//!     pending: Option<u64>,
//!     downstream: mpsc::Sender<u64>,
//! }
//!
//! impl TaskImpl for Counter {
//!     type Item = u64;
//!
//!     async fn prepare(&mut self) -> Result<(), BoxError> {
//!         // Open sockets, devices... here there is nothing to open.
//!         Ok(())
//!     }
//!
//!     async fn try_next(&mut self) -> Result<u64, FlowError> {
//!         // Cancelled here by pause, flush and stop: nothing is lost.
//!         tempo::time::sleep(self.period).await;
//!         self.next += 1;
//!         Ok(self.next)
//!     }
//!
//!     async fn handle_item(&mut self, n: u64) -> Result<(), FlowError> {
//!         self.pending = Some(n);
//!         // Runs to completion: a stop requested now waits for this.
//!         let sent = self.downstream.send(n);
//!         self.pending = None;
//!         // Downstream gone: end of stream, the task stops.
//!         sent.map_err(|_| FlowError::Eos)
//!     }
//!
//!     async fn flush_start(&mut self) -> Result<(), BoxError> {
//!         self.pending = None;
//!         Ok(())
//!     }
//! }
//!
//! let context = Context::acquire("doc-counter", Duration::from_millis(20))?;
//! let (tx, rx) = mpsc::channel();
//! let element = Counter { period: Duration::from_millis(5), next: 0, pending: None, downstream: tx };
//!
//! // From the application's thread: each request is acknowledged.
//! let task = Task::new();
//! let timeout = Duration::from_secs(5);
//! task.prepare(element, context).wait(timeout)?;
//! let started = task.start().wait(timeout)?;
//! assert_eq!(
//!     started,
//!     Transition::Complete {
//!         trigger: tempo_media::Trigger::Start,
//!         from: TaskState::Prepared,
//!         to: TaskState::Started,
//!     }
//! );
//! assert_eq!(rx.recv()?, 1);
//! assert_eq!(rx.recv()?, 2);
//!
//! // A flush drops in-flight data and restarts the loop.
//! task.flush_start().wait(timeout)?;
//! assert_eq!(task.state(), TaskState::Flushing);
//! task.flush_stop().wait(timeout)?;
//! assert_eq!(task.state(), TaskState::Started);
//!
//! task.stop().wait(timeout)?;
//! task.unprepare().wait(timeout)?;
//! // The element was dropped: downstream sees the end.
//! let rest: Vec<u64> = rx.iter().collect();
//! assert!(rest.windows(2).all(|w| w[1] == w[0] + 1));
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! From a task on a context, `.await` the [`Ack`] instead of waiting:
//!
//! ```
//! # use std::time::Duration;
//! # use tempo::context::Context;
//! # use tempo_media::{FlowError, Task, TaskImpl, TaskState};
//! # struct Idle;
//! # impl TaskImpl for Idle {
//! #     type Item = ();
//! #     async fn try_next(&mut self) -> Result<(), FlowError> { std::future::pending().await }
//! #     async fn handle_item(&mut self, _: ()) -> Result<(), FlowError> { Ok(()) }
//! # }
//! let context = Context::acquire("doc-await", Duration::from_millis(20))?;
//! let task = Task::new();
//! task.prepare(Idle, context.clone()).wait(Duration::from_secs(5))?;
//! let task_ref = task.task_ref();
//! // Another task of the same context starts it, and waits without
//! // blocking the context's thread.
//! let state = context.block_on(async move {
//!     task_ref.start().await.unwrap();
//!     task_ref.state()
//! });
//! assert_eq!(state, TaskState::Started);
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! # Pushing downstream
//!
//! The example pushes on a `std` channel to reach the application's
//! thread. Between two elements of a context, [`channel`](fn@channel) is the cheap
//! push: bounded (back-pressure on the upstream element's `handle_item`),
//! single-producer, everything behind one uncontended lock in one
//! allocation plus its ring, so that at thousands of streams a push
//! touches few cold cache lines. A ready `send` or `recv` spends the
//! cooperative budget like any Tempo resource.
//!
//! # What cuts a sleep short
//!
//! A throttled context sleeps between ticks, and what other threads send
//! it meanwhile waits for the next tick: that batching is what throttling
//! is for. Control does not wait: lifecycle requests and their answers
//! unpark the context they are for. Data does: a [`channel`](fn@channel)
//! item, a socket's readiness, any ordinary wake from another thread is
//! taken at the next tick. A sender that wants a message of its own taken
//! at once (a rare, urgent one) calls [`Handle::unpark`](tempo::runtime::Handle::unpark)
//! on the receiver's context after sending, or spawns the work there with
//! [`Handle::spawn_and_unpark`](tempo::runtime::Handle::spawn_and_unpark).
//!
//! # Flushing a socket
//!
//! `flush_start` drops what the element holds. A datagram socket holds
//! nothing itself: what the element has not received is still in the
//! kernel's queue, as with any socket (and as threadshare's `udpsrc`
//! leaves it).
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

#[cfg(loom)]
#[doc(hidden)]
pub mod __loom;
mod ack;
pub mod channel;
mod machine;
mod shared;
mod sync;
mod task;
mod task_impl;
pub mod transition;

pub use ack::{Ack, BoxError, Transition, TransitionError, TransitionResult};
pub use channel::channel;
pub use task::{Task, TaskRef};
pub use task_impl::{default_loop_trigger, FlowError, TaskImpl};
pub use transition::{TaskState, Trigger};
