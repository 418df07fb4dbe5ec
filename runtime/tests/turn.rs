//! Driving a runtime from a host loop with `Runtime::turn`, on a custom
//! driver; and the poll budget.
//!
//! The first two tests count the basic scheduler's turns (one driver run
//! per turn, an unpark only when a turn parked): the throttling
//! scheduler's turn is one tick on its grid, with its own unpark rules,
//! and `throttle_ticks.rs` and `throttle_lifecycle.rs` count it. The
//! others hold on both schedulers and run on each (`on_each_flavor!`).

use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use tempo::runtime::Builder;

mod support;
use support::on_each_flavor;
use tempo_park::{DriverStats, Park, ParkThread};

/// A driver over ParkThread that counts its parks (blocking and polling
/// apart) and reports one fake I/O event per park.
struct CountingPark {
    inner: ParkThread,
    blocking_parks: Arc<AtomicU64>,
    polls: Arc<AtomicU64>,
}

impl Park for CountingPark {
    type Unpark = <ParkThread as Park>::Unpark;
    type Error = std::convert::Infallible;

    fn unpark(&self) -> Self::Unpark {
        self.inner.unpark()
    }
    fn park(&mut self) -> Result<(), Self::Error> {
        self.blocking_parks.fetch_add(1, SeqCst);
        self.inner.park()
    }
    fn park_timeout(&mut self, d: Duration) -> Result<(), Self::Error> {
        if d.is_zero() {
            self.polls.fetch_add(1, SeqCst);
        } else {
            self.blocking_parks.fetch_add(1, SeqCst);
        }
        self.inner.park_timeout(d)
    }
    fn stats(&self) -> DriverStats {
        DriverStats {
            io_events: self.blocking_parks.load(SeqCst) + self.polls.load(SeqCst),
            timers_fired: 0,
        }
    }
}

fn counting() -> (CountingPark, Arc<AtomicU64>, Arc<AtomicU64>) {
    let blocking = Arc::new(AtomicU64::new(0));
    let polls = Arc::new(AtomicU64::new(0));
    (
        CountingPark {
            inner: ParkThread::new(),
            blocking_parks: blocking.clone(),
            polls: polls.clone(),
        },
        blocking,
        polls,
    )
}

#[test]
fn host_loop_drives_the_runtime_through_turn() {
    let (park, blocking, polls) = counting();
    let rt = Builder::new_current_thread()
        .with_park(park)
        .build()
        .unwrap();
    let done = Arc::new(AtomicUsize::new(0));
    for _ in 0..10 {
        let done = done.clone();
        drop(rt.spawn(async move {
            for _ in 0..3 {
                tempo::task::yield_now().await;
            }
            done.fetch_add(1, SeqCst);
        }));
    }
    // The host loop: a bounded number of turns, never blocking while work
    // remains.
    let mut total_polled = 0;
    let mut turns = 0;
    loop {
        let turn = rt.turn(Duration::from_millis(10));
        turns += 1;
        total_polled += turn.tasks_polled();
        assert_eq!(turn.io_events(), 1, "the driver ran exactly once per turn");
        assert_eq!(turn.timers_fired(), 0);
        if !turn.tasks_remaining() {
            break;
        }
        assert!(
            !turn.parked(),
            "work was pending: the driver was only polled"
        );
        assert!(turns < 100);
    }
    assert_eq!(done.load(SeqCst), 10);
    assert_eq!(total_polled, 40); // 10 tasks x (3 yields + 1 completion)
    assert_eq!(blocking.load(SeqCst) + polls.load(SeqCst), turns);

    // Nothing ready: a zero max_wait polls, never blocks.
    let turn = rt.turn(Duration::ZERO);
    assert_eq!(turn.tasks_polled(), 0);
    assert!(!turn.parked());
    assert_eq!(turn.parked_for(), Duration::ZERO);

    // A remote spawn between turns is picked up by the next turn.
    let handle = rt.handle().clone();
    let j = std::thread::spawn(move || handle.spawn(async { 3 }))
        .join()
        .unwrap();
    let turn = rt.turn(Duration::ZERO);
    assert_eq!(turn.tasks_polled(), 1);
    assert!(j.is_finished());
    assert_eq!(rt.handle().unpark_count(), 0, "the runtime was not parked");

    // Nothing ready and a real max_wait: the driver is parked.
    let before = blocking.load(SeqCst);
    let turn = rt.turn(Duration::from_millis(1));
    assert!(turn.parked());
    assert_eq!(blocking.load(SeqCst), before + 1);
}

#[test]
fn remote_spawn_unparks_a_turn_parked_forever() {
    let (park, blocking, _) = counting();
    let rt = Builder::new_current_thread()
        .with_park(park)
        .build()
        .unwrap();
    let handle = rt.handle().clone();
    let t = std::thread::spawn(move || {
        // Spawn once the runtime's thread is in (or entering) its park.
        for _ in 0..10_000_000 {
            if blocking.load(SeqCst) > 0 {
                break;
            }
            std::thread::yield_now();
        }
        handle.spawn(async { 1 })
    });
    let turn = rt.turn(Duration::MAX); // returns only if unparked
    assert!(turn.parked());
    assert_eq!(rt.handle().unpark_count(), 1);
    let join = t.join().unwrap();
    assert_eq!(rt.turn(Duration::ZERO).tasks_polled(), 1);
    assert_eq!(rt.block_on(join).unwrap(), 1);
}

on_each_flavor! {
    #[test]
    fn self_waking_task_does_not_starve_remote_spawns_or_the_driver() {
        let (park, blocking, polls) = counting();
        let rt = builder().event_interval(8).with_park(park).build().unwrap();
        let spins = Arc::new(AtomicU64::new(0));
        let s = spins.clone();
        let spinner = rt.spawn(async move {
            loop {
                s.fetch_add(1, SeqCst);
                tempo::task::yield_now().await;
            }
        });
        let handle = rt.handle().clone();
        let remote = std::thread::spawn(move || handle.spawn(async { "ran" }))
            .join()
            .unwrap();
        let out = rt.block_on(remote).unwrap();
        assert_eq!(out, "ran");
        // The driver was polled although the spinner was always ready.
        assert!(polls.load(SeqCst) >= 1);
        assert_eq!(blocking.load(SeqCst), 0, "never blocked with work pending");
        spinner.abort();
        assert!(rt.block_on(spinner).unwrap_err().is_cancelled());
        assert!(spins.load(SeqCst) >= 1);
    }

    #[test]
    fn turn_inside_a_task_panics() {
        let rt = std::rc::Rc::new(builder().build().unwrap());
        let rt2 = rt.clone();
        let err = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            rt.block_on(async {
                rt2.turn(Duration::ZERO);
            })
        }))
        .unwrap_err();
        let msg = err.downcast_ref::<String>().unwrap();
        assert!(
            msg.contains("Cannot call turn from inside a Tempo runtime"),
            "{msg}"
        );
    }
}
