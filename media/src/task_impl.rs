//! [`TaskImpl`]: the element's side of a task.
//!
//! Methods are written as `async fn`; the trait returns `impl Future +
//! Send`, not boxed futures, so an element pays no allocation per item.

use std::fmt;
use std::future::Future;

use crate::ack::BoxError;
use crate::transition::{TaskState, Trigger};

/// Why the loop could not produce or handle an item.
#[derive(Debug)]
pub enum FlowError {
    /// Downstream is flushing; the default handler flushes the task
    /// ([`Trigger::FlushStart`]).
    Flushing,
    /// End of stream; the default handler stops the task ([`Trigger::Stop`]).
    Eos,
    /// Anything else; the default handler moves the task to
    /// [`TaskState::Error`] ([`Trigger::Error`]).
    Error(BoxError),
}

impl fmt::Display for FlowError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            FlowError::Flushing => f.write_str("flushing"),
            FlowError::Eos => f.write_str("end of stream"),
            FlowError::Error(e) => write!(f, "flow error: {e}"),
        }
    }
}

impl std::error::Error for FlowError {}

/// What an element implements to run as a [`Task`](crate::Task).
///
/// Methods run on the task's context, one at a time, in the order the
/// transitions ask for. In the `Started` state the task loops
/// [`try_next`](Self::try_next) then [`handle_item`](Self::handle_item);
/// only `try_next` is ever cancelled (see `docs/media.md`). Every method but
/// those two has a default that does nothing. Example in the [crate docs](crate).
pub trait TaskImpl: Send + 'static {
    /// What `try_next` produces and `handle_item` consumes.
    type Item: Send + 'static;

    /// Acquire resources (sockets, devices), on
    /// [`Task::prepare`](crate::Task::prepare).
    fn prepare(&mut self) -> impl Future<Output = Result<(), BoxError>> + Send {
        async { Ok(()) }
    }

    /// Release them, on [`Task::unprepare`](crate::Task::unprepare) (and
    /// when the [`Task`](crate::Task) is dropped). Cannot fail.
    fn unprepare(&mut self) -> impl Future<Output = ()> + Send {
        async {}
    }

    /// The loop is about to run (start, or flush stop of a started task).
    fn start(&mut self) -> impl Future<Output = Result<(), BoxError>> + Send {
        async { Ok(()) }
    }

    /// Produces the next item: waits for a timer, a socket, a channel.
    /// Cancelled at its await point by pause, flush start and stop.
    fn try_next(&mut self) -> impl Future<Output = Result<Self::Item, FlowError>> + Send;

    /// Handles one item (pushes it downstream). Runs to completion.
    fn handle_item(
        &mut self,
        item: Self::Item,
    ) -> impl Future<Output = Result<(), FlowError>> + Send;

    /// The loop stopped running for a pause.
    fn pause(&mut self) -> impl Future<Output = Result<(), BoxError>> + Send {
        async { Ok(()) }
    }

    /// Drop in-flight data (queued buffers, a partially read frame).
    fn flush_start(&mut self) -> impl Future<Output = Result<(), BoxError>> + Send {
        async { Ok(()) }
    }

    /// The flush is over; for a started task, [`start`](Self::start) runs
    /// next.
    fn flush_stop(&mut self) -> impl Future<Output = Result<(), BoxError>> + Send {
        async { Ok(()) }
    }

    /// The loop stopped running for a stop.
    fn stop(&mut self) -> impl Future<Output = Result<(), BoxError>> + Send {
        async { Ok(()) }
    }

    /// `try_next` or `handle_item` returned `error`: returns the trigger to
    /// apply. The default: [`FlowError::Flushing`] -> flush start,
    /// [`FlowError::Eos`] -> stop, otherwise error.
    fn handle_loop_error(&mut self, error: FlowError) -> impl Future<Output = Trigger> + Send {
        async move { default_loop_trigger(&error) }
    }

    /// The action of `trigger`, run from `state`, returned `error`: returns
    /// the trigger to apply (default [`Trigger::Error`]); if that one's
    /// action fails too, the task goes to [`TaskState::Error`].
    fn handle_action_error(
        &mut self,
        trigger: Trigger,
        state: TaskState,
        error: &BoxError,
    ) -> impl Future<Output = Trigger> + Send {
        let _ = (trigger, state, error);
        async { Trigger::Error }
    }
}

/// The default of [`TaskImpl::handle_loop_error`].
pub fn default_loop_trigger(error: &FlowError) -> Trigger {
    match error {
        FlowError::Flushing => Trigger::FlushStart,
        FlowError::Eos => Trigger::Stop,
        FlowError::Error(_) => Trigger::Error,
    }
}
