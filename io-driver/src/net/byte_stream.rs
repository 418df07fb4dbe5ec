//! The operations [`TcpStream`](crate::net::TcpStream) and
//! [`UnixStream`](crate::net::UnixStream) share, written once as generic
//! code on [`PollIo`] over any mio source read and written through `&S`
//! (`io::Read` / `io::Write`, as mio's streams are).
//!
//! Each public method of the two types is a documented one-line forward
//! to the method of the same name here, which runs one syscall through
//! the socket's [`Registration`](crate::readiness::Registration) loop.

use std::io::{self, Read, Write};
use std::task::{Context, Poll};

use mio::event::Source;

use crate::poll_io::PollIo;
use crate::ready::Direction;

impl<S: Source> PollIo<S>
where
    for<'a> &'a S: Read + Write,
{
    /// The mio stream, as the `&S` that reads and writes.
    fn stream(&self) -> &S {
        self
    }

    pub(crate) async fn read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let op = || self.stream().read(buf);
        self.registration.io(Direction::Read, op).await
    }

    pub(crate) fn poll_read(
        &self,
        cx: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let op = || self.stream().read(buf);
        self.registration.poll_io(cx, Direction::Read, op)
    }

    pub(crate) fn try_read(&self, buf: &mut [u8]) -> io::Result<usize> {
        let op = || self.stream().read(buf);
        self.registration.try_io(Direction::Read, op)
    }

    pub(crate) async fn write(&self, buf: &[u8]) -> io::Result<usize> {
        let op = || self.stream().write(buf);
        self.registration.io(Direction::Write, op).await
    }

    pub(crate) fn poll_write(&self, cx: &mut Context<'_>, buf: &[u8]) -> Poll<io::Result<usize>> {
        let op = || self.stream().write(buf);
        self.registration.poll_io(cx, Direction::Write, op)
    }

    pub(crate) fn try_write(&self, buf: &[u8]) -> io::Result<usize> {
        let op = || self.stream().write(buf);
        self.registration.try_io(Direction::Write, op)
    }

    pub(crate) async fn write_all(&self, mut buf: &[u8]) -> io::Result<()> {
        while !buf.is_empty() {
            let n = self.write(buf).await?;
            if n == 0 {
                return Err(io::ErrorKind::WriteZero.into());
            }
            buf = &buf[n..];
        }
        Ok(())
    }

    /// One read into `buf`'s spare capacity (feature `bytes`, see
    /// `net/buf.rs`).
    #[cfg(feature = "bytes")]
    pub(crate) fn try_read_buf<B: bytes::BufMut>(&self, buf: &mut B) -> io::Result<usize> {
        let op = || crate::net::buf::read_into(buf, |dst| Ok((self.stream().read(dst)?, ())));
        let (len, ()) = self.registration.try_io(Direction::Read, op)?;
        Ok(len)
    }
}
