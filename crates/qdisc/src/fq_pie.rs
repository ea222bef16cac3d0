//! FQ-PIE, flow queueing with PIE: the scheduler of FQ-CoDel (RFC 8290,
//! Section 4.1-4.2) with RFC 8033's PIE (R. Pan, P. Natarajan, F. Baker and
//! G. White, "Proportional Integral Controller Enhanced (PIE)", RFC 8033,
//! IETF, February 2017, Sections 4.1-4.4 and 5.1, 5.4, 5.5) in each flow
//! queue, as Linux's `sch_fq_pie` (Tahiliani, Patil et al., Linux 5.6)
//! composes them; described by G. Ramakrishnan, M. Bhasi, V. Saicharan,
//! L. Monis, S. D. Patil and M. P. Tahiliani, "FQ-PIE Queue Discipline in
//! the Linux Kernel: Design, Implementation and Challenges", IEEE LCN
//! Workshops 2019.
//!
//! Heads up: the scheduler is `fq.rs` (its rules and choices are stated in
//! `fq_codel.rs`); the per-flow control law is `pie.rs`'s ([`pie_decide`],
//! [`pie_update`]) and every choice listed there applies per flow. Read both
//! before changing this file.
//!
//! Each flow queue has its own [`PieState`]. An arrival that the buffer has
//! room for is judged by its flow's PIE (drop probability, burst allowance,
//! safeguard against its flow's own backlog, de-randomisation) before it is
//! queued: PIE drops at enqueue, so nothing is dropped at dequeue. Every
//! `t_update` all flows' probabilities are updated from their own queueing
//! delay (the sojourn time of the flow's last dequeued packet, 0 while the
//! flow's queue is empty).
//!
//! Parameters (scenario keys; defaults are Linux's `fq_pie_init` and
//! `pie_params_init`):
//! - `limit` (10240 packets): hard limit on the sum of all queues. An
//!   arrival that finds it reached is dropped (reason `Overflow`) and clears
//!   its flow's `accu_prob`, as Linux.
//! - `flows` (1024): number of flow queues, 1 to 65536.
//! - `quantum` (the link MTU): bytes a queue may send per round, >= 1.
//! - `target` (15 ms): PIE's `qdelay_ref` per flow, > 0.
//! - `t_update` (15 ms): period of the per-flow probability update, > 0.
//! - `alpha` (0.125 /s = Linux's 2/16), `beta` (1.25 /s = Linux's 20/16):
//!   PIE's gains, finite and >= 0.
//! - `max_burst` (150 ms): the burst allowance of each flow.
//! - `ecn` (false) and `ecn_prob` (0.1, in [0, 1]): mark ECN-capable
//!   arrivals while their flow's `drop_prob <= ecn_prob` (Linux `ecn_prob`
//!   10 %, a percentage there).
//! - `byte_mode` (false): scale the probability by `size / mean_pktsize`.
//! - `derandomize` (true): RFC 8033 Section 5.4, which Linux's PIE always
//!   applies.
//! - `mean_pktsize` is not a key: it is the link MTU, which Linux uses for
//!   the safeguard (no early drop while the flow holds at most two of them)
//!   and for byte mode. With N backlogged flows sharing a link of rate C,
//!   that floor is a sojourn of about 2 N MTU / C: above `target` once N
//!   exceeds `target * C / (2 MTU)` (6.25: from 7 flows at 10 Mb/s with
//!   1500 B packets and the 15 ms target), after which the flows' delay
//!   sits at the floor rather than at `target`.
//! - One uniform draw is taken per arrival, before the limit check, as
//!   `pie` does.
//!
//! Choices between variants:
//! - Overflow drops the arrival, as Linux `fq_pie` does; RFC 8290's drop
//!   from the head of the fattest flow (`fq_codel`) is not used.
//! - Linux's `memory_limit` (32 MiB of socket-buffer memory) only counts an
//!   `overmemory` statistic and never drops, so it has no key here; a byte
//!   `limit` bounds memory instead.
//! - `quantum` defaults to the MTU as in `fq_codel` (Linux adds the 14-byte
//!   Ethernet header).
//! - The first update is `t_update` after time 0 (as `pie.rs`); Linux
//!   starts the timer after 500 ms. Every flow is updated at every tick
//!   (Linux walks at most 2048 flows per tick, all of them with 1024).
//! - From `pie.rs` (per flow): the probability update of RFC 8033 Section
//!   4.2 with auto-scaling and the cap-drop rule of Section 5.5 (Linux has
//!   both); the idle decay factor is Linux's `1 - 1/64`; the burst
//!   allowance falls by `t_update` per update; the safeguard uses
//!   `qdelay_old` (Linux: the current delay); no extra 2 % step above
//!   250 ms (Linux has it); queueing delay by timestamps only (Linux's
//!   `dq_rate_estimator` is off by default and not offered here).
//! - An emptied new flow moves to old flows (RFC 8290); Linux removes it
//!   when old flows is empty.
//!
//! Traced: the scheduler's `flows_new`, `flows_old`,
//! `backlog_max_flow_bytes`, then `drop_prob_max` (the largest flow
//! probability), `pie_drops`, `pie_marks`, and `overflow_drops`.

