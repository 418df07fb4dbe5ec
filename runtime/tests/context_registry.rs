//! The context registry under contention: `Context::acquire` racing the
//! last drop of the context it finds.
//!
//! This file holds one test on purpose: a deadlock in the registry leaves
//! its lock held forever, which would hang every other context test of the
//! same binary. A context always runs the throttling scheduler: there is
//! no flavor to vary here.

use std::io;
use std::sync::mpsc;
use std::thread;
use std::time::Duration;

use tempo::context::Context;

/// Contexts each thread gets (and drops) before it stops. A registry that
/// drops a refused reference under its lock deadlocks here within the
/// first 15,000 calls (refusals included) and a few dozen contexts.
const CONTEXTS_PER_THREAD: usize = 1_000;

/// How long the watchdog waits for the next call to return before it calls
/// the run deadlocked: a bound against a hang, never a timing assertion.
const PATIENCE: Duration = Duration::from_secs(30);

enum Report {
    /// One more `acquire` returned: refused with `AlreadyExists`, or with
    /// a context that was then dropped.
    Returned { refused: bool },
    /// A thread got and dropped all its contexts.
    Finished,
}

/// Two threads take turns at one name: one calls `acquire("x", 5 ms)`, the
/// other `acquire("x", 10 ms)`, each in a loop. A thread that gets the
/// context makes one round trip to it (`block_on`) and drops it, while the
/// other is refused (`AlreadyExists`) again and again: the drop lands at any
/// point of a refused call, including after that call upgraded the
/// registry's weak reference. The refused call then holds the last strong
/// reference, and must drop it after releasing the registry lock, since
/// dropping the last reference takes that lock again.
#[test]
fn acquire_racing_the_last_drop_of_a_context_with_another_period_does_not_deadlock() {
    let (tx, rx) = mpsc::channel();
    for caller in 0..2 {
        let tx = tx.clone();
        thread::spawn(move || {
            let period = if caller == 0 { 5 } else { 10 };
            let mut got = 0;
            while got < CONTEXTS_PER_THREAD {
                match Context::acquire("x", Duration::from_millis(period)) {
                    Ok(context) => {
                        got += 1;
                        context.block_on(async {});
                        drop(context);
                        tx.send(Report::Returned { refused: false }).unwrap();
                    }
                    Err(e) if e.kind() == io::ErrorKind::AlreadyExists => {
                        tx.send(Report::Returned { refused: true }).unwrap();
                    }
                    Err(e) => panic!("acquire(\"x\", {period} ms) failed: {e}"),
                }
            }
            tx.send(Report::Finished).unwrap();
        });
    }
    drop(tx);

    let mut returned = 0usize;
    let mut refused = 0usize;
    let mut finished = 0;
    while finished < 2 {
        match rx.recv_timeout(PATIENCE) {
            Ok(Report::Returned { refused: r }) => {
                returned += 1;
                refused += usize::from(r);
            }
            Ok(Report::Finished) => finished += 1,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                panic!("acquire deadlocked after {returned} acquisitions")
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                panic!("a calling thread panicked after {returned} acquisitions")
            }
        }
    }
    // The racy path is a refusal: only a refused call can hold the last
    // reference under the lock. Without refusals the run proved nothing.
    eprintln!("{returned} acquisitions, {refused} refused with AlreadyExists");
    assert_eq!(returned - refused, 2 * CONTEXTS_PER_THREAD);
    assert!(
        refused > 0,
        "no acquire was refused: the racy path never ran ({returned} calls)"
    );
}
