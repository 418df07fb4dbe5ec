//! Per-registration state shared by the driver and a socket: the readiness
//! word and the waiters of each direction.
//!
//! # The readiness word
//!
//! ```text
//!  usize::BITS-1            7         6          5         4 .. 0
//! [ event_seq (wrapping)  ][ backlog ][ shutdown ][ ready bits ]
//! ```
//!
//! * The driver ORs each event's bits in and increments `event_seq`
//!   ([`ScheduledIo::set_readiness`]).
//! * An operation takes a [`ReadyEvent`] snapshot *before* its syscall; on
//!   `WouldBlock` it clears its direction's bits with
//!   [`ScheduledIo::clear_readiness`], which does nothing if `event_seq`
//!   moved: an event between the snapshot and the clear is never erased,
//!   so no edge is lost. Closed states are final.
//! * `backlog`: a level-triggered registration reported by two dispatch
//!   rounds in a row (a throttled tick's poll and its look) still holds a
//!   datagram after its task took one; its receives drain until
//!   `WouldBlock` (`net/recv_rule.rs`). Cleared with the read readiness.
//!
//! # Level-triggered registrations
//!
//! A datagram socket made on a throttled driver is level-triggered for
//! reading: the poller reports it at every poll while it holds a datagram.
//! Two rules, applied under the waiters' lock (so an interest change and a
//! waiter's store are ordered), keep it from reporting what nobody waits
//! for:
//!
//! * **Disarm on reports nobody waits for.** An event that finds no waker
//!   (and no waiter's entry) in a direction drops it from the interest:
//!   write at once, read at the second unread report in a row (so a task
//!   about to receive finds its socket armed). A disarmed read makes the
//!   entry edge-triggered, so errors come once. An unread socket is
//!   reported twice, not at every poll, and an idle runtime stays idle.
//! * **Arm on a store.** Storing a waker in a disarmed direction arms it
//!   (one `epoll_ctl`) *before* the caller re-checks readiness; the poller
//!   checks the socket as its interest changes, so nothing that came while
//!   disarmed is missed.
//!
//! A receiver's steady state runs neither rule (no `epoll_ctl` per
//! datagram); write interest is armed only while a send waits.
//!
//! # Waiters: any number per direction
//!
//! An event wakes *every* waiter of the directions it concerns, as
//! tokio's does. Each direction keeps, behind one small mutex, the
//! **`poll_*` slot** (the last `poll_*` caller's waker, tokio's semantics)
//! and the **async waiters**: each async future owns a [`Waiter`] entry,
//! made on its first `Pending`, updated on later polls, removed on drop.
//! The first entry is inline (a single waiter never allocates), further
//! ones live in a boxed [`Slab`] made at the first second waiter: no
//! `unsafe`, and each key is owned by exactly one `Waiter`.
//!
//! The driver *takes* the wakers (no clone) and leaves the entries in
//! place; it wakes them after releasing its locks. "Store waker, then
//! re-check readiness" happens under the mutex, so no wake-up is lost.

use std::fmt;
use std::io;
use std::task::{Context, Poll, Waker};

use slab::Slab;

use super::sync::{AtomicUsize, Mutex, Ordering::AcqRel, Ordering::Acquire};
use crate::ready::{Direction, Ready};

const SHUTDOWN: usize = 1 << 5;
const BACKLOG: usize = 1 << 6;
const EVENT_SEQ_SHIFT: u32 = 7;

/// What a level-triggered registration asks of the poller (see the
/// module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Arming {
    /// Read is armed: in the interest, level-triggered. `false`:
    /// disarmed, not in the interest, and the entry edge-triggered.
    pub level: bool,
    /// Write readiness is in the interest.
    pub write: bool,
}

/// Changes a level-triggered registration's interest in the poller (the
/// driver's: `epoll_ctl(EPOLL_CTL_MOD)`, `sys/epoll.rs`). Called with
/// the registration's waiters locked.
pub trait LevelInterest: Send + Sync + fmt::Debug {
    /// Makes the poller's interest `arming`.
    fn set(&self, arming: Arming) -> io::Result<()>;

    /// Makes the registration what it was before it was level-triggered:
    /// edge-triggered, read and write.
    fn edge(&self) -> io::Result<()>;
}

/// The readiness seen by an operation before its syscall.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadyEvent {
    /// The registration's event sequence number when the snapshot was taken.
    event_seq: usize,
    ready: Ready,
    /// The `backlog` flag (see the module docs).
    backlog: bool,
}

