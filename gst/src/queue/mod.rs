//! `tempoqueue`: a queue whose source pad pushes from a Tempo context.
//!
//! The sink pad takes buffers and serialized events on the upstream
//! thread; a task on the context pushes them downstream in order. An
//! upstream thread (a `basesrc`, a decoder) thus hands its data over to a
//! context.

use gst::glib;
use gst::prelude::*;

mod imp;

glib::wrapper! {
    /// The `tempoqueue` element; see the [module docs](self).
    pub struct TempoQueue(ObjectSubclass<imp::Queue>) @extends gst::Element, gst::Object;
}

pub(crate) fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    gst::Element::register(
        Some(plugin),
        "tempoqueue",
        gst::Rank::NONE,
        TempoQueue::static_type(),
    )
}
