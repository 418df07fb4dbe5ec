//! `tempo_media::channel`: order, back-pressure, closing from either end,
//! wake-ups (counted, no timing), the kept waker, the cooperative budget.

use std::future::Future;
use std::pin::pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll, Wake, Waker};

use tempo_media::channel::{SendError, TrySendError};

/// A waker counting its wake-ups.
#[derive(Default)]
struct Count {
    wakes: AtomicUsize,
}

impl Wake for Count {
    fn wake(self: Arc<Self>) {
        self.wakes.fetch_add(1, SeqCst);
    }
}

fn counting() -> (Arc<Count>, Waker) {
    let count = Arc::new(Count::default());
    (count.clone(), Waker::from(count))
}

/// Counts how many items of this kind are alive.
struct Tracked(Arc<AtomicUsize>);

impl Tracked {
    fn new(alive: &Arc<AtomicUsize>) -> Tracked {
        alive.fetch_add(1, SeqCst);
        Tracked(alive.clone())
    }
}

impl Drop for Tracked {
    fn drop(&mut self) {
        self.0.fetch_sub(1, SeqCst);
    }
}

#[test]
fn items_arrive_in_order_then_the_end() {
    let (tx, mut rx) = tempo_media::channel(3);
    for n in 0..3 {
        tx.try_send(n).unwrap();
    }
    assert_eq!(tx.try_send(3), Err(TrySendError::Full(3)));
    drop(tx);
    let (_, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let got: Vec<_> = (0..4).map(|_| rx.poll_recv(&mut cx)).collect();
    assert_eq!(
        got,
        [
            Poll::Ready(Some(0)),
            Poll::Ready(Some(1)),
            Poll::Ready(Some(2)),
            Poll::Ready(None)
        ]
    );
}

#[test]
fn a_full_channel_holds_the_sender_until_an_item_is_taken() {
    let (mut tx, mut rx) = tempo_media::channel(1);
    tx.try_send(1).unwrap();
    let (count, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let mut send = pin!(tx.send(2));
    assert!(send.as_mut().poll(&mut cx).is_pending());
    assert_eq!(count.wakes.load(SeqCst), 0);
    assert_eq!(rx.try_recv(), Some(1));
    assert_eq!(
        count.wakes.load(SeqCst),
        1,
        "taking an item wakes the sender"
    );
    assert_eq!(send.as_mut().poll(&mut cx), Poll::Ready(Ok(())));
    assert_eq!(rx.try_recv(), Some(2));
    // Nobody waits any more: a further item wakes nobody.
    assert_eq!(count.wakes.load(SeqCst), 1);
}

#[test]
fn a_waiting_receiver_is_woken_by_a_send_and_by_the_senders_drop() {
    let (tx, mut rx) = tempo_media::channel::<u8>(2);
    let (count, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    assert!(rx.poll_recv(&mut cx).is_pending());
    tx.try_send(7).unwrap();
    assert_eq!(count.wakes.load(SeqCst), 1);
    // Not waiting (it has not polled since): the second item wakes nobody.
    tx.try_send(8).unwrap();
    assert_eq!(count.wakes.load(SeqCst), 1);
    assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(Some(7)));
    assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(Some(8)));
    assert!(rx.poll_recv(&mut cx).is_pending());
    drop(tx);
    assert_eq!(count.wakes.load(SeqCst), 2);
    assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(None));
}

