//! RED+Tail: two queues in parallel behind one link, a drop-tail queue for
//! delay-sensitive traffic and a RED queue for bulk TCP, sharing one buffer.
//!
//! Jou and Baras, parallel queues with Adaptive RED and dynamic thresholds
//! (the RED+Tail scheme). Web and real-time traffic (traffic class
//! `realtime`) gets a short drop-tail queue (queue 1) whose service rate
//! grows with its length; bulk TCP (class `bulk`) goes to a RED queue (queue
//! 2) that gets the rest of the link. A packet is dropped when the shared
//! buffer is full.
//!
//! Service rates, from queue 1's instantaneous length q1 in packets (C the
//! link rate):
//!
//! ```text
//! q1 = 0                 C1 = 0
//! 0 < q1 < min_th1       C1 = c1_min
//! q1 >= min_th1          C1 = min(C q1 / max_th1, c1_max)
//!                        C2 = C - C1
//! ```
//!
//! Defaults (the paper leaves them to a technical report; chosen here):
//! min_th1 = 5 packets, max_th1 = 50 packets, c1_min = 0.2 C, c1_max = 0.8 C.
//! `c1_min` and `c1_max` are written as fractions of C.
//!
//! The scheduler. While both queues hold packets, the link serves them so
//! that their long-run shares of transmitted bits are C1 : C2 as C1 changes:
//! a fair-queueing rule with weights w1 = C1/C and w2 = 1 - w1 recomputed at
//! every dequeue. Each queue keeps its normalised service n_i, the sum of
//! size/w_i over the packets it sent; the queue whose head would finish
//! first, the smaller n_i + size_head / w_i, goes next. A queue that has
//! been empty restarts at the other's n, so idle time earns no credit. With
//! one queue empty the other is served at the full rate (work-conserving).
//!
//! Queue 2 runs the whole RED family (`red`, `ared`, `feng-ared`) through
//! [`RedCore`] on its own backlog. Its idle period (ns-2's idle decay)
//! starts at a dequeue that finds queue 2 empty, whether or not queue 1
//! keeps the link busy.

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::red::{RedAction, RedCore, RedParams};
use crate::rng::{self, Rng};
use crate::time::Time;
use crate::{DropReason, Effects, LinkInfo, ParamError, QueueDisc, Verdict};

#[derive(Clone, Debug, PartialEq)]
pub struct RedTailParams {
    /// The shared buffer.
    pub limit: Limit,
    pub min_th1_pkts: u32,
    pub max_th1_pkts: u32,
    /// Queue 1's service rate while it is shorter than min_th1, as a
    /// fraction of the link rate.
    pub c1_min: f64,
    /// The most of the link queue 1 gets, as a fraction of the link rate.
    pub c1_max: f64,
    /// Traffic class indices (`Packet::class`) that go to queue 1.
    pub queue1_classes: Vec<u8>,
    /// Queue 2's RED; its limit is the shared buffer's.
    pub red: RedParams,
}

impl RedTailParams {
    pub const DEFAULT_MIN_TH1_PKTS: u32 = 5;
    pub const DEFAULT_MAX_TH1_PKTS: u32 = 50;
    pub const DEFAULT_C1_MIN: f64 = 0.2;
    pub const DEFAULT_C1_MAX: f64 = 0.8;

    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        if self.min_th1_pkts == 0 || self.max_th1_pkts == 0 {
            return Err(ParamError::new(
                "min_th1",
                "min_th1 and max_th1 must be at least 1 packet",
            ));
        }
        if !(self.c1_min > 0.0 && self.c1_min <= self.c1_max) {
            return Err(ParamError::new(
                "c1_min",
                format!(
                    "must be in (0, c1_max] (got {} with c1_max {})",
                    self.c1_min, self.c1_max
                ),
            ));
        }
        if self.c1_max.is_nan() || self.c1_max >= 1.0 {
            return Err(ParamError::new(
                "c1_max",
                format!("must be below 1 so queue 2 is never starved (got {})", self.c1_max),
            ));
        }
        Ok(())
    }

    /// Queue 1's share of the link, C1 / C, when it holds `q1` packets.
    #[inline]
    pub fn c1_share(&self, q1: u32) -> f64 {
        if q1 == 0 {
            0.0
        } else if q1 < self.min_th1_pkts {
            self.c1_min
        } else {
            (q1 as f64 / self.max_th1_pkts as f64).min(self.c1_max)
        }
    }
}

