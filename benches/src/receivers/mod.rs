//! The receive loops compared by `udp-receiver`, one module per runtime.
//!
//! Every receiver gets the same bound sockets and the same
//! [`MeasureWindow`]; it runs one receive loop per socket (a task, a thread,
//! or a slot in a hand-written event loop) that reads each datagram into a
//! reused buffer and hands it to a [`StreamTracker`](crate::recv_stats::StreamTracker),
//! and it returns when the window is over. Nothing else differs, so the
//! difference in CPU and loss is the runtime's.
//!
//! Adding a runtime is one module with a `run(sockets, window) -> io::Result<()>`
//! function, one [`ReceiverRuntime`] variant, one line in
//! [`ReceiverRuntime::parse`] and one arm in [`ReceiverRuntime::run`].

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

use crate::window::MeasureWindow;

pub mod mio_loop;
pub mod threads;
pub mod tokio_current_thread;

/// Size of the reused receive buffer of every loop (larger than any datagram
/// the sender makes by default, like a GStreamer udpsrc's MTU-sized buffer).
pub const RECV_BUF_LEN: usize = 2048;

/// Every runtime name `udp-receiver --runtime` knows of, in sweep order.
/// `:T` names take a throttling period in milliseconds.
pub const RUNTIME_NAMES: &[&str] = &[
    "tempo",
    "tempo-throttled:T",
    "tokio",
    "threads",
    "mio-loop",
    "mio-throttled:T",
];

/// A receiver runtime, parsed from its name.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ReceiverRuntime {
    /// tokio current_thread runtime, one task per socket.
    Tokio,
    /// One blocking std thread per socket (GStreamer udpsrc's model).
    Threads,
    /// One mio `Poll`, each ready socket drained until `WouldBlock`.
    MioLoop,
    /// The mio loop, sleeping until the period has passed since each
    /// iteration began.
    MioThrottled(Duration),
}

/// Why a runtime name was not accepted.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RuntimeNameError {
    /// Not a runtime this benchmark knows.
    Unknown(String),
    /// A runtime this benchmark knows but that is not built yet.
    NotYetAvailable(String),
    /// A `:T` suffix that is not a number of milliseconds.
    BadPeriod(String),
}

impl std::fmt::Display for RuntimeNameError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            RuntimeNameError::Unknown(n) => write!(
                f,
                "unknown runtime `{n}` (known: {})",
                RUNTIME_NAMES.join(", ")
            ),
            RuntimeNameError::NotYetAvailable(n) => write!(
                f,
                "runtime `{n}` is not available yet: the Tempo receiver needs \
                 tempo::net::UdpSocket, which has not landed in this build"
            ),
            RuntimeNameError::BadPeriod(n) => {
                write!(f, "`{n}`: expected a throttling period in ms after `:`")
            }
        }
    }
}

impl std::error::Error for RuntimeNameError {}

fn parse_period(name: &str, ms: &str) -> Result<Duration, RuntimeNameError> {
    ms.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .map(|v| Duration::from_secs_f64(v / 1e3))
        .ok_or_else(|| RuntimeNameError::BadPeriod(name.to_string()))
}

impl ReceiverRuntime {
    /// Parses `tokio`, `threads`, `mio-loop`, `mio-throttled:20`, ...
    pub fn parse(name: &str) -> Result<ReceiverRuntime, RuntimeNameError> {
        let (base, period) = match name.split_once(':') {
            Some((b, p)) => (b, Some(p)),
            None => (name, None),
        };
        match (base, period) {
            ("tokio", None) => Ok(ReceiverRuntime::Tokio),
            ("threads", None) => Ok(ReceiverRuntime::Threads),
            ("mio-loop", None) => Ok(ReceiverRuntime::MioLoop),
            ("mio-throttled", Some(p)) => Ok(ReceiverRuntime::MioThrottled(parse_period(name, p)?)),
            // Tempo receivers: add `Tempo` / `TempoThrottled(Duration)` variants
            // and a `receivers::tempo` module once tempo::net::UdpSocket exists.
            ("tempo", None) | ("tempo-throttled", Some(_)) => {
                Err(RuntimeNameError::NotYetAvailable(name.to_string()))
            }
            _ => Err(RuntimeNameError::Unknown(name.to_string())),
        }
    }

    /// The canonical name (what `parse` accepts), for reports.
    pub fn name(&self) -> String {
        match self {
            ReceiverRuntime::Tokio => "tokio".into(),
            ReceiverRuntime::Threads => "threads".into(),
            ReceiverRuntime::MioLoop => "mio-loop".into(),
            ReceiverRuntime::MioThrottled(p) => format!("mio-throttled:{}", fmt_ms(*p)),
        }
    }

    /// Receives on `sockets` (bound, blocking) until `window` is over.
    pub fn run(&self, sockets: Vec<UdpSocket>, window: MeasureWindow) -> io::Result<()> {
        match *self {
            ReceiverRuntime::Tokio => tokio_current_thread::run(sockets, window),
            ReceiverRuntime::Threads => threads::run(sockets, window),
            ReceiverRuntime::MioLoop => mio_loop::run(sockets, window, None),
            ReceiverRuntime::MioThrottled(p) => mio_loop::run(sockets, window, Some(p)),
        }
    }
}

/// Milliseconds without a trailing `.0` for whole numbers.
pub fn fmt_ms(d: Duration) -> String {
    let ms = d.as_secs_f64() * 1e3;
    if ms.fract() == 0.0 {
        format!("{}", ms as u64)
    } else {
        format!("{ms}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for name in [
            "tokio",
            "threads",
            "mio-loop",
            "mio-throttled:20",
            "mio-throttled:2.5",
        ] {
            assert_eq!(ReceiverRuntime::parse(name).unwrap().name(), name);
        }
    }

    #[test]
    fn tempo_is_rejected_until_it_exists() {
        for name in ["tempo", "tempo-throttled:20"] {
            let err = ReceiverRuntime::parse(name).unwrap_err();
            assert!(matches!(err, RuntimeNameError::NotYetAvailable(_)));
            assert!(err.to_string().contains("not available yet"));
        }
    }

    #[test]
    fn bad_names_are_rejected() {
        assert!(matches!(
            ReceiverRuntime::parse("mio-throttled:x"),
            Err(RuntimeNameError::BadPeriod(_))
        ));
        assert!(matches!(
            ReceiverRuntime::parse("tokio:5"),
            Err(RuntimeNameError::Unknown(_))
        ));
        assert!(matches!(
            ReceiverRuntime::parse("glommio"),
            Err(RuntimeNameError::Unknown(_))
        ));
    }
}
