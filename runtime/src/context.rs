//! Contexts: named threads that each run a throttling scheduler, shared by
//! every element that asks for the same name.
//!
//! This is the thread-sharing model of GStreamer's threadshare elements: a
//! pipeline with 1,000 UDP sources does not start 1,000 threads; each source
//! [`acquire`](Context::acquire)s a context by name (`"audio-1"`), and all
//! sources that name the same context share its thread and its tick. Scale
//! out is by more contexts (more names), one thread each, never by work
//! stealing: the model is "pin streams to a context".
//!
//! A context lives as long as a [`Context`] value refers to it. When the
//! last one is dropped, the context thread drops every task it still owns
//! (on that thread), then exits; a later `acquire` of the same name starts a
//! new one.
//!
//! # Which reference to store
//!
//! A [`Context`] is a strong reference: it keeps the context, and its
//! thread, running. An element that *uses* a context holds a `Context`
//! (that is how the context knows it is still needed). Anything that only
//! needs to find its way back to the context, and must not keep it alive,
//! stores a [`WeakContext`] ([`Context::downgrade`],
//! [`Context::current_weak`]) and calls [`WeakContext::upgrade`] when it
//! needs it. In particular, a task that stores the result of
//! [`Context::current`] in a structure owned by the context itself (a
//! task's state, a socket's callback) creates a cycle: the context would
//! never stop. Store a `WeakContext` there.
//!
//! ```
//! use std::time::Duration;
//! use tempo::context::Context;
//!
//! let a = Context::acquire("doc-audio", Duration::from_millis(20)).unwrap();
//! let b = Context::acquire("doc-audio", Duration::from_millis(20)).unwrap();
//! assert_eq!(a.thread_id(), b.thread_id()); // same name, same thread
//!
//! let answer = a.block_on(async { 6 * 7 });
//! assert_eq!(answer, 42);
//! ```
//!
//! # The registry lock
//!
//! Names map to running contexts through one process-wide registry behind
//! a mutex, holding weak references. Dropping the last [`Context`] of a
//! context takes that lock (to forget the name), so **no reference to a
//! context is dropped while the registry lock is held**: on a thread that
//! holds it, dropping what turned out to be the last strong reference
//! would take the lock again and deadlock that thread. A reference taken
//! under the lock (an upgraded entry that turns out to run with another
//! period, an entry replaced or removed) is dropped after the guard. Weak
//! references follow the same rule although their drop never takes the
//! lock, so that the rule has no exception. The loom model
//! `loom-tests/tests/context_registry.rs` races an `acquire` with the last
//! drop.

use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{mpsc, Arc, Weak};
use std::task::{Context as TaskContext, Poll, Waker};
use std::thread::{self, JoinHandle as ThreadJoinHandle, ThreadId};
use std::time::Duration;

use parking_lot::Mutex;

use crate::runtime::{Builder, Handle};
use crate::task::JoinHandle;

/// Running contexts by name. Entries are weak: the registry never keeps a
/// context alive; a dead entry is replaced by the next `acquire`. Nothing
/// that refers to a context is dropped while this lock is held: see
/// [the registry lock](self#the-registry-lock).
static REGISTRY: Mutex<BTreeMap<String, Weak<ContextInner>>> = Mutex::new(BTreeMap::new());

tempo_park::scoped_thread_local! {
    /// The context whose thread this is, if any.
    static CURRENT_CONTEXT: Weak<ContextInner>
}

/// A named thread running a throttling scheduler. Cheap to clone; the
/// context stops when the last clone is dropped.
///
/// ```
/// use std::time::Duration;
/// use tempo::context::Context;
///
/// // Two elements naming the same context share its thread.
/// let a = Context::acquire("doc-audio", Duration::from_millis(20))?;
/// let b = Context::acquire("doc-audio", Duration::from_millis(20))?;
/// let ja = a.spawn(async { std::thread::current().id() });
/// let jb = b.spawn(async { std::thread::current().id() });
/// assert_eq!(a.block_on(ja).unwrap(), b.block_on(jb).unwrap());
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct Context {
    inner: Arc<ContextInner>,
}

struct ContextInner {
    name: String,
    max_throttling: Duration,
    handle: Handle,
    thread_id: ThreadId,
    stop: Arc<StopSignal>,
    thread: Option<ThreadJoinHandle<()>>,
}

/// Tells the context thread's `block_on` to return.
#[derive(Default)]
struct StopSignal {
    stopped: AtomicBool,
    waker: Mutex<Option<Waker>>,
}

