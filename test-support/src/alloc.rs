//! A global allocator that counts allocations, in two ways at once:
//!
//! * per process ([`allocations`]): what a benchmark reports as
//!   "allocations per packet", over every thread of the runtime measured;
//! * per thread, only while the thread asked for it ([`ThreadCounter`],
//!   [`count_on_this_thread`]): what a test asserts.
//!
//! It also keeps the bytes the process holds ([`live_bytes`]): what a
//! benchmark reports as memory per stream. Unlike the resident set, it does
//! not depend on what earlier runs of the same process freed and the
//! allocator kept. Cargo runs a binary's
//!   tests on parallel threads, so a test counting a process-wide figure
//!   would see its neighbours' allocations.
//!
//! A binary installs it with
//! `#[global_allocator] static ALLOC: CountingAllocator = CountingAllocator;`
//! (a binary has one global allocator, so each counting test lives in a test
//! file of its own). The cost is a relaxed atomic increment and a read of a
//! `const`-initialised thread-local per allocation: a few nanoseconds, the
//! same for every runtime measured, and nothing at all on the hot path of a
//! runtime that does not allocate (which is what the count is there to
//! show).
//!
//! ```
//! use tempo_test_support::alloc::count_on_this_thread;
//!
//! // Without the allocator installed nothing is counted.
//! let (v, allocations) = count_on_this_thread(|| vec![1u8; 16]);
//! assert_eq!(v.len(), 16);
//! assert_eq!(allocations, 0);
//! ```

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::marker::PhantomData;
use std::sync::atomic::{AtomicI64, AtomicU64, Ordering::Relaxed};

/// Allocations of the whole process.
static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// Bytes allocated and not freed yet, whole process.
static LIVE_BYTES: AtomicI64 = AtomicI64::new(0);

/// Bytes the process holds through this allocator now (allocated and not
/// yet freed, by size asked); 0 if the allocator is not installed.
pub fn live_bytes() -> i64 {
    LIVE_BYTES.load(Relaxed)
}

std::thread_local! {
    /// This thread's allocations since its [`ThreadCounter`] started;
    /// `None` when the thread is not counting. `const` and without a
    /// destructor, so reading it never allocates (which, from inside the
    /// allocator, would recurse).
    static THREAD_ALLOCATIONS: Cell<Option<u64>> = const { Cell::new(None) };
}

fn record_allocation() {
    ALLOCATIONS.fetch_add(1, Relaxed);
    // `try_with`: an allocation during thread tear-down, after the
    // thread-local is gone, is simply not counted per thread.
    let _ = THREAD_ALLOCATIONS.try_with(|count| {
        if let Some(n) = count.get() {
            count.set(Some(n + 1));
        }
    });
}

/// The system allocator, counting every `alloc`, `alloc_zeroed` and
/// `realloc` (a `realloc` counts as one allocation).
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAllocator;

/// Allocations (including reallocations) made in this process so far by the
/// installed [`CountingAllocator`]; stays 0 if it is not installed.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Relaxed)
}

/// Counts the allocations the current thread makes from [`start`] to
/// [`stop`] (or drop). Not `Send`: it counts the thread that started it.
///
/// [`start`]: ThreadCounter::start
/// [`stop`]: ThreadCounter::stop
#[derive(Debug)]
pub struct ThreadCounter {
    _this_thread: PhantomData<*const ()>,
}

impl ThreadCounter {
    /// Starts counting this thread's allocations from zero.
    ///
    /// # Panics
    ///
    /// If this thread is counting already: nested counts would each miss
    /// the other's allocations or count them twice.
    pub fn start() -> ThreadCounter {
        THREAD_ALLOCATIONS.with(|count| {
            assert!(
                count.get().is_none(),
                "ThreadCounter::start: this thread is counting already"
            );
            count.set(Some(0));
        });
        ThreadCounter {
            _this_thread: PhantomData,
        }
    }

