//! The blocking pool: threads that run `spawn_blocking` closures.
//!
//! # Why a pool, and why bounded
//!
//! A Tempo runtime runs every task on one thread, so a task that blocks
//! (a file read, a DNS lookup, a CPU-heavy computation) stalls every other
//! task of that runtime. The pool gives such work threads of its own. It is
//! bounded ([`Builder::max_blocking_threads`](crate::runtime::Builder::max_blocking_threads),
//! 512 by default as in tokio) so that a burst of blocking calls queues up
//! instead of starting thousands of threads; it starts threads only when a
//! closure arrives and no thread is idle, and an idle thread exits after
//! [`thread_keep_alive`](crate::runtime::Builder::thread_keep_alive) (10 s
//! by default), so a runtime that never blocks costs no thread.
//!
//! # The protocol (one mutex, two condition variables)
//!
//! Everything is decided under `state`'s lock:
//!
//! * **Spawn**: push the task on the queue. If a thread is idle, take it
//!   out of the idle count (`num_idle -= 1`), leave it a notification
//!   (`num_notify += 1`) and signal `worker_cv`. Otherwise start a thread
//!   if below the maximum; at the maximum the task waits for a busy thread.
//!   After shutdown the task is cancelled at once instead.
//! * **Worker**: run tasks from the queue until it is empty; then become
//!   idle (`num_idle += 1`) and wait on `worker_cv` for up to the
//!   keep-alive. On waking it checks, in this order: a notification left
//!   for it (consume it, go back to the queue), shutdown (exit), timeout
//!   (leave the idle count, exit). Checking the notification first is what
//!   makes a spawn that races the last idle thread's time-out safe: the
//!   spawner saw the thread in the idle count and counted on it, so the
//!   thread runs the task even though its wait timed out (the loom model
//!   `loom-tests/tests/blocking_pool.rs` checks that no task is lost).
//! * **Shutdown**: set `shutdown`, take every queued task (they are
//!   cancelled: their JoinHandles resolve to a cancelled `JoinError`), wake
//!   every idle thread, and wait on `shutdown_cv` until no thread is left,
//!   at most until the deadline. Running closures cannot be interrupted:
//!   threads still running one at the deadline are detached and exit when
//!   it returns. A second shutdown does not wait again.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::sync::{thread, Condvar, Mutex};
use crate::task::{self, JoinHandle, UnownedTask};

/// The default of [`Builder::max_blocking_threads`](crate::runtime::Builder::max_blocking_threads).
pub(crate) const DEFAULT_MAX_THREADS: usize = 512;
/// The default of [`Builder::thread_keep_alive`](crate::runtime::Builder::thread_keep_alive).
pub(crate) const DEFAULT_KEEP_ALIVE: Duration = Duration::from_secs(10);
/// The default of [`Builder::thread_name`](crate::runtime::Builder::thread_name).
pub(crate) const DEFAULT_THREAD_NAME: &str = "tempo-blocking";

/// Makes the name of each new pool thread.
pub(crate) type ThreadNameFn = Arc<dyn Fn() -> String + Send + Sync + 'static>;

/// The pool's settings, from the builder.
#[derive(Clone)]
pub(crate) struct PoolConfig {
    pub(crate) max_threads: usize,
    pub(crate) keep_alive: Duration,
    pub(crate) thread_name: ThreadNameFn,
}

impl Default for PoolConfig {
    fn default() -> PoolConfig {
        PoolConfig {
            max_threads: DEFAULT_MAX_THREADS,
            keep_alive: DEFAULT_KEEP_ALIVE,
            thread_name: Arc::new(|| DEFAULT_THREAD_NAME.to_owned()),
        }
    }
}

impl fmt::Debug for PoolConfig {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PoolConfig")
            .field("max_threads", &self.max_threads)
            .field("keep_alive", &self.keep_alive)
            .finish_non_exhaustive()
    }
}

/// A handle to a blocking pool; clones share the pool.
#[derive(Clone)]
pub(crate) struct BlockingPool {
    inner: Arc<PoolInner>,
}

struct PoolInner {
    state: Mutex<PoolState>,
    /// Idle workers wait here for a task or shutdown.
    worker_cv: Condvar,
    /// Shutdown waits here for the last worker to exit.
    shutdown_cv: Condvar,
    config: PoolConfig,
}

struct PoolState {
    /// Tasks not started yet.
    queue: VecDeque<UnownedTask>,
    /// Live worker threads (running a task, looking for one, or idle).
    num_threads: usize,
    /// Workers waiting on `worker_cv` that no spawn has counted on yet.
    num_idle: usize,
    /// Notifications left for idle workers by spawns (see the module docs).
    num_notify: usize,
    shutdown: bool,
    /// The thread handles of live workers, joined at shutdown; a worker
    /// that exits on its keep-alive removes (detaches) its own.
    workers: HashMap<usize, thread::JoinHandle<()>>,
    next_worker_id: usize,
}

/// What the pool looks like right now, for [`RuntimeMetrics`](crate::runtime::RuntimeMetrics).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PoolStats {
    pub(crate) threads: usize,
    pub(crate) idle_threads: usize,
    pub(crate) queue_depth: usize,
}

impl BlockingPool {
    pub(crate) fn new(config: PoolConfig) -> BlockingPool {
        assert!(
            config.max_threads > 0,
            "a blocking pool needs at least one thread"
        );
        BlockingPool {
            inner: Arc::new(PoolInner {
                state: Mutex::new(PoolState {
                    queue: VecDeque::new(),
                    num_threads: 0,
                    num_idle: 0,
                    num_notify: 0,
                    shutdown: false,
                    workers: HashMap::new(),
                    next_worker_id: 0,
                }),
                worker_cv: Condvar::new(),
                shutdown_cv: Condvar::new(),
                config,
            }),
        }
    }

