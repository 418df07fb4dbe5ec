//! [`InjectQueue`]: how other threads hand tasks to a scheduler. A
//! `Mutex<VecDeque>` (remote wakes are rare, the lock uncontended) plus an
//! atomic length, changed only by read-modify-writes inside the lock: the
//! "is there injected work?" half of the park handshake in
//! [`core`](super::core), read by [`InjectQueue::is_empty_latest`]. A closed
//! queue (shutdown) gives pushed items back; an atomic copy of the flag
//! answers [`InjectQueue::is_closed`] without the lock.

use std::collections::VecDeque;

use crate::sync::{
    AtomicBool, AtomicUsize, Mutex,
    Ordering::{Acquire, Release, SeqCst},
};

/// A multi-producer queue drained by the scheduler's thread (`pub` only
/// for the loom models).
#[derive(Debug)]
pub struct InjectQueue<T> {
    inner: Mutex<Inner<T>>,
    len: AtomicUsize,
    /// A copy of `Inner::closed`, written under the lock after it.
    closed: AtomicBool,
}

#[derive(Debug)]
struct Inner<T> {
    queue: VecDeque<T>,
    closed: bool,
}

impl<T> Default for InjectQueue<T> {
    fn default() -> InjectQueue<T> {
        InjectQueue::new()
    }
}

impl<T> InjectQueue<T> {
    /// An empty, open queue.
    pub fn new() -> InjectQueue<T> {
        InjectQueue {
            inner: Mutex::new(Inner {
                queue: VecDeque::new(),
                closed: false,
            }),
            len: AtomicUsize::new(0),
            closed: AtomicBool::new(false),
        }
    }

    /// Appends `item`, or gives it back if the queue is closed.
    pub fn push(&self, item: T) -> Result<(), T> {
        let mut inner = self.inner.lock();
        if inner.closed {
            return Err(item);
        }
        inner.queue.push_back(item);
        self.len.fetch_add(1, SeqCst);
        Ok(())
    }

    /// `true` if nothing is queued. Lock-free; `SeqCst` for the park
    /// handshake.
    pub fn is_empty(&self) -> bool {
        self.len.load(SeqCst) == 0
    }

    /// `true` if nothing is queued, read with a read-modify-write (the
    /// latest length): the scheduler's last check before blocking.
    pub fn is_empty_latest(&self) -> bool {
        self.len.fetch_add(0, SeqCst) == 0
    }

    /// Number of queued items (a snapshot).
    pub fn len(&self) -> usize {
        self.len.load(SeqCst)
    }

    /// Moves every queued item to the back of `dst`, under one lock.
    /// Does not lock when the queue is empty.
    pub fn drain_into(&self, dst: &mut VecDeque<T>) -> usize {
        if self.is_empty() {
            return 0;
        }
        let mut inner = self.inner.lock();
        let n = inner.queue.len();
        dst.extend(inner.queue.drain(..));
        self.len.fetch_sub(n, SeqCst);
        n
    }

    /// Removes the oldest item.
    pub fn pop(&self) -> Option<T> {
        if self.is_empty() {
            return None;
        }
        let mut inner = self.inner.lock();
        let item = inner.queue.pop_front();
        if item.is_some() {
            self.len.fetch_sub(1, SeqCst);
        }
        item
    }

    /// Refuses every later push. Items already queued stay for `pop`.
    pub fn close(&self) {
        let mut inner = self.inner.lock();
        inner.closed = true;
        self.closed.store(true, Release);
    }

    /// `true` once closed. Lock-free: a `false` racing a `close` is caught
    /// by the following [`push`](Self::push), which decides under the lock.
    pub fn is_closed(&self) -> bool {
        self.closed.load(Acquire)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn fifo_and_len() {
        let q = InjectQueue::new();
        assert!(q.is_empty());
        q.push(1).unwrap();
        q.push(2).unwrap();
        assert_eq!(q.len(), 2);
        assert_eq!(q.pop(), Some(1));
        let mut dst = VecDeque::new();
        assert_eq!(q.drain_into(&mut dst), 1);
        assert_eq!(dst, [2]);
        assert!(q.is_empty());
        assert_eq!(q.pop(), None);
    }

    #[test]
    fn closed_refuses_push_keeps_items() {
        let q = InjectQueue::new();
        q.push(1).unwrap();
        assert!(!q.is_closed());
        q.close();
        assert!(q.is_closed());
        assert_eq!(q.push(2), Err(2));
        assert_eq!(q.pop(), Some(1));
    }

    #[test]
    fn pushes_from_threads() {
        let q = std::sync::Arc::new(InjectQueue::new());
        let threads: Vec<_> = (0..4)
            .map(|t| {
                let q = q.clone();
                std::thread::spawn(move || {
                    for i in 0..1000 {
                        q.push(t * 1000 + i).unwrap();
                    }
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let mut dst = VecDeque::new();
        q.drain_into(&mut dst);
        let mut all: Vec<_> = dst.into_iter().collect();
        all.sort_unstable();
        assert_eq!(all, (0..4000).collect::<Vec<_>>());
    }
}
