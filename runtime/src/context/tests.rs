//! Contexts through their public API: sharing by name, refusals, the
//! registry entry's life, the context thread and its configuration.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
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

#[test]
fn blocking_threads_are_named_after_the_context() {
    let c = Context::acquire("ctx-test-blocking", T).unwrap();
    let name = c.block_on(async {
        crate::task::spawn_blocking(|| thread::current().name().map(str::to_owned))
            .await
            .unwrap()
    });
    assert_eq!(name.as_deref(), Some("ctx-test-blocking-blocking"));
}

#[test]
fn current_is_set_on_the_context_thread_only() {
    assert!(Context::current().is_none());
    let c = Context::acquire("ctx-test-current", T).unwrap();
    let seen = c.block_on(async { Context::current().map(|c| c.name().to_owned()) });
    assert_eq!(seen.as_deref(), Some("ctx-test-current"));
}

#[test]
fn last_drop_stops_the_thread_and_drops_its_tasks() {
    struct DropFlag(Arc<AtomicBool>);
    impl Drop for DropFlag {
        fn drop(&mut self) {
            self.0.store(true, Ordering::SeqCst);
        }
    }
    let dropped = Arc::new(AtomicBool::new(false));
    let c = Context::acquire("ctx-test-drop", T).unwrap();
    let flag = DropFlag(dropped.clone());
    let join = c.spawn(async move {
        let _flag = flag;
        std::future::pending::<()>().await;
    });
    let weak = c.downgrade();
    let thread_alive = c.block_on(async { 1 });
    assert_eq!(thread_alive, 1);
    drop(c);
    // Drop joined the thread: the task's future was dropped there.
    assert!(dropped.load(Ordering::SeqCst));
    assert!(weak.upgrade().is_none());
    assert!(!is_registered("ctx-test-drop"));
    drop(join);
    // A new acquire starts a new context.
    let again = Context::acquire("ctx-test-drop", T).unwrap();
    assert_eq!(again.block_on(async { 2 }), 2);
}

#[test]
#[should_panic(expected = "from a thread that runs a Tempo runtime")]
fn block_on_from_inside_panics() {
    let c = Context::acquire("ctx-test-inside", T).unwrap();
    let inner = c.clone();
    let result = c.block_on(async move {
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| inner.block_on(async {}))).map_err(
            |panic| {
                panic
                    .downcast_ref::<String>()
                    .cloned()
                    .or_else(|| panic.downcast_ref::<&str>().map(|s| s.to_string()))
                    .unwrap_or_default()
            },
        )
    });
    if let Err(message) = result {
        panic!("{message}");
    }
}

#[test]
fn panicking_future_resumes_in_block_on_and_context_survives() {
    let c = Context::acquire("ctx-test-panic", T).unwrap();
    let caught = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        c.block_on(async { panic!("boom in context") })
    }));
    assert!(caught.is_err());
    assert_eq!(c.block_on(async { 7 }), 7);
}

#[test]
fn sockets_and_timers_work_on_a_context() {
    let c = Context::acquire("ctx-test-io", T).unwrap();
    let got = c.block_on(async {
        let a = crate::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = crate::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        b.send_to(b"hi", a.local_addr().unwrap()).await.unwrap();
        crate::time::sleep(Duration::from_millis(1)).await;
        let mut buf = [0u8; 8];
        let (n, _) = a.recv_from(&mut buf).await.unwrap();
        buf[..n].to_vec()
    });
    assert_eq!(got, b"hi");
}

#[test]
fn the_runtime_is_built_with_the_configuration() {
    use std::sync::atomic::AtomicUsize;

    let mut config = ContextBuilder::new(T);
    config
        .thread_name("ctx-test-config-files")
        .max_blocking_threads(1)
        .io_events_capacity(1);
    let c = Context::acquire_with("ctx-test-config", &config).unwrap();
    // The blocking pool: its name, and at most one thread, so two
    // blocking tasks never overlap.
    let (names, most_at_once) = c.block_on(async {
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let jobs: Vec<_> = (0..2)
            .map(|_| {
                let (running, most) = (running.clone(), most.clone());
                crate::task::spawn_blocking(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    thread::sleep(Duration::from_millis(2));
                    running.fetch_sub(1, Ordering::SeqCst);
                    thread::current().name().map(str::to_owned)
                })
            })
            .collect();
        let mut names = Vec::new();
        for job in jobs {
            names.push(job.await.unwrap());
        }
        (names, most.load(Ordering::SeqCst))
    });
    assert_eq!(most_at_once, 1);
    for name in names {
        assert_eq!(name.as_deref(), Some("ctx-test-config-files"));
    }
    // An events buffer of one event still delivers every datagram.
    let got = c.block_on(async {
        let a = crate::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = crate::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let c = crate::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        b.send_to(b"b", a.local_addr().unwrap()).await.unwrap();
        c.send_to(b"c", a.local_addr().unwrap()).await.unwrap();
        let mut buf = [0u8; 8];
        let mut got = Vec::new();
        for _ in 0..2 {
            let (n, _) = a.recv_from(&mut buf).await.unwrap();
            got.extend_from_slice(&buf[..n]);
        }
        got.sort_unstable();
        got
    });
    assert_eq!(got, b"bc");
}
