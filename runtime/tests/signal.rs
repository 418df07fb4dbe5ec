//! `tempo::signal`: deliveries reach `recv` through the reactor, on both
//! schedulers; none is lost between `signal()` and `recv`; every listener
//! of a kind gets each delivery; signals that cannot be handled are
//! refused with an error that says so; `ctrl_c` (in a child process, so
//! that `SIGINT` cannot reach the test harness).
#![cfg(unix)]

use std::future::Future;
use std::sync::Mutex;
use std::time::Duration;

use tempo::signal::unix::{signal, SignalKind};

mod support;
use support::{on_each_flavor, Flavor};

/// Signals are process-wide: the tests of this file take turns, so that a
/// delivery one test raises cannot satisfy another's `recv`.
static ONE_AT_A_TIME: Mutex<()> = Mutex::new(());

/// A bound on each wait so that a lost delivery fails the test instead of
/// hanging it; deliveries take microseconds, the bound is never near.
const HANG_GUARD: Duration = Duration::from_secs(30);

/// Runs `body` on `flavor`'s runtime (I/O and time), one test at a time.
fn on_flavor<F, Fut>(flavor: Flavor, body: F)
where
    F: FnOnce() -> Fut,
    Fut: Future<Output = ()>,
{
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    flavor.runtime_with_all().block_on(body());
}

fn raise(signum: libc::c_int) {
    // SAFETY: `kill` with this process's own id only sends a signal; every
    // signal these tests raise has a listener, hence Tempo's handler.
    let rc = unsafe { libc::kill(libc::getpid(), signum) };
    assert_eq!(rc, 0, "kill: {}", std::io::Error::last_os_error());
}

/// Awaits `sig.recv()` under the hang guard.
async fn recv_or_hang_guard(sig: &mut tempo::signal::unix::Signal) {
    let got = within_hang_guard(std::future::poll_fn(|cx| sig.poll_recv(cx))).await;
    assert_eq!(got, Some(()));
}

/// Awaits `fut`, failing after [`HANG_GUARD`]. The guard's timer is checked
/// *before* `fut` is polled, so a delivery that only the guard's wake-up
/// happens to notice (the reactor never woke the task) fails the test
/// instead of passing late.
async fn within_hang_guard<F: Future>(fut: F) -> F::Output {
    let mut fut = std::pin::pin!(fut);
    let mut guard = std::pin::pin!(tempo::time::sleep(HANG_GUARD));
    std::future::poll_fn(|cx| {
        if guard.as_mut().poll(cx).is_ready() {
            panic!("the delivery never woke the task through the reactor");
        }
        fut.as_mut().poll(cx)
    })
    .await
}

#[test]
fn listeners_in_two_runtimes_both_get_the_delivery() {
    let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
    let basic = Flavor::Basic.runtime_with_all();
    let throttled = Flavor::Throttling.runtime_with_all();
    let mut in_basic = basic.block_on(async { signal(SignalKind::user_defined1()).unwrap() });
    let mut in_throttled =
        throttled.block_on(async { signal(SignalKind::user_defined1()).unwrap() });
    raise(libc::SIGUSR1);
    basic.block_on(recv_or_hang_guard(&mut in_basic));
    throttled.block_on(recv_or_hang_guard(&mut in_throttled));
}

#[test]
fn signal_outside_a_runtime_is_an_error() {
    let err = signal(SignalKind::user_defined1()).unwrap_err();
    assert!(err.to_string().contains("runtime"), "{err}");
}

