//! Every state change up and down, and NULL from PLAYING with data
//! flowing, leave no thread, socket or task behind.
//!
//! One test in its own binary (its own process), so that the counts of
//! `/proc/self/task` (threads: a context's thread ends only when its last
//! element lets go of it, and it takes its tasks with it) and
//! `/proc/self/fd` (sockets) see no other test's work.

mod util;

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

use gst::prelude::*;
use util::*;

fn count(dir: &str) -> usize {
    std::fs::read_dir(dir).unwrap().count()
}

/// Whether a context thread still runs, after a bounded wait: a task's
/// state machine may hold the last reference to its context, and a
/// context whose last reference is dropped on its own thread ends just
/// after (it cannot join itself).
fn a_context_still_runs() -> Option<Vec<String>> {
    let is_context = |n: &String| n == "life-in" || n == "life-out";
    let names = settled(thread_names, |names| !names.iter().any(is_context));
    names.iter().any(is_context).then_some(names)
}

/// What `now` gives once `done` holds of it, or after a bounded wait: a
/// thread that ended (a joined one too) stays listed in `/proc/self/task`
/// for a moment.
fn settled<T>(now: impl Fn() -> T, done: impl Fn(&T) -> bool) -> T {
    let deadline = std::time::Instant::now() + Duration::from_secs(10);
    loop {
        let value = now();
        if done(&value) || std::time::Instant::now() > deadline {
            return value;
        }
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The process's threads but GLib's shared pool ("pool-*"), where
/// GStreamer finishes asynchronous state changes: GLib starts and ends
/// those on its own schedule.
fn our_threads() -> Vec<String> {
    let mut names: Vec<_> = thread_names()
        .into_iter()
        .filter(|n| !n.starts_with("pool-"))
        .collect();
    names.sort();
    names
}

/// The names of the process's threads.
fn thread_names() -> Vec<String> {
    std::fs::read_dir("/proc/self/task")
        .unwrap()
        .filter_map(|t| std::fs::read_to_string(t.ok()?.path().join("comm")).ok())
        .map(|name| name.trim().to_owned())
        .collect()
}

fn relay(in_port: u16, out_port: u16) -> gst::Pipeline {
    pipeline(&format!(
        "tempoudpsrc name=src port={in_port} context=life-in context-wait=10 \
         ! tempoqueue context=life-out context-wait=10 \
         ! tempoudpsink host=127.0.0.1 port={out_port} context=life-out context-wait=10"
    ))
}

/// Sends datagrams to `to` until the returned flag is set.
fn flood(to: std::net::SocketAddr) -> (Arc<AtomicBool>, std::thread::JoinHandle<()>) {
    let stop = Arc::new(AtomicBool::new(false));
    let flag = stop.clone();
    let tx = sender();
    let thread = std::thread::Builder::new()
        .name("flood".into())
        .spawn(move || {
            let mut seq = 0;
            while !flag.load(Ordering::Relaxed) {
                let _ = tx.send_to(&datagram(seq), to);
                seq += 1;
                // Pacing only: the test asserts no timing.
                std::thread::sleep(Duration::from_micros(200));
            }
        });
    (stop, thread.expect("start the flood thread"))
}

fn cycle(out: &std::net::UdpSocket) {
    use gst::State::*;
    use gst::StateChangeSuccess::*;
    // A fixed port: the source binds it again at each NULL->READY.
    let in_port = sender().local_addr().unwrap().port();
    let p = relay(in_port, out.local_addr().unwrap().port());
    assert_eq!(p.set_state(Ready), Ok(Success));
    let src = src_addr(&p, "src");
    let (stop, flooder) = flood(src);
    for _ in 0..2 {
        assert_eq!(p.set_state(Paused), Ok(NoPreroll));
        assert_eq!(p.set_state(Playing), Ok(Success));
        let mut buf = [0u8; 256];
        out.recv_from(&mut buf).expect("data flows in PLAYING");
        assert_eq!(p.set_state(Paused), Ok(NoPreroll));
        assert_eq!(p.set_state(Ready), Ok(Success));
        assert_eq!(p.set_state(Null), Ok(Success));
        assert_eq!(p.set_state(Ready), Ok(Success));
    }
    // NULL straight from PLAYING, with data flowing.
    assert!(p.set_state(Playing).is_ok());
    let mut buf = [0u8; 256];
    out.recv_from(&mut buf).expect("data flows in PLAYING");
    assert_eq!(p.set_state(Null), Ok(Success));
    stop.store(true, Ordering::Relaxed);
    flooder.join().unwrap();
    // The source's socket is closed: its port binds again without reuse.
    std::net::UdpSocket::bind(src).expect("the source's port is free again");
}

#[test]
fn state_changes_up_and_down_leak_no_thread_socket_or_task() {
    init();
    let out = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    out.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // A first cycle starts what GStreamer starts once per process.
    cycle(&out);
    assert_eq!(a_context_still_runs(), None);
    let threads = our_threads();
    let fds = count("/proc/self/fd");
    for _ in 0..3 {
        cycle(&out);
        // The contexts stopped (and their tasks with them): no element
        // holds them any more.
        assert_eq!(a_context_still_runs(), None);
    }
    let left = settled(our_threads, |now| *now == threads);
    assert_eq!(
        left,
        threads,
        "threads left running, of {:?}",
        thread_names()
    );
    assert_eq!(count("/proc/self/fd"), fds, "descriptors left open");
}
