//! Model: the injection queue, pushed from two threads while the owner
//! drains it, then closed: nothing lost, nothing duplicated, and the
//! lock-free emptiness check never hides a pushed item from a drain that
//! follows it; the lock-free closed flag never says "closed" to a push
//! the queue then accepts.
#![cfg(loom)]

use std::collections::VecDeque;

use loom::sync::Arc;
use loom::thread;
use tempo::__loom::InjectQueue;

#[test]
fn two_pushers_one_drainer() {
    loom::model(|| {
        let q = Arc::new(InjectQueue::new());
        let pushers: Vec<_> = (0..2)
            .map(|i| {
                let q = q.clone();
                thread::spawn(move || q.push(i).unwrap())
            })
            .collect();
        let mut seen = VecDeque::new();
        q.drain_into(&mut seen);
        if let Some(x) = q.pop() {
            seen.push_back(x);
        }
        for p in pushers {
            p.join().unwrap();
        }
        // After both pushes happened-before this point, the emptiness
        // check must see whatever is left.
        q.drain_into(&mut seen);
        let mut all: Vec<_> = seen.into_iter().collect();
        all.sort_unstable();
        assert_eq!(all, [0, 1]);
        assert!(q.is_empty());
    });
}

#[test]
fn push_racing_close_is_either_queued_or_refused() {
    loom::model(|| {
        let q = Arc::new(InjectQueue::new());
        let q2 = q.clone();
        let pusher = thread::spawn(move || {
            // A remote spawn's order: the lock-free "is it closed?", then
            // the push, which decides under the lock.
            let saw_closed = q2.is_closed();
            let accepted = q2.push(7).is_ok();
            assert!(
                !(saw_closed && accepted),
                "a queue seen closed accepted a push"
            );
            accepted
        });
        q.close();
        assert!(q.is_closed());
        let queued = q.pop();
        let accepted = pusher.join().unwrap();
        let late = q.pop();
        // Accepted exactly when it is in the queue (before or after the
        // owner's first pop); refused pushes leave nothing behind.
        assert_eq!(accepted, queued.or(late) == Some(7));
        assert!(q.push(8).is_err());
    });
}