/// Which queue a dequeue serves, given both backlogged: the one whose head
/// would finish first in normalised service (see the module comment).
#[inline]
pub fn red_tail_pick(n: [f64; 2], head_bytes: [u32; 2], w1: f64) -> usize {
    let f1 = n[0] + head_bytes[0] as f64 / w1;
    let f2 = n[1] + head_bytes[1] as f64 / (1.0 - w1);
    if f1 <= f2 {
        0
    } else {
        1
    }
}

#[derive(Clone, Debug, Default)]
pub struct RedTailState {
    /// Normalised service of each queue (bytes / weight).
    pub n: [f64; 2],
    /// C1 / C at the last dequeue.
    pub c1_share: f64,
}

#[derive(Clone, Debug)]
pub struct RedTail {
    params: RedTailParams,
    state: RedTailState,
    rate_bps: u64,
    red: RedCore,
    queues: [Fifo; 2],
    rng: Rng,
}

impl RedTail {
    pub fn new(mut params: RedTailParams, link: LinkInfo, seed: u64) -> Result<RedTail, ParamError> {
        params.red.limit = params.limit;
        params.validate()?;
        Ok(RedTail {
            red: RedCore::new(params.red, link)?,
            params,
            state: RedTailState::default(),
            rate_bps: link.rate_bps,
            queues: [Fifo::new(), Fifo::new()],
            rng: <Rng as rand::SeedableRng>::seed_from_u64(seed),
        })
    }

    pub fn params(&self) -> &RedTailParams {
        &self.params
    }

    /// Queue 2's RED with "auto" values resolved.
    pub fn red(&self) -> &RedCore {
        &self.red
    }

    pub fn state(&self) -> &RedTailState {
        &self.state
    }

    fn total(&self) -> Backlog {
        let (a, b) = (self.queues[0].backlog(), self.queues[1].backlog());
        Backlog {
            pkts: a.pkts + b.pkts,
            bytes: a.bytes + b.bytes,
        }
    }

    /// Queue `i` becomes backlogged: it restarts at the other's normalised
    /// service if it fell behind while empty.
    fn activate(&mut self, i: usize) {
        if self.queues[i].is_empty() {
            self.state.n[i] = self.state.n[i].max(self.state.n[1 - i]);
        }
    }

    /// The enqueue rule with the uniform draw given, for scripted tests.
    pub fn enqueue_with_draw(&mut self, mut pkt: Packet, now: Time, u: f64) -> Verdict {
        let i = if self.params.queue1_classes.contains(&pkt.class) {
            0
        } else {
            1
        };
        let mut verdict = Verdict::Enqueued;
        if i == 1 {
            let can_mark = self.params.red.ecn && pkt.ecn.is_ecn_capable();
            match self
                .red
                .on_arrival(now, self.queues[1].backlog(), pkt.size_bytes, can_mark, u)
            {
                RedAction::Drop(reason) => return Verdict::Dropped(reason),
                RedAction::Mark => verdict = Verdict::Marked,
                RedAction::Admit => {}
            }
        }
        if !self.params.limit.admits(self.total(), pkt.size_bytes) {
            if i == 1 {
                self.red.on_overflow();
            }
            return Verdict::Dropped(DropReason::Overflow);
        }
        if verdict == Verdict::Marked {
            pkt.ecn = Ecn::Ce;
        }
        self.activate(i);
        self.queues[i].push_back(pkt);
        verdict
    }
}

impl QueueDisc for RedTail {
    fn enqueue(&mut self, pkt: Packet, now: Time, _fx: &mut Effects) -> Verdict {
        let u = rng::uniform(&mut self.rng);
        self.enqueue_with_draw(pkt, now, u)
    }