impl Context {
    /// Returns the running context called `name`, or starts one whose
    /// thread (named `name`) runs a throttling scheduler with
    /// [`max_throttling`](Builder::max_throttling) `max_throttling`, I/O and
    /// timers enabled.
    ///
    /// A running context is returned only if it runs with the same
    /// `max_throttling`: one thread has one tick, so two elements that
    /// need different periods cannot share it.
    ///
    /// # Errors
    ///
    /// * [`AlreadyExists`](io::ErrorKind::AlreadyExists) if a context called
    ///   `name` is running with another `max_throttling`; the message gives
    ///   both periods. Acquire it with its period (see
    ///   [`max_throttling`](Self::max_throttling)), or use another name.
    /// * The builder's error for an out-of-range `max_throttling` (see
    ///   [`Builder::max_throttling`]).
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
        let mut registry = REGISTRY.lock();
        if let Some(inner) = registry.get(name).and_then(Weak::upgrade) {
            if inner.max_throttling == max_throttling {
                return Ok(Context { inner });
            }
            // `inner` may be the last strong reference by now (its other
            // holders dropped theirs since the upgrade): release the lock
            // before it is dropped (see the module docs).
            drop(registry);
            return Err(io::Error::new(
                io::ErrorKind::AlreadyExists,
                format!(
                    "context {name:?} is already running with max_throttling {:?}, \
                     not the {max_throttling:?} asked for: acquire it with {:?}, or use \
                     another name for a context with another period",
                    inner.max_throttling, inner.max_throttling
                ),
            ));
        }
        let Started { inner, publish } = start(name, max_throttling)?;
        let replaced = registry.insert(name.to_owned(), Arc::downgrade(&inner));
        // A weak reference's drop never runs `ContextInner::drop`, but no
        // reference of either kind is dropped under the lock (the dead entry
        // replaced, or the thread's copy if its send failed): one rule, no
        // exception to reason about.
        drop(registry);
        drop(replaced);
        let _ = publish.send(Arc::downgrade(&inner));
        Ok(Context { inner })
    }

    /// The context whose thread the caller runs on (from a task spawned on
    /// a context, for instance), or `None`.
    ///
    /// This is a strong reference: it keeps the context running while it
    /// lives. To remember the context in something the context itself owns
    /// (a task, an element's state), store [`current_weak`](Self::current_weak)
    /// instead; see [which reference to store](self#which-reference-to-store).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo::context::Context;
    ///
    /// assert!(Context::current().is_none()); // not on a context's thread
    /// let ctx = Context::acquire("doc-current", Duration::from_millis(10))?;
    /// let name = ctx.block_on(async { Context::current().map(|c| c.name().to_owned()) });
    /// assert_eq!(name.as_deref(), Some("doc-current"));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn current() -> Option<Context> {
        CURRENT_CONTEXT.with(|weak| weak.and_then(Weak::upgrade).map(|inner| Context { inner }))
    }

    /// The context whose thread the caller runs on, as a [`WeakContext`]
    /// that does not keep it running; `None` off a context thread.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo::context::Context;
    ///
    /// let ctx = Context::acquire("doc-current-weak", Duration::from_millis(10))?;
    /// // What a task stores in state the context owns: no strong cycle.
    /// let weak = ctx.block_on(async { Context::current_weak() }).unwrap();
    /// assert!(weak.upgrade().is_some());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn current_weak() -> Option<WeakContext> {
        CURRENT_CONTEXT.get().map(|inner| WeakContext { inner })
    }

    /// A [`WeakContext`] to this context: it does not keep the context
    /// running.
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo::context::Context;
    ///
    /// let ctx = Context::acquire("doc-downgrade", Duration::from_millis(10))?;
    /// let weak = ctx.downgrade();
    /// assert!(weak.upgrade().is_some());
    /// drop(ctx); // the last strong reference: the context stops
    /// assert!(weak.upgrade().is_none());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn downgrade(&self) -> WeakContext {
        WeakContext {
            inner: Arc::downgrade(&self.inner),
        }
    }

    /// The context's name.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let ctx = tempo::context::Context::acquire("doc-name", Duration::from_millis(10))?;
    /// assert_eq!(ctx.name(), "doc-name");
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn name(&self) -> &str {
        &self.inner.name
    }

    /// The throttling period the context's scheduler runs with.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let ctx = tempo::context::Context::acquire("doc-period", Duration::from_millis(10))?;
    /// assert_eq!(ctx.max_throttling(), Duration::from_millis(10));
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn max_throttling(&self) -> Duration {
        self.inner.max_throttling
    }

    /// The id of the context's thread.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let ctx = tempo::context::Context::acquire("doc-thread", Duration::from_millis(10))?;
    /// let ran_on = ctx.block_on(async { std::thread::current().id() });
    /// assert_eq!(ran_on, ctx.thread_id());
    /// assert_ne!(ran_on, std::thread::current().id());
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn thread_id(&self) -> ThreadId {
        self.inner.thread_id
    }

    /// A handle to the context's runtime: spawn onto it from any thread,
    /// read its metrics, unpark it.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let ctx = tempo::context::Context::acquire("doc-handle", Duration::from_millis(10))?;
    /// let handle = ctx.handle().clone();
    /// let join = handle.spawn_and_unpark(async { 2 + 2 }); // without waiting a tick
    /// assert_eq!(handle.block_on(join).unwrap(), 4);
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn handle(&self) -> &Handle {
        &self.inner.handle
    }

    /// Spawns a task on the context (from any thread). The task runs at the
    /// context's next tick; see [`Handle::spawn_and_unpark`] for work that
    /// must not wait for it.
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let ctx = tempo::context::Context::acquire("doc-spawn", Duration::from_millis(10))?;
    /// let join = ctx.spawn(async {
    ///     let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     socket.local_addr()
    /// });
    /// let addr = ctx.block_on(join).unwrap()?;
    /// assert!(addr.ip().is_loopback());
    /// # Ok::<(), std::io::Error>(())
    /// ```
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
/// [which reference to store](self#which-reference-to-store).
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
    ///
    /// ```
    /// let weak = tempo::context::WeakContext::new();
    /// assert!(weak.upgrade().is_none()); // refers to no context
    /// ```
    pub fn new() -> WeakContext {
        WeakContext { inner: Weak::new() }
    }

    /// The context, if it still runs (some [`Context`] keeps it alive).
    ///
    /// ```
    /// use std::time::Duration;
    ///
    /// let ctx = tempo::context::Context::acquire("doc-upgrade", Duration::from_millis(10))?;
    /// let weak = ctx.downgrade();
    /// let strong = weak.upgrade().expect("ctx is still alive");
    /// assert_eq!(strong.name(), "doc-upgrade");
    /// # Ok::<(), std::io::Error>(())
    /// ```
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

