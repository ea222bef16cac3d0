//! FQ-COBALT: COBALT (`cobalt.rs`) in each flow queue of FQ-CoDel's
//! scheduler (RFC 8290, Section 4): the flow isolation and per-flow AQM of
//! CAKE (T. Høiland-Jørgensen, D. Täht and J. Morton, "Piece of CAKE: A
//! Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN
//! 2018, its flow isolation and AQM sections; Linux `sch_cake.c`), without
//! the rest of CAKE: no shaper, no host isolation (flows only, no
//! triple-isolate), no diffserv tins, no ACK filter, no overhead
//! compensation, no set-associative hash. ns-3's `FqCobaltQueueDisc` is the same
//! composition with two differences, where this follows CAKE: on overflow
//! ns-3 drops up to 64 packets (half the bytes) from the fattest flow
//! without telling that flow's COBALT, and it gives every flow a
//! `blue_threshold` of 400 ms, so its per-flow BLUE rises only on long
//! sojourns, never on overflow.
//!
//! Heads up: the scheduler is `fq.rs` (rules and choices stated in
//! `fq_codel.rs`); the per-flow AQM and its choices are `cobalt.rs`'s.
//!
//! Parameters (scenario keys):
//! - `limit` (10240 packets, CAKE's and ns-3's default packet limit): hard
//!   limit on the sum of all queues. When an arrival takes the total over
//!   it, one packet is dropped from the head of the fattest queue (largest
//!   byte backlog), and that queue's COBALT is told its queue overflowed
//!   (`cobalt_queue_full`: BLUE's `p_drop` rises and CoDel enters its
//!   dropping state), repeated until under the limit (CAKE's `cake_drop`).
//! - `drop_batch` (1, as CAKE; >= 1): the most packets one overflow step
//!   drops from the fattest queue (FQ-CoDel's rule of at most half its
//!   bytes applies too); ns-3 uses FQ-CoDel's 64.
//! - `flows` (1024, CAKE's queues per tin and ns-3's default; 1 to 65536),
//!   `quantum` (the link MTU, as `fq_codel`; CAKE uses 1514 bytes when
//!   unshaped; >= 1 byte).
//! - `target` (5 ms), `interval` (100 ms), both > 0: COBALT's, per flow
//!   (CAKE's defaults for its 100 ms RTT setting; ns-3's too).
//! - `ecn` (true): CAKE marks ECN-capable packets always; ns-3's
//!   `FqCobaltQueueDisc` defaults to marking as well.
//! - `increment` (1/256), `decrement` (1/4096), in [0, 1]: BLUE's steps
//!   (CAKE, ns-3).
//! - `blue_threshold` (none, as CAKE): see `cobalt.rs`; ns-3's rule
//!   (400 ms there) is available by giving it.
//!
//! Choices between variants:
//! - An emptied queue leaves the lists as in FQ-CoDel (ns-3). CAKE keeps it
//!   on old flows ("decaying") until its COBALT state is at rest, so BLUE
//!   and CoDel keep decaying while the flow is idle; here a flow's state
//!   decays only when a dequeue finds its queue empty, and is kept (not
//!   reset) while the flow is inactive.
//! - CAKE's sparse-flow and bulk-flow counts and its host fairness are not
//!   modelled; the DRR rounds are FQ-CoDel's.
//!
//! Traced: the scheduler's `flows_new`, `flows_old`,
//! `backlog_max_flow_bytes`, then `p_drop_max` (the largest flow
//! probability), `codel_drops`, `codel_marks`, `blue_drops`, and
//! `overflow_drops`.

use crate::cobalt::{cobalt_dequeue, cobalt_queue_full, CobaltLaw, CobaltState, CobaltStats};
use crate::fifo::{Backlog, Fifo, Limit};
use crate::fq::{validate_scheduler, FlowAqm, FlowList, FlowQueueing, FqStats, Overflow};
use crate::fq_codel::resolve_quantum;
use crate::packet::Packet;
use crate::rng::Rng;
use crate::time::{Duration, Time};
use crate::{Effects, LinkInfo, ParamError, QueueDisc, Verdict};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqCobaltParams {
    pub limit: Limit,
    pub flows: u32,
    /// `None`: the link MTU.
    pub quantum_bytes: Option<u32>,
    pub drop_batch_pkts: u32,
    pub target: Duration,
    pub interval: Duration,
    pub ecn: bool,
    pub increment: f64,
    pub decrement: f64,
    pub blue_threshold: Option<Duration>,
}

