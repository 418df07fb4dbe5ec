//! A TCP echo server, written as it would be on tokio: change `tempo` to
//! `tokio` and it runs there. The server copies with `tokio::io::copy`, a
//! runtime-agnostic helper that works on Tempo's streams through the
//! `tokio-io` feature; the clients frame lines with tokio-util's codec.
//!
//! ```text
//! cargo run -p tempo --example tcp_echo                      # demo, then exit
//! cargo run -p tempo --example tcp_echo -- --serve 127.0.0.1:9000
//! ```
//!
//! The demo starts the server, has three clients each send three lines and
//! read them back, prints what came back and exits (within ten seconds, or
//! with an error).

mod common;

use std::net::SocketAddr;

use futures::{SinkExt, StreamExt};
use tempo::net::{TcpListener, TcpStream};
use tokio_util::codec::{Framed, LinesCodec};

type Result<T> = std::result::Result<T, common::BoxError>;

/// `--serve ADDR`: binds ADDR and serves until killed.
async fn serve_on(addr: String) -> Result<()> {
    serve(TcpListener::bind(addr).await?).await
}

/// Accepts connections forever; each is echoed by its own task.
async fn serve(listener: TcpListener) -> Result<()> {
    println!("tcp echo: listening on {}", listener.local_addr()?);
    loop {
        let (mut socket, _peer) = listener.accept().await?;
        tempo::spawn(async move {
            let (mut reader, mut writer) = socket.split();
            if let Err(e) = tokio::io::copy(&mut reader, &mut writer).await {
                eprintln!("tcp echo: connection failed: {e}");
            }
        });
    }
}

/// One client: sends three lines and returns what came back.
async fn client(id: usize, server: SocketAddr) -> Result<Vec<String>> {
    let mut lines = Framed::new(TcpStream::connect(server).await?, LinesCodec::new());
    let mut echoed = Vec::new();
    for seq in 0..3 {
        let line = format!("client {id} line {seq}");
        lines.send(&line).await?;
        match lines.next().await {
            Some(Ok(echo)) if echo == line => echoed.push(echo),
            other => return Err(format!("client {id}: expected {line:?}, got {other:?}").into()),
        }
    }
    Ok(echoed)
}

async fn demo() -> Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let server = listener.local_addr()?;
    // Runs until `main` returns, which drops the runtime and its tasks.
    tempo::spawn(serve(listener));
    let clients: Vec<_> = (0..3).map(|id| tempo::spawn(client(id, server))).collect();
    for (id, client) in clients.into_iter().enumerate() {
        println!("client {id}: echoed {:?}", client.await??);
    }
    println!("tcp echo: every line came back");
    Ok(())
}

#[tempo::main]
async fn main() -> Result<()> {
    common::serve_or_demo(serve_on, demo()).await
}
