//! What the network examples share: their command line (`--demo`, the
//! default, or `--serve ADDR`) and the bound on a demo's run time (written once, so the examples show only their
//! networking). Like the examples, it runs on tokio by changing the crate
//! name.

use std::error::Error;
use std::future::Future;
use std::time::Duration;

/// The examples' error type.
pub type BoxError = Box<dyn Error + Send + Sync>;

/// How long a demo may run before it counts as failed.
const DEMO_BOUND: Duration = Duration::from_secs(10);

/// What an example was asked to do.
enum Mode {
    /// Start the server on an ephemeral port of 127.0.0.1, run a few
    /// clients against it, print what happened, exit: what CI runs.
    Demo,
    /// Serve on this address until killed.
    Serve(String),
}

/// Reads the command line: nothing or `--demo`, or `--serve ADDR`; exits
/// with status 2 and a usage line otherwise.
fn mode() -> Mode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    match args[..] {
        [] | ["--demo"] => Mode::Demo,
        ["--serve", addr] => Mode::Serve(addr.to_owned()),
        _ => {
            let program = std::env::args().next().unwrap_or_default();
            eprintln!("usage: {program} [--demo | --serve ADDR]");
            std::process::exit(2);
        }
    }
}

/// Does what the command line asks: `serve(ADDR)` for `--serve ADDR`,
/// else `demo`, failing if it has not finished within ten seconds (so a
/// demo run by CI always ends).
pub async fn serve_or_demo<S>(
    serve: impl FnOnce(String) -> S,
    demo: impl Future<Output = Result<(), BoxError>>,
) -> Result<(), BoxError>
where
    S: Future<Output = Result<(), BoxError>>,
{
    match mode() {
        Mode::Serve(addr) => serve(addr).await,
        Mode::Demo => tempo::time::timeout(DEMO_BOUND, demo)
            .await
            .map_err(|_| format!("the demo did not finish within {DEMO_BOUND:?}"))?,
    }
}
