//! The element (properties, pad, state changes, flushes) and its task,
//! which pops the [`DataQueue`] and sends each buffer to every client.
//!
//! States: NULL->READY resolves the clients, binds the sending socket (so
//! that both errors are element errors) and prepares the task;
//! READY->PAUSED starts it; PAUSED->READY stops and READY->NULL
//! unprepares it. The sink does not synchronise on the clock: each buffer
//! goes out when the context serves it.

use std::future::poll_fn;
use std::net::{Ipv4Addr, Ipv6Addr, SocketAddr, ToSocketAddrs};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use tempo::context::Context;
use tempo::net::UdpSocket;
use tempo_media::{BoxError, FlowError, Task, TaskImpl, Trigger};

use crate::common::{self, wait_ack, DataQueue, Item, Limits, PushError};
use crate::sys;

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "tempoudpsink",
        gst::DebugColorFlags::empty(),
        Some("Tempo UDP sink"),
    )
});

const DEFAULT_HOST: &str = "127.0.0.1";
const DEFAULT_PORT: i32 = 5004;
/// Buffers waiting for the context; a producer off a context blocks
/// beyond this.
const QUEUE_BUFFERS: u32 = 256;

#[derive(Debug, Clone)]
struct Settings {
    context: String,
    context_wait: u32,
    host: String,
    port: i32,
    clients: String,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            context: String::new(),
            context_wait: 0,
            host: DEFAULT_HOST.into(),
            port: DEFAULT_PORT,
            clients: String::new(),
        }
    }
}

impl Settings {
    /// `host:port` and every entry of `clients`, resolved.
    fn resolve(&self) -> Result<Vec<SocketAddr>, gst::ErrorMessage> {
        let mut out = Vec::new();
        let mut add = |spec: &str, host: &str, port: u16| -> Result<(), gst::ErrorMessage> {
            let addrs = (host, port).to_socket_addrs().map_err(|err| {
                gst::error_msg!(
                    gst::ResourceError::NotFound,
                    ("client '{spec}' does not resolve ({err}): give an IP address or a \
                         host name this machine can resolve")
                )
            })?;
            let first = addrs.into_iter().next().ok_or_else(|| {
                gst::error_msg!(
                    gst::ResourceError::NotFound,
                    ("client '{spec}' has no address")
                )
            })?;
            if !out.contains(&first) {
                out.push(first);
            }
            Ok(())
        };
        if !self.host.is_empty() {
            let port = u16::try_from(self.port).expect("port property range");
            add(&format!("{}:{port}", self.host), &self.host, port)?;
        }
        for spec in self
            .clients
            .split(',')
            .map(str::trim)
            .filter(|c| !c.is_empty())
        {
            let parsed = spec
                .rsplit_once(':')
                .and_then(|(host, port)| Some((host, port.parse::<u16>().ok()?)));
            let (host, port) = parsed.ok_or_else(|| {
                gst::error_msg!(
                    gst::ResourceError::Settings,
                    ("client '{spec}' is not host:port: write clients as \
                         host:port[,host:port...], e.g. 127.0.0.1:5004")
                )
            })?;
            let host = host.trim_start_matches('[').trim_end_matches(']');
            add(spec, host, port)?;
        }
        Ok(out)
    }
}

/// The `tempoudpsink` implementation.
pub struct UdpSink {
    sink_pad: gst::Pad,
    settings: Mutex<Settings>,
    queue: Arc<DataQueue>,
    task: Task,
    /// Held from READY up (keeps the context running).
    context: Mutex<Option<Context>>,
    /// From READY->PAUSED to PAUSED->READY: a flush stop restarts the task.
    active: AtomicBool,
}

#[glib::object_subclass]
impl ObjectSubclass for UdpSink {
    const NAME: &'static str = "GstTempoUdpSink";
    type Type = super::TempoUdpSink;
    type ParentType = gst::Element;

    fn with_class(klass: &Self::Class) -> Self {
        let sink_pad = gst::Pad::builder_from_template(&klass.pad_template("sink").unwrap())
            .chain_function(|_pad, parent, buffer| {
                UdpSink::catch_panic_pad_function(
                    parent,
                    || Err(gst::FlowError::Error),
                    |s| s.sink_chain(buffer),
                )
            })
            .event_function(|pad, parent, event| {
                UdpSink::catch_panic_pad_function(parent, || false, |s| s.sink_event(pad, event))
            })
            .build();
        UdpSink {
            sink_pad,
            settings: Mutex::default(),
            queue: Arc::new(DataQueue::new(Limits {
                buffers: QUEUE_BUFFERS,
                bytes: 0,
                time: gst::ClockTime::ZERO,
            })),
            task: Task::new(),
            context: Mutex::new(None),
            active: AtomicBool::new(false),
        }
    }
}

