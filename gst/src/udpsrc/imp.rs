//! The element (properties, pad, state changes, events) and its task
//! (receive a datagram on the context's io_uring, stamp it with its
//! arrival, push).
//!
//! States: NULL->READY binds the socket here (so that a bind error is an
//! element error) and prepares the task on the context; READY->PAUSED
//! answers NO_PREROLL and pushes nothing; PAUSED->PLAYING starts the task;
//! PLAYING->PAUSED asks for a pause without waiting (a sink already in
//! PAUSED may hold the push in progress until the next state change, as
//! it holds a `basesrc` streaming thread); PAUSED->READY stops and
//! READY->NULL unprepares.

use std::future::poll_fn;
use std::net::{IpAddr, Ipv4Addr, Ipv6Addr, SocketAddr};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};
use std::time::{Duration, SystemTime};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use gst_net::gio;
use tempo::context::Context;
use tempo::net::UdpRingReceiver;
use tempo_media::{BoxError, FlowError, Task, TaskImpl, Trigger};

use super::buffers::Buffers;
use super::receivers::{self, ReceiverKey};
use crate::common::{self, wait_ack};
use crate::sys;

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "tempoudpsrc",
        gst::DebugColorFlags::empty(),
        Some("Tempo UDP source"),
    )
});

const DEFAULT_ADDRESS: &str = "0.0.0.0";
const DEFAULT_PORT: i32 = 5004;
const DEFAULT_REUSE: bool = true;
const DEFAULT_MTU: u32 = 1492;
const DEFAULT_RETRIEVE_SENDER_ADDRESS: bool = true;
/// The longest UDP payload (over IPv4): a larger `mtu` receives this much.
const MAX_UDP_PAYLOAD: usize = 65_507;

#[derive(Debug, Clone)]
struct Settings {
    context: String,
    context_wait: u32,
    address: String,
    port: i32,
    reuse: bool,
    mtu: u32,
    caps: Option<gst::Caps>,
    retrieve_sender_address: bool,
    fd: i32,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            context: String::new(),
            context_wait: 0,
            address: DEFAULT_ADDRESS.into(),
            port: DEFAULT_PORT,
            reuse: DEFAULT_REUSE,
            mtu: DEFAULT_MTU,
            caps: None,
            retrieve_sender_address: DEFAULT_RETRIEVE_SENDER_ADDRESS,
            fd: -1,
        }
    }
}

/// What the element tells its task about the stream's sticky events.
#[derive(Default)]
struct Flags {
    need_stream_start: AtomicBool,
    need_segment: AtomicBool,
}

/// Held from READY up: the context (kept running) and the bound address.
struct Prepared {
    _context: Context,
    local_addr: SocketAddr,
}

/// The `tempoudpsrc` implementation.
pub struct UdpSrc {
    src_pad: gst::Pad,
    settings: Mutex<Settings>,
    task: Task,
    flags: Arc<Flags>,
    prepared: Mutex<Option<Prepared>>,
    /// In PLAYING: a flush stop restarts the task.
    playing: AtomicBool,
}

#[glib::object_subclass]
impl ObjectSubclass for UdpSrc {
    const NAME: &'static str = "GstTempoUdpSrc";
    type Type = super::TempoUdpSrc;
    type ParentType = gst::Element;

    fn with_class(klass: &Self::Class) -> Self {
        let templ = klass.pad_template("src").expect("src template");
        let src_pad = gst::Pad::builder_from_template(&templ)
            .event_function(|pad, parent, event| {
                UdpSrc::catch_panic_pad_function(parent, || false, |s| s.src_event(pad, event))
            })
            .query_function(|pad, parent, query| {
                UdpSrc::catch_panic_pad_function(parent, || false, |s| s.src_query(pad, query))
            })
            .build();
        UdpSrc {
            src_pad,
            settings: Mutex::default(),
            task: Task::new(),
            flags: Arc::default(),
            prepared: Mutex::new(None),
            playing: AtomicBool::new(false),
        }
    }
}

