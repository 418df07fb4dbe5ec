//! The `tokio-compat` feature: tokio's runtime-bound calls, unchanged,
//! inside Tempo tasks on both schedulers, on a context, and under
//! `#[tempo::test]`, and a tokio-bound crate built on them (hyper's HTTP/1
//! server and client over 127.0.0.1). None of these runtimes enables
//! Tempo's own drivers: tokio's calls need only the helper runtime.
//!
//! Run with `cargo test -p tempo --features tokio-compat --test tokio_compat`
//! (the README's test command does).
#![cfg(feature = "tokio-compat")]

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::{Method, Request, Response, StatusCode};
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};

mod support;
use support::*;

/// The name of the thread the caller runs on.
fn thread_name() -> Option<String> {
    std::thread::current().name().map(str::to_owned)
}

/// A fresh path under the system's temp dir, removed on drop.
struct TempPath(std::path::PathBuf);

impl TempPath {
    fn new(test: &str) -> TempPath {
        static NEXT: AtomicUsize = AtomicUsize::new(0);
        TempPath(std::env::temp_dir().join(format!(
            "tempo-tokio-compat-{}-{test}-{}",
            std::process::id(),
            NEXT.fetch_add(1, Relaxed)
        )))
    }
}

impl Drop for TempPath {
    fn drop(&mut self) {
        let _ = std::fs::remove_file(&self.0);
    }
}

/// A tokio stream seen through hyper's I/O traits.
///
/// hyper 1 has its own `hyper::rt::{Read, Write}` so that it is not tied to
/// tokio; `hyper-util`'s `TokioIo` bridges the two, but the test needs only
/// this much of it and keeps hyper-util out of the build. Reads go through
/// a small stack buffer and `ReadBufCursor::put_slice`, so the adapter needs
/// no `unsafe` (a copy per read is nothing in a test); writes, flushes and
/// shutdowns are forwarded as they are. The inner streams of the test are
/// `Unpin`, so no pin projection is needed either.
struct HyperIo<T>(T);

impl<T: AsyncRead + Unpin> hyper::rt::Read for HyperIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        mut buf: hyper::rt::ReadBufCursor<'_>,
    ) -> Poll<std::io::Result<()>> {
        let mut bounce = [0u8; 4096];
        let len = bounce.len().min(buf.remaining());
        let mut read = tokio::io::ReadBuf::new(&mut bounce[..len]);
        match Pin::new(&mut self.0).poll_read(cx, &mut read) {
            Poll::Ready(Ok(())) => {
                // Nothing filled is end of stream, in both traits.
                buf.put_slice(read.filled());
                Poll::Ready(Ok(()))
            }
            other => other,
        }
    }
}

impl<T: AsyncWrite + Unpin> hyper::rt::Write for HyperIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<std::io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }

    fn is_write_vectored(&self) -> bool {
        self.0.is_write_vectored()
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[std::io::IoSlice<'_>],
    ) -> Poll<std::io::Result<usize>> {
        Pin::new(&mut self.0).poll_write_vectored(cx, bufs)
    }
}

/// Where a hyper connection task of [`hyper_exchange`] runs.
#[derive(Debug, Clone, Copy)]
enum SpawnOn {
    /// `tokio::spawn`: the helper runtime's worker thread.
    Tokio,
    /// `tempo::spawn`: the Tempo runtime's own thread.
    Tempo,
}

impl SpawnOn {
    /// Spawns `task` here; the returned future is its output (a panic in
    /// the task fails the test when it is awaited).
    fn spawn<F>(self, task: F) -> Pin<Box<dyn Future<Output = F::Output> + Send>>
    where
        F: Future + Send + 'static,
        F::Output: Send + 'static,
    {
        match self {
            SpawnOn::Tokio => {
                let join = tokio::spawn(task);
                Box::pin(async move { join.await.unwrap() })
            }
            SpawnOn::Tempo => {
                let join = tempo::spawn(task);
                Box::pin(async move { join.await.unwrap() })
            }
        }
    }
}

/// Requests the hyper test sends on its one connection.
const HTTP_REQUESTS: usize = 3;

/// The bound on the whole exchange: far beyond what it takes, so that a
/// stuck exchange fails the test instead of hanging it (not a timing
/// assertion).
const HTTP_DEADLINE: Duration = Duration::from_secs(60);

