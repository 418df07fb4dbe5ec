//! `tempo-throttled-uring:T`: Tempo's throttling scheduler, one task per
//! socket, each receiving with a [`UdpRingReceiver`] (the receives on the
//! thread's io_uring: no syscall per datagram) and reading the payload in
//! place, as `tempo-throttled-threadbuf:T` does on epoll with
//! `recv_from_with`.
//!
//! The receivers are made for datagrams of up to 1,500 bytes (an
//! Ethernet MTU, 2 KiB buffers); `tempo-throttled-uring-dense:T` for up to
//! 212 (256-byte buffers, the ring's memory in the second-level cache).

use std::io;
use std::net::UdpSocket;
use std::time::Duration;

use tempo::net::UdpRingReceiver;

use crate::recv_stats::StreamTracker;
use crate::window::MeasureWindow;

/// `max_datagram` of `tempo-throttled-uring:T`'s receivers.
pub const MTU_DATAGRAM: usize = 1500;
/// `max_datagram` of `tempo-throttled-uring-dense:T`'s: the benchmark's
/// 160-byte datagrams fit.
pub const DENSE_DATAGRAM: usize = 212;

/// Runs one ring-receiver task per socket on a throttling Tempo runtime of
/// period `throttle` until `window` ends.
pub fn run(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    throttle: Duration,
    max_datagram: usize,
) -> io::Result<()> {
    let rt = crate::tempo_runtime::build(Some(throttle))?;
    rt.block_on(async move {
        for (i, sock) in sockets.into_iter().enumerate() {
            let receiver = UdpRingReceiver::from_std(sock, max_datagram)?;
            let tracker = StreamTracker::new(i as u32, window);
            tempo::spawn_local(receive_loop(receiver, tracker));
        }
        // As the other Tempo receivers: never before the window's end.
        tempo::time::sleep_at_least(window.remaining()).await;
        Ok::<(), io::Error>(())
    })?;
    drop(rt);
    Ok(())
}

async fn receive_loop(receiver: UdpRingReceiver, mut tracker: StreamTracker) {
    loop {
        let received = receiver
            .recv_from_with(|datagram, _from| tracker.on_datagram(datagram))
            .await;
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
            let sockets = super::super::sockets_with_queued(3, 4);
            let before = with_thread_stats(|stats| stats.received);
            let window = MeasureWindow::after_warmup(Duration::ZERO, Duration::from_secs(1));
            run(sockets, window, Duration::from_millis(20), max_datagram).unwrap();
            let (received, errors) = with_thread_stats(|stats| (stats.received, stats.errors));
            assert_eq!(received - before, 12, "max_datagram {max_datagram}");
            assert_eq!(errors, 0);
        }
    }
}
