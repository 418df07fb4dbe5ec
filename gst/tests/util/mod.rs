//! Helpers shared by the plugin's integration tests.
#![allow(dead_code)]

use std::net::{SocketAddr, UdpSocket};
use std::sync::Once;

use gst::prelude::*;

/// How long a test waits for data that must arrive.
pub const PATIENCE: gst::ClockTime = gst::ClockTime::from_seconds(10);

/// Initialises GStreamer and registers the plugin statically, once.
pub fn init() {
    static ONCE: Once = Once::new();
    ONCE.call_once(|| {
        gst::init().unwrap();
        gsttempo::plugin_register_static().expect("register the tempo plugin");
    });
}

pub fn pipeline(description: &str) -> gst::Pipeline {
    gst::parse::launch(description)
        .unwrap_or_else(|e| panic!("{description}: {e}"))
        .downcast()
        .unwrap()
}

pub fn by_name(pipeline: &gst::Pipeline, name: &str) -> gst::Element {
    pipeline
        .by_name(name)
        .unwrap_or_else(|| panic!("no element {name}"))
}

pub fn appsink(pipeline: &gst::Pipeline, name: &str) -> gst_app::AppSink {
    by_name(pipeline, name).downcast().unwrap()
}

/// The address a `tempoudpsrc` (in READY or above) receives on.
pub fn src_addr(pipeline: &gst::Pipeline, name: &str) -> SocketAddr {
    let port: i32 = by_name(pipeline, name).property("used-port");
    assert_ne!(port, 0, "{name} is not bound");
    SocketAddr::from(([127, 0, 0, 1], port as u16))
}

pub fn sender() -> UdpSocket {
    UdpSocket::bind("127.0.0.1:0").unwrap()
}

/// Datagram `seq`: its number, big-endian, then padding to 160 bytes.
pub fn datagram(seq: u32) -> [u8; 160] {
    let mut d = [0u8; 160];
    d[..4].copy_from_slice(&seq.to_be_bytes());
    d
}

pub fn seq_of(sample: &gst::Sample) -> u32 {
    let map = sample.buffer().unwrap().map_readable().unwrap();
    u32::from_be_bytes(map[..4].try_into().unwrap())
}

/// The next sample, failing the test if none comes within [`PATIENCE`].
pub fn pull(sink: &gst_app::AppSink) -> gst::Sample {
    sink.try_pull_sample(PATIENCE)
        .expect("a buffer within the test's patience")
}

/// The first error on the bus (within [`PATIENCE`]): its message text.
pub fn bus_error(pipeline: &gst::Pipeline) -> String {
    let bus = pipeline.bus().unwrap();
    let msg = bus
        .timed_pop_filtered(PATIENCE, &[gst::MessageType::Error])
        .expect("an error message on the bus");
    match msg.view() {
        gst::MessageView::Error(e) => e.error().to_string(),
        _ => unreachable!(),
    }
}
