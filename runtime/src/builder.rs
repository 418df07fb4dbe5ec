//! [`Builder`]: configures and builds a [`Runtime`].

use std::fmt;
use std::io;
use std::sync::Arc;
use std::time::Duration;

use tempo_park::Park;

use crate::blocking::{BlockingPool, PoolConfig};
use crate::driver::{Driver, DriverConfig, HostPark, IoBackend};
use crate::runtime::Runtime;
use crate::scheduler::{Flavor, Scheduler, SchedulerConfig, ThrottleConfig};

/// The longest throttling period [`Builder::max_throttling`] accepts; past
/// it, batching turns into a stalled runtime.
pub const MAX_THROTTLING: Duration = Duration::from_secs(1);

/// The shortest non-zero throttling period: the timer wheel's resolution.
pub const MIN_THROTTLING: Duration = Duration::from_millis(1);

/// When a timer fires relative to its deadline, under a throttling
/// scheduler of period `T` (with `T = 0` both rules are the same: never
/// early, late by the time the scheduler takes to notice).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum TimerPolicy {
    /// Fire at the tick nearest the deadline: error within `±T/2`, mean
    /// about zero. The default; what GStreamer's threadshare does.
    #[default]
    NearestTick,
    /// Never fire before the deadline: error in `[0, T]` (tokio's rule);
    /// [`time::sleep_at_least`](crate::time::sleep_at_least) gives it per timer.
    NeverEarly,
}

/// Builds a [`Runtime`] with custom settings.
///
/// ```
/// use std::time::Duration;
///
/// // The throttling scheduler, with I/O and timers: one wake-up per 20 ms at most.
/// let rt = tempo::runtime::Builder::new_current_thread()
///     .enable_all()
///     .max_throttling(Duration::from_millis(20))
///     .build()?;
/// # drop(rt);
/// # Ok::<(), std::io::Error>(())
/// ```
pub struct Builder {
    event_interval: u32,
    tick_budget: u32,
    max_throttling: Duration,
    timer_policy: TimerPolicy,
    enable_io: bool,
    enable_time: bool,
    start_paused: bool,
    custom_park: Option<HostPark>,
    /// An earlier `build` took the driver of `with_park` / `with_park_fn`.
    custom_park_taken: bool,
    blocking: PoolConfig,
    /// The I/O driver's events buffer; `None`: the driver's default.
    io_events_capacity: Option<usize>,
}

impl Builder {
    /// A builder for a single-thread runtime: the basic scheduler, no I/O,
    /// no timers (enable them with [`enable_all`](Self::enable_all)).
    pub fn new_current_thread() -> Builder {
        Builder {
            event_interval: 61,
            tick_budget: 16_384,
            max_throttling: Duration::ZERO,
            timer_policy: TimerPolicy::NearestTick,
            enable_io: false,
            enable_time: false,
            start_paused: false,
            custom_park: None,
            custom_park_taken: false,
            blocking: PoolConfig::default(),
            io_events_capacity: None,
        }
    }

    /// Enables the I/O driver ([`tempo::net`](crate::net)).
    pub fn enable_io(&mut self) -> &mut Builder {
        self.enable_io = true;
        self
    }

    /// Enables the timer driver ([`tempo::time`](crate::time)).
    pub fn enable_time(&mut self) -> &mut Builder {
        self.enable_time = true;
        self
    }

    /// Enables I/O and timers.
    pub fn enable_all(&mut self) -> &mut Builder {
        self.enable_io().enable_time()
    }

    /// Starts the runtime's clock paused (enable time too): a runtime with
    /// nothing to do but wait jumps to the next deadline at once, so tests of
    /// long timeouts run instantly. See [`time::pause`](crate::time::pause).
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo::time::{sleep, Instant};
    ///
    /// let rt = tempo::runtime::Builder::new_current_thread()
    ///     .enable_time()
    ///     .start_paused(true)
    ///     .build()?;
    /// rt.block_on(async {
    ///     let start = Instant::now();
    ///     sleep(Duration::from_secs(24 * 3600)).await; // a day, at once
    ///     assert!(start.elapsed() >= Duration::from_secs(24 * 3600));
    /// });
    /// # Ok::<(), std::io::Error>(())
    /// ```
    pub fn start_paused(&mut self, paused: bool) -> &mut Builder {
        self.start_paused = paused;
        self
    }

