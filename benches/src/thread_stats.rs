//! Per-thread statistics that one call sums over every thread.
//!
//! Receivers and timer streams run on one thread (the runtimes) or on
//! thousands (`threads`). Each thread counts into its own `Arc<Mutex<_>>`,
//! registered on first use, so counting never contends; [`collect`] sums
//! them at the end of a run. The macro stamps out the registry for a stats
//! type, since a `static` cannot be generic.
//!
//! [`collect`]: crate::recv_stats::collect

/// Defines, in the invoking module, `with_thread_stats(f)` (run `f` on the
/// calling thread's stats) and `collect()` (the sum of every thread's
/// stats) for a stats type that is `Default` and has
/// `fn merge(&mut self, other: &Self)`.
#[macro_export]
macro_rules! per_thread_stats {
    ($stats:ty) => {
        type SharedStats = ::std::sync::Arc<::std::sync::Mutex<$stats>>;

        static REGISTRY: ::std::sync::Mutex<Vec<SharedStats>> = ::std::sync::Mutex::new(Vec::new());

        thread_local! {
            static THREAD_STATS: SharedStats = {
                let stats: SharedStats = ::std::sync::Arc::default();
                REGISTRY
                    .lock()
                    .unwrap_or_else(::std::sync::PoisonError::into_inner)
                    .push(::std::sync::Arc::clone(&stats));
                stats
            };
        }

        /// Runs `f` on the calling thread's stats (registered on first use).
        pub fn with_thread_stats<R>(f: impl FnOnce(&mut $stats) -> R) -> R {
            THREAD_STATS.with(|s| {
                f(&mut s
                    .lock()
                    .unwrap_or_else(::std::sync::PoisonError::into_inner))
            })
        }

        /// The sum of every thread's stats in this process so far.
        pub fn collect() -> $stats {
            let registry = REGISTRY
                .lock()
                .unwrap_or_else(::std::sync::PoisonError::into_inner);
            let mut total = <$stats>::default();
            for s in registry.iter() {
                total.merge(
                    &s.lock()
                        .unwrap_or_else(::std::sync::PoisonError::into_inner),
                );
            }
            total
        }
    };
}
