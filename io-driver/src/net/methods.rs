//! The methods the net types share, written once.
//!
//! `UdpSocket` and `UnixDatagram`, `TcpStream` and `UnixStream`, and the
//! two listeners expose the same operations over different mio sources:
//! the same async / `poll_*` / `try_*` trio over one
//! [`Registration`](crate::registration::Registration) loop. Each macro here
//! expands *inside* the type's own `impl` block, so every public method
//! (and its documentation) stays on the type, as rustdoc and users expect,
//! while its body exists once. Every type keeps its socket in a field named
//! `io`, a [`PollIo`](crate::poll_io::PollIo) of its mio source.
//!
//! Declared with `#[macro_use]` first in `net/mod.rs`, so the sibling
//! modules see the macros.

/// The opening of a running doc example on `$ty`: a hidden
/// [`__doc_block_on`](crate::__doc_block_on) (tempo-io cannot use the
/// `tempo` runtime), then, shown, two connected sockets `a` and `b` of
/// the type. The example closes with `# Ok(()) }).unwrap();`.
macro_rules! doc_pair {
    (UdpSocket) => {
        concat!(
            "# tempo_io::__doc_block_on(async {\n",
            "use tempo_io::net::UdpSocket;\n",
            "\n",
            "let a = UdpSocket::bind(\"127.0.0.1:0\").await?;\n",
            "let b = UdpSocket::bind(\"127.0.0.1:0\").await?;\n",
            "a.connect(b.local_addr()?).await?;\n",
            "b.connect(a.local_addr()?).await?;\n",
        )
    };
    (UnixDatagram) => {
        concat!(
            "# tempo_io::__doc_block_on(async {\n",
            "let (a, b) = tempo_io::net::UnixDatagram::pair()?;\n",
        )
    };
    (TcpStream) => {
        concat!(
            "# tempo_io::__doc_block_on(async {\n",
            "use tempo_io::net::{TcpListener, TcpStream};\n",
            "\n",
            "let listener = TcpListener::bind(\"127.0.0.1:0\").await?;\n",
            "let a = TcpStream::connect(listener.local_addr()?).await?;\n",
            "let (b, _) = listener.accept().await?;\n",
        )
    };
    (UnixStream) => {
        concat!(
            "# tempo_io::__doc_block_on(async {\n",
            "let (a, b) = tempo_io::net::UnixStream::pair()?;\n",
        )
    };
}

/// The opening of a running doc example of a listener accepting `$stream`
/// connections: a hidden [`__doc_block_on`](crate::__doc_block_on), then a
/// `listener` and a connecting `client`. The example closes with
/// `doc_listener_end!($stream)`.
macro_rules! doc_listener {
    (TcpStream) => {
        concat!(
            "# tempo_io::__doc_block_on(async {\n",
            "use tempo_io::net::{TcpListener, TcpStream};\n",
            "\n",
            "let listener = TcpListener::bind(\"127.0.0.1:0\").await?;\n",
            "let client = TcpStream::connect(listener.local_addr()?).await?;\n",
        )
    };
    (UnixStream) => {
        concat!(
            "# tempo_io::__doc_block_on(async {\n",
            "use tempo_io::net::{UnixListener, UnixStream};\n",
            "\n",
            "let path = std::env::temp_dir().join(format!(\"tempo-doc-{}.sock\", std::process::id()));\n",
            "# let _ = std::fs::remove_file(&path);\n",
            "let listener = UnixListener::bind(&path)?;\n",
            "let client = UnixStream::connect(&path).await?;\n",
        )
    };
}

/// The end of a [`doc_listener`] example (removes the Unix socket's path).
macro_rules! doc_listener_end {
    (TcpStream) => {
        "# Ok(()) }).unwrap();"
    };
    (UnixStream) => {
        "# std::fs::remove_file(&path)?;\n# Ok(()) }).unwrap();"
    };
}

