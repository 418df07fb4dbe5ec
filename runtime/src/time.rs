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

/// Waits until `duration` has elapsed: [`tempo_time::sleep`] (see the
/// module example).
pub use tempo_time::sleep;

/// A stream of ticks every `period`, the first at once:
/// [`tempo_time::interval`], whose documentation follows this example.
///
/// On a Tempo runtime, a task that does something every 20 ms:
///
/// ```
/// use std::time::Duration;
/// use tempo::time::{interval, Instant};
///
/// let rt = tempo::runtime::Builder::new_current_thread()
///     .enable_all()
///     .start_paused(true)
///     .build()?;
/// rt.block_on(async {
///     let start = Instant::now();
///     let mut ticks = interval(Duration::from_millis(20));
///     for _ in 0..3 {
///         ticks.tick().await; // at 0, 20 and 40 ms
///     }
///     assert!(start.elapsed() >= Duration::from_millis(40));
/// });
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_time::interval;

/// Gives up on `future` if it has not completed after `duration`:
/// [`tempo_time::timeout`], whose documentation follows this example.
///
/// On a Tempo runtime, a receive that waits at most one second:
///
/// ```
/// use std::time::Duration;
/// use tempo::net::UdpSocket;
/// use tempo::time::timeout;
///
/// let rt = tempo::runtime::Builder::new_current_thread()
///     .enable_all()
///     .start_paused(true)
///     .build()?;
/// rt.block_on(async {
///     let socket = UdpSocket::bind("127.0.0.1:0").await?;
///     let mut buf = [0u8; 1500];
///     // Nobody sends: the receive times out (at once, on the paused clock).
///     let res = timeout(Duration::from_secs(1), socket.recv_from(&mut buf)).await;
///     assert!(res.is_err());
///     Ok::<(), std::io::Error>(())
/// })?;
/// # Ok::<(), std::io::Error>(())
/// ```
pub use tempo_time::timeout;
