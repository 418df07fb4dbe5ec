//! A host loop that owns the thread and drives Tempo one tick at a time,
//! with a custom driver under the scheduler.
//!
//! This is how a media framework (a GLib or GStreamer main loop, say) can
//! run Tempo tasks without giving its thread to `block_on`: it calls
//! `Runtime::turn` from its own loop, and it may put its own `Park` driver
//! under the scheduler. Here the host's driver *wraps* Tempo's I/O driver
//! (`Builder::with_park_fn`), so `tempo::net` sockets keep working: it
//! counts parks and could equally poll the host's own event sources.
//!
//! Run it with `cargo run --release -p tempo --example host_loop`.

use std::sync::atomic::{AtomicBool, AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tempo::park::{DriverStats, Park};
use tempo::runtime::{Builder, IoReactor};

/// The host's driver: where the scheduler blocks between ticks when idle.
/// A real host would poll its own sources here (and add them to `stats`);
/// this one parks Tempo's I/O driver and counts.
struct HostPark {
    inner: IoReactor,
    parks: Arc<AtomicU32>,
}

impl Park for HostPark {
    type Unpark = <IoReactor as Park>::Unpark;
    type Error = std::io::Error;

    fn unpark(&self) -> Self::Unpark {
        self.inner.unpark()
    }

    fn park(&mut self) -> Result<(), Self::Error> {
        self.parks.fetch_add(1, Ordering::Relaxed);
        self.inner.park()
    }

    fn park_timeout(&mut self, duration: Duration) -> Result<(), Self::Error> {
        self.parks.fetch_add(1, Ordering::Relaxed);
        self.inner.park_timeout(duration)
    }

    fn stats(&self) -> DriverStats {
        self.inner.stats()
    }
}

fn main() -> std::io::Result<()> {
    let parks = Arc::new(AtomicU32::new(0));
    let rt = Builder::new_current_thread()
        .enable_time()
        .max_throttling(Duration::from_millis(10))
        .with_park_fn({
            let parks = parks.clone();
            move |io| HostPark { inner: io, parks }
        })
        .build()?;

    // A socket on the I/O driver the host's driver wraps: it echoes one
    // datagram back to a peer, in a task.
    let echo = rt.block_on(async {
        let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
        let peer = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
        peer.send_to(b"ping", socket.local_addr()?).await?;
        let task = tempo::spawn(async move {
            let mut buf = [0u8; 16];
            let (n, from) = socket.recv_from(&mut buf).await?;
            socket.send_to(&buf[..n], from).await
        });
        let mut buf = [0u8; 16];
        let (n, _) = peer.recv_from(&mut buf).await?;
        task.await.expect("echo task")?;
        Ok::<_, std::io::Error>(buf[..n].to_vec())
    })?;

    // A periodic task: 8 ticks of a 25 ms interval.
    let ticks = Arc::new(AtomicU32::new(0));
    let done = Arc::new(AtomicBool::new(false));
    {
        let ticks = ticks.clone();
        let done = done.clone();
        rt.spawn(async move {
            let mut interval = tempo::time::interval(Duration::from_millis(25));
            for _ in 0..8 {
                interval.tick().await;
                ticks.fetch_add(1, Ordering::Relaxed);
            }
            done.store(true, Ordering::Relaxed);
        });
    }

    // Another thread spawns work onto the runtime; under throttling it runs
    // at the next tick, without waking the host thread in between.
    let handle = rt.handle().clone();
    let remote = std::thread::spawn(move || {
        std::thread::sleep(Duration::from_millis(30));
        handle.spawn(async { "spawned from another thread" })
    });

    // The host loop: one `turn` per iteration, then the host's own work.
    let mut iterations = 0;
    let (mut polled, mut timers, mut slept) = (0, 0, Duration::ZERO);
    while !done.load(Ordering::Relaxed) && iterations < 1_000 {
        let turn = rt.turn(Duration::from_millis(50));
        iterations += 1;
        polled += turn.tasks_polled();
        timers += turn.timers_fired();
        slept += turn.parked_for();
        // ... the host's own sources would be dispatched here ...
    }

    let remote = remote.join().expect("remote thread");
    let message = rt.block_on(remote).expect("remote task");
    let metrics = rt.metrics();
    println!("host loop: {iterations} turns, {polled} task polls, {timers} timers fired");
    println!(
        "interval task ticked {} times; host driver parked {} times",
        ticks.load(Ordering::Relaxed),
        parks.load(Ordering::Relaxed)
    );
    println!("remote task said: {message:?}");
    println!(
        "echoed through the host's driver: {:?}",
        String::from_utf8_lossy(&echo)
    );
    println!(
        "time parked or sleeping: {:?} in turns; runtime parked ratio {:.0}%, {} overruns",
        slept,
        metrics.parked_ratio() * 100.0,
        metrics.overruns
    );
    Ok(())
}
