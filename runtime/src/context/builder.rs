//! [`ContextBuilder`]: what a context's runtime is built with. Not a
//! [`Builder`], because the registry compares a request with a running
//! context ([`ContextBuilder::conflict`]) and a `Builder` hides its settings.

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use crate::runtime::{Builder, TimerPolicy};

/// The configuration of a context's runtime, for
/// [`Context::acquire_with`](super::Context::acquire_with). Each setting is
/// the [`Builder`] setting of the same name, with its default, except the
/// blocking threads' name (`"{context name}-blocking"`).
#[derive(Clone)]
pub struct ContextBuilder {
    max_throttling: Duration,
    timer_policy: TimerPolicy,
    io_events_capacity: Option<usize>,
    tick_budget: Option<u32>,
    max_blocking_threads: Option<usize>,
    thread_keep_alive: Option<Duration>,
    thread_name: Option<Arc<str>>,
}

impl ContextBuilder {
    /// A configuration with [`max_throttling`](Builder::max_throttling)
    /// `max_throttling` and the defaults (those of `Context::acquire`).
    pub fn new(max_throttling: Duration) -> ContextBuilder {
        ContextBuilder {
            max_throttling,
            timer_policy: TimerPolicy::default(),
            io_events_capacity: None,
            tick_budget: None,
            max_blocking_threads: None,
            thread_keep_alive: None,
            thread_name: None,
        }
    }

    /// [`Builder::timer_policy`]; must match a running context's.
    pub fn timer_policy(&mut self, policy: TimerPolicy) -> &mut ContextBuilder {
        self.timer_policy = policy;
        self
    }

    /// [`Builder::io_events_capacity`]. Panics if `capacity` is zero.
    #[track_caller]
    pub fn io_events_capacity(&mut self, capacity: usize) -> &mut ContextBuilder {
        assert!(capacity > 0, "io_events_capacity must be at least 1");
        self.io_events_capacity = Some(capacity);
        self
    }

    /// [`Builder::tick_budget`]. Panics if `budget` is zero.
    #[track_caller]
    pub fn tick_budget(&mut self, budget: u32) -> &mut ContextBuilder {
        assert!(budget > 0, "tick_budget must be at least 1");
        self.tick_budget = Some(budget);
        self
    }

    /// [`Builder::max_blocking_threads`]. Panics if `max` is zero.
    #[track_caller]
    pub fn max_blocking_threads(&mut self, max: usize) -> &mut ContextBuilder {
        assert!(max > 0, "max_blocking_threads must be at least 1");
        self.max_blocking_threads = Some(max);
        self
    }

    /// [`Builder::thread_keep_alive`].
    pub fn thread_keep_alive(&mut self, keep_alive: Duration) -> &mut ContextBuilder {
        self.thread_keep_alive = Some(keep_alive);
        self
    }

    /// [`Builder::thread_name`]; the context's own thread is named after it.
    pub fn thread_name(&mut self, name: impl Into<String>) -> &mut ContextBuilder {
        self.thread_name = Some(Arc::from(name.into()));
        self
    }

    /// The period asked for.
    pub(super) fn period(&self) -> Duration {
        self.max_throttling
    }

    /// Why a context `name` running with `running` cannot serve this request
    /// (its period or timer policy differ), or `None`.
    pub(super) fn conflict(&self, name: &str, running: &ContextBuilder) -> Option<String> {
        if running.max_throttling != self.max_throttling {
            return Some(format!(
                "context {name:?} is already running with max_throttling {:?}, \
                 not the {:?} asked for: acquire it with {:?}, or use \
                 another name for a context with another period",
                running.max_throttling, self.max_throttling, running.max_throttling
            ));
        }
        if running.timer_policy != self.timer_policy {
            return Some(format!(
                "context {name:?} is already running with timer_policy {:?}, \
                 not the {:?} asked for: acquire it with {:?}, or use \
                 another name for a context with another policy",
                running.timer_policy, self.timer_policy, running.timer_policy
            ));
        }
        None
    }

    /// The runtime builder for a context called `name`.
    pub(super) fn runtime_builder(&self, name: &str) -> Builder {
        let mut builder = Builder::new_current_thread();
        builder
            .enable_all()
            .max_throttling(self.max_throttling)
            .timer_policy(self.timer_policy);
        match &self.thread_name {
            Some(thread_name) => builder.thread_name(&**thread_name),
            // The context's own thread is named `name`; its blocking
            // pool's threads say whose they are.
            None => builder.thread_name(format!("{name}-blocking")),
        };
        if let Some(capacity) = self.io_events_capacity {
            builder.io_events_capacity(capacity);
        }
        if let Some(budget) = self.tick_budget {
            builder.tick_budget(budget);
        }
        if let Some(max) = self.max_blocking_threads {
            builder.max_blocking_threads(max);
        }
        if let Some(keep_alive) = self.thread_keep_alive {
            builder.thread_keep_alive(keep_alive);
        }
        builder
    }
}

impl fmt::Debug for ContextBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ContextBuilder")
            .field("max_throttling", &self.max_throttling)
            .field("timer_policy", &self.timer_policy)
            .field("io_events_capacity", &self.io_events_capacity)
            .field("tick_budget", &self.tick_budget)
            .field("max_blocking_threads", &self.max_blocking_threads)
            .field("thread_keep_alive", &self.thread_keep_alive)
            .field("thread_name", &self.thread_name)
            .finish()
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    const T: Duration = Duration::from_millis(5);

    #[test]
    fn a_request_conflicts_on_period_or_policy_only() {
        let running = ContextBuilder::new(T);
        let mut resources = ContextBuilder::new(T);
        resources
            .io_events_capacity(7)
            .tick_budget(3)
            .max_blocking_threads(2)
            .thread_keep_alive(Duration::from_secs(1))
            .thread_name("other");
        assert_eq!(resources.conflict("c", &running), None);

        let period = ContextBuilder::new(Duration::from_millis(10))
            .conflict("c", &running)
            .expect("another period conflicts");
        assert!(
            period.contains("5ms") && period.contains("10ms"),
            "{period}"
        );

        let policy = ContextBuilder::new(T)
            .timer_policy(TimerPolicy::NeverEarly)
            .conflict("c", &running)
            .expect("another policy conflicts");
        assert!(
            policy.contains("NearestTick") && policy.contains("NeverEarly"),
            "{policy}"
        );
    }

    #[test]
    #[should_panic(expected = "io_events_capacity must be at least 1")]
    fn zero_events_capacity_panics_on_the_caller() {
        ContextBuilder::new(T).io_events_capacity(0);
    }
}
