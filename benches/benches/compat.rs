//! What the `tokio-compat` feature costs Tempo: the same benchmarks built
//! twice, without and with the feature, compared by criterion.
//!
//! The feature enters the helper tokio runtime's context once per entry of
//! a Tempo runtime (`block_on`, `turn`), not per task poll, so:
//!
//! * `task_poll`: one task spawned and polled `POLLS` times (it yields) in
//!   one `block_on` of the basic scheduler; criterion's figure divided by
//!   `POLLS` is the cost per poll, which the feature should leave
//!   unchanged.
//! * `block_on_ready`: a `block_on` of a ready future: the whole enter and
//!   exit, where the feature's cost is paid.
//! * `enter_exit`: `Runtime::enter` and the guard's drop alone, without
//!   the scheduler or a syscall: the feature's cost isolated.
//! * `turn_idle`: a host loop's `turn(ZERO)` with nothing to do: the same,
//!   per turn.
//!
//! Run, from the repository root (the second run reports the change
//! against the first):
//!
//! ```sh
//! cargo bench -p tempo-benches --bench compat -- --save-baseline off
//! cargo bench -p tempo-benches --bench compat --features tempo/tokio-compat -- --baseline off
//! ```

use std::hint::black_box;
use std::time::Duration;

use criterion::{criterion_group, criterion_main, Criterion};
use tempo_benches::tempo_runtime::build;

/// Polls of the one task in `task_poll`.
const POLLS: usize = 1000;

fn compat(c: &mut Criterion) {
    let rt = build(None).unwrap();
    c.bench_function("task_poll", |b| {
        b.iter(|| {
            rt.block_on(async {
                tempo::spawn(async {
                    for _ in 0..POLLS {
                        tempo::task::yield_now().await;
                    }
                })
                .await
                .unwrap()
            })
        })
    });
    c.bench_function("block_on_ready", |b| {
        b.iter(|| rt.block_on(async { black_box(1u64) }))
    });
    c.bench_function("enter_exit", |b| b.iter(|| drop(black_box(rt.enter()))));
    c.bench_function("turn_idle", |b| {
        b.iter(|| black_box(rt.turn(Duration::ZERO)))
    });
}

criterion_group!(benches, compat);
criterion_main!(benches);
