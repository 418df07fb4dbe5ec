//! The `#[tempo::main]` and `#[tempo::test]` attributes.
//!
//! Use them through the `tempo` crate (`tempo::main`, `tempo::test`, on by
//! its default `macros` feature); this crate only generates code. Without
//! them every program and every async test starts with the same four lines
//! of [`Builder`] code; with them an `async fn` is the whole program, and a
//! tokio program (`#[tokio::main(flavor = "current_thread")]`) moves to
//! Tempo by renaming the crate.
//!
//! The generated code names the runtime only through public paths of the
//! `tempo` crate (`::tempo::runtime::Builder`,
//! `::tempo::runtime::TimerPolicy`), so this crate does not depend on
//! `tempo`; `crate = "path"` changes that prefix for a re-exported `tempo`.
//!
//! # Arguments
//!
//! Both attributes take the same optional `name = value` arguments:
//!
//! | argument | value | builder call |
//! | --- | --- | --- |
//! | `max_throttling` | `"20ms"`, `"1s"`, `"500us"`: from 1 ms to 1 s | `.max_throttling(d)`: the throttling scheduler (omit it for the basic scheduler) |
//! | `timer_policy` | `"nearest_tick"` or `"never_early"` | `.timer_policy(TimerPolicy::NearestTick / NeverEarly)` |
//! | `start_paused` | `true` or `false` | `.start_paused(b)`: the paused test clock |
//! | `flavor` | `"current_thread"` only | none: every Tempo runtime runs on one thread |
//! | `crate` | `"path"` | the path of the `tempo` crate, `::tempo` by default |
//!
//! The runtime is always built with `enable_all()`. Any other argument,
//! another flavor (`"multi_thread"`), `worker_threads`, a malformed value
//! or an argument given twice is a compile error that points at the
//! argument and says what is accepted.
//!
//! [`Builder`]: https://docs.rs/tempo/latest/tempo/runtime/struct.Builder.html
#![deny(missing_docs)]
#![warn(rust_2018_idioms)]

mod entry;

use proc_macro::TokenStream;

/// Runs an `async fn` as the program's entry point on a new Tempo runtime.
///
/// ```ignore
/// #[tempo::main]
/// async fn main() {
///     println!("hello from a task");
/// }
/// ```
///
/// expands to (roughly)
///
/// ```ignore
/// fn main() {
///     ::tempo::runtime::Builder::new_current_thread()
///         .enable_all()
///         .build()
///         .expect("failed to build the Tempo runtime")
///         .block_on(async move { println!("hello from a task"); })
/// }
/// ```
///
/// The arguments (`max_throttling = "20ms"`, `timer_policy = "never_early"`,
/// `start_paused = true`, `flavor = "current_thread"`, `crate = "path"`)
/// are described in the [crate docs](crate). The examples that compile are
/// in the `tempo` crate's documentation of `tempo::main`.
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    entry::expand(entry::Kind::Main, args.into(), item.into()).into()
}

/// Runs an `async fn` as a `#[test]` on a new Tempo runtime of its own.
///
/// ```ignore
/// #[tempo::test(start_paused = true)]
/// async fn an_hour_passes_at_once() {
///     tempo::time::sleep(std::time::Duration::from_secs(3600)).await;
/// }
/// ```
///
/// Takes the same arguments as [`main`](macro@main); `max_throttling`
/// runs the test on the throttling scheduler.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    entry::expand(entry::Kind::Test, args.into(), item.into()).into()
}
