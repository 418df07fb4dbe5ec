//! [`PollIo`]: a mio source plus its [`Registration`], the building block of
//! every net type. Dropping it deregisters the source before closing it.

use std::io;
use std::ops::Deref;

use mio::event::Source;

use crate::registration::Registration;
use crate::Handle;

#[derive(Debug)]
pub(crate) struct PollIo<S: Source> {
    /// `None` only after `into_inner`.
    io: Option<S>,
    pub(crate) registration: Registration,
}

impl<S: Source> PollIo<S> {
    /// Registers `io` with the current thread's driver.
    pub(crate) fn new(io: S) -> io::Result<PollIo<S>> {
        PollIo::with_handle(io, Handle::try_current()?)
    }

    pub(crate) fn with_handle(mut io: S, handle: Handle) -> io::Result<PollIo<S>> {
        if handle.is_shutdown() {
            return Err(crate::scheduled_io::shutdown_error());
        }
        let registration = Registration::new(&mut io, handle)?;
        Ok(PollIo {
            io: Some(io),
            registration,
        })
    }

    /// Deregisters and returns the source (for `into_std`).
    pub(crate) fn into_inner(mut self) -> io::Result<S> {
        let mut io = self
            .io
            .take()
            .expect("PollIo source is present until into_inner");
        self.registration.deregister(&mut io)?;
        Ok(io)
    }
}

impl<S: Source> Deref for PollIo<S> {
    type Target = S;

    fn deref(&self) -> &S {
        self.io
            .as_ref()
            .expect("PollIo source is present until into_inner")
    }
}

impl<S: Source> Drop for PollIo<S> {
    fn drop(&mut self) {
        if let Some(mut io) = self.io.take() {
            // Closing the fd would remove it from epoll too; deregistering
            // first is explicit and harmless if it fails.
            let _ = self.registration.deregister(&mut io);
        }
    }
}
