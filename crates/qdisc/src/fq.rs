//! The flow-queueing scheduler of FQ-CoDel (RFC 8290, Section 4), generic
//! over the AQM run in each flow queue: `fq_codel.rs` runs CoDel in it,
//! `fq_pie.rs` PIE and `fq_cobalt.rs` COBALT, as Linux runs one scheduler
//! shape under `sch_fq_codel`, `sch_fq_pie` and CAKE.
//!
//! Heads up: read RFC 8290 Section 4 and the header of `fq_codel.rs` (which
//! states the scheduler's rules and its choices between variants) first.
//!
//! What the scheduler owns: the keyed hash of `pkt.flow` onto `flows`
//! queues, the new-flows and old-flows lists with deficit round robin, the
//! hard limit on the sum of the queues and what happens when it is reached
//! ([`Overflow`]), and the packet and byte totals. What the per-flow AQM
//! ([`FlowAqm`]) owns: its parameters, one state per flow queue, its
//! counters, and three decisions: whether an arrival the buffer has room for
//! is queued, marked or dropped (PIE decides here); which packet, if any, a
//! flow queue gives up when the scheduler serves it (CoDel and COBALT
//! decide here, dropping from the head); and what a periodic update does to
//! every flow's state (PIE's `t_update`).

use std::collections::VecDeque;
use std::fmt::Debug;

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::Packet;
use crate::rng::{self, Rng};
use crate::time::{Duration, Time};
use crate::{DropReason, Effects, ParamError, Verdict};

/// The most flow queues (Linux caps `flows` at 65536).
pub const MAX_FLOWS: u32 = 65_536;

/// The AQM run in each flow queue. The scheduler keeps one `State` per
/// queue and one `Stats` for all of them, and calls these at the moments
/// their comments give.
pub trait FlowAqm: Clone + Debug {
    type State: Clone + Debug;
    type Stats: Copy + Debug + Default + PartialEq;

    /// Whether [`FlowAqm::admit`] uses a uniform draw: then one is taken
    /// for every arrival before the limit check, as every discipline that
    /// draws at arrival does (so draws line up arrival by arrival).
    const ARRIVAL_DRAW: bool = false;

    /// A queue's state before its first packet.
    fn new_state(&self) -> Self::State;

    /// An arrival for which the buffer has room, before it joins `queue`
    /// (its flow's queue), given the uniform draw `u` in [0, 1) (0 unless
    /// `ARRIVAL_DRAW`): queue it, mark it (`Verdict::Marked`, the AQM has
    /// set CE) or drop it. The default queues every arrival.
    fn admit(
        &self,
        _s: &mut Self::State,
        _stats: &mut Self::Stats,
        _queue: &Fifo,
        _pkt: &mut Packet,
        _u: f64,
    ) -> Verdict {
        Verdict::Enqueued
    }

    /// The scheduler serves `queue`: the packet to send, if any. Packets
    /// the AQM drops from the head go to `fx` with their reason.
    fn dequeue(
        &self,
        s: &mut Self::State,
        stats: &mut Self::Stats,
        queue: &mut Fifo,
        now: Time,
        fx: &mut Effects,
        rng: &mut Rng,
    ) -> Option<Packet>;

    /// The overflow rule has just dropped packets of this queue (or the
    /// arrival for it).
    fn on_overflow(&self, _s: &mut Self::State, _now: Time) {}

    /// The period of [`FlowAqm::update`], if the AQM has one.
    fn update_period(&self) -> Option<Duration> {
        None
    }

    /// The periodic update of one queue's state, `queue` being what it
    /// holds now.
    fn update(&self, _s: &mut Self::State, _queue: &Fifo) {}

    /// The AQM's traced values, after the scheduler's own.
    fn traced(
        &self,
        stats: &Self::Stats,
        states: &mut dyn Iterator<Item = &Self::State>,
        out: &mut dyn FnMut(&'static str, f64),
    );
}

/// What the scheduler does when an arrival takes the total over `limit`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Overflow {
    /// Queue the arrival, then drop from the head of the fattest queue
    /// (largest byte backlog, ties to the lowest index) until half its bytes
    /// or `batch_pkts` packets are gone; repeat while still over the limit
    /// (RFC 8290 and Linux `fq_codel`; CAKE with a batch of one).
    Fattest { batch_pkts: u32 },
    /// Drop the arrival itself (Linux `fq_pie`).
    Tail,
}

