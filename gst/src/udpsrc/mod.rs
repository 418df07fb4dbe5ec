//! `tempoudpsrc`: a live UDP source whose receive runs on a Tempo context.
//!
//! One buffer per datagram, PTS and DTS set to the running time at which
//! the datagram arrived (the kernel's receive timestamp, else the time it
//! was read), so that the context's throttling adds no jitter to the
//! timestamps.

use gst::glib;
use gst::prelude::*;

mod buffers;
mod imp;
mod receivers;

glib::wrapper! {
    /// The `tempoudpsrc` element; see the [module docs](self).
    pub struct TempoUdpSrc(ObjectSubclass<imp::UdpSrc>) @extends gst::Element, gst::Object;
}

pub(crate) fn register(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    gst::Element::register(
        Some(plugin),
        "tempoudpsrc",
        gst::Rank::NONE,
        TempoUdpSrc::static_type(),
    )
}
