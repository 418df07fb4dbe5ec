//! GStreamer elements whose streaming runs on shared Tempo contexts.
//!
//! * `tempoudpsrc`: a live UDP source; one buffer per datagram, stamped
//!   with the datagram's arrival time.
//! * `tempoudpsink`: sends each buffer to one or more UDP clients.
//! * `tempoqueue`: a queue whose source pad pushes from a context, so that
//!   an upstream thread hands its data over to a context.
//!
//! Elements whose `context` property names the same context share its
//! thread ([`tempo::context::Context::acquire`] with that name and
//! `context-wait`), and so can the application. GStreamer's state changes
//! drive each element's [`tempo_media::Task`]: NULL->READY prepares it,
//! PAUSED->PLAYING (a source) or READY->PAUSED (a queue or sink) starts it,
//! and the way down pauses, stops and unprepares it. The user guide is
//! `docs/gstreamer.md`.
#![deny(missing_docs)]

use gst::glib;

mod common;
mod queue;
mod sys;
mod udpsink;
mod udpsrc;

pub use queue::TempoQueue;
pub use udpsink::TempoUdpSink;
pub use udpsrc::TempoUdpSrc;

fn plugin_init(plugin: &gst::Plugin) -> Result<(), glib::BoolError> {
    udpsrc::register(plugin)?;
    udpsink::register(plugin)?;
    queue::register(plugin)?;
    Ok(())
}

/// The plugin descriptor GStreamer loads from the shared library, and
/// `plugin_register_static` for an application that links this crate.
#[allow(missing_docs)]
pub mod plugin {
    use super::plugin_init;

    gst::plugin_define!(
        tempo,
        env!("CARGO_PKG_DESCRIPTION"),
        plugin_init,
        env!("CARGO_PKG_VERSION"),
        "MIT/X11",
        env!("CARGO_PKG_NAME"),
        env!("CARGO_PKG_NAME"),
        env!("CARGO_PKG_REPOSITORY")
    );
}

pub use plugin::plugin_register_static;
