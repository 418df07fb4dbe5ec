//! Errors returned by the timer API: [`Elapsed`], what a
//! [`Timeout`](crate::Timeout) gives when its deadline passes first. It
//! converts into an [`std::io::Error`] of kind `TimedOut`, so `?` works in
//! I/O code:
//!
//! ```
//! use std::time::Duration;
//!
//! async fn read_with_deadline() -> std::io::Result<u32> {
//!     let value = tempo_time::timeout(Duration::from_secs(1), async { 7 }).await?;
//!     Ok(value)
//! }
//! # let _ = read_with_deadline;
//! ```

use std::fmt;

/// The error [`Timeout`](crate::Timeout) returns when its deadline passed
/// before the inner future completed.
///
/// # Examples
///
/// ```
/// # use tempo_park::{Park, ParkThread}; let mut driver = tempo_time::Driver::new(ParkThread::new(), tempo_time::Clock::paused()); let _guard = driver.handle().enter();
/// # let mut task = tokio_test::task::spawn(async {
/// use std::time::Duration;
/// use tempo_time::{error::Elapsed, sleep, timeout};
///
/// let err: Elapsed = timeout(Duration::from_millis(1), sleep(Duration::from_secs(1)))
///     .await
///     .unwrap_err();
/// assert_eq!(err.to_string(), "deadline has elapsed");
/// let io: std::io::Error = err.into();
/// assert_eq!(io.kind(), std::io::ErrorKind::TimedOut);
/// # }); let mut done = false; for _ in 0..100 { if task.poll_until_idle().is_ready() { done = true; break } driver.park().unwrap() } assert!(done, "the example did not complete");
/// ```
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Elapsed(());

impl Elapsed {
    pub(crate) fn new() -> Elapsed {
        Elapsed(())
    }

    /// An `Elapsed` value, for tests that compare results.
    #[doc(hidden)]
    pub fn new_for_tests() -> Elapsed {
        Elapsed(())
    }
}

impl fmt::Display for Elapsed {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("deadline has elapsed")
    }
}

impl std::error::Error for Elapsed {}

impl From<Elapsed> for std::io::Error {
    fn from(e: Elapsed) -> std::io::Error {
        std::io::Error::new(std::io::ErrorKind::TimedOut, e)
    }
}
