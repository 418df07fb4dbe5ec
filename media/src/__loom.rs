//! The request protocol's real code, for the loom model
//! `loom-tests/tests/media_request.rs` only; not API.
//!
//! The model polls the state machine itself instead of spawning it on a
//! context (which loom cannot run); everything else is the library's.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex as StdMutex};

use tempo::runtime::Handle;

use crate::machine::{self, Detach};
pub use crate::shared::Mutant;
use crate::shared::{Link, Prepare, Shared};
use crate::task::marked;
use crate::{Ack, Task, TaskImpl};

/// A new, unprepared task, with `mutant` in its protocol.
pub fn task(mutant: Option<Mutant>) -> Task {
    let mut shared = Shared::new(crate::task::next_id());
    shared.mutant = mutant;
    Task::from_shared(shared)
}

/// The state machine's future, to be polled by the model.
pub type Machine = Pin<Box<dyn Future<Output = ()> + Send>>;

/// `Task::prepare` on the runtime of `handle` from this thread, returning
/// the state machine instead of spawning it.
///
/// # Panics
///
/// If `task` already has a state machine.
pub fn prepare_here<I: TaskImpl>(task: &Task, imp: I, handle: Handle) -> (Ack, Machine) {
    let slot: Arc<StdMutex<Option<Machine>>> = Arc::default();
    let put = slot.clone();
    let start = move |shared: Arc<Shared>| {
        let id = shared.id;
        let machine = marked(id, machine::run(Detach::new(shared), imp, ()));
        *put.lock().unwrap() = Some(Box::pin(machine));
    };
    let link = Link {
        handle,
        thread: std::thread::current().id(),
    };
    let ack = task.shared().prepare(Prepare {
        link,
        start: Box::new(start),
    });
    let machine = slot.lock().unwrap().take();
    (ack, machine.expect("the task already had a state machine"))
}