/// One exchange of hyper's HTTP/1 server and client over 127.0.0.1 on
/// tokio's sockets: the server's connection is served by a task spawned
/// `server_on`, the client's connection is driven by a task spawned
/// `client_on`, and the caller sends [`HTTP_REQUESTS`] POSTs with bodies
/// on the client's `SendRequest`. The server echoes each body with status
/// 201 and the request's path in a header.
async fn hyper_exchange(server_on: SpawnOn, client_on: SpawnOn) -> Exchange {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();

    let served = Arc::new(Mutex::new(Vec::new()));
    let seen = served.clone();
    let server = server_on.spawn(async move {
        let (stream, _) = listener.accept().await.unwrap();
        let echo = hyper::service::service_fn(move |request: Request<Incoming>| {
            seen.lock().unwrap().push(thread_name());
            async move {
                let path = request.uri().path().to_owned();
                let body = request.into_body().collect().await?.to_bytes();
                Ok::<_, hyper::Error>(
                    Response::builder()
                        .status(StatusCode::CREATED)
                        .header("x-echo-path", path)
                        .body(Full::new(body))
                        .unwrap(),
                )
            }
        });
        // Ends when the client closes the connection.
        hyper::server::conn::http1::Builder::new()
            .serve_connection(HyperIo(stream), echo)
            .await
    });

    let stream = tokio::net::TcpStream::connect(addr).await.unwrap();
    let (mut sender, connection) =
        hyper::client::conn::http1::handshake::<_, Full<Bytes>>(HyperIo(stream))
            .await
            .unwrap();
    let client = client_on.spawn(connection);

    let mut replies = Vec::new();
    for i in 0..HTTP_REQUESTS {
        sender.ready().await.unwrap();
        let request = Request::builder()
            .method(Method::POST)
            .uri(format!("/echo/{i}"))
            .header(hyper::header::HOST, addr.to_string())
            .body(Full::new(Bytes::from(format!("body of request {i}"))))
            .unwrap();
        let response = sender.send_request(request).await.unwrap();
        let status = response.status();
        let path = response.headers()["x-echo-path"]
            .to_str()
            .unwrap()
            .to_owned();
        let body = response.into_body().collect().await.unwrap().to_bytes();
        replies.push((status, path, body));
    }
    // Dropping the sender ends the client's connection task, which closes
    // the socket, which ends the server's.
    drop(sender);
    client.await.unwrap();
    server.await.unwrap();
    let served = std::mem::take(&mut *served.lock().unwrap());
    Exchange { replies, served }
}

/// What [`hyper_exchange`] saw.
struct Exchange {
    /// Per request, as the client received it: the status, the
    /// `x-echo-path` header and the body.
    replies: Vec<(StatusCode, String, Bytes)>,
    /// Per request the server's service handled, the name of the thread it
    /// ran on (the thread of the task serving the connection).
    served: Vec<Option<String>>,
}

impl Exchange {
    /// Asserts that every request was answered with its own echo and served
    /// on the thread of `server_on` (the helper's, or the Tempo runtime's
    /// whose thread is named `tempo_thread`).
    fn check(&self, server_on: SpawnOn, tempo_thread: &Option<String>, flavor: Flavor) {
        assert_eq!(self.replies, expected_replies(), "{}", flavor.name());
        let server_thread = match server_on {
            SpawnOn::Tokio => Some(tempo::tokio_compat::THREAD_NAME.to_owned()),
            SpawnOn::Tempo => tempo_thread.clone(),
        };
        assert_eq!(
            self.served,
            vec![server_thread; HTTP_REQUESTS],
            "{}: {server_on:?}",
            flavor.name()
        );
    }
}

/// What [`hyper_exchange`] must return.
fn expected_replies() -> Vec<(StatusCode, String, Bytes)> {
    (0..HTTP_REQUESTS)
        .map(|i| {
            (
                StatusCode::CREATED,
                format!("/echo/{i}"),
                Bytes::from(format!("body of request {i}")),
            )
        })
        .collect()
}

