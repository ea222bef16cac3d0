//! DualPI2: the DualQ Coupled AQM with a PI2 base controller.
//!
//! Sources: K. De Schepper, B. Briscoe (ed.) and G. White, "DualQ Coupled
//! AQMs for Low Latency, Low Loss, and Scalable Throughput (L4S)", RFC 9332
//! (Experimental), January 2023: §2 (the coupled structure and, in §2.1,
//! the coupling law), §4.2.2 and §4.2.3 (starvation of the C queue, L4S
//! ECN saturation) and Appendix A (DualPI2 as pseudo-code, with PI2 as its
//! base AQM and its default parameters); K. De Schepper, O. Bondarenko,
//! I.-J. Tsang and B. Briscoe, "PI2: A Linearized AQM for both Classic and
//! Scalable TCP", ACM CoNEXT 2016; K. De Schepper and B. Briscoe (ed.),
//! "The Explicit Congestion Notification (ECN) Protocol for Low Latency,
//! Low Loss, and Scalable Throughput (L4S)", RFC 9331, January 2023 (§5.1:
//! ECT(1) and CE go to the low-latency queue). The Linux qdisc
//! `net/sched/sch_dualpi2.c` (merged in 2025) is the implementation whose
//! defaults and choices are followed where the RFC leaves room; its facts
//! were read, not its code.
//!
//! Heads up: read RFC 9332 §2.1 and Appendix A first; `pie.rs` holds the
//! proportional-integral step ([`pi_step`]) this controller shares with PIE.
//!
//! # The algorithm
//!
//! Two FIFOs share one buffer (`limit`): the L queue holds packets whose
//! ECN field is ECT(1) or CE (RFC 9331 §5.1, [`classify`]), the C queue
//! everything else (Not-ECT and ECT(0)). Every `t_update` (the first one
//! `t_update` after construction at time 0), [`dualpi2_update`] moves the
//! base probability `p'` (RFC 9332 Appendix A.1):
//!
//! ```text
//! qdelay = max(qdelay_c, qdelay_l)      (or qdelay_c alone, see below)
//! p' = p' + alpha * (qdelay - target) + beta * (qdelay - qdelay_old)
//! p' = clamp(p', 0, 1)                  (clamp(p', 0, 1/k) without drop_overload)
//! qdelay_old = qdelay
//! ```
//!
//! where `qdelay_c`, `qdelay_l` are the sojourn times so far of the packets
//! at the heads of the two queues (0 for an empty queue). Unlike PIE there is
//! no auto-scaling table: squaring `p'` for Classic traffic is what makes
//! one set of gains fit the whole range of probabilities (the "square" of
//! PI2). The coupling (RFC 9332 §2.1):
//!
//! ```text
//! p_C  = p'^2             Classic drop or mark probability
//! p_CL = min(k * p', 1)   the coupled L probability
//! p_L  = max(p_CL, step)  step = 1 when the L packet's sojourn > step_thresh
//! ```
//!
//! Decisions are taken at dequeue ([`dualpi2_decide`], then [`step_hit`]),
//! as Linux does by default (RFC 9332 Appendix A also applies them at
//! dequeue). No packet is dropped or marked by the coupled probabilities
//! while less than two MTUs stay queued behind it (Linux; a queue that small
//! holds nobody back). A C packet is marked CE if ECN-capable, else dropped,
//! when the uniform draw `u` is below `p_C`; an L packet is marked when `u`
//! is below `p_CL`, and whatever the draw when it waited longer than
//! `step_thresh` (the native L4S AQM).
//!
//! Overload (RFC 9332 §4.2.3, Linux `drop_overload`): once `k * p' > 1`, `p_CL`
//! has saturated and ECN alone can no longer hold the L queue back. With
//! `drop_overload`, L packets are then dropped with `p_C` (the Classic
//! probability, as if they were Classic) and marked otherwise, and ECN-capable
//! C packets that draw a signal are dropped instead of marked. Without it,
//! `p'` is held at `1/k` so that `p_CL` stays at most 1, nothing is dropped
//! for overload, and the queues grow to `limit`.
//!
//! The scheduler (Linux's C-queue protection): weighted round robin by
//! bytes with a signed `credit`. The L queue is served when it holds
//! packets and either the C queue is empty or `credit <= 0`; otherwise the C
//! queue is served. Sending an L packet of `s` bytes while C waits adds
//! `wc * s` to the credit; sending a C packet while L waits subtracts
//! `wl * s` (`wl = 100 - wc`). The credit starts at, and returns to whenever
//! both queues are empty, `mtu * (wc - wl)`: negative by default, so L goes
//! first. In the long run the C queue gets at least `wc` percent of the
//! link while both are backlogged.
//!
//! # Parameters ([`DualPi2Params`])
//!
//! - `limit` (10000 packets, Linux): the hard limit on both queues together;
//!   an arrival that finds it reached is dropped as [`DropReason::Overflow`].
//! - `target` (15 ms, RFC 9332 Appendix A and Linux): the queueing delay the
//!   base PI controller holds. Positive.
//! - `t_update` (16 ms, RFC and Linux): period of the update. Positive.
//! - `alpha` (0.16 /s), `beta` (3.2 /s) (RFC and Linux; Linux stores them
//!   as 41/256 and 819/256): integral and proportional gains on `p'`,
//!   finite and non-negative. Linux says they give a 10 dB stability margin
//!   for RTTs up to 100 ms.
//! - `coupling_factor` `k` (2, RFC 9332 §2.1 and Linux): `p_CL = k * p'`.
//!   Finite and at least 1 (Linux takes integers from 1 to 255); 2 gives
//!   window parity between Reno-friendly and L4S flows of equal RTT.
//! - `step_thresh` (1 ms of sojourn time, Linux; or a count of packets
//!   in the L queue, `StepThresh::Packets`, as Linux's `step_thresh_pkts`):
//!   the native L4S AQM marks an L packet whose sojourn time (or the L
//!   queue length it leaves behind) is above this. A time must be
//!   positive; a packet count may be 0 (every L packet behind another).
//! - `min_qlen_step` (0, Linux): the step applies only to packets that
//!   found at least this many packets in the L queue on arrival; 0 applies
//!   it always.
//! - `c_protection` (10, Linux; 0 to 100): `wc`, the C queue's weight in
//!   percent in the scheduler.
//! - `drop_overload` (true, Linux and RFC 9332 §4.2.3): drop on overload
//!   as described above.
//! - `qdelay_of` (`Max`, Linux; or `Classic`, RFC 9332 Appendix A): which
//!   delay the PI controller acts on.
//!
//! ECN marking is always on: the L queue exists for ECN-capable traffic, and
//! ECT(0) packets in the C queue are marked with `p_C` as RFC 3168 asks
//! (Linux has no switch either).
//!
//! # Choices between variants
//!
//! - **Scheduler: Linux's WRR with C-queue protection**, not the RFC's
//!   time-shifted FIFO (Appendix A compares the two head packets' waits,
//!   the L queue's credited with a time shift). The WRR is what the
//!   kernel runs by default, so a scenario here behaves as a Linux testbed
//!   would; it needs no clock comparison per dequeue, and its guarantee
//!   (C never gets less than `wc`) is stated in bytes, which a reader can
//!   check from the counts.
//! - **PI input: `max(qdelay_c, qdelay_l)`** (Linux) by default; the RFC's
//!   pseudo-code uses the C queue's delay. The maximum also reacts when
//!   the L queue alone builds up (e.g. under unresponsive ECT(1) traffic);
//!   `qdelay_of = Classic` gives the RFC's choice.
//! - **Queue delay** is the sojourn so far of each queue's head packet at
//!   the update (Linux; the RFC's `time()` of a queue), not PIE's delay of
//!   the last packet dequeued.
//! - **Step at `sojourn > step_thresh`** (Linux's strict comparison); RFC
//!   9332 Appendix A describes a ramp, of which the step is the zero-width
//!   case.
//! - **One draw for `p_C`**: a packet is hit when `u < p'^2`. Linux and the
//!   RFC compare `p'` with two draws (their maximum, in the RFC), which has
//!   the same probability and spares a square in fixed point; here the
//!   square is cheap and one draw keeps the random stream simple.
//! - **No coupled signal below two MTUs queued** in both queues together
//!   (Linux's rule, like RED's `min_th`).
//! - **Overload at `k * p' > 1`** (Linux, strict). Drops on overload are
//!   reported as [`DropReason::Head`] like every drop at dequeue.
//! - Probabilities are `f64` (Linux's 32-bit fixed point is not emulated).
//!   Linux's `drop_early` (decide at enqueue) and GSO splitting are not
//!   offered.
//!
//! Traced: `p_prime` (p'), `p_c`, `p_cl`, `qdelay_c` and `qdelay_l` (s, as
//! measured at the last update), `credit` (the scheduler's, bytes times
//! percent).

