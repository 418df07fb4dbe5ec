//! The UDP load generator: N streams, one datagram per stream per interval,
//! from one socket with `sendmmsg`.
//!
//! Stream `i` is port `base_port + i` on 127.0.0.1. Datagram `k` of stream `i`
//! is due at `t0 + k * interval + i * interval / N` (paced: the streams are
//! spread evenly over the interval, as independent real sources would be) or
//! at `t0 + k * interval` (`burst`: every stream at once, as the original
//! benchmark did). The sender wakes every `quantum`, sends everything due in
//! batches of up to [`MAX_BATCH`] datagrams per `sendmmsg`, and sleeps again;
//! so it costs little CPU and the receiver is the thing measured. When it
//! cannot keep up (a loopback sender saturates one core near 200k
//! datagrams/s), its lag behind the schedule grows; the report says so, so
//! that overload is not mistaken for receive loss.

use std::io;
use std::net::{Ipv4Addr, UdpSocket};
use std::os::fd::AsRawFd;
use std::time::Duration;

use crate::clock::{monotonic_ns, sleep_until_ns};
use crate::packet::{PacketHeader, HEADER_LEN};
use crate::report::CsvRow;
use crate::rusage::{cpu_percent, process_cpu_time};

/// Datagrams per `sendmmsg` call at most (the kernel's UIO_MAXIOV).
pub const MAX_BATCH: usize = 1024;

/// What to send.
#[derive(Debug, Clone)]
pub struct SenderConfig {
    /// Number of streams (destination ports).
    pub streams: usize,
    /// Port of stream 0.
    pub base_port: u16,
    /// Datagram size in bytes (at least [`HEADER_LEN`]).
    pub size: usize,
    /// Interval between two datagrams of a stream.
    pub interval: Duration,
    /// How long to send.
    pub duration: Duration,
    /// Send each interval's datagrams at once instead of spreading them.
    pub burst: bool,
    /// Sleep granularity between sends.
    pub quantum: Duration,
}

/// What the sender did.
#[derive(Debug, Clone)]
pub struct SenderReport {
    /// Datagrams handed to the kernel.
    pub sent: u64,
    /// Datagrams `sendmmsg` refused (counted, skipped).
    pub errors: u64,
    /// Wall time from the first due datagram to the last send.
    pub elapsed: Duration,
    /// Largest delay of a datagram behind its due time.
    pub max_lag: Duration,
    /// Mean delay of a batch behind its oldest datagram's due time.
    pub mean_lag: Duration,
    /// Process CPU over `elapsed`, percent of one core.
    pub cpu_pct: f64,
}

impl SenderReport {
    /// True if the sender fell a whole interval behind schedule: the sender,
    /// not the receiver, was the limit.
    pub fn fell_behind(&self, interval: Duration) -> bool {
        self.max_lag > interval
    }

    /// The report as a CSV row.
    pub fn to_row(&self, cfg: &SenderConfig) -> CsvRow {
        let mut row = CsvRow::new();
        let secs = self.elapsed.as_secs_f64().max(1e-9);
        row.push("streams", cfg.streams)
            .push_f64("interval_ms", cfg.interval.as_secs_f64() * 1e3, 3)
            .push("size", cfg.size)
            .push("burst", cfg.burst)
            .push("sent", self.sent)
            .push("errors", self.errors)
            .push_f64("rate_pps", self.sent as f64 / secs, 0)
            .push("max_lag_us", self.max_lag.as_micros())
            .push("mean_lag_us", self.mean_lag.as_micros())
            .push_f64("cpu_pct", self.cpu_pct, 1)
            .push("fell_behind", self.fell_behind(cfg.interval));
        row
    }
}

/// The schedule: when datagram number `index` (over all streams) is due.
#[derive(Debug, Clone, Copy)]
struct Schedule {
    t0: u64,
    interval_ns: u64,
    streams: u64,
    burst: bool,
}

impl Schedule {
    fn due_ns(&self, index: u64) -> u64 {
        let cycle = index / self.streams;
        let stream = index % self.streams;
        let offset = if self.burst {
            0
        } else {
            stream * self.interval_ns / self.streams
        };
        self.t0 + cycle * self.interval_ns + offset
    }

