//! Each bad input is an element error on the bus that names the cause and
//! what to do, and a failed state change: never a panic or a hang.

mod util;

use gst::prelude::*;
use util::*;

/// Sets `description` to READY: the state change must fail, and the bus
/// error is returned.
fn fails_to_ready(description: &str) -> String {
    init();
    let p = pipeline(description);
    assert!(
        p.set_state(gst::State::Ready).is_err(),
        "{description} reached READY"
    );
    let error = bus_error(&p);
    p.set_state(gst::State::Null).unwrap();
    error
}

#[test]
fn an_address_that_does_not_parse() {
    let error = fails_to_ready("tempoudpsrc address=not-an-ip port=0 ! fakesink");
    assert!(
        error.contains("'not-an-ip' is not an IP address"),
        "{error}"
    );
    assert!(error.contains("set address to"), "{error}");
}

#[test]
fn an_address_of_another_machine() {
    let error = fails_to_ready("tempoudpsrc address=192.0.2.1 port=0 ! fakesink");
    assert!(error.contains("not an address of this machine"), "{error}");
}

#[test]
fn a_port_in_use() {
    let taken = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = taken.local_addr().unwrap().port();
    let error = fails_to_ready(&format!(
        "tempoudpsrc address=127.0.0.1 port={port} reuse=false ! fakesink"
    ));
    assert!(
        error.contains(&format!("UDP port {port} on 127.0.0.1 is in use")),
        "{error}"
    );
    assert!(error.contains("choose a free port"), "{error}");
}

#[test]
fn a_socket_that_is_not_a_udp_socket() {
    let tcp = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&tcp);
    let error = fails_to_ready(&format!("tempoudpsrc fd={fd} ! fakesink"));
    assert!(
        error.contains(&format!("Socket fd {fd} cannot be used")),
        "{error}"
    );
    assert!(error.contains("not a datagram socket"), "{error}");
}

#[test]
fn a_closed_descriptor() {
    // A descriptor number far above any this process has open.
    let error = fails_to_ready("tempoudpsrc fd=1000000 ! fakesink");
    assert!(
        error.contains("Socket fd 1000000 cannot be used"),
        "{error}"
    );
}

#[test]
fn a_context_asked_for_with_two_periods() {
    init();
    let first = pipeline("tempoudpsrc port=0 context=err-period context-wait=10 ! fakesink");
    first.set_state(gst::State::Ready).unwrap();
    let error = fails_to_ready("tempoudpsrc port=0 context=err-period context-wait=20 ! fakesink");
    assert!(
        error.contains("Context 'err-period' already runs"),
        "{error}"
    );
    assert!(error.contains("same context-wait"), "{error}");
    first.set_state(gst::State::Null).unwrap();
}

#[test]
fn a_client_list_that_does_not_parse() {
    let error = fails_to_ready("fakesrc ! tempoudpsink host=\"\" clients=127.0.0.1");
    assert!(error.contains("'127.0.0.1' is not host:port"), "{error}");
}

#[test]
fn a_host_that_does_not_resolve() {
    let error = fails_to_ready("fakesrc ! tempoudpsink host=no-such-host.invalid port=5004");
    assert!(error.contains("does not resolve"), "{error}");
}

#[test]
fn a_sink_without_destination() {
    let error = fails_to_ready("fakesrc ! tempoudpsink host=\"\"");
    assert!(error.contains("No destination"), "{error}");
}

#[test]
fn a_source_not_linked_stops_with_an_error_not_a_hang() {
    init();
    let src = gst::ElementFactory::make("tempoudpsrc")
        .property("port", 0i32)
        .build()
        .unwrap();
    let p = gst::Pipeline::new();
    p.add(&src).unwrap();
    p.set_state(gst::State::Playing).unwrap();
    let port: i32 = src.property("used-port");
    sender()
        .send_to(&datagram(0), ("127.0.0.1", port as u16))
        .unwrap();
    let error = bus_error(&p);
    assert!(error.contains("Streaming stopped"), "{error}");
    p.set_state(gst::State::Null).unwrap();
}
