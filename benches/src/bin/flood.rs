//! `flood`: does a task reading a flooded socket starve the timers next to
//! it?
//!
//! ```text
//! flood [--secs 3] [--work 6] [--transports tcp,udp]
//!       [--runtimes tempo,tempo-throttled:20,tokio] [--label NAME]
//! ```
//!
//! Per case (transport x runtime), on 127.0.0.1: a writer thread floods a
//! TCP stream (4 KiB `write_all`s) or a UDP socket (4 KiB datagrams) as
//! fast as it can; on the runtime, a reader task reads 4 KiB at a time and
//! runs `--work` rounds of a per-byte hash over what it read (heavy reads:
//! a poll of one cooperative budget, 128 reads, takes milliseconds), next
//! to a task on `interval(10 ms)` that records the gaps between its ticks.
//! After `--secs` the case stops and prints one row: the largest gap, the
//! gaps over 100 ms, the ticks, and the bytes read (throughput).
//!
//! Cases run one after the other in one process; every loop is bounded by
//! `--secs`. `--label` names the build in the table (run two builds one
//! after the other to compare them).

use std::future::poll_fn;
use std::io::Write as _;
use std::net::{SocketAddr, TcpListener};
use std::pin::Pin;
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering::Relaxed};
use std::sync::Arc;
use std::task::{ready, Poll};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use tempo_benches::args::Args;

const USAGE: &str = "\
flood [--secs 3] [--work 6] [--transports tcp,udp]
      [--runtimes tempo,tempo-throttled:20,tokio] [--label NAME]

A writer thread floods a loopback TCP stream or UDP socket with 4 KiB
writes; a reader task reads 4 KiB at a time plus --work rounds of per-byte
hashing, next to an interval(10 ms) task. Prints per case: largest interval
gap, gaps > 100 ms, ticks, MB read, MB/s.";

