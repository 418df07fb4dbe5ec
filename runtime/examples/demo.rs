//! A first look at Tempo: spawn tasks on a single-thread runtime, some from
//! other threads, and print what they did.
//!
//! ```text
//! cargo run --release -p tempo --example demo
//! ```

use std::rc::Rc;
use std::time::Instant;

use tempo::runtime::Builder;

fn main() {
    let start = Instant::now();
    // Keep the intentional panic below to one line.
    std::panic::set_hook(Box::new(|info| eprintln!("(a task panicked: {info})")));
    let rt = Builder::new_current_thread()
        .build()
        .expect("build runtime");
    let handle = rt.handle().clone();

    // Four threads spawn 250 tasks each onto the runtime's thread.
    let spawners: Vec<_> = (0..4u64)
        .map(|t| {
            let handle = handle.clone();
            std::thread::spawn(move || {
                (0..250u64)
                    .map(|i| handle.spawn(async move { t * 1000 + i }))
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let remote_joins: Vec<_> = spawners
        .into_iter()
        .flat_map(|s| s.join().expect("spawner thread"))
        .collect();

    let (remote_sum, local_rounds, panicked) = rt.block_on(async {
        // Tasks spawned on this thread, taking turns with yield_now.
        let rounds = Rc::new(std::cell::Cell::new(0u32));
        let locals: Vec<_> = (0..10)
            .map(|_| {
                let rounds = rounds.clone(); // Rc: spawn_local takes !Send futures
                tempo::spawn_local(async move {
                    for _ in 0..100 {
                        rounds.set(rounds.get() + 1);
                        tempo::task::yield_now().await;
                    }
                })
            })
            .collect();
        // A panicking task is reported through its JoinHandle.
        let panicked = tempo::spawn(async { panic!("this task panics on purpose") })
            .await
            .unwrap_err()
            .is_panic();
        for l in locals {
            l.await.unwrap();
        }
        let mut sum = 0;
        for j in remote_joins {
            sum += j.await.unwrap();
        }
        (sum, rounds.get(), panicked)
    });

    println!("1000 tasks spawned from 4 threads: sum of outputs {remote_sum}");
    println!("10 local tasks took {local_rounds} turns between them with yield_now");
    println!("a panicking task was caught and reported: {panicked}");
    println!(
        "driver unparks caused by other threads: {} (a busy runtime is never woken)",
        handle.unpark_count()
    );
    drop(rt);
    println!("done in {:.1} ms", start.elapsed().as_secs_f64() * 1e3);
}
