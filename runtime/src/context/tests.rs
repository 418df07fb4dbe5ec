//! Contexts by name: sharing, refusals, and the registry entry's life.

use std::io;
use std::thread;
use std::time::Duration;

use super::thread::is_registered;
use super::{Context, ContextBuilder};
use crate::runtime::TimerPolicy;

const T: Duration = Duration::from_millis(5);

#[test]
fn same_name_same_thread_different_names_different_threads() {
    let a = Context::acquire("ctx-test-a", T).unwrap();
    let a2 = Context::acquire("ctx-test-a", T).unwrap();
    let b = Context::acquire("ctx-test-b", T).unwrap();
    assert_eq!(a.thread_id(), a2.thread_id());
    assert_ne!(a.thread_id(), b.thread_id());
    assert_eq!(a2.max_throttling(), T);
    assert_eq!(a.name(), "ctx-test-a");
    let on_a = a.block_on(async { thread::current().id() });
    assert_eq!(on_a, a.thread_id());
    let name = b.block_on(async { thread::current().name().map(str::to_owned) });
    assert_eq!(name.as_deref(), Some("ctx-test-b"));
}

#[test]
fn acquiring_a_running_context_with_another_period_is_an_error() {
    let a = Context::acquire("ctx-test-period", T).unwrap();
    let e = Context::acquire("ctx-test-period", Duration::from_millis(10)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    let message = e.to_string();
    assert!(message.contains("ctx-test-period"), "{message}");
    assert!(
        message.contains("5ms") && message.contains("10ms"),
        "{message}"
    );
    // The running context is untouched and still acquirable with its
    // own period.
    let again = Context::acquire("ctx-test-period", T).unwrap();
    assert_eq!(again.thread_id(), a.thread_id());
    assert_eq!(again.max_throttling(), T);
    // Once it stopped, the name is free for another period.
    drop((a, again));
    let other = Context::acquire("ctx-test-period", Duration::from_millis(10)).unwrap();
    assert_eq!(other.max_throttling(), Duration::from_millis(10));
}

#[test]
fn acquire_with_shares_a_running_context_whose_period_and_policy_match() {
    let mut first = ContextBuilder::new(T);
    first
        .timer_policy(TimerPolicy::NeverEarly)
        .thread_name("ctx-test-with-first");
    let a = Context::acquire_with("ctx-test-with", &first).unwrap();
    // Other resource settings: the running context, as it was started.
    let mut second = ContextBuilder::new(T);
    second
        .timer_policy(TimerPolicy::NeverEarly)
        .thread_name("ctx-test-with-second")
        .max_blocking_threads(1);
    let b = Context::acquire_with("ctx-test-with", &second).unwrap();
    assert_eq!(a.thread_id(), b.thread_id());
    let name = b.block_on(async {
        crate::task::spawn_blocking(|| thread::current().name().map(str::to_owned))
            .await
            .unwrap()
    });
    assert_eq!(name.as_deref(), Some("ctx-test-with-first"));
}

#[test]
fn acquire_with_another_period_or_policy_is_an_error() {
    let mut never_early = ContextBuilder::new(T);
    never_early.timer_policy(TimerPolicy::NeverEarly);
    let a = Context::acquire_with("ctx-test-with-conflict", &never_early).unwrap();

    // Another policy: `acquire` asks for the default one.
    let e = Context::acquire("ctx-test-with-conflict", T).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    let message = e.to_string();
    assert!(
        message.contains("ctx-test-with-conflict")
            && message.contains("NeverEarly")
            && message.contains("NearestTick"),
        "{message}"
    );

    // Another period, same policy.
    let mut slower = ContextBuilder::new(Duration::from_millis(10));
    slower.timer_policy(TimerPolicy::NeverEarly);
    let e = Context::acquire_with("ctx-test-with-conflict", &slower).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::AlreadyExists);
    let message = e.to_string();
    assert!(
        message.contains("5ms") && message.contains("10ms"),
        "{message}"
    );

    // The running context is untouched; once it stopped, the name is
    // free for another configuration.
    assert_eq!(a.block_on(async { 3 }), 3);
    drop(a);
    let other = Context::acquire("ctx-test-with-conflict", T).unwrap();
    assert_eq!(other.max_throttling(), T);
}

#[test]
fn bad_period_is_an_error_and_registers_nothing() {
    let e = Context::acquire("ctx-test-bad", Duration::from_secs(3600)).unwrap_err();
    assert_eq!(e.kind(), io::ErrorKind::InvalidInput);
    assert!(e.to_string().contains("1 ms to 1 s"), "{e}");
    assert!(!is_registered("ctx-test-bad"));
}
