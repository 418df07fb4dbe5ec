//! The io_uring calls of the hand-written io_uring loop
//! (`receivers/uring_loop.rs`): tempo-io's own `sys/uring.rs` (the ring,
//! provided-buffer groups, multishot `recvmsg`), compiled into the
//! benchmark as a module of its own. The kernel's structures are declared
//! once for both, every `unsafe` stays in that file, and the loop links
//! none of Tempo's runtime: only these calls.

// The loop uses the ring, one buffer group and the reap, not the eventfd,
// the cancellation or the exhaustion bookkeeping Tempo's receivers need.
#[allow(dead_code)]
#[path = "../../io-driver/src/sys/uring.rs"]
mod ring;

pub(crate) use ring::{BufGroup, Ring};
