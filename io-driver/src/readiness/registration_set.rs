//! The slab of registrations and its generation-tagged tokens.
//!
//! A mio token is `generation << INDEX_BITS | slot index`. Slots are reused
//! after a socket is dropped; an event still queued in the kernel (or in the
//! current `Events` buffer) for the old socket carries the old generation and
//! is dropped by [`RegistrationSet::get`] instead of waking the new socket.

use std::io;
use std::sync::Arc;

use mio::Token;
use slab::Slab;

use super::scheduled_io::ScheduledIo;

const INDEX_BITS: u32 = 24;
const INDEX_MASK: usize = (1 << INDEX_BITS) - 1;
/// Generations wrap below this value, so no token is ever `WAKER_TOKEN`.
const GENERATION_LIMIT: usize = (usize::MAX >> INDEX_BITS) - 1;

/// The token of the driver's `mio::Waker`; never a registration's.
pub(crate) const WAKER_TOKEN: Token = Token(usize::MAX);

#[derive(Debug)]
struct Slot {
    generation: usize,
    io: Arc<ScheduledIo>,
}

/// Every live registration of one driver.
#[derive(Debug, Default)]
pub(crate) struct RegistrationSet {
    slab: Slab<Slot>,
    next_generation: usize,
}

impl RegistrationSet {
    /// Allocates a slot; fails past 2^24 live registrations.
    pub(crate) fn insert(&mut self) -> io::Result<(Token, Arc<ScheduledIo>)> {
        let entry = self.slab.vacant_entry();
        let index = entry.key();
        if index > INDEX_MASK {
            return Err(io::Error::other(
                "too many sockets registered with one Tempo I/O driver (limit 16,777,215)",
            ));
        }
        let generation = self.next_generation;
        self.next_generation = if generation + 1 >= GENERATION_LIMIT {
            0
        } else {
            generation + 1
        };
        let io = Arc::new(ScheduledIo::new());
        entry.insert(Slot {
            generation,
            io: io.clone(),
        });
        Ok((Token(generation << INDEX_BITS | index), io))
    }

    /// The registration a token names, or `None` if the token is stale.
    pub(crate) fn get(&self, token: Token) -> Option<&Arc<ScheduledIo>> {
        let slot = self.slab.get(token.0 & INDEX_MASK)?;
        (slot.generation == token.0 >> INDEX_BITS).then_some(&slot.io)
    }

    /// Removes the registration a token names (no-op for a stale token).
    pub(crate) fn remove(&mut self, token: Token) -> Option<Arc<ScheduledIo>> {
        self.get(token)?;
        Some(self.slab.remove(token.0 & INDEX_MASK).io)
    }

    /// Number of live registrations.
    pub(crate) fn len(&self) -> usize {
        self.slab.len()
    }

    /// Every live registration (for shutdown).
    pub(crate) fn iter(&self) -> impl Iterator<Item = &Arc<ScheduledIo>> {
        self.slab.iter().map(|(_, slot)| &slot.io)
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn stale_token_of_reused_slot_is_dropped() {
        let mut regs = RegistrationSet::default();
        let (old, old_io) = regs.insert().unwrap();
        assert!(Arc::ptr_eq(regs.get(old).unwrap(), &old_io));
        regs.remove(old).unwrap();
        let (new, new_io) = regs.insert().unwrap();
        // Same slot, different generation.
        assert_eq!(old.0 & INDEX_MASK, new.0 & INDEX_MASK);
        assert_ne!(old, new);
        assert!(
            regs.get(old).is_none(),
            "stale event must not reach the new socket"
        );
        assert!(regs.remove(old).is_none());
        assert!(Arc::ptr_eq(regs.get(new).unwrap(), &new_io));
        assert_eq!(regs.len(), 1);
    }

    #[test]
    fn tokens_never_collide_with_the_waker() {
        let mut regs = RegistrationSet {
            next_generation: GENERATION_LIMIT - 1,
            ..RegistrationSet::default()
        };
        let (a, _) = regs.insert().unwrap();
        let (b, _) = regs.insert().unwrap();
        assert_ne!(a, WAKER_TOKEN);
        assert_eq!(b.0 >> INDEX_BITS, 0, "generation wraps to 0");
        assert_ne!(b, WAKER_TOKEN);
    }
}