use std::collections::VecDeque;

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::pie::{check_gain, pi_step};
use crate::rng::{self, Rng};
use crate::time::{Duration, Time};
use crate::{DropReason, Effects, LinkInfo, ParamError, QueueDisc, Verdict};

/// The weights of the scheduler are in percent: `wc + wl = 100`.
const MAX_WC: u8 = 100;

/// When the native L4S AQM marks.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum StepThresh {
    /// An L packet whose sojourn time is above this.
    Time(Duration),
    /// An L packet that leaves more than this many packets in the L queue.
    Packets(u32),
}

/// Which queueing delay the base PI controller acts on.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum QdelayOf {
    /// The larger of the two queues' delays (Linux).
    #[default]
    Max,
    /// The Classic queue's delay (RFC 9332 Appendix A).
    Classic,
}

/// One of the two queues.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lane {
    /// The low-latency queue: ECT(1) and CE.
    L,
    /// The Classic queue: Not-ECT and ECT(0).
    C,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2Params {
    pub limit: Limit,
    pub target: Duration,
    pub t_update: Duration,
    /// Integral gain, 1/s.
    pub alpha: f64,
    /// Proportional gain, 1/s.
    pub beta: f64,
    /// `k`.
    pub coupling_factor: f64,
    pub step_thresh: StepThresh,
    pub min_qlen_step: u32,
    /// `wc`, percent.
    pub c_protection: u8,
    pub drop_overload: bool,
    pub qdelay_of: QdelayOf,
}

impl Default for DualPi2Params {
    fn default() -> DualPi2Params {
        DualPi2Params {
            limit: Limit::Packets(10_000),
            target: Duration::from_millis(15),
            t_update: Duration::from_millis(16),
            alpha: 0.16,
            beta: 3.2,
            coupling_factor: 2.0,
            step_thresh: StepThresh::Time(Duration::from_millis(1)),
            min_qlen_step: 0,
            c_protection: 10,
            drop_overload: true,
            qdelay_of: QdelayOf::Max,
        }
    }
}