impl ReadyEvent {
    /// The registration's event sequence number at the snapshot.
    #[inline]
    pub fn event_seq(&self) -> usize {
        self.event_seq
    }

    /// Whether the snapshot allows an operation in `direction` to proceed.
    #[inline]
    pub fn is_ready(&self, direction: Direction) -> bool {
        !self.ready.intersection(direction.mask()).is_empty()
    }

    /// The readiness states of the snapshot.
    pub(crate) fn ready(&self) -> Ready {
        self.ready
    }

    /// Whether the registration holds a backlog: level-triggered, it was
    /// reported by two dispatch rounds in a row (see the module docs).
    #[inline]
    pub fn backlog(&self) -> bool {
        self.backlog
    }

    #[inline]
    fn from_word(word: usize) -> ReadyEvent {
        ReadyEvent {
            event_seq: word >> EVENT_SEQ_SHIFT,
            ready: Ready::from_bits(word),
            backlog: word & BACKLOG != 0,
        }
    }
}

/// The wakers waiting in one direction: the `poll_*` slot and the async
/// waiters (see the module docs). 40 bytes, `repr(C)` (see
/// [`ScheduledIo`]); whether the inline entry is taken is in [`Waiters`].
#[derive(Debug, Default)]
#[repr(C)]
struct WaiterList {
    /// The last `poll_*` caller's waker.
    poll: Option<Waker>,
    /// The first async waiter's waker, when its entry is taken (see
    /// [`Waiters::inline_taken`]) and it was not woken since.
    inline: Option<Waker>,
    /// Further async waiters; key `k` here is [`Waiter`] key `k + 1`
    /// (key 0 is the inline entry). Boxed (one pointer inline), made at
    /// the first second waiter and kept: most sockets never have one.
    more: Option<Box<Slab<Option<Waker>>>>,
}

/// Stores `waker` in `slot`, without cloning if it is already there.
fn store(slot: &mut Option<Waker>, waker: &Waker) {
    match slot {
        Some(stored) if stored.will_wake(waker) => {}
        _ => *slot = Some(waker.clone()),
    }
}

impl WaiterList {
    /// Stores the waker of an async waiter, making its entry if `key` is
    /// `None` (first `Pending`); `inline_taken` is the inline entry's
    /// occupancy.
    fn register(&mut self, inline_taken: &mut bool, key: &mut Option<usize>, waker: &Waker) {
        match *key {
            Some(0) => store(&mut self.inline, waker),
            Some(k) => store(&mut self.more_mut()[k - 1], waker),
            None if !*inline_taken => {
                *inline_taken = true;
                self.inline = Some(waker.clone());
                *key = Some(0);
            }
            None => *key = Some(self.more_mut().insert(Some(waker.clone())) + 1),
        }
    }

    /// The further waiters' slab, made on first use.
    fn more_mut(&mut self) -> &mut Slab<Option<Waker>> {
        self.more.get_or_insert_with(Box::default)
    }

    /// Removes an async waiter's entry.
    fn remove(&mut self, inline_taken: &mut bool, key: usize) {
        match key {
            0 => {
                *inline_taken = false;
                self.inline = None;
            }
            k => {
                self.more_mut().try_remove(k - 1);
            }
        }
    }

    /// Moves every waker (the `poll_*` slot's and every async waiter's)
    /// into `out`, leaving the entries registered.
    // Always inlined: one call per event, in the dispatch.
    #[inline(always)]
    fn take_into(&mut self, out: &mut Vec<Waker>) {
        // Plain pushes: `extend` with an `Option` reserves first.
        if let Some(waker) = self.poll.take() {
            out.push(waker);
        }
        if let Some(waker) = self.inline.take() {
            out.push(waker);
        }
        if let Some(more) = &mut self.more {
            out.extend(more.iter_mut().filter_map(|(_, slot)| slot.take()));
        }
    }
}

/// The two directions' lists, readers first, after a head of flags
/// (`repr(C)`: right after the readiness word in [`ScheduledIo`], see its
/// layout).
#[derive(Debug, Default)]
#[repr(C)]
struct Waiters {
    /// Per direction (read, write): a waker was stored in the list since
    /// the driver last took them all (`false`: an event need not look).
    may_wake: [bool; 2],
    /// Per direction: the inline async entry belongs to a [`Waiter`].
    inline_taken: [bool; 2],
    /// The poller's interest, when `level` is set.
    arming: Arming,
    /// A level-triggered registration: the (wrapping) dispatch round that
    /// last reported it (see [`ScheduledIo::dispatch`]).
    round: u16,
    reader: WaiterList,
    /// A level-triggered registration's way to change its interest
    /// (`None`: edge-triggered). Every event and every store reads
    /// whether it is there, so it follows the reader list, not the
    /// writer list (see [`ScheduledIo`]'s layout).
    level: Option<Box<dyn LevelInterest>>,
    writer: WaiterList,
}

