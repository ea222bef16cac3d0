//! FQ-CoDel, flow queueing with CoDel: T. Høiland-Jørgensen, P. McKenney,
//! D. Täht, J. Gettys and E. Dumazet, "The Flow Queue CoDel Packet Scheduler
//! and Active Queue Management Algorithm", RFC 8290, IETF, January 2018
//! (Section 4: enqueue, dequeue, parameters).
//!
//! Heads up: read RFC 8290 Section 4 and `codel.rs` (the per-flow control
//! law) before changing this file. The scheduler described here lives in
//! `fq.rs`, shared with `fq_pie.rs` and `fq_cobalt.rs`; its rules and
//! choices are stated here once.
//!
//! Packets are spread over `flows` queues by a keyed hash of their flow id.
//! Each queue has its own CoDel state ([`CodelState`]) and a byte `deficit`.
//! Active queues sit on one of two lists, new flows and old flows:
//!
//! - Enqueue: append the packet to its queue; a queue on neither list joins
//!   the tail of new flows with `deficit = quantum`. If the total then
//!   exceeds `limit`, drop from the head of the fattest queue (largest byte
//!   backlog) until at least half its bytes are gone or `drop_batch` packets
//!   have been dropped (reason `Overflow`).
//! - Dequeue (deficit round robin): take the head of new flows, or else of
//!   old flows. A queue with `deficit <= 0` gets `deficit += quantum` and
//!   moves to the tail of old flows. Otherwise CoDel dequeues from it; if
//!   nothing comes out, a queue from new flows moves to the tail of old
//!   flows and one from old flows leaves the lists; if a packet comes out,
//!   `deficit -= size` and it is returned. Repeat until a packet is returned
//!   or both lists are empty.
//!
//! A queue that empties while on old flows stays there until the scheduler
//! reaches it, so a packet arriving meanwhile gets no new-flow priority: only
//! flows that have been idle for a whole round count as new ("sparse").
//!
//! Parameters (scenario keys):
//! - `limit` (default 10240 packets): the hard limit on the sum of all
//!   queues; a byte limit plays the role of Linux's `memory_limit`.
//! - `flows` (default 1024): number of flow queues, 1 to 65536.
//! - `quantum` (default: the link MTU): bytes a queue may send per round,
//!   >= 1.
//! - `target` (5 ms), `interval` (100 ms), `ce_threshold` (none): CoDel's,
//!   applied per queue (see `codel.rs`); `maxpacket` is the link MTU.
//! - `ecn` (default true, as RFC 8290, Linux and ns-3): mark ECN-capable
//!   packets instead of dropping them.
//! - `drop_batch` (default 64, as Linux): most packets dropped per overflow.
//!
//! Choices between variants (each the default, there is no switch):
//! - The hash is a keyed 64-bit mixer over `pkt.flow` (aqmlab's flow id
//!   stands for the 5-tuple): the flow id xor key 0, the MurmurHash3 `fmix64`
//!   finaliser, xor key 1, `fmix64` again; the keys come from the seed by the
//!   same finaliser. The queue is `(hash * flows) >> 64` (multiply-high).
//!   Linux uses a perturbed Jenkins hash and ns-3 a perturbed flow hash:
//!   only the collision statistics matter.
//! - `quantum` defaults to the MTU, as ns-3; Linux adds the 14-byte Ethernet
//!   header (1514).
//! - A queue from new flows that yields nothing moves to old flows (RFC and
//!   ns-3); Linux removes it instead when old flows is empty.
//! - CoDel's "queue almost empty" guard counts the bytes of the flow's own
//!   queue, as ns-3, so each flow's CoDel depends on that flow alone; Linux
//!   counts the whole qdisc's backlog.
//! - Only the returned packet is charged to the deficit: CoDel's head drops
//!   are free (RFC, Linux, ns-3).
//! - The fattest queue is the one with the largest byte backlog, ties to the
//!   lowest index. A batch drops at least one packet, then stops once the
//!   dropped bytes reach `floor(backlog / 2)` or `drop_batch` packets. Batches
//!   repeat while the limit is still exceeded (only a byte limit can need
//!   more than one); Linux drops one batch per arrival. Linux also adds the
//!   batch to that flow's CoDel `count`; aqmlab does not (RFC 8290 does not
//!   ask for it).
//! - If the batch reaches the arrival itself (its queue was the fattest and
//!   is emptied), the verdict is `Dropped(Overflow)` and only the other
//!   victims go to `fx.discards`.
//! - CoDel state is kept when a queue goes inactive (as Linux), so the
//!   re-entry rule still applies when the flow comes back.