impl ObjectImpl for UdpSrc {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            let mut props = common::context_properties().to_vec();
            props.extend([
                glib::ParamSpecString::builder("address")
                    .nick("Address")
                    .blurb("IP address to receive on (a multicast address joins that group)")
                    .default_value(Some(DEFAULT_ADDRESS))
                    .mutable_ready()
                    .build(),
                glib::ParamSpecInt::builder("port")
                    .nick("Port")
                    .blurb("UDP port to receive on (0: any free port, see used-port)")
                    .minimum(0)
                    .maximum(u16::MAX.into())
                    .default_value(DEFAULT_PORT)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecBoolean::builder("reuse")
                    .nick("Reuse")
                    .blurb("Allow other sockets to bind the same port (SO_REUSEADDR, SO_REUSEPORT)")
                    .default_value(DEFAULT_REUSE)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecUInt::builder("mtu")
                    .nick("MTU")
                    .blurb("Largest datagram in bytes (at most 65,507 are received); a longer one is cut to this size")
                    .minimum(1)
                    .maximum(65535)
                    .default_value(DEFAULT_MTU)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecBoxed::builder::<gst::Caps>("caps")
                    .nick("Caps")
                    .blurb("Caps of the buffers pushed (none: ANY)")
                    .mutable_ready()
                    .build(),
                glib::ParamSpecBoolean::builder("retrieve-sender-address")
                    .nick("Retrieve sender address")
                    .blurb(
                        "Attach each datagram's sender address to its buffer (GstNetAddressMeta); \
                         off saves a GObject per datagram",
                    )
                    .default_value(DEFAULT_RETRIEVE_SENDER_ADDRESS)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecInt::builder("fd")
                    .nick("Socket fd")
                    .blurb(
                        "An open UDP socket to receive on instead of binding address:port \
                         (-1: none); the element receives on a duplicate, and the socket \
                         becomes non-blocking for its owner too",
                    )
                    .minimum(-1)
                    .default_value(-1)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecInt::builder("used-port")
                    .nick("Used port")
                    .blurb("The port the socket is bound to (from READY on; 0 before)")
                    .minimum(0)
                    .maximum(u16::MAX.into())
                    .read_only()
                    .build(),
            ]);
            props
        });
        PROPERTIES.as_ref()
    }

    fn set_property(&self, _id: usize, value: &glib::Value, pspec: &glib::ParamSpec) {
        let mut s = self.settings.lock().unwrap();
        match pspec.name() {
            "context" => s.context = value.get::<Option<String>>().unwrap().unwrap_or_default(),
            "context-wait" => s.context_wait = value.get().unwrap(),
            "address" => s.address = value.get::<Option<String>>().unwrap().unwrap_or_default(),
            "port" => s.port = value.get().unwrap(),
            "reuse" => s.reuse = value.get().unwrap(),
            "mtu" => s.mtu = value.get().unwrap(),
            "caps" => s.caps = value.get().unwrap(),
            "retrieve-sender-address" => s.retrieve_sender_address = value.get().unwrap(),
            "fd" => s.fd = value.get().unwrap(),
            name => unreachable!("writable property {name}"),
        }
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        let s = self.settings.lock().unwrap();
        match pspec.name() {
            "context" => s.context.to_value(),
            "context-wait" => s.context_wait.to_value(),
            "address" => s.address.to_value(),
            "port" => s.port.to_value(),
            "reuse" => s.reuse.to_value(),
            "mtu" => s.mtu.to_value(),
            "caps" => s.caps.to_value(),
            "retrieve-sender-address" => s.retrieve_sender_address.to_value(),
            "fd" => s.fd.to_value(),
            "used-port" => {
                let prepared = self.prepared.lock().unwrap();
                i32::from(prepared.as_ref().map_or(0, |p| p.local_addr.port())).to_value()
            }
            name => unreachable!("property {name}"),
        }
    }

    fn constructed(&self) {
        self.parent_constructed();
        let obj = self.obj();
        obj.add_pad(&self.src_pad).expect("one src pad");
        obj.set_element_flags(gst::ElementFlags::SOURCE);
    }
}

impl GstObjectImpl for UdpSrc {}

