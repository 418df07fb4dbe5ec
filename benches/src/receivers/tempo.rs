//! Tempo: one task per socket, `recv_from().await`, the same loop as the
//! tokio receiver with Tempo's runtime and `tempo::net::UdpSocket`.
//!
//! `tempo` is the basic scheduler, `tempo-throttled:T` the throttling
//! scheduler with period T.

use std::io;
use std::net::UdpSocket;

use crate::recv_stats::StreamTracker;
use std::time::Duration;

use crate::window::{MeasureWindow, Phase};

use super::RECV_BUF_LEN;

/// Runs one task per socket on a Tempo runtime (throttled with period
/// `throttle` if given) until `window` ends.
pub fn run(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Option<Duration>,
) -> io::Result<()> {
    let rt = crate::tempo_runtime::build(throttle)?;
    rt.block_on(async move {
        for (i, sock) in sockets.into_iter().enumerate() {
            sock.set_nonblocking(true)?;
            let sock = tempo::net::UdpSocket::from_std(sock)?;
            tempo::spawn(receive_loop(sock, StreamTracker::new(i as u32, window)));
        }
        tempo::time::sleep_until(window.end_instant().into()).await;
        Ok::<(), io::Error>(())
    })?;
    // Dropping the runtime drops the tasks still waiting for a datagram.
    drop(rt);
    Ok(())
}

async fn receive_loop(sock: tempo::net::UdpSocket, mut tracker: StreamTracker) {
    let mut buf = vec![0u8; RECV_BUF_LEN];
    loop {
        match sock.recv_from(&mut buf).await {
            Ok((n, _from)) => {
                if tracker.on_datagram(&buf[..n]) == Phase::Done {
                    return;
                }
            }
            Err(_) => {
                tracker.on_error();
                return;
            }
        }
    }
}
