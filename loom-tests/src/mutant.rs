//! [`must_catch`]: run a model on a mutant in a child process and check
//! that loom caught it.

use std::process::Command;

/// Runs the calling test again in a child process with `env` set (the
/// test then runs its model on the mutant: see [`is_mutant_run`]), and
/// checks that the child failed with `expected` in its output: loom
/// caught the bug. A child process, because loom's deadlock and
/// failed-assertion panics can abort the process (its guards panic again
/// while unwinding).
///
/// # Panics
///
/// If the child passed (the model does not see the bug), or failed
/// without `expected` in its stderr.
pub fn must_catch(test: &str, env: &str, expected: &str) {
    let output = Command::new(std::env::current_exe().unwrap())
        .args(["--exact", test, "--test-threads=1", "--nocapture"])
        .env(env, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    let stderr = String::from_utf8_lossy(&output.stderr);
    assert!(
        !output.status.success(),
        "the mutant passed: the model does not see the bug\n{stdout}\n{stderr}"
    );
    assert!(
        stderr.contains(expected),
        "the mutant failed, but not with {expected:?} ({}):\n{stderr}",
        output.status
    );
}

/// Whether this process is the child [`must_catch`] started for `env`.
pub fn is_mutant_run(env: &str) -> bool {
    std::env::var_os(env).is_some()
}