    /// Runs `f` on a pool thread; see [`spawn_blocking`](crate::task::spawn_blocking).
    ///
    /// # Panics
    ///
    /// If the pool has no thread and the OS refuses to start one.
    #[track_caller]
    pub(crate) fn spawn<F, R>(&self, f: F) -> JoinHandle<R>
    where
        F: FnOnce() -> R + Send + 'static,
        R: Send + 'static,
    {
        let (task, join) = task::unowned(f);
        let mut state = self.inner.state.lock();
        if state.shutdown {
            drop(state);
            // Dropping an unrun task cancels it: the JoinHandle says so.
            drop(task);
            return join;
        }
        state.queue.push_back(task);
        if state.num_idle > 0 {
            state.num_idle -= 1;
            state.num_notify += 1;
            self.inner.worker_cv.notify_one();
        } else if state.num_threads < self.inner.config.max_threads {
            if let Err(error) = self.start_worker(&mut state) {
                if state.num_threads == 0 {
                    // Nothing would ever run the task: give up loudly, as
                    // tokio does, rather than leave the JoinHandle pending.
                    let task = state.queue.pop_back();
                    drop(state);
                    drop(task);
                    panic!("tempo: the OS cannot start a blocking pool thread: {error}");
                }
                // Otherwise a running thread takes the task when it is done.
            }
        }
        join
    }

    /// Starts one worker thread; called with the lock held, so the worker
    /// cannot look at the state before its bookkeeping is in place.
    fn start_worker(&self, state: &mut PoolState) -> io::Result<()> {
        let id = state.next_worker_id;
        let inner = self.inner.clone();
        let handle = thread::Builder::new()
            .name((self.inner.config.thread_name)())
            .spawn(move || inner.run_worker(id))?;
        state.next_worker_id += 1;
        state.num_threads += 1;
        state.workers.insert(id, handle);
        Ok(())
    }

    /// Shuts the pool down (see the module docs) and waits for its threads
    /// to exit, at most `timeout` (`None`: as long as it takes). Returns
    /// `true` if every thread exited. Only the first call waits.
    pub(crate) fn shutdown(&self, timeout: Option<Duration>) -> bool {
        let mut state = self.inner.state.lock();
        if state.shutdown {
            return state.num_threads == 0;
        }
        state.shutdown = true;
        let queued = std::mem::take(&mut state.queue);
        self.inner.worker_cv.notify_all();
        drop(state);
        // Cancel the queued tasks outside the lock: dropping a closure runs
        // user code, which may even spawn_blocking (and be refused).
        drop(queued);

        let deadline = timeout.and_then(|timeout| Instant::now().checked_add(timeout));
        let mut state = self.inner.state.lock();
        while state.num_threads > 0 {
            match (timeout, deadline) {
                // A timeout too long for an Instant, or none: wait for good.
                (None, _) | (Some(_), None) => state = self.inner.shutdown_cv.wait(state),
                (Some(_), Some(deadline)) => {
                    let now = Instant::now();
                    if now >= deadline {
                        break;
                    }
                    let (guard, _timed_out) = self.inner.shutdown_cv.wait_timeout(
                        state,
                        deadline - now,
                        &self.inner.state,
                    );
                    state = guard;
                }
            }
        }
        let all_exited = state.num_threads == 0;
        // Join the exited threads, so that their thread-locals are gone
        // too when shutdown returns; threads still running are detached.
        let workers = if all_exited {
            std::mem::take(&mut state.workers)
        } else {
            HashMap::new()
        };
        drop(state);
        for (_, worker) in workers {
            let _ = worker.join();
        }
        all_exited
    }

    /// Threads, idle threads and queued tasks right now.
    pub(crate) fn stats(&self) -> PoolStats {
        let state = self.inner.state.lock();
        PoolStats {
            threads: state.num_threads,
            idle_threads: state.num_idle,
            queue_depth: state.queue.len(),
        }
    }
}

impl PoolInner {
    /// A worker thread's life: run queued tasks, wait idle for more, exit
    /// on keep-alive or shutdown.
    fn run_worker(&self, id: usize) {
        let mut state = self.state.lock();
        'work: loop {
            while let Some(task) = state.queue.pop_front() {
                drop(state);
                task.run();
                state = self.state.lock();
            }
            if state.shutdown {
                break 'work;
            }
            state.num_idle += 1;
            loop {
                let (guard, timed_out) =
                    self.worker_cv
                        .wait_timeout(state, self.config.keep_alive, &self.state);
                state = guard;
                if state.num_notify > 0 {
                    // A spawn counted on this thread (and already took it
                    // out of the idle count): go and run its task, even if
                    // the wait timed out meanwhile.
                    state.num_notify -= 1;
                    continue 'work;
                }
                if state.shutdown || timed_out {
                    state.num_idle -= 1;
                    break 'work;
                }
                // A spurious wake-up: wait again.
            }
        }
        state.num_threads -= 1;
        if state.shutdown {
            // Shutdown joins this thread; tell it when the last one is done.
            if state.num_threads == 0 {
                self.shutdown_cv.notify_all();
            }
        } else {
            // Exiting on keep-alive: nobody will join this thread.
            drop(state.workers.remove(&id));
        }
    }
}

impl fmt::Debug for BlockingPool {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("BlockingPool")
            .field("config", &self.inner.config)
            .field("stats", &self.stats())
            .finish()
    }
}