/// Which scheduling list a flow queue is on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FlowList {
    /// On neither list: the next packet makes it a new flow.
    #[default]
    Inactive,
    New,
    Old,
}

/// What the scheduler counted, beside the AQM's own counters.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqStats<S> {
    /// What the per-flow AQMs did, summed over flows.
    pub aqm: S,
    /// Packets dropped by the overflow rule, arrivals included.
    pub overflow_drops: u64,
    /// Times a flow queue joined the new-flows list.
    pub new_flows: u64,
}

#[derive(Clone, Debug)]
pub(crate) struct FlowQueue<S> {
    pub(crate) queue: Fifo,
    pub(crate) aqm: S,
    pub(crate) deficit_bytes: i64,
    pub(crate) list: FlowList,
}

/// The MurmurHash3 64-bit finaliser: a bijection that spreads every input
/// bit over the output.
#[inline]
pub(crate) fn fmix64(mut z: u64) -> u64 {
    z ^= z >> 33;
    z = z.wrapping_mul(0xff51_afd7_ed55_8ccd);
    z ^= z >> 33;
    z = z.wrapping_mul(0xc4ce_b9fe_1a85_ec53);
    z ^ (z >> 33)
}

/// Whether `backlog` exceeds `limit` (the overflow condition).
#[inline]
fn over_limit(limit: Limit, backlog: Backlog) -> bool {
    match limit {
        Limit::Packets(n) => backlog.pkts > n,
        Limit::Bytes(b) => backlog.bytes > b,
        Limit::Unlimited => false,
    }
}

/// The checks every FQ discipline makes of its scheduler's parameters.
pub(crate) fn validate_scheduler(
    limit: Limit,
    flows: u32,
    quantum_bytes: Option<u32>,
    overflow: Overflow,
) -> Result<(), ParamError> {
    limit.validate()?;
    if !(1..=MAX_FLOWS).contains(&flows) {
        return Err(ParamError::new(
            "flows",
            format!("must be in [1, {MAX_FLOWS}] (got {flows})"),
        ));
    }
    if quantum_bytes == Some(0) {
        return Err(ParamError::new("quantum", "must be at least 1 byte (got 0)"));
    }
    if overflow == (Overflow::Fattest { batch_pkts: 0 }) {
        return Err(ParamError::new("drop_batch", "must be at least 1 packet (got 0)"));
    }
    Ok(())
}

/// The flow-queueing scheduler with AQM `A` in every queue.
#[derive(Clone, Debug)]
pub struct FlowQueueing<A: FlowAqm> {
    pub(crate) aqm: A,
    pub(crate) limit: Limit,
    flows: u32,
    quantum_bytes: u32,
    overflow: Overflow,
    keys: [u64; 2],
    pub(crate) queues: Vec<FlowQueue<A::State>>,
    pub(crate) new_flows: VecDeque<u32>,
    pub(crate) old_flows: VecDeque<u32>,
    backlog: Backlog,
    stats: FqStats<A::Stats>,
    next_update: Option<Time>,
    rng: Rng,
}

impl<A: FlowAqm> FlowQueueing<A> {
    /// `quantum_bytes` resolved already (at least 1); the hash keys and the
    /// AQM's random stream both come from `seed`.
    pub(crate) fn new(aqm: A, limit: Limit, flows: u32, quantum_bytes: u32, overflow: Overflow, seed: u64) -> Self {
        let n = flows as usize;
        let state = aqm.new_state();
        FlowQueueing {
            next_update: aqm.update_period().map(|t| Time::ZERO + t),
            aqm,
            limit,
            flows,
            quantum_bytes,
            overflow,
            keys: [
                fmix64(seed ^ 0x243f_6a88_85a3_08d3),
                fmix64(seed ^ 0x1319_8a2e_0370_7344),
            ],
            queues: vec![
                FlowQueue {
                    queue: Fifo::new(),
                    aqm: state,
                    deficit_bytes: 0,
                    list: FlowList::Inactive,
                };
                n
            ],
            new_flows: VecDeque::with_capacity(n),
            old_flows: VecDeque::with_capacity(n),
            backlog: Backlog::default(),
            stats: FqStats::default(),
            rng: <Rng as rand::SeedableRng>::seed_from_u64(fmix64(seed ^ 0xa409_3822_299f_31d0)),
        }
    }