    /// This thread's allocations since [`start`](ThreadCounter::start); the
    /// count goes on.
    pub fn so_far(&self) -> u64 {
        THREAD_ALLOCATIONS.with(|count| count.get().unwrap_or(0))
    }

    /// Stops counting and returns this thread's allocations since
    /// [`start`](ThreadCounter::start).
    pub fn stop(self) -> u64 {
        self.so_far()
        // `drop(self)` ends the count.
    }
}

impl Drop for ThreadCounter {
    fn drop(&mut self) {
        let _ = THREAD_ALLOCATIONS.try_with(|count| count.set(None));
    }
}

/// Runs `f` and returns its result with the allocations the current thread
/// made while it ran (allocations of other threads are not counted).
pub fn count_on_this_thread<R>(f: impl FnOnce() -> R) -> (R, u64) {
    let counter = ThreadCounter::start();
    let result = f();
    (result, counter.stop())
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are ours; counting touches only an
// atomic and a const-initialised thread-local, allocates nothing and has no
// effect on the memory returned.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        record_allocation();
        LIVE_BYTES.fetch_add(layout.size() as i64, Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract for `layout`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        record_allocation();
        LIVE_BYTES.fetch_add(layout.size() as i64, Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as i64, Relaxed);
        // SAFETY: `ptr` was returned by this allocator (i.e. by `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        record_allocation();
        LIVE_BYTES.fetch_add(new_size as i64 - layout.size() as i64, Relaxed);
        // SAFETY: `ptr` was returned by `System` with `layout`; the caller
        // upholds `realloc`'s contract for `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Calls the allocator directly (it is not installed in this binary).
    fn allocate_and_grow() {
        let a = CountingAllocator;
        let layout = Layout::from_size_align(64, 8).unwrap();
        // SAFETY: layout has non-zero size; the pointer is freed with the
        // layout of its last (re)allocation.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            let p = a.realloc(p, layout, 128);
            assert!(!p.is_null());
            a.dealloc(p, Layout::from_size_align(128, 8).unwrap());
        }
    }

    #[test]
    fn counts_per_process_and_per_counting_thread() {
        let before = allocations();
        let ((), on_this_thread) = count_on_this_thread(allocate_and_grow);
        assert_eq!(on_this_thread, 2);
        // Other tests may allocate through it concurrently: at least ours.
        assert!(allocations() >= before + 2);
    }

    #[test]
    fn another_threads_allocations_are_not_counted() {
        let counter = ThreadCounter::start();
        std::thread::scope(|s| {
            s.spawn(allocate_and_grow);
        });
        assert_eq!(counter.so_far(), 0);
        allocate_and_grow();
        assert_eq!(counter.stop(), 2);
        // Stopped: nothing more is counted.
        let ((), after) = count_on_this_thread(|| ());
        assert_eq!(after, 0);
    }

    #[test]
    fn live_bytes_follow_alloc_realloc_and_dealloc() {
        // Other tests call the allocator concurrently, each holding at most
        // 128 bytes at a time: a margin of 1 KiB covers them.
        let near = |got: i64, want: i64| (got - want).abs() <= 1024;
        let a = CountingAllocator;
        let small = Layout::from_size_align(1 << 20, 8).unwrap();
        let big = Layout::from_size_align(3 << 20, 8).unwrap();
        let before = live_bytes();
        // SAFETY: non-zero sizes; each pointer is freed with the layout of
        // its last (re)allocation.
        unsafe {
            let p = a.alloc(small);
            assert!(near(live_bytes() - before, 1 << 20));
            let p = a.realloc(p, small, big.size());
            assert!(near(live_bytes() - before, 3 << 20));
            a.dealloc(p, big);
        }
        assert!(near(live_bytes() - before, 0));
    }

    #[test]
    #[should_panic(expected = "counting already")]
    fn nested_counting_is_refused() {
        let _outer = ThreadCounter::start();
        let _inner = ThreadCounter::start();
    }
}
