//! Command lines of the two UDP benchmark processes, shared by the
//! `udp-receiver` / `udp-sender` binaries and by `udp-sweep`, which re-runs
//! its own executable as `udp-sweep receive ...` / `udp-sweep send ...` so
//! that the sweep always runs the code it was built with.

use std::process::ExitCode;
use std::time::Duration;

use crate::affinity::pin_current_thread_to;
use crate::args::Args;
use crate::fd_limit::ensure_open_files_for;
use crate::packet::DEFAULT_SIZE;
use crate::receivers::{ReceiverRuntime, RUNTIME_NAMES};
use crate::udp_receiver::{run_receiver, ReceiverConfig};
use crate::udp_sender::{run_sender, SenderConfig};
use crate::udp_socket::DEFAULT_RCVBUF;

/// `udp-receiver --help` (and `udp-sweep receive --help`).
pub const RECEIVER_USAGE: &str = "\
usage: udp-receiver --runtime NAME [options]

Receives N UDP streams on 127.0.0.1 (ports base-port..base-port+N) with the
runtime under test, one receive loop per socket, and measures CPU, loss and
latency over a window. Start it before udp-sender. Prints one CSV row on
stdout (the header first with --header) and a summary on stderr.

  --runtime NAME       tokio, threads, mio-loop, mio-throttled:T,
                       mio-throttled-mmsg:T, mio-throttled-lt:T,
                       mio-throttled-lt-streambuf:T, uring-throttled:T,
                       uring-throttled-dense:T, tempo,
                       tempo-throttled:T, tempo-throttled-batch:T,
                       tempo-throttled-splitG:T (G runtimes on G threads,
                       sockets dealt round-robin),
                       tempo-throttled-uring[-dense]:T (T in ms); required
  --streams N          sockets / streams (default 1000); raises the open-files
                       limit to N + 64, or says how to
  --base-port P        port of stream 0 (default 20000)
  --rcvbuf BYTES       SO_RCVBUF requested per socket (default 32768)
  --interval-ms MS     the sender's interval, for the expected count (default 20)
  --warmup-secs S      not measured (default 2)
  --window-secs S      measured (default 5)
  --cpu K              pin the receiver to CPU K
  --header             print the CSV header line first
  -h, --help           this text
";

/// `udp-sender --help` (and `udp-sweep send --help`).
pub const SENDER_USAGE: &str = "\
usage: udp-sender [options]

Sends N streams of S-byte datagrams, one per stream every I ms, to
127.0.0.1 ports base-port..base-port+N, with sendmmsg from one socket. Prints
one CSV row on stdout (the header first with --header) and a summary on
stderr, which says if the sender fell behind its schedule.

  --streams N          destination ports / streams (default 1000)
  --base-port P        port of stream 0 (default 20000)
  --size BYTES         datagram size (default 160)
  --interval-ms MS     per-stream interval (default 20)
  --secs S             how long to send (default 10)
  --burst              send each interval's datagrams at once instead of
                       spreading the streams over the interval
  --quantum-us US      sleep granularity between sends (default 500)
  --cpu K              pin the sender to CPU K
  --header             print the CSV header line first
  -h, --help           this text
";

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
    if args.help() {
        print!("{RECEIVER_USAGE}");
        return Ok(());
    }
    let name: String = args
        .raw("runtime")?
        .ok_or_else(|| format!("--runtime is required ({})", RUNTIME_NAMES.join(", ")))?;
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
    ensure_open_files_for(cfg.streams)?;
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
    if args.help() {
        print!("{SENDER_USAGE}");
        return Ok(());
    }
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
