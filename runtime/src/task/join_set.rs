//! [`JoinSet`]: a collection of tasks awaited in the order they complete.
//!
//! Each member's handle is polled only with the member's own waker, which
//! pushes its slab key on the set's ready list (a flag keeps it there at
//! most once): a completion costs one push and one poll, however many
//! members. A completed `join_next` spends one unit of cooperative budget,
//! taken before looking at the list; `try_join_next` spends none.

use std::fmt;
use std::future::{poll_fn, Future};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{ready, Context, Poll, Wake, Waker};

use slab::Slab;
use tempo_park::coop;

use super::abort::AbortHandle;
use super::error::JoinError;
use super::id::Id;
use super::join::JoinHandle;
use crate::runtime::Handle;
use crate::sync::{AtomicBool, Mutex, Ordering};

/// A collection of tasks, spawned through it and awaited in the order they
/// complete, with tokio's semantics.
///
/// All members have the same output type `T`. Dropping the set
/// [aborts](JoinSet::abort_all) every member still in it;
/// [`detach_all`](JoinSet::detach_all) lets them run on instead.
///
/// ```
/// use tempo::task::JoinSet;
///
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let mut set = JoinSet::new();
///     for i in 0..10u32 {
///         set.spawn(async move { i * i });
///     }
///     let mut sum = 0;
///     while let Some(result) = set.join_next().await {
///         sum += result.unwrap();
///     }
///     assert_eq!(sum, 285);
///     assert!(set.is_empty());
/// });
/// ```
pub struct JoinSet<T> {
    members: Slab<Member<T>>,
    ready: Arc<ReadyList>,
    /// Member handles polled so far (what the unit tests count).
    #[cfg(test)]
    member_polls: usize,
}

struct Member<T> {
    handle: JoinHandle<T>,
    /// The same `MemberWaker`, as a `Waker` (to poll with) and typed (to
    /// clear its flag).
    waker: Waker,
    notify: Arc<MemberWaker>,
}

/// The keys of the members whose task woke them, and the `join_next` waker.
struct ReadyList {
    inner: Mutex<ReadyInner>,
}

struct ReadyInner {
    keys: std::collections::VecDeque<usize>,
    join_waker: Option<Waker>,
}

/// The waker a member's task calls on completion.
struct MemberWaker {
    key: usize,
    /// `true` while the key is on the ready list (or about to be polled).
    queued: AtomicBool,
    ready: Arc<ReadyList>,
}

impl Wake for MemberWaker {
    fn wake(self: Arc<Self>) {
        self.wake_by_ref();
    }

    fn wake_by_ref(self: &Arc<Self>) {
        // AcqRel pairs with the swap in `poll_member`: either it sees our
        // `true` (and the completion before it), or we see its `false`
        // and queue the key again.
        if self.queued.swap(true, Ordering::AcqRel) {
            return;
        }
        let join_waker = {
            let mut inner = self.ready.inner.lock();
            inner.keys.push_back(self.key);
            inner.join_waker.take()
        };
        if let Some(waker) = join_waker {
            waker.wake();
        }
    }
}

impl<T> JoinSet<T> {
    /// An empty set.
    pub fn new() -> JoinSet<T> {
        JoinSet {
            members: Slab::new(),
            ready: Arc::new(ReadyList {
                inner: Mutex::new(ReadyInner {
                    keys: std::collections::VecDeque::new(),
                    join_waker: None,
                }),
            }),
            #[cfg(test)]
            member_polls: 0,
        }
    }

    /// The number of tasks in the set, finished but not joined included.
    pub fn len(&self) -> usize {
        self.members.len()
    }

    /// `true` if the set holds no task.
    pub fn is_empty(&self) -> bool {
        self.members.is_empty()
    }

    /// Adds a task already spawned, through its handle.
    fn insert(&mut self, handle: JoinHandle<T>) -> AbortHandle {
        let abort = handle.abort_handle();
        let slot = self.members.vacant_entry();
        let key = slot.key();
        // Queued from the start: the first poll registers the waker.
        let notify = Arc::new(MemberWaker {
            key,
            queued: AtomicBool::new(true),
            ready: self.ready.clone(),
        });
        slot.insert(Member {
            handle,
            waker: Waker::from(notify.clone()),
            notify,
        });
        self.ready.inner.lock().keys.push_back(key);
        abort
    }

