//! A link and the network of links: queue, serialisation, propagation and
//! forwarding, driven by whoever owns time.
//!
//! A packet handed to [`Network::forward`] at a node takes the link its
//! route names; the link's queue discipline takes it or drops it; when the
//! link is free the discipline hands over the next packet, which is
//! serialised at the link rate (the link's end-of-transmission wake-up),
//! then propagates for the link's delay (its arrival wake-up) to the far
//! node, where [`Network::arrive`] forwards it again or hands it back for
//! delivery. Packets in propagation stay in a FIFO on their link (the delay
//! is constant, so they arrive in the order they left), so each link needs
//! at most two wake-ups pending: the end of its transmission and the arrival
//! of its oldest packet in flight.
//!
//! The network never sees an event queue. It asks for wake-ups through
//! [`Wakeups`], which the simulator's event queue implements, and it says
//! what it lost by leaving the packets it dropped in [`Network::lost`] for
//! the caller to account to their flows.

use std::collections::VecDeque;

use aqmlab_qdisc::fifo::Backlog;
use aqmlab_qdisc::time::{transmission_time, NANOS_PER_SEC};
use aqmlab_qdisc::{AnyQdisc, Duration, Effects, Packet, QueueDisc, Time, Verdict};

use crate::engine::Timer;
use crate::monitor::QueueMonitor;

/// The wake-ups a network asks of whoever owns time. Each link has at most
/// one of each kind pending; setting one replaces it.
///
/// Sequence numbers order wake-ups at the same instant: a wake-up set with
/// a number taken earlier fires before one set with a later number, and
/// before any other event scheduled after that number was taken.
pub trait Wakeups {
    /// Takes the next sequence number, for a wake-up set now or later.
    fn reserve(&mut self) -> u64;
    /// Sets (or, with `None`, clears) link `l`'s end-of-transmission wake-up.
    fn set_tx_done(&mut self, l: u32, at: Option<(Time, u64)>);
    /// Sets (or clears) the arrival of link `l`'s oldest packet in flight.
    fn set_arrival(&mut self, l: u32, at: Option<(Time, u64)>);
    /// Wakes link `l`'s queue discipline at `at` (its timer's event, with
    /// the timer's `generation`).
    fn qdisc_timer(&mut self, l: u32, at: Time, generation: u32);
}

/// One direction of a link: its discipline, its transmitter and the
/// packets propagating on it.
pub struct Link {
    /// The node at the far end.
    pub to: u32,
    pub rate_bps: u64,
    /// The transmission time of a byte when it is a whole number of
    /// nanoseconds (10 Mb/s: 800 ns), so that a packet's needs no division.
    ns_per_byte: Option<u64>,
    /// The propagation delay (as this run drew it, if drawn).
    pub delay: Duration,
    pub qdisc: AnyQdisc,
    /// The discipline is a plain FIFO (drop-tail), for which asking an
    /// empty queue for a packet changes nothing: when it is empty as a
    /// transmission starts, the end of that transmission needs no wake-up
    /// unless a packet arrives before it (see [`Link::transmit`]).
    lazy: bool,
    /// A transmission is under way, or (lazy links) has ended unnoticed.
    busy: bool,
    /// The packet being transmitted and when its transmission ends.
    tx: Packet,
    tx_end: Time,
    /// `tx` is already in `in_flight` (a transmission without a wake-up).
    tx_in_flight: bool,
    /// An end-of-transmission wake-up is set for the current transmission.
    done_pending: bool,
    /// Packets propagating, oldest first, with their arrival time and the
    /// sequence number reserved for their arrival wake-up.
    in_flight: VecDeque<(Time, u64, Packet)>,
    /// What is measured at the link's queue.
    pub mon: QueueMonitor,
    /// The discipline's own timer.
    pub timer: Timer,
}

/// Whether `q` is a drop-tail queue that, empty, admits a packet of `size`
/// bytes (a byte limit smaller than the packet refuses it).
#[inline]
fn passes_straight(q: &AnyQdisc, size: u32) -> bool {
    matches!(q, AnyQdisc::DropTail(d) if d.params().limit.admits(Backlog::default(), size))
}

impl Link {
    pub fn new(to: u32, rate_bps: u64, delay: Duration, qdisc: AnyQdisc, mon: QueueMonitor) -> Link {
        Link {
            to,
            rate_bps,
            ns_per_byte: ((8 * NANOS_PER_SEC).checked_rem(rate_bps) == Some(0)).then(|| 8 * NANOS_PER_SEC / rate_bps),
            delay,
            lazy: matches!(qdisc, AnyQdisc::DropTail(_)),
            qdisc,
            busy: false,
            tx: Packet::default(),
            tx_end: Time(0),
            tx_in_flight: false,
            done_pending: false,
            in_flight: VecDeque::new(),
            mon,
            timer: Timer::default(),
        }
    }

