//! [`AsyncFd`]: wait for readiness on any file descriptor another
//! library owns (a device, an `eventfd`, a pipe), with tokio's API.
//!
//! The descriptor is registered edge-triggered and its readiness cached
//! until the caller reports `WouldBlock`. A guard remembers the event
//! sequence number it saw, so a clear never erases an edge that arrived
//! after it (see `scheduled_io`).

use std::fmt;
use std::io;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, RawFd};
use std::task::{ready, Context, Poll};

use mio::event::Source;
use mio::unix::SourceFd;
use mio::{Registry, Token};

use crate::poll_io::PollIo;
use crate::readiness::{ReadyEvent, Registration};
use crate::ready::{Direction, Interest, Ready};

/// The descriptor as a mio source (`SourceFd` borrows the fd; this owns
/// the number, not the descriptor).
#[derive(Debug)]
struct Fd(RawFd);

impl Source for Fd {
    fn register(
        &mut self,
        registry: &Registry,
        token: Token,
        interest: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).register(registry, token, interest)
    }

    fn reregister(
        &mut self,
        registry: &Registry,
        token: Token,
        interest: mio::Interest,
    ) -> io::Result<()> {
        SourceFd(&self.0).reregister(registry, token, interest)
    }

    fn deregister(&mut self, registry: &Registry) -> io::Result<()> {
        SourceFd(&self.0).deregister(registry)
    }
}

/// A file descriptor registered with the I/O driver, whose readiness a
/// task can await (tokio's `tokio::io::unix::AsyncFd`).
///
/// `T` owns the descriptor (an [`OwnedFd`](std::os::fd::OwnedFd), a
/// `std` socket or pipe, a device handle); it must be non-blocking and
/// keep its descriptor number (epoll refuses regular files). Wait
/// with [`readable`](Self::readable), [`writable`](Self::writable) or
/// [`ready`](Self::ready), do the I/O through the guard's
/// [`try_io`](AsyncFdReadyGuard::try_io), and wait again when it reports
/// `WouldBlock`.
///
/// Clear the cached readiness only after seeing `WouldBlock`: clearing a
/// descriptor that still has data loses the edge. Every completed wait
/// spends a unit of the task's cooperative budget. Dropping the `AsyncFd`
/// deregisters the descriptor, then drops `T`; once the driver is gone,
/// waits fail with an error.
///
/// ```
/// # tempo_io::__doc_block_on(async {
/// use std::io::{Read, Write};
/// use std::os::unix::net::UnixStream;
/// use tempo_io::unix::AsyncFd;
///
/// let (mut tx, rx) = UnixStream::pair()?;
/// rx.set_nonblocking(true)?;
/// let rx = AsyncFd::new(rx)?;
/// tx.write_all(b"frame")?;
///
/// let mut buf = [0u8; 16];
/// let len = loop {
///     let mut guard = rx.readable().await?;
///     match guard.try_io(|fd| fd.get_ref().read(&mut buf)) {
///         Ok(result) => break result?,
///         Err(_would_block) => continue, // readiness cleared: wait again
///     }
/// };
/// assert_eq!(&buf[..len], b"frame");
/// # Ok(()) }).unwrap();
/// ```
pub struct AsyncFd<T: AsRawFd> {
    // Field order is drop order: the registration is removed before
    // `inner` closes the descriptor (a closed number may be reused at once
    // by another thread, whose registration a late deregister would hit).
    io: PollIo<Fd>,
    interest: Interest,
    inner: T,
}

impl<T: AsRawFd> AsyncFd<T> {
    /// Registers `inner`'s descriptor with the current thread's I/O driver
    /// for read and write readiness.
    ///
    /// Fails, dropping `inner`, when there is no driver (outside a runtime,
    /// or on one built without `enable_io()`), when the driver has shut
    /// down, or when epoll refuses the descriptor (a regular file or a
    /// directory: the error says so).
    pub fn new(inner: T) -> io::Result<AsyncFd<T>> {
        AsyncFd::with_interest(inner, Interest::READABLE | Interest::WRITABLE)
    }

    /// [`new`](Self::new), waiting only for `interest`: a wait for another
    /// direction fails with `InvalidInput` (tokio's would never complete).
    pub fn with_interest(inner: T, interest: Interest) -> io::Result<AsyncFd<T>> {
        let fd = inner.as_raw_fd();
        let io = PollIo::new(Fd(fd)).map_err(|e| explain_register_error(e, fd))?;
        Ok(AsyncFd {
            io,
            interest,
            inner,
        })
    }

