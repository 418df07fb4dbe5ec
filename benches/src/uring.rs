//! The io_uring calls of the hand-written io_uring loop
//! (`receivers/uring_loop.rs`): tempo-io's own, through its
//! `unstable-sys` feature, so the loop links none of Tempo's runtime and
//! holds no `unsafe` of its own.

pub(crate) use tempo_io::unstable_sys::{BufGroup, RecvLayout, Ring};