    /// Whether the discipline is a plain FIFO, which has no timer.
    pub fn is_lazy(&self) -> bool {
        self.lazy
    }

    /// What a `[trace]` samples at this link's queue, in column order:
    /// backlog in packets and bytes, whole-run arrivals and drops, then what
    /// the discipline reports of its state.
    pub fn trace(&self, push: &mut dyn FnMut(&'static str, f64)) {
        let b = self.qdisc.backlog();
        push("backlog_pkts", b.pkts as f64);
        push("backlog_bytes", b.bytes as f64);
        push("arrivals", self.mon.totals.arrivals as f64);
        push("drops", self.mon.totals.drops as f64);
        self.qdisc.traced(push);
    }
}

/// The links of a network, its static routes, and the packets they lost.
pub struct Network {
    pub links: Vec<Link>,
    /// `next_hop[node * n_nodes + dst]`: the link to leave `node` on.
    next_hop: Vec<u32>,
    n_nodes: usize,
    /// Scratch for what a discipline call did besides its result.
    fx: Effects,
    /// Packets dropped by any queue since the caller last emptied this.
    pub lost: Vec<Packet>,
}

impl Network {
    pub fn new(links: Vec<Link>, next_hop: Vec<u32>, n_nodes: usize) -> Network {
        Network {
            links,
            next_hop,
            n_nodes,
            fx: Effects::default(),
            lost: Vec::new(),
        }
    }

    /// Sends `pkt`, now at `node`, on the link its route names.
    #[inline]
    pub fn forward<W: Wakeups>(&mut self, node: u32, pkt: Packet, now: Time, w: &mut W) {
        let l = self.next_hop[node as usize * self.n_nodes + pkt.dst as usize];
        self.enqueue(l, pkt, now, w);
    }

    /// Link `l`'s oldest packet in flight reaches the far node: it is
    /// forwarded on, or returned if it is at its destination.
    #[inline]
    pub fn arrive<W: Wakeups>(&mut self, l: u32, now: Time, w: &mut W) -> Option<Packet> {
        let link = &mut self.links[l as usize];
        let (_, _, pkt) = link
            .in_flight
            .pop_front()
            .expect("an arrival wake-up has a packet in flight");
        let next = link.in_flight.front().map(|&(at, seq, _)| (at, seq));
        w.set_arrival(l, next);
        let node = link.to;
        if node == pkt.dst {
            Some(pkt)
        } else {
            self.forward(node, pkt, now, w);
            None
        }
    }

    /// Link `l`'s transmission ends: the packet goes into flight and the
    /// next one, if any, starts.
    pub fn tx_done<W: Wakeups>(&mut self, l: u32, now: Time, w: &mut W) {
        let link = &mut self.links[l as usize];
        link.busy = false;
        link.done_pending = false;
        if !link.tx_in_flight {
            Self::launch(w, link, l, now, link.tx);
        }
        self.start_tx(l, now, w);
        // The wake-up that fired is replaced if the next transmission has
        // one; cleared otherwise.
        if !self.links[l as usize].done_pending {
            w.set_tx_done(l, None);
        }
        self.sync_timer(l, now, w);
    }

    /// Link `l`'s discipline timer fires.
    pub fn qdisc_timer<W: Wakeups>(&mut self, l: u32, now: Time, w: &mut W) {
        self.links[l as usize].qdisc.on_timer(now);
        self.sync_timer(l, now, w);
    }

