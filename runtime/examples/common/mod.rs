//! What the network examples share: their command line. Plain std, so the
//! examples stay the programs they would be on tokio.

/// What an example was asked to do.
pub enum Mode {
    /// Start the server on an ephemeral port of 127.0.0.1, run a few
    /// clients against it, print what happened, exit: what CI runs.
    Demo,
    /// Serve on this address until killed.
    Serve(String),
}

/// Reads the command line: nothing or `--demo`, or `--serve ADDR`; exits
/// with status 2 and a usage line otherwise.
pub fn mode() -> Mode {
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
