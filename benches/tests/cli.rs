//! The benchmark binaries' command lines: `--help` prints the usage and
//! exits successfully (it used to fail with "unknown arguments: --help"),
//! and an unknown option still fails.

use std::process::Command;

fn run(exe: &str, args: &[&str]) -> (bool, String, String) {
    let out = Command::new(exe)
        .args(args)
        .output()
        .expect("run the binary");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn every_binary_prints_its_usage_on_help() {
    let cases: &[(&str, &[&str], &str)] = &[
        (
            env!("CARGO_BIN_EXE_udp-sweep"),
            &["--help"],
            "usage: udp-sweep",
        ),
        (env!("CARGO_BIN_EXE_udp-sweep"), &["-h"], "usage: udp-sweep"),
        (
            env!("CARGO_BIN_EXE_udp-sweep"),
            &["receive", "--help"],
            "usage: udp-receiver",
        ),
        (
            env!("CARGO_BIN_EXE_udp-sweep"),
            &["send", "--help"],
            "usage: udp-sender",
        ),
        (
            env!("CARGO_BIN_EXE_udp-sweep"),
            &["syscalls", "--help"],
            "syscalls",
        ),
        (
            env!("CARGO_BIN_EXE_udp-receiver"),
            &["--help"],
            "usage: udp-receiver",
        ),
        (
            env!("CARGO_BIN_EXE_udp-sender"),
            &["--help"],
            "usage: udp-sender",
        ),
        (
            env!("CARGO_BIN_EXE_timer-streams"),
            &["--help"],
            "usage: timer-streams",
        ),
        (
            env!("CARGO_BIN_EXE_timer-streams"),
            &["point", "--help"],
            "usage: timer-streams",
        ),
    ];
    for (exe, args, expected) in cases {
        let (ok, stdout, stderr) = run(exe, args);
        assert!(ok, "{exe} {args:?} failed: {stderr}");
        assert!(
            stdout.contains(expected),
            "{exe} {args:?} printed: {stdout}"
        );
        assert!(stdout.contains("--"), "{exe} {args:?}: no options listed");
    }
}

#[test]
fn the_sweep_usage_names_the_output_rule_and_the_new_columns() {
    let (_, usage, _) = run(env!("CARGO_BIN_EXE_udp-sweep"), &["--help"]);
    assert!(usage.contains("--out"));
    assert!(usage.contains("results/runs/"));
    assert!(usage.contains("8000"));
    assert!(usage.contains("udp_latency.svg"));
}

#[test]
fn an_unknown_option_still_fails() {
    let (ok, _, stderr) = run(env!("CARGO_BIN_EXE_udp-sweep"), &["--bogus", "1"]);
    assert!(!ok);
    assert!(stderr.contains("unknown arguments"), "{stderr}");
}