use crate::fifo::{Backlog, Fifo, Limit};
use crate::fq::{validate_scheduler, FlowAqm, FlowList, FlowQueueing, FqStats, Overflow};
use crate::fq_codel::resolve_quantum;
use crate::packet::{Ecn, Packet};
use crate::pie::{pie_decide, pie_update, DelayEstimator, PieAction, PieParams, PieState};
use crate::rng::Rng;
use crate::time::{Duration, Time};
use crate::{Effects, LinkInfo, ParamError, QueueDisc, Verdict};

/// Linux's idle decay of the drop probability, `1 - 1/64`.
const LINUX_IDLE_DECAY: f64 = 1.0 - 1.0 / 64.0;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqPieParams {
    pub limit: Limit,
    pub flows: u32,
    /// `None`: the link MTU.
    pub quantum_bytes: Option<u32>,
    pub target: Duration,
    pub t_update: Duration,
    /// Integral gain, 1/s.
    pub alpha: f64,
    /// Proportional gain, 1/s.
    pub beta: f64,
    pub max_burst: Duration,
    pub ecn: bool,
    pub ecn_prob: f64,
    pub byte_mode: bool,
    pub derandomize: bool,
}

impl Default for FqPieParams {
    fn default() -> FqPieParams {
        FqPieParams {
            limit: Limit::Packets(10_240),
            flows: 1024,
            quantum_bytes: None,
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 2.0 / 16.0,
            beta: 20.0 / 16.0,
            max_burst: Duration::from_millis(150),
            ecn: false,
            ecn_prob: 0.1,
            byte_mode: false,
            derandomize: true,
        }
    }
}

impl FqPieParams {
    /// The per-flow PIE these parameters give on a link of `mtu_bytes`:
    /// no limit of its own (the scheduler holds the limit).
    pub fn pie(&self, mtu_bytes: u32) -> PieParams {
        PieParams {
            limit: Limit::Unlimited,
            qdelay_ref: self.target,
            t_update: self.t_update,
            alpha: self.alpha,
            beta: self.beta,
            max_burst: self.max_burst,
            delay_estimator: DelayEstimator::Timestamp,
            mean_pktsize_bytes: mtu_bytes,
            derandomize: self.derandomize,
            cap_drop_adjustment: true,
            ecn: self.ecn,
            mark_ecn_threshold: self.ecn_prob,
            byte_mode: self.byte_mode,
            idle_decay_factor: LINUX_IDLE_DECAY,
            ..PieParams::default()
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        validate_scheduler(self.limit, self.flows, self.quantum_bytes, Overflow::Tail)?;
        let pie = self.pie(1500);
        pie.validate().map_err(|e| match e.param {
            "qdelay_ref" => ParamError::new("target", e.message),
            "mark_ecn_threshold" => ParamError::new("ecn_prob", e.message),
            _ => e,
        })
    }
}

/// PIE as the AQM of each flow queue: every decision at enqueue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FqPieLaw {
    pub pie: PieParams,
}

