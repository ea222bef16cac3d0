//! The event queue: events keyed by (time, insertion sequence).
//!
//! Events at the same instant fire in the order they were scheduled. Without
//! the sequence number the heap would break ties by its internal layout,
//! which depends on everything scheduled before; with it, a run is a pure
//! function of its scenario and seed on every machine.
//!
//! The frequent link events (a link's end of transmission and the arrival
//! of its oldest packet in flight at the far node: at most one of each per
//! link) live in a tournament tree over the links; everything else (timers,
//! sources) in a 4-ary min-heap. Both share one sequence counter and `pop`
//! takes the earlier of the two heads, so the order is exactly the (time,
//! sequence) order of one heap. A sequence number can also be reserved when
//! an event becomes certain and used when it is scheduled later (see
//! [`EventQueue::reserve`]): a link's packets in flight keep theirs until
//! they reach the head of the line.
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

/// The two events a link can have pending: the arrival of its oldest
/// packet in flight at the far node, and the end of its transmission.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum LinkEvent {
    Arrive = 0,
    TxDone = 1,
}

/// A tournament tree over the links: each leaf holds the earliest of the
/// four pending events of two links (2j and 2j + 1), each inner node the earlier of its children, so the root is
/// the earliest link event. Changing a link's events replays its
/// leaf-to-root path, one comparison per level; two links to a leaf make
/// the path a level shorter for two more comparisons at the leaf, which
/// measured faster.
struct LinkClock {
    /// Leaves start here (a power of two, at least half the number of links).
    base: usize,
    /// Per link, the keys of its two events (`u128::MAX`: none); padded
    /// to an even number of links.
    pending: Vec<[u128; 2]>,
    /// The tree, 1-based: node i has children 2i and 2i + 1 and holds the
    /// earliest key below it with its link. Stored by sibling pairs (node i
    /// is `pairs[i / 2][i % 2]`, the root `pairs[0][1]`), so a level of the
    /// replay reads one pair and writes one node.
    pairs: Vec<[(u128, u32); 2]>,
}

impl LinkClock {
    fn new(n_links: usize) -> Self {
        let leaves = n_links.div_ceil(2);
        let base = leaves.max(1).next_power_of_two();
        LinkClock {
            base,
            pending: vec![[u128::MAX; 2]; 2 * leaves],
            pairs: vec![[(u128::MAX, 0); 2]; base],
        }
    }

    #[inline]
    fn set(&mut self, l: u32, ev: LinkEvent, k: u128) {
        self.pending[l as usize][ev as usize] = k;
        let j = l as usize / 2;
        let [a, b] = [self.pending[2 * j], self.pending[2 * j + 1]];
        let (ka, kb) = (a[0].min(a[1]), b[0].min(b[1]));
        let mut i = self.base + j;
        self.pairs[i / 2][i % 2] = if kb < ka {
            (kb, 2 * j as u32 + 1)
        } else {
            (ka, 2 * j as u32)
        };
        while i > 1 {
            let [a, b] = self.pairs[i / 2];
            i /= 2;
            self.pairs[i / 2][i % 2] = if b.0 < a.0 { b } else { a };
        }
    }

    /// The earliest link event: its key, link and which.
    #[inline]
    fn peek(&self) -> Option<(u128, u32, LinkEvent)> {
        let (k, l) = self.pairs[0][1];
        if k == u128::MAX {
            return None;
        }
        let ev = if self.pending[l as usize][0] == k {
            LinkEvent::Arrive
        } else {
            LinkEvent::TxDone
        };
        Some((k, l, ev))
    }
}

/// What [`EventQueue::pop`] returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Next<E> {
    /// A link event; the caller must then set or clear that event of that
    /// link (`set_link`), or it comes out again.
    Link(Time, u32, LinkEvent),
    Other(Time, E),
}

pub struct EventQueue<E> {
    links: LinkClock,
    other: Heap<E>,
    seq: u64,
}

impl<E: Copy> EventQueue<E> {
    /// A queue for a network of `n_links` links.
    pub fn new(n_links: usize) -> Self {
        EventQueue {
            links: LinkClock::new(n_links),
            other: Heap::new(),
            seq: 0,
        }
    }

    /// Schedules `event` at `time`.
    #[inline]
    pub fn schedule(&mut self, time: Time, event: E) {
        let seq = self.reserve();
        self.other.push(key(time, seq), event);
    }

    /// Takes the next sequence number, for an event that will be scheduled
    /// later (with [`EventQueue::set_link`]). It then fires exactly where it
    /// would have had it been scheduled now, provided it is scheduled before
    /// anything later than it is popped.
    #[inline]
    pub fn reserve(&mut self) -> u64 {
        let seq = self.seq;
        self.seq += 1;
        seq
    }

    /// Schedules link `l`'s event `ev` at `time` with a fresh sequence
    /// number, replacing the one pending.
    #[inline]
    pub fn schedule_link(&mut self, l: u32, ev: LinkEvent, time: Time) {
        let seq = self.reserve();
        self.set_link(l, ev, Some((time, seq)));
    }