    /// The inner object.
    pub fn get_ref(&self) -> &T {
        &self.inner
    }

    /// The inner object, mutably (it must keep the same descriptor).
    pub fn get_mut(&mut self) -> &mut T {
        &mut self.inner
    }

    /// Deregisters the descriptor and returns the inner object, still open.
    pub fn into_inner(self) -> T {
        let AsyncFd { io, inner, .. } = self;
        // A failed deregister (the driver is gone) leaves nothing to undo.
        let _ = io.into_inner();
        inner
    }

    /// Polls for read readiness (keeps only the last caller's waker).
    pub fn poll_read_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, event)))
    }

    /// [`poll_read_ready`](Self::poll_read_ready) with a guard that gives
    /// mutable access to the inner object.
    pub fn poll_read_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Direction::Read))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event)))
    }

    /// Polls for write readiness (keeps only the last caller's waker).
    pub fn poll_write_ready<'a>(
        &'a self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyGuard::new(self, event)))
    }

    /// [`poll_write_ready`](Self::poll_write_ready) with a guard that gives
    /// mutable access to the inner object.
    pub fn poll_write_ready_mut<'a>(
        &'a mut self,
        cx: &mut Context<'_>,
    ) -> Poll<io::Result<AsyncFdReadyMutGuard<'a, T>>> {
        let event = ready!(self.poll_event(cx, Direction::Write))?;
        Poll::Ready(Ok(AsyncFdReadyMutGuard::new(self, event)))
    }

    /// Waits until the descriptor is ready for any part of `interest`. The
    /// guard's [`ready`](AsyncFdReadyGuard::ready) says which; with a
    /// combined interest, clear only the direction that returned
    /// `WouldBlock` ([`clear_ready_matching`](AsyncFdReadyGuard::clear_ready_matching)).
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use tempo_io::{Interest, Ready};
    /// # let (a, _b) = std::os::unix::net::UnixStream::pair()?;
    /// let a = tempo_io::unix::AsyncFd::new(a)?;
    /// let mut guard = a.ready(Interest::READABLE | Interest::WRITABLE).await?;
    /// assert!(guard.ready().is_writable() && !guard.ready().is_readable());
    /// guard.clear_ready_matching(Ready::WRITABLE); // as if a write blocked
    /// assert!(guard.ready().is_empty());
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn ready(&self, interest: Interest) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        let event = self.event(interest).await?;
        Ok(AsyncFdReadyGuard::new(self, event))
    }

    /// [`ready`](Self::ready) with a guard that gives mutable access to the
    /// inner object.
    pub async fn ready_mut(
        &mut self,
        interest: Interest,
    ) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        let event = self.event(interest).await?;
        Ok(AsyncFdReadyMutGuard::new(self, event))
    }

    /// Waits until the descriptor is readable (or its read side closed, or
    /// it has an error). Any number of tasks may wait at once.
    pub async fn readable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::READABLE).await
    }

    /// [`readable`](Self::readable) with a guard that gives mutable access
    /// to the inner object.
    pub async fn readable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::READABLE).await
    }

    /// Waits until the descriptor is writable (or its write side closed,
    /// or it has an error). Any number of tasks may wait at once.
    pub async fn writable(&self) -> io::Result<AsyncFdReadyGuard<'_, T>> {
        self.ready(Interest::WRITABLE).await
    }

    /// [`writable`](Self::writable) with a guard that gives mutable access
    /// to the inner object.
    pub async fn writable_mut(&mut self) -> io::Result<AsyncFdReadyMutGuard<'_, T>> {
        self.ready_mut(Interest::WRITABLE).await
    }

    /// Runs the I/O operation `f` until it does not return `WouldBlock`,
    /// waiting for readiness in between (tokio's `AsyncFd::async_io`).
    /// `interest` is one direction: `READABLE` or `WRITABLE`.
    ///
    /// ```
    /// # tempo_io::__doc_block_on(async {
    /// use std::io::{Read, Write};
    /// use tempo_io::{unix::AsyncFd, Interest};
    /// # let (mut tx, rx) = std::os::unix::net::UnixStream::pair()?;
    /// rx.set_nonblocking(true)?;
    /// let rx = AsyncFd::new(rx)?;
    /// tx.write_all(b"abc")?;
    /// let mut buf = [0u8; 8];
    /// let n = rx.async_io(Interest::READABLE, |mut fd| fd.read(&mut buf)).await?;
    /// assert_eq!(&buf[..n], b"abc");
    /// # Ok(()) }).unwrap();
    /// ```
    pub async fn async_io<R>(
        &self,
        interest: Interest,
        mut f: impl FnMut(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        let direction = self.direction(interest)?;
        self.registration().io(direction, || f(&self.inner)).await
    }

    /// [`async_io`](Self::async_io) with mutable access to the inner
    /// object.
    pub async fn async_io_mut<R>(
        &mut self,
        interest: Interest,
        mut f: impl FnMut(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let direction = self.direction(interest)?;
        let AsyncFd { io, inner, .. } = self;
        io.registration.io(direction, || f(inner)).await
    }

    /// Runs the I/O operation `f` once, without waiting; a `WouldBlock`
    /// clears the readiness of `interest`'s direction (`READABLE` or
    /// `WRITABLE`), so the next wait sleeps until the next edge.
    ///
    /// Unlike tokio's, it always calls `f`, as every Tempo `try_*` does.
    pub fn try_io<R>(
        &self,
        interest: Interest,
        f: impl FnOnce(&T) -> io::Result<R>,
    ) -> io::Result<R> {
        let direction = self.direction(interest)?;
        self.registration().try_io(direction, || f(&self.inner))
    }

    /// [`try_io`](Self::try_io) with mutable access to the inner object.
    pub fn try_io_mut<R>(
        &mut self,
        interest: Interest,
        f: impl FnOnce(&mut T) -> io::Result<R>,
    ) -> io::Result<R> {
        let direction = self.direction(interest)?;
        let AsyncFd { io, inner, .. } = self;
        io.registration.try_io(direction, || f(inner))
    }

    /// The one direction of a single-direction `interest` the `AsyncFd`
    /// was made with.
    fn direction(&self, interest: Interest) -> io::Result<Direction> {
        match (interest.is_readable(), interest.is_writable()) {
            (true, true) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "AsyncFd::async_io / try_io take one direction: Interest::READABLE or Interest::WRITABLE",
            )),
            (true, false) => self.allowed(interest).map(|_| Direction::Read),
            _ => self.allowed(interest).map(|_| Direction::Write),
        }
    }

    fn registration(&self) -> &Registration {
        &self.io.registration
    }

    /// `interest` restricted to the registered interest; an error if
    /// nothing is left.
    fn allowed(&self, interest: Interest) -> io::Result<Interest> {
        let read = interest.is_readable() && self.interest.is_readable();
        let write = interest.is_writable() && self.interest.is_writable();
        match (read, write) {
            (true, true) => Ok(Interest::READABLE | Interest::WRITABLE),
            (true, false) => Ok(Interest::READABLE),
            (false, true) => Ok(Interest::WRITABLE),
            (false, false) => Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!(
                    "waiting for {interest:?} on an AsyncFd made with_interest({:?}): \
                     it would never complete",
                    self.interest
                ),
            )),
        }
    }

    /// Waits for `interest` (spending a budget unit, through the
    /// registration), then takes the event the guard clears against.
    async fn event(&self, interest: Interest) -> io::Result<Event> {
        let interest = self.allowed(interest)?;
        loop {
            self.registration().ready_for(interest).await?;
            // Taken after the wait and before the caller's I/O: a clear
            // through it erases no edge the caller has not acted on.
            if let Some(event) = Event::of(self.snapshot(), interest) {
                return Ok(event);
            }
            // Another task cleared the readiness meanwhile: wait again.
        }
    }

    /// [`event`](Self::event), `poll_*` form.
    fn poll_event(&self, cx: &mut Context<'_>, direction: Direction) -> Poll<io::Result<Event>> {
        let interest = match direction {
            Direction::Read => Interest::READABLE,
            Direction::Write => Interest::WRITABLE,
        };
        if let Err(e) = self.allowed(interest) {
            return Poll::Ready(Err(e));
        }
        loop {
            ready!(self.registration().poll_ready(cx, direction))?;
            if let Some(event) = Event::of(self.snapshot(), interest) {
                return Poll::Ready(Ok(event));
            }
        }
    }

    fn snapshot(&self) -> ReadyEvent {
        self.registration().io.snapshot()
    }

    /// Clears the readiness of `event` in the directions of its interest
    /// that `ready` names (`READABLE` / `WRITABLE`, or `ERROR`). Closed
    /// states are final: the registration keeps them.
    fn clear(&self, event: &Event, ready: Ready) {
        let directions = [
            (
                event.interest.is_readable(),
                Direction::Read,
                Ready::READABLE,
            ),
            (
                event.interest.is_writable(),
                Direction::Write,
                Ready::WRITABLE,
            ),
        ];
        for (waited, direction, bit) in directions {
            if waited && !(ready & (bit | Ready::ERROR)).is_empty() {
                self.registration()
                    .io
                    .clear_readiness(event.seen, direction);
            }
        }
    }
}

