//! The task lifecycle of a media runtime on Tempo: a media element runs as
//! a [`Task`] on a [`Context`](tempo::context::Context), a thread it shares
//! with thousands of others, and is moved through GStreamer's thread-sharing
//! lifecycle (prepare, start, pause, flush, stop, unprepare) by requests from
//! any thread, each answered through an [`Ack`]. What every trigger does in
//! every state is the one [transition table](transition::transition); the
//! guarantees (ordering, no deadlock from inside a context, cancellation
//! only at `try_next`'s await point) are in `docs/media.md`.
//!
//! # Writing an element
//!
//! An element implements [`TaskImpl`]: `try_next` produces the next item,
//! `handle_item` handles it; the transitions' actions are optional. From a
//! task on a context, `.await` the [`Ack`] instead of waiting on it.
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
//!         Ok(()) // open sockets, devices...
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
//! Between two elements of a context, [`channel`](fn@channel) is the cheap
//! bounded push. `flush_start` drops what the element holds; a socket's
//! unreceived datagrams stay in the kernel's queue (as with threadshare).
//!
//! # What cuts a sleep short
//!
//! A throttled context sleeps between ticks, and what other threads send it
//! meanwhile waits for the next tick: that batching is what throttling is
//! for. Control does not wait: lifecycle requests and their answers unpark
//! the context they are for. Data does: a [`channel`](fn@channel) item, a
//! socket's readiness, any ordinary wake from another thread. A sender that
//! wants an urgent message taken at once calls
//! [`Handle::unpark`](tempo::runtime::Handle::unpark) on the receiver's
//! context after sending, or spawns the work there with
//! [`Handle::spawn_and_unpark`](tempo::runtime::Handle::spawn_and_unpark).
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
