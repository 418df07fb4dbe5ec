//! [`Handle`]: a `Send + Sync` reference to a runtime, for other threads.

use std::fmt;
use std::future::Future;
use std::sync::Arc;

use crate::context;
use crate::scheduler::basic::Shared;
use crate::task::JoinHandle;

/// A cheap, cloneable reference to a [`Runtime`](crate::runtime::Runtime)
/// that can spawn onto it from any thread.
///
/// A spawn from the runtime's own thread goes to its local run queue; from
/// another thread it goes through the injection queue and wakes the
/// runtime's thread only if that thread is parked.
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// let handle = rt.handle().clone();
/// let join = std::thread::spawn(move || handle.spawn(async { 1 + 1 }))
///     .join()
///     .unwrap();
/// assert_eq!(rt.block_on(join).unwrap(), 2);
/// ```
#[derive(Clone)]
pub struct Handle {
    pub(crate) shared: Arc<Shared>,
}

/// The error of [`Handle::try_current`]: this thread is not in a Tempo
/// runtime.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TryCurrentError(());

impl fmt::Display for TryCurrentError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(
            "there is no Tempo runtime on this thread: call this from inside \
             Runtime::block_on, a task, or after Runtime::enter",
        )
    }
}

impl std::error::Error for TryCurrentError {}

impl Handle {
    /// Returns the handle of the runtime entered on this thread.
    ///
    /// # Panics
    ///
    /// Panics outside a runtime; see [`try_current`](Handle::try_current).
    #[track_caller]
    pub fn current() -> Handle {
        match Handle::try_current() {
            Ok(handle) => handle,
            Err(e) => panic!("Handle::current: {e}"),
        }
    }

    /// Returns the handle of the runtime entered on this thread, or an
    /// error if there is none.
    pub fn try_current() -> Result<Handle, TryCurrentError> {
        context::with_core(|core| Handle {
            shared: core.shared.clone(),
        })
        .ok_or(TryCurrentError(()))
    }

    /// Spawns a future onto the runtime, from any thread.
    ///
    /// If the runtime has shut down, the future is dropped and the returned
    /// handle resolves to a cancelled [`JoinError`](crate::task::JoinError).
    pub fn spawn<F>(&self, future: F) -> JoinHandle<F::Output>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        self.shared.spawn(future)
    }

    /// Number of driver unparks issued by remote spawns/wakes; for tests
    /// and metrics.
    ///
    /// A spawn or wake from the runtime's own thread never unparks, and one
    /// from another thread unparks only when the runtime's thread is parked
    /// (a burst of them to a parked thread unparks once).
    pub fn unpark_count(&self) -> u64 {
        self.shared.unpark_count()
    }
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle")
            .field("shared", &self.shared)
            .finish()
    }
}
