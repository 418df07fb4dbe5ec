//! Timers: [`sleep`], [`interval`], [`timeout`] and the paused clock, from
//! [`tempo_time`], with tokio's names.
//!
//! They need a runtime built with
//! [`enable_time`](crate::runtime::Builder::enable_time) (or
//! `enable_all`). Under the throttling scheduler, a timer fires at the tick
//! nearest its deadline (error within `±T/2`) unless it is created with
//! [`sleep_at_least`] / [`interval_at_least`] or the runtime uses
//! [`TimerPolicy::NeverEarly`](crate::runtime::TimerPolicy::NeverEarly).
//! On both schedulers a timer whose deadline is in the future never
//! completes in the poll that created it (under throttling it fires at a
//! later tick), so `loop { sleep(d).await }` costs at most one poll per
//! tick; a waker that panics while the driver wakes due timers does not
//! keep the others from being woken (its panic is re-raised after).
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
    advance, error, interval, interval_at, interval_at_least, pause, resume, sleep, sleep_at_least,
    sleep_until, timeout, timeout_at, Instant, Interval, MissedTickBehavior, Sleep, Timeout,
    TimerErrorHistogram,
};
