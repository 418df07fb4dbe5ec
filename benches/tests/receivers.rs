//! Every receiver runtime reads every datagram queued on its sockets and
//! accounts it, and returns once the window is over.
//!
//! In its own test binary so that the process-wide receive stats hold only
//! what these runs counted.

use std::net::UdpSocket;
use std::time::Duration;

use tempo_benches::clock::monotonic_ns;
use tempo_benches::packet::PacketHeader;
use tempo_benches::receivers::ReceiverRuntime;
use tempo_benches::recv_stats::collect;
use tempo_benches::window::MeasureWindow;

const STREAMS: usize = 3;
const PER_STREAM: u64 = 4;

fn send_to_all(sockets: &[UdpSocket]) {
    let tx = UdpSocket::bind("127.0.0.1:0").unwrap();
    let mut buf = [0u8; 64];
    for seq in 0..PER_STREAM {
        for (i, s) in sockets.iter().enumerate() {
            PacketHeader {
                seq,
                sent_ns: monotonic_ns(),
                stream: i as u32,
            }
            .write_to(&mut buf);
            tx.send_to(&buf, s.local_addr().unwrap()).unwrap();
        }
    }
}

#[test]
fn each_runtime_receives_queued_datagrams_and_stops_at_window_end() {
    for name in ["tempo", "tokio", "threads", "mio-loop", "mio-throttled:5"] {
        let runtime = ReceiverRuntime::parse(name).unwrap();
        let sockets: Vec<UdpSocket> = (0..STREAMS)
            .map(|_| UdpSocket::bind("127.0.0.1:0").unwrap())
            .collect();
        let before = collect();
        // The window starts now, so the datagrams sent next are in it.
        let window = MeasureWindow::after_warmup(Duration::ZERO, Duration::from_millis(700));
        send_to_all(&sockets);
        runtime.run(sockets, window).unwrap();
        assert!(monotonic_ns() >= window.end_ns, "{name} returned early");
        let after = collect();
        assert_eq!(
            after.received - before.received,
            STREAMS as u64 * PER_STREAM,
            "{name}"
        );
        assert_eq!(after.seq_gaps, before.seq_gaps, "{name}");
        assert_eq!(after.errors, before.errors, "{name}");
    }
}
