//! The park / unpark contract of Tempo, and [`ParkThread`], a driver that
//! has no events of its own.
//!
//! # Why a trait
//!
//! A scheduler alternates between running tasks and *parking*: blocking the
//! thread until there is something to do. What "something to do" means is the
//! business of a **driver**: the I/O reactor waits on `epoll`, the timer
//! driver waits for the next deadline, a media framework may wait on its own
//! clock or poll loop. Tempo's drivers stack (`time::Driver<io::Driver>`),
//! and each layer only knows the layer under it through [`Park`]. A framework
//! that implements [`Park`] can put its own driver under Tempo's schedulers.
//!
//! # The contract
//!
//! An implementation of [`Park`] must uphold all of the following; the
//! schedulers rely on every one of them.
//!
//! 1. **Work, then return.** [`Park::park`] and [`Park::park_timeout`] block
//!    the calling thread until an event, an unpark or the timeout, *do the
//!    driver's work* (dispatch I/O readiness to wakers, fire due timers), and
//!    return. They return early on a spurious wake-up too; callers loop.
//! 2. **`park_timeout(Duration::ZERO)` never blocks.** It polls for events
//!    without waiting, dispatches them, and returns. The throttling
//!    scheduler calls it once per tick, so it should dispatch every event
//!    pending when it starts (Tempo's I/O driver polls again while its
//!    events buffer comes back full), or a ready source waits a tick.
//! 3. **No lost wake-up.** An [`Unpark::unpark`] that happens *before* a
//!    `park*` call makes that call return at once (it consumes the
//!    notification). Several unparks before one park collapse into one.
//!    An unpark *during* a park makes it return promptly.
//! 4. **Unpark from anywhere.** [`Park::unpark`] returns a handle that is
//!    `Send + Sync + 'static`; calling it from any thread, any number of
//!    times, even after the driver is dropped, is safe (it then does
//!    nothing useful, but never panics or blocks for long).
//! 5. **Cheap when not parked.** `unpark` on a driver that is not parked
//!    should cost no syscall where the mechanism allows it (schedulers
//!    already avoid calling it while they run, see their docs).
//! 6. **Cooperative budget.** A resource operation that is ready consumes
//!    one unit of the current task's budget; when none is left it wakes the
//!    task (or, under [`coop::budget_deferring`] with a list lent by
//!    [`coop::lend_deferred`], leaves the wake to the scheduler's deferred
//!    list, run after its next driver poll) and returns
//!    `Pending`, without doing the work (no syscall). See
//!    [`coop`]: it is what keeps one always-ready resource from starving
//!    every other task on the thread.
//! 7. **Counters.** [`Park::stats`] returns cumulative counters of what the
//!    driver did; a wrapping driver adds its own to its inner driver's.
//!    Schedulers difference two readings to report what one turn did, and
//!    the throttling scheduler also decides *idleness* from them: a tick
//!    that polled no task and whose difference is zero "found nothing", and
//!    the scheduler then blocks in the driver until an event instead of
//!    ticking. So a driver must count **every piece of work that may have
//!    woken a task**, and nothing else:
//!    * [`DriverStats::io_events`]: one per readiness event dispatched to a
//!      live registration (any other driver work that wakes tasks would
//!      count here too; Tempo's I/O driver has none since its datagram
//!      receive-ahead replaced the deferred retry). Not counted: the driver's
//!      own unpark notifications (an unpark is not work; schedulers count
//!      unparks themselves) and stale events of closed sockets.
//!    * [`DriverStats::timers_fired`]: one per timer whose waker was woken.
//!
//!    Drivers without such events keep the default (all zero).
//!
//! # Writing your own driver
//!
//! ```
//! use std::time::Duration;
//! use tempo_park::{DriverStats, Park, ParkThread, Unpark};
//!
//! /// A driver that counts how many times it was parked, built on ParkThread.
//! struct CountingPark {
//!     inner: ParkThread,
//!     parks: u64,
//! }
//!
//! impl Park for CountingPark {
//!     type Unpark = <ParkThread as Park>::Unpark;
//!     type Error = std::convert::Infallible;
//!
//!     fn unpark(&self) -> Self::Unpark {
//!         self.inner.unpark()
//!     }
//!     fn park(&mut self) -> Result<(), Self::Error> {
//!         self.parks += 1;
//!         self.inner.park()
//!     }
//!     fn park_timeout(&mut self, d: Duration) -> Result<(), Self::Error> {
//!         self.parks += 1;
//!         self.inner.park_timeout(d)
//!     }
//!     fn stats(&self) -> DriverStats {
//!         self.inner.stats()
//!     }
//! }
//!
//! let mut p = CountingPark { inner: ParkThread::new(), parks: 0 };
//! p.unpark().unpark();            // an unpark before the park ...
//! p.park().unwrap();              // ... makes it return at once
//! p.park_timeout(Duration::ZERO).unwrap(); // never blocks
//! assert_eq!(p.parks, 2);
//! ```
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

pub mod coop;
mod io_driver;
#[doc(hidden)]
pub mod scoped;
mod stats;
#[doc(hidden)]
pub mod sync;
mod thread;
mod traits;

pub use io_driver::IoDriver;
pub use stats::DriverStats;
pub use thread::{ParkThread, UnparkThread};
pub use traits::{Park, Unpark};
