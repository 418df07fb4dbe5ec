//! Buffers and the pool they return to.
//!
//! A media pipeline does not allocate per buffer: a source takes a buffer
//! from its pool, fills it, pushes it; the sink hands it back once done.
//! The pool is per stream (its source and sink run on the same context, so
//! its lock is never contended) and is filled once, before the stream
//! starts, with more buffers than can be in flight (the channel's capacity,
//! one in the source, one in the sink): in steady state nothing is
//! allocated, which is what the pipeline's allocation count checks.
//!
//! # Which streams share a pool
//!
//! [`PoolScope`] chooses. With a pool per stream (GStreamer's pool per
//! link), the buffer a source takes was last touched a period ago: with
//! thousands of streams it is cold, and so are the pool's lock and free
//! list. With a pool per context (per tokio runtime), shared by its
//! streams, the buffer a sink gives back is the next one a source of the
//! same context takes: pool and buffer stay in cache, as the buffers a
//! GStreamer `udpsrc` allocates from a per-thread allocator cache do. The
//! pool holds as many buffers either way.

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

/// Which streams share a [`BufferPool`] (see the module docs).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum PoolScope {
    /// A pool per stream.
    Stream,
    /// A pool per context (tokio runtime), shared by its streams.
    #[default]
    Context,
}

impl PoolScope {
    /// Its name in `--pool` and in the result files.
    pub fn name(self) -> &'static str {
        match self {
            PoolScope::Stream => "stream",
            PoolScope::Context => "context",
        }
    }

    /// Parses `--pool`'s value; the default without one.
    pub fn parse_option(value: Option<&str>) -> Result<PoolScope, String> {
        value.map_or(Ok(PoolScope::default()), PoolScope::parse)
    }

    /// Parses `--pool`'s value.
    pub fn parse(s: &str) -> Result<PoolScope, String> {
        match s {
            "stream" => Ok(PoolScope::Stream),
            "context" => Ok(PoolScope::Context),
            _ => Err(format!("--pool {s}: stream or context")),
        }
    }
}

/// The pools of one group of streams (one context or tokio runtime).
#[derive(Debug)]
pub struct GroupPools {
    /// The group's pool under [`PoolScope::Context`].
    shared: Option<BufferPool>,
    per_stream: usize,
    size: usize,
}

impl GroupPools {
    /// Pools for `streams` streams, `per_stream` buffers of `size` bytes
    /// each (allocated now for a shared pool, per stream otherwise).
    pub fn new(scope: PoolScope, streams: usize, per_stream: usize, size: usize) -> GroupPools {
        let shared =
            (scope == PoolScope::Context).then(|| BufferPool::new(streams * per_stream, size));
        GroupPools {
            shared,
            per_stream,
            size,
        }
    }

    /// The pool of a new stream of the group.
    pub fn for_stream(&self) -> BufferPool {
        match &self.shared {
            Some(pool) => pool.clone(),
            None => BufferPool::new(self.per_stream, self.size),
        }
    }
}

/// A pool of reusable [`Buffer`]s. Cloning shares the pool.
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

    /// Whether the buffer one stream of a group gives back is the next one
    /// another stream of the group takes.
    fn handed_on(scope: PoolScope) -> bool {
        let pools = GroupPools::new(scope, 2, 1, 8);
        let (a, b) = (pools.for_stream(), pools.for_stream());
        let buffer = a.take();
        let ptr = buffer.data.as_ptr();
        a.give_back(buffer);
        b.take().data.as_ptr() == ptr
    }

    #[test]
    fn a_context_pool_is_shared_and_a_stream_pool_is_not() {
        assert!(handed_on(PoolScope::Context));
        assert!(!handed_on(PoolScope::Stream));
    }

    #[test]
    fn pool_scopes_parse_their_names() {
        for scope in [PoolScope::Stream, PoolScope::Context] {
            assert_eq!(PoolScope::parse(scope.name()), Ok(scope));
        }
        assert!(PoolScope::parse("thread").is_err());
        assert_eq!(PoolScope::parse_option(None), Ok(PoolScope::Context));
    }
}
