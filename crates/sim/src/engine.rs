//! The event queue: events keyed by (time, insertion sequence).
//!
//! Events at the same instant fire in the order they were scheduled. Without
//! the sequence number the heap would break ties by its internal layout,
//! which depends on everything scheduled before; with it, a run is a pure
//! function of its scenario and seed on every machine.
//!
//! The queue has two lanes, each a 4-ary min-heap, sharing one sequence
//! counter; `pop` takes the smaller of the two heads, so the order is exactly
//! the (time, sequence) order of one heap. The engine puts the frequent,
//! short-lived link events (end of transmission, arrival at the far node:
//! at most a few per link) in the small lane and everything else (timers,
//! sources) in the other, so most pushes and pops work on a heap a few
//! levels deep. A sequence number can also be reserved when an event becomes
//! certain and used when it is scheduled later (see [`EventQueue::reserve`]).
//!
//! Timers are cancelled by generation: a component keeps a [`Timer`] whose
//! generation moves on each time an event is queued for it, the event
//! carries that generation, and a stale event is recognised and ignored when
//! it fires. This keeps the heap free of deletions. A timer moved later
//! reuses the event already queued (see [`Timer`]).

use aqmlab_qdisc::Time;

/// (time, sequence) packed so that one integer comparison orders events.
#[inline]
fn key(time: Time, seq: u64) -> u128 {
    ((time.0 as u128) << 64) | seq as u128
}

/// A 4-ary min-heap on `u128` keys, keys and payloads in parallel vectors
/// (comparisons read only the dense key array).
struct Heap<E> {
    keys: Vec<u128>,
    items: Vec<E>,
}

impl<E: Copy> Heap<E> {
    const D: usize = 4;

    fn new() -> Self {
        Heap {
            keys: Vec::new(),
            items: Vec::new(),
        }
    }

    #[inline]
    fn peek_key(&self) -> Option<u128> {
        self.keys.first().copied()
    }

    /// Sifts the new entry up, moving parents down into the hole.
    #[inline]
    fn push(&mut self, k: u128, item: E) {
        let mut i = self.keys.len();
        self.keys.push(k);
        self.items.push(item);
        while i > 0 {
            let parent = (i - 1) / Self::D;
            if self.keys[parent] <= k {
                break;
            }
            self.keys[i] = self.keys[parent];
            self.items[i] = self.items[parent];
            i = parent;
        }
        self.keys[i] = k;
        self.items[i] = item;
    }

    /// Removes the root, then sifts the last entry down from it, moving the
    /// smallest child up into the hole at each level.
    #[inline]
    fn pop(&mut self) -> Option<(u128, E)> {
        let top = (*self.keys.first()?, self.items[0]);
        let (k, item) = (self.keys.pop()?, self.items.pop()?);
        let n = self.keys.len();
        if n == 0 {
            return Some(top);
        }
        let mut i = 0;
        loop {
            let first = Self::D * i + 1;
            if first >= n {
                break;
            }
            let last = (first + Self::D).min(n);
            let mut c = first;
            let mut ck = self.keys[first];
            for j in first + 1..last {
                if self.keys[j] < ck {
                    c = j;
                    ck = self.keys[j];
                }
            }
            if ck >= k {
                break;
            }
            self.keys[i] = ck;
            self.items[i] = self.items[c];
            i = c;
        }
        self.keys[i] = k;
        self.items[i] = item;
        Some(top)
    }
}

/// Which heap an event goes to; see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    Link = 0,
    Other = 1,
}

pub struct EventQueue<E> {
    lanes: [Heap<E>; 2],
    seq: u64,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            lanes: [Heap::new(), Heap::new()],
            seq: 0,
        }
    }
}

impl<E: Copy> EventQueue<E> {
    pub fn new() -> Self {
        Self::default()
    }

