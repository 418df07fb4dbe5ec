//! `tempo-throttled-uring:T`: Tempo's throttling scheduler, one task per
//! socket, each receiving with a [`UdpRingReceiver`] (the receives on the
//! runtime driver's io_uring: no syscall per datagram) and reading the
//! payload in place, as `tempo-throttled-threadbuf:T` does on epoll with
//! `recv_from_with`.
//!
//! The receivers are made for datagrams of up to 1,500 bytes (an
//! Ethernet MTU, 2 KiB buffers); `tempo-throttled-uring-dense:T` for up to
//! 212 (256-byte buffers, the ring's memory in the second-level cache).
//! The `-taskbuf` variants copy each datagram into the task's own buffer
//! ([`Read::TaskBuffer`]), as the plain epoll receiver's
//! `recv_from(&mut buf)` has the kernel write into it.

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

use tempo::net::UdpRingReceiver;

use crate::recv_stats::StreamTracker;
use crate::window::MeasureWindow;

use super::RECV_BUF_LEN;

/// `max_datagram` of `tempo-throttled-uring:T`'s receivers.
pub const MTU_DATAGRAM: usize = 1500;
/// `max_datagram` of `tempo-throttled-uring-dense:T`'s: the benchmark's
/// 160-byte datagrams fit.
pub const DENSE_DATAGRAM: usize = 212;

/// Where a receiver task reads its datagrams.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Read {
    /// In the ring's buffer (`recv_from_with`).
    InPlace,
    /// Copied into a buffer of the task's own (`recv_from`), of
    /// [`RECV_BUF_LEN`] bytes.
    TaskBuffer,
}

/// Runs one ring-receiver task per socket on a throttling Tempo runtime of
/// period `throttle` until `window` ends.
pub fn run(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Duration,
    max_datagram: usize,
    read: Read,
) -> io::Result<()> {
    let rt = crate::tempo_runtime::build(Some(throttle))?;
    rt.block_on(async move {
        for (i, sock) in sockets.into_iter().enumerate() {
            let receiver = UdpRingReceiver::from_std(sock, max_datagram)?;
            let tracker = StreamTracker::new(i as u32, window);
            match read {
                Read::InPlace => tempo::spawn_local(receive_in_place(receiver, tracker)),
                Read::TaskBuffer => tempo::spawn_local(receive_into_task_buffer(receiver, tracker)),
            };
        }
        // As the other Tempo receivers: never before the window's end.
        tempo::time::sleep_at_least(window.remaining()).await;
        Ok::<(), io::Error>(())
    })?;
    drop(rt);
    Ok(())
}

async fn receive_in_place(receiver: UdpRingReceiver, mut tracker: StreamTracker) {
    loop {
        let received = receiver
            .recv_from_with(|datagram, _from| tracker.on_datagram(datagram))
            .await;
        if !tracker.goes_on(received) {
            return;
        }
    }
}

async fn receive_into_task_buffer(receiver: UdpRingReceiver, mut tracker: StreamTracker) {
    let mut buf = vec![0u8; RECV_BUF_LEN];
    loop {
        let received = receiver
            .recv_from(&mut buf)
            .await
            .map(|(n, _from)| tracker.on_datagram(&buf[..n]));
        if !tracker.goes_on(received) {
            return;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recv_stats::with_thread_stats;

    /// Datagrams queued before the runtime starts reach their tasks, each
    /// once, with both buffer classes.
    #[test]
    fn ring_receiver_tasks_receive_every_queued_datagram() {
        for max_datagram in [MTU_DATAGRAM, DENSE_DATAGRAM] {
            for read in [Read::InPlace, Read::TaskBuffer] {
                let sockets = super::super::sockets_with_queued(3, 4);
                let before = with_thread_stats(|stats| stats.received);
                let window = MeasureWindow::after_warmup(Duration::ZERO, Duration::from_secs(1));
                run(
                    sockets,
                    window,
                    Duration::from_millis(20),
                    max_datagram,
                    read,
                )
                .unwrap();
                let (received, errors) = with_thread_stats(|stats| (stats.received, stats.errors));
                assert_eq!(
                    received - before,
                    12,
                    "max_datagram {max_datagram}, {read:?}"
                );
                assert_eq!(errors, 0);
            }
        }
    }
}
