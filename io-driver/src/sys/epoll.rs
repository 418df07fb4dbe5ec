//! The one epoll call mio does not offer: changing a registration to
//! level-triggered read readiness and back (`readiness/scheduled_io.rs`,
//! "Level-triggered registrations"), on mio's own epoll instance and with
//! mio's token, so that the events still come back through mio.

use std::io;
use std::os::fd::RawFd;

use crate::readiness::{Arming, LevelInterest};

/// A registered socket's entry in the driver's epoll instance.
///
/// Holds raw descriptors: the registration forgets it (under its waiters'
/// lock, `ScheduledIo::end_level`) before the socket leaves the poller,
/// and the epoll instance outlives every registration (each holds the
/// reactor), so no call reaches a closed or reused descriptor.
#[derive(Debug)]
pub(crate) struct EpollInterest {
    pub(crate) epoll: RawFd,
    pub(crate) fd: RawFd,
    pub(crate) token: usize,
}

impl EpollInterest {
    fn modify(&self, events: libc::c_int) -> io::Result<()> {
        let mut event = libc::epoll_event {
            events: events as u32,
            // mio keeps the token in the event's data.
            u64: self.token as u64,
        };
        // SAFETY: `epoll` and `fd` are open (see the type's docs); the
        // kernel only reads `event`, which lives across the call.
        let rc = unsafe { libc::epoll_ctl(self.epoll, libc::EPOLL_CTL_MOD, self.fd, &mut event) };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }
}

impl LevelInterest for EpollInterest {
    fn edge(&self) -> io::Result<()> {
        // What mio registers for `READABLE | WRITABLE`.
        self.modify(libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET)
    }

    fn set(&self, arming: Arming) -> io::Result<()> {
        // Disarmed reading: no `EPOLLIN` at all (an unread socket is not
        // reported again), and edge-triggered, so that the conditions the
        // kernel reports whatever the interest (`EPOLLERR`, `EPOLLHUP`)
        // come once per change, not at every poll.
        let mut events = libc::EPOLLRDHUP;
        if arming.level {
            events |= libc::EPOLLIN;
        } else {
            events |= libc::EPOLLET;
        }
        if arming.write {
            events |= libc::EPOLLOUT;
        }
        self.modify(events)
    }
}