/// `Debug` (showing the fd), `AsRawFd` and `AsFd` for a net type.
macro_rules! impl_fd_traits {
    ($ty:ident) => {
        impl ::std::fmt::Debug for $ty {
            fn fmt(&self, f: &mut ::std::fmt::Formatter<'_>) -> ::std::fmt::Result {
                f.debug_struct(stringify!($ty))
                    .field("fd", &::std::os::fd::AsRawFd::as_raw_fd(self))
                    .finish()
            }
        }

        impl ::std::os::fd::AsRawFd for $ty {
            fn as_raw_fd(&self) -> ::std::os::fd::RawFd {
                ::std::os::fd::AsRawFd::as_raw_fd(&*self.io)
            }
        }

        impl ::std::os::fd::AsFd for $ty {
            fn as_fd(&self) -> ::std::os::fd::BorrowedFd<'_> {
                ::std::os::fd::AsFd::as_fd(&*self.io)
            }
        }
    };
}

/// Methods that forward to the mio source as they are:
/// `fn name(&self, args) -> R => source_method(argument expressions);`.
macro_rules! forward_to_source {
    ($(
        $(#[$doc:meta])*
        fn $name:ident(&self $(, $arg:ident: $ty:ty)*) -> $ret:ty => $target:ident($($e:expr),*);
    )*) => {$(
        $(#[$doc])*
        pub fn $name(&self $(, $arg: $ty)*) -> $ret {
            self.io.$target($($e),*)
        }
    )*};
}

/// `readable`, `writable` and the two `poll_*_ready` methods of a byte
/// stream type `$ty` (`poll_read_ready` / `poll_write_ready`); the `@each`
/// arm also serves the datagram sockets' `writable`.
macro_rules! readiness_methods {
    ($ty:ident, $poll_read_ready:ident, $poll_write_ready:ident) => {
        readiness_methods!(@each
            /// Waits until the socket may be readable. A `try_*` read that
            /// returns `WouldBlock` makes the next call wait for a new event.
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            ///
            /// a.write_all(b"hello").await?;
            /// let mut buf = [0u8; 1024];
            /// let n = loop {
            ///     b.readable().await?;
            ///     match b.try_read(&mut buf) {
            ///         Ok(n) => break n,
            ///         // a spurious wake-up: wait for the next event
            ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            ///         Err(e) => return Err(e),
            ///     }
            /// };
            /// assert!(n > 0);
            /// # Ok(()) }).unwrap();
            /// ```
            readable, $poll_read_ready, Read, "read", "reading";
            /// Waits until the socket may be writable.
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            ///
            /// let n = loop {
            ///     a.writable().await?;
            ///     match a.try_write(b"hello") {
            ///         Ok(n) => break n,
            ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            ///         Err(e) => return Err(e),
            ///     }
            /// };
            /// assert!(n > 0);
            /// # drop(b);
            /// # Ok(()) }).unwrap();
            /// ```
            writable, $poll_write_ready, Write, "write", "writing";
        );
    };
    (@each $($(#[$doc:meta])* $wait:ident, $poll:ident, $dir:ident, $what:literal, $doing:literal;)*) => {$(
        $(#[$doc])*
        pub async fn $wait(&self) -> ::std::io::Result<()> {
            self.io
                .registration
                .ready($crate::ready::Direction::$dir)
                .await
        }

        #[doc = concat!("Polls for ", $what, " readiness without ", $doing, ".")]
        ///
        /// Only the last task to call a `poll_*` method of this direction is
        /// woken (as with tokio); the async methods have no such limit.
        pub fn $poll(
            &self,
            cx: &mut ::std::task::Context<'_>,
        ) -> ::std::task::Poll<::std::io::Result<()>> {
            self.io
                .registration
                .poll_ready(cx, $crate::ready::Direction::$dir)
        }
    )*};
}

/// `ready(Interest)` of a socket type `$ty` (after `readiness_methods!`).
macro_rules! ready_method {
    ($ty:ident) => {
        /// Waits until the socket is ready for any part of `interest`, and
        /// returns the readiness states found (a subset of what `interest`
        /// covers; a closed side or an error counts as ready), as tokio's
        /// `ready`. Nothing is read or written: follow with `try_*`
        /// operations, whose `WouldBlock` makes the next `ready` wait for a
        /// new event. Any number of tasks may wait at once.
        ///
        /// ```
        #[doc = doc_pair!($ty)]
        /// use tempo_io::Interest;
        ///
        /// let ready = a.ready(Interest::READABLE | Interest::WRITABLE).await?;
        /// assert!(ready.is_writable()); // nothing sent yet: writable only
        /// if ready.is_readable() {
        ///     // a `try_*` read now; `WouldBlock` means someone else took it
        /// }
        /// # drop(b);
        /// # Ok(()) }).unwrap();
        /// ```
        pub async fn ready(&self, interest: $crate::Interest) -> ::std::io::Result<$crate::Ready> {
            self.io.registration.ready_for(interest).await
        }
    };
}

/// One operation in its three forms: async (own waiter entry), `poll_*`
/// (the direction's `poll_*` slot) and `try_*` (no waiting).
///
/// `io` names the mio source inside `$op`. `io` operations run `$op` in
/// the plain operation loop; `recv` operations (datagram receives) follow
/// the receive-ahead rule (`recv_ahead`): their `$op` is a closure
/// `|attempt, ahead: &RecvAhead| ...` returning the value and whether the
/// socket was left drained.
macro_rules! io_operation {
    (
        $(#[$doc:meta])*
        $kind:ident $dir:ident fn $name:ident / $poll:ident / $try:ident
            ($($arg:ident: $ty:ty),*) -> $ret:ty = |$io:ident| $op:expr
    ) => {
        $(#[$doc])*
        pub async fn $name(&self $(, $arg: $ty)*) -> ::std::io::Result<$ret> {
            let $io = &*self.io;
            io_operation!(@async $kind $dir self, $op)
        }

        #[doc = concat!("Polls [`", stringify!($name), "`](Self::", stringify!($name), ").")]
        ///
        /// Only the last task to call a `poll_*` method of this direction is
        /// woken (as with tokio); the async methods have no such limit.
        pub fn $poll(
            &self,
            cx: &mut ::std::task::Context<'_>
            $(, $arg: $ty)*
        ) -> ::std::task::Poll<::std::io::Result<$ret>> {
            let $io = &*self.io;
            io_operation!(@poll $kind $dir self, cx, $op)
        }

        #[doc = concat!("[`", stringify!($name), "`](Self::", stringify!($name),
            ") now (", io_operation!(@try_doc $kind), "), or fails with `WouldBlock`.")]
        pub fn $try(&self $(, $arg: $ty)*) -> ::std::io::Result<$ret> {
            let $io = &*self.io;
            io_operation!(@try $kind $dir self, $op)
        }
    };
    (@async io $dir:ident $self:ident, $op:expr) => {
        $self.io.registration.io($crate::ready::Direction::$dir, || $op).await
    };
    (@async recv $dir:ident $self:ident, $op:expr) => {
        $self.io.registration.recv_io(|attempt, ahead| ($op)(attempt, ahead)).await
    };
    (@poll io $dir:ident $self:ident, $cx:ident, $op:expr) => {
        $self.io.registration.poll_io($cx, $crate::ready::Direction::$dir, || $op)
    };
    (@poll recv $dir:ident $self:ident, $cx:ident, $op:expr) => {
        $self.io.registration.poll_recv_io($cx, |attempt, ahead| ($op)(attempt, ahead))
    };
    (@try io $dir:ident $self:ident, $op:expr) => {
        $self.io.registration.try_io($crate::ready::Direction::$dir, || $op)
    };
    (@try recv $dir:ident $self:ident, $op:expr) => {
        $self.io.registration.try_recv_io(|attempt, ahead| ($op)(attempt, ahead))
    };
    (@try_doc io) => { "always one syscall" };
    (@try_doc recv) => { "a held datagram without a syscall, else always one syscall" };
}

/// `readable` / `poll_recv_ready` (ready at once while a datagram is held)
/// and `writable` / `poll_send_ready` of a datagram socket.
macro_rules! datagram_readiness_methods {
    ($ty:ident) => {
        /// Waits until the socket may be readable: at once while a datagram
        /// is held (see the `net` module docs). A `try_*` receive that
        /// returns `WouldBlock` makes the next call wait for a new event.
        ///
        /// ```
        #[doc = doc_pair!($ty)]
        ///
        /// a.send(b"ping").await?;
        /// let mut buf = [0u8; 1500];
        /// let len = loop {
        ///     b.readable().await?;
        ///     match b.try_recv(&mut buf) {
        ///         Ok(len) => break len,
        ///         // a spurious wake-up: wait for the next event
        ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
        ///         Err(e) => return Err(e),
        ///     }
        /// };
        /// assert_eq!(&buf[..len], b"ping");
        /// # Ok(()) }).unwrap();
        /// ```
        pub async fn readable(&self) -> ::std::io::Result<()> {
            self.io
                .registration
                .ready($crate::ready::Direction::Read)
                .await
        }

        /// Polls for read readiness without reading (ready at once while a
        /// datagram is held).
        ///
        /// Only the last task to call a `poll_*` method of this direction is
        /// woken (as with tokio); the async methods have no such limit.
        pub fn poll_recv_ready(
            &self,
            cx: &mut ::std::task::Context<'_>,
        ) -> ::std::task::Poll<::std::io::Result<()>> {
            self.io
                .registration
                .poll_ready(cx, $crate::ready::Direction::Read)
        }

        readiness_methods!(@each
            /// Waits until the socket may be writable.
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            ///
            /// loop {
            ///     a.writable().await?;
            ///     match a.try_send(b"ping") {
            ///         Ok(_) => break,
            ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            ///         Err(e) => return Err(e),
            ///     }
            /// }
            /// # drop(b);
            /// # Ok(()) }).unwrap();
            /// ```
            writable, poll_send_ready, Write, "write", "writing";
        );
    };
}

/// `send`, `recv`, `recv_from`, `recv_many` and `send_many` of a datagram
/// socket whose peer addresses are `$addr`, decoded by the `RawAddr`
/// method `$decode`; receives follow the receive-ahead rule.
macro_rules! datagram_methods {
    ($ty:ident, $addr:ty, $decode:ident) => {
        io_operation! {
            /// Sends to the connected peer.
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            ///
            /// a.send(b"ping").await?;
            /// let mut buf = [0u8; 1500];
            /// let len = b.recv(&mut buf).await?;
            /// assert_eq!(&buf[..len], b"ping");
            /// # Ok(()) }).unwrap();
            /// ```
            io Write fn send / poll_send / try_send (buf: &[u8]) -> usize = |io| io.send(buf)
        }

        io_operation! {
            /// Receives from the connected peer (under throttling, one
            /// receive syscall per datagram: see the `net` module docs). A
            /// datagram longer than `buf` is truncated.
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            ///
            /// a.send(b"ping").await?;
            /// let mut buf = [0u8; 1500];
            /// let len = b.recv(&mut buf).await?;
            /// assert_eq!(&buf[..len], b"ping");
            /// # Ok(()) }).unwrap();
            /// ```
            recv Read fn recv / poll_recv / try_recv (buf: &mut [u8]) -> usize
                = |io| |attempt, ahead: &$crate::recv_ahead::RecvAhead| {
                    let fd = ::std::os::fd::AsRawFd::as_raw_fd(io);
                    ahead.recv(fd, attempt, buf).map(|got| (got.len, got.drained))
                }
        }

        io_operation! {
            /// Receives a datagram and its source address (under
            /// throttling, one receive syscall per datagram: see the `net`
            /// module docs).
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            ///
            /// a.send(b"ping").await?;
            /// let mut buf = [0u8; 1500];
            /// let (len, from) = b.recv_from(&mut buf).await?;
            /// assert_eq!(&buf[..len], b"ping");
            /// println!("{len} bytes from {from:?}");
            /// # Ok(()) }).unwrap();
            /// ```
            recv Read fn recv_from / poll_recv_from / try_recv_from
                (buf: &mut [u8]) -> (usize, $addr)
                = |io| |attempt, ahead: &$crate::recv_ahead::RecvAhead| {
                    let fd = ::std::os::fd::AsRawFd::as_raw_fd(io);
                    let got = ahead.recv(fd, attempt, buf)?;
                    Ok(((got.len, got.addr.$decode()?), got.drained))
                }
        }

        io_operation! {
            /// Receives as many datagrams as `batch` holds and are queued,
            /// with one `recvmmsg` (a datagram held by an earlier receive
            /// comes first), and returns how many (at least 1). Spends one
            /// unit of the task's cooperative budget per call. See
            /// [`RecvBatch`](crate::net::RecvBatch).
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            /// use tempo_io::net::RecvBatch;
            ///
            /// a.send(b"one").await?;
            /// a.send(b"two").await?;
            ///
            /// let mut batch = RecvBatch::new(32, 1500)?; // reused from call to call
            /// let mut received = Vec::new();
            /// while received.len() < 2 {
            ///     let n = b.recv_many(&mut batch).await?;
            ///     for i in 0..n {
            ///         received.push(batch.payload(i).to_vec());
            ///     }
            /// }
            /// assert_eq!(received, [b"one".to_vec(), b"two".to_vec()]);
            /// # Ok(()) }).unwrap();
            /// ```
            recv Read fn recv_many / poll_recv_many / try_recv_many
                (batch: &mut $crate::net::RecvBatch) -> usize
                = |io| |attempt, ahead: &$crate::recv_ahead::RecvAhead| {
                    let fd = ::std::os::fd::AsRawFd::as_raw_fd(io);
                    ahead.recv_batch(fd, attempt, batch)
                }
        }

        io_operation! {
            /// Sends the datagrams of `batch` not yet sent with one
            /// `sendmmsg` and returns how many were sent (those leave the
            /// batch); `Ok(0)` without a syscall for an empty batch. See
            /// [`SendBatch`](crate::net::SendBatch).
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            /// use tempo_io::net::SendBatch;
            ///
            /// let mut batch = SendBatch::new(); // reused after `clear`
            /// batch.push_connected(b"one")?;
            /// batch.push_connected(b"two")?;
            /// while !batch.is_empty() {
            ///     a.send_many(&mut batch).await?; // sent ones leave the batch
            /// }
            ///
            /// let mut buf = [0u8; 1500];
            /// let len = b.recv(&mut buf).await?;
            /// assert_eq!(&buf[..len], b"one");
            /// # Ok(()) }).unwrap();
            /// ```
            io Write fn send_many / poll_send_many / try_send_many
                (batch: &mut $crate::net::SendBatch) -> usize
                = |io| batch.send_on(::std::os::fd::AsRawFd::as_raw_fd(io))
        }
    };
}

/// `read`, `write` and `write_all` of a byte stream.
macro_rules! stream_methods {
    ($ty:ident) => {
        io_operation! {
            /// Reads some bytes; `Ok(0)` at end of stream. A reset by the
            /// peer fails with [`io::ErrorKind::ConnectionReset`].
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            ///
            /// a.write_all(b"hello").await?;
            /// a.shutdown().await?; // b reads end of stream after "hello"
            ///
            /// let mut received = Vec::new();
            /// let mut buf = [0u8; 1024];
            /// loop {
            ///     let n = b.read(&mut buf).await?;
            ///     if n == 0 {
            ///         break; // end of stream
            ///     }
            ///     received.extend_from_slice(&buf[..n]);
            /// }
            /// assert_eq!(received, b"hello");
            /// # Ok(()) }).unwrap();
            /// ```
            io Read fn read / poll_read / try_read (buf: &mut [u8]) -> usize
                = |io| ::std::io::Read::read(&mut &*io, buf)
        }

        io_operation! {
            /// Writes some bytes and returns how many were written: maybe
            /// fewer than `buf.len()` (see [`write_all`](Self::write_all)).
            ///
            /// ```
            #[doc = doc_pair!($ty)]
            ///
            /// let n = a.write(b"hello").await?;
            /// assert!(n > 0 && n <= 5);
            /// # drop(b);
            /// # Ok(()) }).unwrap();
            /// ```
            io Write fn write / poll_write / try_write (buf: &[u8]) -> usize
                = |io| ::std::io::Write::write(&mut &*io, buf)
        }

        /// Writes all of `buf`, in as many writes as it takes.
        ///
        /// ```
        #[doc = doc_pair!($ty)]
        ///
        /// a.write_all(b"hello").await?;
        /// let mut buf = [0u8; 5];
        /// let mut filled = 0;
        /// while filled < buf.len() {
        ///     filled += b.read(&mut buf[filled..]).await?;
        /// }
        /// assert_eq!(&buf, b"hello");
        /// # Ok(()) }).unwrap();
        /// ```
        pub async fn write_all(&self, mut buf: &[u8]) -> ::std::io::Result<()> {
            while !buf.is_empty() {
                let n = self.write(buf).await?;
                if n == 0 {
                    return Err(::std::io::ErrorKind::WriteZero.into());
                }
                buf = &buf[n..];
            }
            Ok(())
        }
    };
}

/// `accept` and `poll_accept` of a listener whose accepted streams are
/// `$stream` (from mio's `$mio`, registered with the listener's driver) and
/// whose peer addresses are `$addr`.
macro_rules! accept_methods {
    ($stream:ident, $mio:ty, $addr:ty) => {
        /// Accepts a connection. Running out of file descriptors fails with
        /// the OS error (`EMFILE`, "Too many open files"); the pending
        /// connection stays queued and a later `accept` can take it.
        ///
        /// ```
        #[doc = doc_listener!($stream)]
        ///
        /// let (server, peer) = listener.accept().await?;
        /// println!("connection from {peer:?}");
        /// client.write_all(b"hello").await?;
        /// let mut buf = [0u8; 5];
        /// let mut filled = 0;
        /// while filled < buf.len() {
        ///     filled += server.read(&mut buf[filled..]).await?;
        /// }
        /// assert_eq!(&buf, b"hello");
        #[doc = doc_listener_end!($stream)]
        /// ```
        pub async fn accept(&self) -> ::std::io::Result<($stream, $addr)> {
            let accepted = self
                .io
                .registration
                .io($crate::ready::Direction::Read, || self.io.accept())
                .await;
            self.register_accepted(accepted)
        }

        /// Polls an accept.
        ///
        /// Only the last task to call a `poll_*` method of this direction is
        /// woken (as with tokio); the async methods have no such limit.
        pub fn poll_accept(
            &self,
            cx: &mut ::std::task::Context<'_>,
        ) -> ::std::task::Poll<::std::io::Result<($stream, $addr)>> {
            let accepted = ::std::task::ready!(self.io.registration.poll_io(
                cx,
                $crate::ready::Direction::Read,
                || self.io.accept()
            ));
            ::std::task::Poll::Ready(self.register_accepted(accepted))
        }

        /// Registers an accepted stream with this listener's driver.
        fn register_accepted(
            &self,
            accepted: ::std::io::Result<($mio, $addr)>,
        ) -> ::std::io::Result<($stream, $addr)> {
            let (stream, addr) = accepted?;
            let handle = self.io.registration.handle().clone();
            $stream::from_mio(stream, handle).map(|stream| (stream, addr))
        }
    };
}

/// `recv_buf`, `recv_buf_from`, `try_recv_buf` and `try_recv_buf_from` of
/// a datagram socket type `$ty` whose peer addresses are `$addr` (feature
/// `bytes`; see `net/buf.rs`). They follow the receive-ahead rule, as
/// `recv` and `recv_from` do: a held datagram comes first.
macro_rules! datagram_buf_methods {
    ($ty:ident, $addr:ty, $decode:ident) => {
        /// Receives a datagram from the connected peer into `buf`'s spare
        /// capacity (at most its current `chunk_mut`; a longer datagram is
        /// truncated) and returns its length. Available with feature `bytes`.
        ///
        /// ```
        #[doc = doc_pair!($ty)]
        ///
        /// a.send(b"ping").await?;
        /// let mut buf = Vec::with_capacity(1500);
        /// let len = b.recv_buf(&mut buf).await?;
        /// assert_eq!(buf, b"ping"); // `len` bytes were appended
        /// # let _ = len;
        /// # Ok(()) }).unwrap();
        /// ```
        #[cfg(feature = "bytes")]
        pub async fn recv_buf<B: ::bytes::BufMut>(&self, buf: &mut B) -> ::std::io::Result<usize> {
            let fd = ::std::os::fd::AsRawFd::as_raw_fd(&*self.io);
            self.io
                .registration
                .recv_io($crate::net::buf::recv_op(fd, buf))
                .await
                .map(|(len, _)| len)
        }

        /// [`recv_buf`](Self::recv_buf) now (a held datagram without a
        /// syscall, else one syscall), or fails
        /// with `WouldBlock`. Available with feature `bytes`.
        ///
        /// ```
        #[doc = doc_pair!($ty)]
        ///
        /// a.send(b"ping").await?;
        /// let mut buf = bytes::BytesMut::with_capacity(1500);
        /// loop {
        ///     b.readable().await?;
        ///     match b.try_recv_buf(&mut buf) {
        ///         Ok(len) => break assert_eq!(buf.len(), len),
        ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
        ///         Err(e) => return Err(e),
        ///     }
        /// }
        /// # Ok(()) }).unwrap();
        /// ```
        #[cfg(feature = "bytes")]
        pub fn try_recv_buf<B: ::bytes::BufMut>(&self, buf: &mut B) -> ::std::io::Result<usize> {
            let fd = ::std::os::fd::AsRawFd::as_raw_fd(&*self.io);
            self.io
                .registration
                .try_recv_io($crate::net::buf::recv_op(fd, buf))
                .map(|(len, _)| len)
        }

        /// Receives a datagram into `buf`'s spare capacity (at most its
        /// current `chunk_mut`; a longer datagram is truncated) and returns
        /// its length and source. Available with feature `bytes`.
        ///
        /// ```
        #[doc = doc_pair!($ty)]
        ///
        /// a.send(b"ping").await?;
        /// let mut buf = Vec::with_capacity(1500);
        /// let (len, from) = b.recv_buf_from(&mut buf).await?;
        /// assert_eq!((len, &buf[..]), (4, &b"ping"[..]));
        /// println!("from {from:?}");
        /// # Ok(()) }).unwrap();
        /// ```
        #[cfg(feature = "bytes")]
        pub async fn recv_buf_from<B: ::bytes::BufMut>(
            &self,
            buf: &mut B,
        ) -> ::std::io::Result<(usize, $addr)> {
            let fd = ::std::os::fd::AsRawFd::as_raw_fd(&*self.io);
            let (len, addr) = self
                .io
                .registration
                .recv_io($crate::net::buf::recv_op(fd, buf))
                .await?;
            Ok((len, addr.$decode()?))
        }

        /// [`recv_buf_from`](Self::recv_buf_from) now (a held datagram
        /// without a syscall, else one syscall), or fails with `WouldBlock`.
        /// Available with feature `bytes`.
        ///
        /// ```
        #[doc = doc_pair!($ty)]
        ///
        /// a.send(b"ping").await?;
        /// let mut buf = bytes::BytesMut::with_capacity(1500);
        /// loop {
        ///     b.readable().await?;
        ///     if let Ok((len, from)) = b.try_recv_buf_from(&mut buf) {
        ///         println!("{len} bytes from {from:?}");
        ///         break;
        ///     }
        /// }
        /// # Ok(()) }).unwrap();
        /// ```
        #[cfg(feature = "bytes")]
        pub fn try_recv_buf_from<B: ::bytes::BufMut>(
            &self,
            buf: &mut B,
        ) -> ::std::io::Result<(usize, $addr)> {
            let fd = ::std::os::fd::AsRawFd::as_raw_fd(&*self.io);
            let (len, addr) = self
                .io
                .registration
                .try_recv_io($crate::net::buf::recv_op(fd, buf))?;
            Ok((len, addr.$decode()?))
        }
    };
}

/// `try_read_buf` of a byte stream type `$ty` (feature `bytes`).
macro_rules! stream_buf_methods {
    ($ty:ident) => {
        /// Reads into `buf`'s spare capacity now (always one syscall; at
        /// most its current `chunk_mut`), or fails with `WouldBlock`;
        /// `Ok(0)` at end of stream. Available with feature `bytes`.
        ///
        /// ```
        #[doc = doc_pair!($ty)]
        ///
        /// a.write_all(b"hello").await?;
        /// a.shutdown().await?;
        /// let mut buf = bytes::BytesMut::with_capacity(4096);
        /// loop {
        ///     b.readable().await?;
        ///     match b.try_read_buf(&mut buf) {
        ///         Ok(0) => break, // end of stream
        ///         Ok(_) => {}
        ///         Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
        ///         Err(e) => return Err(e),
        ///     }
        ///     buf.reserve(4096);
        /// }
        /// assert_eq!(&buf[..], b"hello");
        /// # Ok(()) }).unwrap();
        /// ```
        #[cfg(feature = "bytes")]
        pub fn try_read_buf<B: ::bytes::BufMut>(&self, buf: &mut B) -> ::std::io::Result<usize> {
            self.io
                .registration
                .try_io($crate::ready::Direction::Read, || {
                    $crate::net::buf::read_into(buf, |dst| {
                        Ok((::std::io::Read::read(&mut &*self.io, dst)?, ()))
                    })
                })
                .map(|(len, ())| len)
        }
    };
}