impl ObjectImpl for UdpSink {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            let mut props = common::context_properties().to_vec();
            props.extend([
                glib::ParamSpecString::builder("host")
                    .nick("Host")
                    .blurb("Host (IP address or name) to send to, with port (empty: clients only)")
                    .default_value(Some(DEFAULT_HOST))
                    .mutable_ready()
                    .build(),
                glib::ParamSpecInt::builder("port")
                    .nick("Port")
                    .blurb("UDP port of host")
                    .minimum(0)
                    .maximum(u16::MAX.into())
                    .default_value(DEFAULT_PORT)
                    .mutable_ready()
                    .build(),
                glib::ParamSpecString::builder("clients")
                    .nick("Clients")
                    .blurb(
                        "More destinations, as host:port[,host:port...]; each buffer goes to all",
                    )
                    .default_value(Some(""))
                    .mutable_ready()
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
            "host" => s.host = value.get::<Option<String>>().unwrap().unwrap_or_default(),
            "port" => s.port = value.get().unwrap(),
            "clients" => s.clients = value.get::<Option<String>>().unwrap().unwrap_or_default(),
            name => unreachable!("writable property {name}"),
        }
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        let s = self.settings.lock().unwrap();
        match pspec.name() {
            "context" => s.context.to_value(),
            "context-wait" => s.context_wait.to_value(),
            "host" => s.host.to_value(),
            "port" => s.port.to_value(),
            "clients" => s.clients.to_value(),
            name => unreachable!("property {name}"),
        }
    }

    fn constructed(&self) {
        self.parent_constructed();
        let obj = self.obj();
        obj.add_pad(&self.sink_pad).expect("one sink pad");
        obj.set_element_flags(gst::ElementFlags::SINK);
    }
}

impl GstObjectImpl for UdpSink {}

impl ElementImpl for UdpSink {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static META: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "Tempo UDP sink",
                "Sink/Network",
                "Sends each buffer as a UDP datagram to its clients from a shared Tempo context",
                "Tempo developers",
            )
        });
        Some(&*META)
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static TEMPLATES: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(|| {
            vec![gst::PadTemplate::new(
                "sink",
                gst::PadDirection::Sink,
                gst::PadPresence::Always,
                &gst::Caps::new_any(),
            )
            .unwrap()]
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
            T::PausedToReady => {
                self.active.store(false, Ordering::SeqCst);
                self.queue.set_flushing(true);
            }
            _ => {}
        }
        let success = self.parent_change_state(transition)?;
        match transition {
            T::ReadyToPaused => {
                self.queue.set_flushing(false);
                self.active.store(true, Ordering::SeqCst);
                wait_ack(self.task.start(), "start sending").map_err(|msg| self.fail(msg))?;
            }
            T::PausedToReady => {
                if let Err(msg) = wait_ack(self.task.stop(), "stop sending") {
                    gst::warning!(CAT, imp = self, "{msg}");
                }
            }
            T::ReadyToNull => {
                if let Err(msg) = wait_ack(self.task.unprepare(), "close the socket") {
                    gst::warning!(CAT, imp = self, "{msg}");
                }
                *self.context.lock().unwrap() = None;
            }
            _ => {}
        }
        Ok(success)
    }
}

impl UdpSink {
    fn fail(&self, msg: gst::ErrorMessage) -> gst::StateChangeError {
        self.post_error_message(msg);
        gst::StateChangeError
    }

    fn prepare(&self) -> Result<(), gst::ErrorMessage> {
        let s = self.settings.lock().unwrap().clone();
        let clients = s.resolve()?;
        if clients.is_empty() {
            return Err(gst::error_msg!(
                gst::ResourceError::Settings,
                ("No destination: set host and port, or clients")
            ));
        }
        let bind = |any: SocketAddr| {
            sys::bind_udp(any, false).map_err(|err| {
                gst::error_msg!(
                    gst::ResourceError::OpenWrite,
                    ("Could not open a UDP socket on {any}: {err}")
                )
            })
        };
        let v4 = clients
            .iter()
            .any(SocketAddr::is_ipv4)
            .then(|| bind(SocketAddr::new(Ipv4Addr::UNSPECIFIED.into(), 0)))
            .transpose()?;
        let v6 = clients
            .iter()
            .any(SocketAddr::is_ipv6)
            .then(|| bind(SocketAddr::new(Ipv6Addr::UNSPECIFIED.into(), 0)))
            .transpose()?;
        let obj = self.obj();
        let context = common::acquire_context(obj.upcast_ref(), &s.context, s.context_wait)?;
        let imp = SinkTask {
            element: obj.downgrade(),
            queue: self.queue.clone(),
            clients,
            std_sockets: (v4, v6),
            v4: None,
            v6: None,
        };
        wait_ack(
            self.task.prepare(imp, context.clone()),
            "prepare the socket on its context",
        )?;
        *self.context.lock().unwrap() = Some(context);
        Ok(())
    }

