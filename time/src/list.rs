//! An intrusive doubly-linked list of timer entries: the contents of one
//! wheel slot, or of the wheel's "due" list.
//!
//! The links live in the entries ([`EntryShared::prev`] and
//! [`EntryShared::next`]): O(1), no allocation. Following them is sound by
//! [`EntryRef`]'s invariant; this module needs no `unsafe`.
//!
//! Invariants: `head.prev` is `None`; for linked neighbours `a.next == b`
//! iff `b.prev == a`; an entry is in at most one list at a time (the wheel
//! records which in [`EntryShared::location`]).
//!
//! [`EntryShared::prev`]: crate::entry::cell::EntryShared
//! [`EntryShared::next`]: crate::entry::cell::EntryShared
//! [`EntryShared::location`]: crate::entry::cell::EntryShared

use crate::entry::cell::EntryRef;

/// An intrusive list of timer entries (LIFO order: order within a slot does
/// not matter, every entry of a slot is processed together).
#[derive(Debug, Default)]
pub(crate) struct List {
    head: Option<EntryRef>,
}

impl List {
    pub(crate) fn is_empty(&self) -> bool {
        self.head.is_none()
    }

    /// Links `entry` at the front. It must not be in any list.
    pub(crate) fn push_front(&mut self, entry: EntryRef) {
        let old_head = self.head;
        entry.with(|e| {
            debug_assert!(e.prev.is_none() && e.next.is_none());
            e.prev = None;
            e.next = old_head;
        });
        if let Some(old) = old_head {
            old.with(|e| e.prev = Some(entry));
        }
        self.head = Some(entry);
    }

    /// Unlinks and returns the front entry.
    pub(crate) fn pop_front(&mut self) -> Option<EntryRef> {
        let head = self.head?;
        self.remove(head);
        Some(head)
    }

    /// Unlinks `entry`, which must be in this list.
    pub(crate) fn remove(&mut self, entry: EntryRef) {
        let (prev, next) = entry.with(|e| (e.prev.take(), e.next.take()));
        match prev {
            Some(p) => p.with(|e| e.next = next),
            None => {
                debug_assert_eq!(self.head, Some(entry), "entry is not in this list");
                self.head = next;
            }
        }
        if let Some(n) = next {
            n.with(|e| e.prev = prev);
        }
    }
}