impl Default for FqCobaltParams {
    fn default() -> FqCobaltParams {
        FqCobaltParams {
            limit: Limit::Packets(10_240),
            flows: 1024,
            quantum_bytes: None,
            drop_batch_pkts: 1,
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: true,
            increment: 1.0 / 256.0,
            decrement: 1.0 / 4096.0,
            blue_threshold: None,
        }
    }
}

impl FqCobaltParams {
    pub fn law(&self) -> CobaltLaw {
        CobaltLaw {
            target: self.target,
            interval: self.interval,
            ecn: self.ecn,
            increment: self.increment,
            decrement: self.decrement,
            blue_threshold: self.blue_threshold,
        }
    }

    fn overflow(&self) -> Overflow {
        Overflow::Fattest {
            batch_pkts: self.drop_batch_pkts,
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        validate_scheduler(self.limit, self.flows, self.quantum_bytes, self.overflow())?;
        self.law().validate()
    }
}

/// COBALT as the AQM of each flow queue: decisions at dequeue, BLUE told
/// of overflows and empty queues.
impl FlowAqm for CobaltLaw {
    type State = CobaltState;
    type Stats = CobaltStats;

    fn new_state(&self) -> CobaltState {
        CobaltState::default()
    }

    fn dequeue(
        &self,
        s: &mut CobaltState,
        stats: &mut CobaltStats,
        queue: &mut Fifo,
        now: Time,
        fx: &mut Effects,
        rng: &mut Rng,
    ) -> Option<Packet> {
        cobalt_dequeue(self, s, stats, queue, now, fx, rng)
    }

    fn on_overflow(&self, s: &mut CobaltState, now: Time) {
        cobalt_queue_full(self, s, now);
    }

    fn traced(
        &self,
        stats: &CobaltStats,
        states: &mut dyn Iterator<Item = &CobaltState>,
        out: &mut dyn FnMut(&'static str, f64),
    ) {
        out("p_drop_max", states.map(|s| s.p_drop).fold(0.0, f64::max));
        out("codel_drops", stats.codel_drops as f64);
        out("codel_marks", stats.codel_marks as f64);
        out("blue_drops", stats.blue_drops as f64);
    }
}

#[derive(Clone, Debug)]
pub struct FqCobalt {
    params: FqCobaltParams,
    fq: FlowQueueing<CobaltLaw>,
}

impl FqCobalt {
    pub fn new(params: FqCobaltParams, link: LinkInfo, seed: u64) -> Result<FqCobalt, ParamError> {
        params.validate()?;
        let quantum_bytes = resolve_quantum(params.quantum_bytes, link)?;
        Ok(FqCobalt {
            params,
            fq: FlowQueueing::new(
                params.law(),
                params.limit,
                params.flows,
                quantum_bytes,
                params.overflow(),
                seed,
            ),
        })
    }

    /// The parameters in force, with `quantum_bytes` resolved.
    pub fn effective(&self) -> FqCobaltParams {
        FqCobaltParams {
            quantum_bytes: Some(self.fq.quantum_bytes()),
            ..self.params
        }
    }

    pub fn stats(&self) -> &FqStats<CobaltStats> {
        self.fq.stats()
    }

    pub fn flow_index(&self, flow: u32) -> usize {
        self.fq.flow_index(flow)
    }

    pub fn flow_list(&self, flow: u32) -> FlowList {
        self.fq.flow_list(flow)
    }

    pub fn flow_backlog(&self, flow: u32) -> Backlog {
        self.fq.flow_backlog(flow)
    }

