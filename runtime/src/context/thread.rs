//! The context thread: its shared state ([`ContextInner`]); it builds its
//! runtime, `block_on`s a stop signal, and is stopped and joined by the
//! last strong reference's drop.

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, LazyLock, Weak};
use std::task::{Context as TaskContext, Poll, Waker};
use std::thread::{self, JoinHandle as ThreadJoinHandle, ThreadId};

use parking_lot::Mutex;

use super::builder::ContextBuilder;
use super::registry::Registry;
use crate::runtime::Handle;

tempo_park::scoped_thread_local! {
    /// The context whose thread this is, if any.
    static CURRENT_CONTEXT: Weak<ContextInner>
}

/// What every [`Context`](super::Context) of one context shares; its drop
/// forgets the name, stops the thread and joins it.
pub(super) struct ContextInner {
    pub(super) name: String,
    /// What the context was started with, compared with each request.
    pub(super) config: ContextBuilder,
    pub(super) handle: Handle,
    pub(super) thread_id: ThreadId,
    stop: Arc<StopSignal>,
    thread: Option<ThreadJoinHandle<()>>,
}

/// Running contexts by name (see [`Registry`] for its lock rule).
static REGISTRY: LazyLock<Registry<Arc<ContextInner>>> = LazyLock::new(Registry::new);

/// The running context `name` if `config` may share it, else a new one.
pub(super) fn acquire(name: &str, config: &ContextBuilder) -> io::Result<Arc<ContextInner>> {
    REGISTRY.acquire(
        name,
        |running| config.conflict(name, &running.config),
        || {
            let Started { inner, publish } = start(name, config)?;
            Ok((inner, move |weak| {
                // The thread is gone if the send fails: nothing to run.
                let _ = publish.send(weak);
            }))
        },
    )
}

/// Whether `name` has an entry (live or dead), for tests.
#[cfg(all(test, not(loom)))]
pub(super) fn is_registered(name: &str) -> bool {
    REGISTRY.is_registered(name)
}

/// The context whose thread the caller runs on (weak: never keeps it running).
pub(super) fn current() -> Option<Weak<ContextInner>> {
    CURRENT_CONTEXT.get()
}

/// Tells the context thread's `block_on` to return.
#[derive(Default)]
struct StopSignal {
    stopped: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

/// A started context: its thread built its runtime and waits for a weak
/// reference to its own `ContextInner`, sent by the registry via `publish`
/// once its lock is released.
struct Started {
    inner: Arc<ContextInner>,
    publish: mpsc::Sender<Weak<ContextInner>>,
}

/// Starts the context thread and waits until its runtime is built (or failed).
fn start(name: &str, config: &ContextBuilder) -> io::Result<Started> {
    let mut builder = config.runtime_builder(name);
    let stop = Arc::new(StopSignal::default());
    let (ready_tx, ready_rx) = mpsc::channel::<io::Result<Handle>>();
    let (inner_tx, inner_rx) = mpsc::channel::<Weak<ContextInner>>();
    let thread_stop = stop.clone();
    let thread = thread::Builder::new()
        .name(name.to_owned())
        .spawn(move || {
            let rt = match builder.build() {
                Ok(rt) => rt,
                Err(e) => {
                    let _ = ready_tx.send(Err(e));
                    return;
                }
            };
            let _ = ready_tx.send(Ok(rt.handle().clone()));
            // The registry sends the ContextInner once `start` returns.
            if let Ok(inner) = inner_rx.recv() {
                let _current = CURRENT_CONTEXT.enter(inner);
                rt.block_on(StopFuture(&thread_stop));
            }
            // Dropping `rt` here drops every remaining task on this thread.
            drop(rt);
        })?;
    let thread_id = thread.thread().id();
    let handle = match ready_rx.recv() {
        Ok(Ok(handle)) => handle,
        Ok(Err(e)) => {
            let _ = thread.join();
            return Err(e);
        }
        Err(_) => {
            let _ = thread.join();
            return Err(io::Error::other(format!(
                "context {name:?}: its thread panicked while starting"
            )));
        }
    };
    let inner = Arc::new(ContextInner {
        name: name.to_owned(),
        config: config.clone(),
        handle,
        thread_id,
        stop,
        thread: Some(thread),
    });
    Ok(Started {
        inner,
        publish: inner_tx,
    })
}

impl Drop for ContextInner {
    fn drop(&mut self) {
        // Forget the entry, unless a new context of the name replaced it.
        REGISTRY.forget(&self.name);
        self.stop.stopped.store(true, Ordering::SeqCst);
        if let Some(waker) = self.stop.waker.lock().take() {
            waker.wake();
        }
        // Stopping must not wait for the next tick.
        self.handle.unpark();
        if let Some(thread) = self.thread.take() {
            if thread::current().id() == self.thread_id {
                // Dropped by a task on the context itself: the thread
                // cannot join itself; it exits once `block_on` sees the stop.
                return;
            }
            let _ = thread.join();
        }
    }
}

/// Completes once the context is told to stop.
struct StopFuture<'a>(&'a StopSignal);

impl Future for StopFuture<'_> {
    type Output = ();

    fn poll(self: Pin<&mut Self>, cx: &mut TaskContext<'_>) -> Poll<()> {
        if self.0.stopped.load(Ordering::SeqCst) {
            return Poll::Ready(());
        }
        *self.0.waker.lock() = Some(cx.waker().clone());
        // Re-check: a stop between the load and the store finds no waker.
        if self.0.stopped.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}