#[test]
fn the_receivers_drop_fails_the_sender_and_drops_what_was_queued() {
    let alive = Arc::new(AtomicUsize::new(0));
    let (mut tx, rx) = tempo_media::channel(1);
    tx.try_send(Tracked::new(&alive)).unwrap();
    let (count, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    {
        let mut send = pin!(tx.send(Tracked::new(&alive)));
        assert!(send.as_mut().poll(&mut cx).is_pending());
        assert_eq!(alive.load(SeqCst), 2);
        drop(rx);
        assert_eq!(count.wakes.load(SeqCst), 1, "the waiting sender is woken");
        assert_eq!(alive.load(SeqCst), 1, "the queued item is dropped");
        match send.as_mut().poll(&mut cx) {
            Poll::Ready(Err(SendError(item))) => drop(item),
            other => panic!("expected the item back, got {:?}", other.map(|r| r.is_ok())),
        }
    }
    assert_eq!(alive.load(SeqCst), 0);
    assert!(tx.is_closed());
    assert!(matches!(
        tx.try_send(Tracked::new(&alive)),
        Err(TrySendError::Closed(_))
    ));
}

/// A waker counting its clones: the channel keeps a waiting end's waker
/// instead of cloning it on every wait.
struct Clones {
    clones: AtomicUsize,
}

fn clone_counting(data: *const ()) -> std::task::RawWaker {
    // SAFETY: `data` is the `&'static Clones` the waker was made from.
    let clones = unsafe { &*(data as *const Clones) };
    clones.clones.fetch_add(1, SeqCst);
    std::task::RawWaker::new(data, &CLONES_VTABLE)
}

static CLONES_VTABLE: std::task::RawWakerVTable =
    std::task::RawWakerVTable::new(clone_counting, |_| {}, |_| {}, |_| {});

#[test]
fn a_waiting_end_stores_its_waker_once() {
    static CLONES: Clones = Clones {
        clones: AtomicUsize::new(0),
    };
    let raw = std::task::RawWaker::new(&CLONES as *const Clones as *const (), &CLONES_VTABLE);
    // SAFETY: the vtable's functions only count clones of a `'static`;
    // wake and drop do nothing, so every contract holds.
    let waker = unsafe { Waker::from_raw(raw) };
    let mut cx = Context::from_waker(&waker);
    let (tx, mut rx) = tempo_media::channel(1);
    for n in 0..100 {
        assert!(rx.poll_recv(&mut cx).is_pending());
        tx.try_send(n).unwrap();
        assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(Some(n)));
    }
    // Once stored, then once per wake-up (woken by a clone taken under the
    // lock, so that the wake runs outside it).
    assert_eq!(CLONES.clones.load(SeqCst), 101);
}

/// A receiver whose items are always ready still lets the other tasks of
/// its thread run: each ready `recv` spends the cooperative budget.
#[test]
fn an_always_ready_receiver_yields_to_its_neighbours() {
    let rt = tempo::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        const ITEMS: usize = 1000;
        let (tx, mut rx) = tempo_media::channel(ITEMS);
        for n in 0..ITEMS {
            tx.try_send(n).unwrap();
        }
        drop(tx);
        let neighbour_ran = Arc::new(AtomicUsize::new(usize::MAX));
        let received = Arc::new(AtomicUsize::new(0));
        let receiver = {
            let received = received.clone();
            tempo::spawn(async move {
                while rx.recv().await.is_some() {
                    received.fetch_add(1, SeqCst);
                }
            })
        };
        let neighbour = {
            let (neighbour_ran, received) = (neighbour_ran.clone(), received.clone());
            tempo::spawn(async move {
                neighbour_ran.store(received.load(SeqCst), SeqCst);
            })
        };
        receiver.await.unwrap();
        neighbour.await.unwrap();
        assert_eq!(received.load(SeqCst), ITEMS);
        let at = neighbour_ran.load(SeqCst);
        assert!(at < ITEMS, "the neighbour ran only after {at} items");
    });
}

/// Spends every unit of the current budget.
fn spend_the_budget(cx: &mut Context<'_>) {
    while tempo_park::coop::has_budget_remaining() {
        let Poll::Ready(unit) = tempo_park::coop::poll_proceed(cx) else {
            panic!("the budget ran out early");
        };
        unit.made_progress();
    }
}

/// A waiting end touches no budget: with the budget spent, an empty
/// channel's `recv` and a full one's `send` wait *without a wake-up* (an
/// exhausted budget would wake the task for a poll that could only wait
/// again), and the other end's move wakes them. A ready end with the
/// budget spent yields: woken, to come back with a fresh budget.
#[test]
fn a_waiting_end_waits_for_the_other_end_not_for_the_budget() {
    let (mut tx, mut rx) = tempo_media::channel(1);
    let (count, waker) = counting();
    let mut cx = Context::from_waker(&waker);
    let wakes = || count.wakes.load(SeqCst);
    tempo_park::coop::budget(|| {
        spend_the_budget(&mut cx);
        assert!(rx.poll_recv(&mut cx).is_pending());
        assert_eq!(wakes(), 0, "empty: no wake for the spent budget");
        tx.try_send(1).unwrap();
        assert_eq!(wakes(), 1, "the send woke the receiver");
        assert!(rx.poll_recv(&mut cx).is_pending(), "ready, budget spent");
        assert_eq!(wakes(), 2, "the spent budget woke the task");
    });
    let mut send = pin!(tx.send(2));
    tempo_park::coop::budget(|| {
        spend_the_budget(&mut cx);
        assert!(send.as_mut().poll(&mut cx).is_pending());
        assert_eq!(wakes(), 2, "full: no wake for the spent budget");
    });
    assert_eq!(rx.try_recv(), Some(1));
    assert_eq!(wakes(), 3, "the receive woke the sender");
    tempo_park::coop::budget(|| {
        assert_eq!(send.as_mut().poll(&mut cx), Poll::Ready(Ok(())));
        assert_eq!(rx.poll_recv(&mut cx), Poll::Ready(Some(2)));
    });
}