    pub fn aqm(&self) -> &A {
        &self.aqm
    }

    pub fn quantum_bytes(&self) -> u32 {
        self.quantum_bytes
    }

    pub fn stats(&self) -> &FqStats<A::Stats> {
        &self.stats
    }

    /// The queue (0..flows) that packets of `flow` go to: the flow id xor
    /// key 0, `fmix64`, xor key 1, `fmix64` again, then multiply-high.
    #[inline]
    pub fn flow_index(&self, flow: u32) -> usize {
        let h = fmix64(fmix64(u64::from(flow) ^ self.keys[0]) ^ self.keys[1]);
        ((u128::from(h) * u128::from(self.flows)) >> 64) as usize
    }

    pub fn flow_list(&self, flow: u32) -> FlowList {
        self.queues[self.flow_index(flow)].list
    }

    pub fn flow_backlog(&self, flow: u32) -> Backlog {
        self.queues[self.flow_index(flow)].queue.backlog()
    }

    pub fn flow_deficit_bytes(&self, flow: u32) -> i64 {
        self.queues[self.flow_index(flow)].deficit_bytes
    }

    /// `flow`'s queue's AQM state.
    pub fn flow_state(&self, flow: u32) -> &A::State {
        &self.queues[self.flow_index(flow)].aqm
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        self.backlog
    }

    /// One overflow batch from the fattest queue. Returns whether it dropped
    /// the arrival, the last packet of queue `arrival_idx`.
    fn drop_from_fattest(&mut self, arrival_idx: usize, batch_pkts: u32, now: Time, fx: &mut Effects) -> bool {
        let mut fattest = None;
        let mut max_bytes = 0;
        for (i, fq) in self.queues.iter().enumerate() {
            let b = fq.queue.backlog();
            if b.pkts > 0 && (fattest.is_none() || b.bytes > max_bytes) {
                fattest = Some(i);
                max_bytes = b.bytes;
            }
        }
        let Some(i) = fattest else {
            return false;
        };
        let threshold_bytes = max_bytes / 2;
        let (mut dropped_pkts, mut dropped_bytes) = (0u32, 0u64);
        let mut arrival_dropped = false;
        while let Some(pkt) = self.queues[i].queue.pop_front() {
            let size = u64::from(pkt.size_bytes);
            self.backlog.pkts -= 1;
            self.backlog.bytes -= size;
            self.stats.overflow_drops += 1;
            if i == arrival_idx && self.queues[i].queue.is_empty() {
                arrival_dropped = true;
            } else {
                fx.discard(pkt, DropReason::Overflow);
            }
            dropped_pkts += 1;
            dropped_bytes += size;
            if dropped_pkts >= batch_pkts || dropped_bytes >= threshold_bytes {
                break;
            }
        }
        self.aqm.on_overflow(&mut self.queues[i].aqm, now);
        arrival_dropped
    }

    pub fn enqueue(&mut self, mut pkt: Packet, now: Time, fx: &mut Effects) -> Verdict {
        let i = self.flow_index(pkt.flow);
        let u = if A::ARRIVAL_DRAW {
            rng::uniform(&mut self.rng)
        } else {
            0.0
        };
        if self.overflow == Overflow::Tail && !self.limit.admits(self.backlog, pkt.size_bytes) {
            self.stats.overflow_drops += 1;
            self.aqm.on_overflow(&mut self.queues[i].aqm, now);
            return Verdict::Dropped(DropReason::Overflow);
        }
        let fq = &mut self.queues[i];
        let mut verdict = self
            .aqm
            .admit(&mut fq.aqm, &mut self.stats.aqm, &fq.queue, &mut pkt, u);
        if let Verdict::Dropped(_) = verdict {
            return verdict;
        }
        fq.queue.push_back(pkt);
        self.backlog.pkts += 1;
        self.backlog.bytes += u64::from(pkt.size_bytes);
        if fq.list == FlowList::Inactive {
            fq.list = FlowList::New;
            fq.deficit_bytes = i64::from(self.quantum_bytes);
            self.new_flows.push_back(i as u32);
            self.stats.new_flows += 1;
        }
        if let Overflow::Fattest { batch_pkts } = self.overflow {
            while over_limit(self.limit, self.backlog) {
                if self.drop_from_fattest(i, batch_pkts, now, fx) {
                    verdict = Verdict::Dropped(DropReason::Overflow);
                }
            }
        }
        verdict
    }

