//! PIE: Proportional Integral controller Enhanced.
//!
//! Sources: R. Pan, P. Natarajan, C. Piglione, M. S. Prabhu, V. Subramanian,
//! F. Baker and B. VerSteeg, "PIE: A lightweight control scheme to address
//! the bufferbloat problem", IEEE HPSR 2013; and R. Pan, P. Natarajan,
//! F. Baker and G. White, "Proportional Integral Controller Enhanced (PIE): A
//! Lightweight Control Scheme to Address the Bufferbloat Problem", RFC 8033
//! (Experimental), February 2017. Implemented: §4.1 (random drop and the
//! safeguard), §4.2 (drop probability update and auto-scaling), §4.3
//! (latency by timestamps), §4.4 (burst tolerance), and the optional §5.1
//! (ECN), §5.2 (departure-rate estimation), §5.4 (de-randomisation) and §5.5
//! (cap drop adjustment). Not implemented: §5.3 (turning PIE on and off with
//! the buffer occupancy); PIE is active from the start.
//!
//! Heads up: the rules below follow RFC 8033 as the implementations written
//! from it read it (FreeBSD dummynet, Linux, ns-3), and the choices list
//! where they differ. Test vectors T18 and T19, computed from the formulas of
//! §4.2, are tests below.
//!
//! # The algorithm
//!
//! Every `t_update` (the first one `t_update` after construction at time 0;
//! [`QueueDisc::next_timer`] / [`QueueDisc::on_timer`]), [`pie_update`]
//! moves `drop_prob` by
//!
//! ```text
//! p = alpha * (qdelay - qdelay_ref) + beta * (qdelay - qdelay_old)     (§4.2)
//! p = p * pie_scale(drop_prob)          auto-scaling on the OLD drop_prob
//! p = min(p, 0.02) if drop_prob >= 0.1  cap drop adjustment (§5.5, optional)
//! drop_prob = drop_prob + p
//! drop_prob = drop_prob * idle_decay_factor  if qdelay == 0 and qdelay_old == 0
//! drop_prob = clamp(drop_prob, 0, 1)
//! ```
//!
//! where the scaling is 1/2048, 1/512, 1/128, 1/32, 1/8, 1/2, 1 for
//! `drop_prob` below 1e-6, 1e-5, 1e-4, 1e-3, 1e-2, 1e-1, and otherwise.
//! Delays enter in seconds, so `alpha` and `beta` are in 1/s.
//!
//! An arrival ([`pie_decide`]) is tail-dropped if the buffer is full;
//! otherwise it is queued without a draw while burst allowance remains
//! (§4.4) or while the safeguard holds (§4.1: `qdelay_old < qdelay_ref/2`
//! and `drop_prob < 0.2`, or at most `2 * mean_pktsize` bytes queued);
//! otherwise it is dropped when the uniform draw `u` in [0, 1) is below
//! `drop_prob` (times `size / mean_pktsize` in byte mode). With
//! `derandomize` (§5.4), `accu_prob` accumulates `drop_prob` over arrivals
//! (cleared while `drop_prob` is 0): below 0.85 the arrival is queued without
//! a draw, at 8.5 or more it is dropped without one.
//!
//! # Parameters ([`PieParams`], defaults from RFC 8033 unless stated)
//!
//! - `limit` (default 1000 packets, as Linux): hard buffer limit; arrivals
//!   that find it full are dropped as [`DropReason::Overflow`].
//! - `qdelay_ref` (15 ms; Linux `target`): the delay the controller holds
//!   the queue at. Positive.
//! - `t_update` (15 ms): period of the probability update. Positive. The RFC
//!   advises halving `alpha` and raising `beta` by `alpha/4` when it is
//!   halved; nothing here adjusts them.
//! - `alpha` (0.125 /s), `beta` (1.25 /s): integral and proportional gains,
//!   finite and non-negative.
//! - `max_burst` (150 ms): burst allowance granted at start and whenever the
//!   queue is calm again (below). Zero disables the allowance.
//! - `delay_estimator` (`"timestamp"`, or `"dequeue_rate"`): how `qdelay` is
//!   measured; see below.
//! - `dq_threshold_bytes` (16384, the RFC's DQ_THRESHOLD = 2^14): the
//!   departure-rate estimator's measurement size.
//! - `dq_rate_weight` (0.25): the estimator's EWMA weight, in (0, 1]; see
//!   below.
//! - `mean_pktsize_bytes` (1000, scenario key `mean_pktsize`): the RFC's
//!   MEAN_PKTSIZE, used by the safeguard and byte mode. 1000 B is ns-3's
//!   value; Linux uses the device MTU, which `mean_pktsize = 1500` matches on
//!   Ethernet. A fixed default keeps a scenario's behaviour independent of
//!   the link it is attached to.
//! - `derandomize` (false): §5.4 de-randomisation. Off by default because
//!   the RFC lists it as optional and ns-3 defaults it off; Linux always
//!   applies it.
//! - `cap_drop_adjustment` (true): §5.5. On by default because RFC 8033
//!   recommends it (ns-3 and FreeBSD default it on too).
//! - `ecn` (false), `mark_ecn_threshold` (0.1, in [0, 1]): §5.1. An
//!   ECN-capable arrival that draws a drop is marked CE and queued instead,
//!   while `drop_prob <= mark_ecn_threshold` (RFC and Linux `<=`; ns-3 and
//!   FreeBSD use `<`).
//! - `byte_mode` (false): scale the drop probability by
//!   `size / mean_pktsize` (Linux scales by `size / MTU`).
//! - `idle_decay_factor` (0.98, in [0, 1]): the factor applied when both the
//!   current and the old queueing delay are 0 (RFC). Linux and FreeBSD use
//!   `1 - 1/64 = 0.984375`, which the RFC says is close enough; set it to
//!   match them.
//!
//! # Choices where implementations differ
//!
//! - **Queueing delay by timestamps** (default; §4.3): `qdelay` is the
//!   sojourn time of the most recently dequeued packet, and 0 when the update
//!   finds the queue empty (FreeBSD; ns-3 also reads an empty queue as no
//!   delay). An empty queue holds nobody back, and the zero is what lets the
//!   idle decay and the burst-allowance reset happen.
//! - **Departure-rate estimation** (`delay_estimator = "dequeue_rate"`,
//!   §5.2): at the update, `qdelay = bytes queued / avg_dq_rate` (0 before
//!   the first measurement). A measurement starts at a dequeue that leaves at
//!   least `dq_threshold` bytes queued; the bytes of the packets dequeued
//!   after it are counted, and at the dequeue where the count reaches
//!   `dq_threshold` the sample `count / (now - start)` is taken, and a new
//!   measurement starts at once if the queue still holds `dq_threshold`
//!   bytes. Not counting the starting packet makes the sample exact for
//!   back-to-back packets of equal size (the interval holds as many
//!   transmissions as packets counted); Linux, whose order of operations this
//!   follows, counts it too and so overestimates the rate by one packet's
//!   worth (17/16 with 1000 B packets). Because the start needs
//!   `dq_threshold` bytes queued behind it, the queue cannot empty before the
//!   measurement ends, so no sample spans idle time. The first sample is
//!   taken as is, later ones enter `avg_dq_rate` with weight
//!   `dq_rate_weight`. Implementations disagree on the weight (Linux 1/8,
//!   ns-3 1/2, FreeBSD and DPDK 1/4) and the RFC's own value could not be
//!   verified. The default is 0.25 because FreeBSD and DPDK, the two
//!   implementations written from the RFC, both derive it from DQ_THRESHOLD
//!   as `DQ_THRESHOLD / 2^16`. FreeBSD averages the time taken to drain
//!   `dq_threshold` bytes; this averages the rate (bytes/s) as Linux and ns-3
//!   do, so that `avg_dq_rate` is traced in meaningful units.
//! - **Burst allowance** (§4.4, RFC semantics): `drop_prob` is still
//!   computed while allowance remains (ns-3 forces it to 0); the allowance
//!   falls by `t_update` per update (Linux: by the time between dequeues) and
//!   is reset to `max_burst` at an update that leaves `drop_prob == 0` with
//!   both this update's `qdelay` and the previous one (`qdelay_old` before it
//!   is overwritten) below `qdelay_ref/2` (FreeBSD makes this check at
//!   enqueue; Linux resets all its variables).
//! - **Safeguard** uses `qdelay_old` (RFC; Linux uses the current delay).
//! - **No extra step** when the delay exceeds 250 ms (Linux adds 2 % there;
//!   it is not in the RFC).
//! - **`accu_prob`** is cleared by every congestion signal on an arrival:
//!   tail drop, early drop and ECN mark (Linux and FreeBSD clear it on tail
//!   drops too; the RFC names only the early drop). The de-randomisation
//!   bound `accu_prob >= 8.5` drops without a draw and is reported as
//!   [`DropReason::Forced`]; draws that hit are [`DropReason::Early`]. Both
//!   become marks under the ECN rule.
//! - Probabilities are `f64` throughout (the Linux and FreeBSD fixed-point
//!   formats are not emulated).
//!
//! Traced: `drop_prob`, `qdelay` (s, the latest measurement), `qdelay_old`
//! (s), `burst_allowance` (s), `accu_prob`, and `avg_dq_rate` (bytes/s, only
//! with the departure-rate estimator).

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::rng::{self, Rng};
use crate::time::{Duration, Time};
use crate::{DropReason, Effects, ParamError, QueueDisc, Verdict};