    fn dequeue(&mut self, now: Time, _fx: &mut Effects) -> Option<Packet> {
        let w1 = self.params.c1_share(self.queues[0].backlog().pkts);
        self.state.c1_share = w1;
        let i = match (self.queues[0].front(), self.queues[1].front()) {
            (None, None) => {
                self.red.on_link_idle(now);
                return None;
            }
            (Some(_), None) => 0,
            (None, Some(_)) => 1,
            (Some(a), Some(b)) => red_tail_pick(self.state.n, [a.size_bytes, b.size_bytes], w1),
        };
        let pkt = self.queues[i].pop_front().expect("the chosen queue has a head");
        // A queue served alone is charged at the full rate; the other
        // catches up when it becomes backlogged (`activate`).
        let w = if self.queues[1 - i].is_empty() {
            1.0
        } else if i == 0 {
            w1
        } else {
            1.0 - w1
        };
        self.state.n[i] += pkt.size_bytes as f64 / w;
        if i == 1 {
            self.red.on_departure(now, self.queues[1].backlog());
        } else if self.queues[1].is_empty() {
            self.red.on_link_idle(now);
        }
        Some(pkt)
    }

    fn backlog(&self) -> Backlog {
        self.total()
    }

    fn next_timer(&self) -> Option<Time> {
        self.red.next_timer()
    }