impl ElementImpl for UdpSrc {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static META: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "Tempo UDP source",
                "Source/Network",
                "Receives UDP datagrams on a shared Tempo context, one buffer per datagram \
                 stamped with its arrival time",
                "Tempo developers",
            )
        });
        Some(&*META)
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static TEMPLATES: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(|| {
            vec![gst::PadTemplate::new(
                "src",
                gst::PadDirection::Src,
                gst::PadPresence::Always,
                &gst::Caps::new_any(),
            )
            .expect("src template")]
        });
        TEMPLATES.as_ref()
    }

    fn change_state(
        &self,
        transition: gst::StateChange,
    ) -> Result<gst::StateChangeSuccess, gst::StateChangeError> {
        use gst::StateChange as T;
        gst::debug!(CAT, imp = self, "{transition:?}");
        match transition {
            T::NullToReady => self.prepare().map_err(|msg| self.fail(msg))?,
            T::PlayingToPaused => {
                self.playing.store(false, Ordering::SeqCst);
                // Not waited for: see the module docs.
                drop(self.task.pause());
            }
            _ => {}
        }
        let mut success = self.parent_change_state(transition)?;
        match transition {
            T::ReadyToPaused => {
                self.flags.need_stream_start.store(true, Ordering::SeqCst);
                self.flags.need_segment.store(true, Ordering::SeqCst);
                success = gst::StateChangeSuccess::NoPreroll;
            }
            T::PausedToPlaying => {
                self.playing.store(true, Ordering::SeqCst);
                wait_ack(self.task.start(), "start receiving").map_err(|msg| self.fail(msg))?;
            }
            T::PlayingToPaused => success = gst::StateChangeSuccess::NoPreroll,
            T::PausedToReady => {
                if let Err(msg) = wait_ack(self.task.stop(), "stop receiving") {
                    gst::warning!(CAT, imp = self, "{msg}");
                }
            }
            T::ReadyToNull => self.unprepare(),
            _ => {}
        }
        Ok(success)
    }

    fn send_event(&self, event: gst::Event) -> bool {
        match event.view() {
            gst::EventView::Eos(_) => self.eos(event),
            gst::EventView::FlushStart(_) => self.flush_start(event),
            gst::EventView::FlushStop(_) => self.flush_stop(event),
            _ => self.parent_send_event(event),
        }
    }
}

impl UdpSrc {
    fn fail(&self, msg: gst::ErrorMessage) -> gst::StateChangeError {
        self.post_error_message(msg);
        gst::StateChangeError
    }

    fn bind(&self, s: &Settings) -> Result<std::net::UdpSocket, gst::ErrorMessage> {
        if s.fd >= 0 {
            return sys::adopt_udp(s.fd).map_err(|err| {
                gst::error_msg!(
                    gst::ResourceError::OpenRead,
                    (
                        "Socket fd {} cannot be used: {err}. Hand over an open UDP socket's \
                         descriptor, or set fd=-1 to bind address:port",
                        s.fd
                    )
                )
            });
        }
        let ip: IpAddr = s.address.parse().map_err(|_| {
            gst::error_msg!(
                gst::ResourceError::Settings,
                (
                    "address '{}' is not an IP address: set address to an IPv4 or IPv6 \
                     address such as 0.0.0.0, ::, 127.0.0.1 or a multicast group",
                    s.address
                )
            )
        })?;
        let port = u16::try_from(s.port).expect("port property range");
        let bind_ip = match ip {
            IpAddr::V4(v4) if v4.is_multicast() => IpAddr::V4(Ipv4Addr::UNSPECIFIED),
            IpAddr::V6(v6) if v6.is_multicast() => IpAddr::V6(Ipv6Addr::UNSPECIFIED),
            ip => ip,
        };
        let socket =
            sys::bind_udp(SocketAddr::new(bind_ip, port), s.reuse).map_err(|err| {
                match err.kind() {
                    std::io::ErrorKind::AddrInUse => gst::error_msg!(
                        gst::ResourceError::Busy,
                        ("UDP port {port} on {bind_ip} is in use by another socket: choose a \
                         free port (port=0 picks one, see used-port), or set reuse=true on \
                         every socket that shares it"),
                        ["{err}"]
                    ),
                    std::io::ErrorKind::AddrNotAvailable => gst::error_msg!(
                        gst::ResourceError::OpenRead,
                        ("address {bind_ip} is not an address of this machine: use one of its \
                         interface addresses, or 0.0.0.0 / :: for all"),
                        ["{err}"]
                    ),
                    _ => gst::error_msg!(
                        gst::ResourceError::OpenRead,
                        ("Could not bind a UDP socket to {bind_ip}:{port}: {err}"),
                        ["{err:?}"]
                    ),
                }
            })?;
        let joined = match ip {
            IpAddr::V4(group) if group.is_multicast() => {
                socket.join_multicast_v4(&group, &Ipv4Addr::UNSPECIFIED)
            }
            IpAddr::V6(group) if group.is_multicast() => socket.join_multicast_v6(&group, 0),
            _ => Ok(()),
        };
        joined.map_err(|err| {
            gst::error_msg!(
                gst::ResourceError::OpenRead,
                ("Could not join multicast group {ip}: {err}. Check the route to the group"),
                ["{err:?}"]
            )
        })?;
        Ok(socket)
    }

