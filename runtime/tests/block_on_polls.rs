//! How `block_on` interleaves its future, the tasks and the driver: a
//! `block_on` future and a task that wake each other run without a driver
//! poll between every two of their polls (basic scheduler), and the driver
//! still gets its turn within `event_interval` polls, on both flavors.

use std::cell::{Cell, RefCell};
use std::future::poll_fn;
use std::os::fd::AsRawFd;
use std::rc::Rc;
use std::task::{Poll, Waker};

use tempo_test_support::net::sent_and_queued;

mod support;
use support::*;

/// A baton passed between two parties, `0` and `1`: each waits for its
/// turn, then hands the baton over and wakes the other.
#[derive(Default)]
struct Baton {
    turn: Cell<u8>,
    wakers: RefCell<[Option<Waker>; 2]>,
}

impl Baton {
    async fn wait_turn(&self, me: u8) {
        poll_fn(|cx| {
            if self.turn.get() == me {
                Poll::Ready(())
            } else {
                self.wakers.borrow_mut()[usize::from(me)] = Some(cx.waker().clone());
                Poll::Pending
            }
        })
        .await
    }

    fn pass(&self, me: u8) {
        let other = 1 - me;
        self.turn.set(other);
        if let Some(w) = self.wakers.borrow_mut()[usize::from(other)].take() {
            w.wake();
        }
    }
}

/// Plays `rounds` round trips between the `block_on` future (party 0) and
/// a local task (party 1); calls `each(round)` in the `block_on` future
/// at every round.
async fn ping_pong(rounds: u32, mut each: impl FnMut(u32)) {
    let baton = Rc::new(Baton::default());
    let partner = {
        let baton = baton.clone();
        tempo::spawn_local(async move {
            for _ in 0..rounds {
                baton.wait_turn(1).await;
                baton.pass(1);
            }
        })
    };
    for round in 0..rounds {
        each(round);
        baton.wait_turn(0).await;
        baton.pass(0);
    }
    baton.wait_turn(0).await;
    partner.await.unwrap();
}

#[test]
fn a_ping_pong_with_the_block_on_future_does_not_poll_the_driver_every_round() {
    let rt = Builder::new_current_thread().enable_all().build().unwrap();
    let before = rt.metrics();
    rt.block_on(ping_pong(300, |_| {}));
    let m = rt.metrics().since(&before);
    // Two polls per round: one driver poll (one scheduler iteration) per
    // `event_interval` (61) polls, about 10 here. It used to be one per
    // round: 300.
    assert!(m.tasks_polled >= 300, "{m:?}");
    assert!(
        m.ticks <= 30,
        "{} scheduler iterations (driver polls) for 300 round trips",
        m.ticks
    );
}

on_each_flavor! {
    #[test]
    fn io_is_served_while_the_block_on_future_and_a_task_ping_pong() {
        // Under throttling a tick ends after `tick_budget` polls (an
        // overrun) and the next one polls I/O: a small budget makes that
        // happen inside the ping-pong. The basic scheduler ignores it.
        let rt = builder().enable_all().tick_budget(256).build().unwrap();
        rt.block_on(async {
            let socket = tempo::net::UdpSocket::bind("127.0.0.1:0").await.unwrap();
            let to = socket.local_addr().unwrap();
            // The socket lives (in its task) until the datagram is
            // received, which is after the send's wait.
            let receiver_fd = socket.as_raw_fd();
            let peer = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            let served_at: Rc<Cell<Option<u32>>> = Rc::new(Cell::new(None));
            let round = Rc::new(Cell::new(0u32));
            let receiver = {
                let (served_at, round) = (served_at.clone(), round.clone());
                tempo::spawn_local(async move {
                    let mut buf = [0u8; 16];
                    let (n, _) = socket.recv_from(&mut buf).await.unwrap();
                    served_at.set(Some(round.get()));
                    n
                })
            };
            // Let the receiver find the socket empty and wait on the driver.
            tempo::task::yield_now().await;
            ping_pong(2000, |r| {
                round.set(r);
                if r == 1 {
                    // Queued before the ping-pong goes on, whatever the
                    // loopback's softirq does: the limits below count
                    // rounds from here, not the kernel's delivery time.
                    sent_and_queued(&receiver_fd, || peer.send_to(b"ping", to).unwrap());
                }
            })
            .await;
            assert_eq!(receiver.await.unwrap(), 4);
            // Served while the ping-pong went on (within event_interval
            // polls on the basic scheduler, within the tick budget under
            // throttling), not only once it ended.
            let at = served_at.get().expect("served");
            let limit = match FLAVOR {
                // `event_interval` (61) polls: about 30 rounds.
                Flavor::Basic => 40,
                Flavor::Throttling => 1999,
            };
            assert!(at < limit, "{FLAVOR:?}: the datagram waited until round {at}");
        });
    }
}
