//! Building the Tempo runtime under test: the basic scheduler, or the
//! throttling scheduler with period T, with I/O and timers enabled: what
//! an application would build.

use std::io;
use std::time::Duration;

use tempo::runtime::{Builder, Runtime};

/// A Tempo runtime with I/O and time: the basic scheduler for
/// `throttle = None`, the throttling scheduler with that period otherwise.
pub fn build(throttle: Option<Duration>) -> io::Result<Runtime> {
    Builder::new_current_thread()
        .enable_all()
        .max_throttling(throttle.unwrap_or(Duration::ZERO))
        .build()
}

/// The basic-scheduler runtime on a paused clock that jumps to the next
/// timer when nothing else is ready (for timer micro-benchmarks, like
/// tokio's `start_paused`).
pub fn build_paused() -> io::Result<Runtime> {
    Builder::new_current_thread()
        .enable_all()
        .start_paused(true)
        .build()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_tasks_timers_and_sockets_on_both_schedulers() {
        for throttle in [None, Some(Duration::from_millis(5))] {
            let rt = build(throttle).unwrap();
            let got = rt.block_on(async {
                let a = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let b = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let to = b.local_addr().unwrap();
                let recv = tempo::spawn(async move {
                    let mut buf = [0u8; 16];
                    let (n, _) = b.recv_from(&mut buf).await.unwrap();
                    buf[..n].to_vec()
                });
                tempo::time::sleep(Duration::from_millis(1)).await;
                a.send_to(b"hi", to).await.unwrap();
                recv.await.unwrap()
            });
            assert_eq!(got, b"hi", "{throttle:?}");
        }
    }

    #[test]
    fn paused_clock_advances_to_the_next_timer() {
        let rt = build_paused().unwrap();
        let elapsed = rt.block_on(async {
            let before = tempo::time::Instant::now();
            tempo::time::sleep(Duration::from_secs(3600)).await;
            tempo::time::Instant::now() - before
        });
        assert!(elapsed >= Duration::from_secs(3600));
    }
}