impl DualPi2Params {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        if self.target == Duration::ZERO {
            return Err(ParamError::new("target", "must be greater than 0 s (got 0)"));
        }
        if self.t_update == Duration::ZERO {
            return Err(ParamError::new("t_update", "must be greater than 0 s (got 0)"));
        }
        check_gain("alpha", self.alpha)?;
        check_gain("beta", self.beta)?;
        if !(self.coupling_factor.is_finite() && self.coupling_factor >= 1.0) {
            return Err(ParamError::new(
                "coupling_factor",
                format!("must be finite and at least 1 (got {})", self.coupling_factor),
            ));
        }
        if self.step_thresh == StepThresh::Time(Duration::ZERO) {
            return Err(ParamError::new("step_thresh", "must be greater than 0 s (got 0)"));
        }
        if self.c_protection > MAX_WC {
            return Err(ParamError::new(
                "c_protection",
                format!("must be in [0, 100] percent (got {})", self.c_protection),
            ));
        }
        Ok(())
    }

    /// `wl`, the L queue's weight in percent.
    fn wl(&self) -> i64 {
        i64::from(MAX_WC - self.c_protection)
    }

    /// The scheduler's starting credit: `mtu * (wc - wl)`.
    pub fn initial_credit(&self, mtu_bytes: u32) -> i64 {
        i64::from(mtu_bytes) * (i64::from(self.c_protection) - self.wl())
    }
}

/// What changes as packets pass and updates run. A fresh state has `p'`
/// 0, both delays 0 and the starting credit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DualPi2State {
    /// `p'`, the base probability of RFC 9332 §2.1.
    pub p_prime: f64,
    /// The delay the previous update acted on.
    pub qdelay_old: Duration,
    /// The C queue head's sojourn time at the last update.
    pub qdelay_c: Duration,
    /// The L queue head's sojourn time at the last update.
    pub qdelay_l: Duration,
    /// The scheduler's credit, bytes times percent (L is served while it is
    /// at most 0).
    pub credit: i64,
}

impl DualPi2State {
    pub fn new(params: &DualPi2Params, mtu_bytes: u32) -> DualPi2State {
        DualPi2State {
            p_prime: 0.0,
            qdelay_old: Duration::ZERO,
            qdelay_c: Duration::ZERO,
            qdelay_l: Duration::ZERO,
            credit: params.initial_credit(mtu_bytes),
        }
    }

    /// `p_C = p'^2` (RFC 9332 §2.1).
    pub fn p_c(&self) -> f64 {
        self.p_prime * self.p_prime
    }

    /// `p_CL = min(k * p', 1)` (RFC 9332 §2.1).
    pub fn p_cl(&self, p: &DualPi2Params) -> f64 {
        (p.coupling_factor * self.p_prime).min(1.0)
    }

    /// `k * p' > 1`: the coupled L probability has saturated.
    pub fn overloaded(&self, p: &DualPi2Params) -> bool {
        p.coupling_factor * self.p_prime > 1.0
    }
}

/// Counts of what the discipline did, by cause.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DualPi2Stats {
    pub packets_in_l: u64,
    pub packets_in_c: u64,
    /// L packets marked by the step.
    pub step_marks: u64,
    /// Packets marked by `p_CL` or `p_C`.
    pub coupled_marks: u64,
    /// Packets dropped by `p_C` (C packets, and L packets on overload).
    pub coupled_drops: u64,
}

/// What the coupled probabilities do to a packet leaving its queue.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DualPi2Action {
    Pass,
    /// Set CE.
    Mark,
    Drop,
}

/// RFC 9331 §5.1: ECT(1) and CE packets go to the L queue, the rest to C.
pub fn classify(ecn: Ecn) -> Lane {
    match ecn {
        Ecn::Ect1 | Ecn::Ce => Lane::L,
        Ecn::NotEct | Ecn::Ect0 => Lane::C,
    }
}

/// The periodic update of `p'` (RFC 9332 Appendix A.1), given each
/// queue's head sojourn time now.
pub fn dualpi2_update(p: &DualPi2Params, s: &mut DualPi2State, qdelay_c: Duration, qdelay_l: Duration) {
    let qdelay = match p.qdelay_of {
        QdelayOf::Max => qdelay_c.max(qdelay_l),
        QdelayOf::Classic => qdelay_c,
    };
    let p_prime = s.p_prime + pi_step(p.alpha, p.beta, qdelay, s.qdelay_old, p.target);
    // Without overload dropping, p_CL = k p' must not pass 1.
    let ceiling = if p.drop_overload { 1.0 } else { 1.0 / p.coupling_factor };
    s.p_prime = p_prime.clamp(0.0, ceiling);
    s.qdelay_old = qdelay;
    s.qdelay_c = qdelay_c;
    s.qdelay_l = qdelay_l;
}

/// The coupled decision for a packet of `lane` with codepoint `ecn` just
/// taken from its queue, `backlog_bytes` staying queued behind it, given the
/// uniform draw `u` in [0, 1).
pub fn dualpi2_decide(
    p: &DualPi2Params,
    s: &DualPi2State,
    lane: Lane,
    ecn: Ecn,
    backlog_bytes: u64,
    mtu_bytes: u32,
    u: f64,
) -> DualPi2Action {
    if backlog_bytes < 2 * u64::from(mtu_bytes) {
        return DualPi2Action::Pass;
    }
    let overloaded = s.overloaded(p);
    match lane {
        // RFC 9332 §4.2.3: once p_CL saturates, L packets meet the Classic
        // drop probability and are marked otherwise.
        Lane::L if overloaded => {
            if p.drop_overload && u < s.p_c() {
                DualPi2Action::Drop
            } else {
                DualPi2Action::Mark
            }
        }
        Lane::L if u < s.p_cl(p) => DualPi2Action::Mark,
        Lane::L => DualPi2Action::Pass,
        Lane::C if u < s.p_c() => {
            if ecn.is_ecn_capable() && !overloaded {
                DualPi2Action::Mark
            } else {
                DualPi2Action::Drop
            }
        }
        Lane::C => DualPi2Action::Pass,
    }
}

