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
    /// Returns the running context called `name`, or starts one whose
    /// thread (named `name`) runs a throttling scheduler with
    /// [`max_throttling`](crate::runtime::Builder::max_throttling)
    /// `max_throttling`, I/O and
    /// timers enabled, every other setting the default: [`acquire_with`]
    /// with [`ContextBuilder::new`]`(max_throttling)`.
    ///
    /// A running context is returned only if it runs with the same
    /// `max_throttling` (one thread has one tick, so two elements that
    /// need different periods cannot share it) and the default timer
    /// policy.
    ///
    /// [`acquire_with`]: Self::acquire_with
    ///
    /// # Errors
    ///
    /// * [`AlreadyExists`](io::ErrorKind::AlreadyExists) if a context called
    ///   `name` is running with another `max_throttling` (or was started
    ///   by [`acquire_with`] with another timer policy); the message gives
    ///   both values. Acquire it with its period (see
    ///   [`max_throttling`](Self::max_throttling)), or use another name.
    /// * The builder's error for an out-of-range `max_throttling` (see
    ///   [`Builder::max_throttling`](crate::runtime::Builder::max_throttling)).
    /// * The OS error if the thread or its drivers cannot be created (e.g.
    ///   file descriptors exhausted).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo::context::Context;
    ///
    /// let audio = Context::acquire("doc-acquire", Duration::from_millis(20))?;
    /// // The same name, the same thread.
    /// let again = Context::acquire("doc-acquire", Duration::from_millis(20))?;
    /// assert_eq!(audio.thread_id(), again.thread_id());
    /// // Another period under that name is refused.
    /// let err = Context::acquire("doc-acquire", Duration::from_millis(5)).unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn acquire(name: &str, max_throttling: Duration) -> io::Result<Context> {
        Context::acquire_with(name, &ContextBuilder::new(max_throttling))
    }

    /// Returns the running context called `name`, or starts one whose
    /// runtime is built with `config`: [`acquire`](Self::acquire) with the
    /// timer policy, events capacity, tick budget and blocking pool of a
    /// [`ContextBuilder`].
    ///
    /// A running context is returned only if it runs with the same period
    /// and the same [`timer_policy`](ContextBuilder::timer_policy): these
    /// are what a task on the context observes, and one thread has one
    /// tick and one timer rule. Its other settings (events capacity, tick
    /// budget, blocking pool and its threads' name) are whatever it was
    /// started with: the first acquirer configures them, a later request
    /// that differs there shares the context as it is.
    ///
    /// # Errors
    ///
    /// As [`acquire`](Self::acquire); `AlreadyExists` also for another
    /// timer policy.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo::context::{Context, ContextBuilder};
    /// use tempo::runtime::TimerPolicy;
    ///
    /// let mut config = ContextBuilder::new(Duration::from_millis(20));
    /// config.timer_policy(TimerPolicy::NeverEarly).max_blocking_threads(2);
    /// let video = Context::acquire_with("doc-acquire-with", &config)?;
    ///
    /// // The same period and policy: the running context, whatever the
    /// // other settings asked for.
    /// let mut other = config.clone();
    /// other.max_blocking_threads(8);
    /// let again = Context::acquire_with("doc-acquire-with", &other)?;
    /// assert_eq!(video.thread_id(), again.thread_id());
    ///
    /// // Another timer policy (`acquire` asks for the default) is refused.
    /// let err = Context::acquire("doc-acquire-with", Duration::from_millis(20)).unwrap_err();
    /// assert_eq!(err.kind(), std::io::ErrorKind::AlreadyExists);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn acquire_with(name: &str, config: &ContextBuilder) -> io::Result<Context> {
        thread::acquire(name, config).map(|inner| Context { inner })
    }

    /// The context whose thread the caller runs on (from a task spawned on
    /// a context, for instance), or `None`.
    ///
    /// This is a strong reference: it keeps the context running while it
    /// lives. To remember the context in something the context itself owns
    /// (a task, an element's state), store [`current_weak`](Self::current_weak)
    /// instead; see [which reference to store](super#which-reference-to-store).
    pub fn current() -> Option<Context> {
        thread::current()
            .and_then(|weak| weak.upgrade())
            .map(|inner| Context { inner })
    }

    /// The context whose thread the caller runs on, as a [`WeakContext`]
    /// that does not keep it running; `None` off a context thread.
    pub fn current_weak() -> Option<WeakContext> {
        thread::current().map(|inner| WeakContext { inner })
    }

    /// A [`WeakContext`] to this context: it does not keep the context
    /// running.
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

    /// A handle to the context's runtime: spawn onto it from any thread,
    /// read its metrics, unpark it.
    pub fn handle(&self) -> &Handle {
        &self.inner.handle
    }

    /// Spawns a task on the context (from any thread). The task runs at the
    /// context's next tick; see [`Handle::spawn_and_unpark`] for work that
    /// must not wait for it.
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
    /// # Panics
    ///
    /// When called on the context's own thread (it would wait for itself
    /// forever), and when `future` panics (the panic is resumed here).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let ctx = tempo::context::Context::acquire("doc-block-on", Duration::from_millis(10))?;
    /// let out = ctx.block_on(async {
    ///     tempo::time::sleep(Duration::from_millis(1)).await;
    ///     "ran on the context"
    /// });
    /// assert_eq!(out, "ran on the context");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    #[track_caller]
    pub fn block_on<F>(&self, future: F) -> F::Output
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.inner.handle.block_on(future)
    }
}

/// A reference to a context that does not keep it running; see
/// [which reference to store](super#which-reference-to-store).
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
    /// A `WeakContext` to no context: [`upgrade`](Self::upgrade) always
    /// returns `None`.
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
