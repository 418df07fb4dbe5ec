//! `tempoudpsink`: sends each buffer as one datagram to one or more UDP
//! clients, from a Tempo context.

use gst::glib;
use gst::prelude::*;

mod imp;

glib::wrapper! {
    /// The `tempoudpsink` element; see the [module docs](self).
    pub struct TempoUdpSink(ObjectSubclass<imp::UdpSink>) @extends gst::Element, gst::Object;
}

pub(crate) fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    gst::Element::register(
        Some(plugin),
        "tempoudpsink",
        gst::Rank::NONE,
        TempoUdpSink::static_type(),
    )
}
