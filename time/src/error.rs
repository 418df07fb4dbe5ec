//! Errors returned by the timer API: [`Elapsed`], which converts into an
//! [`std::io::Error`] of kind `TimedOut` so `?` works in I/O code.

use std::fmt;

/// The error [`Timeout`](crate::Timeout) returns when its deadline passed
/// before the inner future completed.
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
