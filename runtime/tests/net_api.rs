//! The everyday net API on both schedulers: `TcpSocket`, `ready(Interest)`,
//! `peek_sender`, and the I/O driver's pollable fd.

mod support;

use std::os::fd::AsRawFd;
use std::time::Duration;

use support::*;
use tempo::io::Interest;
use tempo::net::{TcpSocket, UdpSocket};

on_each_flavor! {
    #[test]
    fn tcp_socket_listen_and_connect() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            let socket = TcpSocket::new_v4().unwrap();
            socket.set_reuseaddr(true).unwrap();
            socket.bind("127.0.0.1:0".parse().unwrap()).unwrap();
            let listener = socket.listen(1024).unwrap();
            let addr = listener.local_addr().unwrap();
            let server = tempo::spawn(async move {
                let (stream, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 4];
                let mut got = 0;
                while got < 4 {
                    got += stream.read(&mut buf[got..]).await.unwrap();
                }
                buf
            });
            let client = TcpSocket::new_v4().unwrap();
            client.set_nodelay(true).unwrap();
            let stream = client.connect(addr).await.unwrap();
            assert!(stream.ready(Interest::WRITABLE).await.unwrap().is_writable());
            stream.write_all(b"tcp!").await.unwrap();
            assert_eq!(&server.await.unwrap(), b"tcp!");
        });
    }

    #[test]
    fn ready_and_peek_sender_on_a_udp_socket() {
        let rt = builder().enable_all().build().unwrap();
        rt.block_on(async {
            let receiver = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let sender = UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let to = receiver.local_addr().unwrap();
            let waiter = tempo::spawn(async move {
                let ready = receiver.ready(Interest::READABLE).await.unwrap();
                assert!(ready.is_readable(), "{ready:?}");
                let from = receiver.peek_sender().await.unwrap();
                let mut buf = [0u8; 8];
                let (n, same) = receiver.recv_from(&mut buf).await.unwrap();
                assert_eq!(from, same);
                (buf[..n].to_vec(), from)
            });
            sender.send_to(b"udp", to).await.unwrap();
            let (got, from) = waiter.await.unwrap();
            assert_eq!(got, b"udp");
            assert_eq!(from, sender.local_addr().unwrap());
        });
    }

    #[test]
    fn the_io_fd_is_the_drivers_and_turn_dispatches_it() {
        let rt = builder().enable_all().build().unwrap();
        let fd = rt.io_fd().expect("enable_io").as_raw_fd();
        assert!(fd >= 0);
        let socket = rt.block_on(UdpSocket::bind("127.0.0.1:0")).unwrap();
        let to = socket.local_addr().unwrap();
        let receiver = rt.spawn(async move {
            let mut buf = [0u8; 8];
            socket.recv_from(&mut buf).await.unwrap().0
        });
        std::net::UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .send_to(b"host", to)
            .unwrap();
        // A host loop: each turn polls without blocking; bounded.
        for _ in 0..1_000 {
            if receiver.is_finished() {
                break;
            }
            rt.turn(Duration::from_millis(1));
        }
        assert!(receiver.is_finished());
        assert_eq!(rt.block_on(receiver).unwrap(), 4);
        assert!(builder().build().unwrap().io_fd().is_none());
    }
}
