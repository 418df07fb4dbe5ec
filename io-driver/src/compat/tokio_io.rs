//! `tokio::io::AsyncRead` / `AsyncWrite` (feature `tokio-io`), so tokio-util
//! codecs and tokio-based protocol crates run on Tempo's sockets.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use tokio::io::ReadBuf;

use crate::net::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, TcpStream, UnixStream, WriteHalf};

macro_rules! impl_read {
    ($($ty:ty),*) => {$(
        impl tokio::io::AsyncRead for $ty {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut ReadBuf<'_>) -> Poll<io::Result<()>> {
                // Zeroes the unfilled part once; later reads reuse it.
                match (*self).poll_read(cx, buf.initialize_unfilled()) {
                    Poll::Ready(Ok(n)) => {
                        buf.advance(n);
                        Poll::Ready(Ok(()))
                    }
                    Poll::Ready(Err(e)) => Poll::Ready(Err(e)),
                    Poll::Pending => Poll::Pending,
                }
            }
        }
    )*};
}

macro_rules! impl_write {
    ($($ty:ty),*) => {$(
        impl tokio::io::AsyncWrite for $ty {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                (*self).poll_write(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(())) // sockets have no user-space buffer
            }

            fn poll_shutdown(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready((*self).shutdown_write())
            }
        }
    )*};
}

impl_read!(TcpStream, OwnedReadHalf, ReadHalf<'_>, UnixStream);
impl_write!(TcpStream, OwnedWriteHalf, WriteHalf<'_>, UnixStream);
