//! Without the `tokio-compat` feature: tokio's runtime-bound calls inside
//! Tempo panic with tokio's message, and the task's `JoinError` says which
//! feature makes them work.
#![cfg(not(feature = "tokio-compat"))]

mod support;
use support::on_each_flavor;

on_each_flavor! {
    #[test]
    fn tokio_spawn_in_a_task_fails_with_a_hint_naming_the_feature() {
        let rt = builder().build().unwrap();
        let err = rt
            .block_on(rt.spawn(async {
                // Panics here: no tokio runtime on this thread.
                drop(tokio::spawn(async {}));
            }))
            .unwrap_err();
        assert!(err.is_panic());
        let display = err.to_string();
        assert!(display.contains("there is no reactor running"), "{display}");
        assert!(display.contains("hint:"), "{display}");
        assert!(display.contains("`tokio-compat`"), "{display}");
        let debug = format!("{err:?}");
        assert!(debug.contains("`tokio-compat`"), "{debug}");
        // The payload is tokio's, untouched.
        let payload = err.into_panic();
        let message = payload.downcast_ref::<String>().map(String::as_str);
        assert!(
            message.is_some_and(|m| !m.contains("tokio-compat")),
            "{message:?}"
        );
    }

    #[test]
    fn other_panics_get_no_hint() {
        let rt = builder().build().unwrap();
        let err = rt.block_on(rt.spawn(async { panic!("boom") })).unwrap_err();
        assert!(!err.to_string().contains("hint"), "{err}");
    }
}
