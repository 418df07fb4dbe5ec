//! The tokio baseline for `udp_recv_count`: the same 1,000 receiving
//! sockets (ports `--base-port` ..), each with tokio's
//! `loop { socket.recv_from(&mut buf).await }`, on tokio's current-thread
//! runtime. Count its syscalls the same way:
//!
//! ```text
//! strace -c -f target/release/examples/tokio_udp_recv_count [--sockets 1000] [--rounds 50] &
//! sleep 1; target/release/examples/udp_recv_count --send [--sockets 1000] [--rounds 50] [--tick-ms 20]; wait
//! ```

fn main() -> std::io::Result<()> {
    let mut sockets = 1000usize;
    let mut rounds = 50u64;
    let mut base_port = 40000u16;
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = || {
            it.next()
                .and_then(|v| v.parse::<u64>().ok())
                .expect("a number after the option")
        };
        match arg.as_str() {
            "--sockets" => sockets = value() as usize,
            "--rounds" => rounds = value(),
            "--base-port" => base_port = value() as u16,
            other => panic!("unknown argument {other}"),
        }
    }
    let mut lim = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `lim` is a valid, writable rlimit.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) } == 0 {
        lim.rlim_cur = (sockets as libc::rlim_t + 64)
            .min(lim.rlim_max)
            .max(lim.rlim_cur);
        // SAFETY: a valid rlimit with cur <= max.
        unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) };
    }
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_io()
        .build()?;
    runtime.block_on(async {
        let mut tasks = Vec::new();
        for i in 0..sockets {
            let socket = tokio::net::UdpSocket::bind(("127.0.0.1", base_port + i as u16)).await?;
            tasks.push(tokio::spawn(async move {
                let mut buf = [0u8; 1500];
                for _ in 0..rounds {
                    socket.recv_from(&mut buf).await.unwrap();
                }
            }));
        }
        for task in tasks {
            task.await.unwrap();
        }
        println!(
            "tokio: sockets={sockets} datagrams={}",
            sockets as u64 * rounds
        );
        Ok(())
    })
}
