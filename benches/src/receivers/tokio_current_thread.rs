//! tokio's current_thread runtime: one task per socket, `recv_from().await`.
//!
//! This is what a user would write with tokio today. Every datagram wakes its
//! task through the I/O driver; the task reads until `recv_from` would block,
//! which costs one extra (empty) `recvfrom` per wake-up.
//!
//! `tokio-threadbuf` is the same with one receive buffer per thread (the
//! hand-written loops' discipline, and Tempo's `recv_from_with`):
//! `poll_recv_from` in a `poll_fn`, into a thread-local buffer borrowed
//! only inside the poll.

use std::cell::RefCell;
use std::future::poll_fn;
use std::io;
use std::net::UdpSocket;
use std::task::{ready, Poll};

use crate::recv_stats::StreamTracker;
use crate::window::{MeasureWindow, Phase};

use super::RECV_BUF_LEN;

/// Runs one task per socket on a current_thread runtime until `window` ends.
pub fn run(sockets: Vec<UdpSocket>, window: MeasureWindow) -> io::Result<()> {
    run_tasks(sockets, window, |sock, tracker| {
        tokio::spawn(receive_loop(sock, tracker));
    })
}

/// `tokio-threadbuf`: [`run`] with every datagram received into the
/// thread's one buffer.
pub fn run_thread_buf(sockets: Vec<UdpSocket>, window: MeasureWindow) -> io::Result<()> {
    run_tasks(sockets, window, |sock, tracker| {
        tokio::spawn(thread_buf_loop(sock, tracker));
    })
}

thread_local! {
    static THREAD_BUF: RefCell<Vec<u8>> = RefCell::new(vec![0u8; RECV_BUF_LEN]);
}

async fn thread_buf_loop(sock: tokio::net::UdpSocket, mut tracker: StreamTracker) {
    loop {
        let received = poll_fn(|cx| {
            THREAD_BUF.with_borrow_mut(|buf| {
                let mut filled = tokio::io::ReadBuf::new(buf);
                ready!(sock.poll_recv_from(cx, &mut filled))?;
                Poll::Ready(Ok::<_, io::Error>(tracker.on_datagram(filled.filled())))
            })
        })
        .await;
        if !tracker.goes_on(received) {
            return;
        }
    }
}

/// Registers every socket with a current_thread runtime, starts its task
/// with `spawn_one` and runs until `window` ends.
fn run_tasks(
    sockets: Vec<UdpSocket>,
    window: MeasureWindow,
    spawn_one: impl Fn(tokio::net::UdpSocket, StreamTracker),
) -> io::Result<()> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        for (i, sock) in sockets.into_iter().enumerate() {
            sock.set_nonblocking(true)?;
            let sock = tokio::net::UdpSocket::from_std(sock)?;
            spawn_one(sock, StreamTracker::new(i as u32, window));
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