    fn prepare(&self) -> Result<(), gst::ErrorMessage> {
        let s = self.settings.lock().unwrap().clone();
        let socket = self.bind(&s)?;
        let timestamps = match sys::enable_timestamps(&socket) {
            Ok(()) => true,
            Err(err) => {
                gst::warning!(CAT, imp = self, "no kernel receive timestamps: {err}");
                false
            }
        };
        let local_addr = socket.local_addr().map_err(|err| {
            gst::error_msg!(gst::ResourceError::OpenRead, ("Socket error: {err}"))
        })?;
        let obj = self.obj();
        let context = common::acquire_context(obj.upcast_ref(), &s.context, s.context_wait)?;
        let mtu = (s.mtu as usize).min(MAX_UDP_PAYLOAD);
        let imp = SrcTask {
            element: obj.downgrade(),
            pad: self.src_pad.clone(),
            flags: self.flags.clone(),
            caps: s.caps.clone(),
            mtu,
            retrieve_sender: s.retrieve_sender_address,
            std_socket: Some(socket),
            timestamps,
            receiver: None,
            buffers: Buffers::new(mtu),
            clock: None,
            base_time: gst::ClockTime::ZERO,
            reading: None,
            peer: None,
            sender: None,
        };
        wait_ack(
            self.task.prepare(imp, context.clone()),
            "prepare the socket on its context",
        )?;
        *self.prepared.lock().unwrap() = Some(Prepared {
            _context: context,
            local_addr,
        });
        gst::debug!(CAT, imp = self, "receiving on {local_addr}");
        Ok(())
    }

    fn unprepare(&self) {
        if let Err(msg) = wait_ack(self.task.unprepare(), "close the socket") {
            gst::warning!(CAT, imp = self, "{msg}");
        }
        *self.prepared.lock().unwrap() = None;
    }

    fn flush_start(&self, event: gst::Event) -> bool {
        gst::debug!(CAT, imp = self, "flush start");
        // Downstream first: it releases a push the task may be blocked in.
        self.src_pad.push_event(event);
        if let Err(msg) = wait_ack(self.task.flush_start(), "flush") {
            gst::warning!(CAT, imp = self, "{msg}");
            return false;
        }
        true
    }

    fn flush_stop(&self, event: gst::Event) -> bool {
        gst::debug!(CAT, imp = self, "flush stop");
        self.src_pad.push_event(event);
        self.flags.need_segment.store(true, Ordering::SeqCst);
        if let Err(msg) = wait_ack(self.task.flush_stop(), "end the flush") {
            gst::warning!(CAT, imp = self, "{msg}");
            return false;
        }
        if self.playing.load(Ordering::SeqCst) {
            // A push refused as flushing paused the task (as `basesrc` does).
            drop(self.task.start());
        }
        true
    }

