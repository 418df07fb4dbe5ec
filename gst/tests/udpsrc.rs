//! `tempoudpsrc` in real pipelines: data, timestamps, PAUSED, flushes,
//! EOS, shared contexts.

mod util;

use std::collections::HashSet;
use std::sync::mpsc;

use gst::prelude::*;
use gst_net::gio::prelude::*;
use util::*;

/// 1,000 datagrams through `tempoudpsrc ! appsink` on a context with
/// `context_wait` ms of throttling (0: the context wakes for each arrival,
/// through the ring's eventfd).
fn a_thousand_datagrams_arrive_once_each_in_order(context_wait: u32) {
    init();
    let p = pipeline(&format!(
        "tempoudpsrc name=src port=0 context=src-thousand-{context_wait} \
         context-wait={context_wait} ! appsink name=sink sync=false"
    ));
    p.set_state(gst::State::Playing).unwrap();
    let to = src_addr(&p, "src");
    let sink = appsink(&p, "sink");
    let tx = sender();
    let mut last_pts = gst::ClockTime::ZERO;
    // In chunks the socket's receive buffer holds, so the kernel drops none.
    for chunk in 0..10u32 {
        for seq in chunk * 100..(chunk + 1) * 100 {
            tx.send_to(&datagram(seq), to).unwrap();
        }
        for seq in chunk * 100..(chunk + 1) * 100 {
            let sample = pull(&sink);
            assert_eq!(seq_of(&sample), seq);
            let buffer = sample.buffer().unwrap();
            assert_eq!(buffer.size(), 160);
            let pts = buffer.pts().expect("PTS set");
            assert_eq!(buffer.dts(), Some(pts));
            assert!(pts >= last_pts, "arrival times do not go back");
            last_pts = pts;
            let from = buffer
                .meta::<gst_net::NetAddressMeta>()
                .expect("sender address");
            let from: gst_net::gio::InetSocketAddress = from.addr().downcast().unwrap();
            assert_eq!(from.port(), tx.local_addr().unwrap().port());
        }
    }
    p.set_state(gst::State::Null).unwrap();
}

#[test]
fn a_thousand_datagrams_arrive_once_each_in_order_with_arrival_timestamps() {
    a_thousand_datagrams_arrive_once_each_in_order(20);
}

#[test]
fn an_unthrottled_context_pushes_a_thousand_datagrams_in_order() {
    a_thousand_datagrams_arrive_once_each_in_order(0);
}

/// A datagram longer than `mtu` arrives cut to `mtu` bytes (with a
/// warning in the debug log); the next, shorter one whole.
#[test]
fn a_datagram_longer_than_mtu_is_cut_to_it() {
    init();
    let p = pipeline(
        "tempoudpsrc name=src port=0 mtu=100 context=src-mtu context-wait=5 \
         ! appsink name=sink sync=false",
    );
    p.set_state(gst::State::Playing).unwrap();
    let to = src_addr(&p, "src");
    let sink = appsink(&p, "sink");
    let tx = sender();
    tx.send_to(&[9; 300], to).unwrap();
    tx.send_to(&[7; 50], to).unwrap();
    for expected in [vec![9u8; 100], vec![7u8; 50]] {
        let sample = pull(&sink);
        let map = sample.buffer().unwrap().map_readable().unwrap();
        assert_eq!(map.as_slice(), &expected[..]);
    }
    p.set_state(gst::State::Null).unwrap();
}

/// The source reuses the sender-address object of its last sender: with
/// two senders taking turns, each buffer still names its own.
#[test]
fn buffers_from_two_senders_taking_turns_each_carry_their_sender() {
    init();
    let p = pipeline(
        "tempoudpsrc name=src port=0 context=src-two-senders context-wait=5 \
         ! appsink name=sink sync=false",
    );
    p.set_state(gst::State::Playing).unwrap();
    let to = src_addr(&p, "src");
    let sink = appsink(&p, "sink");
    let senders = [sender(), sender()];
    for seq in 0..20u32 {
        let tx = &senders[seq as usize % 3 % 2];
        tx.send_to(&datagram(seq), to).unwrap();
        let sample = pull(&sink);
        assert_eq!(seq_of(&sample), seq);
        let meta = sample.buffer().unwrap().meta::<gst_net::NetAddressMeta>();
        let from: gst_net::gio::InetSocketAddress =
            meta.expect("sender address").addr().downcast().unwrap();
        assert_eq!(
            from.port(),
            tx.local_addr().unwrap().port(),
            "datagram {seq}"
        );
    }
    p.set_state(gst::State::Null).unwrap();
}