    fn sink_chain(&self, buffer: gst::Buffer) -> Result<gst::FlowSuccess, gst::FlowError> {
        match self.queue.push_buffer(buffer) {
            Ok(()) => Ok(gst::FlowSuccess::Ok),
            Err(PushError::Flushing) => Err(gst::FlowError::Flushing),
            Err(PushError::Dropped) => {
                gst::warning!(
                    CAT,
                    imp = self,
                    "send queue full and the producer runs on a context: buffer dropped"
                );
                Ok(gst::FlowSuccess::Ok)
            }
        }
    }

    fn sink_event(&self, pad: &gst::Pad, event: gst::Event) -> bool {
        match event.view() {
            gst::EventView::FlushStart(_) => {
                self.queue.set_flushing(true);
                if let Err(msg) = wait_ack(self.task.flush_start(), "flush") {
                    gst::warning!(CAT, imp = self, "{msg}");
                }
                true
            }
            gst::EventView::FlushStop(_) => {
                if let Err(msg) = wait_ack(self.task.flush_stop(), "end the flush") {
                    gst::warning!(CAT, imp = self, "{msg}");
                }
                if self.active.load(Ordering::SeqCst) {
                    drop(self.task.start());
                    self.queue.set_flushing(false);
                }
                true
            }
            gst::EventView::Eos(_) => self.queue.push_event(event),
            _ => gst::Pad::event_default(pad, Some(&*self.obj()), event),
        }
    }
}

/// The sink's side of its task: pop, send to every client.
struct SinkTask {
    element: glib::WeakRef<super::TempoUdpSink>,
    queue: Arc<DataQueue>,
    clients: Vec<SocketAddr>,
    /// Bound by the element; registered on the context in `prepare`.
    std_sockets: (Option<std::net::UdpSocket>, Option<std::net::UdpSocket>),
    v4: Option<UdpSocket>,
    v6: Option<UdpSocket>,
}

impl TaskImpl for SinkTask {
    type Item = Item;

    async fn prepare(&mut self) -> Result<(), BoxError> {
        if let Some(s) = self.std_sockets.0.take() {
            self.v4 = Some(UdpSocket::from_std(s)?);
        }
        if let Some(s) = self.std_sockets.1.take() {
            self.v6 = Some(UdpSocket::from_std(s)?);
        }
        Ok(())
    }

    async fn unprepare(&mut self) {
        self.v4 = None;
        self.v6 = None;
    }

    async fn try_next(&mut self) -> Result<Item, FlowError> {
        Ok(poll_fn(|cx| self.queue.poll_pop(cx)).await)
    }

    async fn handle_item(&mut self, item: Item) -> Result<(), FlowError> {
        match item {
            Item::Buffer(buffer) => {
                let map = buffer
                    .into_mapped_buffer_readable()
                    .map_err(|_| FlowError::Error("unreadable buffer".into()))?;
                for &client in &self.clients {
                    let socket = if client.is_ipv4() { &self.v4 } else { &self.v6 };
                    let socket = socket.as_ref().ok_or(FlowError::Flushing)?;
                    if let Err(err) = socket.send_to(&map, client).await {
                        if let Some(element) = self.element.upgrade() {
                            gst::warning!(CAT, obj = element, "send to {client} failed: {err}");
                        }
                    }
                }
                Ok(())
            }
            Item::Event(event) => {
                if let (gst::EventView::Eos(_), Some(element)) =
                    (event.view(), self.element.upgrade())
                {
                    let msg = gst::message::Eos::builder()
                        .src(&element)
                        .seqnum(event.seqnum())
                        .build();
                    let _ = element.post_message(msg);
                }
                Ok(())
            }
        }
    }

    async fn handle_loop_error(&mut self, error: FlowError) -> Trigger {
        let element = self.element.upgrade().map(|e| e.upcast::<gst::Element>());
        common::loop_error_trigger(element, error)
    }
}
