//! [`Handle`]: a cloneable, thread-safe reference to a [`Driver`] (its
//! reactor, its sockets' settings, its io_uring), and the thread's
//! current driver that socket constructors use.
//!
//! [`Driver`]: crate::Driver

use std::fmt;
use std::io;
use std::sync::Arc;

use tempo_park::scoped::ScopedGuard;

use crate::completion::RingHome;
use crate::readiness::ReactorShared;
use crate::socket_settings::SocketSettings;

tempo_park::scoped_thread_local! {
    /// The current reactor of this thread (see `tempo_park::scoped` for the
    /// rules every "current" thread-local of the stack follows).
    static CURRENT: Handle
}

/// A reference to an I/O [`Driver`](crate::Driver): registers sockets from
/// any thread and wakes the driver.
///
/// Socket constructors register with the thread's *current* handle: the
/// `tempo` runtime enters its own; a host that drives a [`Driver`](crate::Driver)
/// itself [`enter`](Handle::enter)s it.
///
/// ```
/// use tempo_io::Handle;
///
/// let driver = tempo_io::Driver::new()?;
/// assert!(Handle::try_current().is_err()); // no reactor on this thread yet
/// let _guard = driver.handle().enter();
/// let std_socket = std::net::UdpSocket::bind("127.0.0.1:0")?;
/// let socket = tempo_io::net::UdpSocket::from_std(std_socket)?; // registers with `driver`
/// # drop(socket);
/// # Ok::<(), std::io::Error>(())
/// ```
#[derive(Clone)]
pub struct Handle {
    shared: Arc<HandleShared>,
}

/// What a [`Handle`] refers to: the reactor, the socket layer's settings
/// and the driver's io_uring, behind one reference count (a handle is
/// cloned on every [`enter`](Handle::enter), so one count, not one per
/// part).
#[derive(Debug)]
pub(crate) struct HandleShared {
    /// The reactor: registrations, the poller's registry, its waker.
    pub(crate) reactor: Arc<ReactorShared>,
    /// The socket layer's settings (throttled flag, resolver).
    pub(crate) settings: SocketSettings,
    /// The driver's io_uring, made by its first ring receiver.
    pub(crate) ring: RingHome,
}

impl fmt::Debug for Handle {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Handle").finish_non_exhaustive()
    }
}

/// Makes a [`Handle`] the current reactor of this thread until dropped; see
/// [`Handle::enter`].
#[must_use = "the handle is current only while the guard lives"]
pub struct EnterGuard {
    /// Restores the previous reactor; `!Send`, so the guard stays on its
    /// thread.
    _scope: ScopedGuard<Handle>,
}

impl fmt::Debug for EnterGuard {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("EnterGuard").finish_non_exhaustive()
    }
}

impl Handle {
    /// A handle to `reactor`, whose sockets share `settings`.
    pub(crate) fn from_parts(reactor: Arc<ReactorShared>, settings: SocketSettings) -> Handle {
        Handle {
            shared: Arc::new(HandleShared {
                reactor,
                settings,
                ring: RingHome::default(),
            }),
        }
    }

    /// A handle to what `shared` refers to (a socket's, for an accepted
    /// stream).
    pub(crate) fn from_shared(shared: Arc<HandleShared>) -> Handle {
        Handle { shared }
    }

    /// The reactor this handle refers to.
    pub(crate) fn reactor(&self) -> &Arc<ReactorShared> {
        &self.shared.reactor
    }

    /// The settings of the driver's sockets.
    pub(crate) fn settings(&self) -> &SocketSettings {
        &self.shared.settings
    }

    /// The driver's io_uring (the completion backend).
    pub(crate) fn ring(&self) -> &RingHome {
        &self.shared.ring
    }

    /// What this handle refers to, for a socket to keep.
    pub(crate) fn into_shared(self) -> Arc<HandleShared> {
        self.shared
    }