    /// `flow`'s queue's COBALT variables.
    pub fn flow_cobalt(&self, flow: u32) -> &CobaltState {
        self.fq.flow_state(flow)
    }
}

impl QueueDisc for FqCobalt {
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
    use crate::cobalt::{Cobalt, CobaltParams};
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
    /// Flow ids in distinct queues under SEED (checked by `fq_cobalt`).
    const A: u32 = 1;
    const B: u32 = 2;

    // Helpers

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn pkt(flow: u32, id: u64, size_bytes: u32, at: Time) -> Packet {
        Packet {
            id,
            flow,
            size_bytes,
            enqueued_at: at,
            ..Packet::default()
        }
    }

    #[track_caller]
    fn fq_cobalt(params: FqCobaltParams) -> FqCobalt {
        let q = FqCobalt::new(params, LINK, SEED).unwrap();
        assert_ne!(q.flow_index(A), q.flow_index(B), "flows A, B share a queue");
        q
    }

    fn offer(q: &mut FqCobalt, p: Packet, fx: &mut Effects) -> Verdict {
        q.enqueue(p, p.enqueued_at, fx)
    }

    // Overflow

    /// Limit 4: A holds 3 x 1000 B, B 1 x 100 B; B's 100 B arrival at 10 ms
    /// makes 5. One packet goes from the head of the fattest queue, A (A0),
    /// and A's COBALT is told: p_drop 1/256 (10 ms > target since its
    /// blue_timer 0), dropping, due now, count 1. B's state is untouched.
    #[test]
    fn test_full_arrival_drops_one_from_fattest_and_raises_its_p_drop() {
        let mut q = fq_cobalt(FqCobaltParams {
            limit: Limit::Packets(4),
            ..FqCobaltParams::default()
        });
        let mut fx = Effects::default();
        for id in 0..3 {
            offer(&mut q, pkt(A, id, 1000, ms(10)), &mut fx);
        }
        offer(&mut q, pkt(B, 10, 100, ms(10)), &mut fx);
        assert_eq!(offer(&mut q, pkt(B, 11, 100, ms(10)), &mut fx), Verdict::Enqueued);
        assert_eq!(
            fx.discards.iter().map(|(p, r)| (p.id, *r)).collect::<Vec<_>>(),
            vec![(0, DropReason::Overflow)]
        );
        let a = q.flow_cobalt(A);
        assert_eq!(
            (a.p_drop, a.blue_timer, a.dropping, a.drop_next, a.count),
            (1.0 / 256.0, ms(10), true, ms(10), 1)
        );
        assert_eq!(*q.flow_cobalt(B), CobaltState::default());
        assert_eq!(q.backlog(), Backlog { pkts: 4, bytes: 2200 });
    }

    // Per-flow COBALT

    /// A: one 1500 B packet every ms from 0 to 399 ms, one dequeue every ms
    /// from 1 to 400 ms (arrivals first), the standing queue growing; B: a
    /// 100 B packet at 10.5 + 20 j ms, served at once. A's drops are
    /// exactly those of a lone COBALT fed A's traffic with the same draws
    /// (BLUE stays 0, so no draw matters): B does not touch A's state.
    #[test]
    fn test_standing_flow_and_sparse_flow_cobalt_isolated() {
        let mut q = fq_cobalt(FqCobaltParams::default());
        let mut lone = Cobalt::new(
            CobaltParams {
                limit: Limit::Packets(10_240),
                ecn: true,
                blue_threshold: None,
                ..CobaltParams::default()
            },
            SEED,
        )
        .unwrap();
        let (mut fq_drops, mut lone_drops) = (Vec::new(), Vec::new());
        let mut id = 0;
        for k in 0..=400u64 {
            let now = ms(k);
            if k < 400 {
                for _ in 0..2 {
                    let p = pkt(A, id, MTU, now);
                    q.enqueue(p, now, &mut Effects::default());
                    lone.enqueue(p, now, &mut Effects::default());
                    id += 1;
                }
            }
            if k >= 1 {
                let mut fx = Effects::default();
                assert_eq!(q.dequeue(now, &mut fx).unwrap().flow, A);
                fq_drops.extend(fx.discards.iter().map(|(p, r)| (k, p.id, *r)));
                let mut fx = Effects::default();
                lone.dequeue(now, &mut fx).unwrap();
                lone_drops.extend(fx.discards.iter().map(|(p, r)| (k, p.id, *r)));
            }
            if k % 20 == 10 && k < 400 {
                let t = Time(now.nanos() + 500_000);
                offer(&mut q, pkt(B, 1_000_000 + k, 100, t), &mut Effects::default());
                let mut fx = Effects::default();
                let p = q.dequeue(t, &mut fx).unwrap();
                assert_eq!((p.flow, fx.discards.len()), (B, 0));
            }
        }
        assert!(!fq_drops.is_empty());
        assert_eq!(fq_drops, lone_drops);
        assert_eq!(q.flow_cobalt(A), lone.state());
        assert_eq!(q.flow_cobalt(B).count, 0);
    }