/// What the per-flow PIEs did, summed over flows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct FqPieAqmStats {
    /// Arrivals dropped by a flow's PIE (early or de-randomised).
    pub pie_drops: u64,
    /// Arrivals marked CE instead.
    pub pie_marks: u64,
}

impl FlowAqm for FqPieLaw {
    type State = PieState;
    type Stats = FqPieAqmStats;

    const ARRIVAL_DRAW: bool = true;

    fn new_state(&self) -> PieState {
        PieState::new(&self.pie)
    }

    fn admit(
        &self,
        s: &mut PieState,
        stats: &mut FqPieAqmStats,
        queue: &Fifo,
        pkt: &mut Packet,
        u: f64,
    ) -> Verdict {
        let ecn_capable = pkt.ecn != Ecn::NotEct;
        match pie_decide(&self.pie, s, queue.backlog(), pkt.size_bytes, ecn_capable, u) {
            PieAction::Enqueue => Verdict::Enqueued,
            PieAction::Mark => {
                pkt.ecn = Ecn::Ce;
                stats.pie_marks += 1;
                Verdict::Marked
            }
            PieAction::Drop(reason) => {
                stats.pie_drops += 1;
                Verdict::Dropped(reason)
            }
        }
    }

    fn dequeue(
        &self,
        s: &mut PieState,
        _stats: &mut FqPieAqmStats,
        queue: &mut Fifo,
        now: Time,
        _fx: &mut Effects,
        _rng: &mut Rng,
    ) -> Option<Packet> {
        let pkt = queue.pop_front()?;
        s.current_qdelay = now.saturating_since(pkt.enqueued_at);
        Some(pkt)
    }

    fn on_overflow(&self, s: &mut PieState, _now: Time) {
        s.accu_prob = 0.0;
    }

    fn update_period(&self) -> Option<Duration> {
        Some(self.pie.t_update)
    }

    /// RFC 8033 Section 4.3: the delay is the last sojourn time, and none
    /// while the queue is empty.
    fn update(&self, s: &mut PieState, queue: &Fifo) {
        let qdelay = if queue.is_empty() {
            Duration::ZERO
        } else {
            s.current_qdelay
        };
        pie_update(&self.pie, s, qdelay);
    }

    fn traced(
        &self,
        stats: &FqPieAqmStats,
        states: &mut dyn Iterator<Item = &PieState>,
        out: &mut dyn FnMut(&'static str, f64),
    ) {
        out("drop_prob_max", states.map(|s| s.drop_prob).fold(0.0, f64::max));
        out("pie_drops", stats.pie_drops as f64);
        out("pie_marks", stats.pie_marks as f64);
    }
}

#[derive(Clone, Debug)]
pub struct FqPie {
    params: FqPieParams,
    fq: FlowQueueing<FqPieLaw>,
}

impl FqPie {
    pub fn new(params: FqPieParams, link: LinkInfo, seed: u64) -> Result<FqPie, ParamError> {
        params.validate()?;
        let quantum_bytes = resolve_quantum(params.quantum_bytes, link)?;
        if link.mtu_bytes == 0 {
            return Err(ParamError::new(
                "quantum",
                "PIE's safeguard and byte mode use the link MTU, which is 0 bytes",
            ));
        }
        let law = FqPieLaw {
            pie: params.pie(link.mtu_bytes),
        };
        Ok(FqPie {
            params,
            fq: FlowQueueing::new(law, params.limit, params.flows, quantum_bytes, Overflow::Tail, seed),
        })
    }