    pub fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet> {
        loop {
            let (i, from_new) = match (self.new_flows.front(), self.old_flows.front()) {
                (Some(&i), _) => (i as usize, true),
                (None, Some(&i)) => (i as usize, false),
                (None, None) => return None,
            };
            let fq = &mut self.queues[i];
            if fq.deficit_bytes <= 0 {
                fq.deficit_bytes += i64::from(self.quantum_bytes);
                fq.list = FlowList::Old;
                if from_new {
                    self.new_flows.pop_front();
                } else {
                    self.old_flows.pop_front();
                }
                self.old_flows.push_back(i as u32);
                continue;
            }
            let before = fq.queue.backlog();
            let got = self
                .aqm
                .dequeue(&mut fq.aqm, &mut self.stats.aqm, &mut fq.queue, now, fx, &mut self.rng);
            let after = fq.queue.backlog();
            self.backlog.pkts -= before.pkts - after.pkts;
            self.backlog.bytes -= before.bytes - after.bytes;
            match got {
                Some(pkt) => {
                    fq.deficit_bytes -= i64::from(pkt.size_bytes);
                    return Some(pkt);
                }
                None if from_new => {
                    // RFC 8290: an emptied new flow goes to the tail of old
                    // flows, so it cannot regain priority within the round.
                    self.new_flows.pop_front();
                    fq.list = FlowList::Old;
                    self.old_flows.push_back(i as u32);
                }
                None => {
                    self.old_flows.pop_front();
                    fq.list = FlowList::Inactive;
                }
            }
        }
    }

    pub fn next_timer(&self) -> Option<Time> {
        self.next_update
    }

    /// The periodic update of every queue's AQM state, busy or not.
    pub fn on_timer(&mut self, now: Time) {
        let Some(period) = self.aqm.update_period() else {
            return;
        };
        for fq in &mut self.queues {
            self.aqm.update(&mut fq.aqm, &fq.queue);
        }
        self.next_update = Some(now + period);
    }

    pub fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let max_flow_bytes = self.queues.iter().map(|fq| fq.queue.backlog().bytes).max().unwrap_or(0);
        out("flows_new", self.new_flows.len() as f64);
        out("flows_old", self.old_flows.len() as f64);
        out("backlog_max_flow_bytes", max_flow_bytes as f64);
        self.aqm
            .traced(&self.stats.aqm, &mut self.queues.iter().map(|fq| &fq.aqm), out);
        out("overflow_drops", self.stats.overflow_drops as f64);
    }
}

#[cfg(test)]
pub(crate) mod test {
    use super::*;
    use proptest::prelude::*;

    /// The scheduler's own bookkeeping, for every FQ discipline's
    /// conservation test: the total equals the sum of the flow queues, every
    /// non-empty queue is on a list, the lists hold each listed queue once,
    /// and a packet limit is never exceeded.
    pub(crate) fn check_books<A: FlowAqm>(q: &FlowQueueing<A>) -> Result<(), TestCaseError> {
        if let Limit::Packets(limit) = q.limit {
            prop_assert!(q.backlog().pkts <= limit);
        }
        let mut sum = Backlog::default();
        for (i, fq) in q.queues.iter().enumerate() {
            let b = fq.queue.backlog();
            sum.pkts += b.pkts;
            sum.bytes += b.bytes;
            let on_new = q.new_flows.iter().filter(|&&j| j as usize == i).count();
            let on_old = q.old_flows.iter().filter(|&&j| j as usize == i).count();
            let expected = match fq.list {
                FlowList::Inactive => (0, 0),
                FlowList::New => (1, 0),
                FlowList::Old => (0, 1),
            };
            prop_assert_eq!((on_new, on_old), expected);
            prop_assert!(b.pkts == 0 || fq.list != FlowList::Inactive);
        }
        prop_assert_eq!(sum, q.backlog());
        Ok(())
    }
}
