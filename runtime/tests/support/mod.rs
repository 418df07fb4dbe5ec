//! What the runtime's integration tests share: the scheduler flavors a
//! scheduler-independent test runs on, and the macro that runs a test body
//! once per flavor (in the spirit of tokio's `rt_common!`).
//!
//! A test file includes it with `mod support;` and wraps its tests:
//!
//! ```ignore
//! mod support;
//! use support::*;
//!
//! on_each_flavor! {
//!     #[test]
//!     fn spawn_then_join() {
//!         let rt = builder().build().unwrap();
//!         assert_eq!(rt.block_on(async { tempo::spawn(async { 1 }).await.unwrap() }), 1);
//!     }
//! }
//! ```
//!
//! which expands to `basic::spawn_then_join` and
//! `throttling::spawn_then_join`, each module with its own [`Flavor`] in
//! `FLAVOR` and `builder()` returning that flavor's [`Builder`] (nothing
//! enabled: a test enables what it needs). Helpers written outside the
//! macro are visible inside it (`use super::*`); a helper that needs the
//! flavor takes a [`Flavor`] argument (`FLAVOR` inside the macro).
//!
//! The rules every runtime test file follows:
//!
//! * a scheduler-independent test runs on each flavor through this macro,
//!   never in a loop over runtimes inside one test (a failure on the first
//!   flavor would hide the second, and the test's name would not say which
//!   flavor failed). The macro may appear once per file (it defines the
//!   modules `basic` and `throttling`);
//! * [`Flavor`] is the one flavor type of the tests. A test whose counts
//!   are worked out for another period than [`THROTTLE`] keeps that period
//!   as a constant of its file and builds with
//!   [`Flavor::builder_with_period`];
//! * a suite that runs on one scheduler only says why in its header.
#![allow(dead_code, unused_macros, unused_imports)]

pub mod throttle;

use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

pub use tempo::runtime::{Builder, Runtime};

/// The throttling flavor's period: short, so that real-clock tests stay
/// quick, and long enough that a tick is a tick on a loaded 2-core machine.
pub const THROTTLE: Duration = Duration::from_millis(5);

/// A single-thread scheduler a test runs on: the one flavor type of the
/// runtime's tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Flavor {
    /// `Builder::new_current_thread()`.
    Basic,
    /// `Builder::new_current_thread().max_throttling(THROTTLE)`.
    Throttling,
}

impl Flavor {
    /// This flavor's builder, with no driver enabled.
    pub fn builder(self) -> Builder {
        self.builder_with_period(THROTTLE)
    }

    /// This flavor's builder, the throttling flavor at `period` instead of
    /// [`THROTTLE`] (for a test whose counts depend on its own period); no
    /// driver enabled. The basic flavor ignores `period`.
    pub fn builder_with_period(self, period: Duration) -> Builder {
        let mut builder = Builder::new_current_thread();
        if self == Flavor::Throttling {
            builder.max_throttling(period);
        }
        builder
    }

    /// This flavor's runtime with I/O and time enabled.
    pub fn runtime_with_all(self) -> Runtime {
        self.builder().enable_all().build().unwrap()
    }

    /// `"basic"` or `"throttling"`, for assertion messages; also the name
    /// of the module [`on_each_flavor!`] puts this flavor's tests in.
    pub fn name(self) -> &'static str {
        match self {
            Flavor::Basic => "basic",
            Flavor::Throttling => "throttling",
        }
    }
}

/// Adds one to its counter when dropped: shows that a task's future (or
/// anything it owns) was dropped.
pub struct DropCounter(pub Arc<AtomicUsize>);

impl Drop for DropCounter {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// Expands the items given once per flavor, in modules `basic` and
/// `throttling`; inside, `FLAVOR` is the module's [`Flavor`] and `builder()`
/// its [`Builder`].
macro_rules! on_each_flavor {
    (@module $module:ident, $flavor:ident, $($item:item)*) => {
        mod $module {
            #[allow(unused_imports)]
            use super::*;
            #[allow(dead_code)]
            const FLAVOR: $crate::support::Flavor = $crate::support::Flavor::$flavor;
            #[allow(dead_code)]
            fn builder() -> ::tempo::runtime::Builder {
                FLAVOR.builder()
            }
            $($item)*
        }
    };
    ($($item:item)*) => {
        on_each_flavor!(@module basic, Basic, $($item)*);
        on_each_flavor!(@module throttling, Throttling, $($item)*);
    };
}
pub(crate) use on_each_flavor;