#[test]
fn in_paused_nothing_is_pushed_and_datagrams_wait_unread() {
    init();
    let p = pipeline(
        "tempoudpsrc name=src port=0 retrieve-sender-address=false \
         ! appsink name=sink sync=false",
    );
    assert_eq!(
        p.set_state(gst::State::Paused),
        Ok(gst::StateChangeSuccess::NoPreroll)
    );
    let to = src_addr(&p, "src");
    let sink = appsink(&p, "sink");
    let tx = sender();
    for seq in 0..5 {
        tx.send_to(&datagram(seq), to).unwrap();
    }
    assert!(sink
        .try_pull_sample(gst::ClockTime::from_mseconds(300))
        .is_none());
    p.set_state(gst::State::Playing).unwrap();
    for seq in 0..5 {
        assert_eq!(seq_of(&pull(&sink)), seq);
    }
    // Back to PAUSED (not waited for), then PLAYING again: the stream goes on.
    assert_eq!(
        p.set_state(gst::State::Paused),
        Ok(gst::StateChangeSuccess::NoPreroll)
    );
    p.set_state(gst::State::Playing).unwrap();
    tx.send_to(&datagram(5), to).unwrap();
    assert_eq!(seq_of(&pull(&sink)), 5);
    p.set_state(gst::State::Null).unwrap();
}

/// Counts the flush events that reach the appsink.
fn count_flushes(sink: &gst_app::AppSink) -> mpsc::Receiver<gst::EventType> {
    let (tx, rx) = mpsc::channel();
    let pad = sink.static_pad("sink").unwrap();
    pad.add_probe(gst::PadProbeType::EVENT_FLUSH, move |_, info| {
        if let Some(event) = info.event() {
            let _ = tx.send(event.type_());
        }
        gst::PadProbeReturn::Ok
    });
    rx
}

#[test]
fn flushes_and_flushing_seeks_sent_to_the_pipeline_go_through_the_task() {
    init();
    let p = pipeline(
        "tempoudpsrc name=src port=0 context=src-flush context-wait=10 \
         ! appsink name=sink sync=false",
    );
    p.set_state(gst::State::Playing).unwrap();
    let to = src_addr(&p, "src");
    let sink = appsink(&p, "sink");
    let flushes = count_flushes(&sink);
    let tx = sender();
    tx.send_to(&datagram(0), to).unwrap();
    assert_eq!(seq_of(&pull(&sink)), 0);

    assert!(p.send_event(gst::event::FlushStart::new()));
    assert!(p.send_event(gst::event::FlushStop::new(true)));
    assert_eq!(flushes.recv().unwrap(), gst::EventType::FlushStart);
    assert_eq!(flushes.recv().unwrap(), gst::EventType::FlushStop);
    tx.send_to(&datagram(1), to).unwrap();
    assert_eq!(seq_of(&pull(&sink)), 1);

    p.seek_simple(gst::SeekFlags::FLUSH, gst::ClockTime::ZERO)
        .expect("a flushing seek");
    assert_eq!(flushes.recv().unwrap(), gst::EventType::FlushStart);
    assert_eq!(flushes.recv().unwrap(), gst::EventType::FlushStop);
    tx.send_to(&datagram(2), to).unwrap();
    assert_eq!(seq_of(&pull(&sink)), 2);
    p.set_state(gst::State::Null).unwrap();
}

#[test]
fn a_flush_in_the_middle_of_a_stream_keeps_it_flowing_in_order() {
    init();
    let p = pipeline(
        "tempoudpsrc name=src port=0 context=src-midflush context-wait=5 \
         retrieve-sender-address=false ! appsink name=sink sync=false async=false",
    );
    // Sent to the element, a flush runs under its state lock: a sink that
    // prerolls (async=true) would have GStreamer finish the pipeline's state
    // change meanwhile, taking the two state locks in the other order
    // (GStreamer's own udpsrc deadlocks there too). async=false: no preroll.
    p.set_state(gst::State::Playing).unwrap();
    let to = src_addr(&p, "src");
    let sink = appsink(&p, "sink");
    let tx = sender();
    for seq in 0..50 {
        tx.send_to(&datagram(seq), to).unwrap();
    }
    let src = by_name(&p, "src");
    assert!(src.send_event(gst::event::FlushStart::new()));
    assert!(src.send_event(gst::event::FlushStop::new(true)));
    for seq in 50..100 {
        tx.send_to(&datagram(seq), to).unwrap();
    }
    // The flush may drop what was received and not yet pushed; nothing is
    // duplicated or reordered, and the stream after the flush arrives.
    let mut last = None;
    loop {
        let seq = seq_of(&pull(&sink));
        assert!(last.is_none_or(|l| seq > l), "{seq} after {last:?}");
        last = Some(seq);
        if seq == 99 {
            break;
        }
    }
    p.set_state(gst::State::Null).unwrap();
}

#[test]
fn eos_sent_to_the_source_reaches_the_bus_after_the_data() {
    init();
    let p = pipeline("tempoudpsrc name=src port=0 ! appsink name=sink sync=false");
    p.set_state(gst::State::Playing).unwrap();
    let to = src_addr(&p, "src");
    let sink = appsink(&p, "sink");
    sender().send_to(&datagram(7), to).unwrap();
    assert_eq!(seq_of(&pull(&sink)), 7);
    assert!(by_name(&p, "src").send_event(gst::event::Eos::new()));
    let bus = p.bus().unwrap();
    let msg = bus.timed_pop_filtered(PATIENCE, &[gst::MessageType::Eos, gst::MessageType::Error]);
    assert!(matches!(msg.unwrap().view(), gst::MessageView::Eos(_)));
    assert!(sink.is_eos());
    p.set_state(gst::State::Null).unwrap();
}