impl Waiters {
    fn index(direction: Direction) -> usize {
        match direction {
            Direction::Read => 0,
            Direction::Write => 1,
        }
    }

    fn list(&mut self, direction: Direction) -> &mut WaiterList {
        match direction {
            Direction::Read => &mut self.reader,
            Direction::Write => &mut self.writer,
        }
    }

    /// Stores the `poll_*` caller's waker in `direction`'s slot.
    fn store_poll(&mut self, direction: Direction, waker: &Waker) -> io::Result<()> {
        self.may_wake[Self::index(direction)] = true;
        store(&mut self.list(direction).poll, waker);
        self.arm(direction)
    }

    /// Stores an async waiter's waker (see [`WaiterList::register`]).
    fn register(
        &mut self,
        direction: Direction,
        key: &mut Option<usize>,
        waker: &Waker,
    ) -> io::Result<()> {
        let index = Self::index(direction);
        self.may_wake[index] = true;
        let mut inline_taken = self.inline_taken[index];
        self.list(direction).register(&mut inline_taken, key, waker);
        self.inline_taken[index] = inline_taken;
        self.arm(direction)
    }

    /// A level-triggered registration: arms `direction` if it is not
    /// (a waker was just stored there; see the module docs).
    #[inline]
    fn arm(&mut self, direction: Direction) -> io::Result<()> {
        let mut next = self.arming;
        match direction {
            Direction::Read => next.level = true,
            Direction::Write => next.write = true,
        }
        // Armed already (a level-triggered receiver's steady state): the
        // interest is not even looked at. (An edge-triggered
        // registration's arming never changes, and it has no interest.)
        if next == self.arming {
            return Ok(());
        }
        let Some(level) = &self.level else {
            return Ok(());
        };
        level.set(next)?;
        self.arming = next;
        Ok(())
    }

    /// Whether an async waiter of `direction` has an entry: it waits, or
    /// was woken and has not been polled yet.
    fn has_entries(&self, direction: Direction) -> bool {
        let list = match direction {
            Direction::Read => &self.reader,
            Direction::Write => &self.writer,
        };
        self.inline_taken[Self::index(direction)]
            || list.more.as_ref().is_some_and(|more| !more.is_empty())
    }

    /// A level-triggered registration: disarms the directions in
    /// `unwaited` (an event found no waker there) that no waiter has an
    /// entry in (see the module docs: a waiter woken by an earlier event
    /// and not polled yet keeps its direction armed, so a socket reported
    /// again before its task runs is not disarmed and re-armed); read
    /// only if `read_unconsumed`: the read readiness of an earlier report
    /// was still set, nobody having received since (the second report in
    /// a row that nobody read). A failed change keeps the old interest,
    /// which only costs more reports.
    fn disarm(&mut self, unwaited: [bool; 2], read_unconsumed: bool) {
        let Some(level) = &self.level else {
            return;
        };
        let idle =
            |direction: Direction| unwaited[Self::index(direction)] && !self.has_entries(direction);
        let next = Arming {
            level: self.arming.level && !(read_unconsumed && idle(Direction::Read)),
            write: self.arming.write && !idle(Direction::Write),
        };
        if next != self.arming && level.set(next).is_ok() {
            self.arming = next;
        }
    }

    /// Removes an async waiter's entry.
    fn remove(&mut self, direction: Direction, key: usize) {
        let index = Self::index(direction);
        let mut inline_taken = self.inline_taken[index];
        self.list(direction).remove(&mut inline_taken, key);
        self.inline_taken[index] = inline_taken;
    }

    /// Moves the wakers of `direction` into `out`, if it may have any;
    /// returns whether it had none to take.
    #[inline]
    fn take_into(&mut self, direction: Direction, out: &mut Vec<Waker>) -> bool {
        if std::mem::take(&mut self.may_wake[Self::index(direction)]) {
            let before = out.len();
            self.list(direction).take_into(out);
            out.len() == before
        } else {
            true
        }
    }
}

