//! The calling thread's receive buffer (64 KiB: a datagram is never
//! cut), where `recv_with` / `recv_from_with` and the `*_buf` receives
//! land a datagram: one buffer per thread, left in cache by the previous
//! receive, instead of a cold buffer per socket. A receive takes it out
//! of its thread-local slot and puts it back: a nested receive gets a
//! fresh one, and a panicking closure takes it with it, so no receive can
//! see another one's bytes.

use std::cell::Cell;

/// The buffer's size: the largest datagram (a UDP payload is at most
/// 65,507 bytes over IPv4, 65,527 over IPv6 without jumbograms).
pub(crate) const THREAD_BUF_LEN: usize = 65_536;

thread_local! {
    /// The thread's buffer, while no receive has it out.
    static THREAD_BUF: Cell<Option<Box<[u8]>>> = const { Cell::new(None) };
}

fn fresh() -> Box<[u8]> {
    vec![0; THREAD_BUF_LEN].into_boxed_slice()
}

/// Takes the calling thread's receive buffer out of its slot (a fresh one
/// if it is out, or the thread is ending); [`put_back`] returns it.
pub(crate) fn take() -> Box<[u8]> {
    THREAD_BUF
        .try_with(Cell::take)
        .ok()
        .flatten()
        .unwrap_or_else(fresh)
}

/// Puts `buf` back in the thread's slot (a thread whose locals are being
/// destroyed just drops it).
pub(crate) fn put_back(buf: Box<[u8]>) {
    let _ = THREAD_BUF.try_with(|slot| slot.set(Some(buf)));
}

/// Runs `f` with the calling thread's receive buffer and puts it back
/// afterwards (not if `f` panics: the buffer goes with the panic).
#[cfg(any(feature = "bytes", test))]
pub(crate) fn with_thread_buf<R>(f: impl FnOnce(&mut [u8]) -> R) -> R {
    let mut buf = take();
    let result = f(&mut buf);
    put_back(buf);
    result
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    #[test]
    fn one_buffer_per_thread_reused() {
        let first = with_thread_buf(|buf| {
            assert_eq!(buf.len(), THREAD_BUF_LEN);
            buf[0] = 7;
            buf.as_ptr() as usize
        });
        let again = with_thread_buf(|buf| {
            assert_eq!(buf[0], 7, "the same buffer");
            buf.as_ptr() as usize
        });
        assert_eq!(first, again);
        let other = std::thread::spawn(|| with_thread_buf(|buf| buf.as_ptr() as usize))
            .join()
            .unwrap();
        assert_ne!(first, other, "a buffer per thread");
    }

    #[test]
    fn a_nested_use_gets_a_buffer_of_its_own() {
        with_thread_buf(|outer| {
            outer[0] = 1;
            with_thread_buf(|inner| {
                assert_ne!(inner.as_ptr(), outer.as_ptr());
                inner[0] = 2;
            });
            assert_eq!(outer[0], 1, "the nested use wrote elsewhere");
        });
    }

    #[test]
    fn a_panic_inside_loses_only_the_buffer() {
        let caught = std::panic::catch_unwind(|| with_thread_buf(|_| panic!("in the closure")));
        assert!(caught.is_err());
        assert_eq!(with_thread_buf(|buf| buf.len()), THREAD_BUF_LEN);
    }
}