/// A started context: its thread has built its runtime and waits, before
/// running it, for a weak reference to its own `ContextInner` (for
/// [`Context::current`]), which `acquire` sends through `publish` once the
/// registry lock is released.
struct Started {
    inner: Arc<ContextInner>,
    publish: mpsc::Sender<Weak<ContextInner>>,
}

/// Starts the context thread and waits until its runtime is built (a bad
/// `max_throttling` or a driver error comes back from there).
fn start(name: &str, max_throttling: Duration) -> io::Result<Started> {
    let mut builder = Builder::new_current_thread();
    builder
        .enable_all()
        .max_throttling(max_throttling)
        // The context's own thread is named `name`; its blocking pool's
        // threads say whose they are.
        .thread_name(format!("{name}-blocking"));

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
            // The ContextInner exists once `start` returns; `acquire` sends
            // it (if it never does, the thread has no context to run).
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
        max_throttling,
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
        // Forget the registry entry, unless a new context of the same name
        // already replaced it. The removed (dead) weak reference is dropped
        // once the guard is gone: see the module docs.
        let removed = {
            let mut registry = REGISTRY.lock();
            if registry
                .get(&self.name)
                .is_some_and(|weak| weak.strong_count() == 0)
            {
                registry.remove(&self.name)
            } else {
                None
            }
        };
        drop(removed);
        self.stop.stopped.store(true, Ordering::SeqCst);
        if let Some(waker) = self.stop.waker.lock().take() {
            waker.wake();
        }
        // Stopping must not wait for the next tick.
        self.handle.unpark();
        if let Some(thread) = self.thread.take() {
            if thread::current().id() == self.thread_id {
                // The last reference was dropped by a task on the context
                // itself: the thread cannot join itself; it exits on its own
                // once `block_on` sees the stop signal.
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
        // Re-check: a stop between the load and the store would otherwise
        // find no waker.
        if self.0.stopped.load(Ordering::SeqCst) {
            Poll::Ready(())
        } else {
            Poll::Pending
        }
    }
}

impl fmt::Debug for Context {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Context")
            .field("name", &self.inner.name)
            .field("max_throttling", &self.inner.max_throttling)
            .field("thread_id", &self.inner.thread_id)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const T: Duration = Duration::from_millis(5);

    #[test]
    fn same_name_same_thread_different_names_different_threads() {
        let a = Context::acquire("ctx-test-a", T).unwrap();
        let a2 = Context::acquire("ctx-test-a", T).unwrap();
        let b = Context::acquire("ctx-test-b", T).unwrap();
        assert_eq!(a.thread_id(), a2.thread_id());
        assert_ne!(a.thread_id(), b.thread_id());
        assert_eq!(a2.max_throttling(), T);
        assert_eq!(a.name(), "ctx-test-a");
        let on_a = a.block_on(async { thread::current().id() });
        assert_eq!(on_a, a.thread_id());
        let name = b.block_on(async { thread::current().name().map(str::to_owned) });
        assert_eq!(name.as_deref(), Some("ctx-test-b"));
    }

    #[test]
    fn blocking_threads_are_named_after_the_context() {
        let c = Context::acquire("ctx-test-blocking", T).unwrap();
        let name = c.block_on(async {
            crate::task::spawn_blocking(|| thread::current().name().map(str::to_owned))
                .await
                .unwrap()
        });
        assert_eq!(name.as_deref(), Some("ctx-test-blocking-blocking"));
    }

    #[test]
    fn current_is_set_on_the_context_thread_only() {
        assert!(Context::current().is_none());
        let c = Context::acquire("ctx-test-current", T).unwrap();
        let seen = c.block_on(async { Context::current().map(|c| c.name().to_owned()) });
        assert_eq!(seen.as_deref(), Some("ctx-test-current"));
    }

    #[test]
    fn last_drop_stops_the_thread_and_drops_its_tasks() {
        struct DropFlag(Arc<AtomicBool>);
        impl Drop for DropFlag {
            fn drop(&mut self) {
                self.0.store(true, Ordering::SeqCst);
            }
        }
        let dropped = Arc::new(AtomicBool::new(false));
        let c = Context::acquire("ctx-test-drop", T).unwrap();
        let flag = DropFlag(dropped.clone());
        let join = c.spawn(async move {
            let _flag = flag;
            std::future::pending::<()>().await;
        });
        let weak = Arc::downgrade(&c.inner);
        let thread_alive = c.block_on(async { 1 });
        assert_eq!(thread_alive, 1);
        drop(c);
        // Drop joined the thread: the task's future was dropped there.
        assert!(dropped.load(Ordering::SeqCst));
        assert!(weak.upgrade().is_none());
        assert!(REGISTRY.lock().get("ctx-test-drop").is_none());
        drop(join);
        // A new acquire starts a new context.
        let again = Context::acquire("ctx-test-drop", T).unwrap();
        assert_eq!(again.block_on(async { 2 }), 2);
    }

    #[test]
    #[should_panic(expected = "from a thread that runs a Tempo runtime")]
    fn block_on_from_inside_panics() {
        let c = Context::acquire("ctx-test-inside", T).unwrap();
        let inner = c.clone();
        let result = c.block_on(async move {
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.block_on(async {})))
                .map_err(|panic| {
                    panic
                        .downcast_ref::<String>()
                        .cloned()
                        .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                        .unwrap_or_default()
                })
        });
        if let Err(message) = result {
            panic!("{message}");
        }
    }

    #[test]
    fn acquiring_a_running_context_with_another_period_is_an_error() {
        let a = Context::acquire("ctx-test-period", T).unwrap();
        let e = Context::acquire("ctx-test-period", Duration::from_millis(10)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
        let message = e.to_string();
        assert!(message.contains("ctx-test-period"), "{message}");
        assert!(
            message.contains("5ms") && message.contains("10ms"),
            "{message}"
        );
        // The running context is untouched and still acquirable with its
        // own period.
        let again = Context::acquire("ctx-test-period", T).unwrap();
        assert_eq!(again.thread_id(), a.thread_id());
        assert_eq!(again.max_throttling(), T);
        // Once it stopped, the name is free for another period.
        drop((a, again));
        let other = Context::acquire("ctx-test-period", Duration::from_millis(10)).unwrap();
        assert_eq!(other.max_throttling(), Duration::from_millis(10));
    }

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

    #[test]
    fn bad_period_is_an_error_and_registers_nothing() {
        let e = Context::acquire("ctx-test-bad", Duration::from_secs(3600)).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
        assert!(e.to_string().contains("1 ms to 1 s"), "{e}");
        assert!(REGISTRY.lock().get("ctx-test-bad").is_none());
    }

    #[test]
    fn panicking_future_resumes_in_block_on_and_context_survives() {
        let c = Context::acquire("ctx-test-panic", T).unwrap();
        let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            c.block_on(async { panic!("boom in context") })
        }));
        assert!(caught.is_err());
        assert_eq!(c.block_on(async { 7 }), 7);
    }

    #[test]
    fn sockets_and_timers_work_on_a_context() {
        let c = Context::acquire("ctx-test-io", T).unwrap();
        let got = c.block_on(async {
            let a = crate::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = crate::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            b.send_to(b"hi", a.local_addr().unwrap()).await.unwrap();
            crate::time::sleep(Duration::from_millis(1)).await;
            let mut buf = [0u8; 8];
            let (n, _) = a.recv_from(&mut buf).await.unwrap();
            buf[..n].to_vec()
        });
        assert_eq!(got, b"hi");
    }
}
