//! `#[tempo::main]` and `#[tempo::test]`: the runtime they build has the
//! settings their arguments ask for. (Bad arguments: the `compile_fail`
//! doctests in `tempo`'s lib.rs and the unit tests of `tempo-macros`.)
//!
//! The attribute builds each test's runtime from its literal arguments, so
//! these tests cannot take a runtime from the support module's
//! `on_each_flavor!`: `on_both_schedulers!` below writes the same body
//! under both attributes instead.
#![cfg(feature = "macros")]

use std::time::Duration;

use tempo::runtime::Handle;
use tempo::time::{sleep, Instant};

/// Defines the same async test body twice: `$basic` on the basic
/// scheduler and `$throttled` under `max_throttling = "10ms"`, with any
/// extra arguments.
macro_rules! on_both_schedulers {
    ($basic:ident, $throttled:ident, [$($arg:tt)*], $body:block) => {
        #[tempo::test($($arg)*)]
        async fn $basic() $body

        #[tempo::test(max_throttling = "10ms", $($arg)*)]
        async fn $throttled() $body
    };
}

#[tempo::test]
async fn default_is_the_basic_scheduler() {
    assert_eq!(Handle::current().max_throttling(), Duration::ZERO);
}

#[tempo::test(max_throttling = "7ms")]
async fn max_throttling_selects_the_throttling_scheduler() {
    assert_eq!(Handle::current().max_throttling(), Duration::from_millis(7));
}

#[tempo::test(flavor = "current_thread", max_throttling = "1s")]
async fn tokio_flavor_is_accepted_and_seconds_parse() {
    assert_eq!(Handle::current().max_throttling(), Duration::from_secs(1));
}

on_both_schedulers!(spawn_and_join_basic, spawn_and_join_throttled, [], {
    let local = std::rc::Rc::new(3);
    let sum = tempo::spawn(async { 40 }).await.unwrap()
        + tempo::spawn_local(async move { *local - 1 }).await.unwrap();
    assert_eq!(sum, 42);
});

on_both_schedulers!(
    paused_clock_basic,
    paused_clock_throttled,
    [start_paused = true],
    {
        // An hour of virtual time: only a paused clock gets through this
        // (the test harness would time out on a real one). Under the
        // 10 ms throttle the timer fires at the nearest tick: up to 5 ms
        // early.
        let start = Instant::now();
        sleep(Duration::from_secs(3600)).await;
        assert!(start.elapsed() + Duration::from_millis(5) >= Duration::from_secs(3600));
    }
);

on_both_schedulers!(
    io_is_enabled_basic,
    io_is_enabled_throttled,
    [start_paused = false],
    {
        let a = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        b.send_to(b"ping", a.local_addr().unwrap()).await.unwrap();
        let mut buf = [0u8; 8];
        let (n, _) = a.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"ping");
    }
);

// Under a 20 ms throttle the default policy may fire a timer up to 10 ms
// early; `never_early` must not, for any deadline. The paused clock makes
// the check exact.
#[tempo::test(
    max_throttling = "20ms",
    timer_policy = "never_early",
    start_paused = true
)]
async fn never_early_policy_reaches_the_runtime() {
    for ms in [3, 11, 17, 29, 41] {
        let d = Duration::from_millis(ms);
        let start = Instant::now();
        sleep(d).await;
        assert!(start.elapsed() >= d, "{ms} ms timer fired early");
    }
}

#[tempo::test]
async fn a_test_may_return_a_result() -> std::io::Result<()> {
    let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
    socket.local_addr()?;
    Ok(())
}

#[tempo::test]
#[should_panic(expected = "inside the test body")]
async fn other_attributes_are_kept() {
    panic!("inside the test body");
}

mod renamed {
    use tempo as my_tempo;

    #[my_tempo::test(crate = "my_tempo", max_throttling = "5ms")]
    async fn crate_argument_names_the_runtime_crate() {
        assert_eq!(
            my_tempo::runtime::Handle::current().max_throttling(),
            std::time::Duration::from_millis(5)
        );
    }
}

/// `#[tempo::main]` on a function other than `main` makes a plain function
/// that builds a runtime and blocks on the body.
#[tempo::main(start_paused = true)]
async fn entry_point() -> u64 {
    sleep(Duration::from_secs(60)).await;
    tempo::spawn(async { 7 }).await.unwrap()
}

#[test]
fn main_attribute_builds_a_runtime_and_blocks() {
    assert_eq!(entry_point(), 7);
    // Each call builds a fresh runtime: it can run twice.
    assert_eq!(entry_point(), 7);
}
