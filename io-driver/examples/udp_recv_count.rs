//! A receiver of many UDP streams, for counting syscalls per datagram with
//! `strace -c -f`:
//!
//! ```text
//! cargo build --release -p tempo-io --example udp_recv_count
//! EX=target/release/examples/udp_recv_count
//! strace -c -f $EX [--throttled] [--sockets 1000] [--rounds 50] [--tick-ms 20] &
//! sleep 1; $EX --send [--sockets 1000] [--rounds 50] [--tick-ms 20]; wait
//! ```
//!
//! The sender (`--send`, a separate process so that strace counts the
//! receiver only) sends one 160-byte datagram to each receiving socket
//! (ports `--base-port` ..) every `--tick-ms` (an RTP-like stream of
//! 20 ms packets), for `--rounds` rounds.
//! The receiver runs one `loop { socket.recv_from(..).await }` task per
//! socket and drives them like a throttling scheduler would: run the woken
//! tasks, sleep until the next tick without polling I/O, poll I/O once with a
//! zero timeout. With `--tick-ms 0` it parks in `epoll_wait` instead (the
//! basic scheduler). `--throttled` sets the driver throttled (level-triggered, one `recvfrom` per report).
//!
//! It prints the datagrams received and the ticks; divide strace's
//! `recvfrom` + `recvmmsg` and `epoll_wait` counts by them.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicBool, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Wake, Waker};
use std::time::{Duration, Instant};

use futures::future::join_all;
use tempo_io::net::UdpSocket;
use tempo_io::Driver;
use tempo_park::{IoDriver, Park};

struct FlagWaker(AtomicBool);

impl Wake for FlagWaker {
    fn wake(self: Arc<Self>) {
        self.0.store(true, SeqCst);
    }
    fn wake_by_ref(self: &Arc<Self>) {
        self.0.store(true, SeqCst);
    }
}

struct Args {
    send: bool,
    base_port: u16,
    throttled: bool,
    sockets: usize,
    rounds: u64,
    tick: Duration,
}

fn parse_args() -> Args {
    let mut args = Args {
        send: false,
        base_port: 40000,
        throttled: false,
        sockets: 1000,
        rounds: 50,
        tick: Duration::from_millis(20),
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .and_then(|v| v.parse::<u64>().ok())
                .expect("a number after the option")
        };
        match arg.as_str() {
            "--throttled" => args.throttled = true,
            "--send" => args.send = true,
            "--base-port" => args.base_port = value() as u16,
            "--sockets" => args.sockets = value() as usize,
            "--rounds" => args.rounds = value(),
            "--tick-ms" => args.tick = Duration::from_millis(value()),
            other => panic!("unknown argument {other}; see the example's docs"),
        }
    }
    args
}

fn raise_fd_limit(want: libc::rlim_t) {
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 && lim.rlim_cur < want {
        lim.rlim_cur = want.min(lim.rlim_max);
        // SAFETY: a valid rlimit with cur <= max.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
}

fn addr(args: &Args, i: usize) -> std::net::SocketAddr {
    std::net::SocketAddr::from(([127, 0, 0, 1], args.base_port + i as u16))
}

fn send(args: &Args) {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let payload = [0u8; 160];
    let start = Instant::now();
    for round in 0..args.rounds {
        for i in 0..args.sockets {
            socket.send_to(&payload, addr(args, i)).unwrap();
        }
        let next = start + args.tick.max(Duration::from_millis(1)) * (round as u32 + 1);
        std::thread::sleep(next.saturating_duration_since(Instant::now()));
    }
}

fn main() -> std::io::Result<()> {
    let args = parse_args();
    if args.send {
        send(&args);
        return Ok(());
    }
    raise_fd_limit(args.sockets as libc::rlim_t + 64);
    let mut driver = Driver::new()?;
    driver.set_throttled(args.throttled);
    let handle = driver.handle();
    let _enter = handle.enter();

    let sockets = (0..args.sockets)
        .map(|i| UdpSocket::from_std(std::net::UdpSocket::bind(addr(&args, i))?))
        .collect::<std::io::Result<Vec<_>>>()?;
    let (rounds, tick) = (args.rounds, args.tick);

    let receivers = join_all(sockets.iter().map(|socket| async move {
        let mut buf = [0u8; 1500];
        for _ in 0..rounds {
            socket.recv_from(&mut buf).await.unwrap();
        }
    }));
    let flag = Arc::new(FlagWaker(AtomicBool::new(true)));
    let waker = Waker::from(flag.clone());
    let mut cx = Context::from_waker(&waker);
    let mut receivers = pin!(receivers);
    let start = Instant::now();
    let mut ticks = 0u64;
    'run: loop {
        // Run until no task is ready (join_all may yield early).
        while flag.0.swap(false, SeqCst) {
            if receivers.as_mut().poll(&mut cx).is_ready() {
                break 'run;
            }
        }
        if tick.is_zero() {
            driver.park()?;
        } else {
            // Throttling: sleep to the next tick on a fixed grid, then poll
            // I/O once without blocking.
            let next = start + tick * (ticks as u32 + 1);
            std::thread::sleep(next.saturating_duration_since(Instant::now()));
            driver.park_timeout(Duration::ZERO)?;
        }
        ticks += 1;
    }
    let datagrams = args.sockets as u64 * rounds;
    println!(
        "throttled={} sockets={} datagrams={datagrams} ticks={ticks} io_events={}",
        args.throttled,
        args.sockets,
        driver.stats().io_events
    );
    Ok(())
}