    /// Selects the throttling scheduler with period `period`: the thread wakes
    /// at most once per `period`, and an idle runtime blocks costing no CPU
    /// (`docs/schedulers-and-ticks.md`). `Duration::ZERO` (the default) selects
    /// the basic scheduler; otherwise [`MIN_THROTTLING`] to [`MAX_THROTTLING`],
    /// else [`build`](Self::build) fails with `InvalidInput`.
    pub fn max_throttling(&mut self, period: Duration) -> &mut Builder {
        self.max_throttling = period;
        self
    }

    /// When timers fire relative to their deadline under throttling; see
    /// [`TimerPolicy`].
    pub fn timer_policy(&mut self, policy: TimerPolicy) -> &mut Builder {
        self.timer_policy = policy;
        self
    }

    /// The basic scheduler polls the driver at least once per `interval` task
    /// polls, so a self-waking task cannot starve I/O and timers. Default 61.
    /// Panics if `interval` is zero.
    #[track_caller]
    pub fn event_interval(&mut self, interval: u32) -> &mut Builder {
        assert!(interval > 0, "event_interval must be at least 1");
        self.event_interval = interval;
        self
    }

    /// The throttling scheduler polls at most `budget` tasks per tick; a tick
    /// that hits it is an overrun and the next starts at once. Default 16,384.
    /// Panics if `budget` is zero.
    #[track_caller]
    pub fn tick_budget(&mut self, budget: u32) -> &mut Builder {
        assert!(budget > 0, "tick_budget must be at least 1");
        self.tick_budget = budget;
        self
    }

    /// The most readiness events one `epoll_wait` takes (default 1,024 basic,
    /// 4,096 throttled). A full buffer polls again at once, so a smaller one
    /// costs syscalls, never a later tick.
    /// Panics if `capacity` is zero.
    #[track_caller]
    pub fn io_events_capacity(&mut self, capacity: usize) -> &mut Builder {
        assert!(capacity > 0, "io_events_capacity must be at least 1");
        self.io_events_capacity = Some(capacity);
        self
    }

    /// The most threads the blocking pool runs at once (started on demand);
    /// more closures wait in a queue. Default 512.
    /// Panics if `max` is zero.
    #[track_caller]
    pub fn max_blocking_threads(&mut self, max: usize) -> &mut Builder {
        assert!(max > 0, "max_blocking_threads must be at least 1");
        self.blocking.max_threads = max;
        self
    }

    /// How long an idle blocking pool thread waits before it exits. Default 10 s.
    pub fn thread_keep_alive(&mut self, keep_alive: Duration) -> &mut Builder {
        self.blocking.keep_alive = keep_alive;
        self
    }

    /// The name of the blocking pool's threads (default `"tempo-blocking"`).
    /// The runtime itself runs on the caller of `block_on` or `turn`, not renamed.
    pub fn thread_name(&mut self, name: impl Into<String>) -> &mut Builder {
        let name = name.into();
        self.blocking.thread_name = Arc::new(move || name.clone());
        self
    }

    /// Like [`thread_name`](Self::thread_name), calling `f` for each new thread.
    pub fn thread_name_fn<F>(&mut self, f: F) -> &mut Builder
    where
        F: Fn() -> String + Send + Sync + 'static,
    {
        self.blocking.thread_name = Arc::new(f);
        self
    }