/// An async operation's entry in a registration's waiter list for one
/// direction: made on its first `Pending`, removed on drop, so a future
/// dropped while waiting leaves nothing behind and is never woken again.
#[derive(Debug)]
pub struct Waiter<'a> {
    io: &'a ScheduledIo,
    direction: Direction,
    /// The entry's key once registered (see [`WaiterList`]).
    key: Option<usize>,
}

impl<'a> Waiter<'a> {
    /// A waiter of `io` in `direction`, not yet registered.
    #[inline]
    pub fn new(io: &'a ScheduledIo, direction: Direction) -> Waiter<'a> {
        Waiter {
            io,
            direction,
            key: None,
        }
    }

    /// The direction this waiter waits in.
    pub fn direction(&self) -> Direction {
        self.direction
    }

    /// [`ScheduledIo::poll_ready`] through this waiter's own entry: every
    /// waiter is woken by an event, whatever the others do.
    #[inline]
    pub fn poll_ready(&mut self, cx: &mut Context<'_>) -> Poll<io::Result<ReadyEvent>> {
        self.io
            .poll_ready_as(cx, self.direction, WakerSlot::Waiter(&mut self.key))
    }
}

impl Drop for Waiter<'_> {
    /// Inlined: nearly every operation completes without waiting, and
    /// then there is no entry to remove.
    #[inline]
    fn drop(&mut self) {
        if let Some(key) = self.key.take() {
            self.remove(key);
        }
    }
}

impl Waiter<'_> {
    /// Removes this waiter's entry (it waited).
    #[inline(never)]
    fn remove(&self, key: usize) {
        self.io.waiters.lock().remove(self.direction, key);
    }
}

/// Where a waiting operation leaves its waker.
enum WakerSlot<'a> {
    /// The direction's `poll_*` slot (last caller wins).
    Poll,
    /// An async waiter's own entry (its key).
    Waiter(&'a mut Option<usize>),
}

/// Readiness and wakers of one registered source.
///
/// `repr(C)`: at one datagram per socket per tick this state is cold at
/// every event, so the first 80 bytes hold everything an event and a
/// receive touch (the readiness word, the waiters' lock, the flags, the
/// reader list and the level-triggered interest); the writer list
/// follows and is read only when a waker was stored there since the last
/// take. Not `align(64)`: registrations made one after the other stay
/// contiguous.
#[derive(Debug)]
#[repr(C)]
pub struct ScheduledIo {
    readiness: AtomicUsize,
    waiters: Mutex<Waiters>,
}

impl Default for ScheduledIo {
    fn default() -> Self {
        ScheduledIo::new()
    }
}

impl ScheduledIo {
    /// A registration with no readiness and no waiters.
    pub fn new() -> ScheduledIo {
        ScheduledIo {
            readiness: AtomicUsize::new(0),
            waiters: Mutex::new(Waiters::default()),
        }
    }

    /// Driver side: records an event's readiness and increments
    /// `event_seq`.
    pub fn set_readiness(&self, ready: Ready) {
        self.set_readiness_from(ready, false);
    }

