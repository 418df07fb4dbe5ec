//! Buffers and the pool they return to.
//!
//! A media pipeline does not allocate per buffer: a source takes a buffer
//! from its pool, fills it, pushes it; the sink hands it back once done.
//! The pool is per stream (its source and sink run on the same context, so
//! its lock is never contended) and is filled once, before the stream
//! starts, with more buffers than can be in flight (the channel's capacity,
//! one in the source, one in the sink): in steady state nothing is
//! allocated, which is what the pipeline's allocation count checks.

use std::sync::{Arc, Mutex};

/// A buffer: a sequence number (timer source) and payload bytes (UDP
/// source). Its storage is allocated once and reused.
#[derive(Debug)]
pub struct Buffer {
    /// Sequence number set by the source.
    pub seq: u64,
    /// Bytes used in `data`.
    pub len: usize,
    /// Storage, allocated once by the pool.
    pub data: Box<[u8]>,
}

impl Buffer {
    /// The used bytes.
    pub fn bytes(&self) -> &[u8] {
        &self.data[..self.len]
    }
}

/// A per-stream pool of reusable [`Buffer`]s. Cloning shares the pool.
///
/// At thousands of streams a stream's pool is cold in the cache every
/// period, so what a `take` or `give_back` costs is the cache lines it
/// touches, not the uncontended lock. A stream has one buffer in flight at
/// a time in steady state: the source takes one, the sink gives it back
/// before the next. So the pool keeps the buffer given back last next to
/// its lock, in one cache line ([`Inner`] is line-aligned), and the others
/// in a vector only reached when more than one is out.
#[derive(Debug, Clone)]
pub struct BufferPool {
    inner: Arc<Inner>,
    size: usize,
}

/// The pool's shared part: 64-byte aligned, so that the lock, the hot
/// buffer and the vector's header (64 bytes together) are one cache line.
#[derive(Debug)]
#[repr(C, align(64))]
struct Inner {
    free: Mutex<Free>,
}

#[derive(Debug)]
struct Free {
    /// The buffer given back last (the next one handed out).
    hot: Option<Buffer>,
    /// The other free buffers.
    rest: Vec<Buffer>,
}

impl BufferPool {
    /// A pool of `count` buffers of `size` bytes, allocated now.
    pub fn new(count: usize, size: usize) -> BufferPool {
        let new = || Buffer {
            seq: 0,
            len: 0,
            data: vec![0u8; size].into_boxed_slice(),
        };
        // Room for every buffer in `rest`: a give-back never grows it.
        let mut rest = Vec::with_capacity(count);
        rest.extend((1..count).map(|_| new()));
        let hot = (count > 0).then(new);
        BufferPool {
            inner: Arc::new(Inner {
                free: Mutex::new(Free { hot, rest }),
            }),
            size,
        }
    }

    /// A buffer from the pool; a new one (an allocation) only if every
    /// buffer is in flight, which a pool sized for the channel never sees.
    pub fn take(&self) -> Buffer {
        let reused = {
            let mut free = self.inner.free.lock().unwrap();
            match free.hot.take() {
                Some(buffer) => Some(buffer),
                None => free.rest.pop(),
            }
        };
        reused.unwrap_or_else(|| Buffer {
            seq: 0,
            len: 0,
            data: vec![0u8; self.size].into_boxed_slice(),
        })
    }

    /// Returns `buffer` to the pool (no allocation while no more buffers
    /// come back than the pool was created with).
    pub fn give_back(&self, buffer: Buffer) {
        let mut free = self.inner.free.lock().unwrap();
        match free.hot.replace(buffer) {
            None => {}
            Some(older) => free.rest.push(older),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_buffer_given_back_is_handed_out_again() {
        let pool = BufferPool::new(1, 8);
        let b = pool.take();
        let ptr = b.data.as_ptr();
        pool.give_back(b);
        assert_eq!(pool.take().data.as_ptr(), ptr);
        // The pool is empty now: a new buffer, of the pool's size.
        assert_eq!(pool.take().data.len(), 8);
    }

    #[test]
    fn every_buffer_comes_back_once_and_the_last_one_first() {
        let pool = BufferPool::new(3, 8);
        let out: Vec<Buffer> = (0..3).map(|_| pool.take()).collect();
        let mut ptrs: Vec<_> = out.iter().map(|b| b.data.as_ptr()).collect();
        let last = ptrs[2];
        for b in out {
            pool.give_back(b);
        }
        assert_eq!(pool.take().data.as_ptr(), last, "the hot buffer first");
        let mut again = vec![last];
        again.extend((0..2).map(|_| pool.take().data.as_ptr()));
        again.sort();
        ptrs.sort();
        assert_eq!(again, ptrs, "the same three buffers, none lost or doubled");
    }

    #[test]
    fn the_lock_and_the_hot_buffer_share_a_cache_line() {
        // `Inner` starts a line and the whole lock, with its data, fits in
        // it.
        assert_eq!(std::mem::align_of::<Inner>(), 64);
        assert!(std::mem::size_of::<Mutex<Free>>() <= 64);
    }
}
