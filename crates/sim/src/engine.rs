//! The event queue: a binary heap keyed by (time, insertion sequence).
//!
//! Events at the same instant fire in the order they were scheduled. Without
//! the sequence number the heap would break ties by its internal layout,
//! which depends on everything scheduled before; with it, a run is a pure
//! function of its scenario and seed on every machine.
//!
//! Timers are cancelled by generation: a component keeps a [`Timer`] whose
//! generation moves on each time it is re-armed or cancelled, the scheduled
//! event carries the generation it was armed with, and a stale event is
//! recognised and ignored when it fires. This keeps the heap free of
//! deletions.

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use aqmlab_qdisc::Time;

struct Entry<E> {
    time: Time,
    seq: u64,
    event: E,
}

impl<E> PartialEq for Entry<E> {
    fn eq(&self, other: &Self) -> bool {
        self.time == other.time && self.seq == other.seq
    }
}

impl<E> Eq for Entry<E> {}

impl<E> PartialOrd for Entry<E> {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl<E> Ord for Entry<E> {
    // Reversed: BinaryHeap is a max-heap and we want the earliest first.
    fn cmp(&self, other: &Self) -> Ordering {
        (other.time, other.seq).cmp(&(self.time, self.seq))
    }
}

pub struct EventQueue<E> {
    heap: BinaryHeap<Entry<E>>,
    seq: u64,
}

impl<E> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            seq: 0,
        }
    }
}

impl<E> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        self.heap.push(Entry {
            time,
            seq: self.seq,
            event,
        });
        self.seq += 1;
    }

    /// The earliest event, ties in scheduling order.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        self.heap.pop().map(|e| (e.time, e.event))
    }

    pub fn len(&self) -> usize {
        self.heap.len()
    }

    pub fn is_empty(&self) -> bool {
        self.heap.is_empty()
    }
}

/// A cancellable timer: see the module documentation.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer {
    generation: u32,
    armed_at: Option<Time>,
}

impl Timer {
    /// Arms (or re-arms) the timer for `at`; returns the generation the
    /// scheduled event must carry.
    pub fn arm(&mut self, at: Time) -> u32 {
        self.generation = self.generation.wrapping_add(1);
        self.armed_at = Some(at);
        self.generation
    }

    pub fn cancel(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.armed_at = None;
    }

    pub fn armed_at(&self) -> Option<Time> {
        self.armed_at
    }

    /// Whether an event carrying `generation` is the live one; if so the
    /// timer is disarmed.
    pub fn fire(&mut self, generation: u32) -> bool {
        if self.armed_at.is_some() && generation == self.generation {
            self.armed_at = None;
            true
        } else {
            false
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_pop_orders_by_time_then_insertion() {
        let mut q = EventQueue::new();
        q.schedule(Time(5), 'a');
        q.schedule(Time(3), 'b');
        q.schedule(Time(5), 'c');
        q.schedule(Time(3), 'd');
        q.schedule(Time(4), 'e');
        let order: Vec<char> = std::iter::from_fn(|| q.pop().map(|(_, e)| e)).collect();
        assert_eq!(order, vec!['b', 'd', 'e', 'a', 'c']);
    }

    #[test]
    fn test_timer_rearm_makes_old_event_stale() {
        let mut t = Timer::default();
        let g1 = t.arm(Time(10));
        let g2 = t.arm(Time(20));
        assert!(!t.fire(g1));
        assert_eq!(t.armed_at(), Some(Time(20)));
        assert!(t.fire(g2));
        assert!(!t.fire(g2), "a timer fires once");
    }

    #[test]
    fn test_timer_cancel() {
        let mut t = Timer::default();
        let g = t.arm(Time(10));
        t.cancel();
        assert!(!t.fire(g));
        assert_eq!(t.armed_at(), None);
    }
}
