//! The element (properties, pads, state changes, flushes) and its task,
//! which pops the [`DataQueue`] and pushes downstream.
//!
//! States: NULL->READY prepares the task on the context, READY->PAUSED
//! starts it (a queue pushes in PAUSED too, for preroll), PAUSED->READY
//! stops it and READY->NULL unprepares it. The queue accepts data from
//! READY->PAUSED to PAUSED->READY; outside that, and while flushing, the
//! sink pad answers FLUSHING.

use std::future::poll_fn;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, LazyLock, Mutex};

use gst::glib;
use gst::prelude::*;
use gst::subclass::prelude::*;
use tempo::context::Context;
use tempo_media::{BoxError, FlowError, Task, TaskImpl, Trigger};

use crate::common::{self, wait_ack, DataQueue, Item, Limits, PushError};

static CAT: LazyLock<gst::DebugCategory> = LazyLock::new(|| {
    gst::DebugCategory::new(
        "tempoqueue",
        gst::DebugColorFlags::empty(),
        Some("Tempo queue"),
    )
});

const DEFAULT_MAX_BUFFERS: u32 = 200;
const DEFAULT_MAX_BYTES: u32 = 1024 * 1024;
const DEFAULT_MAX_TIME: u64 = gst::ClockTime::SECOND.nseconds();

#[derive(Debug, Clone)]
struct Settings {
    context: String,
    context_wait: u32,
    limits: Limits,
}

impl Default for Settings {
    fn default() -> Self {
        Settings {
            context: String::new(),
            context_wait: 0,
            limits: Limits {
                buffers: DEFAULT_MAX_BUFFERS,
                bytes: DEFAULT_MAX_BYTES,
                time: gst::ClockTime::from_nseconds(DEFAULT_MAX_TIME),
            },
        }
    }
}

/// The `tempoqueue` implementation.
pub struct Queue {
    sink_pad: gst::Pad,
    src_pad: gst::Pad,
    settings: Mutex<Settings>,
    queue: Arc<DataQueue>,
    task: Task,
    /// Held from READY up (keeps the context running).
    context: Mutex<Option<Context>>,
    /// From READY->PAUSED to PAUSED->READY: a flush stop restarts the task.
    active: AtomicBool,
}

#[glib::object_subclass]
impl ObjectSubclass for Queue {
    const NAME: &'static str = "GstTempoQueue";
    type Type = super::TempoQueue;
    type ParentType = gst::Element;

    fn with_class(klass: &Self::Class) -> Self {
        let sink_pad = gst::Pad::builder_from_template(&klass.pad_template("sink").unwrap())
            .chain_function(|_pad, parent, buffer| {
                Queue::catch_panic_pad_function(
                    parent,
                    || Err(gst::FlowError::Error),
                    |q| q.sink_chain(buffer),
                )
            })
            .event_function(|pad, parent, event| {
                Queue::catch_panic_pad_function(parent, || false, |q| q.sink_event(pad, event))
            })
            .flags(gst::PadFlags::PROXY_CAPS | gst::PadFlags::PROXY_ALLOCATION)
            .build();
        let src_pad = gst::Pad::builder_from_template(&klass.pad_template("src").unwrap())
            .flags(gst::PadFlags::PROXY_CAPS | gst::PadFlags::PROXY_ALLOCATION)
            .build();
        let settings = Settings::default();
        Queue {
            sink_pad,
            src_pad,
            queue: Arc::new(DataQueue::new(settings.limits)),
            settings: Mutex::new(settings),
            task: Task::new(),
            context: Mutex::new(None),
            active: AtomicBool::new(false),
        }
    }
}