    /// [`set_readiness`](Self::set_readiness), flagging a backlog when
    /// `backlog` (see the module docs).
    pub fn set_readiness_from(&self, ready: Ready, backlog: bool) {
        let backlog = if backlog && ready.is_readable() {
            BACKLOG
        } else {
            0
        };
        let mut current = self.readiness.load(Acquire);
        loop {
            let event_seq = (current >> EVENT_SEQ_SHIFT).wrapping_add(1);
            let next = (event_seq << EVENT_SEQ_SHIFT)
                | (current & (SHUTDOWN | BACKLOG))
                | backlog
                | (current & Ready::ALL.bits())
                | ready.bits();
            match self
                .readiness
                .compare_exchange_weak(current, next, AcqRel, Acquire)
            {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Marks the registration as gone (socket dropped or driver shut down):
    /// every later [`poll_ready`](Self::poll_ready) fails.
    pub(crate) fn shutdown(&self) {
        self.readiness.fetch_or(SHUTDOWN, AcqRel);
    }

    #[inline]
    fn is_shutdown(word: usize) -> bool {
        word & SHUTDOWN != 0
    }

    /// The current readiness and event sequence number.
    #[inline]
    pub fn snapshot(&self) -> ReadyEvent {
        ReadyEvent::from_word(self.readiness.load(Acquire))
    }

    /// Makes the registration level-triggered for reading (see the module
    /// docs): `interest` changes the poller's interest, and is asked for
    /// read readiness at once; the registration starts writable (write
    /// interest is armed only while a send waits).
    pub fn make_level_triggered(&self, interest: Box<dyn LevelInterest>) -> io::Result<()> {
        let mut waiters = self.waiters.lock();
        let arming = Arming {
            level: true,
            write: false,
        };
        interest.set(arming)?;
        waiters.arming = arming;
        waiters.level = Some(interest);
        // "Never reported": a stamp no early round follows (a first
        // report at round 32,768 + k * 65,536 would take it for the round
        // before and drain, at the cost of one empty receive).
        waiters.round = u16::MAX / 2;
        drop(waiters);
        self.set_readiness(Ready::WRITABLE);
        Ok(())
    }

    /// Makes a level-triggered registration edge-triggered again, read
    /// and write, for good (nothing if it is not level-triggered). The
    /// poller checks the socket as its interest changes: what is ready
    /// now is reported at its next poll, so nothing is stranded.
    pub fn make_edge_triggered(&self) -> io::Result<()> {
        let mut waiters = self.waiters.lock();
        if let Some(level) = &waiters.level {
            level.edge()?;
            waiters.level = None;
        }
        Ok(())
    }

    /// Forgets the level-triggered interest (before the source leaves
    /// the poller, so that no interest change can reach its fd, or a
    /// later socket that reuses the fd's number).
    pub(crate) fn end_level(&self) {
        self.waiters.lock().level = None;
    }

    /// Operation side, after `WouldBlock`: clears the clearable bits of
    /// `direction`, unless an event arrived since `seen` was taken.
    #[inline]
    pub fn clear_readiness(&self, seen: ReadyEvent, direction: Direction) {
        let clear = direction
            .mask()
            .intersection(Ready::CLEARABLE.union(Ready::ERROR))
            .bits()
            | match direction {
                Direction::Read => BACKLOG,
                Direction::Write => 0,
            };
        let mut current = self.readiness.load(Acquire);
        loop {
            if current >> EVENT_SEQ_SHIFT != seen.event_seq {
                return; // a newer event: keep it
            }
            let next = current & !clear;
            if next == current {
                return;
            }
            match self
                .readiness
                .compare_exchange_weak(current, next, AcqRel, Acquire)
            {
                Ok(_) => return,
                Err(actual) => current = actual,
            }
        }
    }

    /// Returns the readiness if `direction` may proceed; otherwise stores
    /// the waker in the direction's `poll_*` slot (replacing the previous
    /// caller's) and returns `Pending`. Fails once the registration is shut
    /// down. Async operations use [`Waiter::poll_ready`] instead.
    pub fn poll_ready(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
    ) -> Poll<io::Result<ReadyEvent>> {
        self.poll_ready_as(cx, direction, WakerSlot::Poll)
    }

    fn poll_ready_as(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        slot: WakerSlot<'_>,
    ) -> Poll<io::Result<ReadyEvent>> {
        if let Some(ready) = self.check(direction) {
            return Poll::Ready(ready);
        }
        if let Err(e) = self.register(cx, direction, slot) {
            return Poll::Ready(Err(e));
        }
        // Re-check: an event dispatched between the first check and the
        // store found no waker to take.
        match self.check(direction) {
            Some(ready) => Poll::Ready(ready),
            None => Poll::Pending,
        }
    }

    #[inline]
    fn check(&self, direction: Direction) -> Option<io::Result<ReadyEvent>> {
        let word = self.readiness.load(Acquire);
        if Self::is_shutdown(word) {
            return Some(Err(shutdown_error()));
        }
        let event = ReadyEvent::from_word(word);
        event.is_ready(direction).then_some(Ok(event))
    }

    /// Stores the task's waker for `direction` in `slot` (no clone if it is
    /// the same), arming the direction of a level-triggered registration;
    /// fails if the poller refused that.
    fn register(
        &self,
        cx: &mut Context<'_>,
        direction: Direction,
        slot: WakerSlot<'_>,
    ) -> io::Result<()> {
        let mut waiters = self.waiters.lock();
        match slot {
            WakerSlot::Poll => waiters.store_poll(direction, cx.waker()),
            WakerSlot::Waiter(key) => waiters.register(direction, key, cx.waker()),
        }
    }

    /// Driver side: one event of dispatch round `round`. Records its
    /// readiness and moves the wakers it concerns into `out`
    /// ([`set_readiness_from`](Self::set_readiness_from), then what
    /// `take_wakers` does), under the waiters' lock.
    ///
    /// A level-triggered registration that the round before reported too
    /// holds a backlog: its task took the datagram of that report (a
    /// throttled tick runs its tasks between its poll and its look, the
    /// rounds it makes back to back) and one is left, so the readiness
    /// gets the `backlog` flag. A registration first reported by a look
    /// (a datagram that came while the tick ran) does not.
    ///
    /// Returns `false`, doing nothing, for a level-triggered registration
    /// that this round reported already: a round that polls several times
    /// (a full events buffer) gets it again from the poller, which puts a
    /// level-triggered entry it reported back on its ready list, and its
    /// task has not run in between. A round number met again after 65,536
    /// rounds only delays a level-triggered report to the next poll, which
    /// repeats it, or flags a backlog that is none (one empty receive).
    #[inline]
    pub fn dispatch(&self, ready: Ready, round: u64, out: &mut Vec<Waker>) -> bool {
        let mut waiters = self.waiters.lock();
        let mut backlog = false;
        if waiters.level.is_some() {
            let round = round as u16;
            if waiters.round == round {
                return false;
            }
            backlog = waiters.round == round.wrapping_sub(1);
            waiters.round = round;
        }
        // Readable, closed or an error: an error nobody reads is
        // reported by the poller whatever the interest, so it must
        // disarm (edge-triggered) too.
        let before = Ready::from_bits(self.readiness.load(Acquire));
        let read_unconsumed = !before.intersection(Direction::Read.mask()).is_empty();
        self.set_readiness_from(ready, backlog);
        Self::take_locked(&mut waiters, ready, out, read_unconsumed);
        true
    }

    /// Driver side: moves every waker of the directions `ready` concerns
    /// (the `poll_*` slot and all async waiters) into `out`; a
    /// level-triggered registration disarms the directions that had none
    /// (see the module docs).
    #[cfg(any(loom, test))]
    pub fn take_wakers(&self, ready: Ready, out: &mut Vec<Waker>) {
        Self::take_locked(&mut self.waiters.lock(), ready, out, true);
    }

    #[inline]
    fn take_locked(
        waiters: &mut Waiters,
        ready: Ready,
        out: &mut Vec<Waker>,
        read_unconsumed: bool,
    ) {
        let mut unwaited = [false; 2];
        for direction in [Direction::Read, Direction::Write] {
            if !ready.intersection(direction.mask()).is_empty() {
                unwaited[Waiters::index(direction)] = waiters.take_into(direction, out);
            }
        }
        if waiters.level.is_some() {
            waiters.disarm(unwaited, read_unconsumed);
        }
    }

    /// Moves every waker of both directions into `out` (for shutdown).
    pub(crate) fn take_all_wakers(&self, out: &mut Vec<Waker>) {
        let mut waiters = self.waiters.lock();
        waiters.may_wake = [false; 2];
        waiters.reader.take_into(out);
        waiters.writer.take_into(out);
    }
}

pub(crate) fn shutdown_error() -> io::Error {
    io::Error::other("the Tempo I/O driver this socket was registered with has shut down (or the socket was deregistered)",
    )
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize as StdAtomicUsize, Ordering::SeqCst};
    use std::sync::Arc;
    use std::task::Wake;

    struct CountWaker(StdAtomicUsize);
    impl Wake for CountWaker {
        fn wake(self: Arc<Self>) {
            self.0.fetch_add(1, SeqCst);
        }
    }

    #[test]
    fn event_during_would_block_is_not_cleared() {
        let io = ScheduledIo::new();
        io.set_readiness(Ready::READABLE);
        let seen = io.snapshot();
        assert!(seen.is_ready(Direction::Read));
        // The syscall returned WouldBlock, but an event landed meanwhile.
        io.set_readiness(Ready::READABLE);
        io.clear_readiness(seen, Direction::Read);
        assert!(io.snapshot().is_ready(Direction::Read));
        // Without a new event the clear applies.
        let seen = io.snapshot();
        io.clear_readiness(seen, Direction::Read);
        assert!(!io.snapshot().is_ready(Direction::Read));
    }

    #[test]
    fn clear_keeps_other_direction_and_closed_bits() {
        let io = ScheduledIo::new();
        io.set_readiness(
            Ready::READABLE
                .union(Ready::WRITABLE)
                .union(Ready::WRITE_CLOSED),
        );
        io.clear_readiness(io.snapshot(), Direction::Read);
        io.clear_readiness(io.snapshot(), Direction::Write);
        assert!(!io.snapshot().ready.contains(Ready::READABLE));
        assert!(!io.snapshot().ready.contains(Ready::WRITABLE));
        assert!(io.snapshot().is_ready(Direction::Write)); // write-closed stays
    }

    #[test]
    fn pending_then_event_wakes_reader_only() {
        let io = ScheduledIo::new();
        let count = Arc::new(CountWaker(StdAtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        let mut cx = Context::from_waker(&waker);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_pending());
        assert!(io.poll_ready(&mut cx, Direction::Write).is_pending());
        io.set_readiness(Ready::READABLE);
        let mut out = Vec::new();
        io.take_wakers(Ready::READABLE, &mut out);
        assert_eq!(out.len(), 1);
        out.drain(..).for_each(Waker::wake);
        assert_eq!(count.0.load(SeqCst), 1);
        assert!(io.poll_ready(&mut cx, Direction::Read).is_ready());
        // The writer waker is still stored.
        let mut rest = Vec::new();
        io.take_wakers(Ready::READABLE, &mut rest);
        assert!(rest.is_empty());
        io.take_all_wakers(&mut rest);
        assert_eq!(rest.len(), 1);
    }

    fn counter() -> (Arc<CountWaker>, Waker) {
        let count = Arc::new(CountWaker(StdAtomicUsize::new(0)));
        let waker = Waker::from(count.clone());
        (count, waker)
    }

    fn wake_ready(io: &ScheduledIo, ready: Ready) -> usize {
        io.set_readiness(ready);
        let mut out = Vec::new();
        io.take_wakers(ready, &mut out);
        let woken = out.len();
        out.into_iter().for_each(Waker::wake);
        woken
    }

    #[test]
    fn every_async_waiter_is_woken_by_one_event() {
        let io = ScheduledIo::new();
        let counters: Vec<_> = (0..5).map(|_| counter()).collect();
        let mut waiters: Vec<_> = (0..5).map(|_| Waiter::new(&io, Direction::Read)).collect();
        for (waiter, (_, waker)) in waiters.iter_mut().zip(&counters) {
            let poll = waiter.poll_ready(&mut Context::from_waker(waker));
            assert!(poll.is_pending());
        }
        assert_eq!(wake_ready(&io, Ready::READABLE), 5);
        for (count, _) in &counters {
            assert_eq!(count.0.load(SeqCst), 1);
        }
        // Woken, not yet re-polled: readiness is there for each of them.
        for (waiter, (_, waker)) in waiters.iter_mut().zip(&counters) {
            assert!(waiter
                .poll_ready(&mut Context::from_waker(waker))
                .is_ready());
        }
    }

    #[test]
    fn poll_slot_keeps_the_last_caller_and_async_waiters_are_apart() {
        let io = ScheduledIo::new();
        let (first, first_waker) = counter();
        let (last, last_waker) = counter();
        let (waiting, waiting_waker) = counter();
        let mut waiter = Waiter::new(&io, Direction::Read);
        assert!(waiter
            .poll_ready(&mut Context::from_waker(&waiting_waker))
            .is_pending());
        for waker in [&first_waker, &last_waker] {
            assert!(io
                .poll_ready(&mut Context::from_waker(waker), Direction::Read)
                .is_pending());
        }
        assert_eq!(wake_ready(&io, Ready::READABLE), 2);
        assert_eq!(first.0.load(SeqCst), 0, "poll_* slot: last caller wins");
        assert_eq!(last.0.load(SeqCst), 1);
        assert_eq!(waiting.0.load(SeqCst), 1);
    }

    #[test]
    fn dropped_waiter_leaves_no_entry_and_is_not_woken() {
        let io = ScheduledIo::new();
        let (kept, kept_waker) = counter();
        let (gone, gone_waker) = counter();
        let mut first = Waiter::new(&io, Direction::Read);
        let mut second = Waiter::new(&io, Direction::Read);
        assert!(first
            .poll_ready(&mut Context::from_waker(&gone_waker))
            .is_pending());
        assert!(second
            .poll_ready(&mut Context::from_waker(&kept_waker))
            .is_pending());
        drop(first);
        assert_eq!(wake_ready(&io, Ready::READABLE), 1);
        assert_eq!(gone.0.load(SeqCst), 0);
        assert_eq!(kept.0.load(SeqCst), 1);
        drop(second);
        let waiters = io.waiters.lock();
        assert!(!waiters.inline_taken[0] && waiters.reader.inline.is_none());
        assert!(waiters
            .reader
            .more
            .as_ref()
            .is_some_and(|more| more.is_empty()));
    }

    #[test]
    fn woken_waiter_that_finds_nothing_registers_again() {
        let io = ScheduledIo::new();
        let (count, waker) = counter();
        let mut cx = Context::from_waker(&waker);
        let mut waiter = Waiter::new(&io, Direction::Read);
        assert!(waiter.poll_ready(&mut cx).is_pending());
        assert_eq!(wake_ready(&io, Ready::READABLE), 1);
        // Another waiter took the datagram: WouldBlock clears readiness.
        io.clear_readiness(io.snapshot(), Direction::Read);
        assert!(waiter.poll_ready(&mut cx).is_pending());
        assert_eq!(wake_ready(&io, Ready::READABLE), 1);
        assert_eq!(count.0.load(SeqCst), 2);
    }

    #[test]
    fn a_write_event_does_not_wake_readers() {
        let io = ScheduledIo::new();
        let (reader, reader_waker) = counter();
        let mut waiter = Waiter::new(&io, Direction::Read);
        assert!(waiter
            .poll_ready(&mut Context::from_waker(&reader_waker))
            .is_pending());
        assert_eq!(wake_ready(&io, Ready::WRITABLE), 0);
        assert_eq!(reader.0.load(SeqCst), 0);
    }

    #[test]
    fn what_a_receive_touches_is_in_the_first_64_bytes() {
        let io = ScheduledIo::new();
        let base = std::ptr::addr_of!(io) as usize;
        let waiters = io.waiters.lock();
        let offset = |field: *const u8| field as usize - base;
        assert!(offset(std::ptr::addr_of!(waiters.may_wake).cast()) < 64);
        let reader_end =
            offset(std::ptr::addr_of!(waiters.reader).cast()) + std::mem::size_of::<WaiterList>();
        assert!(reader_end <= 64, "the reader list ends at {reader_end}");
        // 104, and the level-triggered interest (cold, last): 16.
        assert!(std::mem::size_of::<ScheduledIo>() <= 120);
    }

    #[test]
    fn an_event_skips_a_list_that_holds_no_waker_and_wakes_one_that_does() {
        let io = ScheduledIo::new();
        let (reader, reader_waker) = counter();
        let (writer, writer_waker) = counter();
        let mut read = Waiter::new(&io, Direction::Read);
        assert!(read
            .poll_ready(&mut Context::from_waker(&reader_waker))
            .is_pending());
        let both = Ready::READABLE.union(Ready::WRITABLE);
        assert_eq!(wake_ready(&io, both), 1);
        assert!(!io.waiters.lock().may_wake[1], "no writer ever waited");
        // A writer registers after that event: the next event wakes it.
        io.clear_readiness(io.snapshot(), Direction::Write);
        let mut write = Waiter::new(&io, Direction::Write);
        assert!(write
            .poll_ready(&mut Context::from_waker(&writer_waker))
            .is_pending());
        assert_eq!(wake_ready(&io, both), 1, "the reader's waker was taken");
        assert_eq!((reader.0.load(SeqCst), writer.0.load(SeqCst)), (1, 1));
        // A second async waiter of one direction gets the further slab.
        let (more, more_waker) = counter();
        let mut second = Waiter::new(&io, Direction::Write);
        io.clear_readiness(io.snapshot(), Direction::Write);
        assert!(write
            .poll_ready(&mut Context::from_waker(&writer_waker))
            .is_pending());
        assert!(second
            .poll_ready(&mut Context::from_waker(&more_waker))
            .is_pending());
        assert_eq!(wake_ready(&io, Ready::WRITABLE), 2);
        assert_eq!((writer.0.load(SeqCst), more.0.load(SeqCst)), (2, 1));
    }

    #[test]
    fn shutdown_fails_poll_ready() {
        let io = ScheduledIo::new();
        io.shutdown();
        let waker = Waker::from(Arc::new(CountWaker(StdAtomicUsize::new(0))));
        let mut cx = Context::from_waker(&waker);
        match io.poll_ready(&mut cx, Direction::Read) {
            Poll::Ready(Err(e)) => assert!(e.to_string().contains("shut down")),
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn event_seq_wraps_without_panicking() {
        let io = ScheduledIo::new();
        io.readiness
            .store(usize::MAX & !SHUTDOWN & !Ready::ALL.bits(), SeqCst);
        io.set_readiness(Ready::READABLE);
        assert_eq!(io.snapshot().event_seq, 0);
        assert!(io.snapshot().is_ready(Direction::Read));
    }
}