    /// Puts a custom driver (a host's poll loop or clock, or
    /// [`ParkThread`](tempo_park::ParkThread)) under the scheduler in place of
    /// the I/O driver; with [`enable_time`](Self::enable_time) the timer driver
    /// wraps it. `park` follows the [`tempo_park`] contract; its errors become
    /// `io::Error`s. Combined with [`enable_io`](Self::enable_io),
    /// [`build`](Self::build) fails: to keep sockets, use
    /// [`with_park_fn`](Self::with_park_fn).
    pub fn with_park<P>(&mut self, park: P) -> &mut Builder
    where
        P: Park + Send + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        self.custom_park = Some(HostPark::replace(park));
        self.custom_park_taken = false;
        self
    }

    /// Puts a host's driver that *wraps* Tempo's I/O driver under the
    /// scheduler: `make` (run once, by [`build`](Self::build)) receives the I/O
    /// driver and returns the host's [`Park`], which parks it and may poll the
    /// host's sources too. Implies [`enable_io`](Self::enable_io). The host's
    /// driver forwards `park*`, `unpark` and `stats` per [`tempo_park`].
    ///
    /// ```
    /// use std::time::Duration;
    /// use tempo::park::{DriverStats, Park};
    /// use tempo::runtime::IoReactor;
    ///
    /// struct HostPark {
    ///     io: IoReactor,
    /// }
    ///
    /// impl Park for HostPark {
    ///     type Unpark = <IoReactor as Park>::Unpark;
    ///     type Error = std::io::Error;
    ///
    ///     fn unpark(&self) -> Self::Unpark {
    ///         self.io.unpark()
    ///     }
    ///     fn park(&mut self) -> std::io::Result<()> {
    ///         self.io.park() // ... and the host's own sources
    ///     }
    ///     fn park_timeout(&mut self, d: Duration) -> std::io::Result<()> {
    ///         self.io.park_timeout(d)
    ///     }
    ///     fn stats(&self) -> DriverStats {
    ///         self.io.stats()
    ///     }
    /// }
    ///
    /// let rt = tempo::runtime::Builder::new_current_thread()
    ///     .enable_time()
    ///     .with_park_fn(|io| HostPark { io })
    ///     .build()
    ///     .unwrap();
    /// let port = rt.block_on(async {
    ///     let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
    ///     socket.local_addr().map(|a| a.port())
    /// });
    /// assert_ne!(port.unwrap(), 0);
    /// ```
    pub fn with_park_fn<F, P>(&mut self, make: F) -> &mut Builder
    where
        F: FnOnce(crate::runtime::IoReactor) -> P + Send + 'static,
        P: Park + 'static,
        P::Error: std::error::Error + Send + Sync + 'static,
    {
        self.custom_park = Some(HostPark::wrap_io(make));
        self.custom_park_taken = false;
        self
    }

    /// Builds the runtime. The builder can be reused, except that the first
    /// build takes a driver given to [`with_park`](Self::with_park) or
    /// [`with_park_fn`](Self::with_park_fn).
    ///
    /// # Errors
    ///
    /// `InvalidInput` for a [`max_throttling`](Self::max_throttling) out of
    /// range, `with_park` with `enable_io`, or a host driver already taken; the
    /// OS error if the I/O driver cannot be created.
    pub fn build(&mut self) -> io::Result<Runtime> {
        let flavor = self.flavor()?;
        if self.enable_io && self.custom_park.as_ref().is_some_and(HostPark::replaces_io) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "with_park replaces the I/O driver: do not combine it with enable_io / \
                 enable_all (use enable_time to put timers on top of the custom driver, \
                 or with_park_fn to wrap the I/O driver in the custom one)",
            ));
        }
        if self.custom_park_taken && self.custom_park.is_none() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "the driver given to with_park / with_park_fn was taken by an earlier build(): \
                 give the builder a new one before building again",
            ));
        }
        let host_park = self.custom_park.take();
        self.custom_park_taken |= host_park.is_some();
        let driver = Driver::build(&self.driver_config(flavor), host_park)?;
        let blocking = BlockingPool::new(self.blocking.clone());
        if let Some(io) = &driver.handles().io {
            crate::net::resolve_on_pool(io, &blocking);
        }
        let (core, scheduler) = Scheduler::build(driver, self.scheduler_config(flavor), blocking);
        Ok(Runtime::new(core, scheduler))
    }

    /// Which scheduler the settings select: the one place that decides
    /// throttling, its period, firing window and tick budget.
    fn flavor(&self) -> io::Result<Flavor> {
        let period = self.max_throttling;
        if period.is_zero() {
            return Ok(Flavor::Basic);
        }
        if !(MIN_THROTTLING..=MAX_THROTTLING).contains(&period) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "max_throttling of {period:?} is out of range: use Duration::ZERO for the \
                     basic scheduler, or a period from 1 ms to 1 s (typically 5 to 20 ms)"
                ),
            ));
        }
        let firing_window = match self.timer_policy {
            TimerPolicy::NearestTick => period / 2,
            TimerPolicy::NeverEarly => Duration::ZERO,
        };
        Ok(Flavor::Throttle(ThrottleConfig {
            period,
            firing_window,
            tick_budget: self.tick_budget,
        }))
    }

    /// The driver stack's configuration under `flavor`.
    fn driver_config(&self, flavor: Flavor) -> DriverConfig {
        DriverConfig {
            io: self.enable_io.then_some(IoBackend::default()),
            enable_time: self.enable_time,
            start_paused: self.start_paused,
            firing_window: flavor.firing_window(),
            // The policy, not the flavor: the timer driver is told even when basic.
            never_early: self.timer_policy == TimerPolicy::NeverEarly,
            pass_period: flavor.period(),
            throttled: flavor.throttles_io(),
            io_events_capacity: self.io_events_capacity.or(flavor.io_events_capacity()),
        }
    }

    /// The scheduler's configuration under `flavor`.
    fn scheduler_config(&self, flavor: Flavor) -> SchedulerConfig {
        SchedulerConfig {
            event_interval: self.event_interval,
            flavor,
        }
    }
}