#[test]
fn two_pipelines_naming_one_context_share_its_thread_with_the_application() {
    init();
    let context = "src-shared";
    let wait = std::time::Duration::from_millis(20);
    let make = |i: u32| {
        pipeline(&format!(
            "tempoudpsrc name=src port=0 context={context} context-wait=20 \
             ! appsink name=sink{i} sync=false async=false"
        ))
    };
    // async=false: no preroll, so every push runs on the context's thread
    // (a push into a sink waiting for its preroll runs on a helper thread).
    let (a, b) = (make(0), make(1));
    let (threads_tx, threads) = mpsc::channel();
    for p in [&a, &b] {
        let tx = threads_tx.clone();
        by_name(p, "src").static_pad("src").unwrap().add_probe(
            gst::PadProbeType::BUFFER,
            move |_, _| {
                let _ = tx.send(std::thread::current().id());
                gst::PadProbeReturn::Ok
            },
        );
        p.set_state(gst::State::Playing).unwrap();
    }
    let tx = sender();
    tx.send_to(&datagram(1), src_addr(&a, "src")).unwrap();
    tx.send_to(&datagram(2), src_addr(&b, "src")).unwrap();
    assert_eq!(seq_of(&pull(&appsink(&a, "sink0"))), 1);
    assert_eq!(seq_of(&pull(&appsink(&b, "sink1"))), 2);
    let seen: HashSet<_> = [threads.recv().unwrap(), threads.recv().unwrap()].into();
    // The application acquires the same context and spawns on it.
    let app = tempo::context::Context::acquire(context, wait).unwrap();
    let on = app.block_on(async { std::thread::current().id() });
    assert_eq!(seen, HashSet::from([app.thread_id()]));
    assert_eq!(on, app.thread_id());
    a.set_state(gst::State::Null).unwrap();
    b.set_state(gst::State::Null).unwrap();
}

#[test]
fn a_socket_handed_over_by_fd_with_caps_and_the_latency_of_one_tick() {
    init();
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let fd = std::os::fd::AsRawFd::as_raw_fd(&socket);
    let p = pipeline(&format!(
        "tempoudpsrc name=src fd={fd} context=src-fd context-wait=15 \
         caps=\"application/x-rtp,media=audio\" ! appsink name=sink sync=false"
    ));
    p.set_state(gst::State::Playing).unwrap();
    assert_eq!(src_addr(&p, "src"), socket.local_addr().unwrap());
    sender()
        .send_to(&datagram(3), socket.local_addr().unwrap())
        .unwrap();
    let sample = pull(&appsink(&p, "sink"));
    assert_eq!(seq_of(&sample), 3);
    let caps = sample.caps().unwrap();
    assert_eq!(caps.structure(0).unwrap().name(), "application/x-rtp");

    let mut q = gst::query::Latency::new();
    let src_pad = by_name(&p, "src").static_pad("src").unwrap();
    assert!(src_pad.query(&mut q));
    assert_eq!(q.result(), (true, gst::ClockTime::from_mseconds(15), None));
    p.set_state(gst::State::Null).unwrap();
    // The application's socket stays open and usable after the element
    // closed its duplicate.
    socket.set_nonblocking(false).unwrap();
    socket
        .set_read_timeout(Some(std::time::Duration::from_secs(10)))
        .unwrap();
    sender()
        .send_to(&datagram(4), socket.local_addr().unwrap())
        .unwrap();
    let mut buf = [0u8; 256];
    let (len, _) = socket.recv_from(&mut buf).unwrap();
    assert_eq!(&buf[..len], &datagram(4)[..]);
}

#[test]
fn ten_sources_on_one_context_into_default_fakesinks_all_flow() {
    init();
    let p = gst::Pipeline::new();
    let (tx, arrivals) = mpsc::channel();
    let mut ports = Vec::new();
    for i in 0..10usize {
        let src = gst::ElementFactory::make("tempoudpsrc")
            .property("port", 0i32)
            .property("context", "src-ten")
            .property("context-wait", 10u32)
            .build()
            .unwrap();
        // fakesink's defaults: async=true (it would wait for a preroll).
        let sink = gst::ElementFactory::make("fakesink")
            .property("signal-handoffs", true)
            .build()
            .unwrap();
        let tx = tx.clone();
        sink.connect("handoff", false, move |_| {
            let _ = tx.send(i);
            None
        });
        p.add_many([&src, &sink]).unwrap();
        src.link(&sink).unwrap();
        ports.push(src);
    }
    p.set_state(gst::State::Playing).unwrap();
    let out = sender();
    for src in &ports {
        let port: i32 = src.property("used-port");
        out.send_to(&datagram(0), ("127.0.0.1", port as u16))
            .unwrap();
    }
    let mut flowed = HashSet::new();
    while flowed.len() < 10 {
        let i = arrivals
            .recv_timeout(std::time::Duration::from_secs(10))
            .unwrap_or_else(|_| panic!("streams that flowed: {flowed:?}"));
        flowed.insert(i);
    }
    p.set_state(gst::State::Null).unwrap();
}