use crate::codel::{codel_dequeue, validate_law, CodelLaw, CodelState, CodelStats};
use crate::fifo::{Backlog, Fifo, Limit};
use crate::fq::{validate_scheduler, FlowAqm, FlowQueueing, Overflow};
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::{Duration, Time};
use crate::{Effects, LinkInfo, ParamError, QueueDisc, Verdict};

pub use crate::fq::{FlowList, MAX_FLOWS};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCodelParams {
    pub limit: Limit,
    pub flows: u32,
    /// `None`: the link MTU.
    pub quantum_bytes: Option<u32>,
    pub target: Duration,
    pub interval: Duration,
    pub ecn: bool,
    pub ce_threshold: Option<Duration>,
    pub drop_batch_pkts: u32,
}

impl Default for FqCodelParams {
    fn default() -> FqCodelParams {
        FqCodelParams {
            limit: Limit::Packets(10_240),
            flows: 1024,
            quantum_bytes: None,
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: true,
            ce_threshold: None,
            drop_batch_pkts: 64,
        }
    }
}

impl FqCodelParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        validate_scheduler(
            self.limit,
            self.flows,
            self.quantum_bytes,
            Overflow::Fattest {
                batch_pkts: self.drop_batch_pkts,
            },
        )?;
        validate_law(self.target, self.interval, self.ecn, self.ce_threshold)
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqCodelStats {
    /// What the per-flow control laws did, summed over flows.
    pub codel: CodelStats,
    /// Packets dropped by the overflow rule, arrivals included.
    pub overflow_drops: u64,
    /// Times a flow queue joined the new-flows list.
    pub new_flows: u64,
}

/// CoDel as the AQM of each flow queue: every decision at dequeue.
impl FlowAqm for CodelLaw {
    type State = CodelState;
    type Stats = CodelStats;

    fn new_state(&self) -> CodelState {
        CodelState::default()
    }

    fn dequeue(
        &self,
        s: &mut CodelState,
        stats: &mut CodelStats,
        queue: &mut Fifo,
        now: Time,
        fx: &mut Effects,
        _rng: &mut Rng,
    ) -> Option<Packet> {
        codel_dequeue(self, s, stats, queue, now, fx)
    }

    fn traced(
        &self,
        stats: &CodelStats,
        _states: &mut dyn Iterator<Item = &CodelState>,
        out: &mut dyn FnMut(&'static str, f64),
    ) {
        out("codel_drops", stats.head_drops as f64);
        out("codel_marks", (stats.ecn_marks + stats.ce_marks) as f64);
    }
}

/// The quantum in force: the one given, else the link MTU, which must then
/// be at least 1 byte.
pub(crate) fn resolve_quantum(quantum_bytes: Option<u32>, link: LinkInfo) -> Result<u32, ParamError> {
    let q = quantum_bytes.unwrap_or(link.mtu_bytes);
    if q == 0 {
        return Err(ParamError::new(
            "quantum",
            "defaults to the link MTU, which is 0 bytes: give quantum >= 1",
        ));
    }
    Ok(q)
}

#[derive(Clone, Debug)]
pub struct FqCodel {
    params: FqCodelParams,
    fq: FlowQueueing<CodelLaw>,
}

impl FqCodel {
    pub fn new(params: FqCodelParams, link: LinkInfo, seed: u64) -> Result<FqCodel, ParamError> {
        params.validate()?;
        let quantum_bytes = resolve_quantum(params.quantum_bytes, link)?;
        let law = CodelLaw {
            target: params.target,
            interval: params.interval,
            maxpacket_bytes: link.mtu_bytes,
            ecn: params.ecn,
            ce_threshold: params.ce_threshold,
        };
        let overflow = Overflow::Fattest {
            batch_pkts: params.drop_batch_pkts,
        };
        Ok(FqCodel {
            params,
            fq: FlowQueueing::new(law, params.limit, params.flows, quantum_bytes, overflow, seed),
        })
    }