    /// EOS sent to the element: pushed after the buffers already received,
    /// then the task stops.
    fn eos(&self, event: gst::Event) -> bool {
        if let Err(msg) = wait_ack(self.task.pause(), "pause for end of stream") {
            gst::warning!(CAT, imp = self, "{msg}");
        }
        let caps = self.settings.lock().unwrap().caps.clone();
        push_initial_events(&self.src_pad, &self.flags, caps.as_ref());
        let pushed = self.src_pad.push_event(event);
        drop(self.task.stop());
        pushed
    }

    fn src_event(&self, pad: &gst::Pad, event: gst::Event) -> bool {
        match event.view() {
            gst::EventView::FlushStart(_) => self.flush_start(event),
            gst::EventView::FlushStop(_) => self.flush_stop(event),
            gst::EventView::Seek(seek) => {
                let (_, flags, ..) = seek.get();
                if !flags.contains(gst::SeekFlags::FLUSH) {
                    gst::debug!(
                        CAT,
                        imp = self,
                        "a live source cannot do a non-flushing seek"
                    );
                    return false;
                }
                let seqnum = event.seqnum();
                self.flush_start(gst::event::FlushStart::builder().seqnum(seqnum).build())
                    && self.flush_stop(gst::event::FlushStop::builder(true).seqnum(seqnum).build())
            }
            _ => gst::Pad::event_default(pad, Some(&*self.obj()), event),
        }
    }

    fn src_query(&self, pad: &gst::Pad, query: &mut gst::QueryRef) -> bool {
        match query.view_mut() {
            gst::QueryViewMut::Latency(q) => {
                // A buffer is pushed up to one context-wait after it arrived.
                let wait = self.settings.lock().unwrap().context_wait;
                q.set(true, gst::ClockTime::from_mseconds(wait.into()), None);
                true
            }
            gst::QueryViewMut::Caps(q) => {
                let caps = self.settings.lock().unwrap().caps.clone();
                let caps = caps.unwrap_or_else(gst::Caps::new_any);
                let caps = match q.filter() {
                    Some(filter) => {
                        filter.intersect_with_mode(&caps, gst::CapsIntersectMode::First)
                    }
                    None => caps,
                };
                q.set_result(&caps);
                true
            }
            _ => gst::Pad::query_default(pad, Some(&*self.obj()), query),
        }
    }
}

/// Pushes stream-start, caps and segment where they are due.
fn push_initial_events(pad: &gst::Pad, flags: &Flags, caps: Option<&gst::Caps>) {
    if flags.need_stream_start.swap(false, Ordering::SeqCst) {
        let id = pad.create_stream_id(&pad.parent_element().expect("in an element"), None::<&str>);
        pad.push_event(gst::event::StreamStart::builder(&id).build());
        if let Some(caps) = caps {
            pad.push_event(gst::event::Caps::new(caps));
        }
    }
    if flags.need_segment.swap(false, Ordering::SeqCst) {
        let segment = gst::FormattedSegment::<gst::ClockTime>::new();
        pad.push_event(gst::event::Segment::new(&segment));
    }
}

/// The source's side of its task.
struct SrcTask {
    element: glib::WeakRef<super::TempoUdpSrc>,
    pad: gst::Pad,
    flags: Arc<Flags>,
    caps: Option<gst::Caps>,
    mtu: usize,
    retrieve_sender: bool,
    /// Bound by the element; a receiver on the context's ring in `prepare`.
    std_socket: Option<std::net::UdpSocket>,
    /// The socket gives kernel receive timestamps (else buffers are
    /// stamped when read).
    timestamps: bool,
    receiver: Option<ReceiverKey>,
    buffers: Buffers,
    clock: Option<gst::Clock>,
    base_time: gst::ClockTime,
    /// The last reading of `clock`, while it covers the arrivals.
    reading: Option<Stamp>,
    /// The element downstream, looked up at each start.
    peer: Option<gst::Element>,
    /// The last sender and its GObject: a stream comes from one sender,
    /// so its buffers share one immutable address instead of making two
    /// GObjects per datagram.
    sender: Option<(SocketAddr, gio::InetSocketAddress)>,
}

