//! Implementations of the ecosystem's I/O traits, behind features.

#[cfg(feature = "futures-io")]
mod futures_io;
#[cfg(feature = "tokio-io")]
mod tokio_io;
