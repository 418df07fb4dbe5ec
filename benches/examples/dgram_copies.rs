//! A deterministic datagram loop for instruction counts (callgrind), and
//! the sizes of the UDP futures.
//!
//! Timed runs on the shared VM scatter by more than the per-datagram
//! differences this is for; `valgrind --tool=callgrind` counts the same
//! instructions at any load. No sender process, no criterion: the program
//! total minus the same command with 0 rounds, divided by the datagrams,
//! is the per-datagram cost of the send and receive path.
//!
//! ```text
//! dgram_copies sizes              size_of_val of the recv_from, recv, send_to and readable futures
//! dgram_copies pairs N            N send_to / recv_from pairs, basic scheduler (drain until WouldBlock)
//! dgram_copies burst N K T_MS     N rounds of K datagrams sent, then K received, throttling
//!                                 scheduler of period T_MS (one recvfrom per level-triggered report)
//! ```
//!
//! It uses only what the round start (`88182c7`) had too, so it builds
//! there unchanged for a before/after.
use std::time::Duration;

/// Two sockets on 127.0.0.1 and the second's address (the first sends to
/// it).
async fn socket_pair() -> (
    tempo::net::UdpSocket,
    tempo::net::UdpSocket,
    std::net::SocketAddr,
) {
    let a = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let b = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
    let to = b.local_addr().unwrap();
    (a, b, to)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let arg = |i: usize, d: u64| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(d);
    match args.get(1).map(String::as_str) {
        Some("sizes") => {
            let rt = tempo_benches::tempo_runtime::build(None).unwrap();
            rt.block_on(async {
                let a = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let to = a.local_addr().unwrap();
                let mut buf = [0u8; 64];
                let f = a.recv_from(&mut buf);
                println!("recv_from future: {}", std::mem::size_of_val(&f));
                drop(f);
                let f = a.recv(&mut buf);
                println!("recv future: {}", std::mem::size_of_val(&f));
                drop(f);
                let f = a.send_to(b"x", to);
                println!("send_to future: {}", std::mem::size_of_val(&f));
                drop(f);
                let f = a.readable();
                println!("readable future: {}", std::mem::size_of_val(&f));
            });
            let body = async {
                let a = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
                let to = a.local_addr().unwrap();
                let mut buf = [0u8; 64];
                a.send_to(b"x", to).await.unwrap();
                a.recv_from(&mut buf).await.unwrap();
            };
            println!(
                "a task body awaiting send_to and recv_from: {}",
                std::mem::size_of_val(&body)
            );
        }
        Some("pairs") => {
            let n = arg(2, 10_000);
            let rt = tempo_benches::tempo_runtime::build(None).unwrap();
            rt.block_on(async {
                let (a, b, to) = socket_pair().await;
                let payload = [7u8; 160];
                let mut buf = [0u8; 2048];
                for _ in 0..n {
                    a.send_to(&payload, to).await.unwrap();
                    let (len, _) = b.recv_from(&mut buf).await.unwrap();
                    std::hint::black_box(len);
                }
            });
        }
        Some("burst") => {
            let (n, k, t) = (arg(2, 200), arg(3, 20), arg(4, 1));
            let rt = tempo_benches::tempo_runtime::build(Some(Duration::from_millis(t))).unwrap();
            rt.block_on(async {
                let (a, b, to) = socket_pair().await;
                let payload = [7u8; 160];
                let mut buf = [0u8; 2048];
                for _ in 0..n {
                    for _ in 0..k {
                        a.send_to(&payload, to).await.unwrap();
                    }
                    for _ in 0..k {
                        let (len, _) = b.recv_from(&mut buf).await.unwrap();
                        std::hint::black_box(len);
                    }
                }
            });
        }
        _ => eprintln!("usage: sizes | pairs N | burst N K T_MS"),
    }
}
