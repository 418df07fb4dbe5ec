//! Buffers sized to the stream's datagrams.
//!
//! A pool of MTU-sized buffers costs two resizes per datagram: the buffer
//! is shrunk to its datagram, and the pool grows it back on release (at
//! one datagram per tick, about a tenth of the pipeline's instructions).
//! A stream's datagrams mostly have one size (an RTP audio stream's are
//! all alike), so the source also keeps a pool of buffers of exactly that
//! size, whose buffers are never resized. A datagram of another size gets
//! an MTU-sized buffer cut to it; after [`ADOPT_AFTER`] datagrams of one
//! new size in a row, the exact pool is remade for that size.

use gst::glib;
use gst::prelude::*;

/// Datagrams of one new size in a row after which the exact pool takes it.
pub(super) const ADOPT_AFTER: u32 = 4;

/// Where a source's buffers come from (owned by its task, on its context).
pub(super) struct Buffers {
    /// MTU-sized buffers, for any datagram.
    any: gst::BufferPool,
    /// Buffers of the stream's usual datagram size, and that size.
    exact: Option<(usize, gst::BufferPool)>,
    /// The size of the last datagram the exact pool did not fit, and how
    /// many in a row had it.
    missed: (usize, u32),
}

impl Buffers {
    /// Buffers of up to `mtu` bytes; inactive until [`activate`](Self::activate).
    pub(super) fn new(mtu: usize) -> Result<Buffers, glib::BoolError> {
        Ok(Buffers {
            any: new_pool(mtu)?,
            exact: None,
            missed: (0, 0),
        })
    }

    pub(super) fn activate(&self) -> Result<(), glib::BoolError> {
        self.any.set_active(true)
    }

    /// A writable buffer of `len` bytes (`len` <= the MTU; contents
    /// unspecified).
    pub(super) fn get(&mut self, len: usize) -> Result<gst::Buffer, gst::FlowError> {
        if let Some((size, pool)) = &self.exact {
            if *size == len {
                return pool.acquire_buffer(None);
            }
        }
        self.missed = match self.missed {
            (size, n) if size == len => (size, n + 1),
            _ => (len, 1),
        };
        if self.missed.1 >= ADOPT_AFTER {
            self.missed = (0, 0);
            if let Ok(pool) = new_pool(len).and_then(|pool| pool.set_active(true).map(|_| pool)) {
                self.release_exact();
                self.exact = Some((len, pool));
                return self.get(len);
            }
        }
        let mut buffer = self.any.acquire_buffer(None)?;
        buffer.get_mut().ok_or(gst::FlowError::Error)?.set_size(len);
        Ok(buffer)
    }

    /// The size of the exact pool's buffers, if there is one.
    #[cfg(test)]
    fn exact_size(&self) -> Option<usize> {
        self.exact.as_ref().map(|(size, _)| *size)
    }

    fn release_exact(&mut self) {
        if let Some((_, pool)) = self.exact.take() {
            let _ = pool.set_active(false);
        }
    }

    /// Deactivates the pools: their buffers still downstream are freed
    /// when they come back.
    pub(super) fn deactivate(&mut self) {
        self.release_exact();
        self.missed = (0, 0);
        let _ = self.any.set_active(false);
    }
}

fn new_pool(size: usize) -> Result<gst::BufferPool, glib::BoolError> {
    let size = u32::try_from(size).map_err(|_| glib::bool_error!("buffer size {size}"))?;
    let pool = gst::BufferPool::new();
    let mut config = pool.config();
    config.set_params(None, size, 0, 0);
    pool.set_config(config)?;
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Whether the next buffer of `len` bytes is `buffer` come back to
    /// its pool (`buffer` is dropped).
    fn comes_back(buffers: &mut Buffers, buffer: gst::Buffer) -> bool {
        let (len, ptr) = (buffer.size(), buffer.as_ptr());
        drop(buffer);
        buffers.get(len).unwrap().as_ptr() == ptr
    }

    #[test]
    fn the_exact_pool_takes_a_size_seen_adopt_after_times_in_a_row() {
        gst::init().unwrap();
        let mut buffers = Buffers::new(1500).unwrap();
        buffers.activate().unwrap();
        for _ in 0..ADOPT_AFTER - 1 {
            assert_eq!(buffers.get(160).unwrap().size(), 160);
            assert_eq!(buffers.exact_size(), None);
        }
        let exact = buffers.get(160).unwrap();
        assert_eq!(exact.size(), 160);
        assert_eq!(buffers.exact_size(), Some(160));
        assert!(comes_back(&mut buffers, exact), "pooled");

        // Another size now and then: an MTU buffer cut to it; the exact
        // pool stays.
        let odd = buffers.get(1200).unwrap();
        assert_eq!(odd.size(), 1200);
        assert!(comes_back(&mut buffers, odd), "pooled too");
        assert_eq!(buffers.get(160).unwrap().size(), 160);
        assert_eq!(buffers.exact_size(), Some(160));

        // A stream that changes size for good moves the exact pool with
        // it; a buffer of the old pool still downstream stays valid.
        let old = buffers.get(160).unwrap();
        for _ in 0..ADOPT_AFTER {
            assert_eq!(buffers.get(200).unwrap().size(), 200);
        }
        assert_eq!(buffers.exact_size(), Some(200));
        assert_eq!(old.size(), 160);
        drop(old);

        buffers.deactivate();
        assert_eq!(buffers.exact_size(), None);
        assert!(buffers.get(200).is_err(), "inactive until activated");
        buffers.activate().unwrap();
        assert_eq!(buffers.get(200).unwrap().size(), 200);
    }
}
