//! The `*_buf` receive methods (feature `bytes`): `recv_buf`,
//! `recv_buf_from`, their `try_*` forms, and `try_read_buf`.

mod support;

use std::io;

use bytes::{BufMut, BytesMut};
use support::{block_on, tcp_pair};
use tempo_io::net::{UdpSocket, UnixDatagram, UnixStream};
use tempo_io::Driver;

#[test]
fn udp_recv_buf_appends_each_datagram() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        a.connect(b.local_addr().unwrap()).await.unwrap();
        b.connect(a.local_addr().unwrap()).await.unwrap();

        let mut buf = Vec::with_capacity(64);
        buf.extend_from_slice(b">");
        b.send(b"one").await.unwrap();
        assert_eq!(a.recv_buf(&mut buf).await.unwrap(), 3);
        assert_eq!(buf, b">one");

        let mut bytes = BytesMut::with_capacity(64);
        b.send(b"two").await.unwrap();
        let (n, from) = a.recv_buf_from(&mut bytes).await.unwrap();
        assert_eq!((n, from), (3, b.local_addr().unwrap()));
        assert_eq!(&bytes[..], b"two");

        assert_eq!(
            a.try_recv_buf(&mut bytes).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
        assert_eq!(bytes.len(), 3, "a failed receive appends nothing");
        b.send(b"three").await.unwrap();
        a.readable().await.unwrap();
        let (n, from) = a.try_recv_buf_from(&mut bytes).unwrap();
        assert_eq!((n, from), (5, b.local_addr().unwrap()));
        assert_eq!(&bytes[..], b"twothree");
    });
}

#[test]
fn a_datagram_longer_than_the_chunk_is_truncated_to_it() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let a = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let b = UdpSocket::bind("127.0.0.1:0").await.unwrap();
        b.send_to(&[7u8; 100], a.local_addr().unwrap())
            .await
            .unwrap();
        let mut small = [0u8; 10];
        let mut dst = &mut small[..];
        assert_eq!(a.recv_buf(&mut dst).await.unwrap(), 10);
        assert_eq!(dst.remaining_mut(), 0);
        assert_eq!(small, [7u8; 10]);
    });
}

#[test]
fn chunks_larger_than_the_kept_scratch_work() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (a, b) = UnixDatagram::pair().unwrap();
        let big: Vec<u8> = (0..100_000u32).map(|i| (i % 251) as u8).collect();
        b.send(&big).await.unwrap();
        let mut buf = Vec::with_capacity(200_000);
        assert_eq!(a.recv_buf(&mut buf).await.unwrap(), big.len());
        assert_eq!(buf, big);
        b.send(b"small").await.unwrap();
        let mut buf = BytesMut::with_capacity(16);
        let (n, _from) = a.recv_buf_from(&mut buf).await.unwrap();
        assert_eq!(&buf[..n], b"small");
        b.send(b"again").await.unwrap();
        a.readable().await.unwrap();
        assert_eq!(a.try_recv_buf(&mut buf).unwrap(), 5);
        assert_eq!(&buf[..], b"smallagain");
        assert_eq!(
            a.try_recv_buf_from(&mut buf).unwrap_err().kind(),
            io::ErrorKind::WouldBlock
        );
    });
}

/// Reads `$stream` with `try_read_buf` until end of stream.
macro_rules! read_to_end_with_try_read_buf {
    ($stream:expr) => {{
        let stream = &$stream;
        let mut buf = BytesMut::with_capacity(8);
        let mut done = false;
        for _ in 0..10_000 {
            stream.readable().await.unwrap();
            match stream.try_read_buf(&mut buf) {
                Ok(0) => {
                    done = true;
                    break;
                }
                Ok(_) => buf.reserve(8),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => continue,
                Err(e) => panic!("{e}"),
            }
        }
        assert!(done, "no end of stream");
        buf
    }};
}

#[test]
fn tcp_and_unix_streams_try_read_buf() {
    let mut driver = Driver::new().unwrap();
    block_on(&mut driver, async {
        let (client, server) = tcp_pair().await;
        client.write_all(b"over tcp, in pieces").await.unwrap();
        client.shutdown().await.unwrap();
        let got = read_to_end_with_try_read_buf!(server);
        assert_eq!(&got[..], b"over tcp, in pieces");

        let (a, b) = UnixStream::pair().unwrap();
        b.write_all(b"over unix").await.unwrap();
        b.shutdown().await.unwrap();
        let got = read_to_end_with_try_read_buf!(a);
        assert_eq!(&got[..], b"over unix");
    });
}
