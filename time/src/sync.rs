//! The timer's synchronisation primitives, from the workspace's loom shim
//! ([`tempo_park::sync`]), so the loom models run the real code. The wheel
//! lives behind one [`Mutex`], uncontended on the driver's thread.

pub(crate) use tempo_park::sync::{
    Arc, AtomicBool, AtomicU64, Mutex, MutexGuard, Ordering, UnsafeCell,
};