/// Maps epoll's refusal of a regular file or directory (`EPERM`) to an
/// error that says what happened.
fn explain_register_error(e: io::Error, fd: RawFd) -> io::Error {
    if e.raw_os_error() == Some(libc::EPERM) {
        io::Error::new(
            e.kind(),
            format!(
                "AsyncFd: the I/O driver cannot wait on fd {fd}: epoll does not support this kind \
                 of file (a regular file or a directory is always ready; use tempo::fs or \
                 spawn_blocking for it) ({e})"
            ),
        )
    } else {
        e
    }
}

impl<T: AsRawFd> AsRawFd for AsyncFd<T> {
    fn as_raw_fd(&self) -> RawFd {
        self.inner.as_raw_fd()
    }
}

impl<T: AsRawFd + AsFd> AsFd for AsyncFd<T> {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.inner.as_fd()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFd<T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFd")
            .field("inner", &self.inner)
            .field("interest", &self.interest)
            .finish()
    }
}

/// What a guard holds: the snapshot it clears against, the interest
/// waited for (the directions it may clear) and the readiness it reports
/// (the snapshot's, within that interest).
#[derive(Debug, Clone, Copy)]
struct Event {
    seen: ReadyEvent,
    interest: Interest,
    ready: Ready,
}

impl Event {
    /// `None` if `seen` is not ready for `interest`.
    fn of(seen: ReadyEvent, interest: Interest) -> Option<Event> {
        let ready = seen.ready() & interest.mask();
        (!ready.is_empty()).then_some(Event {
            seen,
            interest,
            ready,
        })
    }
}

