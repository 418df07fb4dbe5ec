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
#[derive(Debug, Clone)]
pub struct BufferPool {
    free: Arc<Mutex<Vec<Buffer>>>,
    size: usize,
}

impl BufferPool {
    /// A pool of `count` buffers of `size` bytes, allocated now.
    pub fn new(count: usize, size: usize) -> BufferPool {
        let free = (0..count)
            .map(|_| Buffer {
                seq: 0,
                len: 0,
                data: vec![0u8; size].into_boxed_slice(),
            })
            .collect();
        BufferPool {
            free: Arc::new(Mutex::new(free)),
            size,
        }
    }

    /// A buffer from the pool; a new one (an allocation) only if every
    /// buffer is in flight, which a pool sized for the channel never sees.
    pub fn take(&self) -> Buffer {
        let reused = self.free.lock().unwrap().pop();
        reused.unwrap_or_else(|| Buffer {
            seq: 0,
            len: 0,
            data: vec![0u8; self.size].into_boxed_slice(),
        })
    }

    /// Returns `buffer` to the pool (no allocation: the pool's vector was
    /// created with room for every buffer it hands out).
    pub fn give_back(&self, buffer: Buffer) {
        self.free.lock().unwrap().push(buffer);
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
}
