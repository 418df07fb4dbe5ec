//! Receiving into a [`bytes::BufMut`] (feature `bytes`): the `*_buf`
//! methods of the net types.
//!
//! tokio receives straight into the buffer's uninitialized spare capacity,
//! which takes `unsafe` (`advance_mut`). tempo-io has no `unsafe` outside
//! its FFI calls, so the bytes land in an initialized scratch buffer first
//! and are copied with the safe `put_slice`: one `memcpy` of what was
//! received, next to a syscall. The scratch is the thread's receive
//! buffer (`net/thread_buf.rs`, 64 KiB, the one `recv_from_with` uses); a
//! larger chunk gets a temporary buffer of its own.
//!
//! As in tokio, one call fills at most the buffer's current
//! [`chunk_mut`](bytes::BufMut::chunk_mut) (a `Vec` or `BytesMut` at full
//! capacity first grows by 64 bytes): a datagram longer than that is
//! truncated, so reserve room for the largest datagram first.

use std::io;

use bytes::BufMut;

use crate::net::thread_buf::{with_thread_buf, THREAD_BUF_LEN};

/// Runs `op` (one receive syscall) on a scratch buffer as long as `buf`'s
/// current chunk, and appends the `n` bytes it reports to `buf`.
pub(crate) fn read_into<B: BufMut + ?Sized, T>(
    buf: &mut B,
    op: impl FnOnce(&mut [u8]) -> io::Result<(usize, T)>,
) -> io::Result<(usize, T)> {
    let len = buf.chunk_mut().len();
    if len > THREAD_BUF_LEN {
        return fill(buf, &mut vec![0; len], op);
    }
    with_thread_buf(|scratch| fill(buf, &mut scratch[..len], op))
}

fn fill<B: BufMut + ?Sized, T>(
    buf: &mut B,
    scratch: &mut [u8],
    op: impl FnOnce(&mut [u8]) -> io::Result<(usize, T)>,
) -> io::Result<(usize, T)> {
    let (n, extra) = op(scratch)?;
    buf.put_slice(&scratch[..n]);
    Ok((n, extra))
}