impl ObjectImpl for Queue {
    fn properties() -> &'static [glib::ParamSpec] {
        static PROPERTIES: LazyLock<Vec<glib::ParamSpec>> = LazyLock::new(|| {
            let mut props = common::context_properties().to_vec();
            props.extend([
                glib::ParamSpecUInt::builder("max-size-buffers")
                    .nick("Max buffers")
                    .blurb("Most buffers queued (0: no limit)")
                    .default_value(DEFAULT_MAX_BUFFERS)
                    .mutable_playing()
                    .build(),
                glib::ParamSpecUInt::builder("max-size-bytes")
                    .nick("Max bytes")
                    .blurb("Most bytes queued (0: no limit)")
                    .default_value(DEFAULT_MAX_BYTES)
                    .mutable_playing()
                    .build(),
                glib::ParamSpecUInt64::builder("max-size-time")
                    .nick("Max time")
                    .blurb("Most time queued in ns, newest minus oldest timestamp (0: no limit)")
                    .default_value(DEFAULT_MAX_TIME)
                    .mutable_playing()
                    .build(),
                glib::ParamSpecUInt::builder("current-level-buffers")
                    .nick("Current buffers")
                    .blurb("Buffers queued now")
                    .read_only()
                    .build(),
                glib::ParamSpecUInt::builder("current-level-bytes")
                    .nick("Current bytes")
                    .blurb("Bytes queued now")
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
            "max-size-buffers" => s.limits.buffers = value.get().unwrap(),
            "max-size-bytes" => s.limits.bytes = value.get().unwrap(),
            "max-size-time" => {
                s.limits.time = gst::ClockTime::from_nseconds(value.get().unwrap());
            }
            name => unreachable!("writable property {name}"),
        }
        self.queue.set_limits(s.limits);
    }

    fn property(&self, _id: usize, pspec: &glib::ParamSpec) -> glib::Value {
        let s = self.settings.lock().unwrap();
        match pspec.name() {
            "context" => s.context.to_value(),
            "context-wait" => s.context_wait.to_value(),
            "max-size-buffers" => s.limits.buffers.to_value(),
            "max-size-bytes" => s.limits.bytes.to_value(),
            "max-size-time" => s.limits.time.nseconds().to_value(),
            "current-level-buffers" => self.queue.level().0.to_value(),
            "current-level-bytes" => u32::try_from(self.queue.level().1)
                .unwrap_or(u32::MAX)
                .to_value(),
            name => unreachable!("property {name}"),
        }
    }

    fn constructed(&self) {
        self.parent_constructed();
        let obj = self.obj();
        obj.add_pad(&self.sink_pad).expect("one sink pad");
        obj.add_pad(&self.src_pad).expect("one src pad");
    }
}

impl GstObjectImpl for Queue {}

impl ElementImpl for Queue {
    fn metadata() -> Option<&'static gst::subclass::ElementMetadata> {
        static META: LazyLock<gst::subclass::ElementMetadata> = LazyLock::new(|| {
            gst::subclass::ElementMetadata::new(
                "Tempo queue",
                "Generic",
                "Queues data from an upstream thread and pushes it downstream from a shared \
                 Tempo context",
                "Tempo developers",
            )
        });
        Some(&*META)
    }

    fn pad_templates() -> &'static [gst::PadTemplate] {
        static TEMPLATES: LazyLock<Vec<gst::PadTemplate>> = LazyLock::new(|| {
            let any = gst::Caps::new_any();
            vec![
                gst::PadTemplate::new(
                    "sink",
                    gst::PadDirection::Sink,
                    gst::PadPresence::Always,
                    &any,
                )
                .unwrap(),
                gst::PadTemplate::new(
                    "src",
                    gst::PadDirection::Src,
                    gst::PadPresence::Always,
                    &any,
                )
                .unwrap(),
            ]
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
                // Releases a producer blocked on a full queue.
                self.queue.set_flushing(true);
            }
            _ => {}
        }
        let success = self.parent_change_state(transition)?;
        match transition {
            T::ReadyToPaused => {
                self.queue.set_flushing(false);
                self.active.store(true, Ordering::SeqCst);
                wait_ack(self.task.start(), "start pushing").map_err(|msg| self.fail(msg))?;
            }
            T::PausedToReady => {
                if let Err(msg) = wait_ack(self.task.stop(), "stop pushing") {
                    gst::warning!(CAT, imp = self, "{msg}");
                }
            }
            T::ReadyToNull => {
                if let Err(msg) = wait_ack(self.task.unprepare(), "unprepare") {
                    gst::warning!(CAT, imp = self, "{msg}");
                }
                *self.context.lock().unwrap() = None;
            }
            _ => {}
        }
        Ok(success)
    }
}