    /// Spawns a `Send` future on the current runtime as a member of the
    /// set; the [`AbortHandle`] cancels this one task. Panics outside a
    /// Tempo runtime.
    #[track_caller]
    pub fn spawn<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        self.insert(crate::spawn(task))
    }

    /// Spawns a `Send` future on `handle`'s runtime as a member of the set.
    pub fn spawn_on<F>(&mut self, task: F, handle: &Handle) -> AbortHandle
    where
        F: Future<Output = T> + Send + 'static,
        T: Send + 'static,
    {
        self.insert(handle.spawn(task))
    }

    /// Spawns a `!Send` future on this thread's runtime as a member of the
    /// set. Panics if this thread runs no Tempo runtime.
    #[track_caller]
    pub fn spawn_local<F>(&mut self, task: F) -> AbortHandle
    where
        F: Future<Output = T> + 'static,
        T: 'static,
    {
        self.insert(crate::spawn_local(task))
    }

    /// Waits for the next task to complete and returns its output (`Err` if
    /// it panicked or was aborted), or `None` if the set is empty. Cancel-safe.
    /// Each task returned spends one unit of the caller's
    /// [cooperative budget](crate::task::coop).
    pub async fn join_next(&mut self) -> Option<Result<T, JoinError>> {
        poll_fn(|cx| self.poll_join_next(cx)).await
    }

    /// As [`join_next`](Self::join_next), with the completed task's [`Id`].
    pub async fn join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        poll_fn(|cx| self.poll_join_next_with_id(cx)).await
    }

    /// The output of a task that has already completed, without waiting;
    /// `None` if none has or the set is empty.
    pub fn try_join_next(&mut self) -> Option<Result<T, JoinError>> {
        self.try_join_next_with_id()
            .map(|result| result.map(|(_, output)| output))
    }

    /// As [`try_join_next`](Self::try_join_next), with the task's [`Id`].
    pub fn try_join_next_with_id(&mut self) -> Option<Result<(Id, T), JoinError>> {
        match self.poll_ready_members(None) {
            Poll::Ready(result) => result,
            Poll::Pending => None,
        }
    }

    /// Polls for the next completed task: `Ready(None)` if the set is empty,
    /// `Pending` with `cx`'s waker registered if none has completed, or already
    /// woken if the cooperative budget is spent.
    pub fn poll_join_next(&mut self, cx: &mut Context<'_>) -> Poll<Option<Result<T, JoinError>>> {
        self.poll_join_next_with_id(cx)
            .map(|result| result.map(|result| result.map(|(_, output)| output)))
    }

    /// As [`poll_join_next`](Self::poll_join_next), with the task's [`Id`].
    pub fn poll_join_next_with_id(
        &mut self,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        self.poll_ready_members(Some(cx))
    }

    /// Polls the members on the ready list until one is complete. With
    /// `cx` (`join_next`) it first takes a budget unit (kept only if a
    /// member is returned) and registers the waker; without, it spends none.
    fn poll_ready_members(
        &mut self,
        mut cx: Option<&mut Context<'_>>,
    ) -> Poll<Option<Result<(Id, T), JoinError>>> {
        if self.members.is_empty() {
            return Poll::Ready(None);
        }
        // Budget spent: `Pending`, already woken, no member polled.
        let progress = match cx.as_deref_mut() {
            Some(cx) => Some(ready!(coop::poll_proceed(cx))),
            None => None,
        };
        // Bounded, so spurious wakes (members that left) cannot spin it.
        for _ in 0..self.members.len() {
            let key = {
                let mut inner = self.ready.inner.lock();
                match inner.keys.pop_front() {
                    Some(key) => key,
                    None => {
                        if let Some(cx) = cx.as_deref_mut() {
                            match &inner.join_waker {
                                Some(w) if w.will_wake(cx.waker()) => {}
                                _ => inner.join_waker = Some(cx.waker().clone()),
                            }
                        }
                        return Poll::Pending;
                    }
                }
            };
            if let Poll::Ready(result) = self.poll_member(key) {
                if let Some(progress) = &progress {
                    progress.made_progress();
                }
                return Poll::Ready(Some(result));
            }
        }
        if let Some(cx) = cx {
            cx.waker().wake_by_ref();
        }
        Poll::Pending
    }

    /// Polls the member at `key` with its own waker; removes it if complete.
    fn poll_member(&mut self, key: usize) -> Poll<Result<(Id, T), JoinError>> {
        let Some(member) = self.members.get_mut(key) else {
            // A wake of a member that already left.
            return Poll::Pending;
        };
        // Cleared before the poll: a completion from now on queues again.
        member.notify.queued.swap(false, Ordering::AcqRel);
        let id = member.handle.id();
        let mut member_cx = Context::from_waker(&member.waker);
        #[cfg(test)]
        {
            self.member_polls += 1;
        }
        // Unconstrained: the join itself took (or spends no) budget.
        let polled = coop::with_unconstrained(|| Pin::new(&mut member.handle).poll(&mut member_cx));
        match polled {
            Poll::Ready(result) => {
                drop(self.members.remove(key));
                Poll::Ready(result.map(|output| (id, output)))
            }
            Poll::Pending => Poll::Pending,
        }
    }

    /// Aborts every task; they stay in the set, and `join_next` yields their
    /// cancelled errors (or outputs, for those that completed first).
    pub fn abort_all(&mut self) {
        for (_, member) in self.members.iter() {
            member.handle.abort();
        }
    }

    /// Aborts every task and waits until all of them have stopped; the set
    /// is empty afterwards. Outputs and errors are discarded.
    pub async fn shutdown(&mut self) {
        self.abort_all();
        while self.join_next().await.is_some() {}
    }

    /// Removes every task from the set without aborting them: they run on
    /// detached.
    pub fn detach_all(&mut self) {
        self.members.clear();
        self.ready.inner.lock().keys.clear();
    }
}

