//! [`channel`]: a bounded channel from one element to the next.
//!
//! Single-producer, single-consumer: between two elements of one context
//! it is never contended, so everything sits behind one lock in one
//! allocation plus a ring, touching few cache lines per push. Invariant:
//! every state change and waker store happens under that lock, so no
//! wake-up is lost. A waiting end's waker is stored once and woken by
//! reference. A ready `send` or `recv` spends one unit of coop budget.

use std::collections::VecDeque;
use std::fmt;
use std::future::poll_fn;
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll, Waker};

use tempo::task::coop::poll_proceed;

/// A bounded channel of `capacity` items (at least 1), for one element to
/// push to the next.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build()?;
/// rt.block_on(async {
///     let (mut tx, mut rx) = tempo_media::channel(2);
///     let sink = tempo::spawn(async move {
///         let mut got = Vec::new();
///         while let Some(n) = rx.recv().await {
///             got.push(n);
///         }
///         got
///     });
///     for n in 0..5 {
///         // Waits while 2 items are queued: the sink runs meanwhile.
///         tx.send(n).await.unwrap();
///     }
///     drop(tx); // the sink sees the end
///     assert_eq!(sink.await.unwrap(), [0, 1, 2, 3, 4]);
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
///
/// # Panics
///
/// If `capacity` is 0.
pub fn channel<T>(capacity: usize) -> (Sender<T>, Receiver<T>) {
    assert!(capacity > 0, "a channel needs a capacity of at least 1");
    let shared = Arc::new(Shared {
        state: Mutex::new(State {
            // Allocated once, here: a push never allocates.
            queue: VecDeque::with_capacity(capacity),
            capacity,
            receiver: End::default(),
            sender: End::default(),
            closed: false,
        }),
    });
    (
        Sender {
            shared: shared.clone(),
        },
        Receiver { shared },
    )
}

/// One end's waker and whether it waits.
#[derive(Default)]
struct End {
    /// Stored when the end waits, kept; replaced only if it changes.
    waker: Option<Waker>,
    waiting: bool,
}

impl End {
    /// The end is about to return `Pending`.
    fn wait(&mut self, waker: &Waker) {
        if !self.waker.as_ref().is_some_and(|w| w.will_wake(waker)) {
            self.waker = Some(waker.clone());
        }
        self.waiting = true;
    }

    /// The waker to wake (outside the lock) if the end waits.
    fn take_wake(&mut self) -> Option<Waker> {
        if std::mem::take(&mut self.waiting) {
            self.waker.clone()
        } else {
            None
        }
    }
}

struct State<T> {
    queue: VecDeque<T>,
    capacity: usize,
    receiver: End,
    sender: End,
    /// One end was dropped.
    closed: bool,
}

struct Shared<T> {
    state: Mutex<State<T>>,
}

impl<T> Shared<T> {
    fn lock(&self) -> MutexGuard<'_, State<T>> {
        // No user code runs under the lock (items are moved, not dropped,
        // inside it): a poisoned lock still holds a consistent state.
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// One end goes away, waking the other; returns the items nobody will
    /// receive, to drop outside the lock.
    fn close(&self, receiver_gone: bool) -> VecDeque<T> {
        let mut state = self.lock();
        state.closed = true;
        let (waker, left) = if receiver_gone {
            (state.sender.take_wake(), std::mem::take(&mut state.queue))
        } else {
            (state.receiver.take_wake(), VecDeque::new())
        };
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        left
    }
}

/// The sending end of a [`channel`].
pub struct Sender<T> {
    shared: Arc<Shared<T>>,
}

/// The receiving end of a [`channel`].
pub struct Receiver<T> {
    shared: Arc<Shared<T>>,
}

/// [`Sender::send`] found the receiver gone: the item comes back.
#[derive(PartialEq, Eq)]
pub struct SendError<T>(pub T);

impl<T> fmt::Debug for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("SendError(..)")
    }
}

impl<T> fmt::Display for SendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the receiver is gone")
    }
}

impl<T> std::error::Error for SendError<T> {}

/// Why [`Sender::try_send`] did not queue the item (which comes back).
#[derive(PartialEq, Eq)]
pub enum TrySendError<T> {
    /// The channel holds `capacity` items.
    Full(T),
    /// The receiver is gone.
    Closed(T),
}

