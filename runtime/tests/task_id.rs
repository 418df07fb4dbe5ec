//! Task identity: `task::Id`, `JoinHandle::id`, `task::id()` /
//! `try_id()`, and the id in `JoinError`. Each behaviour runs on both
//! schedulers.

use std::collections::HashSet;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::time::Duration;

use tempo::runtime::Runtime;
use tempo::task::{self, Id};

mod support;
use support::{on_each_flavor, Flavor};

/// `flavor`'s runtime with I/O, time and the paused clock, and its name.
fn runtime(flavor: Flavor) -> (&'static str, Runtime) {
    let rt = flavor
        .builder()
        .enable_all()
        .start_paused(true)
        .build()
        .unwrap();
    (flavor.name(), rt)
}

/// Records `task::try_id()` (as a u64, 0 for none) when dropped.
struct IdOnDrop(Arc<AtomicU64>);

impl Drop for IdOnDrop {
    fn drop(&mut self) {
        let id = task::try_id().map_or(0, |id| id.as_u64());
        self.0.store(id, SeqCst);
    }
}

on_each_flavor! {
    #[test]
    fn task_sees_the_id_of_its_join_handle_and_ids_are_unique() {
        let (name, rt) = runtime(FLAVOR);
        rt.block_on(async {
            let handles: Vec<_> = (0..50)
                .map(|i| {
                    if i % 2 == 0 {
                        tempo::spawn(async {
                            tempo::task::yield_now().await;
                            task::id()
                        })
                    } else {
                        tempo::spawn_local(async { task::id() })
                    }
                })
                .collect();
            let mut seen = HashSet::new();
            for handle in handles {
                let id = handle.id();
                assert!(seen.insert(id), "{name}: id {id} given twice");
                assert_eq!(handle.await.unwrap(), id, "{name}");
            }
        });
    }

    #[test]
    fn no_id_outside_a_task() {
        assert_eq!(task::try_id(), None);
        let (name, rt) = runtime(FLAVOR);
        rt.block_on(async {
            // The future of block_on is not a task.
            assert_eq!(task::try_id(), None, "{name}");
            let inner = tempo::spawn(async { task::try_id() });
            let id = inner.id();
            assert_eq!(inner.await.unwrap(), Some(id), "{name}");
            // Polling a task does not leave its id behind.
            assert_eq!(task::try_id(), None, "{name}");
        });
    }

    #[test]
    fn id_is_visible_while_an_aborted_or_shut_down_future_drops() {
        let (name, rt) = runtime(FLAVOR);
        let on_abort = Arc::new(AtomicU64::new(u64::MAX));
        let abort_id = rt.block_on({
            let on_abort = on_abort.clone();
            async move {
                let guard = IdOnDrop(on_abort);
                let handle = tempo::spawn(async move {
                    let _guard = guard;
                    std::future::pending::<()>().await;
                });
                tempo::task::yield_now().await; // let it start
                handle.abort();
                let id = handle.id();
                let err = handle.await.unwrap_err();
                assert!(err.is_cancelled(), "{name}");
                assert_eq!(err.id(), id, "{name}");
                id
            }
        });
        assert_eq!(on_abort.load(SeqCst), abort_id.as_u64(), "{name}: abort");

        let on_shutdown = Arc::new(AtomicU64::new(u64::MAX));
        let guard = IdOnDrop(on_shutdown.clone());
        let handle = rt.spawn(async move {
            let _guard = guard;
            tempo::time::sleep(Duration::from_secs(3600)).await;
        });
        let shutdown_id = handle.id();
        rt.turn(Duration::ZERO);
        drop(rt);
        assert_eq!(
            on_shutdown.load(SeqCst),
            shutdown_id.as_u64(),
            "{name}: shutdown"
        );
    }

    #[test]
    fn join_error_names_the_task() {
        let (name, rt) = runtime(FLAVOR);
        rt.block_on(async {
            let handle = tempo::spawn(async { panic!("boom {}", 7) });
            let id: Id = handle.id();
            let err = handle.await.unwrap_err();
            assert!(err.is_panic(), "{name}");
            assert_eq!(err.id(), id, "{name}");
            assert_eq!(
                err.to_string(),
                format!("task {id} panicked with message \"boom 7\""),
                "{name}"
            );
            assert_eq!(
                format!("{err:?}"),
                format!("JoinError::Panic(Id({id}), \"boom 7\")"),
                "{name}"
            );

            let handle = tempo::spawn(std::future::pending::<()>());
            handle.abort();
            let id = handle.id();
            let err = handle.await.unwrap_err();
            assert_eq!(
                err.to_string(),
                format!("task {id} was cancelled"),
                "{name}"
            );
        });
    }
}

#[test]
#[should_panic(expected = "tempo::task::id() called outside a task")]
fn id_outside_a_task_panics_with_a_clear_message() {
    task::id();
}