    /// Schedules `event` at `time` in the `Other` lane.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        self.schedule_in(Lane::Other, time, event);
    }

    #[inline]
    pub fn schedule_in(&mut self, lane: Lane, time: Time, event: E) {
        let seq = self.reserve();
        self.lanes[lane as usize].push(key(time, seq), event);
    }

    /// Takes the next sequence number, for an event that will be scheduled
    /// later with [`EventQueue::schedule_reserved`]. It then fires exactly
    /// where it would have had it been scheduled now, provided it is
    /// scheduled before anything later than it is popped.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    #[inline]
    pub fn schedule_reserved(&mut self, lane: Lane, time: Time, seq: u64, event: E) {
        debug_assert!(seq < self.seq, "a sequence number from reserve()");
        self.lanes[lane as usize].push(key(time, seq), event);
    }

    /// The earliest event, ties in scheduling order.
    #[inline]
    pub fn pop(&mut self) -> Option<(Time, E)> {
        let lane = match (self.lanes[0].peek_key(), self.lanes[1].peek_key()) {
            (Some(a), Some(b)) => usize::from(b < a),
            (Some(_), None) => 0,
            (None, Some(_)) => 1,
            (None, None) => return None,
        };
        self.lanes[lane].pop().map(|(k, e)| (Time((k >> 64) as u64), e))
    }

    pub fn len(&self) -> usize {
        self.lanes[0].keys.len() + self.lanes[1].keys.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
}

/// What a timer's event found when it fired.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Fired {
    /// The timer expires now.
    Due,
    /// The timer was moved later since the event was queued: queue it again
    /// for this time, with this generation.
    Later(Time, u32),
    /// Superseded or cancelled: nothing to do.
    Stale,
}

/// A cancellable timer: see the module documentation.
///
/// Re-arming is lazy: moving a timer later (a TCP retransmission timer is
/// restarted by every ACK) queues nothing while an event already queued
/// fires no later; that event, when it fires, is queued again for the new
/// time. Moving it earlier queues a new event and makes the old one stale.
/// So the timer still fires exactly when it is armed for.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Timer {
    generation: u32,
    armed_at: Option<Time>,
    /// When the live event (the one carrying `generation`) is queued for.
    queued: Option<Time>,
}

impl Timer {
    /// Makes the timer expire at `wanted` (never, if None); returns the
    /// event to queue, as (time, generation), if one is needed. A time in
    /// the past is taken as `now`.
    #[inline]
    pub fn set(&mut self, wanted: Option<Time>, now: Time) -> Option<(Time, u32)> {
        if wanted == self.armed_at {
            return None;
        }
        self.armed_at = wanted;
        let when = wanted?.max(now);
        if self.queued.is_some_and(|q| q <= when) {
            return None;
        }
        self.generation = self.generation.wrapping_add(1);
        self.queued = Some(when);
        Some((when, self.generation))
    }

    /// Cancels the timer and disowns the event queued for it, if any: when
    /// it fires it is stale, whatever the timer is armed for by then. For a
    /// timer whose owner goes away while its events are queued (a closed
    /// connection whose slot a new one takes over).
    pub fn reset(&mut self) {
        self.generation = self.generation.wrapping_add(1);
        self.armed_at = None;
        self.queued = None;
    }

    pub fn armed_at(&self) -> Option<Time> {
        self.armed_at
    }