on_each_flavor! {
    #[test]
    fn tokio_spawn_runs_on_the_helper_and_is_awaited_from_a_tempo_task() {
        let rt = builder().build().unwrap();
        let (ours, theirs) = rt.block_on(async {
            let theirs = tokio::spawn(async { thread_name() }).await.unwrap();
            (thread_name(), theirs)
        });
        assert_eq!(theirs.as_deref(), Some(tempo::tokio_compat::THREAD_NAME));
        assert_ne!(ours, theirs, "{}: tokio::spawn ran on Tempo's thread", FLAVOR.name());
    }

    #[test]
    fn a_panic_in_a_tokio_task_reaches_the_tempo_task_as_under_tokio() {
        let rt = builder().build().unwrap();
        let err = rt
            .block_on(rt.spawn(async {
                tokio::spawn(async { panic!("boom in tokio") }).await.unwrap_err()
            }))
            .unwrap();
        assert!(err.is_panic());
        assert_eq!(*err.into_panic().downcast::<&str>().unwrap(), "boom in tokio");
    }

    #[test]
    fn tokio_sleep_interval_and_timeout_in_a_tempo_task() {
        let rt = builder().build().unwrap();
        let (timed_out, in_time) = rt.block_on(rt.spawn(async {
            tokio::time::sleep(Duration::from_millis(1)).await;
            let mut interval = tokio::time::interval(Duration::from_millis(1));
            interval.tick().await; // the first tick is immediate
            interval.tick().await;
            let timed_out =
                tokio::time::timeout(Duration::from_millis(1), std::future::pending::<()>()).await;
            let in_time = tokio::time::timeout(Duration::from_secs(3600), async { 5 }).await;
            (timed_out.is_err(), in_time)
        }))
        .unwrap();
        assert!(timed_out);
        assert_eq!(in_time, Ok(5));
    }

    #[test]
    fn tokio_tcp_echo_over_loopback() {
        let rt = builder().build().unwrap();
        let echoed = rt.block_on(async {
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
            let addr = listener.local_addr().unwrap();
            let server = tempo::spawn(async move {
                let (mut stream, _) = listener.accept().await.unwrap();
                let mut buf = [0u8; 64];
                let n = stream.read(&mut buf).await.unwrap();
                stream.write_all(&buf[..n]).await.unwrap();
            });
            let mut client = tokio::net::TcpStream::connect(addr).await.unwrap();
            client.write_all(b"ping").await.unwrap();
            let mut echoed = Vec::new();
            client.read_to_end(&mut echoed).await.unwrap();
            server.await.unwrap();
            echoed
        });
        assert_eq!(echoed, b"ping");
    }

    #[test]
    fn hyper_http1_server_on_tokio_spawn_client_on_tempo_spawn() {
        let rt = builder().build().unwrap();
        // The client side in a Tempo task, which runs on this thread.
        let exchange = rt
            .block_on(rt.spawn(async {
                tokio::time::timeout(HTTP_DEADLINE, hyper_exchange(SpawnOn::Tokio, SpawnOn::Tempo))
                    .await
                    .expect("the HTTP/1 exchange did not finish")
            }))
            .unwrap();
        exchange.check(SpawnOn::Tokio, &thread_name(), FLAVOR);
    }

    #[test]
    fn hyper_http1_server_on_tempo_spawn_client_on_tokio_spawn() {
        let rt = builder().build().unwrap();
        // The client side in a Tempo task, which runs on this thread.
        let exchange = rt
            .block_on(rt.spawn(async {
                tokio::time::timeout(HTTP_DEADLINE, hyper_exchange(SpawnOn::Tempo, SpawnOn::Tokio))
                    .await
                    .expect("the HTTP/1 exchange did not finish")
            }))
            .unwrap();
        exchange.check(SpawnOn::Tempo, &thread_name(), FLAVOR);
    }

    #[test]
    fn tokio_fs_file_write_then_read() {
        let rt = builder().build().unwrap();
        let path = TempPath::new(FLAVOR.name());
        let read = rt.block_on(async {
            let mut file = tokio::fs::File::create(&path.0).await.unwrap();
            file.write_all(b"recorded").await.unwrap();
            file.flush().await.unwrap();
            drop(file);
            let mut read = String::new();
            tokio::fs::File::open(&path.0)
                .await
                .unwrap()
                .read_to_string(&mut read)
                .await
                .unwrap();
            read
        });
        assert_eq!(read, "recorded");
    }

    #[test]
    fn tokio_process_runs_true_and_echo() {
        let rt = builder().build().unwrap();
        let (status, output) = rt.block_on(async {
            let status = tokio::process::Command::new("true").status().await.unwrap();
            let output = tokio::process::Command::new("echo").arg("hi").output().await.unwrap();
            (status, output)
        });
        assert!(status.success());
        assert!(output.status.success());
        assert_eq!(output.stdout, b"hi\n");
    }

    #[test]
    fn tokio_spawn_blocking_runs_on_the_helper_pool() {
        let rt = builder().build().unwrap();
        let name = rt
            .block_on(async { tokio::task::spawn_blocking(thread_name).await })
            .unwrap();
        assert_eq!(name.as_deref(), Some(tempo::tokio_compat::THREAD_NAME));
    }

    #[test]
    fn tokio_context_is_entered_only_while_the_runtime_is() {
        let rt = builder().build().unwrap();
        assert!(tokio::runtime::Handle::try_current().is_err());
        assert!(rt.block_on(async { tokio::runtime::Handle::try_current().is_ok() }));
        assert!(tokio::runtime::Handle::try_current().is_err());
        {
            let _entered = rt.enter();
            assert!(tokio::runtime::Handle::try_current().is_ok());
        }
        assert!(tokio::runtime::Handle::try_current().is_err());
        // Handle::enter, from another thread.
        let handle = rt.handle().clone();
        let seen = std::thread::spawn(move || {
            let _entered = handle.enter();
            tokio::runtime::Handle::try_current().is_ok()
        })
        .join()
        .unwrap();
        assert!(seen);
    }

    #[test]
    fn a_host_loop_turn_enters_it_too() {
        let rt = builder().build().unwrap();
        let job = rt.spawn(async { tokio::spawn(async { 7 }).await.unwrap() });
        let mut turns = 0;
        while !job.is_finished() {
            rt.turn(Duration::from_millis(50));
            turns += 1;
            assert!(turns < 10_000, "{}: the tokio task never completed", FLAVOR.name());
        }
        assert_eq!(rt.block_on(job).unwrap(), 7);
    }
}