/// §4.1 safeguard: no random drop while `drop_prob` is below this and the
/// old delay is below half the reference.
const SAFEGUARD_DROP_PROB: f64 = 0.2;
/// §5.4: below this accumulated probability an arrival is always queued.
const ACCU_PROB_LOW: f64 = 0.85;
/// §5.4: at or above this accumulated probability an arrival is dropped.
const ACCU_PROB_HIGH: f64 = 8.5;
/// §5.5: the largest step while `drop_prob >= CAP_DROP_FROM`.
const CAP_DROP_STEP: f64 = 0.02;
const CAP_DROP_FROM: f64 = 0.1;

/// How PIE measures the queueing delay it controls.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DelayEstimator {
    /// Sojourn time of the most recently dequeued packet (§4.3).
    #[default]
    Timestamp,
    /// Bytes queued divided by the estimated departure rate (§5.2).
    DequeueRate,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieParams {
    pub limit: Limit,
    pub qdelay_ref: Duration,
    pub t_update: Duration,
    /// Integral gain, 1/s.
    pub alpha: f64,
    /// Proportional gain, 1/s.
    pub beta: f64,
    pub max_burst: Duration,
    pub delay_estimator: DelayEstimator,
    pub dq_threshold_bytes: u64,
    pub dq_rate_weight: f64,
    pub mean_pktsize_bytes: u32,
    pub derandomize: bool,
    pub cap_drop_adjustment: bool,
    pub ecn: bool,
    pub mark_ecn_threshold: f64,
    pub byte_mode: bool,
    pub idle_decay_factor: f64,
}

impl Default for PieParams {
    fn default() -> PieParams {
        PieParams {
            limit: Limit::Packets(1000),
            qdelay_ref: Duration::from_millis(15),
            t_update: Duration::from_millis(15),
            alpha: 0.125,
            beta: 1.25,
            max_burst: Duration::from_millis(150),
            delay_estimator: DelayEstimator::Timestamp,
            dq_threshold_bytes: 16384,
            dq_rate_weight: 0.25,
            mean_pktsize_bytes: 1000,
            derandomize: false,
            cap_drop_adjustment: true,
            ecn: false,
            mark_ecn_threshold: 0.1,
            byte_mode: false,
            idle_decay_factor: 0.98,
        }
    }
}

pub(crate) fn check_gain(name: &'static str, value: f64) -> Result<(), ParamError> {
    if value.is_finite() && value >= 0.0 {
        Ok(())
    } else {
        Err(ParamError::new(
            name,
            format!("must be finite and non-negative (got {value})"),
        ))
    }
}

fn check_unit(name: &'static str, value: f64) -> Result<(), ParamError> {
    if (0.0..=1.0).contains(&value) {
        Ok(())
    } else {
        Err(ParamError::new(name, format!("must be in [0, 1] (got {value})")))
    }
}

impl PieParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        if self.qdelay_ref == Duration::ZERO {
            return Err(ParamError::new("qdelay_ref", "must be greater than 0 s (got 0)"));
        }
        if self.t_update == Duration::ZERO {
            return Err(ParamError::new("t_update", "must be greater than 0 s (got 0)"));
        }
        check_gain("alpha", self.alpha)?;
        check_gain("beta", self.beta)?;
        if self.dq_threshold_bytes == 0 {
            return Err(ParamError::new("dq_threshold", "must be at least 1 byte (got 0)"));
        }
        if !(self.dq_rate_weight > 0.0 && self.dq_rate_weight <= 1.0) {
            return Err(ParamError::new(
                "dq_rate_weight",
                format!("must be in (0, 1] (got {})", self.dq_rate_weight),
            ));
        }
        if self.mean_pktsize_bytes == 0 {
            return Err(ParamError::new("mean_pktsize", "must be at least 1 byte (got 0)"));
        }
        check_unit("mark_ecn_threshold", self.mark_ecn_threshold)?;
        check_unit("idle_decay_factor", self.idle_decay_factor)?;
        Ok(())
    }
}

/// What changes as packets pass and updates run. A fresh state has
/// `drop_prob` 0, both delays 0, `accu_prob` 0 and the full burst allowance.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PieState {
    pub drop_prob: f64,
    /// The latest delay measurement: in timestamp mode the last dequeued
    /// packet's sojourn time, in departure-rate mode the value of the last
    /// update. An update reads it as 0 when the queue is empty.
    pub current_qdelay: Duration,
    /// The delay used by the previous update.
    pub qdelay_old: Duration,
    pub burst_allowance: Duration,
    pub accu_prob: f64,
    /// Departure-rate estimation (§5.2): a measurement is under way.
    pub in_measurement: bool,
    pub measurement_start: Time,
    /// Bytes dequeued since `measurement_start`, the starting packet excluded.
    pub dq_count_bytes: u64,
    /// Estimated departure rate, bytes/s; 0 until the first measurement ends.
    pub avg_dq_rate: f64,
}

impl PieState {
    pub fn new(params: &PieParams) -> PieState {
        PieState {
            drop_prob: 0.0,
            current_qdelay: Duration::ZERO,
            qdelay_old: Duration::ZERO,
            burst_allowance: params.max_burst,
            accu_prob: 0.0,
            in_measurement: false,
            measurement_start: Time::ZERO,
            dq_count_bytes: 0,
            avg_dq_rate: 0.0,
        }
    }
}

/// What to do with an arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PieAction {
    Enqueue,
    /// Set CE and queue it.
    Mark,
    Drop(DropReason),
}