/// The native L4S AQM: whether an L packet that waited `sojourn` and
/// leaves `l_qlen_pkts` packets in the L queue is marked by the step.
pub fn step_hit(p: &DualPi2Params, sojourn: Duration, l_qlen_pkts: u32) -> bool {
    match p.step_thresh {
        StepThresh::Time(t) => sojourn > t,
        StepThresh::Packets(n) => l_qlen_pkts > n,
    }
}

/// The scheduler's choice between two queues holding `l_pkts` and `c_pkts`
/// packets, given the credit; `None` when both are empty.
pub fn wrr_pick(credit: i64, l_pkts: u32, c_pkts: u32) -> Option<Lane> {
    if l_pkts > 0 && (c_pkts == 0 || credit <= 0) {
        Some(Lane::L)
    } else if c_pkts > 0 {
        Some(Lane::C)
    } else {
        None
    }
}

#[derive(Clone, Debug)]
pub struct DualPi2 {
    params: DualPi2Params,
    state: DualPi2State,
    stats: DualPi2Stats,
    mtu_bytes: u32,
    next_update: Time,
    l: Fifo,
    /// Whether the step may mark each packet of `l`, in the same order
    /// (decided on arrival by `min_qlen_step`).
    l_apply_step: VecDeque<bool>,
    c: Fifo,
    rng: Rng,
}

impl DualPi2 {
    pub fn new(params: DualPi2Params, link: LinkInfo, seed: u64) -> Result<DualPi2, ParamError> {
        params.validate()?;
        Ok(DualPi2 {
            state: DualPi2State::new(&params, link.mtu_bytes),
            stats: DualPi2Stats::default(),
            mtu_bytes: link.mtu_bytes,
            next_update: Time::ZERO + params.t_update,
            params,
            l: Fifo::new(),
            l_apply_step: VecDeque::new(),
            c: Fifo::new(),
            rng: <Rng as rand::SeedableRng>::seed_from_u64(seed),
        })
    }

    /// The parameters in force (DualPI2 configures nothing automatically).
    pub fn effective(&self) -> DualPi2Params {
        self.params
    }

    pub fn state(&self) -> &DualPi2State {
        &self.state
    }

    pub fn stats(&self) -> &DualPi2Stats {
        &self.stats
    }

    /// Packets and bytes in the L and the C queue.
    pub fn lanes(&self) -> (Backlog, Backlog) {
        (self.l.backlog(), self.c.backlog())
    }

    fn head_sojourn(q: &Fifo, now: Time) -> Duration {
        q.front()
            .map_or(Duration::ZERO, |p| now.saturating_since(p.enqueued_at))
    }

    /// The dequeue with every coupled decision taking the draw `u`, for
    /// scripted tests.
    pub fn dequeue_with_draw(&mut self, now: Time, fx: &mut Effects, u: f64) -> Option<Packet> {
        self.dequeue_with(now, fx, Some(u))
    }

    /// The dequeue, each coupled decision drawing from the discipline's
    /// stream unless `scripted` gives the draw.
    fn dequeue_with(&mut self, now: Time, fx: &mut Effects, scripted: Option<f64>) -> Option<Packet> {
        loop {
            let Some(lane) = wrr_pick(self.state.credit, self.l.backlog().pkts, self.c.backlog().pkts) else {
                self.state.credit = self.params.initial_credit(self.mtu_bytes);
                return None;
            };
            let (mut pkt, apply_step, other_waits) = match lane {
                Lane::L => {
                    let pkt = self.l.pop_front().expect("the L queue holds packets");
                    let apply = self.l_apply_step.pop_front().expect("one flag per L packet");
                    (pkt, apply, !self.c.is_empty())
                }
                Lane::C => (
                    self.c.pop_front().expect("the C queue holds packets"),
                    false,
                    !self.l.is_empty(),
                ),
            };
            let staying = self.l.backlog().bytes + self.c.backlog().bytes;
            let u = scripted.unwrap_or_else(|| rng::uniform(&mut self.rng));
            match dualpi2_decide(&self.params, &self.state, lane, pkt.ecn, staying, self.mtu_bytes, u) {
                DualPi2Action::Drop => {
                    self.stats.coupled_drops += 1;
                    fx.discard(pkt, DropReason::Head);
                    continue;
                }
                DualPi2Action::Mark => {
                    pkt.ecn = Ecn::Ce;
                    fx.marked = true;
                    self.stats.coupled_marks += 1;
                }
                DualPi2Action::Pass => {}
            }
            if apply_step
                && step_hit(
                    &self.params,
                    now.saturating_since(pkt.enqueued_at),
                    self.l.backlog().pkts,
                )
            {
                pkt.ecn = Ecn::Ce;
                fx.marked = true;
                self.stats.step_marks += 1;
            }
            // Only a packet sent moves the credit (a dropped one is retried).
            if other_waits {
                let size = i64::from(pkt.size_bytes);
                self.state.credit += match lane {
                    Lane::L => i64::from(self.params.c_protection) * size,
                    Lane::C => -self.params.wl() * size,
                };
            }
            return Some(pkt);
        }
    }
}