on_each_flavor! {
    #[test]
    fn raised_signal_completes_recv() {
        on_flavor(FLAVOR, || async {
            let mut usr1 = signal(SignalKind::user_defined1()).unwrap();
            let waiter = tempo::spawn(async move {
                recv_or_hang_guard(&mut usr1).await;
            });
            // Let the waiter reach `recv` before raising.
            tempo::task::yield_now().await;
            raise(libc::SIGUSR1);
            waiter.await.unwrap();
        });
    }

    #[test]
    fn signal_raised_before_recv_is_not_lost() {
        on_flavor(FLAVOR, || async {
            let mut hup = signal(SignalKind::hangup()).unwrap();
            raise(libc::SIGHUP);
            // Let the runtime poll I/O before anyone awaits `recv`: the wake-up
            // byte is consumed by nobody, the delivery must still be there.
            for _ in 0..3 {
                tempo::task::yield_now().await;
            }
            recv_or_hang_guard(&mut hup).await;
        });
    }

    #[test]
    fn every_listener_of_a_kind_gets_the_delivery() {
        on_flavor(FLAVOR, || async {
            let mut first = signal(SignalKind::user_defined2()).unwrap();
            let mut second = signal(SignalKind::user_defined2()).unwrap();
            let first_waiter = tempo::spawn(async move { recv_or_hang_guard(&mut first).await });
            let second_waiter = tempo::spawn(async move { recv_or_hang_guard(&mut second).await });
            tempo::task::yield_now().await;
            raise(libc::SIGUSR2);
            first_waiter.await.unwrap();
            second_waiter.await.unwrap();
        });
    }

    /// A waiting listener whose runtime polls its reactor only after a
    /// listener of another runtime drained the wake-up byte (its reactor
    /// then sees nothing) still gets the delivery.
    #[test]
    fn a_listener_polled_after_another_drained_the_byte_gets_the_delivery() {
        let _turn = ONE_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner());
        let draining = Flavor::Basic.runtime_with_all();
        let late = FLAVOR.runtime_with_all();
        let mut drainer = draining.block_on(async { signal(SignalKind::user_defined2()).unwrap() });
        let mut sig = late.block_on(async { signal(SignalKind::user_defined2()).unwrap() });
        let waits = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
        let polled = waits.clone();
        let waiter = late.spawn(async move {
            polled.store(true, std::sync::atomic::Ordering::SeqCst);
            recv_or_hang_guard(&mut sig).await;
        });
        late.block_on(async {
            while !waits.load(std::sync::atomic::Ordering::SeqCst) {
                tempo::task::yield_now().await;
            }
        });
        raise(libc::SIGUSR2);
        draining.block_on(recv_or_hang_guard(&mut drainer));
        late.block_on(waiter).unwrap();
    }

    #[test]
    fn deliveries_between_recvs_coalesce_and_later_ones_still_arrive() {
        on_flavor(FLAVOR, || async {
            let mut usr1 = signal(SignalKind::user_defined1()).unwrap();
            raise(libc::SIGUSR1);
            raise(libc::SIGUSR1);
            recv_or_hang_guard(&mut usr1).await;
            raise(libc::SIGUSR1);
            recv_or_hang_guard(&mut usr1).await;
        });
    }

    #[test]
    fn signals_that_cannot_be_handled_are_refused_by_name() {
        on_flavor(FLAVOR, || async {
            for signum in [
                libc::SIGKILL,
                libc::SIGSTOP,
                libc::SIGSEGV,
                libc::SIGILL,
                libc::SIGFPE,
            ] {
                let err = signal(SignalKind::from_raw(signum)).unwrap_err();
                assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
                assert!(
                    err.to_string().contains(&format!("signal {signum}")),
                    "{err}"
                );
            }
            for signum in [0, -1, 1000] {
                let err = signal(SignalKind::from_raw(signum)).unwrap_err();
                assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
                assert!(err.to_string().contains("out of range"), "{err}");
            }
        });
    }

    /// Set in the child process that `ctrl_c_completes_on_sigint` starts.
    const CTRL_C_CHILD: &str = "TEMPO_SIGNAL_TEST_CTRL_C_CHILD";

    #[test]
    fn ctrl_c_completes_on_sigint() {
        let flavor = FLAVOR.name();
        if std::env::var_os(CTRL_C_CHILD).is_some() {
            // In the child: SIGINT reaches ctrl_c, not the default action.
            let rt = FLAVOR.runtime_with_all();
            rt.block_on(async {
                let mut ctrl_c = std::pin::pin!(tempo::signal::ctrl_c());
                // The first poll registers the listener.
                std::future::poll_fn(|cx| {
                    assert!(ctrl_c.as_mut().poll(cx).is_pending());
                    std::task::Poll::Ready(())
                })
                .await;
                raise(libc::SIGINT);
                within_hang_guard(ctrl_c).await.unwrap();
            });
            println!("ctrl_c completed on {flavor}");
            return;
        }
        // This flavor's test, by its full name, in a child process.
        let out = std::process::Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &format!("{flavor}::ctrl_c_completes_on_sigint")])
            .arg("--nocapture")
            .args(["--test-threads", "1"])
            .env(CTRL_C_CHILD, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success() && stdout.contains(&format!("ctrl_c completed on {flavor}")),
            "child on {flavor}: {:?}\nstdout:\n{stdout}\nstderr:\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