    /// An event carrying `generation` fired at `now`.
    #[inline]
    pub fn fire(&mut self, generation: u32, now: Time) -> Fired {
        if generation != self.generation || self.queued.is_none() {
            return Fired::Stale;
        }
        self.queued = None;
        match self.armed_at {
            None => Fired::Stale,
            Some(at) if at > now => {
                self.queued = Some(at);
                Fired::Later(at, generation)
            }
            Some(_) => {
                self.armed_at = None;
                Fired::Due
            }
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
    fn test_lanes_and_reserved_sequence_numbers_keep_one_order() {
        // Events with times from a narrow range (many ties), spread over
        // both lanes, some scheduled late with a sequence number reserved
        // earlier, against a reference: one ordered set of (time, seq).
        let mut q = EventQueue::new();
        let mut reference = std::collections::BTreeSet::new();
        let mut state = 12345u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let (mut held, mut now, mut pops) = (Vec::new(), 0u64, 0);
        for i in 0..20_000u64 {
            let t = now + next() % 40;
            let seq = match next() % 3 {
                0 => {
                    q.schedule(Time(t), i);
                    q.seq - 1
                }
                1 => {
                    q.schedule_in(Lane::Link, Time(t), i);
                    q.seq - 1
                }
                _ => {
                    let seq = q.reserve();
                    held.push((t, seq, i));
                    seq
                }
            };
            reference.insert((t, seq, i));
            if next() % 3 == 0 {
                for (t, seq, i) in held.drain(..) {
                    q.schedule_reserved(Lane::Link, Time(t), seq, i);
                }
                for _ in 0..next() % 3 {
                    let want = reference.pop_first().map(|(t, _, i)| (Time(t), i));
                    let got = q.pop();
                    assert_eq!(got, want);
                    if let Some((t, _)) = got {
                        now = t.0;
                        pops += 1;
                    }
                }
            }
        }
        for (t, seq, i) in held.drain(..) {
            q.schedule_reserved(Lane::Link, Time(t), seq, i);
        }
        assert_eq!(q.len(), reference.len());
        while let Some(got) = q.pop() {
            assert_eq!(Some(got), reference.pop_first().map(|(t, _, i)| (Time(t), i)));
            pops += 1;
        }
        assert!(reference.is_empty());
        assert_eq!(pops, 20_000);
    }

    #[test]
    fn test_timer_moved_earlier_queues_anew_and_the_old_event_is_stale() {
        let mut t = Timer::default();
        let (at1, g1) = t.set(Some(Time(20)), Time(0)).expect("a first event");
        assert_eq!(at1, Time(20));
        let (at2, g2) = t.set(Some(Time(10)), Time(0)).expect("earlier: a new event");
        assert_eq!(at2, Time(10));
        assert_eq!(t.fire(g2, Time(10)), Fired::Due);
        assert_eq!(t.fire(g1, Time(20)), Fired::Stale);
        assert_eq!(t.armed_at(), None);
    }

    #[test]
    fn test_timer_moved_later_reuses_the_queued_event() {
        let mut t = Timer::default();
        let (_, g) = t.set(Some(Time(10)), Time(0)).expect("a first event");
        assert_eq!(t.set(Some(Time(15)), Time(2)), None, "later: nothing new queued");
        assert_eq!(t.set(Some(Time(30)), Time(5)), None);
        assert_eq!(t.set(Some(Time(30)), Time(6)), None, "unchanged");
        // The event queued for 10 fires and is queued again for 30.
        assert_eq!(t.fire(g, Time(10)), Fired::Later(Time(30), g));
        // Moved later again while that one is queued, then it fires.
        assert_eq!(t.set(Some(Time(40)), Time(20)), None);
        assert_eq!(t.fire(g, Time(30)), Fired::Later(Time(40), g));
        assert_eq!(t.fire(g, Time(40)), Fired::Due);
        assert_eq!(t.fire(g, Time(40)), Fired::Stale, "a timer fires once");
    }

    #[test]
    fn test_timer_reset_disowns_the_queued_event() {
        let mut t = Timer::default();
        let (_, g) = t.set(Some(Time(10)), Time(0)).expect("a first event");
        t.reset();
        // Armed again later than the disowned event: a new event is needed.
        let (at, g2) = t.set(Some(Time(12)), Time(1)).expect("a new event");
        assert_eq!(at, Time(12));
        assert_eq!(t.fire(g, Time(10)), Fired::Stale);
        assert_eq!(t.fire(g2, Time(12)), Fired::Due);
    }

    #[test]
    fn test_timer_cancel_and_rearm() {
        let mut t = Timer::default();
        let (_, g) = t.set(Some(Time(10)), Time(0)).expect("a first event");
        assert_eq!(t.set(None, Time(1)), None);
        assert_eq!(t.armed_at(), None);
        // Re-armed later than the queued event: that event carries it.
        assert_eq!(t.set(Some(Time(12)), Time(2)), None);
        assert_eq!(t.fire(g, Time(10)), Fired::Later(Time(12), g));
        assert_eq!(t.set(None, Time(11)), None);
        assert_eq!(t.fire(g, Time(12)), Fired::Stale, "cancelled");
        // A deadline in the past fires at once.
        let (at, g) = t.set(Some(Time(5)), Time(20)).expect("nothing queued: a new event");
        assert_eq!(at, Time(20));
        assert_eq!(t.fire(g, Time(20)), Fired::Due);
    }
}
