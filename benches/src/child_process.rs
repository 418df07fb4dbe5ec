//! Running a benchmark child process and reading its result row.
//!
//! The sweeps run every measurement in a fresh process (its own heap, its own
//! threads, its own CPU accounting): the child prints a CSV header and one
//! row on stdout; the parent reads them back and never waits unboundedly.

use std::io::Read;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::report::CsvRow;

/// Waits for `child` at most `limit`, killing it past that.
pub fn wait_bounded(child: &mut Child, limit: Duration, what: &str) -> Result<(), String> {
    let deadline = Instant::now() + limit;
    loop {
        match child.try_wait() {
            Ok(Some(status)) if status.success() => return Ok(()),
            Ok(Some(status)) => return Err(format!("{what} exited with {status}")),
            Ok(None) if Instant::now() >= deadline => {
                let _ = child.kill();
                let _ = child.wait();
                return Err(format!("{what} did not finish within {limit:?}: killed"));
            }
            Ok(None) => std::thread::sleep(Duration::from_millis(20)),
            Err(e) => return Err(format!("{what}: {e}")),
        }
    }
}

/// Reads a child's stdout to the end and parses its header + row.
pub fn read_row(child: &mut Child, what: &str) -> Result<CsvRow, String> {
    let mut out = String::new();
    child
        .stdout
        .take()
        .ok_or_else(|| format!("{what}: no stdout"))?
        .read_to_string(&mut out)
        .map_err(|e| format!("{what}: {e}"))?;
    let mut lines = out.lines().filter(|l| !l.trim().is_empty());
    match (lines.next(), lines.next()) {
        (Some(h), Some(v)) => CsvRow::parse(h, v).map_err(|e| format!("{what}: {e}")),
        _ => Err(format!("{what}: expected a header and a row, got {out:?}")),
    }
}

/// Runs `cmd` (stdout captured, stderr passed through), waits at most
/// `limit`, and returns its row.
pub fn run_for_row(cmd: &mut Command, limit: Duration, what: &str) -> Result<CsvRow, String> {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("start {what}: {e}"))?;
    let row = read_row(&mut child, what);
    wait_bounded(&mut child, limit, what)?;
    row
}

/// Starts a receiver and, once it has had 100 ms to bind its sockets (what
/// arrives earlier falls in its warm-up anyway), its sender; the receiver's
/// stdout is piped (its result row), the sender's goes to `sender_stdout`.
/// If the sender cannot start, the receiver is killed and reaped.
pub fn start_receiver_then_sender(
    recv: &mut Command,
    send: &mut Command,
    sender_stdout: Stdio,
) -> Result<(Child, Child), String> {
    let mut receiver = recv
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .map_err(|e| format!("start receiver: {e}"))?;
    std::thread::sleep(Duration::from_millis(100));
    match send.stdout(sender_stdout).stderr(Stdio::inherit()).spawn() {
        Ok(sender) => Ok((receiver, sender)),
        Err(e) => {
            let _ = receiver.kill();
            let _ = receiver.wait();
            Err(format!("start sender: {e}"))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_the_row_of_a_child() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "echo a,b; echo 1,2"]);
        let row = run_for_row(&mut cmd, Duration::from_secs(30), "sh").unwrap();
        assert_eq!(row.get("b"), Some("2"));
    }

    #[test]
    fn a_failing_child_is_an_error() {
        let mut cmd = Command::new("sh");
        cmd.args(["-c", "exit 3"]);
        assert!(run_for_row(&mut cmd, Duration::from_secs(30), "sh").is_err());
    }
}