    /// How many datagrams are due at `now` (all indices `< count` are).
    fn due_count(&self, now: u64) -> u64 {
        if now < self.t0 {
            return 0;
        }
        let elapsed = now - self.t0;
        let cycle = elapsed / self.interval_ns;
        let within = elapsed % self.interval_ns;
        let in_cycle = if self.burst {
            self.streams
        } else {
            // Streams whose offset `s * I / N` is <= within.
            ((within * self.streams) / self.interval_ns + 1).min(self.streams)
        };
        cycle * self.streams + in_cycle
    }
}

/// Sends according to `cfg` until its duration is over.
pub fn run_sender(cfg: &SenderConfig) -> io::Result<SenderReport> {
    if cfg.streams == 0 || cfg.size < HEADER_LEN || cfg.interval.is_zero() {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!("need streams > 0, size >= {HEADER_LEN}, interval > 0"),
        ));
    }
    let sock = UdpSocket::bind((Ipv4Addr::LOCALHOST, 0))?;
    let fd = sock.as_raw_fd();
    let addrs: Vec<libc::sockaddr_in> = (0..cfg.streams)
        .map(|i| sockaddr(cfg.base_port.wrapping_add(i as u16)))
        .collect();
    let mut bufs = vec![0u8; cfg.size * MAX_BATCH];

    let interval_ns = cfg.interval.as_nanos() as u64;
    let cycles = (cfg.duration.as_nanos() as u64 / interval_ns).max(1);
    let total = cycles * cfg.streams as u64;
    let sched = Schedule {
        t0: monotonic_ns() + 1_000_000,
        interval_ns,
        streams: cfg.streams as u64,
        burst: cfg.burst,
    };
    let quantum_ns = cfg.quantum.as_nanos().max(1) as u64;
    let cpu_start = process_cpu_time();

    let (mut next, mut sent, mut errors) = (0u64, 0u64, 0u64);
    let (mut max_lag, mut lag_sum, mut batches) = (0u64, 0u64, 0u64);
    // Each iteration either sends at least one datagram or sleeps until the
    // next one is due, so the loop ends once `total` datagrams were sent or
    // skipped: at about `t0 + duration`, or later if the sender falls behind.
    while next < total {
        let now = monotonic_ns();
        let due = sched.due_count(now).min(total);
        if due <= next {
            sleep_until_ns(sched.due_ns(next).max(now + quantum_ns));
            continue;
        }
        let lag = now.saturating_sub(sched.due_ns(next));
        max_lag = max_lag.max(lag);
        lag_sum += lag;
        batches += 1;
        while next < due {
            let count = ((due - next) as usize).min(MAX_BATCH);
            let sent_ns = monotonic_ns();
            for j in 0..count {
                let index = next + j as u64;
                PacketHeader {
                    seq: index / cfg.streams as u64,
                    sent_ns,
                    stream: (index % cfg.streams as u64) as u32,
                }
                .write_to(&mut bufs[j * cfg.size..(j + 1) * cfg.size]);
            }
            let first_stream = (next % cfg.streams as u64) as usize;
            let (ok, failed) = send_batch(fd, &bufs, cfg.size, count, &addrs, first_stream);
            sent += ok;
            errors += failed;
            next += count as u64;
        }
    }
    let end = monotonic_ns();
    let elapsed = Duration::from_nanos(end.saturating_sub(sched.t0));
    Ok(SenderReport {
        sent,
        errors,
        elapsed,
        max_lag: Duration::from_nanos(max_lag),
        mean_lag: Duration::from_nanos(lag_sum / batches.max(1)),
        cpu_pct: cpu_percent(process_cpu_time() - cpu_start, elapsed),
    })
}

fn sockaddr(port: u16) -> libc::sockaddr_in {
    libc::sockaddr_in {
        sin_family: libc::AF_INET as libc::sa_family_t,
        sin_port: port.to_be(),
        sin_addr: libc::in_addr {
            s_addr: u32::from(Ipv4Addr::LOCALHOST).to_be(),
        },
        sin_zero: [0; 8],
    }
}