impl<T> fmt::Debug for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrySendError::Full(_) => "Full(..)",
            TrySendError::Closed(_) => "Closed(..)",
        })
    }
}

impl<T> fmt::Display for TrySendError<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            TrySendError::Full(_) => "the channel is full",
            TrySendError::Closed(_) => "the receiver is gone",
        })
    }
}

impl<T> std::error::Error for TrySendError<T> {}

impl<T> Sender<T> {
    /// Queues `value`, waiting while the channel is full; gives it back
    /// once the receiver is gone. Dropping the future drops `value` unsent.
    /// `&mut self`: one waiting sender's waker is kept, so two could not wait.
    pub async fn send(&mut self, value: T) -> Result<(), SendError<T>> {
        let mut value = Some(value);
        poll_fn(|cx| self.poll_send(cx, &mut value)).await
    }

    fn poll_send(
        &mut self,
        cx: &mut Context<'_>,
        value: &mut Option<T>,
    ) -> Poll<Result<(), SendError<T>>> {
        let mut state = self.shared.lock();
        if state.queue.len() == state.capacity && !state.closed {
            state.sender.wait(cx.waker());
            return Poll::Pending;
        }
        std::task::ready!(spend_unit(cx));
        let item = value.take().expect("polled after completion");
        if state.closed {
            return Poll::Ready(Err(SendError(item)));
        }
        state.queue.push_back(item);
        let waker = state.receiver.take_wake();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Poll::Ready(Ok(()))
    }

    /// Queues `value` if there is room now.
    pub fn try_send(&self, value: T) -> Result<(), TrySendError<T>> {
        let mut state = self.shared.lock();
        if state.closed {
            return Err(TrySendError::Closed(value));
        }
        if state.queue.len() == state.capacity {
            return Err(TrySendError::Full(value));
        }
        state.queue.push_back(value);
        let waker = state.receiver.take_wake();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Ok(())
    }

    /// Whether the receiver is gone.
    pub fn is_closed(&self) -> bool {
        self.shared.lock().closed
    }
}

impl<T> Receiver<T> {
    /// The next item, waiting while the channel is empty; `None` once the
    /// sender is gone and every item it sent was received.
    pub async fn recv(&mut self) -> Option<T> {
        poll_fn(|cx| self.poll_recv(cx)).await
    }

    /// Polls for the next item; see [`Self::recv`].
    pub fn poll_recv(&mut self, cx: &mut Context<'_>) -> Poll<Option<T>> {
        let mut state = self.shared.lock();
        if state.queue.is_empty() && !state.closed {
            state.receiver.wait(cx.waker());
            return Poll::Pending;
        }
        std::task::ready!(spend_unit(cx));
        let item = state.queue.pop_front();
        let waker = item.as_ref().and_then(|_| state.sender.take_wake());
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Poll::Ready(item)
    }

    /// The next item if one is queued now (`None` also when the channel is
    /// empty but open).
    pub fn try_recv(&mut self) -> Option<T> {
        let mut state = self.shared.lock();
        let item = state.queue.pop_front()?;
        let waker = state.sender.take_wake();
        drop(state);
        if let Some(waker) = waker {
            waker.wake();
        }
        Some(item)
    }
}

/// A ready `send` or `recv` spends one unit of budget, or returns `Pending`
/// (task woken). Safe under the channel's lock: the wake is the polling
/// task's own waker, which runs no channel code.
#[inline]
fn spend_unit(cx: &mut Context<'_>) -> Poll<()> {
    std::task::ready!(poll_proceed(cx)).made_progress();
    Poll::Ready(())
}

impl<T> Drop for Sender<T> {
    fn drop(&mut self) {
        drop(self.shared.close(false));
    }
}

impl<T> Drop for Receiver<T> {
    fn drop(&mut self) {
        drop(self.shared.close(true));
    }
}

impl<T> fmt::Debug for Sender<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("Sender")
            .field("queued", &state.queue.len())
            .field("capacity", &state.capacity)
            .field("closed", &state.closed)
            .finish()
    }
}

impl<T> fmt::Debug for Receiver<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let state = self.shared.lock();
        f.debug_struct("Receiver")
            .field("queued", &state.queue.len())
            .field("capacity", &state.capacity)
            .field("closed", &state.closed)
            .finish()
    }
}