impl Queue {
    fn fail(&self, msg: gst::ErrorMessage) -> gst::StateChangeError {
        self.post_error_message(msg);
        gst::StateChangeError
    }

    fn prepare(&self) -> Result<(), gst::ErrorMessage> {
        let s = self.settings.lock().unwrap().clone();
        let obj = self.obj();
        let context = common::acquire_context(obj.upcast_ref(), &s.context, s.context_wait)?;
        let imp = QueueTask {
            element: obj.downgrade(),
            src_pad: self.src_pad.clone(),
            queue: self.queue.clone(),
            peer: None,
        };
        wait_ack(
            self.task.prepare(imp, context.clone()),
            "prepare on its context",
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
                    "queue full and the producer runs on a context: buffer dropped"
                );
                Ok(gst::FlowSuccess::Ok)
            }
        }
    }

    fn flush_start(&self, event: gst::Event) -> bool {
        self.queue.set_flushing(true);
        let forwarded = self.src_pad.push_event(event);
        if let Err(msg) = wait_ack(self.task.flush_start(), "flush") {
            gst::warning!(CAT, imp = self, "{msg}");
        }
        forwarded
    }

    fn flush_stop(&self, event: gst::Event) -> bool {
        let forwarded = self.src_pad.push_event(event);
        if let Err(msg) = wait_ack(self.task.flush_stop(), "end the flush") {
            gst::warning!(CAT, imp = self, "{msg}");
        }
        if self.active.load(Ordering::SeqCst) {
            // After an EOS or a FLUSHING downstream the task stopped or paused.
            drop(self.task.start());
            self.queue.set_flushing(false);
        }
        forwarded
    }

    fn sink_event(&self, pad: &gst::Pad, event: gst::Event) -> bool {
        match event.view() {
            gst::EventView::FlushStart(_) => self.flush_start(event),
            gst::EventView::FlushStop(_) => self.flush_stop(event),
            _ if event.is_serialized() => {
                if !self.queue.push_event(event) {
                    gst::debug!(CAT, imp = self, "flushing: serialized event dropped");
                    return false;
                }
                true
            }
            _ => gst::Pad::event_default(pad, Some(&*self.obj()), event),
        }
    }
}

/// The queue's side of its task: pop, push downstream.
struct QueueTask {
    element: glib::WeakRef<super::TempoQueue>,
    src_pad: gst::Pad,
    queue: Arc<DataQueue>,
    /// The element downstream, looked up at each start.
    peer: Option<gst::Element>,
}

impl TaskImpl for QueueTask {
    type Item = Item;

    async fn start(&mut self) -> Result<(), BoxError> {
        self.peer = common::peer_element(&self.src_pad);
        Ok(())
    }

    async fn unprepare(&mut self) {
        self.peer = None;
    }

    async fn try_next(&mut self) -> Result<Item, FlowError> {
        Ok(poll_fn(|cx| self.queue.poll_pop(cx)).await)
    }

    async fn handle_item(&mut self, item: Item) -> Result<(), FlowError> {
        match item {
            Item::Buffer(buffer) => {
                match common::push_buffer(&self.src_pad, self.peer.as_ref(), buffer).await {
                    Ok(_) => Ok(()),
                    Err(gst::FlowError::Flushing) => Err(FlowError::Flushing),
                    Err(gst::FlowError::Eos) => Err(FlowError::Eos),
                    Err(err) => Err(FlowError::Error(format!("{err:?}").into())),
                }
            }
            Item::Event(event) => {
                let eos = matches!(event.view(), gst::EventView::Eos(_));
                self.src_pad.push_event(event);
                if eos {
                    Err(FlowError::Eos)
                } else {
                    Ok(())
                }
            }
        }
    }

    async fn handle_loop_error(&mut self, error: FlowError) -> Trigger {
        let element = self.element.upgrade().map(|e| e.upcast::<gst::Element>());
        common::loop_error_trigger(element, error)
    }
}
