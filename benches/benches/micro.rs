//! Criterion micro-benchmarks: Tempo vs tokio current_thread (filled below).
fn main() {}