    /// ECN on by default: an ECT flow over target is marked, not dropped.
    #[test]
    fn test_default_ecn_standing_ect_flow_marked() {
        let mut q = fq_cobalt(FqCobaltParams::default());
        for id in 0..50 {
            let p = Packet {
                ecn: Ecn::Ect0,
                ..pkt(A, id, MTU, Time::ZERO)
            };
            offer(&mut q, p, &mut Effects::default());
        }
        let mut marked = 0;
        for k in 1..=50 {
            let mut fx = Effects::default();
            let p = q.dequeue(ms(10 * k), &mut fx).unwrap();
            assert!(fx.discards.is_empty());
            marked += u64::from(p.ecn == Ecn::Ce);
        }
        assert!(marked > 0);
        assert_eq!(q.stats().aqm.codel_marks, marked);
    }

    // Parameters

    #[test]
    fn test_default_effective_is_cake_like() {
        let e = FqCobalt::new(FqCobaltParams::default(), LINK, SEED)
            .unwrap()
            .effective();
        assert_eq!(
            (
                e.limit,
                e.flows,
                e.quantum_bytes,
                e.drop_batch_pkts,
                e.ecn,
                e.blue_threshold
            ),
            (Limit::Packets(10_240), 1024, Some(MTU), 1, true, None)
        );
        assert_eq!((e.increment, e.decrement), (1.0 / 256.0, 1.0 / 4096.0));
    }

    #[test]
    fn test_bad_params_rejected_by_name() {
        let d = FqCobaltParams::default();
        let cases = [
            (FqCobaltParams { flows: 0, ..d }, "flows"),
            (
                FqCobaltParams {
                    drop_batch_pkts: 0,
                    ..d
                },
                "drop_batch",
            ),
            (
                FqCobaltParams {
                    target: Duration::ZERO,
                    ..d
                },
                "target",
            ),
            (FqCobaltParams { increment: 2.0, ..d }, "increment"),
        ];
        for (params, key) in cases {
            assert_eq!(FqCobalt::new(params, LINK, SEED).unwrap_err().param, key);
        }
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for FqCobalt {
        const FIFO: bool = false;

        fn configs() -> BoxedStrategy<FqCobalt> {
            (
                any::<bool>(),
                any::<bool>(),
                1u32..40,
                1u32..8,
                1u32..3000,
                1u32..5,
                any::<u64>(),
            )
                .prop_map(|(ecn, bytes, limit, flows, quantum_bytes, batch, seed)| {
                    let params = FqCobaltParams {
                        limit: if bytes {
                            Limit::Bytes(u64::from(limit) * 1000)
                        } else {
                            Limit::Packets(limit)
                        },
                        flows,
                        quantum_bytes: Some(quantum_bytes),
                        drop_batch_pkts: batch,
                        ecn,
                        increment: 0.25,
                        ..FqCobaltParams::default()
                    };
                    FqCobalt::new(params, LINK, seed).unwrap()
                })
                .boxed()
        }

        fn check_state(&self, _tally: &Tally) -> Result<(), TestCaseError> {
            for fq in &self.fq.queues {
                prop_assert!((0.0..=1.0).contains(&fq.aqm.p_drop));
            }
            check_books(&self.fq)
        }
    }
}
