//! Buffers sized to the stream's datagrams, from pools shared by the
//! sources of one context thread.
//!
//! Sized: a pool of MTU-sized buffers costs two resizes per datagram (the
//! buffer is shrunk to its datagram, and the pool grows it back on
//! release). A stream's datagrams mostly have one size (an RTP audio
//! stream's are all alike), so a source takes buffers of exactly that size
//! once [`ADOPT_AFTER`] datagrams in a row had it; a datagram of another
//! size gets an MTU-sized buffer cut to it.
//!
//! Shared: a pool of its own would hold a source's buffers cold for the
//! tick between its datagrams, a cache miss on the pool and on the buffer
//! per datagram when a thread serves a thousand sources. The sources of a
//! thread never run at once, so the thread keeps one pool per size for all
//! of them; when downstream releases each buffer before the next is taken
//! (a sink, a relay), one buffer cycles.
//!
//! Lifetime: a thread's pools stay active until the thread ends, keeping
//! as many idle buffers as were out at once (a buffer still downstream
//! keeps its pool alive, and is freed when it comes back after that). A
//! thread adopts at most [`MAX_ADOPTED`] sizes, past which a stream's
//! datagrams get MTU buffers cut to size; MTU pools are not counted (one
//! per `mtu` setting in use), so every datagram has a pooled buffer.
//! Acquiring never blocks: the pools have no limit.

use std::cell::RefCell;

use gst::glib;
use gst::prelude::*;

/// Datagrams of one new size in a row after which a source adopts it.
pub(super) const ADOPT_AFTER: u32 = 4;
/// Datagram sizes a thread adopts at most.
pub(super) const MAX_ADOPTED: usize = 16;

thread_local! {
    static POOLS: RefCell<Pools> = const {
        RefCell::new(Pools { by_size: Vec::new(), adopted: 0 })
    };
}

/// A thread's pools and their buffer sizes, and how many of those sizes
/// were adopted (the rest are MTUs).
struct Pools {
    by_size: Vec<(usize, gst::BufferPool)>,
    adopted: usize,
}

/// Where a source's buffers come from (owned by its task, used on its
/// context's thread).
pub(super) struct Buffers {
    mtu: usize,
    /// The stream's usual datagram size, once adopted.
    exact: Option<usize>,
    /// The size of the last datagram that was not `exact`, and how many in
    /// a row had it.
    missed: (usize, u32),
}

impl Buffers {
    /// Buffers of up to `mtu` bytes.
    pub(super) fn new(mtu: usize) -> Buffers {
        Buffers {
            mtu,
            exact: None,
            missed: (0, 0),
        }
    }

    /// A writable buffer of `len` bytes (`len` <= the MTU; contents
    /// unspecified). An error only where GStreamer refuses a pool or a
    /// buffer.
    pub(super) fn get(&mut self, len: usize) -> Result<gst::Buffer, gst::FlowError> {
        if self.exact == Some(len) {
            return acquire(len, true);
        }
        self.missed = match self.missed {
            (size, n) if size == len => (size, n + 1),
            _ => (len, 1),
        };
        if self.missed.1 >= ADOPT_AFTER {
            self.missed = (0, 0);
            if let Ok(buffer) = acquire(len, true) {
                self.exact = Some(len);
                return Ok(buffer);
            }
        }
        let mut buffer = acquire(self.mtu, false)?;
        buffer.get_mut().ok_or(gst::FlowError::Error)?.set_size(len);
        Ok(buffer)
    }

    /// Forgets the adopted size (a restarted stream adopts again).
    pub(super) fn reset(&mut self) {
        self.exact = None;
        self.missed = (0, 0);
    }

    #[cfg(test)]
    fn exact_size(&self) -> Option<usize> {
        self.exact
    }
}

/// A buffer of `size` bytes from this thread's pool of that size, made
/// here if missing, unless it would be an adopted size past
/// [`MAX_ADOPTED`].
fn acquire(size: usize, adopted: bool) -> Result<gst::Buffer, gst::FlowError> {
    POOLS.with_borrow_mut(|pools| {
        let i = match pools.by_size.iter().position(|(s, _)| *s == size) {
            Some(i) => i,
            None if adopted && pools.adopted == MAX_ADOPTED => {
                return Err(gst::FlowError::NotSupported)
            }
            None => {
                let pool = new_pool(size).map_err(|_| gst::FlowError::Error)?;
                pools.by_size.push((size, pool));
                pools.adopted += usize::from(adopted);
                pools.by_size.len() - 1
            }
        };
        pools.by_size[i].1.acquire_buffer(None)
    })
}

