//! A global allocator that counts allocations, for "allocations per packet".
//!
//! A binary installs it with
//! `#[global_allocator] static ALLOC: CountingAllocator = CountingAllocator;`
//! and reads [`allocations`] before and after the measured window. The count
//! is a relaxed atomic increment in front of the system allocator: a few
//! nanoseconds per allocation, the same for every runtime measured, and zero
//! on the hot path of a runtime that does not allocate per packet (which is
//! what the number is there to show).

use std::alloc::{GlobalAlloc, Layout, System};
use std::sync::atomic::{AtomicU64, Ordering};

static ALLOCATIONS: AtomicU64 = AtomicU64::new(0);

/// The system allocator, counting every `alloc`, `alloc_zeroed` and `realloc`.
#[derive(Debug, Default, Clone, Copy)]
pub struct CountingAllocator;

/// Allocations (including reallocations) made in this process so far by the
/// installed [`CountingAllocator`]; stays 0 if it is not installed.
pub fn allocations() -> u64 {
    ALLOCATIONS.load(Ordering::Relaxed)
}

// SAFETY: every method forwards to `System` with the caller's arguments
// unchanged, so `System`'s guarantees are ours; counting has no effect on the
// memory returned.
unsafe impl GlobalAlloc for CountingAllocator {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc`'s contract for `layout`.
        unsafe { System.alloc(layout) }
    }

    unsafe fn alloc_zeroed(&self, layout: Layout) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: the caller upholds `GlobalAlloc::alloc_zeroed`'s contract.
        unsafe { System.alloc_zeroed(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: `ptr` was returned by this allocator (i.e. by `System`) with `layout`.
        unsafe { System.dealloc(ptr, layout) }
    }

    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        ALLOCATIONS.fetch_add(1, Ordering::Relaxed);
        // SAFETY: `ptr` was returned by `System` with `layout`; the caller
        // upholds `realloc`'s contract for `new_size`.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_allocations_made_through_it() {
        let a = CountingAllocator;
        let layout = Layout::from_size_align(64, 8).unwrap();
        let before = allocations();
        // SAFETY: layout has non-zero size; the pointer is freed with the same layout.
        unsafe {
            let p = a.alloc(layout);
            assert!(!p.is_null());
            let p = a.realloc(p, layout, 128);
            assert!(!p.is_null());
            a.dealloc(p, Layout::from_size_align(128, 8).unwrap());
        }
        assert!(allocations() >= before + 2);
    }
}
