//! tokio-bound code beside Tempo's sockets, with the `tokio-compat` feature:
//! a media stream received on a throttled Tempo UDP socket, recorded with
//! `tokio::fs::File`, and a control API on a `tokio::net::TcpListener`
//! that a tokio-based library would bring (here written by hand, as a
//! stand-in for an HTTP or gRPC server crate).
//!
//! ```text
//! cargo run -p tempo --features tokio-compat --example tokio_compat
//! ```
//!
//! It sends ten datagrams to itself, asks the control API how many were
//! recorded, prints the answer and exits; more than ten seconds is an error.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

type Result<T> = std::result::Result<T, Box<dyn std::error::Error + Send + Sync>>;

const DATAGRAMS: usize = 10;

#[tempo::main(max_throttling = "10ms")]
async fn main() -> Result<()> {
    match tokio::time::timeout(Duration::from_secs(10), demo()).await {
        Ok(result) => result,
        Err(_) => Err("the demo took more than ten seconds".into()),
    }
}

async fn demo() -> Result<()> {
    let recording = std::env::temp_dir().join(format!("tempo-compat-{}.raw", std::process::id()));

    // The stream: Tempo's socket, on Tempo's tick.
    let stream = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
    let stream_addr = stream.local_addr()?;
    let mut file = tokio::fs::File::create(&recording).await?;
    let (count_tx, count_rx) = tokio::sync::watch::channel(0usize);
    let recorder = tempo::spawn(async move {
        let mut buf = [0u8; 1500];
        for received in 1..=DATAGRAMS {
            let (len, _) = stream.recv_from(&mut buf).await?;
            file.write_all(&buf[..len]).await?;
            count_tx.send_replace(received);
        }
        file.flush().await?;
        Ok::<_, std::io::Error>(())
    });

    // The control API: tokio's listener, polled by a Tempo task.
    let control = tokio::net::TcpListener::bind("127.0.0.1:0").await?;
    let control_addr = control.local_addr()?;
    tempo::spawn(async move {
        while let Ok((conn, _)) = control.accept().await {
            let count = count_rx.clone();
            tempo::spawn(async move {
                let (read, mut write) = conn.into_split();
                let mut line = String::new();
                if BufReader::new(read).read_line(&mut line).await.is_ok() && line.trim() == "count"
                {
                    let answer = format!("{}\n", *count.borrow());
                    let _ = write.write_all(answer.as_bytes()).await;
                }
            });
        }
    });

    // The sender, then a client of the control API.
    let sender = tempo::net::UdpSocket::bind("127.0.0.1:0").await?;
    for i in 0..DATAGRAMS {
        sender
            .send_to(format!("frame {i}\n").as_bytes(), stream_addr)
            .await?;
    }
    recorder.await??;
    let mut client = tokio::net::TcpStream::connect(control_addr).await?;
    client.write_all(b"count\n").await?;
    let mut answer = String::new();
    BufReader::new(client).read_line(&mut answer).await?;
    let recorded = tokio::fs::read_to_string(&recording).await?;
    tokio::fs::remove_file(&recording).await?;

    println!(
        "control API says {} datagrams recorded; the file holds {} lines",
        answer.trim(),
        recorded.lines().count()
    );
    if answer.trim() != DATAGRAMS.to_string() || recorded.lines().count() != DATAGRAMS {
        return Err("the recording is incomplete".into());
    }
    Ok(())
}