impl<T> Default for JoinSet<T> {
    fn default() -> JoinSet<T> {
        JoinSet::new()
    }
}

impl<T> Drop for JoinSet<T> {
    /// Aborts every task still in the set.
    fn drop(&mut self) {
        self.abort_all();
    }
}

impl<T> fmt::Debug for JoinSet<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("JoinSet")
            .field("len", &self.members.len())
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use std::future::poll_fn;
    use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
    use std::time::Duration;

    use super::*;
    use crate::runtime::Builder;
    use crate::task::{consume_budget, yield_now};

    /// Members of the set: far more than one budget's worth.
    const MEMBERS: usize = 1_000;

    /// Both schedulers (only a unit test can count member polls).
    fn flavors() -> [(&'static str, Builder); 2] {
        let mut throttling = Builder::new_current_thread();
        throttling.max_throttling(Duration::from_millis(5));
        [
            ("basic", Builder::new_current_thread()),
            ("throttling", throttling),
        ]
    }

    /// A set of `MEMBERS` tasks, every one of them finished.
    async fn finished_set() -> JoinSet<usize> {
        let done = Arc::new(AtomicUsize::new(0));
        let mut set = JoinSet::new();
        for i in 0..MEMBERS {
            let done = done.clone();
            set.spawn(async move {
                done.fetch_add(1, SeqCst);
                i
            });
        }
        for _ in 0..1_000 {
            if done.load(SeqCst) == MEMBERS {
                return set;
            }
            yield_now().await;
        }
        panic!("only {} of {MEMBERS} members ran", done.load(SeqCst));
    }

    /// With the budget spent, `join_next` yields without polling a member.
    #[test]
    fn join_next_with_a_spent_budget_polls_no_member() {
        for (flavor, mut builder) in flavors() {
            let rt = builder.build().unwrap();
            let (first, polled, total) = rt.block_on(async {
                let mut set = finished_set().await;
                while coop::has_budget_remaining() {
                    consume_budget().await;
                }
                let before = set.member_polls;
                let mut first = None;
                poll_fn(|cx| {
                    first = Some(set.poll_join_next(cx).is_pending());
                    Poll::Ready(())
                })
                .await;
                let polled = set.member_polls - before;
                // The next poll has a fresh budget: nothing was lost.
                let mut total = 0;
                while let Some(result) = set.join_next().await {
                    total += result.unwrap();
                }
                (first, polled, total)
            });
            assert_eq!(first, Some(true), "{flavor}: Pending with no budget");
            assert_eq!(polled, 0, "{flavor}: member polls with no budget");
            assert_eq!(total, MEMBERS * (MEMBERS - 1) / 2, "{flavor}");
        }
    }

    /// A completing join spends exactly one unit: 1,000 finished members
    /// are joined in ceil(1000 / 128) = 8 task polls.
    #[test]
    fn join_next_spends_one_unit_per_join_and_polls_one_member_each() {
        for (flavor, mut builder) in flavors() {
            let rt = builder.build().unwrap();
            let (polls, member_polls) = rt.block_on(async {
                let mut set = finished_set().await;
                yield_now().await; // a fresh budget
                let before = set.member_polls;
                let mut polls = 0;
                let mut joined = 0;
                poll_fn(|cx| {
                    polls += 1;
                    loop {
                        match set.poll_join_next(cx) {
                            Poll::Ready(Some(result)) => {
                                result.unwrap();
                                joined += 1;
                            }
                            Poll::Ready(None) => return Poll::Ready(()),
                            Poll::Pending => return Poll::Pending,
                        }
                    }
                })
                .await;
                assert_eq!(joined, MEMBERS);
                (polls, set.member_polls - before)
            });
            assert_eq!(polls, 8, "{flavor}: task polls");
            assert_eq!(member_polls, MEMBERS, "{flavor}: member polls");
        }
    }
}
