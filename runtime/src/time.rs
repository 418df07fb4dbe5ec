//! Timers: [`sleep`], [`interval`], [`timeout`] and the paused clock, from
//! [`tempo_time`] (whose crate docs give the timer rules), with tokio's
//! names. They need a runtime built with
//! [`enable_time`](crate::runtime::Builder::enable_time) (or `enable_all`).
//!
//! ```
//! use std::time::Duration;
//!
//! let rt = tempo::runtime::Builder::new_current_thread()
//!     .enable_time()
//!     .start_paused(true)
//!     .build()
//!     .unwrap();
//! rt.block_on(async {
//!     let start = tempo::time::Instant::now();
//!     tempo::time::sleep(Duration::from_secs(3600)).await; // instant: paused clock
//!     assert!(start.elapsed() >= Duration::from_secs(3600));
//! });
//! ```

pub use tempo_time::{
    advance, error, interval_at, interval_at_least, pause, resume, sleep_at_least, sleep_until,
    timeout_at, Instant, Interval, MissedTickBehavior, Sleep, Timeout, TimerErrorHistogram,
};

/// Waits until `duration` has elapsed (see the module example).
pub use tempo_time::sleep;

/// A stream of ticks every `period`, the first at once.
pub use tempo_time::interval;

/// Gives up on `future` if it has not completed after `duration`.
pub use tempo_time::timeout;