#[test]
fn one_helper_for_every_runtime_of_the_process() {
    let a = Builder::new_current_thread().build().unwrap();
    let b = Builder::new_current_thread().build().unwrap();
    let id_a = a.block_on(async { tokio::runtime::Handle::current().id() });
    let id_b = b.block_on(async { tokio::runtime::Handle::current().id() });
    assert_eq!(id_a, id_b);
    assert_eq!(id_a, tempo::tokio_compat::handle().unwrap().id());
}

#[test]
fn tokio_calls_on_a_context() {
    let ctx = tempo::context::Context::acquire("tokio-compat-ctx", THROTTLE).unwrap();
    let (on_context, echoed) = ctx.block_on(async {
        tokio::time::sleep(Duration::from_millis(1)).await;
        let socket = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
        let addr = socket.local_addr().unwrap();
        let sender = tokio::spawn(async move {
            let out = tokio::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            out.send_to(b"ctx", addr).await.unwrap();
        });
        let mut buf = [0u8; 8];
        let (n, _) = socket.recv_from(&mut buf).await.unwrap();
        sender.await.unwrap();
        (thread_name(), buf[..n].to_vec())
    });
    assert_eq!(on_context.as_deref(), Some("tokio-compat-ctx"));
    assert_eq!(echoed, b"ctx");
}

/// `#[tempo::test]` needs nothing more: the feature on `tempo` is enough.
#[tempo::test(max_throttling = "5ms")]
async fn under_the_test_macro() {
    tokio::time::sleep(Duration::from_millis(1)).await;
    assert_eq!(tokio::spawn(async { 3 }).await.unwrap(), 3);
}

#[test]
fn off_a_tempo_thread_the_join_error_says_how_to_enter_the_helper() {
    let rt = Builder::new_current_thread().build().unwrap();
    let err = rt
        .block_on(rt.spawn(async {
            // A plain thread started by a task is not a Tempo runtime's.
            let panic = std::thread::spawn(|| tokio::runtime::Handle::current())
                .join()
                .unwrap_err();
            std::panic::resume_unwind(panic)
        }))
        .unwrap_err();
    let message = err.to_string();
    assert!(message.contains("no reactor running"), "{message}");
    assert!(
        message.contains("tempo::tokio_compat::handle()"),
        "{message}"
    );
}