impl QueueDisc for DualPi2 {
    fn enqueue(&mut self, pkt: Packet, _now: Time, _fx: &mut Effects) -> Verdict {
        if !self.params.limit.admits(self.backlog(), pkt.size_bytes) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        match classify(pkt.ecn) {
            Lane::L => {
                self.stats.packets_in_l += 1;
                self.l_apply_step
                    .push_back(self.l.backlog().pkts >= self.params.min_qlen_step);
                self.l.push_back(pkt);
            }
            Lane::C => {
                self.stats.packets_in_c += 1;
                self.c.push_back(pkt);
            }
        }
        Verdict::Enqueued
    }

    fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet> {
        self.dequeue_with(now, fx, None)
    }

    fn backlog(&self) -> Backlog {
        let (l, c) = (self.l.backlog(), self.c.backlog());
        Backlog {
            pkts: l.pkts + c.pkts,
            bytes: l.bytes + c.bytes,
        }
    }

    fn next_timer(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, now: Time) {
        let qdelay_c = Self::head_sojourn(&self.c, now);
        let qdelay_l = Self::head_sojourn(&self.l, now);
        dualpi2_update(&self.params, &mut self.state, qdelay_c, qdelay_l);
        self.next_update = now + self.params.t_update;
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let s = &self.state;
        out("p_prime", s.p_prime);
        out("p_c", s.p_c());
        out("p_cl", s.p_cl(&self.params));
        out("qdelay_c", s.qdelay_c.as_secs_f64());
        out("qdelay_l", s.qdelay_l.as_secs_f64());
        out("credit", s.credit as f64);
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Constants

    const MS: u64 = 1_000_000;
    const MTU: u32 = 1500;
    const LINK: LinkInfo = LinkInfo {
        rate_bps: 10_000_000,
        mtu_bytes: MTU,
    };
    /// Values are computed in double precision in another order than by
    /// hand; they agree to far better than this.
    const TOL: f64 = 1e-15;
    /// More than two MTUs stay queued: the coupled probabilities apply.
    const DEEP: u64 = 10 * MTU as u64;

    // Helpers

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn defaults() -> DualPi2Params {
        DualPi2Params::default()
    }

    fn pkt(id: u64, ecn: Ecn, enqueued_at: Time) -> Packet {
        Packet {
            id,
            size_bytes: MTU,
            ecn,
            enqueued_at,
            ..Packet::default()
        }
    }

    #[track_caller]
    fn assert_close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= TOL * want.abs().max(1e-3),
            "got {got:e}, want {want:e}"
        );
    }

    /// A state with base probability `p_prime`.
    fn dualpi2_at(p: &DualPi2Params, p_prime: f64) -> DualPi2State {
        DualPi2State {
            p_prime,
            ..DualPi2State::new(p, MTU)
        }
    }

    fn dualpi2(p: DualPi2Params) -> DualPi2 {
        DualPi2::new(p, LINK, 1).unwrap()
    }

    fn decide(p: &DualPi2Params, s: &DualPi2State, ecn: Ecn, u: f64) -> DualPi2Action {
        dualpi2_decide(p, s, classify(ecn), ecn, DEEP, MTU, u)
    }

    // The base PI controller

    #[test]
    fn test_fresh_update_from_given_delays() {
        // RFC 9332 Appendix A.1, alpha 0.16, beta 3.2, target 15
        // ms, p' = 0, qdelay_old = 0. Delays C 25 ms, L 5 ms; the maximum
        // (25 ms) drives: 0.16 * 0.010 + 3.2 * 0.025 = 0.0016 + 0.08.
        let p = defaults();
        let mut s = DualPi2State::new(&p, MTU);
        dualpi2_update(&p, &mut s, ms(25), ms(5));
        assert_close(s.p_prime, 0.0816);
        assert_eq!((s.qdelay_old, s.qdelay_c, s.qdelay_l), (ms(25), ms(25), ms(5)));
        // Next: C 20 ms, L empty. 0.16 * 0.005 + 3.2 * (0.020 - 0.025)
        // = 0.0008 - 0.016 = -0.0152, so p' = 0.0664.
        dualpi2_update(&p, &mut s, ms(20), Duration::ZERO);
        assert_close(s.p_prime, 0.0664);
        assert_eq!(s.qdelay_old, ms(20));
    }

    #[test]
    fn test_classic_delay_update_ignores_the_l_queue() {
        // RFC 9332 Appendix A drives PI2 by the C queue alone: C 5 ms, L 25
        // ms gives 0.16 * (0.005 - 0.015) + 3.2 * 0.005 = 0.0144.
        let p = DualPi2Params {
            qdelay_of: QdelayOf::Classic,
            ..defaults()
        };
        let mut s = DualPi2State::new(&p, MTU);
        dualpi2_update(&p, &mut s, ms(5), ms(25));
        assert_close(s.p_prime, 0.0144);
        assert_eq!(s.qdelay_old, ms(5));
    }

    #[test]
    fn test_empty_update_keeps_p_prime_at_zero() {
        // 0.16 * (0 - 0.015) = -0.0024 from p' = 0: clamped to 0.
        let p = defaults();
        let mut s = DualPi2State::new(&p, MTU);
        dualpi2_update(&p, &mut s, Duration::ZERO, Duration::ZERO);
        assert_eq!(s.p_prime, 0.0);
    }

    #[test]
    fn test_update_without_drop_overload_caps_p_prime_at_one_over_k() {
        // Linux without drop_overload: p' <= 1/k so that p_CL <= 1. From
        // 0.49 with 100 ms both times: + 0.16 * 0.085 = 0.5036, capped 0.5.
        let p = DualPi2Params {
            drop_overload: false,
            ..defaults()
        };
        let mut s = DualPi2State {
            qdelay_old: ms(100),
            ..dualpi2_at(&p, 0.49)
        };
        dualpi2_update(&p, &mut s, ms(100), Duration::ZERO);
        assert_eq!(s.p_prime, 0.5);
        // With it, the same step goes through.
        let p = defaults();
        let mut s = DualPi2State {
            qdelay_old: ms(100),
            ..dualpi2_at(&p, 0.49)
        };
        dualpi2_update(&p, &mut s, ms(100), Duration::ZERO);
        assert_close(s.p_prime, 0.5036);
    }

    #[test]
    fn test_timer_measures_the_head_sojourn_of_each_queue() {
        // A C packet queued at 0 has waited 16 ms at the first update (t =
        // t_update = 16 ms), the L queue is empty: 0.16 * 0.001 + 3.2 *
        // 0.016 = 0.00016 + 0.0512.
        let mut q = dualpi2(defaults());
        let mut fx = Effects::default();
        q.enqueue(pkt(1, Ecn::NotEct, Time::ZERO), Time::ZERO, &mut fx);
        assert_eq!(q.next_timer(), Some(Time(16 * MS)));
        q.on_timer(Time(16 * MS));
        assert_close(q.state().p_prime, 0.05136);
        assert_eq!((q.state().qdelay_c, q.state().qdelay_l), (ms(16), Duration::ZERO));
        assert_eq!(q.next_timer(), Some(Time(32 * MS)));
    }

    // The coupling

    #[test]
    fn test_coupling_values_for_a_given_p_prime() {
        // RFC 9332 §2.1: p_C = p'^2, p_CL = k p' (k = 2).
        let p = defaults();
        let s = dualpi2_at(&p, 0.3);
        assert_close(s.p_c(), 0.09);
        assert_close(s.p_cl(&p), 0.6);
        assert!(!s.overloaded(&p));
        // p' = 0.6: p_CL saturates at 1 (overload), p_C = 0.36.
        let s = dualpi2_at(&p, 0.6);
        assert_close(s.p_c(), 0.36);
        assert_eq!(s.p_cl(&p), 1.0);
        assert!(s.overloaded(&p));
    }

    #[test]
    fn test_coupled_decisions_below_overload() {
        // p' = 0.3: C meets p_C = 0.09, L meets p_CL = 0.6.
        let p = defaults();
        let s = dualpi2_at(&p, 0.3);
        assert_eq!(decide(&p, &s, Ecn::Ect0, 0.05), DualPi2Action::Mark);
        assert_eq!(decide(&p, &s, Ecn::NotEct, 0.05), DualPi2Action::Drop);
        assert_eq!(decide(&p, &s, Ecn::Ect0, 0.09), DualPi2Action::Pass);
        assert_eq!(decide(&p, &s, Ecn::Ect1, 0.5), DualPi2Action::Mark);
        assert_eq!(decide(&p, &s, Ecn::Ce, 0.5), DualPi2Action::Mark);
        assert_eq!(decide(&p, &s, Ecn::Ect1, 0.6), DualPi2Action::Pass);
    }

    #[test]
    fn test_fewer_than_two_mtus_queued_is_never_signalled() {
        // Linux: no coupled signal while less than 2 MTUs stay queued.
        let p = defaults();
        let s = dualpi2_at(&p, 1.0);
        let short = 2 * u64::from(MTU) - 1;
        let got = dualpi2_decide(&p, &s, Lane::C, Ecn::NotEct, short, MTU, 0.0);
        assert_eq!(got, DualPi2Action::Pass);
        let got = dualpi2_decide(&p, &s, Lane::C, Ecn::NotEct, short + 1, MTU, 0.0);
        assert_eq!(got, DualPi2Action::Drop);
    }

    #[test]
    fn test_overload_drops_l_with_p_c_and_ect_c_instead_of_marking() {
        // RFC 9332 §4.2.3 and Linux's drop_overload: p' = 0.6, k p' = 1.2 > 1.
        // L packets are dropped with p_C = 0.36 and marked otherwise; an
        // ECT(0) C packet that draws a signal is dropped, not marked.
        let p = defaults();
        let s = dualpi2_at(&p, 0.6);
        assert_eq!(decide(&p, &s, Ecn::Ect1, 0.3), DualPi2Action::Drop);
        assert_eq!(decide(&p, &s, Ecn::Ect1, 0.5), DualPi2Action::Mark);
        assert_eq!(decide(&p, &s, Ecn::Ect0, 0.3), DualPi2Action::Drop);
        assert_eq!(decide(&p, &s, Ecn::Ect0, 0.5), DualPi2Action::Pass);
        // Without drop_overload p' never passes 1/k; at 1/k exactly the L
        // queue is marked always and nothing is dropped for ECN.
        let p = DualPi2Params {
            drop_overload: false,
            ..defaults()
        };
        let s = dualpi2_at(&p, 0.5);
        assert!(!s.overloaded(&p));
        assert_eq!(decide(&p, &s, Ecn::Ect1, 0.99), DualPi2Action::Mark);
        assert_eq!(decide(&p, &s, Ecn::Ect0, 0.2), DualPi2Action::Mark);
    }

    #[test]
    fn test_overloaded_queue_discards_at_the_head() {
        let mut q = dualpi2(defaults());
        let mut fx = Effects::default();
        for id in 0..5 {
            q.enqueue(pkt(id, Ecn::Ect1, Time::ZERO), Time::ZERO, &mut fx);
        }
        q.state.p_prime = 0.6;
        // u = 0.3 < p_C = 0.36: every packet is dropped while 2 MTUs stay
        // behind it (ids 0, 1, 2); id 3 leaves one behind and passes
        // unmarked (it waited 0 s, below the step).
        let got = q.dequeue_with_draw(Time::ZERO, &mut fx, 0.3).unwrap();
        assert_eq!((got.id, got.ecn, fx.marked), (3, Ecn::Ect1, false));
        let dropped: Vec<_> = fx.discards.iter().map(|(p, r)| (p.id, *r)).collect();
        assert_eq!(
            dropped,
            vec![(0, DropReason::Head), (1, DropReason::Head), (2, DropReason::Head)]
        );
        assert_eq!(q.stats().coupled_drops, 3);
    }

    // The native L4S AQM

    #[test]
    fn test_step_marks_above_exactly_1ms_sojourn() {
        // Linux's step: mark when sojourn > step_thresh (1 ms). At exactly
        // 1 ms the packet passes; 1 ns later it is marked.
        let p = defaults();
        assert!(!step_hit(&p, ms(1), 0));
        assert!(step_hit(&p, ms(1) + Duration(1), 0));
        let mut q = dualpi2(p);
        let mut fx = Effects::default();
        q.enqueue(pkt(1, Ecn::Ect1, Time::ZERO), Time::ZERO, &mut fx);
        q.enqueue(pkt(2, Ecn::Ect1, Time::ZERO), Time::ZERO, &mut fx);
        let first = q.dequeue(Time(MS), &mut fx).unwrap();
        assert_eq!((first.id, first.ecn, fx.marked), (1, Ecn::Ect1, false));
        fx.clear();
        let second = q.dequeue(Time(MS + 1), &mut fx).unwrap();
        assert_eq!((second.id, second.ecn, fx.marked), (2, Ecn::Ce, true));
        assert_eq!(q.stats().step_marks, 1);
    }

    #[test]
    fn test_step_in_packets_and_min_qlen_step() {
        // Linux's packet form: mark when more than step_thresh packets stay
        // in the L queue. min_qlen_step 1 spares a packet that arrived to
        // an empty L queue.
        let p = DualPi2Params {
            step_thresh: StepThresh::Packets(1),
            min_qlen_step: 1,
            ..defaults()
        };
        assert!(!step_hit(&p, ms(100), 1));
        assert!(step_hit(&p, Duration::ZERO, 2));
        let mut q = dualpi2(p);
        let mut fx = Effects::default();
        for id in 0..4 {
            q.enqueue(pkt(id, Ecn::Ect1, Time::ZERO), Time::ZERO, &mut fx);
        }
        // id 0 found the queue empty (exempt), id 1 leaves 2 behind
        // (marked), id 2 leaves 1 (not), id 3 leaves 0 (not).
        let ecns: Vec<_> = (0..4).map(|_| q.dequeue(Time::ZERO, &mut fx).unwrap().ecn).collect();
        assert_eq!(ecns, vec![Ecn::Ect1, Ecn::Ce, Ecn::Ect1, Ecn::Ect1]);
    }

    #[test]
    fn test_c_queue_packets_never_meet_the_step() {
        let mut q = dualpi2(defaults());
        let mut fx = Effects::default();
        q.enqueue(pkt(1, Ecn::Ect0, Time::ZERO), Time::ZERO, &mut fx);
        let got = q.dequeue(Time(50 * MS), &mut fx).unwrap();
        assert_eq!((got.ecn, fx.marked), (Ecn::Ect0, false));
    }

    // Classification and scheduling

    #[test]
    fn test_classification_by_codepoint() {
        // RFC 9331 §5.1: ECT(1) and CE to L; Not-ECT and ECT(0) to C.
        assert_eq!(classify(Ecn::NotEct), Lane::C);
        assert_eq!(classify(Ecn::Ect0), Lane::C);
        assert_eq!(classify(Ecn::Ect1), Lane::L);
        assert_eq!(classify(Ecn::Ce), Lane::L);
        let mut q = dualpi2(defaults());
        let mut fx = Effects::default();
        for (id, ecn) in [Ecn::NotEct, Ecn::Ect0, Ecn::Ect1, Ecn::Ce].into_iter().enumerate() {
            assert_eq!(
                q.enqueue(pkt(id as u64, ecn, Time::ZERO), Time::ZERO, &mut fx),
                Verdict::Enqueued
            );
        }
        let (l, c) = q.lanes();
        assert_eq!((l.pkts, c.pkts), (2, 2));
        assert_eq!((q.stats().packets_in_l, q.stats().packets_in_c), (2, 2));
    }

    #[test]
    fn test_limit_counts_both_queues() {
        let p = DualPi2Params {
            limit: Limit::Packets(2),
            ..defaults()
        };
        let mut q = dualpi2(p);
        let mut fx = Effects::default();
        q.enqueue(pkt(1, Ecn::Ect1, Time::ZERO), Time::ZERO, &mut fx);
        q.enqueue(pkt(2, Ecn::NotEct, Time::ZERO), Time::ZERO, &mut fx);
        let v = q.enqueue(pkt(3, Ecn::Ect1, Time::ZERO), Time::ZERO, &mut fx);
        assert_eq!(v, Verdict::Dropped(DropReason::Overflow));
    }

    #[test]
    fn test_wrr_serves_nine_l_packets_per_c_packet() {
        // Linux's C-queue protection, wc = 10 %, wl = 90 %, MTU-sized
        // packets: the credit starts at 1500 * (10 - 90) = -120000; each L
        // packet sent while C waits adds 10 * 1500, each C packet sent while
        // L waits takes 90 * 1500. L goes while credit <= 0: at -120000,
        // ..., 0 (nine packets), then C (credit 15000 -> -120000), and so on.
        // 12 L and 3 C: nine L, one C, three L, then C alone.
        let mut q = dualpi2(defaults());
        let mut fx = Effects::default();
        for id in 0..12 {
            q.enqueue(pkt(id, Ecn::Ect1, Time::ZERO), Time::ZERO, &mut fx);
        }
        for id in 100..103 {
            q.enqueue(pkt(id, Ecn::NotEct, Time::ZERO), Time::ZERO, &mut fx);
        }
        let order: String = std::iter::from_fn(|| q.dequeue(Time::ZERO, &mut fx))
            .map(|p| if p.id < 100 { 'L' } else { 'C' })
            .collect();
        assert_eq!(order, "LLLLLLLLLCLLLCC");
        assert!(fx.discards.is_empty());
        // Both queues empty: the credit starts over.
        assert_eq!(q.state().credit, -120_000);
    }

    #[test]
    fn test_wrr_with_full_c_protection_serves_c_first() {
        // wc = 100: the credit starts at 1500 * 100 > 0, C goes first and
        // an L packet only when C is empty or the credit is spent.
        let p = DualPi2Params {
            c_protection: 100,
            ..defaults()
        };
        let mut q = dualpi2(p);
        let mut fx = Effects::default();
        q.enqueue(pkt(1, Ecn::Ect1, Time::ZERO), Time::ZERO, &mut fx);
        q.enqueue(pkt(2, Ecn::NotEct, Time::ZERO), Time::ZERO, &mut fx);
        assert_eq!(q.dequeue(Time::ZERO, &mut fx).unwrap().id, 2);
        assert_eq!(q.dequeue(Time::ZERO, &mut fx).unwrap().id, 1);
    }

    #[test]
    fn test_traced_names_the_coupled_probabilities() {
        let mut q = dualpi2(defaults());
        q.state.p_prime = 0.25;
        let mut seen = Vec::new();
        q.traced(&mut |name, v| seen.push((name, v)));
        let get = |n: &str| seen.iter().find(|(k, _)| *k == n).unwrap().1;
        assert_eq!((get("p_prime"), get("p_c"), get("p_cl")), (0.25, 0.0625, 0.5));
        assert_eq!((get("qdelay_c"), get("qdelay_l")), (0.0, 0.0));
    }

    // Validation

    #[test]
    fn test_validation_names_the_parameter() {
        let bad = |p: DualPi2Params| DualPi2::new(p, LINK, 1).unwrap_err().param;
        assert_eq!(
            bad(DualPi2Params {
                coupling_factor: 0.5,
                ..defaults()
            }),
            "coupling_factor"
        );
        assert_eq!(
            bad(DualPi2Params {
                c_protection: 101,
                ..defaults()
            }),
            "c_protection"
        );
        assert_eq!(
            bad(DualPi2Params {
                target: Duration::ZERO,
                ..defaults()
            }),
            "target"
        );
        assert_eq!(
            bad(DualPi2Params {
                alpha: -1.0,
                ..defaults()
            }),
            "alpha"
        );
        assert_eq!(
            bad(DualPi2Params {
                step_thresh: StepThresh::Time(Duration::ZERO),
                ..defaults()
            }),
            "step_thresh"
        );
    }

    // Conservation

    fn params() -> impl Strategy<Value = DualPi2Params> {
        (
            prop_oneof![
                (1u32..40).prop_map(Limit::Packets),
                (1000u64..40_000).prop_map(Limit::Bytes),
            ],
            any::<bool>(),
            prop_oneof![Just(QdelayOf::Max), Just(QdelayOf::Classic)],
            prop_oneof![
                Just(StepThresh::Time(Duration::from_millis(1))),
                (0u32..4).prop_map(StepThresh::Packets)
            ],
            0u8..=100,
            0u32..3,
        )
            .prop_map(
                |(limit, drop_overload, qdelay_of, step_thresh, c_protection, min_qlen_step)| DualPi2Params {
                    limit,
                    drop_overload,
                    qdelay_of,
                    step_thresh,
                    c_protection,
                    min_qlen_step,
                    // Gains large enough that the short traces reach
                    // overload.
                    alpha: 20.0,
                    beta: 50.0,
                    ..DualPi2Params::default()
                },
            )
    }

    impl Conserving for DualPi2 {
        const FIFO: bool = false;

        fn configs() -> BoxedStrategy<DualPi2> {
            (params(), any::<u64>())
                .prop_map(|(p, seed)| DualPi2::new(p, LINK, seed).unwrap())
                .boxed()
        }

        fn check_state(&self, _tally: &Tally) -> Result<(), TestCaseError> {
            let ceiling = if self.params.drop_overload {
                1.0
            } else {
                1.0 / self.params.coupling_factor
            };
            prop_assert!((0.0..=ceiling).contains(&self.state.p_prime));
            prop_assert_eq!(self.l.backlog().pkts as usize, self.l_apply_step.len());
            Ok(())
        }
    }
}
