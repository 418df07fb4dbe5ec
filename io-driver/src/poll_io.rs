//! [`PollIo`]: a mio source plus its [`Registration`] and its driver's
//! [`Handle`] (for the socket settings), the building block of every net
//! type and of `AsyncFd`. Dropping it deregisters the source before
//! closing it.

use std::io;
use std::ops::Deref;
use std::sync::Arc;

use mio::event::Source;

use crate::handle::{Handle, HandleShared};
use crate::readiness::{shutdown_error, Registration};
use crate::socket_settings::SocketSettings;

#[derive(Debug)]
pub(crate) struct PollIo<S: Source> {
    /// `None` only after `into_inner`.
    io: Option<S>,
    pub(crate) registration: Registration,
    /// The handle's shared part: the settings of the driver's sockets (and
    /// the reactor, which the registration reaches directly).
    pub(crate) handle: Arc<HandleShared>,
}

impl<S: Source> PollIo<S> {
    /// Registers `io` with the current thread's driver.
    pub(crate) fn new(io: S) -> io::Result<PollIo<S>> {
        PollIo::with_handle(io, Handle::try_current()?)
    }

    pub(crate) fn with_handle(mut io: S, handle: Handle) -> io::Result<PollIo<S>> {
        if handle.is_shutdown() {
            return Err(shutdown_error());
        }
        let registration = Registration::new(&mut io, handle.reactor().clone())?;
        Ok(PollIo {
            io: Some(io),
            registration,
            handle: handle.into_shared(),
        })
    }

    /// The handle of the driver it is registered with.
    pub(crate) fn handle(&self) -> Handle {
        debug_assert!(
            Arc::ptr_eq(self.registration.reactor(), &self.handle.reactor),
            "a socket's registration and handle refer to one reactor"
        );
        Handle::from_shared(self.handle.clone())
    }

    /// The settings of the driver's sockets.
    pub(crate) fn settings(&self) -> &SocketSettings {
        &self.handle.settings
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
