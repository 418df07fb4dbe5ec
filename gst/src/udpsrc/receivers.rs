//! The sources' ring receivers, kept by their context thread.
//!
//! A source receives on its context's io_uring (Tempo's
//! [`UdpRingReceiver`]): its datagrams land in the ring's buffers with
//! their kernel timestamps and no syscall each, and the context takes a
//! tick's worth in one `io_uring_enter`. Such a receiver belongs to the
//! thread whose driver owns the ring, so it is `!Send`; a task's state must
//! be `Send`. So the thread keeps the receivers, and a task holds a
//! [`ReceiverKey`] that it uses on that thread only: a key used elsewhere
//! gets an error, never another thread's receiver. Closing waits for the
//! socket to close (the ring confirms the cancellation of its receive), so
//! that a source back in NULL has freed its port.

use std::cell::RefCell;
use std::future::{poll_fn, Future};
use std::io;
use std::pin::pin;
use std::task::{Context, Poll};
use std::thread::{self, ThreadId};

use slab::Slab;
use tempo::net::{RingDatagram, UdpRingReceiver};

/// A thread's receivers, and the thread (read once, not per receive).
struct Receivers {
    kept: Slab<UdpRingReceiver>,
    thread: ThreadId,
}

thread_local! {
    static RECEIVERS: RefCell<Receivers> = RefCell::new(Receivers {
        kept: Slab::new(),
        thread: thread::current().id(),
    });
}

/// A receiver kept by the thread that made it (see the module docs).
#[derive(Debug)]
pub(super) struct ReceiverKey {
    key: usize,
    thread: ThreadId,
}

/// Keeps `receiver` on the calling thread: the key to reach it.
pub(super) fn keep(receiver: UdpRingReceiver) -> ReceiverKey {
    RECEIVERS.with_borrow_mut(|receivers| ReceiverKey {
        key: receivers.kept.insert(receiver),
        thread: receivers.thread,
    })
}

/// Closes the receiver of `key` and waits until its socket is closed, on
/// its thread; elsewhere (a task torn down off its context), or while the
/// thread ends, it is left to close with its thread.
pub(super) async fn close(key: ReceiverKey) {
    poll_fn(|cx| {
        let polled = RECEIVERS.try_with(|receivers| {
            let mut receivers = receivers.borrow_mut();
            if receivers.thread != key.thread {
                return Poll::Ready(());
            }
            let Some(receiver) = receivers.kept.get_mut(key.key) else {
                return Poll::Ready(());
            };
            let closed = receiver.poll_close(cx);
            if closed.is_ready() {
                receivers.kept.remove(key.key);
            }
            closed
        });
        polled.unwrap_or(Poll::Ready(()))
    })
    .await;
}

/// Polls a receive of one datagram on the receiver of `key`, handed to
/// `f` in place (see [`UdpRingReceiver::recv_with`], which is cancel safe:
/// each poll makes it afresh).
pub(super) fn poll_recv_with<R>(
    key: &ReceiverKey,
    cx: &mut Context<'_>,
    f: impl FnOnce(RingDatagram<'_>) -> R,
) -> Poll<io::Result<R>> {
    RECEIVERS.with_borrow(|receivers| {
        if receivers.thread != key.thread {
            return Poll::Ready(Err(io::Error::other(
                "a source's receive ran off its context thread",
            )));
        }
        let receiver = receivers
            .kept
            .get(key.key)
            .expect("a kept receiver until closed");
        pin!(receiver.recv_with(f)).poll(cx)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn bound() -> (std::net::UdpSocket, std::net::SocketAddr) {
        let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
        let addr = socket.local_addr().unwrap();
        (socket, addr)
    }

    fn is_free(addr: std::net::SocketAddr) -> bool {
        std::net::UdpSocket::bind(addr).is_ok()
    }

    /// A key reaches its receiver on its thread and only there; a close
    /// off the thread returns at once and leaves the receiver to its
    /// thread, a close on it returns once the port is free.
    #[test]
    fn a_key_reaches_its_receiver_on_its_thread_only() {
        let rt = tempo::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async {
            let (socket, addr) = bound();
            let key = keep(UdpRingReceiver::from_std_with_timestamps(socket, 1500).unwrap());
            let sender = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            sender.send_to(b"here", addr).unwrap();
            let got = poll_fn(|cx| {
                poll_recv_with(&key, cx, |d| (d.payload.to_vec(), d.timestamp.is_some()))
            })
            .await
            .unwrap();
            assert_eq!(got, (b"here".to_vec(), true));

            let (other_socket, other_addr) = bound();
            let other = keep(UdpRingReceiver::from_std(other_socket, 1500).unwrap());
            let key = thread::spawn(move || {
                let mut cx = Context::from_waker(std::task::Waker::noop());
                let polled = poll_recv_with(&key, &mut cx, |_| ());
                assert!(matches!(polled, Poll::Ready(Err(_))), "{polled:?}");
                assert!(pin!(close(other)).poll(&mut cx).is_ready());
                key
            })
            .join()
            .unwrap();
            tempo::task::yield_now().await;
            assert!(!is_free(other_addr), "closed off its thread");
            close(key).await;
            assert!(is_free(addr), "closed on its thread");
        });
    }
}
