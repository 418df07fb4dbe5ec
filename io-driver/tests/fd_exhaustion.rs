//! Running out of file descriptors: `bind`, `accept` and a thread's first
//! ring receiver fail with a clear error and the sockets that exist keep
//! working.
//!
//! RLIMIT_NOFILE is process-wide, so the test re-executes this test binary
//! in a child process (selected by an environment variable) and lowers the
//! limit there only.

mod support;

use std::io;
use std::process::Command;

use support::block_on;
use tempo_io::net::{TcpListener, TcpStream, UdpRingReceiver, UdpSocket};
use tempo_io::Driver;

const CHILD_ENV: &str = "TEMPO_IO_FD_EXHAUSTION_CHILD";

#[test]
fn bind_and_accept_fail_clearly_and_existing_sockets_keep_working() {
    if std::env::var_os(CHILD_ENV).is_some() {
        child();
        return;
    }
    let output = Command::new(std::env::current_exe().unwrap())
        .args([
            "--exact",
            "bind_and_accept_fail_clearly_and_existing_sockets_keep_working",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CHILD_ENV, "1")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success() && stdout.contains("child: done"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
}

fn is_out_of_fds(e: &io::Error) -> bool {
    e.raw_os_error() == Some(libc::EMFILE) && e.to_string().contains("Too many open files")
}

fn child() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let udp = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let client = TcpStream::connect(listener.local_addr().unwrap())
            .await
            .unwrap();
        let spare = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();

        // Lower the soft limit to just above what is open, then fill it.
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: `lim` is a valid, writable rlimit.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        let open = std::fs::read_dir("/proc/self/fd").unwrap().count() as libc::rlim_t;
        lim.rlim_cur = open + 16;
        // SAFETY: a valid rlimit with cur <= max (the hard limit is far higher).
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
        let mut fillers = Vec::new();
        let bind_error = loop {
            match UdpSocket::bind("127.0.0.1:0").await {
                Ok(s) => fillers.push(s),
                Err(e) => break e,
            }
            assert!(fillers.len() < 100, "the lowered limit was not reached");
        };
        assert!(is_out_of_fds(&bind_error), "bind: {bind_error:?}");
        let accept_error = listener.accept().await.unwrap_err();
        assert!(is_out_of_fds(&accept_error), "accept: {accept_error:?}");
        // The thread's first ring receiver needs two descriptors (the
        // ring, its eventfd): it fails with the same error, and is not
        // quietly put on epoll instead.
        let ring_error = UdpRingReceiver::from_std(spare, 1500).unwrap_err();
        assert!(is_out_of_fds(&ring_error), "ring receiver: {ring_error:?}");

        // Existing sockets keep working while the process is out of fds.
        let peer = &fillers[0];
        peer.send_to(b"still here", udp.local_addr().unwrap())
            .await
            .unwrap();
        let mut buf = [0u8; 16];
        let (n, _) = udp.recv_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"still here");

        // Freeing a descriptor lets the pending connection be accepted.
        fillers.pop();
        let (accepted, _) = listener.accept().await.unwrap();
        client.write_all(b"ok").await.unwrap();
        let mut got = 0;
        while got < 2 {
            got += accepted.read(&mut buf[got..2]).await.unwrap();
        }
        assert_eq!(&buf[..2], b"ok");
    });
    println!("child: done");
}