/// The error of a guard's `try_io` whose closure returned `WouldBlock`:
/// the readiness was cleared, wait again.
#[derive(Debug, Default)]
pub struct TryIoError(());

/// What both ready guards' `clear_ready` (`ready`: `None`, all the guard
/// saw) and `clear_ready_matching` do: clears `ready` on `async_fd` against
/// the guard's event (so an edge that came after it is kept), and keeps
/// what is left of the event in `slot`.
fn clear_guard_event<T: AsRawFd>(
    async_fd: &AsyncFd<T>,
    slot: &mut Option<Event>,
    ready: Option<Ready>,
) {
    if let Some(mut event) = slot.take() {
        let ready = ready.unwrap_or(event.ready);
        async_fd.clear(&event, ready);
        event.ready = event.ready - ready;
        if !event.ready.is_empty() {
            *slot = Some(event);
        }
    }
}

/// What both ready guards' `try_io` do with the operation's `result`: a
/// `WouldBlock` clears the guard's readiness and becomes `TryIoError`.
fn guard_try_result<T: AsRawFd, R>(
    async_fd: &AsyncFd<T>,
    event: &mut Option<Event>,
    result: io::Result<R>,
) -> Result<io::Result<R>, TryIoError> {
    match result {
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
            clear_guard_event(async_fd, event, None);
            Err(TryIoError(()))
        }
        result => Ok(result),
    }
}

/// Readiness of an [`AsyncFd`] seen by a wait and not yet acknowledged,
/// with shared access to it (tokio's `AsyncFdReadyGuard`).
///
/// Say what the I/O found: [`clear_ready`](Self::clear_ready) after a
/// `WouldBlock` (or let [`try_io`](Self::try_io) do it), or
/// [`retain_ready`](Self::retain_ready) / drop to keep the readiness.
#[must_use = "say whether the descriptor is drained: clear_ready, try_io or retain_ready"]
pub struct AsyncFdReadyGuard<'a, T: AsRawFd> {
    async_fd: &'a AsyncFd<T>,
    event: Option<Event>,
}

impl<'a, T: AsRawFd> AsyncFdReadyGuard<'a, T> {
    fn new(async_fd: &'a AsyncFd<T>, event: Event) -> Self {
        AsyncFdReadyGuard {
            async_fd,
            event: Some(event),
        }
    }

