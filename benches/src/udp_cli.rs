//! Command lines of the two UDP benchmark processes, shared by the
//! `udp-receiver` / `udp-sender` binaries and by `udp-sweep`, which re-runs
//! its own executable as `udp-sweep receive ...` / `udp-sweep send ...` so
//! that the sweep always runs the code it was built with.

use std::process::ExitCode;
use std::time::Duration;

use crate::affinity::pin_current_thread_to;
use crate::args::Args;
use crate::fd_limit::raise_open_files_limit;
use crate::packet::DEFAULT_SIZE;
use crate::receivers::ReceiverRuntime;
use crate::udp_receiver::{run_receiver, ReceiverConfig};
use crate::udp_sender::{run_sender, SenderConfig};
use crate::udp_socket::DEFAULT_RCVBUF;

/// Default port of stream 0: below the ephemeral range (32768..), so that
/// other programs' `bind(0)` never takes the benchmark's ports.
pub const DEFAULT_BASE_PORT: u16 = 20000;

fn cpu_arg(args: &mut Args) -> Result<Option<usize>, String> {
    args.raw("cpu")?
        .map(|c| c.parse().map_err(|e| format!("--cpu {c}: {e}")))
        .transpose()
}

fn secs(v: f64) -> Duration {
    Duration::from_secs_f64(v.max(0.0))
}

/// Runs the receiver as described by `args`; prints the row and summary.
pub fn receiver_main(args: Args) -> ExitCode {
    report_exit("udp-receiver", receiver(args))
}

/// Runs the sender as described by `args`; prints the row and summary.
pub fn sender_main(args: Args) -> ExitCode {
    report_exit("udp-sender", sender(args))
}

fn report_exit(who: &str, r: Result<(), String>) -> ExitCode {
    match r {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{who}: {e}");
            ExitCode::FAILURE
        }
    }
}

fn receiver(mut args: Args) -> Result<(), String> {
    let name: String = args
        .raw("runtime")?
        .ok_or("--runtime is required (tokio, threads, mio-loop, mio-throttled:T, tempo, tempo-throttled:T)")?;
    let runtime = ReceiverRuntime::parse(&name).map_err(|e| e.to_string())?;
    let cfg = ReceiverConfig {
        runtime,
        streams: args.value("streams", 1000usize)?,
        base_port: args.value("base-port", DEFAULT_BASE_PORT)?,
        rcvbuf: args.value("rcvbuf", DEFAULT_RCVBUF)?,
        interval: Duration::from_secs_f64(args.value("interval-ms", 20.0f64)? / 1e3),
        warmup: secs(args.value("warmup-secs", 2.0f64)?),
        window: secs(args.value("window-secs", 5.0f64)?),
    };
    let cpu = cpu_arg(&mut args)?;
    let header = args.flag("header");
    args.finish()?;
    if let Some(cpu) = cpu {
        pin_current_thread_to(cpu).map_err(|e| format!("pin to cpu {cpu}: {e}"))?;
    }
    raise_open_files_limit().map_err(|e| format!("raise RLIMIT_NOFILE: {e}"))?;
    let result = run_receiver(&cfg).map_err(|e| e.to_string())?;
    let row = result.to_row();
    if header {
        println!("{}", row.header());
    }
    println!("{}", row.values());
    eprintln!("udp-receiver: {}", result.summary());
    Ok(())
}

fn sender(mut args: Args) -> Result<(), String> {
    let cfg = SenderConfig {
        streams: args.value("streams", 1000usize)?,
        base_port: args.value("base-port", DEFAULT_BASE_PORT)?,
        size: args.value("size", DEFAULT_SIZE)?,
        interval: Duration::from_secs_f64(args.value("interval-ms", 20.0f64)? / 1e3),
        duration: secs(args.value("secs", 10.0f64)?),
        burst: args.flag("burst"),
        quantum: Duration::from_micros(args.value("quantum-us", 500u64)?),
    };
    let cpu = cpu_arg(&mut args)?;
    let header = args.flag("header");
    args.finish()?;
    if let Some(cpu) = cpu {
        pin_current_thread_to(cpu).map_err(|e| format!("pin to cpu {cpu}: {e}"))?;
    }
    let report = run_sender(&cfg).map_err(|e| e.to_string())?;
    let row = report.to_row(&cfg);
    if header {
        println!("{}", row.header());
    }
    println!("{}", row.values());
    eprintln!(
        "udp-sender: {} streams x {} B every {:?}: sent {} ({} errors) in {:.2} s = {:.0} dgram/s, \
         max lag {:?}, mean lag {:?}, cpu {:.1}%{}",
        cfg.streams,
        cfg.size,
        cfg.interval,
        report.sent,
        report.errors,
        report.elapsed.as_secs_f64(),
        report.sent as f64 / report.elapsed.as_secs_f64().max(1e-9),
        report.max_lag,
        report.mean_lag,
        report.cpu_pct,
        if report.fell_behind(cfg.interval) {
            " -- FELL BEHIND: the sender, not the receiver, is the limit"
        } else {
            ""
        }
    );
    Ok(())
}
