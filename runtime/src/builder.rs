//! [`Builder`]: configures and builds a [`Runtime`].

use std::fmt;
use std::io;

use tempo_park::Park;

use crate::driver::Driver;
use crate::runtime::Runtime;
use crate::scheduler::basic::Core;

/// Configures a [`Runtime`].
///
/// ```
/// use tempo::runtime::Builder;
///
/// let rt = Builder::new_current_thread()
///     .event_interval(31)
///     .build()
///     .unwrap();
/// assert_eq!(rt.block_on(async { 5 }), 5);
/// ```
pub struct Builder {
    event_interval: u32,
    driver: Option<Box<dyn FnOnce() -> Driver + Send>>,
}

impl Builder {
    /// A builder for a runtime that runs every task on the thread that
    /// builds it (the basic scheduler).
    pub fn new_current_thread() -> Builder {
        Builder {
            event_interval: 61,
            driver: None,
        }
    }

    /// The poll budget: how many task polls the scheduler makes before it
    /// polls the driver again, even if tasks are still ready, so that a task
    /// that keeps waking itself cannot starve I/O, timers or tasks from
    /// other threads. Default 61, like tokio.
    ///
    /// # Panics
    ///
    /// Panics if `interval` is 0.
    pub fn event_interval(&mut self, interval: u32) -> &mut Builder {
        assert!(interval > 0, "event_interval must be at least 1");
        self.event_interval = interval;
        self
    }

    /// Puts a custom driver under the scheduler instead of the default one:
    /// the scheduler calls its `park` / `park_timeout` when it has nothing
    /// to run and its `Unpark` when another thread spawns or wakes a task
    /// while it is parked. See [`tempo_park`]'s contract.
    ///
    /// The driver's error type must be a `std::error::Error + Send + Sync`
    /// (an `io::Error`, or `Infallible`): the runtime panics with it if a
    /// park fails, as it does for its own drivers.
    ///
    /// The driver is used by the next [`build`](Builder::build) only.
    pub fn with_park<P>(&mut self, park: P) -> &mut Builder
    where
        P: Park + Send + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        self.driver = Some(Box::new(move || Driver::new(park)));
        self
    }

    /// Builds the runtime on this thread.
    pub fn build(&mut self) -> io::Result<Runtime> {
        let driver = match self.driver.take() {
            Some(make) => make(),
            None => Driver::park_thread(),
        };
        Ok(Runtime::from_core(Core::new(driver, self.event_interval)))
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("event_interval", &self.event_interval)
            .field("custom_driver", &self.driver.is_some())
            .finish()
    }
}
