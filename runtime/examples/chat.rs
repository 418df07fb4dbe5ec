//! A line-based chat server, written as it would be on tokio: change
//! `tempo` to `tokio` and it runs there. Each connection gives its name,
//! then every line it sends goes to everyone else, through a
//! `tokio::sync::broadcast` channel (runtime-agnostic, like the tokio-util
//! codec that frames the lines).
//!
//! ```text
//! cargo run -p tempo --example chat                          # demo, then exit
//! cargo run -p tempo --example chat -- --serve 127.0.0.1:6142
//! nc 127.0.0.1 6142                                          # from two terminals
//! ```
//!
//! The demo starts the server, connects alice, bob and carol, has each say
//! hello, prints what each one read and exits (within ten seconds, or with
//! an error).

mod common;

use std::net::SocketAddr;

use futures::{SinkExt, StreamExt};
use tempo::net::{TcpListener, TcpStream};
use tokio::sync::broadcast;
use tokio_util::codec::{Framed, LinesCodec};

type Result<T> = std::result::Result<T, common::BoxError>;

#[tempo::main]
async fn main() -> Result<()> {
    common::serve_or_demo(serve_on, demo()).await
}

/// A line said in the room, with who said it.
#[derive(Clone, Debug)]
struct Said {
    from: SocketAddr,
    line: String,
}

/// `--serve ADDR`: binds ADDR and serves until killed.
async fn serve_on(addr: String) -> Result<()> {
    serve(TcpListener::bind(addr).await?).await
}

/// Accepts connections forever, one task each, all on one room.
async fn serve(listener: TcpListener) -> Result<()> {
    println!("chat: listening on {}", listener.local_addr()?);
    let (room, _) = broadcast::channel::<Said>(256);
    loop {
        let (socket, peer) = listener.accept().await?;
        let room = room.clone();
        tempo::spawn(async move {
            if let Err(e) = chat_session(socket, peer, room).await {
                eprintln!("chat: {peer}: {e}");
            }
        });
    }
}

/// One member: asks for a name, then relays the member's lines to the room
/// and the room's lines (except the member's own) to the member.
async fn chat_session(
    socket: TcpStream,
    peer: SocketAddr,
    room: broadcast::Sender<Said>,
) -> Result<()> {
    let mut lines = Framed::new(socket, LinesCodec::new());
    lines.send("Welcome! What is your name?").await?;
    let name = match lines.next().await {
        Some(line) => line?,
        None => return Ok(()),
    };
    // Subscribe before saying "welcome": from that line on, the member
    // misses nothing said in the room.
    let mut heard = room.subscribe();
    lines.send(format!("Welcome, {name}.")).await?;
    let _ = room.send(Said {
        from: peer,
        line: format!("{name} joined"),
    });

    let (mut to_member, mut from_member) = lines.split();
    let relay = tempo::spawn(async move {
        loop {
            match heard.recv().await {
                Ok(said) if said.from == peer => {}
                Ok(said) => {
                    if to_member.send(said.line).await.is_err() {
                        return;
                    }
                }
                Err(broadcast::error::RecvError::Lagged(missed)) => {
                    let _ = to_member.send(format!("({missed} lines missed)")).await;
                }
                Err(broadcast::error::RecvError::Closed) => return,
            }
        }
    });
    while let Some(line) = from_member.next().await {
        let line = line?;
        let _ = room.send(Said {
            from: peer,
            line: format!("{name}: {line}"),
        });
    }
    relay.abort();
    let _ = room.send(Said {
        from: peer,
        line: format!("{name} left"),
    });
    Ok(())
}

/// Connects as `name` and waits to be welcomed: from then on the client
/// hears everything said in the room.
async fn join(server: SocketAddr, name: &str) -> Result<Framed<TcpStream, LinesCodec>> {
    let mut lines = Framed::new(TcpStream::connect(server).await?, LinesCodec::new());
    lines.next().await.ok_or("closed before asking a name")??;
    lines.send(name).await?;
    lines.next().await.ok_or("closed before the welcome")??;
    Ok(lines)
}

async fn demo() -> Result<()> {
    let listener = TcpListener::bind("127.0.0.1:0").await?;
    let server = listener.local_addr()?;
    // Runs until `main` returns, which drops the runtime and its tasks.
    tempo::spawn(serve(listener));

    let names = ["alice", "bob", "carol"];
    let mut members = Vec::new();
    for name in names {
        members.push(join(server, name).await?);
    }
    let talkers: Vec<_> = members
        .into_iter()
        .zip(names)
        .map(|(mut lines, name)| {
            tempo::spawn(async move {
                lines.send(format!("hello from {name}")).await?;
                // Read until the two other members' greetings arrived.
                let mut transcript = Vec::new();
                let mut greetings = 0;
                while greetings < names.len() - 1 {
                    let line = lines.next().await.ok_or("the server hung up")??;
                    greetings += usize::from(line.contains(": hello from "));
                    transcript.push(line);
                }
                Ok::<_, common::BoxError>((name, transcript))
            })
        })
        .collect();
    for talker in talkers {
        let (name, transcript) = talker.await??;
        println!("{name} read: {transcript:?}");
    }
    println!("chat: every member heard every other one");
    Ok(())
}
