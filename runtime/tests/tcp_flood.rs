//! A real flooded TCP stream next to an interval, on one runtime: the
//! interval keeps ticking while the flood is read.
//!
//! A writer thread writes `TOTAL` bytes on loopback as fast as it can; a
//! task reads them in 4 KiB reads, so the stream is ready read after read
//! and the task spends its whole cooperative budget per poll. Next to it
//! an interval counts its ticks. The test counts, never times: the reads
//! made between two interval ticks. A runtime that reached the driver (so
//! the timers) only once per `event_interval` budgets of reads (61 x 128
//! by default) would let thousands of reads pass between two ticks; one
//! that polls the driver after each spent budget lets pass only what the
//! stream delivers in about a period, far fewer at any loopback speed.
//! The reads in one task poll are counted too, to prove that the budget
//! was spent (the flood was a flood).
//!
//! Both flavors, at a period of its own ([`PERIOD`]) for the interval and
//! the throttling scheduler alike.

use std::future::Future;
use std::io::Write;
use std::pin::Pin;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::Arc;
use std::task::{Context, Poll};
use std::thread;
use std::time::Duration;

use tempo::net::{TcpListener, TcpStream};
use tempo_park::coop::INITIAL_BUDGET;

mod support;
use support::*;

/// The interval's period, and the throttling scheduler's.
const PERIOD: Duration = Duration::from_millis(1);
/// Bytes the writer writes.
const TOTAL: usize = 64 << 20;
/// One read's buffer.
const READ: usize = 4096;
/// The most reads allowed between two interval ticks: 32 budgets. A
/// period of reads at loopback speed is a few hundred; a driver reached
/// once per `event_interval` (61) budgets lets 7,808 through.
const MAX_READS_PER_GAP: u64 = 32 * INITIAL_BUDGET as u64;

/// Counts its future's polls' reads: the most reads one poll made.
struct PollReads<F> {
    inner: Pin<Box<F>>,
    reads: Arc<AtomicU64>,
    most_in_a_poll: u64,
}

impl<F: Future<Output = ()>> Future for PollReads<F> {
    type Output = u64;

    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<u64> {
        let before = self.reads.load(SeqCst);
        let done = self.inner.as_mut().poll(cx).is_ready();
        let made = self.reads.load(SeqCst) - before;
        self.most_in_a_poll = self.most_in_a_poll.max(made);
        if done {
            Poll::Ready(self.most_in_a_poll)
        } else {
            Poll::Pending
        }
    }
}

/// What one flood run counted.
struct Counted {
    reads: u64,
    ticks: u64,
    most_reads_between_ticks: u64,
    most_reads_in_a_poll: u64,
}

fn flood(flavor: Flavor) -> Counted {
    let rt = flavor
        .builder_with_period(PERIOD)
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        let writer = thread::spawn(move || {
            let mut stream = std::net::TcpStream::connect(addr).unwrap();
            let chunk = vec![0x5a_u8; 64 << 10];
            let mut left = TOTAL;
            while left > 0 {
                let n = left.min(chunk.len());
                stream.write_all(&chunk[..n]).unwrap();
                left -= n;
            }
        });
        let (stream, _) = listener.accept().await.unwrap();

        let reads = Arc::new(AtomicU64::new(0));
        let ticks = Arc::new(AtomicU64::new(0));
        let most_between = Arc::new(AtomicU64::new(0));
        let ticking = {
            let (reads, ticks, most_between) = (reads.clone(), ticks.clone(), most_between.clone());
            tempo::spawn(async move {
                let mut interval = tempo::time::interval(PERIOD);
                let mut last = reads.load(SeqCst);
                loop {
                    interval.tick().await;
                    let now = reads.load(SeqCst);
                    most_between.fetch_max(now - last, SeqCst);
                    last = now;
                    ticks.fetch_add(1, SeqCst);
                }
            })
        };
        let reader = PollReads {
            inner: Box::pin(read_all(stream, reads.clone())),
            reads: reads.clone(),
            most_in_a_poll: 0,
        };
        let most_reads_in_a_poll = tempo::spawn(reader).await.unwrap();
        ticking.abort();
        writer.join().unwrap();
        Counted {
            reads: reads.load(SeqCst),
            ticks: ticks.load(SeqCst),
            most_reads_between_ticks: most_between.load(SeqCst),
            most_reads_in_a_poll,
        }
    })
}

/// Reads `stream` to its end, counting the reads; checks the byte count.
async fn read_all(stream: TcpStream, reads: Arc<AtomicU64>) {
    let mut buf = vec![0u8; READ];
    let mut got = 0;
    loop {
        let n = stream.read(&mut buf).await.unwrap();
        if n == 0 {
            break;
        }
        got += n;
        reads.fetch_add(1, SeqCst);
    }
    assert_eq!(got, TOTAL);
}

fn check(flavor: Flavor) {
    let counted = flood(flavor);
    eprintln!(
        "{flavor:?}: {} reads, {} ticks, at most {} reads between two ticks, \
         at most {} reads in one poll",
        counted.reads,
        counted.ticks,
        counted.most_reads_between_ticks,
        counted.most_reads_in_a_poll
    );
    assert!(
        counted.most_reads_in_a_poll >= u64::from(INITIAL_BUDGET),
        "the reader never spent its budget in a poll: not a flood"
    );
    assert!(
        counted.ticks >= counted.reads / MAX_READS_PER_GAP,
        "{} ticks for {} reads",
        counted.ticks,
        counted.reads
    );
    assert!(
        counted.most_reads_between_ticks <= MAX_READS_PER_GAP,
        "{} reads passed between two interval ticks (at most {MAX_READS_PER_GAP})",
        counted.most_reads_between_ticks
    );
}

on_each_flavor! {
    #[test]
    fn an_interval_ticks_while_a_flooded_tcp_stream_is_read() {
        check(FLAVOR);
    }
}
