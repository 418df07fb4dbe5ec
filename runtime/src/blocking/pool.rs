//! The blocking pool: threads that run `spawn_blocking` closures, bounded
//! so a burst queues instead of starting thousands of threads, started on
//! demand and exiting after the keep-alive.
//!
//! The protocol, all under `state`'s lock:
//!
//! * **Spawn**: queue the task; if a thread is idle, take it out of the
//!   idle count, leave it a notification and signal `worker_cv`; else
//!   start a thread below the maximum. After shutdown, cancel the task.
//! * **Worker**: run queued tasks, then wait idle on `worker_cv` up to the
//!   keep-alive; on waking check, in order, a notification (run), shutdown
//!   (exit), timeout (exit). Notification first: a spawn that counted on
//!   this thread is run even if the wait timed out (loom model
//!   `loom-tests/tests/blocking_pool.rs`: no task lost).
//! * **Shutdown**: set `shutdown`, cancel every queued task, wake the idle
//!   threads, wait on `shutdown_cv` until none is left or the deadline;
//!   running closures are detached. A second shutdown does not wait.

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
    /// Live workers' thread handles, joined at shutdown (a keep-alive exit
    /// detaches its own).
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
    /// Panics if the pool has no thread and the OS refuses to start one.
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
                    // Nothing would run the task: panic, as tokio does.
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

    /// Starts one worker; the lock is held, so its bookkeeping is in place
    /// before it looks at the state.
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

    /// Shuts the pool down and waits for its threads at most `timeout`
    /// (`None`: no limit); `true` if all exited. Only the first call waits.
    pub(crate) fn shutdown(&self, timeout: Option<Duration>) -> bool {
        let mut state = self.inner.state.lock();
        if state.shutdown {
            return state.num_threads == 0;
        }
        state.shutdown = true;
        let queued = std::mem::take(&mut state.queue);
        self.inner.worker_cv.notify_all();
        drop(state);
        // Cancelled outside the lock: dropping a closure runs user code.
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
        // Join the exited threads, so their thread-locals are gone too.
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
                    // A spawn counted on this thread: run its task, even
                    // if the wait timed out.
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
