//! Runtime context edge cases, each run on both schedulers: a runtime
//! dropped by a thread-local destructor, enter guards dropped out of order
//! or leaked, `Handle::block_on` on the runtime's own thread, and the drop
//! of a panicking task's future.

use std::cell::RefCell;
use std::future::Future;
use std::panic::{self, AssertUnwindSafe};
use std::pin::Pin;
use std::process::Command;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use tempo::runtime::{Handle, Runtime};

mod support;
use support::{on_each_flavor, DropCounter, Flavor};

/// A second runtime for the tests that enter two: the basic flavor, with
/// I/O and time.
fn other_runtime() -> Runtime {
    Flavor::Basic.runtime_with_all()
}

/// The message of a caught panic payload.
fn panic_message(payload: Box<dyn std::any::Any + Send>) -> String {
    payload
        .downcast_ref::<String>()
        .cloned()
        .or_else(|| payload.downcast_ref::<&str>().map(|s| s.to_string()))
        .unwrap_or_default()
}

/// Runs `f`, expecting a panic; returns its message.
fn expect_panic(what: &str, f: impl FnOnce()) -> String {
    match panic::catch_unwind(AssertUnwindSafe(f)) {
        Ok(()) => panic!("{what}: did not panic"),
        Err(payload) => panic_message(payload),
    }
}

// ---- 1. A runtime stored in a thread-local drops cleanly at thread exit ----

/// Set in the child process that runs the thread-local scenario.
const CHILD_ENV: &str = "TEMPO_CONTEXT_EDGE_TLS_CHILD";

thread_local! {
    /// Initialised before the runtime touches any thread-local of its
    /// own, so it is destroyed after them (destructors run in reverse
    /// order of registration): the runtime's drop finds them gone.
    static STORED: RefCell<Option<Runtime>> = const { RefCell::new(None) };
}

/// On a fresh thread: stores a runtime with live tasks, a socket and a
/// timer in a thread-local, then lets the thread exit.
fn runtime_in_a_thread_local(flavor: Flavor) -> Arc<AtomicUsize> {
    let dropped = Arc::new(AtomicUsize::new(0));
    let task_dropped = dropped.clone();
    thread::spawn(move || {
        STORED.with(|_| {});
        let rt = flavor.runtime_with_all();
        rt.block_on(async {
            let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let on_drop = DropCounter(task_dropped.clone());
            // Pending on a socket and on a timer when the thread exits.
            tempo::spawn(async move {
                let _on_drop = on_drop;
                let mut buf = [0u8; 8];
                let _ = socket.recv_from(&mut buf).await;
            });
            let on_drop = DropCounter(task_dropped);
            tempo::spawn(async move {
                let _on_drop = on_drop;
                tempo::time::sleep(Duration::from_secs(3600)).await;
            });
            tempo::task::yield_now().await;
        });
        STORED.with(|stored| *stored.borrow_mut() = Some(rt));
    })
    .join()
    .expect("the thread holding a runtime in a thread-local did not exit cleanly");
    dropped
}

/// Records whether its owner was dropped during a panic.
struct RecordsPanicking {
    dropped: Arc<AtomicBool>,
    panicking: Arc<AtomicBool>,
}

impl Drop for RecordsPanicking {
    fn drop(&mut self) {
        self.panicking.store(thread::panicking(), SeqCst);
        self.dropped.store(true, SeqCst);
    }
}