    fn enqueue<W: Wakeups>(&mut self, l: u32, mut pkt: Packet, now: Time, w: &mut W) {
        pkt.enqueued_at = now;
        self.fx.clear();
        let link = &mut self.links[l as usize];
        if link.busy && !link.done_pending && link.tx_end <= now {
            // A lazy link's transmission ended unnoticed (see `transmit`).
            link.busy = false;
        }
        if !link.busy && passes_straight(&link.qdisc, pkt.size_bytes) {
            // An idle drop-tail link holds nothing: the packet is queued and
            // leaves at once, as the general path below would do, without
            // the calls that change nothing (its backlog integral gains 0).
            link.mon.arrival(now, pkt.class, false, false);
            link.mon.backlog(now, 0);
            Self::transmit(w, link, l, pkt, now, false, false);
            return;
        }
        let verdict = link.qdisc.enqueue(pkt, now, &mut self.fx);
        let dropped = matches!(verdict, Verdict::Dropped(_));
        link.mon
            .arrival(now, pkt.class, dropped, dropped || !self.fx.discards.is_empty());
        match verdict {
            Verdict::Enqueued => {}
            Verdict::Marked => link.mon.mark(now),
            Verdict::Dropped(reason) => link.mon.drop(now, pkt.class, reason, false),
        }
        let idle = !link.busy;
        if dropped {
            self.lost.push(pkt);
        }
        self.settle(l, now);
        if idle {
            self.start_tx(l, now, w);
        } else {
            let link = &mut self.links[l as usize];
            if !link.done_pending && link.qdisc.backlog().pkts > 0 {
                link.done_pending = true;
                let seq = w.reserve();
                w.set_tx_done(l, Some((link.tx_end, seq)));
            }
        }
        self.sync_timer(l, now, w);
    }

    /// Accounts for the packets a discipline call discarded (besides an
    /// arrival's own drop) and brings the backlog integral up to date.
    fn settle(&mut self, l: u32, now: Time) {
        let link = &mut self.links[l as usize];
        for (p, reason) in &self.fx.discards {
            link.mon.drop(now, p.class, *reason, true);
        }
        link.mon.backlog(now, link.qdisc.backlog().pkts);
        self.lost.extend(self.fx.discards.iter().map(|(p, _)| *p));
    }

    fn start_tx<W: Wakeups>(&mut self, l: u32, now: Time, w: &mut W) {
        self.fx.clear();
        let link = &mut self.links[l as usize];
        if let Some(p) = link.qdisc.dequeue(now, &mut self.fx) {
            let queued = link.qdisc.backlog().pkts > 0;
            Self::transmit(w, link, l, p, now, self.fx.marked, queued);
        }
        self.settle(l, now);
    }

    /// Starts sending `p` (just dequeued; `queued`: packets wait behind it).
    #[inline]
    fn transmit<W: Wakeups>(w: &mut W, link: &mut Link, l: u32, mut p: Packet, now: Time, marked: bool, queued: bool) {
        p.queued = Duration(p.queued.0 + (now - p.enqueued_at).0);
        let done = now
            + match link.ns_per_byte {
                Some(ns) => Duration(p.size_bytes as u64 * ns),
                None => transmission_time(p.size_bytes, link.rate_bps),
            };
        link.busy = true;
        link.tx_end = done;
        link.mon.departure(now, p.class, p.enqueued_at, done);
        if marked {
            link.mon.mark(now);
        }
        if link.lazy && !queued {
            // Nothing waits behind this packet, and asking the empty FIFO
            // again at `done` would change nothing: no wake-up. The packet
            // goes into flight now; the link counts as free from `done` on,
            // which `enqueue` notices (and sets the wake-up if a packet
            // comes to wait before then).
            link.tx_in_flight = true;
            link.done_pending = false;
            Self::launch(w, link, l, done, p);
        } else {
            link.tx = p;
            link.tx_in_flight = false;
            link.done_pending = true;
            let seq = w.reserve();
            w.set_tx_done(l, Some((done, seq)));
        }
    }

    /// Puts `p`, whose transmission ends at `done`, into flight: it reaches
    /// the far node a propagation delay later.
    fn launch<W: Wakeups>(w: &mut W, link: &mut Link, l: u32, done: Time, p: Packet) {
        // Only the oldest packet in flight has its arrival wake-up set; the
        // others keep the sequence number they would have been scheduled
        // with, so the order of events is as if each had its own.
        let at = done + link.delay;
        let seq = w.reserve();
        if link.in_flight.is_empty() {
            w.set_arrival(l, Some((at, seq)));
        }
        link.in_flight.push_back((at, seq, p));
    }

    /// Keeps the discipline's wake-up in step with its timer (drop-tail has
    /// none).
    #[inline]
    fn sync_timer<W: Wakeups>(&mut self, l: u32, now: Time, w: &mut W) {
        let link = &mut self.links[l as usize];
        if link.lazy {
            return;
        }
        if let Some((at, generation)) = link.timer.set(link.qdisc.next_timer(), now) {
            w.qdisc_timer(l, at, generation);
        }
    }

    /// The link a packet at `node` for `dst` leaves on.
    pub fn route(&self, node: u32, dst: u32) -> u32 {
        self.next_hop[node as usize * self.n_nodes + dst as usize]
    }
}