/// How long one [`Stamp`] converts arrival times either side of its
/// reading: the pipeline clock and the system's real time drift apart by
/// at most NTP's slew rate (0.05 %) over it, 50 µs.
const STAMP_SPAN: Duration = Duration::from_millis(100);

/// How a datagram's arrival time (the system's real time, from the
/// kernel) becomes running time: the pipeline clock and the real time
/// read together, reused for the datagrams within [`STAMP_SPAN`] of it.
#[derive(Clone, Copy)]
struct Stamp {
    clock_now: Option<gst::ClockTime>,
    real_now: SystemTime,
    base_time: gst::ClockTime,
}

impl Stamp {
    fn read(clock: Option<&gst::Clock>, base_time: gst::ClockTime) -> Stamp {
        Stamp {
            clock_now: clock.map(|c| c.time()),
            real_now: SystemTime::now(),
            base_time,
        }
    }

    /// Whether this reading may convert `t`.
    fn covers(&self, t: SystemTime) -> bool {
        let apart = match t.duration_since(self.real_now) {
            Ok(after) => after,
            Err(before) => before.duration(),
        };
        apart < STAMP_SPAN
    }

    /// The running time at which a datagram that `arrived` reached the
    /// socket (never negative; `None` without a clock).
    fn running_time(&self, arrived: SystemTime) -> Option<gst::ClockTime> {
        let now = self.clock_now?;
        let nanos = |d: Duration| gst::ClockTime::from_nseconds(d.as_nanos() as u64);
        let at = match arrived.duration_since(self.real_now) {
            Ok(after) => now + nanos(after),
            Err(before) => now.saturating_sub(nanos(before.duration())),
        };
        Some(at.saturating_sub(self.base_time))
    }
}

impl SrcTask {
    /// Receives the next datagram (waiting for one) into a buffer stamped
    /// with its arrival.
    async fn receive(&mut self) -> Result<gst::Buffer, FlowError> {
        let SrcTask {
            receiver,
            buffers,
            mtu,
            retrieve_sender,
            clock,
            base_time,
            reading,
            element,
            sender,
            ..
        } = self;
        let key = receiver.as_ref().ok_or(FlowError::Flushing)?;
        let mtu = *mtu;
        let received = poll_fn(|cx| {
            receivers::poll_recv_with(key, cx, |datagram| {
                if datagram.truncated {
                    if let Some(element) = element.upgrade() {
                        gst::warning!(
                            CAT,
                            obj = element,
                            "a datagram longer than mtu ({mtu} bytes) was cut: raise mtu"
                        );
                    }
                }
                let payload = datagram.payload;
                let mut buffer = match buffers.get(payload.len()) {
                    Ok(buffer) => buffer,
                    Err(_) => {
                        gst::Buffer::with_size(payload.len()).map_err(std::io::Error::other)?
                    }
                };
                let b = buffer.get_mut().expect("a new buffer is writable");
                b.map_writable()
                    .map_err(std::io::Error::other)?
                    .copy_from_slice(payload);
                // The read time where the kernel gave no timestamp.
                let arrived = datagram.timestamp.unwrap_or_else(SystemTime::now);
                let stamp = match reading {
                    Some(stamp) if stamp.covers(arrived) => *stamp,
                    _ => *reading.insert(Stamp::read(clock.as_ref(), *base_time)),
                };
                let ts = stamp.running_time(arrived);
                b.set_pts(ts);
                b.set_dts(ts);
                if *retrieve_sender {
                    let from = datagram.source;
                    let addr = match sender {
                        Some((last, addr)) if *last == from => addr,
                        _ => &sender.insert((from, from.into())).1,
                    };
                    gst_net::NetAddressMeta::add(b, addr);
                }
                Ok::<_, std::io::Error>(buffer)
            })
        })
        .await;
        received.and_then(|made| made).map_err(|err| {
            FlowError::Error(format!("receive failed: {err}. Check the network interface").into())
        })
    }
}

impl TaskImpl for SrcTask {
    type Item = gst::Buffer;