/// Bytes per write and per read.
const CHUNK: usize = 4096;
/// The interval next to the flood.
const PERIOD: Duration = Duration::from_millis(10);
/// A gap counted as a stall.
const STALL: Duration = Duration::from_millis(100);

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Transport {
    Tcp,
    Udp,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Rt {
    Tempo(Option<Duration>),
    Tokio,
}

impl Rt {
    fn parse(name: &str) -> Result<Rt, String> {
        match name {
            "tempo" => Ok(Rt::Tempo(None)),
            "tokio" => Ok(Rt::Tokio),
            _ => match name.strip_prefix("tempo-throttled:") {
                Some(ms) => ms
                    .parse()
                    .map(|ms| Rt::Tempo(Some(Duration::from_millis(ms))))
                    .map_err(|_| format!("bad period in {name:?}")),
                None => Err(format!("unknown runtime {name:?}")),
            },
        }
    }

    fn name(self) -> String {
        match self {
            Rt::Tempo(None) => "tempo".into(),
            Rt::Tempo(Some(t)) => format!("tempo-throttled:{}", t.as_millis()),
            Rt::Tokio => "tokio".into(),
        }
    }
}

/// One case's settings.
#[derive(Debug, Clone, Copy)]
struct Case {
    transport: Transport,
    secs: Duration,
    work: u32,
}

/// What the interval saw.
#[derive(Debug, Default)]
struct Gaps {
    largest: Duration,
    stalls: u32,
    ticks: u32,
    last: Option<Instant>,
}

impl Gaps {
    /// Records a tick; returns the time since `start`.
    fn tick(&mut self, start: Instant) -> Duration {
        let now = Instant::now();
        if let Some(last) = self.last {
            let gap = now - last;
            self.largest = self.largest.max(gap);
            self.stalls += u32::from(gap > STALL);
        }
        self.last = Some(now);
        self.ticks += 1;
        now - start
    }
}

/// A per-byte hash (FNV-1a), `rounds` times over `bytes`: the reader's
/// work, a dependency chain the compiler cannot skip or vectorise.
fn digest(bytes: &[u8], rounds: u32) -> u64 {
    let mut hash = 0xcbf2_9ce4_8422_2325_u64;
    for _ in 0..rounds {
        for &byte in bytes {
            hash = (hash ^ u64::from(byte)).wrapping_mul(0x0100_0000_01b3);
        }
    }
    hash
}

/// The flooding end, on its own thread until `stop`.
struct Writer {
    stop: Arc<AtomicBool>,
    thread: JoinHandle<()>,
}

impl Writer {
    /// Starts flooding; returns the writer and the reader's std socket.
    fn start(transport: Transport) -> std::io::Result<(Writer, Reader)> {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let data = vec![0xa5u8; CHUNK];
        let (thread, reader) = match transport {
            Transport::Tcp => {
                let listener = TcpListener::bind("127.0.0.1:0")?;
                let mut out = std::net::TcpStream::connect(listener.local_addr()?)?;
                let (reader, _) = listener.accept()?;
                // Bounded blocking: the loop sees `stop` even when the
                // reader has stopped reading.
                out.set_write_timeout(Some(Duration::from_millis(100)))?;
                let thread = std::thread::spawn(move || {
                    while !flag.load(Relaxed) {
                        match out.write_all(&data) {
                            Ok(()) => {}
                            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => {}
                            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {}
                            Err(_) => return,
                        }
                    }
                });
                (thread, Reader::Tcp(reader))
            }
            Transport::Udp => {
                let reader = std::net::UdpSocket::bind("127.0.0.1:0")?;
                let to: SocketAddr = reader.local_addr()?;
                let out = std::net::UdpSocket::bind("127.0.0.1:0")?;
                let thread = std::thread::spawn(move || {
                    while !flag.load(Relaxed) {
                        // A full receive buffer drops datagrams: fine.
                        let _ = out.send_to(&data, to);
                    }
                });
                (thread, Reader::Udp(reader))
            }
        };
        Ok((Writer { stop, thread }, reader))
    }

    fn stop(self) {
        self.stop.store(true, Relaxed);
        self.thread.join().expect("the writer thread panicked");
    }
}

/// The reading end, as a std socket (made non-blocking by the runtime's
/// `from_std`).
enum Reader {
    Tcp(std::net::TcpStream),
    Udp(std::net::UdpSocket),
}

/// What one case measured.
struct Row {
    gaps: Gaps,
    bytes: u64,
    elapsed: Duration,
}

fn run_case(rt: Rt, case: Case) -> std::io::Result<Row> {
    let (writer, reader) = Writer::start(case.transport)?;
    let start = Instant::now();
    let (gaps, bytes) = match rt {
        Rt::Tempo(throttle) => run_tempo(throttle, reader, case)?,
        Rt::Tokio => run_tokio(reader, case)?,
    };
    let elapsed = start.elapsed();
    writer.stop();
    Ok(Row {
        gaps,
        bytes,
        elapsed,
    })
}

fn run_tempo(
    throttle: Option<Duration>,
    reader: Reader,
    case: Case,
) -> std::io::Result<(Gaps, u64)> {
    let rt = tempo_benches::tempo_runtime::build(throttle)?;
    rt.block_on(async move {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let work = case.work;
        let read = match reader {
            Reader::Tcp(stream) => {
                stream.set_nonblocking(true)?;
                let stream = tempo::net::TcpStream::from_std(stream)?;
                tempo::spawn(async move {
                    let (mut buf, mut bytes, mut sink) = (vec![0u8; CHUNK], 0u64, 0u64);
                    while !flag.load(Relaxed) {
                        let n = stream.read(&mut buf).await?;
                        sink ^= digest(&buf[..n], work);
                        bytes += n as u64;
                    }
                    std::hint::black_box(sink);
                    Ok::<u64, std::io::Error>(bytes)
                })
            }
            Reader::Udp(socket) => {
                socket.set_nonblocking(true)?;
                let socket = tempo::net::UdpSocket::from_std(socket)?;
                tempo::spawn(async move {
                    let (mut buf, mut bytes, mut sink) = (vec![0u8; CHUNK], 0u64, 0u64);
                    while !flag.load(Relaxed) {
                        let n = socket.recv(&mut buf).await?;
                        sink ^= digest(&buf[..n], work);
                        bytes += n as u64;
                    }
                    std::hint::black_box(sink);
                    Ok::<u64, std::io::Error>(bytes)
                })
            }
        };
        let start = Instant::now();
        let mut gaps = Gaps::default();
        let mut interval = tempo::time::interval(PERIOD);
        loop {
            interval.tick().await;
            if gaps.tick(start) >= case.secs {
                break;
            }
        }
        stop.store(true, Relaxed);
        let bytes = read.await.expect("the reader panicked")?;
        Ok((gaps, bytes))
    })
}

fn run_tokio(reader: Reader, case: Case) -> std::io::Result<(Gaps, u64)> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()?;
    rt.block_on(async move {
        let stop = Arc::new(AtomicBool::new(false));
        let flag = stop.clone();
        let work = case.work;
        let read = match reader {
            Reader::Tcp(stream) => {
                stream.set_nonblocking(true)?;
                let mut stream = tokio::net::TcpStream::from_std(stream)?;
                tokio::spawn(async move {
                    let (mut buf, mut bytes, mut sink) = (vec![0u8; CHUNK], 0u64, 0u64);
                    while !flag.load(Relaxed) {
                        // `AsyncReadExt::read` without tokio's io-util.
                        let n = poll_fn(|cx| {
                            let mut read_buf = tokio::io::ReadBuf::new(&mut buf);
                            let stream = Pin::new(&mut stream);
                            ready!(tokio::io::AsyncRead::poll_read(stream, cx, &mut read_buf))?;
                            Poll::Ready(Ok::<usize, std::io::Error>(read_buf.filled().len()))
                        })
                        .await?;
                        sink ^= digest(&buf[..n], work);
                        bytes += n as u64;
                    }
                    std::hint::black_box(sink);
                    Ok::<u64, std::io::Error>(bytes)
                })
            }
            Reader::Udp(socket) => {
                socket.set_nonblocking(true)?;
                let socket = tokio::net::UdpSocket::from_std(socket)?;
                tokio::spawn(async move {
                    let (mut buf, mut bytes, mut sink) = (vec![0u8; CHUNK], 0u64, 0u64);
                    while !flag.load(Relaxed) {
                        let n = socket.recv(&mut buf).await?;
                        sink ^= digest(&buf[..n], work);
                        bytes += n as u64;
                    }
                    std::hint::black_box(sink);
                    Ok::<u64, std::io::Error>(bytes)
                })
            }
        };
        let start = Instant::now();
        let mut gaps = Gaps::default();
        let mut interval = tokio::time::interval(PERIOD);
        loop {
            interval.tick().await;
            if gaps.tick(start) >= case.secs {
                break;
            }
        }
        stop.store(true, Relaxed);
        let bytes = read.await.expect("the reader panicked")?;
        Ok((gaps, bytes))
    })
}