    fn on_timer(&mut self, now: Time) {
        self.red.on_timer(now, self.queues[1].backlog());
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("q1", self.queues[0].backlog().pkts as f64);
        out("q2", self.queues[1].backlog().pkts as f64);
        out("C1", self.state.c1_share * self.rate_bps as f64);
        self.red.traced(self.queues[1].backlog(), out);
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::Conserving;
    use crate::red::{Threshold, Weight};
    use proptest::prelude::*;

    // Constants

    const LINK: LinkInfo = LinkInfo {
        rate_bps: 10_000_000,
        mtu_bytes: 1500,
    };
    const REALTIME: u8 = 0;
    const BULK: u8 = 1;

    // Helpers

    fn params(limit: u32) -> RedTailParams {
        RedTailParams {
            limit: Limit::Packets(limit),
            min_th1_pkts: RedTailParams::DEFAULT_MIN_TH1_PKTS,
            max_th1_pkts: RedTailParams::DEFAULT_MAX_TH1_PKTS,
            c1_min: RedTailParams::DEFAULT_C1_MIN,
            c1_max: RedTailParams::DEFAULT_C1_MAX,
            queue1_classes: vec![REALTIME],
            red: RedParams::red(
                Limit::Packets(limit),
                Threshold::Packets(100.0),
                Threshold::Packets(200.0),
                0.1,
                Weight::Value(0.002),
            ),
        }
    }

    fn pkt(id: u64, class: u8, size_bytes: u32) -> Packet {
        Packet {
            id,
            class,
            size_bytes,
            ..Packet::default()
        }
    }

    /// Fills queue 1 with `n1` and queue 2 with `n2` packets of `size` bytes
    /// (no RED drop: its thresholds are far above).
    fn filled(n1: u32, n2: u32, size: u32) -> RedTail {
        let mut q = RedTail::new(params(1000), LINK, 1).unwrap();
        for k in 0..n1 {
            assert_eq!(
                q.enqueue_with_draw(pkt(k as u64, REALTIME, size), Time::ZERO, 0.9),
                Verdict::Enqueued
            );
        }
        for k in 0..n2 {
            assert_eq!(
                q.enqueue_with_draw(pkt(1000 + k as u64, BULK, size), Time::ZERO, 0.9),
                Verdict::Enqueued
            );
        }
        q
    }

    #[test]
    fn test_c1_share_follows_the_three_regimes() {
        let p = params(1000);
        assert_eq!(p.c1_share(0), 0.0);
        assert_eq!(p.c1_share(1), 0.2);
        assert_eq!(p.c1_share(4), 0.2);
        // q1 >= min_th1: C q1 / max_th1, capped at 0.8 C.
        assert_eq!(p.c1_share(5), 0.1);
        assert_eq!(p.c1_share(20), 0.4);
        assert_eq!(p.c1_share(40), 0.8);
        assert_eq!(p.c1_share(45), 0.8);
    }

    #[test]
    fn test_both_backlogged_shares_follow_c1_exactly_over_a_round() {
        // q1 held at 30 packets (C1 = 0.6 C) by refilling after each
        // dequeue; equal sizes, so in every 5 dequeues queue 1 gets 3, queue
        // 2 gets 2 (n1 advances 1000/0.6, n2 1000/0.4 per packet).
        let mut q = filled(30, 100, 1000);
        let mut served = [0u32; 2];
        for k in 0..500u64 {
            let p = q.dequeue(Time::ZERO, &mut Effects::default()).unwrap();
            let i = if p.class == REALTIME { 0 } else { 1 };
            served[i] += 1;
            let refill = pkt(10_000 + k, p.class, 1000);
            q.enqueue_with_draw(refill, Time::ZERO, 0.9);
        }
        assert_eq!(served, [300, 200]);
    }

    #[test]
    fn test_one_queue_empty_other_served_at_full_rate() {
        let mut q = filled(0, 3, 500);
        for _ in 0..3 {
            assert_eq!(q.dequeue(Time::ZERO, &mut Effects::default()).unwrap().class, BULK);
        }
        assert!(q.dequeue(Time::ZERO, &mut Effects::default()).is_none());
    }

    #[test]
    fn test_idle_queue_earns_no_credit() {
        // Queue 2 alone sends 50 packets; then queue 1 (below min_th1, so
        // C1 = 0.2 C) becomes backlogged with 4 packets, refilled. It must not
        // monopolise the link to catch up: from then on 1 in 5 dequeues is
        // queue 1's.
        let mut q = filled(0, 200, 1000);
        for _ in 0..50 {
            q.dequeue(Time::ZERO, &mut Effects::default());
        }
        for k in 0..4 {
            q.enqueue_with_draw(pkt(5000 + k, REALTIME, 1000), Time::ZERO, 0.9);
        }
        let mut first_ten = Vec::new();
        for k in 0..10u64 {
            let p = q.dequeue(Time::ZERO, &mut Effects::default()).unwrap();
            first_ten.push(p.class);
            if p.class == REALTIME {
                q.enqueue_with_draw(pkt(6000 + k, REALTIME, 1000), Time::ZERO, 0.9);
            }
        }
        assert_eq!(first_ten.iter().filter(|&&c| c == REALTIME).count(), 2, "{first_ten:?}");
    }

    #[test]
    fn test_shared_buffer_full_drops_either_class() {
        let mut q = RedTail::new(params(3), LINK, 1);
        assert!(q.is_err(), "RED thresholds above a 3-packet buffer are rejected");
        let mut p = params(3);
        p.red = RedParams::red(
            Limit::Packets(3),
            Threshold::Packets(1.0),
            Threshold::Packets(2.0),
            0.1,
            Weight::Value(0.002),
        );
        q = RedTail::new(p, LINK, 1);
        let mut q = q.unwrap();
        assert_eq!(
            q.enqueue_with_draw(pkt(1, REALTIME, 100), Time::ZERO, 0.9),
            Verdict::Enqueued
        );
        assert_eq!(
            q.enqueue_with_draw(pkt(2, REALTIME, 100), Time::ZERO, 0.9),
            Verdict::Enqueued
        );
        assert_eq!(
            q.enqueue_with_draw(pkt(3, BULK, 100), Time::ZERO, 0.9),
            Verdict::Enqueued
        );
        assert_eq!(
            q.enqueue_with_draw(pkt(4, REALTIME, 100), Time::ZERO, 0.9),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(
            q.enqueue_with_draw(pkt(5, BULK, 100), Time::ZERO, 0.9),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(q.backlog(), Backlog { pkts: 3, bytes: 300 });
    }

    #[test]
    fn test_bad_shares_rejected() {
        let mut p = params(1000);
        p.c1_max = 1.0;
        assert_eq!(RedTail::new(p, LINK, 1).unwrap_err().param, "c1_max");
        let mut p = params(1000);
        p.c1_min = 0.9;
        assert_eq!(RedTail::new(p, LINK, 1).unwrap_err().param, "c1_min");
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for RedTail {
        /// Two queues: packets of one class (one flow) keep their order.
        const FIFO: bool = false;

        fn configs() -> BoxedStrategy<RedTail> {
            any::<u64>()
                .prop_map(|seed| {
                    let mut p = params(30);
                    p.red = RedParams::red(
                        Limit::Packets(30),
                        Threshold::Packets(5.0),
                        Threshold::Packets(15.0),
                        0.1,
                        Weight::Value(0.02),
                    );
                    RedTail::new(p, LINK, seed).unwrap()
                })
                .boxed()
        }
    }
}