/// Panics on its first poll, holding a `RecordsPanicking`.
struct PanicsOnPoll(#[allow(dead_code)] RecordsPanicking);

impl Future for PanicsOnPoll {
    type Output = ();
    fn poll(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<()> {
        panic!("task panics on purpose");
    }
}

on_each_flavor! {
    /// The scenario itself; only does something in the child process (the old
    /// code aborted the whole process, which must not take the suite down).
    #[test]
    fn tls_child_scenario() {
        if std::env::var_os(CHILD_ENV).is_none() {
            return;
        }
        let dropped = runtime_in_a_thread_local(FLAVOR);
        assert_eq!(dropped.load(SeqCst), 2, "{}", FLAVOR.name());
    }

    #[test]
    fn a_runtime_in_a_thread_local_drops_cleanly_at_thread_exit() {
        // This flavor's scenario: its test's full name.
        let scenario = format!("{}::tls_child_scenario", FLAVOR.name());
        let output = Command::new(std::env::current_exe().unwrap())
            .args(["--exact", &scenario, "--test-threads=1"])
            .env(CHILD_ENV, "1")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout);
        let stderr = String::from_utf8_lossy(&output.stderr);
        assert!(
            output.status.success(),
            "child failed ({}):\n{stdout}\n{stderr}",
            output.status
        );
        assert!(stdout.contains("1 passed"), "child ran nothing:\n{stdout}");
    }

    // ---- 2. Enter guards dropped out of order; no stale current runtime ----

    #[test]
    fn runtime_enter_guards_dropped_out_of_order_panic() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        let other = other_runtime();
        let outer = rt.enter();
        let inner = other.enter();
        let message = expect_panic(name, || drop(outer));
        assert!(
            message.contains("dropped out of order"),
            "{name}: {message}"
        );
        assert!(message.contains("reverse order"), "{name}: {message}");
        drop(inner);
        drop(other);
        drop(rt);
        // Both runtimes and all guards are gone: nothing is current, and a
        // spawn is refused loudly instead of queued where it never runs.
        assert!(Handle::try_current().is_err(), "{name}: stale runtime");
        let message = expect_panic(name, || drop(tempo::spawn(async {})));
        assert!(
            message.contains("outside a Tempo runtime"),
            "{name}: {message}"
        );
        let message = expect_panic(name, || drop(tempo::spawn_local(async {})));
        assert!(message.contains("spawn_local"), "{name}: {message}");
    }

    #[test]
    fn handle_enter_guards_take_part_in_the_order_check() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        let other = other_runtime();
        // A Handle::enter guard inside a Runtime::enter guard.
        let outer = rt.enter();
        let inner = other.handle().enter();
        let message = expect_panic(name, || drop(outer));
        assert!(
            message.contains("dropped out of order"),
            "{name}: {message}"
        );
        drop(inner);
        // And the other way round.
        let outer = other.handle().enter();
        let inner = other.enter();
        let message = expect_panic(name, || drop(outer));
        assert!(
            message.contains("dropped out of order"),
            "{name}: {message}"
        );
        drop(inner);
        drop(other);
        drop(rt);
        assert!(Handle::try_current().is_err(), "{name}: stale runtime");
    }

    #[test]
    fn nested_enter_guards_in_order_restore_each_runtime() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        let other = other_runtime();
        let outer = rt.enter();
        {
            let _inner = other.enter();
            assert_eq!(
                Handle::current().max_throttling(),
                other.handle().max_throttling(),
                "{name}"
            );
            // As in tokio, the innermost entered handle is the current one.
            let _entered = rt.handle().enter();
            assert_eq!(
                Handle::current().max_throttling(),
                rt.handle().max_throttling(),
                "{name}"
            );
        }
        // The outer runtime is current again, and a task spawned there runs.
        let join = tempo::spawn(async { 5 });
        drop(outer);
        assert!(Handle::try_current().is_err(), "{name}");
        assert_eq!(rt.block_on(join).unwrap(), 5, "{name}");
    }

    #[test]
    fn a_dropped_runtime_is_never_current_even_with_a_leaked_guard() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        std::mem::forget(rt.enter());
        assert!(Handle::try_current().is_ok(), "{name}");
        drop(rt);
        assert!(Handle::try_current().is_err(), "{name}: stale runtime");
        let message = expect_panic(name, || drop(tempo::spawn(async {})));
        assert!(
            message.contains("outside a Tempo runtime"),
            "{name}: {message}"
        );
        // A new runtime enters and leaves normally above the leaked level.
        let next = other_runtime();
        {
            let _guard = next.enter();
            assert!(Handle::try_current().is_ok(), "{name}");
        }
        assert!(Handle::try_current().is_err(), "{name}");
    }

    /// As in tokio, `Handle::enter` on another thread makes that runtime the
    /// current one there: `Handle::try_current` finds it and `tempo::spawn`
    /// queues onto it. Once the runtime is dropped, a guard still held does
    /// not make it current.
    #[test]
    fn handle_enter_on_another_thread_makes_the_runtime_current() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        let handle = rt.handle().clone();
        let join = thread::spawn(move || {
            assert!(Handle::try_current().is_err(), "{name}: not entered yet");
            let _guard = handle.enter();
            let current = Handle::try_current().expect("entered through Handle::enter");
            assert_eq!(current.max_throttling(), handle.max_throttling());
            tempo::spawn(async { 7 })
        })
        .join()
        .unwrap();
        assert_eq!(rt.block_on(join).unwrap(), 7, "{name}");

        // Inside the owning runtime's block_on, entering its own handle keeps
        // local spawns working.
        rt.block_on(async {
            let _guard = Handle::current().enter();
            assert_eq!(tempo::spawn_local(async { 8 }).await.unwrap(), 8, "{name}");
        });

        let handle = rt.handle().clone();
        let (entered, release) = (
            Arc::new(std::sync::Barrier::new(2)),
            Arc::new(std::sync::Barrier::new(2)),
        );
        let (e, r) = (entered.clone(), release.clone());
        let other = thread::spawn(move || {
            let _guard = handle.enter();
            e.wait();
            r.wait();
            Handle::try_current().is_err()
        });
        entered.wait();
        drop(rt);
        release.wait();
        assert!(
            other.join().unwrap(),
            "{name}: a dropped runtime is not current"
        );
    }

    // ---- 3. Handle::block_on on the runtime's own thread ----

    #[test]
    fn handle_block_on_on_the_owning_thread_panics_instead_of_waiting_forever() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        let handle = rt.handle().clone();
        // Outside block_on, not entered.
        let message = expect_panic(name, || handle.block_on(async {}));
        assert!(
            message.contains("thread that owns the runtime"),
            "{name}: {message}"
        );
        assert!(message.contains("Runtime::block_on"), "{name}: {message}");
        // Entered, not running.
        let guard = rt.enter();
        let message = expect_panic(name, || handle.block_on(async {}));
        assert!(
            message.contains("thread that owns the runtime"),
            "{name}: {message}"
        );
        drop(guard);
        // From another thread it runs the future on the runtime's thread.
        let remote = thread::spawn(move || handle.block_on(async { 3 }));
        rt.block_on(async {
            for _ in 0..10_000 {
                if remote.is_finished() {
                    break;
                }
                tempo::time::sleep(Duration::from_millis(1)).await;
            }
        });
        assert_eq!(remote.join().unwrap(), 3, "{name}");
    }

    // ---- 5. A panicking task's future is dropped while panicking ----

    #[test]
    fn a_panicking_task_is_dropped_while_panicking_like_tokio() {
        let (name, rt) = (FLAVOR.name(), FLAVOR.runtime_with_all());
        let dropped = Arc::new(AtomicBool::new(false));
        let panicking = Arc::new(AtomicBool::new(false));
        let future = PanicsOnPoll(RecordsPanicking {
            dropped: dropped.clone(),
            panicking: panicking.clone(),
        });
        let error = rt.block_on(rt.spawn(future)).unwrap_err();
        assert!(error.is_panic(), "{name}");
        assert!(dropped.load(SeqCst), "{name}: future not dropped");
        assert!(panicking.load(SeqCst), "{name}: dropped after the unwind");
        // A cancelled task's future is dropped outside any panic.
        let dropped = Arc::new(AtomicBool::new(false));
        let panicking = Arc::new(AtomicBool::new(true));
        let guard = RecordsPanicking {
            dropped: dropped.clone(),
            panicking: panicking.clone(),
        };
        let join = rt.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await;
        });
        join.abort();
        assert!(rt.block_on(join).unwrap_err().is_cancelled(), "{name}");
        assert!(dropped.load(SeqCst), "{name}");
        assert!(!panicking.load(SeqCst), "{name}");
        // The runtime goes on.
        assert_eq!(rt.block_on(rt.spawn(async { 1 })).unwrap(), 1, "{name}");
    }
}