    async fn prepare(&mut self) -> Result<(), BoxError> {
        let std_socket = self.std_socket.take().ok_or("no socket to prepare")?;
        let receiver = if self.timestamps {
            UdpRingReceiver::from_std_with_timestamps(std_socket, self.mtu)?
        } else {
            UdpRingReceiver::from_std(std_socket, self.mtu)?
        };
        if let Some(element) = self.element.upgrade() {
            let on = if receiver.is_on_ring() {
                "io_uring"
            } else {
                "epoll"
            };
            gst::debug!(CAT, obj = element, "receiving on {on}");
        }
        self.receiver = Some(receivers::keep(receiver));
        Ok(())
    }

    async fn unprepare(&mut self) {
        if let Some(key) = self.receiver.take() {
            receivers::close(key).await;
        }
        self.peer = None;
        self.buffers.reset();
    }

    async fn start(&mut self) -> Result<(), BoxError> {
        if let Some(element) = self.element.upgrade() {
            self.clock = element.clock();
            self.base_time = element.base_time().unwrap_or(gst::ClockTime::ZERO);
        }
        self.reading = None;
        push_initial_events(&self.pad, &self.flags, self.caps.as_ref());
        self.peer = common::peer_element(&self.pad);
        Ok(())
    }

    async fn try_next(&mut self) -> Result<gst::Buffer, FlowError> {
        self.receive().await
    }

    async fn handle_item(&mut self, buffer: gst::Buffer) -> Result<(), FlowError> {
        match common::push_buffer(&self.pad, self.peer.as_ref(), buffer).await {
            Ok(_) => Ok(()),
            Err(gst::FlowError::Flushing) => Err(FlowError::Flushing),
            Err(gst::FlowError::Eos) => Err(FlowError::Eos),
            Err(err) => Err(FlowError::Error(format!("{err:?}").into())),
        }
    }

    async fn handle_loop_error(&mut self, error: FlowError) -> Trigger {
        let element = self.element.upgrade().map(|e| e.upcast::<gst::Element>());
        common::loop_error_trigger(element, error)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_datagram_is_stamped_with_its_arrival_not_its_read() {
        let real_now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let stamp = Stamp {
            clock_now: Some(gst::ClockTime::from_mseconds(100)),
            real_now,
            base_time: gst::ClockTime::from_mseconds(10),
        };
        // Arrived 15 ms before the reading: running time 100 - 15 - 10.
        let arrived = real_now - Duration::from_millis(15);
        assert_eq!(
            stamp.running_time(arrived),
            Some(gst::ClockTime::from_mseconds(75))
        );
        // Read at the reading (no kernel timestamp), or 5 ms after it (a
        // later datagram converted by the same reading).
        assert_eq!(
            stamp.running_time(real_now),
            Some(gst::ClockTime::from_mseconds(90))
        );
        let later = real_now + Duration::from_millis(5);
        assert_eq!(
            stamp.running_time(later),
            Some(gst::ClockTime::from_mseconds(95))
        );
        // Arrived before the pipeline started: running time 0, never negative.
        let early = real_now - Duration::from_millis(500);
        assert_eq!(stamp.running_time(early), Some(gst::ClockTime::ZERO));
        // No clock yet: no timestamp.
        let no_clock = Stamp {
            clock_now: None,
            ..stamp
        };
        assert_eq!(no_clock.running_time(arrived), None);
    }

    #[test]
    fn a_reading_converts_the_arrivals_within_its_span_either_side() {
        let real_now = SystemTime::UNIX_EPOCH + Duration::from_secs(1_000);
        let stamp = Stamp {
            clock_now: Some(gst::ClockTime::from_mseconds(100)),
            real_now,
            base_time: gst::ClockTime::ZERO,
        };
        let just_in = STAMP_SPAN - Duration::from_micros(1);
        assert!(stamp.covers(real_now + just_in));
        assert!(stamp.covers(real_now - just_in));
        assert!(!stamp.covers(real_now + STAMP_SPAN));
        assert!(!stamp.covers(real_now - STAMP_SPAN));
    }
}