/// §4.2 auto-scaling: the factor applied to the step, chosen by the drop
/// probability before the update.
pub fn pie_scale(drop_prob: f64) -> f64 {
    if drop_prob < 0.000_001 {
        1.0 / 2048.0
    } else if drop_prob < 0.000_01 {
        1.0 / 512.0
    } else if drop_prob < 0.000_1 {
        1.0 / 128.0
    } else if drop_prob < 0.001 {
        1.0 / 32.0
    } else if drop_prob < 0.01 {
        1.0 / 8.0
    } else if drop_prob < 0.1 {
        1.0 / 2.0
    } else {
        1.0
    }
}

/// The proportional-integral step of §4.2, shared with DualPI2's base
/// controller (RFC 9332 Appendix A): `alpha * (qdelay - qdelay_ref) + beta *
/// (qdelay - qdelay_old)`, delays in seconds, gains in 1/s.
pub fn pi_step(alpha: f64, beta: f64, qdelay: Duration, qdelay_old: Duration, qdelay_ref: Duration) -> f64 {
    let qdelay = qdelay.as_secs_f64();
    let qdelay_old = qdelay_old.as_secs_f64();
    let qdelay_ref = qdelay_ref.as_secs_f64();
    alpha * (qdelay - qdelay_ref) + beta * (qdelay - qdelay_old)
}

/// Whether `d < qdelay_ref / 2`, without rounding the half.
#[inline]
fn below_half_ref(p: &PieParams, d: Duration) -> bool {
    (d.nanos() as u128) * 2 < p.qdelay_ref.nanos() as u128
}

/// The periodic update (§4.2, §4.4, §5.5), given the delay measured now.
pub fn pie_update(p: &PieParams, s: &mut PieState, current_qdelay: Duration) {
    let mut step = pi_step(p.alpha, p.beta, current_qdelay, s.qdelay_old, p.qdelay_ref);
    step *= pie_scale(s.drop_prob);
    // §5.5: once above 10 %, rise by at most 2 % per update.
    if p.cap_drop_adjustment && s.drop_prob >= CAP_DROP_FROM && step > CAP_DROP_STEP {
        step = CAP_DROP_STEP;
    }
    let mut drop_prob = s.drop_prob + step;
    // §4.2: decay while the queue stays empty.
    if current_qdelay == Duration::ZERO && s.qdelay_old == Duration::ZERO {
        drop_prob *= p.idle_decay_factor;
    }
    s.drop_prob = drop_prob.clamp(0.0, 1.0);

    // §4.4: spend the allowance; grant it again once the queue is calm.
    s.burst_allowance = Duration(s.burst_allowance.nanos().saturating_sub(p.t_update.nanos()));
    if s.drop_prob == 0.0 && below_half_ref(p, current_qdelay) && below_half_ref(p, s.qdelay_old) {
        s.burst_allowance = p.max_burst;
    }

    s.current_qdelay = current_qdelay;
    s.qdelay_old = current_qdelay;
}

/// §4.1, §4.4, §5.4: whether an arrival the buffer has room for is a
/// congestion signal, and which kind.
fn early_signal(p: &PieParams, s: &mut PieState, backlog_bytes: u64, size_bytes: u32, u: f64) -> Option<DropReason> {
    if s.burst_allowance > Duration::ZERO {
        return None;
    }
    let calm = below_half_ref(p, s.qdelay_old) && s.drop_prob < SAFEGUARD_DROP_PROB;
    if calm || backlog_bytes <= 2 * p.mean_pktsize_bytes as u64 {
        return None;
    }
    if p.derandomize {
        if s.drop_prob == 0.0 {
            s.accu_prob = 0.0;
        }
        s.accu_prob += s.drop_prob;
        if s.accu_prob < ACCU_PROB_LOW {
            return None;
        }
        if s.accu_prob >= ACCU_PROB_HIGH {
            return Some(DropReason::Forced);
        }
    }
    let prob = if p.byte_mode {
        s.drop_prob * size_bytes as f64 / p.mean_pktsize_bytes as f64
    } else {
        s.drop_prob
    };
    (u < prob).then_some(DropReason::Early)
}

/// The enqueue decision for an arrival of `size_bytes` that finds `backlog`
/// queued, given the uniform draw `u` in [0, 1).
pub fn pie_decide(
    p: &PieParams,
    s: &mut PieState,
    backlog: Backlog,
    size_bytes: u32,
    ecn_capable: bool,
    u: f64,
) -> PieAction {
    if !p.limit.admits(backlog, size_bytes) {
        s.accu_prob = 0.0;
        return PieAction::Drop(DropReason::Overflow);
    }
    let Some(reason) = early_signal(p, s, backlog.bytes, size_bytes, u) else {
        return PieAction::Enqueue;
    };
    s.accu_prob = 0.0;
    // §5.1: mark instead of dropping while the probability is low.
    if p.ecn && ecn_capable && s.drop_prob <= p.mark_ecn_threshold {
        PieAction::Mark
    } else {
        PieAction::Drop(reason)
    }
}

/// §5.2: accounts a dequeue of `size_bytes` at `now` that leaves
/// `backlog_bytes` queued.
pub fn pie_measure_departure(p: &PieParams, s: &mut PieState, now: Time, size_bytes: u32, backlog_bytes: u64) {
    if s.in_measurement {
        s.dq_count_bytes += size_bytes as u64;
        if s.dq_count_bytes >= p.dq_threshold_bytes {
            let elapsed = now.saturating_since(s.measurement_start);
            if elapsed > Duration::ZERO {
                let rate = s.dq_count_bytes as f64 / elapsed.as_secs_f64();
                s.avg_dq_rate = if s.avg_dq_rate == 0.0 {
                    rate
                } else {
                    (1.0 - p.dq_rate_weight) * s.avg_dq_rate + p.dq_rate_weight * rate
                };
            }
            s.in_measurement = false;
        }
    }
    if !s.in_measurement && backlog_bytes >= p.dq_threshold_bytes {
        s.in_measurement = true;
        s.measurement_start = now;
        s.dq_count_bytes = 0;
    }
}

#[derive(Clone, Debug)]
pub struct Pie {
    params: PieParams,
    state: PieState,
    next_update: Time,
    fifo: Fifo,
    rng: Rng,
}

impl Pie {
    pub fn new(params: PieParams, seed: u64) -> Result<Pie, ParamError> {
        params.validate()?;
        Ok(Pie {
            state: PieState::new(&params),
            next_update: Time::ZERO + params.t_update,
            params,
            fifo: Fifo::new(),
            rng: <Rng as rand::SeedableRng>::seed_from_u64(seed),
        })
    }

    /// The parameters in force (PIE configures nothing automatically).
    pub fn effective(&self) -> PieParams {
        self.params
    }

    pub fn state(&self) -> &PieState {
        &self.state
    }

    /// The enqueue rule with the uniform draw given, for scripted tests.
    pub fn enqueue_with_draw(&mut self, mut pkt: Packet, u: f64) -> Verdict {
        let ecn_capable = pkt.ecn.is_ecn_capable();
        match pie_decide(
            &self.params,
            &mut self.state,
            self.fifo.backlog(),
            pkt.size_bytes,
            ecn_capable,
            u,
        ) {
            PieAction::Enqueue => {
                self.fifo.push_back(pkt);
                Verdict::Enqueued
            }
            PieAction::Mark => {
                pkt.ecn = Ecn::Ce;
                self.fifo.push_back(pkt);
                Verdict::Marked
            }
            PieAction::Drop(reason) => Verdict::Dropped(reason),
        }
    }