/// Sends `count` datagrams of `size` bytes from `bufs`, the j-th to stream
/// `(first_stream + j) % addrs.len()`. Returns (sent, failed).
fn send_batch(
    fd: libc::c_int,
    bufs: &[u8],
    size: usize,
    count: usize,
    addrs: &[libc::sockaddr_in],
    first_stream: usize,
) -> (u64, u64) {
    let mut iovs: Vec<libc::iovec> = (0..count)
        .map(|j| libc::iovec {
            iov_base: bufs[j * size..].as_ptr() as *mut libc::c_void,
            iov_len: size,
        })
        .collect();
    // SAFETY: an all-zero mmsghdr is valid (null pointers, zero lengths).
    let mut msgs: Vec<libc::mmsghdr> = (0..count).map(|_| unsafe { std::mem::zeroed() }).collect();
    for (j, msg) in msgs.iter_mut().enumerate() {
        let addr = &addrs[(first_stream + j) % addrs.len()];
        msg.msg_hdr.msg_name = addr as *const libc::sockaddr_in as *mut libc::c_void;
        msg.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_in>() as libc::socklen_t;
        msg.msg_hdr.msg_iov = &mut iovs[j];
        msg.msg_hdr.msg_iovlen = 1;
    }
    let (mut done, mut failed) = (0usize, 0u64);
    while done < count {
        // SAFETY: `msgs[done..]` are valid mmsghdrs whose name and iovec
        // pointers point into `addrs`, `iovs` and `bufs`, all alive and not
        // moved during the call; the kernel only reads them (and writes
        // msg_len).
        let rc = unsafe {
            libc::sendmmsg(
                fd,
                msgs[done..].as_mut_ptr(),
                (count - done) as libc::c_uint,
                0,
            )
        };
        if rc > 0 {
            done += rc as usize;
        } else {
            // The first remaining datagram failed: count it and move on.
            failed += 1;
            done += 1;
        }
    }
    ((count as u64) - failed, failed)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn paced_schedule_spreads_streams_over_the_interval() {
        let s = Schedule {
            t0: 1000,
            interval_ns: 100,
            streams: 4,
            burst: false,
        };
        assert_eq!(s.due_ns(0), 1000);
        assert_eq!(s.due_ns(1), 1025);
        assert_eq!(s.due_ns(5), 1125);
        assert_eq!(s.due_count(999), 0);
        assert_eq!(s.due_count(1000), 1);
        assert_eq!(s.due_count(1024), 1);
        assert_eq!(s.due_count(1025), 2);
        assert_eq!(s.due_count(1099), 4);
        assert_eq!(s.due_count(1100), 5);
        // due_count and due_ns agree: index i is due iff due_ns(i) <= now.
        for now in 990..1400 {
            let n = s.due_count(now);
            assert!(n == 0 || s.due_ns(n - 1) <= now);
            assert!(s.due_ns(n) > now);
        }
    }

    #[test]
    fn burst_schedule_sends_each_interval_at_once() {
        let s = Schedule {
            t0: 0,
            interval_ns: 100,
            streams: 3,
            burst: true,
        };
        assert_eq!(s.due_count(0), 3);
        assert_eq!(s.due_count(99), 3);
        assert_eq!(s.due_count(100), 6);
        assert_eq!(s.due_ns(4), 100);
    }

    #[test]
    fn sends_datagrams_with_header_to_the_stream_port() {
        let rx = UdpSocket::bind("127.0.0.1:0").unwrap();
        let port = rx.local_addr().unwrap().port();
        check_one_stream(&rx, port);
    }

    fn check_one_stream(rx: &UdpSocket, port: u16) {
        rx.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let cfg = SenderConfig {
            streams: 1,
            base_port: port,
            size: 64,
            interval: Duration::from_millis(1),
            duration: Duration::from_millis(3),
            burst: false,
            quantum: Duration::from_micros(200),
        };
        let report = run_sender(&cfg).unwrap();
        assert_eq!(report.sent + report.errors, 3);
        let mut buf = [0u8; 128];
        let (n, _) = rx.recv_from(&mut buf).unwrap();
        assert_eq!(n, 64);
        let h = PacketHeader::read_from(&buf[..n]).unwrap();
        assert_eq!((h.seq, h.stream), (0, 0));
        assert!(h.sent_ns <= monotonic_ns());
    }

    #[test]
    fn invalid_config_is_rejected() {
        let cfg = SenderConfig {
            streams: 0,
            base_port: 20000,
            size: 160,
            interval: Duration::from_millis(20),
            duration: Duration::from_millis(1),
            burst: false,
            quantum: Duration::from_micros(500),
        };
        assert!(run_sender(&cfg).is_err());
    }
}
