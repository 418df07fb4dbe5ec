//! A throttled Tempo runtime embedded in a host's own `poll(2)` loop.
//!
//! A media host (a GLib main loop, a GStreamer element's thread, a game
//! loop) already waits in its own `poll` on its own fds. Instead of giving
//! Tempo a thread, it adds Tempo's I/O driver fd ([`Runtime::io_fd`]) to
//! that poll and, whenever the fd is readable or its own period elapsed,
//! calls [`Runtime::turn`] with a zero wait: one tick of the throttling
//! scheduler, which dispatches the socket events and runs the tasks they
//! woke.
//!
//! The fd covers sockets and the runtime's unpark (remote spawns and
//! wakes), not timers: the host bounds its wait by the throttling period so
//! that timers and paced ticks still happen. Here the host loop receives
//! `DATAGRAMS` datagrams that a thread of the same process sends to the
//! runtime's socket, then exits by itself.
//!
//! Run it with `cargo run -p tempo --example foreign_poll`.
//!
//! [`Runtime::io_fd`]: tempo::runtime::Runtime::io_fd
//! [`Runtime::turn`]: tempo::runtime::Runtime::turn

use std::os::fd::AsRawFd;
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::Arc;
use std::time::Duration;

use tempo::net::UdpSocket;
use tempo::runtime::Builder;

const DATAGRAMS: u32 = 50;
const PERIOD: Duration = Duration::from_millis(10);

/// The host's own wait: `poll(2)` on one fd for at most `timeout`.
/// Returns whether the fd is readable.
fn host_poll(fd: i32, timeout: Duration) -> std::io::Result<bool> {
    let mut entry = libc::pollfd {
        fd,
        events: libc::POLLIN,
        revents: 0,
    };
    let millis = libc::c_int::try_from(timeout.as_millis()).unwrap_or(libc::c_int::MAX);
    // SAFETY: `entry` is one live, writable `pollfd` and the count says 1.
    let n = unsafe { libc::poll(&mut entry, 1, millis) };
    match n {
        -1 if std::io::Error::last_os_error().kind() == std::io::ErrorKind::Interrupted => {
            Ok(false)
        }
        -1 => Err(std::io::Error::last_os_error()),
        _ => Ok(entry.revents & libc::POLLIN != 0),
    }
}

fn main() -> std::io::Result<()> {
    let rt = Builder::new_current_thread()
        .enable_all()
        .max_throttling(PERIOD)
        .build()?;
    let fd = rt.io_fd().expect("built with enable_io").as_raw_fd();

    // The runtime's socket, and a task that counts what it receives.
    let socket = rt.block_on(UdpSocket::bind("127.0.0.1:0"))?;
    let to = socket.local_addr()?;
    let received = Arc::new(AtomicU32::new(0));
    let receiver = rt.spawn({
        let received = received.clone();
        async move {
            let mut buf = [0u8; 64];
            while received.load(Ordering::Relaxed) < DATAGRAMS {
                socket.recv_from(&mut buf).await?;
                received.fetch_add(1, Ordering::Relaxed);
            }
            Ok::<_, std::io::Error>(())
        }
    });

    // Another thread of the host sends the datagrams, a few at a time.
    let sender = std::thread::spawn(move || -> std::io::Result<()> {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
        for i in 0..DATAGRAMS {
            socket.send_to(&i.to_be_bytes(), to)?;
            if i % 5 == 4 {
                std::thread::sleep(Duration::from_millis(3));
            }
        }
        Ok(())
    });

    // The host loop: wait in the host's poll, then one tick of Tempo.
    let (mut turns, mut fd_ready) = (0u32, 0u32);
    while !receiver.is_finished() && turns < 10_000 {
        if host_poll(fd, PERIOD)? {
            fd_ready += 1;
        }
        rt.turn(Duration::ZERO);
        turns += 1;
        // ... the host's own sources would be dispatched here ...
    }

    sender.join().expect("sender thread")?;
    rt.block_on(receiver).expect("receiver task")?;
    let received = received.load(Ordering::Relaxed);
    println!(
        "received {received} datagrams in {turns} host-loop turns ({fd_ready} with the fd readable)"
    );
    assert_eq!(received, DATAGRAMS);
    Ok(())
}
