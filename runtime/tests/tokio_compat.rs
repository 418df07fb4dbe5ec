//! The `tokio-compat` feature: tokio's runtime-bound calls, unchanged,
//! inside Tempo tasks on both schedulers, on a context, and under
//! `#[tempo::test]`. None of these runtimes enables Tempo's own drivers:
//! tokio's calls need only the helper runtime.
//!
//! Run with `cargo test -p tempo --features tokio-compat --test tokio_compat`
//! (the README's test command does).
#![cfg(feature = "tokio-compat")]

use std::sync::atomic::{AtomicUsize, Ordering::Relaxed};
use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};

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