    /// The parameters in force, with `quantum_bytes` resolved.
    pub fn effective(&self) -> FqCodelParams {
        FqCodelParams {
            quantum_bytes: Some(self.fq.quantum_bytes()),
            ..self.params
        }
    }

    /// The per-flow control law, with `maxpacket` resolved to the link MTU.
    pub fn law(&self) -> &CodelLaw {
        self.fq.aqm()
    }

    pub fn stats(&self) -> FqCodelStats {
        let s = self.fq.stats();
        FqCodelStats {
            codel: s.aqm,
            overflow_drops: s.overflow_drops,
            new_flows: s.new_flows,
        }
    }

    /// The queue (0..flows) that packets of `flow` go to.
    #[inline]
    pub fn flow_index(&self, flow: u32) -> usize {
        self.fq.flow_index(flow)
    }

    /// The list that `flow`'s queue is on.
    pub fn flow_list(&self, flow: u32) -> FlowList {
        self.fq.flow_list(flow)
    }

    /// What `flow`'s queue holds.
    pub fn flow_backlog(&self, flow: u32) -> Backlog {
        self.fq.flow_backlog(flow)
    }

    /// `flow`'s queue's deficit in bytes.
    pub fn flow_deficit_bytes(&self, flow: u32) -> i64 {
        self.fq.flow_deficit_bytes(flow)
    }

    /// `flow`'s queue's CoDel variables.
    pub fn flow_codel(&self, flow: u32) -> &CodelState {
        self.fq.flow_state(flow)
    }
}

impl QueueDisc for FqCodel {
    fn enqueue(&mut self, pkt: Packet, now: Time, fx: &mut Effects) -> Verdict {
        self.fq.enqueue(pkt, now, fx)
    }

    fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet> {
        self.fq.dequeue(now, fx)
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fq.backlog()
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.fq.traced(out)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::codel::{Codel, CodelParams};
    use crate::conservation::{Conserving, Tally};
    use crate::fq::test::check_books;
    use crate::packet::Ecn;
    use crate::DropReason;
    use proptest::prelude::*;

    // Constants

    const MTU: u32 = 1500;
    const LINK: LinkInfo = LinkInfo {
        rate_bps: 12_000_000,
        mtu_bytes: MTU,
    };
    const SEED: u64 = 7;
    /// Flow ids that land in distinct queues under SEED (checked by `fq`).
    const A: u32 = 1;
    const B: u32 = 2;
    const C: u32 = 3;

    // Helpers

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn pkt(flow: u32, id: u64, size_bytes: u32, ecn: Ecn, at: Time) -> Packet {
        Packet {
            id,
            flow,
            size_bytes,
            ecn,
            enqueued_at: at,
            ..Packet::default()
        }
    }

    #[track_caller]
    fn fq(params: FqCodelParams) -> FqCodel {
        let q = FqCodel::new(params, LINK, SEED).unwrap();
        let (a, b, c) = (q.flow_index(A), q.flow_index(B), q.flow_index(C));
        assert!(a != b && b != c && a != c, "flows A, B, C share a queue");
        q
    }

    fn fq_quantum(quantum_bytes: u32) -> FqCodel {
        fq(FqCodelParams {
            quantum_bytes: Some(quantum_bytes),
            ..FqCodelParams::default()
        })
    }

    fn fq_limit(limit: Limit) -> FqCodel {
        fq(FqCodelParams {
            limit,
            ..FqCodelParams::default()
        })
    }

    /// Offers one packet; returns the verdict and the ids discarded.
    #[track_caller]
    fn offer(q: &mut FqCodel, p: Packet) -> (Verdict, Vec<u64>) {
        let mut fx = Effects::default();
        let v = q.enqueue(p, p.enqueued_at, &mut fx);
        assert!(fx.discards.iter().all(|(_, r)| *r == DropReason::Overflow));
        (v, fx.discards.iter().map(|(p, _)| p.id).collect())
    }

    /// Enqueues `n` packets of `flow`, ids `first..first + n`, all accepted.
    #[track_caller]
    fn fill(q: &mut FqCodel, flow: u32, first: u64, n: u64, size_bytes: u32, at: Time) {
        for id in first..first + n {
            let got = offer(q, pkt(flow, id, size_bytes, Ecn::NotEct, at));
            assert_eq!(got, (Verdict::Enqueued, vec![]), "packet {id}");
        }
    }

    /// One dequeue: (flow, id) returned, and the ids head-dropped.
    #[track_caller]
    fn deq(q: &mut FqCodel, now: Time) -> (Option<(u32, u64)>, Vec<u64>) {
        let mut fx = Effects::default();
        let got = q.dequeue(now, &mut fx);
        assert!(fx.discards.iter().all(|(_, r)| *r == DropReason::Head));
        (
            got.map(|p| (p.flow, p.id)),
            fx.discards.iter().map(|(p, _)| p.id).collect(),
        )
    }

    /// Quantum 1500. B: 10 packets of 500 B (ids 0..10) at 0, served until
    /// it is on old flows: B0 (deficit 1000), B1 (500), B2 (0); then deficit
    /// <= 0 gives 1500 and old flows, B3 (1000). Then A: one 500 B packet
    /// (id 100) arrives and becomes a new flow.
    fn fq_b_old_a_new() -> FqCodel {
        let mut q = fq_quantum(1500);
        fill(&mut q, B, 0, 10, 500, Time::ZERO);
        for id in 0..4 {
            assert_eq!(deq(&mut q, Time::ZERO), (Some((B, id)), vec![]));
        }
        assert_eq!((q.flow_list(B), q.flow_deficit_bytes(B)), (FlowList::Old, 1000));
        fill(&mut q, A, 100, 1, 500, Time::ZERO);
        assert_eq!((q.flow_list(A), q.flow_deficit_bytes(A)), (FlowList::New, 1500));
        q
    }

    fn traced(q: &FqCodel) -> Vec<(&'static str, f64)> {
        let mut got = Vec::new();
        q.traced(&mut |k, v| got.push((k, v)));
        got
    }

    // Deficit round robin

    /// Quantum 1500; A sends 1000 B packets, B 300 B, 30 each queued at 0 (A
    /// first, so A heads new flows). Round 1: A 1500 -> A, A (deficit -500),
    /// then B 1500 -> 5 B (0). Each later round adds 1500 to a deficit <= 0:
    /// A has 1000 (1 packet, to 0), then 1500 (2 packets, to -500), ...; B
    /// always 1500 (5 packets). Bytes per round: A 2000, 1000, 2000, 1000;
    /// B 1500 each, so both get 6000 B over four rounds. Sojourn 0: no drops.
    #[test]
    fn test_two_backlogged_flows_dequeue_drr_byte_shares() {
        let mut q = fq_quantum(1500);
        fill(&mut q, A, 0, 30, 1000, Time::ZERO);
        fill(&mut q, B, 100, 30, 300, Time::ZERO);
        let mut runs: Vec<(u32, u32)> = Vec::new();
        for _ in 0..26 {
            let (got, dropped) = deq(&mut q, Time::ZERO);
            assert!(dropped.is_empty());
            let (flow, _) = got.unwrap();
            let size = if flow == A { 1000 } else { 300 };
            match runs.last_mut() {
                Some((f, bytes)) if *f == flow => *bytes += size,
                _ => runs.push((flow, size)),
            }
        }
        assert_eq!(
            runs,
            vec![
                (A, 2000),
                (B, 1500),
                (A, 1000),
                (B, 1500),
                (A, 2000),
                (B, 1500),
                (A, 1000),
                (B, 1500)
            ]
        );
        // A ended its last turn at 0 and was topped up to 1500 on the way to
        // B; B has just spent its 1500.
        assert_eq!((q.flow_deficit_bytes(A), q.flow_deficit_bytes(B)), (1500, 0));
    }

    // List transitions

    #[test]
    fn test_idle_first_packet_joins_new_flows() {
        let mut q = fq_quantum(1500);
        assert_eq!(q.flow_list(A), FlowList::Inactive);
        fill(&mut q, A, 0, 1, 500, Time::ZERO);
        assert_eq!((q.flow_list(A), q.flow_deficit_bytes(A)), (FlowList::New, 1500));
        assert_eq!(q.stats().new_flows, 1);
    }

    /// B on old flows with packets, A new: A's packet goes first.
    #[test]
    fn test_b_old_a_new_dequeue_serves_new_flow_first() {
        let mut q = fq_b_old_a_new();
        assert_eq!(deq(&mut q, Time::ZERO), (Some((A, 100)), vec![]));
        assert_eq!((q.flow_list(A), q.flow_deficit_bytes(A)), (FlowList::New, 1000));
    }

    /// After A's only packet, the next dequeue finds A (new) empty: A moves
    /// to the tail of old flows (RFC), and B (deficit 1000) sends B4.
    #[test]
    fn test_new_flow_empties_moves_to_old_flows() {
        let mut q = fq_b_old_a_new();
        deq(&mut q, Time::ZERO);
        assert_eq!(deq(&mut q, Time::ZERO), (Some((B, 4)), vec![]));
        assert_eq!(q.flow_list(A), FlowList::Old);
        assert_eq!(q.flow_deficit_bytes(B), 500);
    }

    /// A is on old flows with an empty queue; a packet arriving for it keeps
    /// it there (no new-flow priority). B5 (deficit 500 -> 0) goes next; then
    /// B gets 1500 and goes behind A, A (deficit 1000) sends its packet; at
    /// the next turn A is empty and, being old, leaves the lists.
    #[test]
    fn test_old_empty_flow_arrival_stays_old_then_leaves() {
        let mut q = fq_b_old_a_new();
        deq(&mut q, Time::ZERO);
        deq(&mut q, Time::ZERO);
        fill(&mut q, A, 101, 1, 500, Time::ZERO);
        assert_eq!(q.flow_list(A), FlowList::Old);
        assert_eq!(q.stats().new_flows, 2);
        assert_eq!(deq(&mut q, Time::ZERO), (Some((B, 5)), vec![]));
        assert_eq!(deq(&mut q, Time::ZERO), (Some((A, 101)), vec![]));
        assert_eq!(deq(&mut q, Time::ZERO), (Some((B, 6)), vec![]));
        assert_eq!(q.flow_list(A), FlowList::Inactive);
        fill(&mut q, A, 102, 1, 500, Time::ZERO);
        assert_eq!((q.flow_list(A), q.flow_deficit_bytes(A)), (FlowList::New, 1500));
    }

    #[test]
    fn test_empty_dequeue_returns_none_and_lists_drain() {
        let mut q = fq_quantum(1500);
        fill(&mut q, A, 0, 1, 500, Time::ZERO);
        assert_eq!(deq(&mut q, Time::ZERO), (Some((A, 0)), vec![]));
        // A new -> old (empty) -> removed, then nothing is left.
        assert_eq!(deq(&mut q, Time::ZERO), (None, vec![]));
        assert_eq!(q.flow_list(A), FlowList::Inactive);
        assert_eq!(traced(&q)[..2], [("flows_new", 0.0), ("flows_old", 0.0)]);
    }

    // Overflow

    /// Limit 10: A holds 6 x 1000 B, B 4 x 200 B; B's 200 B arrival makes 11.
    /// The fattest is A (6000 B): drop from its head until >= 3000 B are gone,
    /// i.e. A0, A1, A2. The arrival stays; 8 packets, 4000 B remain.
    #[test]
    fn test_full_arrival_drops_half_of_fattest_flow() {
        let mut q = fq_limit(Limit::Packets(10));
        fill(&mut q, A, 0, 6, 1000, Time::ZERO);
        fill(&mut q, B, 10, 4, 200, Time::ZERO);
        assert_eq!(
            offer(&mut q, pkt(B, 14, 200, Ecn::NotEct, Time::ZERO)),
            (Verdict::Enqueued, vec![0, 1, 2])
        );
        assert_eq!(q.backlog(), Backlog { pkts: 8, bytes: 4000 });
        assert_eq!(q.stats().overflow_drops, 3);
    }

    /// Limit 200: A holds 200 x 100 B; B's arrival overflows. Half of A is
    /// 10000 B = 100 packets, but a batch stops at 64: A0..A63 go.
    #[test]
    fn test_full_arrival_batch_capped_at_drop_batch() {
        let mut q = fq_limit(Limit::Packets(200));
        fill(&mut q, A, 0, 200, 100, Time::ZERO);
        let (v, dropped) = offer(&mut q, pkt(B, 1000, 100, Ecn::NotEct, Time::ZERO));
        assert_eq!(v, Verdict::Enqueued);
        assert_eq!(dropped, (0..64).collect::<Vec<u64>>());
        assert_eq!(q.backlog().pkts, 137);
    }

    /// Limit 4: A holds 3 x 1000 B, B 1 x 100 B; A's arrival (1000 B) makes A
    /// the fattest (4000 B): A0, A1 go (2000 B = half), the arrival stays.
    #[test]
    fn test_full_arrival_to_fattest_flow_drops_its_head() {
        let mut q = fq_limit(Limit::Packets(4));
        fill(&mut q, A, 0, 3, 1000, Time::ZERO);
        fill(&mut q, B, 10, 1, 100, Time::ZERO);
        assert_eq!(
            offer(&mut q, pkt(A, 3, 1000, Ecn::NotEct, Time::ZERO)),
            (Verdict::Enqueued, vec![0, 1])
        );
        assert_eq!(q.flow_backlog(A), Backlog { pkts: 2, bytes: 2000 });
    }

    /// Limit 2: A and B hold 100 B each; C's 1500 B arrival is the fattest
    /// queue on its own, so the batch drops the arrival itself.
    #[test]
    fn test_full_arrival_alone_in_fattest_flow_is_dropped() {
        let mut q = fq_limit(Limit::Packets(2));
        fill(&mut q, A, 0, 1, 100, Time::ZERO);
        fill(&mut q, B, 1, 1, 100, Time::ZERO);
        assert_eq!(
            offer(&mut q, pkt(C, 2, 1500, Ecn::NotEct, Time::ZERO)),
            (Verdict::Dropped(DropReason::Overflow), vec![])
        );
        assert_eq!(q.backlog(), Backlog { pkts: 2, bytes: 200 });
        assert_eq!(q.stats().overflow_drops, 1);
    }

    /// Byte limit 2600: A 2 x 700 B, B 2 x 600 B, C's arrival 1100 B gives
    /// 3700 B. Batch 1: A (1400 B) loses A0 (700 >= 700) -> 3000 B, still
    /// over; batch 2: B (1200 B, more than C's 1100 and A's 700) loses B0
    /// (600 >= 600) -> 2400 B.
    #[test]
    fn test_byte_limit_arrival_repeats_batches_until_under() {
        let mut q = fq_limit(Limit::Bytes(2600));
        fill(&mut q, A, 0, 2, 700, Time::ZERO);
        fill(&mut q, B, 10, 2, 600, Time::ZERO);
        assert_eq!(
            offer(&mut q, pkt(C, 20, 1100, Ecn::NotEct, Time::ZERO)),
            (Verdict::Enqueued, vec![0, 10])
        );
        assert_eq!(q.backlog(), Backlog { pkts: 3, bytes: 2400 });
    }

    // Per-flow CoDel

    /// A: two 1500 B packets arrive every ms from 0 to 599 ms, one dequeue
    /// every ms from 1 to 600 ms (arrivals first). B: one 100 B packet at
    /// 10.5 + 20 j ms (j = 0..29), each followed at once by a dequeue.
    /// A's head at the k-th ms dequeue arrived at floor((k - 1) / 2) ms:
    /// sojourn first reaches 5 ms at k = 8, so first_above_time = 108 ms and
    /// A's first head drop is at 108 ms. B is a new flow at each arrival and
    /// is served at once with sojourn 0: never dropped. A's drops are exactly
    /// those of a lone CoDel fed A's traffic: B does not touch A's CoDel.
    #[test]
    fn test_standing_flow_and_sparse_flow_codel_isolated() {
        let mut q = fq(FqCodelParams::default());
        let mut lone = Codel::new(
            CodelParams {
                limit: Limit::Packets(10_240),
                ecn: true,
                ..CodelParams::default()
            },
            LINK,
        )
        .unwrap();
        let (mut fq_drops, mut lone_drops) = (Vec::new(), Vec::new());
        let (mut fq_sent, mut lone_sent) = (Vec::new(), Vec::new());
        let mut b_sent = 0;
        let mut id = 0;
        for k in 0..=600u64 {
            let now = ms(k);
            if k >= 1 {
                let mut fx = Effects::default();
                let p = q.dequeue(now, &mut fx).unwrap();
                assert_eq!(p.flow, A);
                fq_sent.push(p.id);
                fq_drops.extend(fx.discards.iter().map(|(p, _)| (k, p.flow, p.id)));
                let mut fx = Effects::default();
                lone_sent.push(lone.dequeue(now, &mut fx).unwrap().id);
                lone_drops.extend(fx.discards.iter().map(|(p, _)| (k, p.flow, p.id)));
            }
            if k < 600 {
                for _ in 0..2 {
                    let p = pkt(A, id, MTU, Ecn::NotEct, now);
                    assert_eq!(q.enqueue(p, now, &mut Effects::default()), Verdict::Enqueued);
                    assert_eq!(lone.enqueue(p, now, &mut Effects::default()), Verdict::Enqueued);
                    id += 1;
                }
            }
            if k % 20 == 10 && k < 600 {
                let t = Time(now.nanos() + 500_000);
                offer(&mut q, pkt(B, 1_000_000 + k, 100, Ecn::NotEct, t));
                let mut fx = Effects::default();
                let p = q.dequeue(t, &mut fx).unwrap();
                assert_eq!((p.flow, p.enqueued_at, fx.discards.len()), (B, t, 0));
                b_sent += 1;
            }
        }
        assert_eq!(b_sent, 30);
        assert_eq!(fq_drops.first(), Some(&(108, A, 107)));
        assert_eq!(fq_drops, lone_drops);
        assert_eq!(fq_sent, lone_sent);
        assert_eq!(q.stats().codel.head_drops, lone.stats().head_drops);
        assert_eq!(q.flow_codel(A), lone.state());
    }

    /// ECN is on by default: an ECT standing queue is marked, not dropped.
    /// 20 ECT packets of 1500 B at 0; at 5 ms sojourn = target sets
    /// first_above_time = 105 ms; at 105 ms the head is marked and returned.
    #[test]
    fn test_default_ecn_standing_ect_flow_marked() {
        let mut q = fq(FqCodelParams::default());
        for id in 0..20 {
            offer(&mut q, pkt(A, id, MTU, Ecn::Ect0, Time::ZERO));
        }
        deq(&mut q, ms(5));
        let mut fx = Effects::default();
        let p = q.dequeue(ms(105), &mut fx).unwrap();
        assert_eq!((p.id, p.ecn, fx.marked), (1, Ecn::Ce, true));
        assert!(fx.discards.is_empty());
        assert_eq!(q.stats().codel.ecn_marks, 1);
        assert!(q.flow_codel(A).dropping);
    }

    // Hash, parameters, tracing

    #[test]
    fn test_hash_depends_on_seed_only() {
        let q1 = FqCodel::new(FqCodelParams::default(), LINK, SEED).unwrap();
        let q2 = FqCodel::new(FqCodelParams::default(), LINK, SEED).unwrap();
        let q3 = FqCodel::new(FqCodelParams::default(), LINK, SEED + 1).unwrap();
        let map = |q: &FqCodel| (0..64).map(|f| q.flow_index(f)).collect::<Vec<_>>();
        assert_eq!(map(&q1), map(&q2));
        assert_ne!(map(&q1), map(&q3));
        assert!(map(&q1).iter().all(|&i| i < 1024));
    }

    /// 1024 flow ids into 1024 queues: a uniform hash fills 1024 (1 - 1/e)
    /// ~ 647 queues on average (sd ~ 9). Pinned, so a change of mixer shows.
    #[test]
    fn test_hash_1024_flows_occupancy() {
        let q = FqCodel::new(FqCodelParams::default(), LINK, SEED).unwrap();
        let mut used = [false; 1024];
        for f in 0..1024 {
            used[q.flow_index(f)] = true;
        }
        assert_eq!(used.iter().filter(|&&u| u).count(), 648);
    }

    #[test]
    fn test_bad_params_rejected_by_name() {
        let d = FqCodelParams::default();
        let cases = [
            (FqCodelParams { flows: 0, ..d }, LINK, "flows"),
            (FqCodelParams { flows: 65_537, ..d }, LINK, "flows"),
            (
                FqCodelParams {
                    quantum_bytes: Some(0),
                    ..d
                },
                LINK,
                "quantum",
            ),
            (d, LinkInfo { mtu_bytes: 0, ..LINK }, "quantum"),
            (
                FqCodelParams {
                    drop_batch_pkts: 0,
                    ..d
                },
                LINK,
                "drop_batch",
            ),
            (
                FqCodelParams {
                    limit: Limit::Packets(0),
                    ..d
                },
                LINK,
                "limit",
            ),
            (
                FqCodelParams {
                    ecn: false,
                    ce_threshold: Some(Duration::from_millis(1)),
                    ..d
                },
                LINK,
                "ce_threshold",
            ),
        ];
        for (params, link, key) in cases {
            assert_eq!(FqCodel::new(params, link, SEED).unwrap_err().param, key);
        }
    }

    #[test]
    fn test_default_effective_resolves_quantum_to_mtu() {
        let q = FqCodel::new(FqCodelParams::default(), LINK, SEED).unwrap();
        let e = q.effective();
        assert_eq!(e.quantum_bytes, Some(MTU));
        assert_eq!(
            (e.limit, e.flows, e.drop_batch_pkts, e.ecn),
            (Limit::Packets(10_240), 1024, 64, true)
        );
        assert_eq!(q.law().maxpacket_bytes, MTU);
    }

    /// B on old flows with 6 x 500 B, A new with 1 x 500 B.
    #[test]
    fn test_b_old_a_new_traced() {
        let q = fq_b_old_a_new();
        assert_eq!(
            traced(&q),
            vec![
                ("flows_new", 1.0),
                ("flows_old", 1.0),
                ("backlog_max_flow_bytes", 3000.0),
                ("codel_drops", 0.0),
                ("codel_marks", 0.0),
                ("overflow_drops", 0.0),
            ]
        );
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for FqCodel {
        const FIFO: bool = false;

        fn configs() -> BoxedStrategy<FqCodel> {
            (any::<bool>(), 1u32..40, 1u32..8, 1u32..3000)
                .prop_map(|(ecn, limit, flows, quantum_bytes)| {
                    let params = FqCodelParams {
                        limit: Limit::Packets(limit),
                        flows,
                        quantum_bytes: Some(quantum_bytes),
                        ecn,
                        drop_batch_pkts: 4,
                        ..FqCodelParams::default()
                    };
                    FqCodel::new(params, LINK, SEED).unwrap()
                })
                .boxed()
        }

        /// The scheduler's books (`fq::test::check_books`).
        fn check_state(&self, _tally: &Tally) -> Result<(), TestCaseError> {
            check_books(&self.fq)
        }
    }
}
