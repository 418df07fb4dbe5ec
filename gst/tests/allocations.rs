//! Receiving a datagram allocates nothing on the Rust side (Tempo's
//! runtime, the task lifecycle, the element): the process's counting
//! global allocator sees no allocation while a stream flows once warm.
//! GStreamer's own allocations (C, its buffer pool) are not Rust's and
//! are not counted. One test in its own binary: no other test allocates
//! meanwhile.

mod util;

use std::sync::{Arc, Condvar, Mutex};
use std::time::Duration;

use gst::prelude::*;
use tempo_test_support::alloc::{allocations, CountingAllocator};
use util::*;

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

/// Buffers seen by the fakesink's pad, and a condition to wait on.
#[derive(Default)]
struct Seen {
    count: Mutex<u64>,
    changed: Condvar,
}

impl Seen {
    fn wait_for(&self, n: u64) {
        let count = self.count.lock().unwrap();
        let (count, timeout) = self
            .changed
            .wait_timeout_while(count, Duration::from_secs(10), |c| *c < n)
            .unwrap();
        assert!(!timeout.timed_out(), "{} of {n} buffers arrived", *count);
    }
}

#[test]
fn a_warm_stream_allocates_nothing_per_datagram_on_the_rust_side() {
    init();
    let p = pipeline(
        "tempoudpsrc name=src port=0 context=alloc context-wait=5 \
         retrieve-sender-address=false ! fakesink name=sink sync=false async=false",
    );
    let seen = Arc::new(Seen::default());
    let probe = seen.clone();
    by_name(&p, "sink").static_pad("sink").unwrap().add_probe(
        gst::PadProbeType::BUFFER,
        move |_, _| {
            *probe.count.lock().unwrap() += 1;
            probe.changed.notify_all();
            gst::PadProbeReturn::Ok
        },
    );
    p.set_state(gst::State::Playing).unwrap();
    let to = src_addr(&p, "src");
    let tx = sender();
    let payload = datagram(0);
    // Warm-up, with the pattern measured (bursts, and waits for the next
    // datagram in between): the pool, the receive batch, the task's loop
    // and the reactor's reused buffers reach their sizes.
    let mut sent = 0;
    for burst in [1, 5, 20, 100, 1, 100] {
        for _ in 0..burst {
            tx.send_to(&payload, to).unwrap();
        }
        sent += burst;
        seen.wait_for(sent);
    }
    // In bursts of 25: a ring receiver holds up to 32 datagrams its task
    // has not taken without allocating, however the bursts fall into
    // ticks; a deeper backlog than any before may grow its queue once.
    let before = allocations();
    for burst in 1..=40 {
        for _ in 0..25 {
            tx.send_to(&payload, to).unwrap();
        }
        seen.wait_for(sent + burst * 25);
    }
    let allocated = allocations() - before;
    p.set_state(gst::State::Null).unwrap();
    assert_eq!(
        allocated, 0,
        "Rust allocations while 1,000 datagrams flowed"
    );
}
