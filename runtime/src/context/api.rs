//! The public types: [`Context`] (a strong reference, keeps the context
//! running) and [`WeakContext`] (does not). Both are thin over the shared
//! `ContextInner` of `thread.rs`; the registry decides which one an
//! `acquire` returns.

use std::fmt;
use std::future::Future;
use std::io;
use std::sync::{Arc, Weak};
use std::thread::ThreadId;
use std::time::Duration;

use super::builder::ContextBuilder;
use super::thread::{self, ContextInner};
use crate::runtime::Handle;
use crate::task::JoinHandle;

/// A named thread running a throttling scheduler. Cheap to clone; the
/// context stops when the last clone is dropped.
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

impl Context {
    /// Returns the running context called `name` if it runs with the same
    /// `max_throttling` and the default timer policy (one thread has one tick),
    /// or starts one with I/O and timers: [`acquire_with`](Self::acquire_with)
    /// with [`ContextBuilder::new`]`(max_throttling)`.
    ///
    /// Errors: `AlreadyExists` if `name` runs with another period or timer policy (the
    /// message gives both); the builder's error for an out-of-range period; the
    /// OS error if the thread or its drivers cannot be created.
    pub fn acquire(name: &str, max_throttling: Duration) -> io::Result<Context> {
        Context::acquire_with(name, &ContextBuilder::new(max_throttling))
    }

    /// [`acquire`](Self::acquire) with a [`ContextBuilder`]'s settings. Only
    /// the period and timer policy must match a running context; its other
    /// settings are the first acquirer's.
    ///
    /// Errors: as [`acquire`](Self::acquire).
    pub fn acquire_with(name: &str, config: &ContextBuilder) -> io::Result<Context> {
        thread::acquire(name, config).map(|inner| Context { inner })
    }

    /// The context whose thread the caller runs on, or `None`. A strong
    /// reference: state the context owns stores [`current_weak`](Self::current_weak).
    pub fn current() -> Option<Context> {
        thread::current()
            .and_then(|weak| weak.upgrade())
            .map(|inner| Context { inner })
    }

    /// The context whose thread the caller runs on, as a [`WeakContext`].
    pub fn current_weak() -> Option<WeakContext> {
        thread::current().map(|inner| WeakContext { inner })
    }

    /// A [`WeakContext`] to this context.
    pub fn downgrade(&self) -> WeakContext {
        WeakContext {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// The context's name.
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The throttling period the context's scheduler runs with.
    pub fn max_throttling(&self) -> Duration {
        self.inner.config.period()
    }

    /// The id of the context's thread.
    pub fn thread_id(&self) -> ThreadId {
        self.inner.thread_id
    }

    /// A handle to the context's runtime (spawn, metrics, unpark).
    pub fn handle(&self) -> &Handle {
        &self.inner.handle
    }

    /// Spawns a task on the context from any thread; it runs at the next tick
    /// (see [`Handle::spawn_and_unpark`]).
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.inner.handle.spawn(future)
    }

    /// Runs `future` on the context and blocks the calling thread until it
    /// completes; see [`Handle::block_on`].
    ///
    /// Panics on the context's own thread, or if `future` panics (resumed here).
    #[track_caller]
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.inner.handle.block_on(future)
    }
}

/// A reference to a context that does not keep it running.
///
/// ```
/// use std::time::Duration;
/// use tempo::context::Context;
///
/// let context = Context::acquire("doc-weak", Duration::from_millis(20)).unwrap();
/// let weak = context.downgrade();
/// assert_eq!(weak.upgrade().unwrap().name(), "doc-weak");
/// drop(context); // the last strong reference: the context stops
/// assert!(weak.upgrade().is_none());
/// ```
#[derive(Clone, Default)]
pub struct WeakContext {
    inner: Weak<ContextInner>,
}

impl WeakContext {
    /// A `WeakContext` to no context: [`upgrade`](Self::upgrade) returns `None`.
    pub fn new() -> WeakContext {
        WeakContext { inner: Weak::new() }
    }

    /// The context, if it still runs (some [`Context`] keeps it alive).
    pub fn upgrade(&self) -> Option<Context> {
        self.inner.upgrade().map(|inner| Context { inner })
    }
}

impl fmt::Debug for WeakContext {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.inner.upgrade() {
            Some(inner) => f
                .debug_struct("WeakContext")
                .field("name", &inner.name)
                .finish(),
            None => f.write_str("WeakContext(stopped)"),
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.inner.name)
            .field("max_throttling", &self.inner.config.period())
            .field("thread_id", &self.inner.thread_id)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const T: Duration = Duration::from_millis(5);

    #[test]
    fn a_weak_context_does_not_keep_the_context_running() {
        let c = Context::acquire("ctx-test-weak", T).unwrap();
        let weak = c.downgrade();
        assert_eq!(weak.upgrade().unwrap().thread_id(), c.thread_id());
        // A task that stores its context weakly, in state the context owns:
        // no cycle, the context still stops on the last drop.
        let stored = c.block_on(async {
            let weak = Context::current_weak().expect("on a context");
            let strong = weak.upgrade().expect("running");
            crate::spawn(async move {
                let _remember = weak;
                std::future::pending::<()>().await;
            });
            strong.name().to_owned()
        });
        assert_eq!(stored, "ctx-test-weak");
        let inner = Arc::downgrade(&c.inner);
        drop(c);
        assert!(weak.upgrade().is_none());
        assert!(inner.upgrade().is_none());
        assert!(Context::current_weak().is_none());
        assert!(WeakContext::new().upgrade().is_none());
    }
}
