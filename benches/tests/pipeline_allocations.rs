//! The guard of issue 22 §3's "0 allocations per buffer in steady state":
//! the pipeline's own elements (a tempo-media source, timer-driven or UDP,
//! the channel, the sink, the buffer pool), counted on the context's thread
//! over N buffers once every stream is warm.
//!
//! Counted, not timed: the test waits for buffer counts (bounded by a hang
//! guard), and counts only the context thread's allocations (the one
//! thread that runs every element), so the test thread's own work and
//! other tests' threads are not in the figure. A binary has one global
//! allocator, hence a file of its own. Each pipeline runs with a buffer
//! pool per stream and with one per context.

use std::cell::RefCell;
use std::sync::Arc;
use std::time::{Duration, Instant};

use tempo::context::Context;
use tempo_benches::pipeline::buffer::{GroupPools, PoolScope};
use tempo_benches::pipeline::sink::SinkShared;
use tempo_benches::pipeline::timer::prepare_timer_stream;
use tempo_benches::pipeline::timer::{POOL_BUFFERS, TIMER_BUFFER_LEN};
use tempo_benches::pipeline::udp::prepare_udp_stream;
use tempo_benches::receivers::RECV_BUF_LEN;
use tempo_benches::window::MeasureWindow;
use tempo_test_support::alloc::{CountingAllocator, ThreadCounter};

#[global_allocator]
static ALLOC: CountingAllocator = CountingAllocator;

std::thread_local! {
    /// The context thread's counter, between the two `block_on`s that
    /// start and stop it (a `ThreadCounter` counts the thread that started
    /// it, and cannot be moved into a task).
    static COUNTER: RefCell<Option<ThreadCounter>> = const { RefCell::new(None) };
}

const STREAMS: usize = 20;
/// Buffers per stream (on average) before counting: well past the channel's second block
/// (tokio's bounded channel allocates it on the 33rd message, then
/// recycles its blocks).
const WARMUP_PER_STREAM: u64 = 100;
/// Buffers counted.
const COUNTED: u64 = 4_000;

/// Waits until `shared` has delivered `at_least` buffers.
fn wait_for_buffers(shared: &SinkShared, at_least: u64) -> u64 {
    let guard = Instant::now() + Duration::from_secs(60);
    loop {
        let delivered = shared.delivered();
        if delivered >= at_least {
            return delivered;
        }
        assert!(
            Instant::now() < guard,
            "hang guard: {delivered} of {at_least} buffers"
        );
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// Starts counting the context thread's allocations.
fn start_counting(context: &Context) {
    context.block_on(async { COUNTER.with(|c| *c.borrow_mut() = Some(ThreadCounter::start())) });
}

/// Stops counting; returns the context thread's allocations.
fn stop_counting(context: &Context) -> u64 {
    context.block_on(async { COUNTER.with(|c| c.borrow_mut().take().expect("counting").stop()) })
}

#[test]
fn the_timer_pipeline_allocates_nothing_per_buffer_in_steady_state() {
    timer_pipeline_allocations(PoolScope::Context);
}

#[test]
fn the_timer_pipeline_with_a_pool_per_stream_allocates_nothing_per_buffer() {
    timer_pipeline_allocations(PoolScope::Stream);
}

fn timer_pipeline_allocations(scope: PoolScope) {
    let period = Duration::from_millis(1);
    let name = format!("pipeline-allocations-{}", scope.name());
    let context = Context::acquire(&name, period).unwrap();
    let shared = Arc::new(SinkShared::default());
    let pools = GroupPools::new(scope, STREAMS, POOL_BUFFERS, TIMER_BUFFER_LEN);
    let streams: Vec<_> = (0..STREAMS)
        .map(|_| prepare_timer_stream(&context, period, period * 2, shared.clone(), &pools))
        .collect();
    let timeout = Duration::from_secs(30);
    let tasks: Vec<_> = streams
        .into_iter()
        .map(|(task, prepared)| {
            prepared.wait(timeout).unwrap();
            task
        })
        .collect();
    for task in &tasks {
        task.start().wait(timeout).unwrap();
    }
    wait_for_buffers(&shared, STREAMS as u64 * WARMUP_PER_STREAM);

    context.block_on(async { COUNTER.with(|c| *c.borrow_mut() = Some(ThreadCounter::start())) });
    let from = shared.delivered();
    wait_for_buffers(&shared, from + COUNTED);
    let allocations = context
        .block_on(async { COUNTER.with(|c| c.borrow_mut().take().expect("counting").stop()) });
    let counted = shared.delivered() - from;

    assert!(counted >= COUNTED);
    assert_eq!(
        allocations, 0,
        "{allocations} allocations on the context thread over {counted} buffers"
    );
    for task in &tasks {
        task.stop().wait(timeout).unwrap();
        task.unprepare().wait(timeout).unwrap();
    }
}

/// The UDP pipeline: a source task per socket on a throttling context,
/// fed from the test thread one datagram per socket per round (each round
/// waits for the previous one's delivery, so no socket buffer overflows).
#[test]
fn the_udp_pipeline_allocates_nothing_per_datagram_in_steady_state() {
    udp_pipeline_allocations(PoolScope::Context);
}

#[test]
fn the_udp_pipeline_with_a_pool_per_stream_allocates_nothing_per_datagram() {
    udp_pipeline_allocations(PoolScope::Stream);
}

fn udp_pipeline_allocations(scope: PoolScope) {
    const SOCKETS: usize = 10;
    const WARMUP_ROUNDS: u64 = 100;
    const COUNTED_ROUNDS: u64 = 200;
    let name = format!("pipeline-udp-allocations-{}", scope.name());
    let context = Context::acquire(&name, Duration::from_millis(1)).unwrap();
    let shared = Arc::new(SinkShared::default());
    let pools = GroupPools::new(scope, SOCKETS, POOL_BUFFERS, RECV_BUF_LEN);
    let always = MeasureWindow {
        start_ns: 0,
        end_ns: u64::MAX,
    };
    let timeout = Duration::from_secs(30);
    let mut addresses = Vec::new();
    let tasks: Vec<_> = (0..SOCKETS)
        .map(|i| {
            let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            addresses.push(socket.local_addr().unwrap());
            let late_after = Duration::from_secs(1);
            prepare_udp_stream(
                &context,
                i as u32,
                socket,
                always,
                late_after,
                shared.clone(),
                &pools,
            )
        })
        .collect::<Vec<_>>()
        .into_iter()
        .map(|(task, prepared)| {
            prepared.wait(timeout).unwrap();
            task.start().wait(timeout).unwrap();
            task
        })
        .collect();
    let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let datagram = [0u8; 160];
    let mut sent = 0;
    let mut round = || {
        for to in &addresses {
            sender.send_to(&datagram, to).unwrap();
        }
        sent += SOCKETS as u64;
        wait_for_buffers(&shared, sent);
    };
    for _ in 0..WARMUP_ROUNDS {
        round();
    }
    start_counting(&context);
    for _ in 0..COUNTED_ROUNDS {
        round();
    }
    let allocations = stop_counting(&context);

    assert_eq!(
        allocations,
        0,
        "{allocations} allocations on the context thread over {} datagrams",
        COUNTED_ROUNDS * SOCKETS as u64
    );
    for task in &tasks {
        task.stop().wait(timeout).unwrap();
        task.unprepare().wait(timeout).unwrap();
    }
}
