//! `futures_io::AsyncRead` / `AsyncWrite` (feature `futures-io`).
//!
//! Every type already has `&self` poll methods, so the trait impls are
//! thin forwards; `poll_close` shuts down the write side.

use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

use crate::net::{OwnedReadHalf, OwnedWriteHalf, ReadHalf, TcpStream, UnixStream, WriteHalf};

macro_rules! impl_read {
    ($($ty:ty),*) => {$(
        impl futures_io::AsyncRead for $ty {
            fn poll_read(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &mut [u8]) -> Poll<io::Result<usize>> {
                (*self).poll_read(cx, buf)
            }
        }
    )*};
}

macro_rules! impl_write {
    ($($ty:ty),*) => {$(
        impl futures_io::AsyncWrite for $ty {
            fn poll_write(self: Pin<&mut Self>, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
                (*self).poll_write(cx, buf)
            }

            fn poll_flush(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready(Ok(())) // sockets have no user-space buffer
            }

            fn poll_close(self: Pin<&mut Self>, _cx: &mut Context<'_>) -> Poll<io::Result<()>> {
                Poll::Ready((*self).shutdown_write())
            }
        }
    )*};
}

impl_read!(TcpStream, OwnedReadHalf, ReadHalf<'_>, UnixStream);
impl_write!(TcpStream, OwnedWriteHalf, WriteHalf<'_>, UnixStream);
