//! The Tempo runtime under test: Tempo's basic scheduler over Tempo's timer
//! driver over Tempo's I/O driver, composed here through
//! `Builder::with_park` until `tempo`'s own builder composes the default
//! stack itself (then [`TempoRuntime::new`] becomes a call to it).
//!
//! Sockets and timers find their driver through the thread's current
//! `tempo_io::Handle` / `tempo_time::Handle`; [`TempoRuntime::block_on`]
//! enters both around the scheduler's `block_on`, so tasks (which run on
//! this thread) see them.

use std::future::Future;
use std::io;

/// A Tempo runtime with I/O and time enabled.
pub struct TempoRuntime {
    runtime: tempo::runtime::Runtime,
    io: tempo_io::Handle,
    time: tempo_time::Handle,
}

impl std::fmt::Debug for TempoRuntime {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TempoRuntime").finish_non_exhaustive()
    }
}

impl TempoRuntime {
    /// Builds the basic-scheduler runtime with both drivers.
    pub fn new() -> io::Result<TempoRuntime> {
        TempoRuntime::with_clock(tempo_time::Clock::real())
    }

    /// The same runtime on a paused clock that advances by itself when
    /// nothing else is ready (for timer micro-benchmarks, like tokio's
    /// `start_paused`).
    pub fn new_paused() -> io::Result<TempoRuntime> {
        TempoRuntime::with_clock(tempo_time::Clock::paused())
    }

    fn with_clock(clock: tempo_time::Clock) -> io::Result<TempoRuntime> {
        let io_driver = tempo_io::Driver::new()?;
        let io = io_driver.handle();
        let time_driver = tempo_time::Driver::new(io_driver, clock);
        let time = time_driver.handle();
        let runtime = tempo::runtime::Builder::new_current_thread()
            .with_park(time_driver)
            .build()?;
        Ok(TempoRuntime { runtime, io, time })
    }

    /// Runs `future` to completion on this thread, with the drivers current.
    pub fn block_on<F: Future>(&self, future: F) -> F::Output {
        let _io = self.io.enter();
        let _time = self.time.enter();
        self.runtime.block_on(future)
    }

    /// The scheduler's handle, for spawning from other threads.
    pub fn handle(&self) -> &tempo::runtime::Handle {
        self.runtime.handle()
    }

    /// The timer driver's handle (its clock, for converting deadlines).
    pub fn time(&self) -> &tempo_time::Handle {
        &self.time
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    #[test]
    fn runs_tasks_timers_and_sockets() {
        let rt = TempoRuntime::new().unwrap();
        let got = rt.block_on(async {
            let a = tempo_io::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let b = tempo_io::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let to = b.local_addr().unwrap();
            let recv = tempo::spawn(async move {
                let mut buf = [0u8; 16];
                let (n, _) = b.recv_from(&mut buf).await.unwrap();
                buf[..n].to_vec()
            });
            tempo_time::sleep(Duration::from_millis(1)).await;
            a.send_to(b"hi", to).await.unwrap();
            recv.await.unwrap()
        });
        assert_eq!(got, b"hi");
    }

    #[test]
    fn paused_clock_advances_to_the_next_timer() {
        let rt = TempoRuntime::new_paused().unwrap();
        let before = rt.time().now();
        // The Sleep is created inside block_on, where the time driver is current.
        rt.block_on(async { tempo_time::sleep(Duration::from_secs(3600)).await });
        assert!(rt.time().now() - before >= Duration::from_secs(3600));
    }
}
