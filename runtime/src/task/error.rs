//! [`JoinError`]: why a task produced no output.

use std::any::Any;
use std::fmt;

use super::id::Id;

/// The error a [`JoinHandle`](crate::task::JoinHandle) resolves to when its
/// task did not return a value: it was cancelled (aborted, or the runtime
/// shut down), or it panicked. It names the task by its [`Id`]:
///
/// ```
/// let rt = tempo::runtime::Builder::new_current_thread().build().unwrap();
/// rt.block_on(async {
///     let handle = tempo::spawn(async { panic!("boom") });
///     let id = handle.id();
///     let err = handle.await.unwrap_err();
///     assert!(err.is_panic());
///     assert_eq!(err.id(), id);
///     assert_eq!(err.to_string(), format!("task {id} panicked with message \"boom\""));
/// });
/// ```
pub struct JoinError {
    id: Id,
    repr: Repr,
}

enum Repr {
    Cancelled,
    Panic(Payload),
}

/// A panic payload, made `Sync` so that `JoinError` can be boxed as a
/// `dyn Error + Send + Sync`.
struct Payload(Box<dyn Any + Send + 'static>);

// SAFETY: through `&Payload` this module only calls `downcast_ref` for
// `&'static str` and `String` (both `Sync`) and reads the result; it never
// hands out `&dyn Any`. The box itself is only moved out by value.
unsafe impl Sync for Payload {}

impl JoinError {
    pub(crate) fn cancelled(id: Id) -> JoinError {
        JoinError {
            id,
            repr: Repr::Cancelled,
        }
    }

    pub(crate) fn panic(id: Id, payload: Box<dyn Any + Send + 'static>) -> JoinError {
        JoinError {
            id,
            repr: Repr::Panic(Payload(payload)),
        }
    }

    /// Returns the [`Id`] of the task that produced this error.
    pub fn id(&self) -> Id {
        self.id
    }

    /// `true` if the task was cancelled: aborted, or dropped by the runtime's
    /// shutdown.
    pub fn is_cancelled(&self) -> bool {
        matches!(self.repr, Repr::Cancelled)
    }

    /// `true` if the task panicked.
    pub fn is_panic(&self) -> bool {
        matches!(self.repr, Repr::Panic(_))
    }

    /// The panic payload (to `resume_unwind`, say).
    ///
    /// Panics if the task was cancelled; see [`try_into_panic`](JoinError::try_into_panic).
    #[track_caller]
    pub fn into_panic(self) -> Box<dyn Any + Send + 'static> {
        self.try_into_panic()
            .expect("`JoinError::into_panic` called on a cancelled task's error")
    }

    /// The panic payload, or the error itself if the task was cancelled.
    pub fn try_into_panic(self) -> Result<Box<dyn Any + Send + 'static>, JoinError> {
        match self.repr {
            Repr::Panic(Payload(payload)) => Ok(payload),
            Repr::Cancelled => Err(self),
        }
    }
}

fn panic_message(payload: &(dyn Any + Send)) -> Option<&str> {
    if let Some(s) = payload.downcast_ref::<&'static str>() {
        Some(s)
    } else {
        payload.downcast_ref::<String>().map(String::as_str)
    }
}

/// What tokio's runtime-bound calls (`tokio::spawn`, `tokio::time::sleep`,
/// `tokio::net::*`, ...) panic with when they find no tokio runtime.
const TOKIO_CONTEXT_MISSING: &str = "must be called from the context of a Tokio 1.x runtime";

/// The hint added after tokio's "no reactor running" panic message; looked
/// for only when the error is formatted.
fn tokio_hint(message: &str) -> Option<&'static str> {
    if !message.contains(TOKIO_CONTEXT_MISSING) {
        return None;
    }
    if cfg!(feature = "tokio-compat") {
        Some(
            "tempo's `tokio-compat` feature provides tokio's context on Tempo runtimes' threads \
             only: on another thread, enter `tempo::tokio_compat::handle()?.enter()` first",
        )
    } else {
        Some(
            "tokio's runtime-bound calls need tempo's `tokio-compat` feature to run inside \
             Tempo (`tempo = { version = \"0.1\", features = [\"tokio-compat\"] }`), or \
             import them from `tempo` instead",
        )
    }
}

impl fmt::Display for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "task {} was cancelled", self.id),
            Repr::Panic(Payload(payload)) => match panic_message(payload.as_ref()) {
                Some(message) => {
                    write!(f, "task {} panicked with message {message:?}", self.id)?;
                    match tokio_hint(message) {
                        Some(hint) => write!(f, "; hint: {hint}"),
                        None => Ok(()),
                    }
                }
                None => write!(f, "task {} panicked", self.id),
            },
        }
    }
}

impl fmt::Debug for JoinError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match &self.repr {
            Repr::Cancelled => write!(f, "JoinError::Cancelled({:?})", self.id),
            Repr::Panic(Payload(payload)) => match panic_message(payload.as_ref()) {
                Some(message) => {
                    write!(f, "JoinError::Panic({:?}, {message:?})", self.id)?;
                    match tokio_hint(message) {
                        Some(hint) => write!(f, " (hint: {hint})"),
                        None => Ok(()),
                    }
                }
                None => write!(f, "JoinError::Panic({:?}, ..)", self.id),
            },
        }
    }
}

impl std::error::Error for JoinError {}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn cancelled() {
        let id = Id::next();
        let e = JoinError::cancelled(id);
        assert!(e.is_cancelled() && !e.is_panic());
        assert_eq!(e.id(), id);
        assert_eq!(e.to_string(), format!("task {id} was cancelled"));
        assert_eq!(format!("{e:?}"), format!("JoinError::Cancelled(Id({id}))"));
        assert!(e.try_into_panic().unwrap_err().is_cancelled());
    }

    #[test]
    fn panic_with_message() {
        let id = Id::next();
        let e = JoinError::panic(id, Box::new("boom"));
        assert!(e.is_panic() && !e.is_cancelled());
        assert_eq!(
            e.to_string(),
            format!("task {id} panicked with message \"boom\"")
        );
        assert_eq!(
            format!("{e:?}"),
            format!("JoinError::Panic(Id({id}), \"boom\")")
        );
        let payload = e.into_panic();
        assert_eq!(*payload.downcast::<&str>().unwrap(), "boom");
    }

    #[test]
    fn panic_with_other_payload() {
        let id = Id::next();
        let e = JoinError::panic(id, Box::new(7_u32));
        assert_eq!(e.to_string(), format!("task {id} panicked"));
    }

    #[test]
    #[should_panic(expected = "cancelled task")]
    fn into_panic_of_cancelled_panics() {
        JoinError::cancelled(Id::next()).into_panic();
    }
}