    /// The reactor of the current thread: the one set by the innermost live
    /// [`Handle::enter`] guard (the runtime enters it while it runs).
    ///
    /// # Panics
    ///
    /// If there is none, with a message that says what to do; see
    /// [`try_current`](Self::try_current).
    #[track_caller]
    pub fn current() -> Handle {
        Handle::try_current().unwrap_or_else(|error| panic!("{error}"))
    }

    /// The reactor of the current thread, or an error (whose message says
    /// what to do) if there is none. Socket constructors use this.
    pub fn try_current() -> io::Result<Handle> {
        CURRENT.get().ok_or_else(no_driver_error)
    }

    /// Makes this handle the current reactor of the calling thread until the
    /// guard is dropped; nested guards restore the previous handle (see the
    /// example of [`Handle`]).
    pub fn enter(&self) -> EnterGuard {
        EnterGuard {
            _scope: CURRENT.enter(self.clone()),
        }
    }

    /// Wakes the driver: its current `park*` returns, or the next one
    /// returns at once.
    pub fn unpark(&self) {
        let _ = self.reactor().waker.wake();
    }

    /// Whether the driver was dropped (sockets registered with it fail).
    pub fn is_shutdown(&self) -> bool {
        self.reactor()
            .is_shutdown
            .load(std::sync::atomic::Ordering::SeqCst)
    }
}

/// The driver's pollable fd, reached through a handle: a duplicate of the
/// [`Driver`](crate::Driver)'s own fd (the same epoll instance), readable in
/// the same conditions (see the driver's `AsRawFd`). It stays open as long
/// as the handle, even if the driver itself was dropped.
impl std::os::fd::AsRawFd for Handle {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        std::os::fd::AsRawFd::as_raw_fd(&self.reactor().registry)
    }
}

/// See [`AsRawFd`](#impl-AsRawFd-for-Handle).
impl std::os::fd::AsFd for Handle {
    fn as_fd(&self) -> std::os::fd::BorrowedFd<'_> {
        std::os::fd::AsFd::as_fd(&self.reactor().registry)
    }
}

fn no_driver_error() -> io::Error {
    io::Error::other(
        "no Tempo I/O driver is running on this thread: create sockets inside Runtime::block_on, \
         inside a task, or after Runtime::enter(), on a runtime built with enable_io() \
         (or enter a tempo_io::Handle with Handle::enter())",
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use crate::readiness::Reactor;

    /// A handle to a reactor of its own (the public `Driver` composes the
    /// same two parts).
    fn handle_of(reactor: &Reactor) -> Handle {
        Handle::from_parts(reactor.shared(), SocketSettings::default())
    }

    #[test]
    fn current_without_driver_says_what_to_do() {
        let err = Handle::try_current().unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::Other);
        assert!(err.to_string().contains("Runtime::block_on"), "{err}");
    }

    #[test]
    #[should_panic(expected = "Runtime::block_on")]
    fn current_without_driver_panics_saying_what_to_do() {
        Handle::current();
    }

    #[test]
    fn nested_enter_restores_previous() {
        let a = Reactor::with_capacity(8).unwrap();
        let b = Reactor::with_capacity(8).unwrap();
        let (ha, hb) = (handle_of(&a), handle_of(&b));
        let ga = ha.enter();
        assert!(Arc::ptr_eq(
            Handle::try_current().unwrap().reactor(),
            ha.reactor()
        ));
        {
            let _gb = hb.enter();
            assert!(Arc::ptr_eq(
                Handle::try_current().unwrap().reactor(),
                hb.reactor()
            ));
        }
        assert!(Arc::ptr_eq(
            Handle::try_current().unwrap().reactor(),
            ha.reactor()
        ));
        drop(ga);
        assert!(Handle::try_current().is_err());
    }

    #[test]
    fn handle_is_send_sync_clone() {
        fn check<T: Send + Sync + Clone>() {}
        check::<Handle>();
    }
}
