//! tokio's current_thread runtime: one task per socket, `recv_from().await`.
//!
//! This is what a user would write with tokio today. Every datagram wakes its
//! task through the I/O driver; the task reads until `recv_from` would block,
//! which costs one extra (empty) `recvfrom` per wake-up.

use std::io;
use std::net::UdpSocket;

use crate::recv_stats::StreamTracker;
use crate::window::{MeasureWindow, Phase};

use super::RECV_BUF_LEN;

/// Runs one task per socket on a current_thread runtime until `window` ends.
pub fn run(sockets: Vec<UdpSocket>, window: MeasureWindow) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        for (i, sock) in sockets.into_iter().enumerate() {
            sock.set_nonblocking(true)?;
            let sock = tokio::net::UdpSocket::from_std(sock)?;
            tokio::spawn(receive_loop(sock, StreamTracker::new(i as u32, window)));
        }
        tokio::time::sleep_until(window.end_instant().into()).await;
        Ok::<(), io::Error>(())
    })?;
    // Dropping the runtime drops the tasks still waiting for a datagram.
    drop(rt);
    Ok(())
}

async fn receive_loop(sock: tokio::net::UdpSocket, mut tracker: StreamTracker) {
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