fn main() -> ExitCode {
    let mut args = Args::from_env();
    if args.help() {
        println!("{USAGE}");
        return ExitCode::SUCCESS;
    }
    let parsed = (|| {
        let secs: f64 = args.value("secs", 3.0)?;
        let work: u32 = args.value("work", 6)?;
        let transports: Vec<String> = args.list("transports", vec!["tcp".into(), "udp".into()])?;
        let runtimes: Vec<String> = args.list(
            "runtimes",
            vec!["tempo".into(), "tempo-throttled:20".into(), "tokio".into()],
        )?;
        let label: String = args.value("label", "this build".to_string())?;
        args.finish()?;
        let transports = transports
            .iter()
            .map(|t| match t.as_str() {
                "tcp" => Ok(Transport::Tcp),
                "udp" => Ok(Transport::Udp),
                other => Err(format!("unknown transport {other:?}")),
            })
            .collect::<Result<Vec<_>, String>>()?;
        let runtimes = runtimes
            .iter()
            .map(|r| Rt::parse(r))
            .collect::<Result<Vec<_>, String>>()?;
        if !(0.1..=60.0).contains(&secs) {
            return Err("--secs must be within 0.1..=60".to_string());
        }
        Ok((
            Duration::from_secs_f64(secs),
            work,
            transports,
            runtimes,
            label,
        ))
    })();
    let (secs, work, transports, runtimes, label) = match parsed {
        Ok(parsed) => parsed,
        Err(error) => {
            eprintln!("flood: {error}\n\n{USAGE}");
            return ExitCode::FAILURE;
        }
    };
    println!(
        "{:<12} {:<5} {:<20} {:>14} {:>12} {:>6} {:>9} {:>7}",
        "build", "proto", "runtime", "largest gap ms", "gaps >100ms", "ticks", "MB read", "MB/s"
    );
    for transport in transports {
        for &rt in &runtimes {
            let case = Case {
                transport,
                secs,
                work,
            };
            match run_case(rt, case) {
                Ok(row) => println!(
                    "{:<12} {:<5} {:<20} {:>14.1} {:>12} {:>6} {:>9.1} {:>7.1}",
                    label,
                    format!("{transport:?}").to_lowercase(),
                    rt.name(),
                    row.gaps.largest.as_secs_f64() * 1e3,
                    row.gaps.stalls,
                    row.gaps.ticks,
                    row.bytes as f64 / 1e6,
                    row.bytes as f64 / 1e6 / row.elapsed.as_secs_f64(),
                ),
                Err(error) => {
                    eprintln!("flood: {transport:?} on {}: {error}", rt.name());
                    return ExitCode::FAILURE;
                }
            }
        }
    }
    ExitCode::SUCCESS
}