    /// Sets link `l`'s event `ev` to (time, reserved sequence number), or
    /// clears it.
    #[inline]
    pub fn set_link(&mut self, l: u32, ev: LinkEvent, at: Option<(Time, u64)>) {
        debug_assert!(
            at.is_none_or(|(_, seq)| seq < self.seq),
            "a sequence number from reserve()"
        );
        self.links.set(l, ev, at.map_or(u128::MAX, |(t, seq)| key(t, seq)));
    }

    /// The earliest event, ties in scheduling order.
    #[inline]
    pub fn pop(&mut self) -> Option<Next<E>> {
        let link = self.links.peek();
        match (link, self.other.peek_key()) {
            (Some((a, l, ev)), b) if b.is_none_or(|b| a < b) => Some(Next::Link(Time((a >> 64) as u64), l, ev)),
            _ => self.other.pop().map(|(k, e)| Next::Other(Time((k >> 64) as u64), e)),
        }
    }

    /// Events pending.
    pub fn len(&self) -> usize {
        let links = self.links.pending.iter().flatten().filter(|&&k| k != u128::MAX).count();
        links + self.other.keys.len()
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
    /// The timer was moved later since the event was queued: queue the
    /// same event again for this time.
    Later(Time),
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
                Fired::Later(at)
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

    fn other(n: Option<Next<char>>) -> Option<char> {
        match n {
            Some(Next::Other(_, e)) => Some(e),
            _ => None,
        }
    }

    #[test]
    fn test_pop_orders_by_time_then_insertion() {
        let mut q = EventQueue::new(0);
        q.schedule(Time(5), 'a');
        q.schedule(Time(3), 'b');
        q.schedule(Time(5), 'c');
        q.schedule(Time(3), 'd');
        q.schedule(Time(4), 'e');
        let order: Vec<char> = std::iter::from_fn(|| other(q.pop())).collect();
        assert_eq!(order, vec!['b', 'd', 'e', 'a', 'c']);
    }

    #[test]
    fn test_link_events_and_reserved_sequence_numbers_keep_one_order() {
        // Heap events and the two events of each of 5 links, with times
        // from a narrow range (many ties), link events often set with a
        // sequence number reserved earlier, against a reference: one
        // ordered set of (time, seq). A popped link event is cleared or
        // replaced, as the engine does.
        const LINKS: u32 = 5;
        let mut q = EventQueue::new(LINKS as usize);
        let mut reference = std::collections::BTreeSet::new();
        let mut pending: Vec<[Option<(u64, u64)>; 2]> = vec![[None; 2]; LINKS as usize];
        let mut state = 12345u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut now = 0u64;
        let mut popped = 0;
        let ev_of = |i: usize| if i == 0 { LinkEvent::Arrive } else { LinkEvent::TxDone };
        let mut stash = Vec::new();
        for i in 0..20_000u64 {
            let t = now + next() % 40;
            if next() % 3 == 0 {
                stash.push(q.reserve());
            }
            if next() % 2 == 0 {
                q.schedule(Time(t), i);
                reference.insert((t, q.seq - 1, Some(i), None));
            } else {
                let (l, e) = ((next() % LINKS as u64) as usize, (next() % 2) as usize);
                // Replace whatever that link event was (dropping it from the
                // reference), with a fresh or an older reserved number.
                if let Some((pt, ps)) = pending[l][e] {
                    reference.remove(&(pt, ps, None, Some((l, e))));
                }
                let seq = match stash.pop() {
                    Some(seq) if next() % 2 == 0 => seq,
                    _ => q.reserve(),
                };
                q.set_link(l as u32, ev_of(e), Some((Time(t), seq)));
                pending[l][e] = Some((t, seq));
                reference.insert((t, seq, None, Some((l, e))));
            }
            for _ in 0..next() % 3 {
                let want = reference.pop_first();
                let got = q.pop();
                match (got, want) {
                    (None, None) => {}
                    (Some(Next::Other(t, e)), Some((wt, _, Some(we), None))) => {
                        assert_eq!((t.0, e), (wt, we));
                        now = t.0;
                    }
                    (Some(Next::Link(t, l, ev)), Some((wt, _, None, Some((wl, we))))) => {
                        assert_eq!((t.0, l as usize, ev), (wt, wl, ev_of(we)));
                        now = t.0;
                        q.set_link(l, ev, None);
                        pending[wl][we] = None;
                    }
                    (got, want) => panic!("popped {got:?}, expected {want:?}"),
                }
                popped += 1;
            }
        }
        assert!(popped > 5_000);
        assert_eq!(q.len(), reference.len());
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
        assert_eq!(t.fire(g, Time(10)), Fired::Later(Time(30)));
        // Moved later again while that one is queued, then it fires.
        assert_eq!(t.set(Some(Time(40)), Time(20)), None);
        assert_eq!(t.fire(g, Time(30)), Fired::Later(Time(40)));
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
        assert_eq!(t.fire(g, Time(10)), Fired::Later(Time(12)));
        assert_eq!(t.set(None, Time(11)), None);
        assert_eq!(t.fire(g, Time(12)), Fired::Stale, "cancelled");
        // A deadline in the past fires at once.
        let (at, g) = t.set(Some(Time(5)), Time(20)).expect("nothing queued: a new event");
        assert_eq!(at, Time(20));
        assert_eq!(t.fire(g, Time(20)), Fired::Due);
    }
}
