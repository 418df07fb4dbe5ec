//! A UDP echo server, written as it would be on tokio: change `tempo` to
//! `tokio` and it runs there.
//!
//! ```text
//! cargo run -p tempo --example udp_echo                      # demo, then exit
//! cargo run -p tempo --example udp_echo -- --serve 127.0.0.1:9000
//! ```
//!
//! The demo starts the server, has three clients send five datagrams each
//! and wait for every echo, prints what came back and exits; an echo that
//! does not come back within five seconds, or a demo that runs longer
//! than ten, is an error.

mod common;

use std::net::SocketAddr;
use std::time::Duration;

use tempo::net::UdpSocket;

type Result<T> = std::result::Result<T, common::BoxError>;

/// `--serve ADDR`: binds ADDR and serves until killed.
async fn serve_on(addr: String) -> Result<()> {
    serve(UdpSocket::bind(addr).await?).await
}

/// Sends every datagram back to where it came from, forever.
async fn serve(socket: UdpSocket) -> Result<()> {
    println!("udp echo: listening on {}", socket.local_addr()?);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        let (len, peer) = socket.recv_from(&mut buf).await?;
        socket.send_to(&buf[..len], peer).await?;
    }
}

/// One client: sends `count` datagrams one after the other and checks each
/// echo.
async fn client(id: usize, server: SocketAddr, count: usize) -> Result<usize> {
    let socket = UdpSocket::bind("127.0.0.1:0").await?;
    socket.connect(server).await?;
    let mut buf = [0u8; 1500];
    for seq in 0..count {
        let message = format!("client {id} datagram {seq}");
        socket.send(message.as_bytes()).await?;
        let len = tempo::time::timeout(Duration::from_secs(5), socket.recv(&mut buf))
            .await
            .map_err(|_| format!("client {id}: no echo of datagram {seq}"))??;
        if &buf[..len] != message.as_bytes() {
            return Err(format!("client {id}: echo of datagram {seq} differs").into());
        }
    }
    Ok(count)
}

async fn demo() -> Result<()> {
    let socket = UdpSocket::bind("127.0.0.1:0").await?;
    let server = socket.local_addr()?;
    // Runs until `main` returns, which drops the runtime and its tasks.
    tempo::spawn(serve(socket));
    let clients: Vec<_> = (0..3)
        .map(|id| tempo::spawn(client(id, server, 5)))
        .collect();
    for (id, client) in clients.into_iter().enumerate() {
        let echoed = client.await??;
        println!("client {id}: {echoed} of {echoed} datagrams echoed");
    }
    println!("udp echo: every datagram came back");
    Ok(())
}

#[tempo::main]
async fn main() -> Result<()> {
    common::serve_or_demo(serve_on, demo()).await
}
