//! Model: runtime shutdown racing a remote spawn and a remote wake. Every
//! future is dropped exactly once, on the runtime's thread when it was
//! accepted, and every JoinHandle resolves.
#![cfg(loom)]

use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll, Waker};
use std::time::Duration;

use loom::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use loom::sync::{Arc, Mutex};
use loom::thread;
use tempo::runtime::Builder;
use tempo_loom_tests::block_on;

struct Probe(Arc<AtomicUsize>);
impl Drop for Probe {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

/// Pending forever, registering its waker.
struct Park {
    waker: Arc<Mutex<Option<Waker>>>,
    _probe: Probe,
}

impl Future for Park {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        *self.waker.lock().unwrap() = Some(cx.waker().clone());
        Poll::Pending
    }
}

#[test]
fn shutdown_vs_remote_spawn() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let handle = rt.handle().clone();
        let drops = Arc::new(AtomicUsize::new(0));
        let d = drops.clone();
        let t = thread::spawn(move || {
            let probe = Probe(d);
            handle.spawn(async move {
                let _p = probe;
                std::future::pending::<()>().await;
            })
        });
        drop(rt);
        let join = t.join().unwrap();
        // Accepted and then cancelled by the shutdown, or refused and
        // cancelled by the spawner: either way dropped once, cancelled.
        assert_eq!(drops.load(SeqCst), 1);
        assert!(join.is_finished());
        let err = block_on(join).unwrap_err();
        assert!(err.is_cancelled());
    });
}

#[test]
fn shutdown_vs_remote_wake() {
    loom::model(|| {
        let rt = Builder::new_current_thread().build().unwrap();
        let drops = Arc::new(AtomicUsize::new(0));
        let slot = Arc::new(Mutex::new(None));
        let join = rt.spawn(Park {
            waker: slot.clone(),
            _probe: Probe(drops.clone()),
        });
        rt.turn(Duration::ZERO);
        let waker = slot.lock().unwrap().take().unwrap();
        let t = thread::spawn(move || waker.wake());
        drop(rt);
        t.join().unwrap();
        assert_eq!(drops.load(SeqCst), 1);
        assert!(block_on(join).unwrap_err().is_cancelled());
    });
}