    /// Clears the readiness this guard saw: the next wait sleeps until
    /// the next edge. Call it only after an operation returned
    /// `WouldBlock`. An event that arrived after the guard was made is
    /// kept.
    pub fn clear_ready(&mut self) {
        clear_guard_event(self.async_fd, &mut self.event, None);
    }

    /// Clears only the readiness in `ready` (after a read blocked on a
    /// guard of a combined interest: `Ready::READABLE`). Closed states are
    /// final and stay.
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        clear_guard_event(self.async_fd, &mut self.event, Some(ready));
    }

    /// Keeps the readiness (the next wait completes at once). Dropping
    /// the guard does the same; this says so explicitly.
    pub fn retain_ready(&mut self) {}

    /// The readiness this guard saw, within the interest waited for;
    /// empty after [`clear_ready`](Self::clear_ready).
    pub fn ready(&self) -> Ready {
        self.event.map_or(Ready::EMPTY, |event| event.ready)
    }

    /// Runs the I/O operation `f`. If it returns `WouldBlock`, clears the
    /// readiness and returns `Err(TryIoError)`: wait again. Otherwise
    /// returns `f`'s result.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&'a AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        let result = f(self.async_fd);
        guard_try_result(self.async_fd, &mut self.event, result)
    }

    /// The [`AsyncFd`] this guard belongs to.
    pub fn get_ref(&self) -> &'a AsyncFd<T> {
        self.async_fd
    }

    /// The inner object of the [`AsyncFd`].
    pub fn get_inner(&self) -> &'a T {
        self.async_fd.get_ref()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyGuard")
            .field("async_fd", &self.async_fd)
            .field("ready", &self.ready())
            .finish()
    }
}

/// [`AsyncFdReadyGuard`] with mutable access to the [`AsyncFd`] (tokio's
/// `AsyncFdReadyMutGuard`), from the `_mut` waits.
#[must_use = "say whether the descriptor is drained: clear_ready, try_io or retain_ready"]
pub struct AsyncFdReadyMutGuard<'a, T: AsRawFd> {
    async_fd: &'a mut AsyncFd<T>,
    event: Option<Event>,
}

impl<'a, T: AsRawFd> AsyncFdReadyMutGuard<'a, T> {
    fn new(async_fd: &'a mut AsyncFd<T>, event: Event) -> Self {
        AsyncFdReadyMutGuard {
            async_fd,
            event: Some(event),
        }
    }

    /// [`AsyncFdReadyGuard::clear_ready`].
    pub fn clear_ready(&mut self) {
        clear_guard_event(self.async_fd, &mut self.event, None);
    }

    /// [`AsyncFdReadyGuard::clear_ready_matching`].
    pub fn clear_ready_matching(&mut self, ready: Ready) {
        clear_guard_event(self.async_fd, &mut self.event, Some(ready));
    }

    /// [`AsyncFdReadyGuard::retain_ready`].
    pub fn retain_ready(&mut self) {}

    /// [`AsyncFdReadyGuard::ready`].
    pub fn ready(&self) -> Ready {
        self.event.map_or(Ready::EMPTY, |event| event.ready)
    }

    /// [`AsyncFdReadyGuard::try_io`], with `&mut AsyncFd`.
    pub fn try_io<R>(
        &mut self,
        f: impl FnOnce(&mut AsyncFd<T>) -> io::Result<R>,
    ) -> Result<io::Result<R>, TryIoError> {
        let result = f(self.async_fd);
        guard_try_result(self.async_fd, &mut self.event, result)
    }

    /// The [`AsyncFd`] this guard belongs to.
    pub fn get_ref(&self) -> &AsyncFd<T> {
        self.async_fd
    }

    /// The [`AsyncFd`] this guard belongs to, mutably.
    pub fn get_mut(&mut self) -> &mut AsyncFd<T> {
        self.async_fd
    }

    /// The inner object of the [`AsyncFd`].
    pub fn get_inner(&self) -> &T {
        self.async_fd.get_ref()
    }

    /// The inner object of the [`AsyncFd`], mutably.
    pub fn get_inner_mut(&mut self) -> &mut T {
        self.async_fd.get_mut()
    }
}

impl<T: AsRawFd + fmt::Debug> fmt::Debug for AsyncFdReadyMutGuard<'_, T> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("AsyncFdReadyMutGuard")
            .field("async_fd", &self.async_fd)
            .field("ready", &self.ready())
            .finish()
    }
}
