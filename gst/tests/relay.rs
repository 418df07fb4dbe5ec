//! `tempoqueue` and `tempoudpsink`: a relay in a real pipeline, and the
//! queue in GStreamer's check harness.

mod util;

use std::time::Duration;

use gst::prelude::*;
use util::*;

#[test]
fn src_queue_sink_relays_every_datagram_in_order_to_the_test_socket() {
    init();
    let out = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    out.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let port = out.local_addr().unwrap().port();
    let p = pipeline(&format!(
        "tempoudpsrc name=src port=0 context=relay-in context-wait=10 \
         ! tempoqueue context=relay-out context-wait=10 \
         ! tempoudpsink host=127.0.0.1 port={port} context=relay-out context-wait=10"
    ));
    p.set_state(gst::State::Playing).unwrap();
    let to = src_addr(&p, "src");
    let tx = sender();
    let mut buf = [0u8; 2048];
    for chunk in 0..5u32 {
        for seq in chunk * 100..(chunk + 1) * 100 {
            tx.send_to(&datagram(seq), to).unwrap();
        }
        for seq in chunk * 100..(chunk + 1) * 100 {
            let (len, _) = out.recv_from(&mut buf).expect("a relayed datagram");
            assert_eq!(&buf[..len], &datagram(seq)[..]);
        }
    }
    // EOS goes through the queue and the sink posts it.
    assert!(by_name(&p, "src").send_event(gst::event::Eos::new()));
    let msg = p
        .bus()
        .unwrap()
        .timed_pop_filtered(PATIENCE, &[gst::MessageType::Eos, gst::MessageType::Error]);
    assert!(matches!(msg.unwrap().view(), gst::MessageView::Eos(_)));
    p.set_state(gst::State::Null).unwrap();
}

#[test]
fn a_sink_sends_each_buffer_to_every_client() {
    init();
    let outs: Vec<_> = (0..2)
        .map(|_| {
            let s = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
            s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
            s
        })
        .collect();
    let clients: Vec<String> = outs
        .iter()
        .map(|s| s.local_addr().unwrap().to_string())
        .collect();
    let p = pipeline(&format!(
        "appsrc name=in format=time ! tempoudpsink host=\"\" clients={}",
        clients.join(",")
    ));
    p.set_state(gst::State::Playing).unwrap();
    let appsrc: gst_app::AppSrc = by_name(&p, "in").downcast().unwrap();
    for seq in 0..10 {
        appsrc
            .push_buffer(gst::Buffer::from_slice(datagram(seq)))
            .unwrap();
    }
    appsrc.end_of_stream().unwrap();
    let mut buf = [0u8; 2048];
    for out in &outs {
        for seq in 0..10 {
            let (len, _) = out.recv_from(&mut buf).unwrap();
            assert_eq!(&buf[..len], &datagram(seq)[..]);
        }
    }
    let msg = p
        .bus()
        .unwrap()
        .timed_pop_filtered(PATIENCE, &[gst::MessageType::Eos, gst::MessageType::Error]);
    assert!(matches!(msg.unwrap().view(), gst::MessageView::Eos(_)));
    p.set_state(gst::State::Null).unwrap();
}

#[test]
fn the_queue_hands_buffers_and_events_over_in_order_in_the_check_harness() {
    init();
    let mut h = gst_check::Harness::new("tempoqueue");
    h.element()
        .unwrap()
        .set_property("context", "queue-harness");
    h.set_src_caps_str("application/x-test");
    h.play();
    for seq in 0..100u32 {
        let mut buffer = gst::Buffer::from_slice(datagram(seq));
        buffer
            .get_mut()
            .unwrap()
            .set_pts(gst::ClockTime::from_mseconds(seq.into()));
        assert_eq!(h.push(buffer), Ok(gst::FlowSuccess::Ok));
    }
    for seq in 0..100u32 {
        let buffer = h.pull().expect("a queued buffer");
        let map = buffer.map_readable().unwrap();
        assert_eq!(u32::from_be_bytes(map[..4].try_into().unwrap()), seq);
        assert_eq!(
            buffer.pts(),
            Some(gst::ClockTime::from_mseconds(seq.into()))
        );
    }
    // A flush drops nothing that was already pushed and the queue goes on.
    assert!(h.push_event(gst::event::FlushStart::new()));
    assert!(h.push_event(gst::event::FlushStop::new(true)));
    h.push_event(gst::event::Segment::new(&gst::FormattedSegment::<
        gst::ClockTime,
    >::new()));
    assert_eq!(
        h.push(gst::Buffer::from_slice(datagram(100))),
        Ok(gst::FlowSuccess::Ok)
    );
    let buffer = h.pull().expect("a buffer after the flush");
    assert_eq!(&buffer.map_readable().unwrap()[..4], &100u32.to_be_bytes());
    // EOS comes out after the data.
    assert!(h.push_event(gst::event::Eos::new()));
    loop {
        let event = h.pull_event().expect("the queued events");
        if event.type_() == gst::EventType::Eos {
            break;
        }
    }
}

#[test]
fn a_full_queue_blocks_its_producer_until_the_context_drains_it() {
    init();
    let p = pipeline(
        "appsrc name=in format=time block=true ! tempoqueue name=q max-size-buffers=2 \
         context=queue-full context-wait=5 ! appsink name=sink sync=false max-buffers=1",
    );
    p.set_state(gst::State::Playing).unwrap();
    let appsrc: gst_app::AppSrc = by_name(&p, "in").downcast().unwrap();
    let sink = appsink(&p, "sink");
    let producer = std::thread::spawn(move || {
        for seq in 0..50 {
            appsrc
                .push_buffer(gst::Buffer::from_slice(datagram(seq)))
                .unwrap();
        }
    });
    for seq in 0..50 {
        assert_eq!(seq_of(&pull(&sink)), seq);
        let level: u32 = by_name(&p, "q").property("current-level-buffers");
        assert!(level <= 2, "{level} buffers queued over a limit of 2");
    }
    producer.join().unwrap();
    p.set_state(gst::State::Null).unwrap();
}