fn new_pool(size: usize) -> Result<gst::BufferPool, glib::BoolError> {
    let size = u32::try_from(size).map_err(|_| glib::bool_error!("buffer size {size}"))?;
    let pool = gst::BufferPool::new();
    let mut config = pool.config();
    config.set_params(None, size, 0, 0);
    pool.set_config(config)?;
    pool.set_active(true)?;
    Ok(pool)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Runs `test` on a thread of its own, whose pools start empty
    /// (libtest runs tests on one thread with `--test-threads=1`).
    fn on_a_fresh_thread(test: impl FnOnce() + Send + 'static) {
        gst::init().unwrap();
        std::thread::spawn(test).join().unwrap();
    }

    /// Whether the next buffer of `len` bytes is `buffer` come back to
    /// its pool (`buffer` is dropped).
    fn comes_back(buffers: &mut Buffers, buffer: gst::Buffer) -> bool {
        let (len, ptr) = (buffer.size(), buffer.as_ptr());
        drop(buffer);
        buffers.get(len).unwrap().as_ptr() == ptr
    }

    #[test]
    fn a_source_adopts_a_size_seen_adopt_after_times_in_a_row() {
        on_a_fresh_thread(|| {
            let mut buffers = Buffers::new(1500);
            for _ in 0..ADOPT_AFTER - 1 {
                assert_eq!(buffers.get(160).unwrap().size(), 160);
                assert_eq!(buffers.exact_size(), None);
            }
            let exact = buffers.get(160).unwrap();
            assert_eq!(exact.size(), 160);
            assert_eq!(buffers.exact_size(), Some(160));
            assert!(comes_back(&mut buffers, exact), "pooled");

            // Another size now and then: an MTU buffer cut to it; the
            // adopted size stays.
            let odd = buffers.get(1200).unwrap();
            assert_eq!(odd.size(), 1200);
            assert!(comes_back(&mut buffers, odd), "pooled too");
            assert_eq!(buffers.get(160).unwrap().size(), 160);
            assert_eq!(buffers.exact_size(), Some(160));

            // A stream that changes size for good moves with it; a buffer
            // of the old size still downstream stays valid.
            let old = buffers.get(160).unwrap();
            for _ in 0..ADOPT_AFTER {
                assert_eq!(buffers.get(200).unwrap().size(), 200);
            }
            assert_eq!(buffers.exact_size(), Some(200));
            assert_eq!(old.size(), 160);
            drop(old);

            buffers.reset();
            assert_eq!(buffers.exact_size(), None);
            assert_eq!(buffers.get(200).unwrap().size(), 200);
        });
    }

    #[test]
    fn the_sources_of_a_thread_share_its_pools_and_other_threads_have_their_own() {
        on_a_fresh_thread(|| {
            let adopted = |buffers: &mut Buffers| {
                for _ in 0..ADOPT_AFTER {
                    buffers.get(172).unwrap();
                }
            };
            let (mut a, mut b) = (Buffers::new(1500), Buffers::new(1500));
            adopted(&mut a);
            adopted(&mut b);
            let from_a = a.get(172).unwrap();
            let ptr = from_a.as_ptr() as usize;
            drop(from_a);
            assert_eq!(
                b.get(172).unwrap().as_ptr() as usize,
                ptr,
                "one buffer cycles"
            );

            // That buffer waits in this thread's pool; another thread's
            // source gets one of its own.
            let elsewhere = std::thread::spawn(move || {
                let mut c = Buffers::new(1500);
                adopted(&mut c);
                c.get(172).unwrap().as_ptr() as usize
            });
            assert_ne!(elsewhere.join().unwrap(), ptr);
        });
    }

    #[test]
    fn a_thread_adopts_at_most_max_adopted_sizes_and_pools_every_mtu() {
        on_a_fresh_thread(|| {
            let mut buffers = Buffers::new(1500);
            for size in 1..=MAX_ADOPTED {
                for _ in 0..ADOPT_AFTER {
                    assert_eq!(buffers.get(size).unwrap().size(), size);
                }
                assert_eq!(buffers.exact_size(), Some(size));
            }
            for _ in 0..2 * ADOPT_AFTER {
                assert_eq!(buffers.get(999).unwrap().size(), 999);
            }
            assert_eq!(buffers.exact_size(), Some(MAX_ADOPTED), "not adopted");
            POOLS.with_borrow(|pools| {
                assert_eq!(
                    (pools.by_size.len(), pools.adopted),
                    (MAX_ADOPTED + 1, MAX_ADOPTED)
                );
            });

            // A source with another MTU still gets pooled buffers.
            let mut jumbo = Buffers::new(9000);
            let buffer = jumbo.get(100).unwrap();
            assert_eq!(buffer.size(), 100);
            assert!(comes_back(&mut jumbo, buffer), "pooled");
        });
    }
}