    /// The parameters in force, with `quantum_bytes` resolved.
    pub fn effective(&self) -> FqPieParams {
        FqPieParams {
            quantum_bytes: Some(self.fq.quantum_bytes()),
            ..self.params
        }
    }

    /// The per-flow PIE parameters in force.
    pub fn law(&self) -> &PieParams {
        &self.fq.aqm().pie
    }

    pub fn stats(&self) -> &FqStats<FqPieAqmStats> {
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

    /// `flow`'s queue's PIE variables.
    pub fn flow_pie(&self, flow: u32) -> &PieState {
        self.fq.flow_state(flow)
    }
}

impl QueueDisc for FqPie {
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

    fn next_timer(&self) -> Option<Time> {
        self.fq.next_timer()
    }

    fn on_timer(&mut self, now: Time) {
        self.fq.on_timer(now)
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.fq.traced(out)
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use crate::fq::test::check_books;
    use crate::DropReason;
    use proptest::prelude::*;

    // Constants

    const MTU: u32 = 1500;
    const LINK: LinkInfo = LinkInfo {
        rate_bps: 12_000_000,
        mtu_bytes: MTU,
    };
    const SEED: u64 = 7;
    /// Flow ids in distinct queues under SEED (checked by `fq_pie`).
    const A: u32 = 1;
    const B: u32 = 2;
    /// Values are computed in double precision in another order than by
    /// hand; they agree to far better than this.
    const TOL: f64 = 1e-15;

    // Helpers

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn pkt(flow: u32, id: u64, ecn: Ecn, at: Time) -> Packet {
        Packet {
            id,
            flow,
            size_bytes: MTU,
            ecn,
            enqueued_at: at,
            ..Packet::default()
        }
    }

    #[track_caller]
    fn fq_pie(params: FqPieParams) -> FqPie {
        let q = FqPie::new(params, LINK, SEED).unwrap();
        assert_ne!(q.flow_index(A), q.flow_index(B), "flows A, B share a queue");
        q
    }

    fn offer(q: &mut FqPie, p: Packet) -> Verdict {
        q.enqueue(p, p.enqueued_at, &mut Effects::default())
    }

    /// `flow` congested: probability `drop_prob`, burst allowance spent,
    /// the last delays 20 ms (above `target / 2`: no safeguard).
    fn with_flow_congested(q: &mut FqPie, flow: u32, drop_prob: f64) {
        let i = q.flow_index(flow);
        let s = &mut q.fq.queues[i].aqm;
        *s = PieState {
            drop_prob,
            burst_allowance: Duration::ZERO,
            qdelay_old: Duration::from_millis(20),
            current_qdelay: Duration::from_millis(20),
            ..*s
        };
    }

    #[track_caller]
    fn assert_close(got: f64, want: f64) {
        assert!((got - want).abs() <= TOL * want.abs(), "got {got:e}, want {want:e}");
    }

    // Per-flow probability update

    /// A: 3 packets at 0; one dequeued at 25 ms (sojourn 25 ms), 2 left.
    /// The update at 15 ms saw A's queue with no departure yet (delay 0, p
    /// 0: both delays 0, decay of 0). At 30 ms, RFC 8033 Section 4.2 with
    /// qdelay 25 ms, qdelay_old 0, drop_prob 0 (scale 1/2048):
    /// (0.125 (0.025 - 0.015) + 1.25 (0.025 - 0)) / 2048
    /// = (0.00125 + 0.03125) / 2048 = 0.0325 / 2048 = 1.5869140625e-5.
    /// The burst allowance, granted again at 15 ms (queue calm, p 0), is
    /// spent by one t_update: 150 - 15 = 135 ms. B never had a packet: its
    /// probability stays 0.
    #[test]
    fn test_standing_flow_tupdate_raises_its_drop_prob_only() {
        let mut q = fq_pie(FqPieParams::default());
        for id in 0..3 {
            offer(&mut q, pkt(A, id, Ecn::NotEct, Time::ZERO));
        }
        assert_eq!(q.next_timer(), Some(ms(15)));
        q.on_timer(ms(15));
        assert_eq!(q.flow_pie(A).drop_prob, 0.0);
        let got = q.dequeue(ms(25), &mut Effects::default()).unwrap();
        assert_eq!(got.id, 0);
        q.on_timer(ms(30));
        assert_close(q.flow_pie(A).drop_prob, 0.0325 / 2048.0);
        assert_eq!(q.flow_pie(A).qdelay_old, Duration::from_millis(25));
        assert_eq!(q.flow_pie(A).burst_allowance, Duration::from_millis(135));
        assert_eq!(q.flow_pie(B).drop_prob, 0.0);
        assert_eq!(q.next_timer(), Some(ms(45)));
    }

    /// A flow whose queue is empty at the update decays by Linux's 63/64
    /// when its previous delay was 0 too: 0.5 -> 0.5 (1 - 1/64)
    /// = 0.4921875, after the step alpha (0 - 0.015) = -0.001875 (scale 1
    /// at p >= 0.1): (0.5 - 0.001875) * 63/64 = 0.490342...
    #[test]
    fn test_idle_flow_tupdate_decays_drop_prob() {
        let mut q = fq_pie(FqPieParams::default());
        let i = q.flow_index(A);
        q.fq.queues[i].aqm.drop_prob = 0.5;
        q.on_timer(ms(15));
        assert_close(q.flow_pie(A).drop_prob, (0.5 - 0.125 * 0.015) * (63.0 / 64.0));
    }

    // Arrivals

    /// Limit 3 packets: the fourth arrival is dropped whatever its flow
    /// (Linux's tail drop, not FQ-CoDel's fattest-flow drop), and clears its
    /// flow's accu_prob.
    #[test]
    fn test_full_arrival_tail_dropped() {
        let mut q = fq_pie(FqPieParams {
            limit: Limit::Packets(3),
            ..FqPieParams::default()
        });
        for id in 0..3 {
            assert_eq!(offer(&mut q, pkt(A, id, Ecn::NotEct, Time::ZERO)), Verdict::Enqueued);
        }
        let i = q.flow_index(B);
        q.fq.queues[i].aqm.accu_prob = 0.5;
        assert_eq!(
            offer(&mut q, pkt(B, 3, Ecn::NotEct, Time::ZERO)),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(q.flow_backlog(A).pkts, 3);
        assert_eq!(q.flow_list(B), FlowList::Inactive);
        assert_eq!(q.flow_pie(B).accu_prob, 0.0);
        assert_eq!(q.stats().overflow_drops, 1);
    }

    /// A congested at p = 1 (de-randomisation: accu_prob reaches 1 >= 0.85
    /// and a draw below 1 drops), with 3 MTUs queued so the safeguard's
    /// two-MTU floor is passed: its arrival is dropped early. B, with the
    /// fresh state and burst allowance of a new flow, is admitted.
    #[test]
    fn test_congested_flow_arrival_dropped_other_flow_admitted() {
        let mut q = fq_pie(FqPieParams::default());
        for id in 0..3 {
            offer(&mut q, pkt(A, id, Ecn::NotEct, Time::ZERO));
        }
        with_flow_congested(&mut q, A, 1.0);
        assert_eq!(
            offer(&mut q, pkt(A, 3, Ecn::NotEct, ms(1))),
            Verdict::Dropped(DropReason::Early)
        );
        assert_eq!(offer(&mut q, pkt(B, 4, Ecn::NotEct, ms(1))), Verdict::Enqueued);
        assert_eq!(q.stats().aqm.pie_drops, 1);
    }

    /// A congested at p = 1 (every draw in [0, 1) hits), ECT arrivals,
    /// `ecn` on: with `ecn_prob` 1 (p <= ecn_prob) the arrival is marked
    /// and queued; with the default 0.1 it is dropped (Linux marks only
    /// while the flow's p is at most ecn_prob).
    #[test]
    fn test_congested_ect_flow_marked_up_to_ecn_prob_then_dropped() {
        for (ecn_prob, want) in [(1.0, Verdict::Marked), (0.1, Verdict::Dropped(DropReason::Early))] {
            let mut q = fq_pie(FqPieParams {
                ecn: true,
                ecn_prob,
                ..FqPieParams::default()
            });
            for id in 0..3 {
                offer(&mut q, pkt(A, id, Ecn::Ect0, Time::ZERO));
            }
            with_flow_congested(&mut q, A, 1.0);
            assert_eq!(offer(&mut q, pkt(A, 3, Ecn::Ect0, ms(1))), want);
        }
    }

    // Parameters

    #[test]
    fn test_default_effective_is_linux_fq_pie() {
        let q = FqPie::new(FqPieParams::default(), LINK, SEED).unwrap();
        let e = q.effective();
        assert_eq!(
            (e.limit, e.flows, e.quantum_bytes, e.ecn, e.byte_mode, e.derandomize),
            (Limit::Packets(10_240), 1024, Some(MTU), false, false, true)
        );
        assert_eq!(
            (e.target, e.t_update),
            (Duration::from_millis(15), Duration::from_millis(15))
        );
        assert_eq!((e.alpha, e.beta, e.ecn_prob), (0.125, 1.25, 0.1));
        let law = q.law();
        assert_eq!((law.mean_pktsize_bytes, law.limit), (MTU, Limit::Unlimited));
        assert_eq!(law.idle_decay_factor, 0.984375);
    }

    #[test]
    fn test_bad_params_rejected_by_name() {
        let d = FqPieParams::default();
        let cases = [
            (FqPieParams { flows: 0, ..d }, "flows"),
            (
                FqPieParams {
                    quantum_bytes: Some(0),
                    ..d
                },
                "quantum",
            ),
            (
                FqPieParams {
                    target: Duration::ZERO,
                    ..d
                },
                "target",
            ),
            (
                FqPieParams {
                    t_update: Duration::ZERO,
                    ..d
                },
                "t_update",
            ),
            (FqPieParams { alpha: -1.0, ..d }, "alpha"),
            (FqPieParams { ecn_prob: 1.5, ..d }, "ecn_prob"),
            (
                FqPieParams {
                    limit: Limit::Packets(0),
                    ..d
                },
                "limit",
            ),
        ];
        for (params, key) in cases {
            assert_eq!(FqPie::new(params, LINK, SEED).unwrap_err().param, key);
        }
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for FqPie {
        const FIFO: bool = false;

        fn configs() -> BoxedStrategy<FqPie> {
            (
                any::<bool>(),
                any::<bool>(),
                1u32..40,
                1u32..8,
                1u32..3000,
                any::<u64>(),
            )
                .prop_map(|(ecn, bytes, limit, flows, quantum_bytes, seed)| {
                    let params = FqPieParams {
                        limit: if bytes {
                            Limit::Bytes(u64::from(limit) * 1000)
                        } else {
                            Limit::Packets(limit)
                        },
                        flows,
                        quantum_bytes: Some(quantum_bytes),
                        ecn,
                        max_burst: Duration::ZERO,
                        ..FqPieParams::default()
                    };
                    FqPie::new(params, LINK, seed).unwrap()
                })
                .boxed()
        }

        fn check_state(&self, _tally: &Tally) -> Result<(), TestCaseError> {
            for fq in &self.fq.queues {
                prop_assert!((0.0..=1.0).contains(&fq.aqm.drop_prob));
            }
            check_books(&self.fq)
        }
    }
}