impl fmt::Debug for Builder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Builder")
            .field("max_throttling", &self.max_throttling)
            .field("timer_policy", &self.timer_policy)
            .field("enable_io", &self.enable_io)
            .field("enable_time", &self.enable_time)
            .field("start_paused", &self.start_paused)
            .field("event_interval", &self.event_interval)
            .field("tick_budget", &self.tick_budget)
            .field("custom_park", &self.custom_park.is_some())
            .field("blocking", &self.blocking)
            .field("io_events_capacity", &self.io_events_capacity)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    //! The builder's one flavor decision, and the configurations that
    //! follow from it.

    use super::*;

    const T: Duration = Duration::from_millis(20);

    fn configs(builder: &Builder) -> (Flavor, DriverConfig, SchedulerConfig) {
        let flavor = builder.flavor().unwrap();
        (
            flavor,
            builder.driver_config(flavor),
            builder.scheduler_config(flavor),
        )
    }

    #[test]
    fn basic_turns_every_throttling_switch_off() {
        let mut builder = Builder::new_current_thread();
        builder.enable_all().event_interval(31);
        let (flavor, driver, scheduler) = configs(&builder);
        assert_eq!(flavor, Flavor::Basic);
        assert_eq!(driver.firing_window, Duration::ZERO);
        assert_eq!(driver.pass_period, Duration::ZERO);
        assert!(!driver.throttled);
        assert!(!driver.never_early);
        assert_eq!(driver.io_events_capacity, None, "the driver's 1,024");
        assert_eq!(scheduler.flavor, Flavor::Basic);
        assert_eq!(scheduler.event_interval, 31);
    }

    #[test]
    fn throttling_takes_a_larger_events_buffer_unless_one_is_set() {
        let mut builder = Builder::new_current_thread();
        builder.enable_all().max_throttling(T);
        let (_, driver, _) = configs(&builder);
        assert_eq!(driver.io_events_capacity, Some(4096));
        builder.io_events_capacity(64);
        let (_, driver, _) = configs(&builder);
        assert_eq!(driver.io_events_capacity, Some(64), "the builder's wins");
    }

    #[test]
    fn throttled_nearest_tick_fires_within_half_a_period() {
        let mut builder = Builder::new_current_thread();
        builder.enable_all().max_throttling(T).tick_budget(100);
        let (flavor, driver, scheduler) = configs(&builder);
        let expected = ThrottleConfig {
            period: T,
            firing_window: T / 2,
            tick_budget: 100,
        };
        assert_eq!(flavor, Flavor::Throttle(expected));
        assert_eq!(driver.firing_window, T / 2);
        assert_eq!(driver.pass_period, T);
        assert!(driver.throttled);
        assert!(!driver.never_early);
        assert_eq!(scheduler.flavor, Flavor::Throttle(expected));
        assert_eq!(scheduler.event_interval, 61);
    }

    #[test]
    fn throttled_never_early_has_no_firing_window() {
        let mut builder = Builder::new_current_thread();
        builder
            .enable_all()
            .max_throttling(T)
            .timer_policy(TimerPolicy::NeverEarly);
        let (flavor, driver, scheduler) = configs(&builder);
        let expected = ThrottleConfig {
            period: T,
            firing_window: Duration::ZERO,
            tick_budget: 16_384,
        };
        assert_eq!(flavor, Flavor::Throttle(expected));
        assert_eq!(driver.firing_window, Duration::ZERO);
        assert_eq!(driver.pass_period, T);
        assert!(driver.throttled);
        assert!(driver.never_early);
        assert_eq!(scheduler.flavor, Flavor::Throttle(expected));
    }

    #[test]
    fn never_early_reaches_the_timer_driver_without_throttling() {
        let mut builder = Builder::new_current_thread();
        builder.enable_time().timer_policy(TimerPolicy::NeverEarly);
        let (flavor, driver, _) = configs(&builder);
        assert_eq!(flavor, Flavor::Basic);
        assert!(driver.never_early);
        assert_eq!(driver.firing_window, Duration::ZERO);
        assert!(!driver.throttled);
    }

    #[test]
    fn an_out_of_range_period_is_refused_by_the_decision() {
        let mut builder = Builder::new_current_thread();
        builder.max_throttling(MAX_THROTTLING + Duration::from_millis(1));
        let error = builder.flavor().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
        builder.max_throttling(Duration::from_micros(500));
        let error = builder.flavor().unwrap_err();
        assert_eq!(error.kind(), io::ErrorKind::InvalidInput);
    }
}