    /// The delay the update at this moment controls.
    fn measured_qdelay(&self) -> Duration {
        if self.fifo.is_empty() {
            return Duration::ZERO;
        }
        match self.params.delay_estimator {
            DelayEstimator::Timestamp => self.state.current_qdelay,
            DelayEstimator::DequeueRate if self.state.avg_dq_rate > 0.0 => {
                Duration::from_secs_f64(self.fifo.backlog().bytes as f64 / self.state.avg_dq_rate)
            }
            DelayEstimator::DequeueRate => Duration::ZERO,
        }
    }
}

impl QueueDisc for Pie {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, _now: Time, _fx: &mut Effects) -> Verdict {
        let u = rng::uniform(&mut self.rng);
        self.enqueue_with_draw(pkt, u)
    }

    #[inline]
    fn dequeue(&mut self, now: Time, _fx: &mut Effects) -> Option<Packet> {
        let pkt = self.fifo.pop_front()?;
        match self.params.delay_estimator {
            DelayEstimator::Timestamp => {
                self.state.current_qdelay = now.saturating_since(pkt.enqueued_at);
            }
            DelayEstimator::DequeueRate => pie_measure_departure(
                &self.params,
                &mut self.state,
                now,
                pkt.size_bytes,
                self.fifo.backlog().bytes,
            ),
        }
        Some(pkt)
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    fn next_timer(&self) -> Option<Time> {
        Some(self.next_update)
    }

    fn on_timer(&mut self, now: Time) {
        let qdelay = self.measured_qdelay();
        pie_update(&self.params, &mut self.state, qdelay);
        self.next_update = now + self.params.t_update;
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let s = &self.state;
        out("drop_prob", s.drop_prob);
        out("qdelay", s.current_qdelay.as_secs_f64());
        out("qdelay_old", s.qdelay_old.as_secs_f64());
        out("burst_allowance", s.burst_allowance.as_secs_f64());
        out("accu_prob", s.accu_prob);
        if self.params.delay_estimator == DelayEstimator::DequeueRate {
            out("avg_dq_rate", s.avg_dq_rate);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Constants

    const MS: u64 = 1_000_000;
    /// Values are computed in double precision in a different order from
    /// the hand computation; they agree to far better than this.
    const TOL: f64 = 1e-15;

    // Helpers

    fn ms(n: u64) -> Duration {
        Duration::from_millis(n)
    }

    fn defaults() -> PieParams {
        PieParams::default()
    }

    fn pkt(id: u64, size_bytes: u32, ecn: Ecn, enqueued_at: Time) -> Packet {
        Packet {
            id,
            size_bytes,
            ecn,
            enqueued_at,
            ..Packet::default()
        }
    }

    /// `n` packets of 1000 B.
    fn backlog_pkts(n: u32) -> Backlog {
        Backlog {
            pkts: n,
            bytes: n as u64 * 1000,
        }
    }

    #[track_caller]
    fn assert_close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= TOL * want.abs().max(1e-3),
            "got {got:e}, want {want:e}"
        );
    }

    /// Burst allowance spent, the previous delay above `qdelay_ref/2`: the
    /// safeguard is off and a draw decides.
    fn pie_congested(p: &PieParams, drop_prob: f64) -> PieState {
        PieState {
            drop_prob,
            burst_allowance: Duration::ZERO,
            qdelay_old: ms(20),
            current_qdelay: ms(20),
            ..PieState::new(p)
        }
    }

    /// The T18 starting point: probability and delays 0, allowance spent.
    fn pie_t18_start(p: &PieParams) -> PieState {
        PieState {
            burst_allowance: Duration::ZERO,
            ..PieState::new(p)
        }
    }

    fn decide(p: &PieParams, s: &mut PieState, backlog: Backlog, ecn: bool, u: f64) -> PieAction {
        pie_decide(p, s, backlog, 1000, ecn, u)
    }

    fn pie(p: PieParams) -> Pie {
        Pie::new(p, 1).unwrap()
    }

    fn traced(q: &Pie) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        q.traced(&mut |name, v| out.push((name, v)));
        out
    }

    #[track_caller]
    fn traced_value(q: &Pie, name: &str) -> f64 {
        traced(q)
            .into_iter()
            .find(|(n, _)| *n == name)
            .unwrap_or_else(|| panic!("{name} not traced"))
            .1
    }

    // T18 and T19, computed from §4.2's update and auto-scaling

    /// T18 prob after updates 1..6 with qdelay 30 ms held, from 0:
    /// update 1: p = 0.125 (0.030 - 0.015) + 1.25 (0.030 - 0) = 0.039375,
    ///   scaled by 1/2048 (prob 0 < 1e-6) = 1.922607421875e-5;
    /// updates 2..6: p = 0.125 * 0.015 + 1.25 * 0 = 0.001875, scaled by 1/128
    ///   (prob in [1e-5, 1e-4)) = 1.46484375e-5 each.
    const T18: [f64; 6] = [
        1.922607421875e-5,
        3.387451171875e-5,
        4.852294921875e-5,
        6.317138671875e-5,
        7.781982421875e-5,
        9.246826171875e-5,
    ];

    #[test]
    fn test_t18_qdelay_30ms_held_updates_match_vector() {
        let p = defaults();
        let mut s = pie_t18_start(&p);
        for want in T18 {
            pie_update(&p, &mut s, ms(30));
            assert_close(s.drop_prob, want);
        }
        // The rounded value, as printed to 8 digits.
        assert!((s.drop_prob - 9.2468262e-5).abs() < 1e-12);
        assert_eq!(s.qdelay_old, ms(30));
    }

    #[test]
    fn test_t18_scripted_arrivals_and_dequeues_hold_qdelay_30ms() {
        // Packet k arrives at k ms and leaves at k + 30 ms, so from 30 ms on
        // every dequeue measures 30 ms and the queue is never empty. The
        // update at 15 ms sees no dequeue yet (qdelay 0): its step
        // 0.125 * (0 - 0.015) is negative, drop_prob stays 0 and qdelay_old
        // 0, which is T18's start; the updates at 30..105 ms are T18's 1..6.
        // The burst allowance (reset to 150 ms at 15 ms, then 135 ... 60 ms)
        // lets every arrival in, and does not stop drop_prob moving.
        let mut q = pie(defaults());
        let mut fx = Effects::default();
        let mut probs = Vec::new();
        for t in 0..=105u64 {
            let now = Time(t * MS);
            if t >= 30 {
                let out = q.dequeue(now, &mut fx).unwrap();
                assert_eq!(out.id, t - 30);
            }
            if q.next_timer() == Some(now) {
                q.on_timer(now);
                if t >= 30 {
                    probs.push(q.state().drop_prob);
                }
            }
            let v = q.enqueue_with_draw(pkt(t, 1000, Ecn::NotEct, now), 0.0);
            assert_eq!(v, Verdict::Enqueued);
        }
        assert_eq!(probs.len(), 6);
        for (got, want) in probs.into_iter().zip(T18) {
            assert_close(got, want);
        }
        assert_eq!(q.state().burst_allowance, ms(60));
        assert_eq!(q.next_timer(), Some(Time(120 * MS)));
    }

    #[test]
    fn test_t19_zero_delays_decay_by_098() {
        // alpha = 0 makes the step 0 (both delays 0): 0.01 * 0.98 = 0.0098.
        let p = PieParams {
            alpha: 0.0,
            ..defaults()
        };
        let mut s = PieState {
            drop_prob: 0.01,
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, Duration::ZERO);
        assert_close(s.drop_prob, 0.0098);
    }

    #[test]
    fn test_t19_linux_decay_factor_gives_00984375() {
        // 0.01 * (1 - 1/64) = 0.00984375.
        let p = PieParams {
            alpha: 0.0,
            idle_decay_factor: 1.0 - 1.0 / 64.0,
            ..defaults()
        };
        let mut s = PieState {
            drop_prob: 0.01,
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, Duration::ZERO);
        assert_close(s.drop_prob, 0.00984375);
    }

    #[test]
    fn test_zero_delays_default_gains_step_then_decay() {
        // p = 0.125 (0 - 0.015) = -0.001875, scaled 1/2 (0.01 is in [0.01,
        // 0.1)) = -0.0009375; 0.01 - 0.0009375 = 0.0090625; * 0.98 =
        // 0.00888125.
        let p = defaults();
        let mut s = PieState {
            drop_prob: 0.01,
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, Duration::ZERO);
        assert_close(s.drop_prob, 0.00888125);
    }

    #[test]
    fn test_zero_delay_after_nonzero_old_does_not_decay() {
        // alpha = beta = 0: no step; qdelay_old 10 ms, so no decay either.
        let p = PieParams {
            alpha: 0.0,
            beta: 0.0,
            ..defaults()
        };
        let mut s = PieState {
            drop_prob: 0.01,
            qdelay_old: ms(10),
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, Duration::ZERO);
        assert_eq!(s.drop_prob, 0.01);
    }

    // Auto-scaling

    #[test]
    fn test_scale_table_boundaries() {
        let below = |x: f64| f64::from_bits(x.to_bits() - 1);
        let table = [
            (0.0, 1.0 / 2048.0),
            (below(1e-6), 1.0 / 2048.0),
            (1e-6, 1.0 / 512.0),
            (below(1e-5), 1.0 / 512.0),
            (1e-5, 1.0 / 128.0),
            (below(1e-4), 1.0 / 128.0),
            (1e-4, 1.0 / 32.0),
            (below(1e-3), 1.0 / 32.0),
            (1e-3, 1.0 / 8.0),
            (below(1e-2), 1.0 / 8.0),
            (1e-2, 1.0 / 2.0),
            (below(0.1), 1.0 / 2.0),
            (0.1, 1.0),
            (1.0, 1.0),
        ];
        for (prob, want) in table {
            assert_eq!(pie_scale(prob), want, "drop_prob {prob:e}");
        }
    }

    #[test]
    fn test_update_scales_by_old_prob_not_new() {
        // drop_prob just below 1e-4 with a step of 0.001875 (qdelay 30 ms
        // held): scaled by 1/128 although the result, 1.1e-4, is above 1e-4.
        // 9.5e-5 + 0.001875/128 = 9.5e-5 + 1.46484375e-5 = 1.096484375e-4.
        let p = defaults();
        let mut s = PieState {
            drop_prob: 9.5e-5,
            qdelay_old: ms(30),
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, ms(30));
        assert_close(s.drop_prob, 1.096484375e-4);
    }

    // Cap drop adjustment

    /// prob, qdelay_old 0, qdelay 100 ms: p = 0.125 * 0.085 + 1.25 * 0.1 =
    /// 0.010625 + 0.125 = 0.135625.
    fn update_with_100ms_jump(cap: bool, drop_prob: f64) -> f64 {
        let p = PieParams {
            cap_drop_adjustment: cap,
            ..defaults()
        };
        let mut s = PieState {
            drop_prob,
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, ms(100));
        s.drop_prob
    }

    #[test]
    fn test_cap_drop_above_10pct_limits_rise_to_2pct() {
        // 0.1 + min(0.135625, 0.02) = 0.12.
        assert_close(update_with_100ms_jump(true, 0.1), 0.12);
    }

    #[test]
    fn test_cap_drop_off_takes_full_step() {
        // 0.1 + 0.135625 = 0.235625.
        assert_close(update_with_100ms_jump(false, 0.1), 0.235625);
    }

    #[test]
    fn test_cap_drop_below_10pct_not_applied() {
        // 0.09: scaled by 1/2 -> 0.0678125 > 0.02 but uncapped: 0.1578125.
        assert_close(update_with_100ms_jump(true, 0.09), 0.1578125);
    }

    #[test]
    fn test_cap_drop_does_not_limit_a_fall() {
        // prob 0.5, qdelay_old 100 ms, qdelay 0: p = 0.125 * -0.015 +
        // 1.25 * -0.1 = -0.126875; 0.5 - 0.126875 = 0.373125 (no decay: old
        // delay is not 0).
        let p = defaults();
        let mut s = PieState {
            drop_prob: 0.5,
            qdelay_old: ms(100),
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, Duration::ZERO);
        assert_close(s.drop_prob, 0.373125);
    }

    #[test]
    fn test_update_clamps_to_one() {
        // prob 0.99, cap off, qdelay 1 s from 0: p = 0.125 * 0.985 + 1.25 =
        // 1.373125 -> 2.363125, clamped to 1.
        let p = PieParams {
            cap_drop_adjustment: false,
            ..defaults()
        };
        let mut s = PieState {
            drop_prob: 0.99,
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, Duration::from_secs(1));
        assert_eq!(s.drop_prob, 1.0);
    }

    // Burst allowance

    #[test]
    fn test_fresh_allowance_falls_by_t_update_while_prob_still_rises() {
        // 150 ms of allowance: after one update 135 ms, and drop_prob moved
        // exactly as T18's first update; arrivals still bypass the draw.
        let p = defaults();
        let mut s = PieState::new(&p);
        assert_eq!(s.burst_allowance, ms(150));
        pie_update(&p, &mut s, ms(30));
        assert_eq!(s.burst_allowance, ms(135));
        assert_close(s.drop_prob, T18[0]);
        assert_eq!(decide(&p, &mut s, backlog_pkts(10), false, 0.0), PieAction::Enqueue);
    }

    #[test]
    fn test_allowance_spent_after_ten_updates_then_draw_decides() {
        // 150 ms / 15 ms = 10 updates at qdelay 30 ms; then u = 0 < drop_prob
        // (qdelay_old 30 ms >= 7.5 ms, 10 000 B queued: safeguard off).
        let p = defaults();
        let mut s = PieState::new(&p);
        for _ in 0..9 {
            pie_update(&p, &mut s, ms(30));
        }
        assert_eq!(s.burst_allowance, ms(15));
        assert_eq!(decide(&p, &mut s, backlog_pkts(10), false, 0.0), PieAction::Enqueue);
        pie_update(&p, &mut s, ms(30));
        assert_eq!(s.burst_allowance, Duration::ZERO);
        assert_eq!(
            decide(&p, &mut s, backlog_pkts(10), false, 0.0),
            PieAction::Drop(DropReason::Early)
        );
    }

    #[test]
    fn test_spent_allowance_reset_when_prob_zero_and_both_delays_low() {
        // qdelay_old 5 ms, qdelay 5 ms: p = 0.125 * -0.010 < 0, prob stays 0;
        // both below 7.5 ms: allowance back to 150 ms.
        let p = defaults();
        let mut s = PieState {
            qdelay_old: ms(5),
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, ms(5));
        assert_eq!(s.drop_prob, 0.0);
        assert_eq!(s.burst_allowance, ms(150));
    }

    #[test]
    fn test_spent_allowance_kept_at_zero_while_previous_delay_high() {
        // The check uses the previous update's delay (10 ms >= 7.5 ms), so the
        // first low update does not reset; the next one does.
        let p = defaults();
        let mut s = PieState {
            qdelay_old: ms(10),
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, Duration::ZERO);
        assert_eq!(s.drop_prob, 0.0);
        assert_eq!(s.burst_allowance, Duration::ZERO);
        pie_update(&p, &mut s, Duration::ZERO);
        assert_eq!(s.burst_allowance, ms(150));
    }

    #[test]
    fn test_spent_allowance_kept_at_zero_while_prob_positive() {
        // alpha = beta = 0 keeps drop_prob at 0.05 with both delays 1 ms.
        let p = PieParams {
            alpha: 0.0,
            beta: 0.0,
            ..defaults()
        };
        let mut s = PieState {
            drop_prob: 0.05,
            qdelay_old: ms(1),
            ..pie_t18_start(&p)
        };
        pie_update(&p, &mut s, ms(1));
        assert_eq!(s.burst_allowance, Duration::ZERO);
    }

    // Safeguard

    #[test]
    fn test_low_old_delay_and_prob_below_02_enqueues_without_draw() {
        let p = defaults();
        let mut s = PieState {
            qdelay_old: ms(5),
            ..pie_congested(&p, 0.19)
        };
        assert_eq!(decide(&p, &mut s, backlog_pkts(10), false, 0.0), PieAction::Enqueue);
    }

    #[test]
    fn test_low_old_delay_but_prob_02_draws() {
        let p = defaults();
        let mut s = PieState {
            qdelay_old: ms(5),
            ..pie_congested(&p, 0.2)
        };
        assert_eq!(
            decide(&p, &mut s, backlog_pkts(10), false, 0.19),
            PieAction::Drop(DropReason::Early)
        );
    }

    #[test]
    fn test_old_delay_at_half_ref_draws() {
        // 7.5 ms is not below 15 ms / 2.
        let p = defaults();
        let mut s = PieState {
            qdelay_old: Duration(7_500_000),
            ..pie_congested(&p, 0.1)
        };
        assert_eq!(
            decide(&p, &mut s, backlog_pkts(10), false, 0.05),
            PieAction::Drop(DropReason::Early)
        );
    }

    #[test]
    fn test_two_mean_packets_queued_enqueues_without_draw() {
        // 2 * mean_pktsize = 2000 B: at 2000 B the arrival is safe, at 2001 B
        // the draw (0 < 0.5) drops it.
        let p = defaults();
        let mut s = pie_congested(&p, 0.5);
        let at = |bytes| Backlog { pkts: 2, bytes };
        assert_eq!(decide(&p, &mut s, at(2000), false, 0.0), PieAction::Enqueue);
        assert_eq!(
            decide(&p, &mut s, at(2001), false, 0.0),
            PieAction::Drop(DropReason::Early)
        );
    }

    // Random drop, byte mode, limit

    #[test]
    fn test_draw_below_prob_drops_at_or_above_enqueues() {
        let p = defaults();
        let mut s = pie_congested(&p, 0.3);
        assert_eq!(
            decide(&p, &mut s, backlog_pkts(10), false, 0.299),
            PieAction::Drop(DropReason::Early)
        );
        assert_eq!(decide(&p, &mut s, backlog_pkts(10), false, 0.3), PieAction::Enqueue);
    }

    #[test]
    fn test_byte_mode_scales_prob_by_size_over_mean() {
        // 0.1 * 500 / 1000 = 0.05.
        let p = PieParams {
            byte_mode: true,
            ..defaults()
        };
        let mut s = pie_congested(&p, 0.1);
        let b = backlog_pkts(10);
        assert_eq!(
            pie_decide(&p, &mut s, b, 500, false, 0.049),
            PieAction::Drop(DropReason::Early)
        );
        assert_eq!(pie_decide(&p, &mut s, b, 500, false, 0.051), PieAction::Enqueue);
        // A 3000 B packet: 0.3.
        assert_eq!(
            pie_decide(&p, &mut s, b, 3000, false, 0.29),
            PieAction::Drop(DropReason::Early)
        );
    }

    #[test]
    fn test_full_buffer_overflows_and_clears_accu_prob() {
        let p = PieParams {
            limit: Limit::Packets(10),
            derandomize: true,
            ..defaults()
        };
        let mut s = PieState {
            accu_prob: 0.5,
            ..pie_congested(&p, 0.0)
        };
        assert_eq!(
            decide(&p, &mut s, backlog_pkts(10), false, 0.99),
            PieAction::Drop(DropReason::Overflow)
        );
        assert_eq!(s.accu_prob, 0.0);
    }

    // De-randomisation

    #[test]
    fn test_derandomize_below_085_enqueues_whatever_the_draw() {
        // prob 0.25: accu_prob 0.25, 0.5, 0.75 < 0.85 -> queued with u = 0;
        // the fourth arrival (1.0) draws: u = 0 < 0.25 drops, accu cleared.
        let p = PieParams {
            derandomize: true,
            ..defaults()
        };
        let mut s = pie_congested(&p, 0.25);
        for want in [0.25, 0.5, 0.75] {
            assert_eq!(decide(&p, &mut s, backlog_pkts(10), false, 0.0), PieAction::Enqueue);
            assert_eq!(s.accu_prob, want);
        }
        assert_eq!(
            decide(&p, &mut s, backlog_pkts(10), false, 0.0),
            PieAction::Drop(DropReason::Early)
        );
        assert_eq!(s.accu_prob, 0.0);
    }

    #[test]
    fn test_derandomize_at_85_drops_whatever_the_draw() {
        // prob 0.25 and draws 0.99 that never hit: accu_prob reaches
        // 33 * 0.25 = 8.25 (queued), then 34 * 0.25 = 8.5 -> Forced drop.
        let p = PieParams {
            derandomize: true,
            ..defaults()
        };
        let mut s = pie_congested(&p, 0.25);
        for _ in 0..33 {
            assert_eq!(decide(&p, &mut s, backlog_pkts(10), false, 0.99), PieAction::Enqueue);
        }
        assert_eq!(s.accu_prob, 8.25);
        assert_eq!(
            decide(&p, &mut s, backlog_pkts(10), false, 0.99),
            PieAction::Drop(DropReason::Forced)
        );
        assert_eq!(s.accu_prob, 0.0);
    }

    #[test]
    fn test_derandomize_zero_prob_clears_accu() {
        let p = PieParams {
            derandomize: true,
            ..defaults()
        };
        let mut s = PieState {
            accu_prob: 5.0,
            ..pie_congested(&p, 0.0)
        };
        assert_eq!(decide(&p, &mut s, backlog_pkts(10), false, 0.0), PieAction::Enqueue);
        assert_eq!(s.accu_prob, 0.0);
    }

    #[test]
    fn test_without_derandomize_accu_prob_untouched_by_arrivals() {
        let p = defaults();
        let mut s = pie_congested(&p, 0.25);
        decide(&p, &mut s, backlog_pkts(10), false, 0.99);
        assert_eq!(s.accu_prob, 0.0);
    }

    // ECN

    #[test]
    fn test_ecn_marks_ect_at_threshold_drops_above() {
        let p = PieParams {
            ecn: true,
            ..defaults()
        };
        let mut s = pie_congested(&p, 0.1);
        assert_eq!(decide(&p, &mut s, backlog_pkts(10), true, 0.0), PieAction::Mark);
        let mut s = pie_congested(&p, f64::from_bits(0.1f64.to_bits() + 1));
        assert_eq!(
            decide(&p, &mut s, backlog_pkts(10), true, 0.0),
            PieAction::Drop(DropReason::Early)
        );
    }

    #[test]
    fn test_ecn_not_ect_or_ecn_off_drops() {
        let on = PieParams {
            ecn: true,
            ..defaults()
        };
        let mut s = pie_congested(&on, 0.05);
        assert_eq!(
            decide(&on, &mut s, backlog_pkts(10), false, 0.0),
            PieAction::Drop(DropReason::Early)
        );
        let off = defaults();
        let mut s = pie_congested(&off, 0.05);
        assert_eq!(
            decide(&off, &mut s, backlog_pkts(10), true, 0.0),
            PieAction::Drop(DropReason::Early)
        );
    }

    #[test]
    fn test_ecn_custom_threshold() {
        // mark_ecn_threshold 0.3: prob 0.25 marks.
        let p = PieParams {
            ecn: true,
            mark_ecn_threshold: 0.3,
            ..defaults()
        };
        let mut s = pie_congested(&p, 0.25);
        assert_eq!(decide(&p, &mut s, backlog_pkts(10), true, 0.0), PieAction::Mark);
    }

    #[test]
    fn test_ecn_forced_derandomized_drop_marks_when_low() {
        // prob 0.1 with accu_prob 8.45: the next arrival reaches 8.55 >= 8.5,
        // a signal without a draw, marked since 0.1 <= 0.1.
        let p = PieParams {
            ecn: true,
            derandomize: true,
            ..defaults()
        };
        let mut s = PieState {
            accu_prob: 8.45,
            ..pie_congested(&p, 0.1)
        };
        assert_eq!(decide(&p, &mut s, backlog_pkts(10), true, 0.99), PieAction::Mark);
        assert_eq!(s.accu_prob, 0.0);
    }

    // Through the queue: timestamps, timer, marks

    /// max_burst 0, ten 1000 B packets queued at 0, one dequeued at 15 ms
    /// (sojourn 15 ms), then the 15 ms update: p = 0 + 1.25 * 0.015 =
    /// 0.01875, / 2048 = 9.1552734375e-6. Nine packets (9000 B) stay queued
    /// and qdelay_old is 15 ms, so the safeguard is off.
    fn pie_driven_to_small_prob(ecn: bool) -> Pie {
        let mut q = pie(PieParams {
            max_burst: Duration::ZERO,
            ecn,
            ..defaults()
        });
        for id in 0..10 {
            q.enqueue_with_draw(pkt(id, 1000, Ecn::Ect0, Time::ZERO), 0.99);
        }
        q.dequeue(Time(15 * MS), &mut Effects::default()).unwrap();
        q.on_timer(Time(15 * MS));
        assert_close(q.state().drop_prob, 9.1552734375e-6);
        q
    }

    #[test]
    fn test_driven_queue_marks_ect_arrival_and_queues_ce_copy() {
        let mut q = pie_driven_to_small_prob(true);
        let v = q.enqueue_with_draw(pkt(10, 1000, Ecn::Ect0, Time(16 * MS)), 0.0);
        assert_eq!(v, Verdict::Marked);
        let v = q.enqueue_with_draw(pkt(11, 1000, Ecn::NotEct, Time(16 * MS)), 0.0);
        assert_eq!(v, Verdict::Dropped(DropReason::Early));
        let mut fx = Effects::default();
        let mut last = None;
        while let Some(out) = q.dequeue(Time(20 * MS), &mut fx) {
            last = Some(out);
        }
        let last = last.unwrap();
        assert_eq!((last.id, last.ecn), (10, Ecn::Ce));
        assert!(!fx.marked && fx.discards.is_empty());
    }

    #[test]
    fn test_driven_queue_draw_above_prob_enqueues() {
        let mut q = pie_driven_to_small_prob(false);
        let v = q.enqueue_with_draw(pkt(10, 1000, Ecn::NotEct, Time(16 * MS)), 1e-5);
        assert_eq!(v, Verdict::Enqueued);
        assert_eq!(
            q.backlog(),
            Backlog {
                pkts: 10,
                bytes: 10_000
            }
        );
    }

    #[test]
    fn test_dequeue_records_sojourn_as_qdelay() {
        let mut q = pie(defaults());
        q.enqueue_with_draw(pkt(0, 1000, Ecn::NotEct, Time(3 * MS)), 0.5);
        q.dequeue(Time(15 * MS), &mut Effects::default()).unwrap();
        assert_close(traced_value(&q, "qdelay"), 0.012);
    }

    #[test]
    fn test_update_with_empty_queue_reads_zero_delay() {
        // The only packet left at 14 ms after 14 ms; the queue is empty at
        // the 15 ms update, so the update uses 0, not 14 ms.
        let mut q = pie(defaults());
        q.enqueue_with_draw(pkt(0, 1000, Ecn::NotEct, Time::ZERO), 0.5);
        q.dequeue(Time(14 * MS), &mut Effects::default()).unwrap();
        q.on_timer(Time(15 * MS));
        assert_eq!(q.state().qdelay_old, Duration::ZERO);
        assert_eq!(q.state().current_qdelay, Duration::ZERO);
    }

    #[test]
    fn test_update_with_waiting_packets_reads_last_sojourn() {
        let mut q = pie(defaults());
        q.enqueue_with_draw(pkt(0, 1000, Ecn::NotEct, Time::ZERO), 0.5);
        q.enqueue_with_draw(pkt(1, 1000, Ecn::NotEct, Time::ZERO), 0.5);
        q.dequeue(Time(14 * MS), &mut Effects::default()).unwrap();
        q.on_timer(Time(15 * MS));
        assert_eq!(q.state().qdelay_old, ms(14));
    }

    #[test]
    fn test_fresh_queue_first_timer_at_t_update_then_every_t_update() {
        let mut q = pie(defaults());
        assert_eq!(q.next_timer(), Some(Time(15 * MS)));
        q.on_timer(Time(15 * MS));
        assert_eq!(q.next_timer(), Some(Time(30 * MS)));
        let mut q = pie(PieParams {
            t_update: ms(30),
            ..defaults()
        });
        assert_eq!(q.next_timer(), Some(Time(30 * MS)));
        q.on_timer(Time(30 * MS));
        assert_eq!(q.next_timer(), Some(Time(60 * MS)));
    }

    #[test]
    fn test_idle_updates_leave_prob_zero_and_grant_allowance() {
        // Nothing queued: every update sees 0 delay, p < 0, prob 0, and the
        // allowance is regranted (150 - 15 -> back to 150 ms).
        let mut q = pie(defaults());
        for k in 1..=5 {
            q.on_timer(Time(15 * k * MS));
        }
        assert_eq!(q.state().drop_prob, 0.0);
        assert_eq!(q.state().burst_allowance, ms(150));
    }

    #[test]
    fn test_traced_names_timestamp_mode() {
        let q = pie(defaults());
        let names: Vec<&str> = traced(&q).into_iter().map(|(n, _)| n).collect();
        assert_eq!(
            names,
            vec!["drop_prob", "qdelay", "qdelay_old", "burst_allowance", "accu_prob"]
        );
        assert_close(traced_value(&q, "burst_allowance"), 0.15);
    }

    // Departure-rate estimation

    fn dre_params() -> PieParams {
        PieParams {
            delay_estimator: DelayEstimator::DequeueRate,
            ..defaults()
        }
    }

    /// Dequeues `n` 1000 B packets from `backlog_bytes` queued, the first at
    /// `start_ms` and then every `gap_ms`.
    fn dequeue_run(p: &PieParams, s: &mut PieState, start_ms: u64, gap_ms: u64, n: u64, backlog_bytes: u64) {
        for k in 0..n {
            let left = backlog_bytes - (k + 1) * 1000;
            pie_measure_departure(p, s, Time((start_ms + k * gap_ms) * MS), 1000, left);
        }
    }

    #[test]
    fn test_dre_first_sample_is_exact_link_rate() {
        // 20 packets of 1000 B queued, dequeued every 8 ms (1 Mb/s). The
        // first dequeue (at 0) leaves 19 000 B >= 16 384: measurement starts
        // at 0 and that packet is not counted. The k-th later dequeue (at
        // 8k ms) brings the count to 1000k; it reaches 16 384 at k = 17
        // (136 ms): 17 000 B / 0.136 s = 125 000 B/s. 2000 B are left, below
        // the threshold, so no new measurement starts.
        let p = dre_params();
        let mut s = PieState::new(&p);
        dequeue_run(&p, &mut s, 0, 8, 17, 20_000);
        assert!(s.in_measurement);
        assert_eq!(s.dq_count_bytes, 16_000);
        assert_eq!(s.avg_dq_rate, 0.0);
        dequeue_run(&p, &mut s, 136, 8, 1, 3_000);
        assert_close(s.avg_dq_rate, 125_000.0);
        assert!(!s.in_measurement);
    }

    #[test]
    fn test_dre_second_sample_enters_with_weight_quarter() {
        // After the first sample (125 000 B/s), 20 000 B queued again and
        // dequeued every 4 ms from 144 ms: 17 000 B / 0.068 s = 250 000 B/s;
        // avg = 0.75 * 125 000 + 0.25 * 250 000 = 156 250 B/s.
        let p = dre_params();
        let mut s = PieState::new(&p);
        dequeue_run(&p, &mut s, 0, 8, 18, 20_000);
        dequeue_run(&p, &mut s, 144, 4, 18, 20_000);
        assert_close(s.avg_dq_rate, 156_250.0);
    }

    #[test]
    fn test_dre_restarts_at_once_while_queue_holds_threshold() {
        // 40 000 B queued, 8 ms gaps: the sample at 136 ms leaves 22 000 B,
        // so a new measurement starts at 136 ms with count 0.
        let p = dre_params();
        let mut s = PieState::new(&p);
        dequeue_run(&p, &mut s, 0, 8, 18, 40_000);
        assert_close(s.avg_dq_rate, 125_000.0);
        assert!(s.in_measurement);
        assert_eq!(s.measurement_start, Time(136 * MS));
        assert_eq!(s.dq_count_bytes, 0);
    }

    #[test]
    fn test_dre_no_measurement_below_threshold() {
        let p = dre_params();
        let mut s = PieState::new(&p);
        dequeue_run(&p, &mut s, 0, 8, 10, 16_000);
        assert!(!s.in_measurement);
        assert_eq!(s.avg_dq_rate, 0.0);
    }

    #[test]
    fn test_dre_queue_update_uses_backlog_over_rate() {
        // Through the queue: 20 packets at 0, dequeued every 8 ms to 136 ms
        // (18 dequeues): avg_dq_rate 125 000 B/s, 2000 B left. The update
        // reads 2000 / 125 000 = 16 ms.
        let mut q = pie(dre_params());
        for id in 0..20 {
            q.enqueue_with_draw(pkt(id, 1000, Ecn::NotEct, Time::ZERO), 0.5);
        }
        let mut fx = Effects::default();
        for k in 0..18 {
            q.dequeue(Time(8 * k * MS), &mut fx).unwrap();
        }
        assert_close(traced_value(&q, "avg_dq_rate"), 125_000.0);
        q.on_timer(Time(150 * MS));
        assert_eq!(q.state().current_qdelay, ms(16));
        assert_eq!(q.state().qdelay_old, ms(16));
    }

    #[test]
    fn test_dre_update_before_first_sample_reads_zero() {
        let mut q = pie(dre_params());
        for id in 0..20 {
            q.enqueue_with_draw(pkt(id, 1000, Ecn::NotEct, Time::ZERO), 0.5);
        }
        q.on_timer(Time(15 * MS));
        assert_eq!(q.state().qdelay_old, Duration::ZERO);
    }

    // Parameters

    #[test]
    fn test_invalid_params_rejected_by_key() {
        let cases: [(PieParams, &str); 11] = [
            (
                PieParams {
                    limit: Limit::Packets(0),
                    ..defaults()
                },
                "limit",
            ),
            (
                PieParams {
                    qdelay_ref: Duration::ZERO,
                    ..defaults()
                },
                "qdelay_ref",
            ),
            (
                PieParams {
                    t_update: Duration::ZERO,
                    ..defaults()
                },
                "t_update",
            ),
            (
                PieParams {
                    alpha: -0.1,
                    ..defaults()
                },
                "alpha",
            ),
            (
                PieParams {
                    beta: f64::NAN,
                    ..defaults()
                },
                "beta",
            ),
            (
                PieParams {
                    dq_threshold_bytes: 0,
                    ..defaults()
                },
                "dq_threshold",
            ),
            (
                PieParams {
                    dq_rate_weight: 0.0,
                    ..defaults()
                },
                "dq_rate_weight",
            ),
            (
                PieParams {
                    mean_pktsize_bytes: 0,
                    ..defaults()
                },
                "mean_pktsize",
            ),
            (
                PieParams {
                    mark_ecn_threshold: 1.5,
                    ..defaults()
                },
                "mark_ecn_threshold",
            ),
            (
                PieParams {
                    idle_decay_factor: -0.5,
                    ..defaults()
                },
                "idle_decay_factor",
            ),
            (
                PieParams {
                    dq_rate_weight: f64::NAN,
                    ..defaults()
                },
                "dq_rate_weight",
            ),
        ];
        for (params, key) in cases {
            assert_eq!(Pie::new(params, 1).unwrap_err().param, key);
        }
    }

    #[test]
    fn test_defaults_valid_and_effective_returns_them() {
        let q = pie(defaults());
        assert_eq!(q.effective(), defaults());
        assert_eq!(q.effective().limit, Limit::Packets(1000));
    }

    // Conservation (crate::conservation plays the operations)

    fn params() -> impl Strategy<Value = PieParams> {
        (
            prop_oneof![
                (1u32..40).prop_map(Limit::Packets),
                (1000u64..40_000).prop_map(Limit::Bytes),
            ],
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            any::<bool>(),
            prop_oneof![Just(Duration::ZERO), Just(Duration::from_millis(150))],
            prop_oneof![Just(DelayEstimator::Timestamp), Just(DelayEstimator::DequeueRate)],
        )
            .prop_map(
                |(limit, derandomize, ecn, byte_mode, cap, max_burst, delay_estimator)| PieParams {
                    limit,
                    derandomize,
                    ecn,
                    byte_mode,
                    cap_drop_adjustment: cap,
                    max_burst,
                    delay_estimator,
                    dq_threshold_bytes: 4000,
                    ..PieParams::default()
                },
            )
    }

    impl Conserving for Pie {
        const FIFO: bool = true;

        fn configs() -> BoxedStrategy<Pie> {
            (params(), any::<u64>())
                .prop_map(|(p, seed)| Pie::new(p, seed).unwrap())
                .boxed()
        }

        fn check_state(&self, _tally: &Tally) -> Result<(), TestCaseError> {
            prop_assert!((0.0..=1.0).contains(&self.state.drop_prob));
            Ok(())
        }
    }
}
