//! Random Early Detection, with the adaptive variants `ared` and `feng-ared`.
//!
//! Heads up: read the paper, ns-2's `queue/red.cc` and the choices against
//! ns-2 and the paper below (with Linux and ns-3 where they differ) before
//! changing this file. The adaptation rules live in [`crate::ared`].
//!
//! S. Floyd, V. Jacobson, "Random Early Detection Gateways for Congestion
//! Avoidance", IEEE/ACM Transactions on Networking 1(4), 1993: the general
//! algorithm of Section 4 (Fig. 2), the average of Section 6 and the
//! marking probability with the uniform-gap count correction of Section 7.
//! The default model is ns-2.35's `queue/red.cc`, which
//! the classic RED studies ran on. Per arrival that sees a backlog `q`
//! (excluding itself, and excluding the packet being transmitted):
//!
//! ```text
//! avg   <- avg (1 - w_q)^k + w_q q          k = 1, or the idle correction below
//! count <- count + 1
//! p_b   = max_p (avg - min_th) / (max_th - min_th)             min_th <= avg < max_th
//!       = max_p' + (1 - max_p') (avg - max_th) / (end - max_th)  gentle, max_th <= avg < end
//! p_a   = p_b / (1 - count p_b)      (1 once count p_b >= 1)
//! drop (or mark) when the uniform draw u in [0, 1) is below p_a; count <- 0
//! avg >= max_th (end when gentle): forced drop; count <- 0
//! ```
//!
//! where `end` is 2 max_th (ns-2's gentle) or the limit (Brandauer et al.'s
//! GRED, `gentle = "to_limit"`).
//!
//! # Units
//!
//! Thresholds, `avg` and the backlog they are compared with are in the unit
//! of the limit: packets for a packet limit, bytes for a byte limit. With an
//! unlimited buffer the unit is that of the thresholds given (packets if
//! both are "auto"). A threshold in the other unit is rejected rather than
//! converted (ns-2 multiplies thresholds given in packets by
//! `mean_pktsize`; aqmlab asks for the unit to be said).
//!
//! # Parameters
//!
//! * `limit`: hard buffer limit; an arrival that does not fit is dropped
//!   with [`DropReason::Overflow`]. A byte limit admits a packet only if all
//!   of it fits (ns-2 checks `q >= qlim` before enqueueing, so its queue can
//!   exceed a byte limit by one packet).
//! * `min_th`, `max_th`: thresholds on `avg`, 0 <= min_th < max_th <= limit
//!   (2 max_th <= limit with `gentle = true`). `"auto"`: min_th = max(5, target_delay
//!   C / 2) packets and max_th = 3 min_th, C being the link rate in mean
//!   packets per second, `rate / (8 mean_pktsize)`; in a byte queue these
//!   are multiplied by `mean_pktsize` (Floyd, Gummadi, Shenker 2001; ns-2).
//! * `max_p`: p_b at `max_th`, in (0, 1].
//! * `w_q`: EWMA weight, in (0, 1]. `"auto"`: 1 - exp(-1/C), a one-second
//!   time constant (ns-2 `q_weight_ = 0`, ns-3 with ARED).
//! * `gentle` (default false, [`Gentle`]): above max_th, p_b rises linearly
//!   from max_p to 1 instead of jumping to 1. `true` is ns-2's `gentle_`
//!   (Floyd's 2000 recommendation): the line reaches 1 at 2 max_th.
//!   `"to_limit"` is the GRED of Brandauer, Iannaccone, Diot, Ziegler,
//!   Fdida and May (ISCC 2001): the line reaches 1 at the limit (in the
//!   thresholds' unit), so the only forced drop is at a full buffer; it
//!   needs a bounded limit. ns-2.35 has no such mode.
//! * `wait` (default false; ns-2's default is true): p_a = 0 while
//!   count p_b < 1, then p_b / (2 - count p_b), so gaps between drops are
//!   uniform on {1/p_b, ..., 2/p_b - 1} instead of {1, ..., 1/p_b - 1}.
//!   Needs `drop_spacing = count`.
//! * `byte_mode` (default false, ns-2 `bytes_`): the count correction uses
//!   floor(bytes since the last drop / mean_pktsize), and p_a (when below 1)
//!   is then scaled by size / mean_pktsize. ns-2 scales after the count
//!   correction; the paper scales p_b before it. aqmlab follows ns-2.
//! * `mean_pktsize` (default 500 B, >= 1): for byte mode, the idle
//!   correction and the automatic values.
//! * `ecn` (default false): an arrival that carries ECT (or CE already) and
//!   draws an early drop below `max_th` is marked CE and queued instead.
//! * `ecn_above_max_th`: `drop` (default: ns-2 with its `mark_p` rule marks
//!   only between the thresholds) or `mark` (Linux without `harddrop`).
//!   Governs both the gentle region (a probabilistic hit there is an
//!   [`DropReason::Early`] drop or a mark) and the forced region (a
//!   [`DropReason::Forced`] drop or a mark).
//! * `drop_spacing`: `count` (default, Floyd's p_b / (1 - count p_b)) or
//!   `none` (p_a = p_b for every arrival, as Bonald, May and Bolot's model
//!   assumes).
//! * `idle_decay`: how `avg` ages while nothing arrives.
//!   - `ns2` (default): the idle period starts when the link goes idle,
//!     i.e. when a dequeue returns nothing (the first such call: a repeated
//!     empty dequeue does not restart the clock). The next arrival uses
//!     k = m + 1 with m = floor(C * idle time): one step more than the
//!     paper.
//!   - `paper`: the idle period starts when the queue empties (the dequeue
//!     that takes the last packet). An arrival that finds the queue empty
//!     uses avg <- (1 - w_q)^m avg. If that arrival is dropped the queue
//!     stays empty and the idle clock restarts at the arrival, so no span
//!     is decayed twice (the paper does not say).
//!   - `none`: every arrival takes one ordinary step (k = 1).
//!
//!   m is computed exactly in integers from the link rate in bit/s and the
//!   idle time in nanoseconds. The Linux power-of-two table approximation
//!   is not offered.
//! * `exempt_first` (default true): ns-2's two rules. No early or forced
//!   drop while at most one packet is queued (aqmlab counts packets even in
//!   a byte queue; ns-2 compares the byte backlog with 1), and the first
//!   arrival after avg reaches min_th (with more than one packet queued) is
//!   never dropped and restarts the count at 1. `false` gives the paper's
//!   rules: count is set to -1 while avg < min_th, so the first arrival in
//!   the band has count 0 and p_a = p_b; the byte count then starts with
//!   the packet after it.
//! * `avg_of`: `average` (default) or `instantaneous`: avg = q at every
//!   arrival (w_q = 1, reported as such), with no idle correction.
//! * `target_delay` (default 5 ms): for the automatic thresholds.
//! * `adapt`: none, Adaptive RED or Feng's adaptation; see [`crate::ared`].
//!
//! # Choices against ns-2 and the paper
//!
//! * The uniform draw is in [0, 1) and the arrival is hit when u < p_a
//!   (ns-2 tests u <= p), so p_a = 0 never drops and the hit probability is
//!   exactly p_a.
//! * A forced drop removes the arrival itself. ns-2 enqueues the arrival
//!   and then drops a victim (by default the last packet, which is the same
//!   packet; with `drop_front_` the head).
//! * Counts reset to 0 on every drop and mark, forced or early, and on a
//!   hard-limit drop, as ns-2 (ns-3 does not reset on forced drops).
//! * When the AQM drops an arrival, the drop is reported with the AQM's
//!   reason even if the buffer is also full (ns-2 reports it as forced).
//! * The `old` flag (ns-2): set by the exempt arrival, cleared by any
//!   arrival with avg < min_th or with at most one packet queued; a forced
//!   drop leaves it alone.
//!
//! # Traced
//!
//! `avg`, `q` (backlog now, in the queue's unit), `p_b` and `p_a` (for the
//! last arrival; `p_a` is 0 when no early decision was taken and 1 in the
//! forced region), `count`, `max_p`, `min_th`, `max_th`, and `P_d` with
//! dynamic thresholds.

use crate::ared::{
    ared_step, dyn_thresholds_step, feng_step, Adapt, AredParams, AredUpdate, FengParams, FengStatus, GentleSlope,
};
use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::rng::{self, Rng};
use crate::time::{Duration, Time, NANOS_PER_SEC};
use crate::{DropReason, Effects, LinkInfo, ParamError, QueueDisc, Verdict};

/// A RED threshold, in the unit of the queue.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Threshold {
    /// From the link rate and `target_delay` (see the module comment).
    Auto,
    Packets(f64),
    Bytes(f64),
}

/// The EWMA weight `w_q`.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Weight {
    /// 1 - exp(-1/C), C the link rate in mean packets per second.
    Auto,
    Value(f64),
}

/// What ECN does where RED would drop with `avg >= max_th`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum EcnAboveMaxTh {
    #[default]
    Drop,
    Mark,
}

/// RED's drop probability between `max_th` and the forced-drop region.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Gentle {
    /// Floyd and Jacobson 1993: every arrival with avg >= max_th is dropped.
    #[default]
    Off,
    /// ns-2's `gentle_`: p_b rises from max_p at max_th to 1 at 2 max_th.
    TwiceMaxTh,
    /// Brandauer et al.'s GRED: p_b rises from max_p at max_th to 1 at the
    /// limit.
    ToLimit,
}

/// How drops are spread between arrivals at a constant `p_b`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DropSpacing {
    /// Floyd's count correction: p_a = p_b / (1 - count p_b).
    #[default]
    Count,
    /// Every arrival independently with p_b.
    None,
}

/// How `avg` ages over an idle period.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum IdleDecay {
    /// (1 - w_q)^(m+1) from the moment the link goes idle.
    #[default]
    Ns2,
    /// (1 - w_q)^m from the moment the queue empties.
    Paper,
    /// No idle correction.
    None,
}

/// What `avg` follows.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AvgOf {
    #[default]
    Average,
    /// avg = q (w_q = 1).
    Instantaneous,
}

/// The unit of `avg`, the thresholds and the backlog they are compared with.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum QueueUnit {
    Packets,
    Bytes,
}

impl QueueUnit {
    /// A backlog in this unit.
    #[inline]
    pub fn of(self, b: Backlog) -> f64 {
        match self {
            QueueUnit::Packets => b.pkts as f64,
            QueueUnit::Bytes => b.bytes as f64,
        }
    }

    fn threshold(self, v: f64) -> Threshold {
        match self {
            QueueUnit::Packets => Threshold::Packets(v),
            QueueUnit::Bytes => Threshold::Bytes(v),
        }
    }

    fn of_limit(limit: Limit) -> Option<QueueUnit> {
        match limit {
            Limit::Packets(_) => Some(QueueUnit::Packets),
            Limit::Bytes(_) => Some(QueueUnit::Bytes),
            Limit::Unlimited => None,
        }
    }

    fn name(self) -> &'static str {
        match self {
            QueueUnit::Packets => "packets",
            QueueUnit::Bytes => "bytes",
        }
    }
}

/// A bounded limit as a number in its own unit (which is the queue's unit
/// once the parameters are valid), `None` when unlimited.
fn limit_value(limit: Limit) -> Option<f64> {
    match limit {
        Limit::Packets(n) => Some(n as f64),
        Limit::Bytes(b) => Some(b as f64),
        Limit::Unlimited => None,
    }
}

/// The user-settable parameters of `red`, `ared` and `feng-ared`. See the
/// module comment for meanings and ranges.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedParams {
    pub limit: Limit,
    pub min_th: Threshold,
    pub max_th: Threshold,
    pub max_p: f64,
    pub w_q: Weight,
    pub gentle: Gentle,
    pub wait: bool,
    pub byte_mode: bool,
    pub mean_pktsize_bytes: u32,
    pub ecn: bool,
    pub ecn_above_max_th: EcnAboveMaxTh,
    pub drop_spacing: DropSpacing,
    pub idle_decay: IdleDecay,
    pub exempt_first: bool,
    pub avg_of: AvgOf,
    pub target_delay: Duration,
    pub adapt: Adapt,
}

/// The values "auto" resolves to, in the queue's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
struct Resolved {
    min_th: f64,
    max_th: f64,
    w_q: f64,
}

impl RedParams {
    /// `red` with aqmlab's defaults for everything but the thresholds,
    /// `max_p` and `w_q`.
    pub fn red(limit: Limit, min_th: Threshold, max_th: Threshold, max_p: f64, w_q: Weight) -> RedParams {
        RedParams {
            limit,
            min_th,
            max_th,
            max_p,
            w_q,
            gentle: Gentle::Off,
            wait: false,
            byte_mode: false,
            mean_pktsize_bytes: 500,
            ecn: false,
            ecn_above_max_th: EcnAboveMaxTh::Drop,
            drop_spacing: DropSpacing::Count,
            idle_decay: IdleDecay::Ns2,
            exempt_first: true,
            avg_of: AvgOf::Average,
            target_delay: Duration::from_millis(5),
            adapt: Adapt::None,
        }
    }

    /// `ared` with aqmlab's defaults: automatic thresholds and `w_q`,
    /// gentle, timer-driven updates every 0.5 s. The initial `max_p` is 0.1
    /// (ns-2's default).
    pub fn ared(limit: Limit) -> RedParams {
        RedParams {
            gentle: Gentle::TwiceMaxTh,
            adapt: Adapt::Ared(AredParams::default()),
            ..RedParams::red(limit, Threshold::Auto, Threshold::Auto, 0.1, Weight::Auto)
        }
    }

    /// `feng-ared` with aqmlab's defaults (a = 3, b = 2, bottom = 0.0001,
    /// fixed thresholds). Set `adapt` to a [`FengParams`] with `dynamic`
    /// for dynamic thresholds.
    pub fn feng(limit: Limit, min_th: Threshold, max_th: Threshold, max_p: f64, w_q: Weight) -> RedParams {
        RedParams {
            adapt: Adapt::Feng(FengParams::default()),
            ..RedParams::red(limit, min_th, max_th, max_p, w_q)
        }
    }

    /// The unit of `avg` and the thresholds.
    pub fn unit(&self) -> QueueUnit {
        QueueUnit::of_limit(self.limit).unwrap_or(match (self.min_th, self.max_th) {
            (Threshold::Bytes(_), _) | (_, Threshold::Bytes(_)) => QueueUnit::Bytes,
            _ => QueueUnit::Packets,
        })
    }

    fn uses_dynamic_thresholds(&self) -> bool {
        matches!(self.adapt, Adapt::Feng(FengParams { dynamic: Some(_), .. }))
    }

    /// A threshold's value, checking its unit against the queue's.
    fn threshold_value(&self, key: &'static str, t: Threshold) -> Result<Option<f64>, ParamError> {
        let (v, unit) = match t {
            Threshold::Auto => return Ok(None),
            Threshold::Packets(v) => (v, QueueUnit::Packets),
            Threshold::Bytes(v) => (v, QueueUnit::Bytes),
        };
        if unit != self.unit() {
            return Err(ParamError::new(
                key,
                format!(
                    "is given in {} but the queue is measured in {} (thresholds take the limit's unit)",
                    unit.name(),
                    self.unit().name()
                ),
            ));
        }
        if !(v.is_finite() && v >= 0.0) {
            return Err(ParamError::new(key, format!("must be a finite value >= 0 (got {v})")));
        }
        Ok(Some(v))
    }

    /// Checks every constraint that does not need the link; thresholds and
    /// `w_q` are checked when given, and again after "auto" is resolved.
    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        if self.mean_pktsize_bytes == 0 {
            return Err(ParamError::new("mean_pktsize", "must be at least 1 B (got 0)"));
        }
        if self.target_delay == Duration::ZERO {
            return Err(ParamError::new("target_delay", "must be positive (got 0 s)"));
        }
        if !(self.max_p > 0.0 && self.max_p <= 1.0) {
            return Err(ParamError::new(
                "max_p",
                format!("must be in (0, 1] (got {})", self.max_p),
            ));
        }
        if let Weight::Value(w) = self.w_q {
            if !(w > 0.0 && w <= 1.0) {
                return Err(ParamError::new("w_q", format!("must be in (0, 1] (got {w})")));
            }
        }
        if self.wait && self.drop_spacing == DropSpacing::None {
            return Err(ParamError::new(
                "wait",
                "spaces drops through the count, so it needs drop_spacing = \"count\"",
            ));
        }
        let min_th = self.threshold_value("min_th", self.min_th)?;
        let max_th = self.threshold_value("max_th", self.max_th)?;
        if let (Some(lo), Some(hi)) = (min_th, max_th) {
            if lo >= hi {
                return Err(ParamError::new(
                    "max_th",
                    format!("must be greater than min_th (got {hi} <= {lo})"),
                ));
            }
        }
        let limit = limit_value(self.limit);
        if let (Some(hi), Some(lim)) = (max_th, limit) {
            if hi > lim {
                return Err(ParamError::new(
                    "max_th",
                    format!("must not exceed the limit (got {hi} > {lim})"),
                ));
            }
            if self.gentle == Gentle::TwiceMaxTh && 2.0 * hi > lim {
                return Err(ParamError::new(
                    "max_th",
                    format!(
                        "with gentle = true, 2 * max_th must not exceed the limit (got 2 * {hi} > {lim}); \
                         gentle = \"to_limit\" ends the gentle line at the limit instead"
                    ),
                ));
            }
        }
        if self.gentle == Gentle::ToLimit && limit.is_none() {
            return Err(ParamError::new(
                "gentle",
                "\"to_limit\" ends the gentle line at the limit, so it needs a bounded limit (got none); \
                 use true for ns-2's line to 2 max_th",
            ));
        }
        match &self.adapt {
            Adapt::None => {}
            Adapt::Ared(a) => a.validate()?,
            Adapt::Feng(f) => {
                f.validate()?;
                if self.max_p < f.bottom {
                    return Err(ParamError::new(
                        "max_p",
                        format!(
                            "must be at least feng-ared's bottom (got {} < {})",
                            self.max_p, f.bottom
                        ),
                    ));
                }
            }
        }
        if self.uses_dynamic_thresholds() {
            let floor = self.one_packet();
            if let Some(lo) = min_th.filter(|&lo| lo < floor) {
                return Err(ParamError::new(
                    "min_th",
                    format!("must be at least 1 packet ({floor}) with dynamic thresholds (got {lo})"),
                ));
            }
        }
        Ok(())
    }

    /// One packet in the queue's unit.
    fn one_packet(&self) -> f64 {
        match self.unit() {
            QueueUnit::Packets => 1.0,
            QueueUnit::Bytes => self.mean_pktsize_bytes as f64,
        }
    }

    fn resolve(&self, link: LinkInfo) -> Result<(RedParams, Resolved), ParamError> {
        self.validate()?;
        let w_q_auto = self.w_q == Weight::Auto && self.avg_of == AvgOf::Average;
        let min_th_auto = self.min_th == Threshold::Auto;
        let any_auto = min_th_auto || w_q_auto || self.max_th == Threshold::Auto;
        if link.rate_bps == 0 && (min_th_auto || w_q_auto) {
            return Err(ParamError::new(
                if min_th_auto { "min_th" } else { "w_q" },
                "\"auto\" needs the link rate, which is 0 b/s",
            ));
        }
        // C, the link rate in mean packets per second.
        let c_pkts = link.rate_bps as f64 / (8.0 * self.mean_pktsize_bytes as f64);
        let min_th = match self.threshold_value("min_th", self.min_th)? {
            Some(v) => v,
            None => 5f64.max(self.target_delay.as_secs_f64() * c_pkts / 2.0) * self.one_packet(),
        };
        let max_th = match self.threshold_value("max_th", self.max_th)? {
            Some(v) => v,
            None => 3.0 * min_th,
        };
        let w_q = match (self.avg_of, self.w_q) {
            (AvgOf::Instantaneous, _) => 1.0,
            (AvgOf::Average, Weight::Value(w)) => w,
            (AvgOf::Average, Weight::Auto) => -(-1.0 / c_pkts).exp_m1(),
        };
        let unit = self.unit();
        let eff = RedParams {
            min_th: unit.threshold(min_th),
            max_th: unit.threshold(max_th),
            w_q: Weight::Value(w_q),
            ..*self
        };
        eff.validate().map_err(|e| {
            if any_auto {
                ParamError::new(e.param, format!("{} (after resolving \"auto\")", e.message))
            } else {
                e
            }
        })?;
        Ok((eff, Resolved { min_th, max_th, w_q }))
    }

    /// The parameters with every "auto" resolved for `link`, validated.
    pub fn effective(&self, link: LinkInfo) -> Result<RedParams, ParamError> {
        self.resolve(link).map(|(eff, _)| eff)
    }
}

/// What changes per packet (and per adaptation step). Thresholds and `avg`
/// are in the queue's unit.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RedState {
    pub avg: f64,
    /// Arrivals since the last drop or mark (ns-2 convention: incremented
    /// before the decision). -1 below min_th with `exempt_first = false`.
    pub count: i64,
    /// Bytes of the arrivals counted by `count` (byte mode).
    pub count_bytes: u64,
    /// ns-2's `old`: the exempt first arrival above min_th has been seen.
    pub old: bool,
    /// `idle_decay = ns2`: when the link went idle, `None` once a packet
    /// arrives. `paper`: when the queue last emptied (or an arrival last
    /// found it empty), read only while it is empty. Always `None` with
    /// `idle_decay = none`.
    pub idle_since: Option<Time>,
    pub max_p: f64,
    pub min_th: f64,
    pub max_th: f64,
    /// Base probability at the last arrival.
    pub p_b: f64,
    /// Probability applied to the last arrival.
    pub p_a: f64,
    /// Feng's crossing status.
    pub feng_status: FengStatus,
    /// Averaged drop probability (dynamic thresholds).
    pub p_d: f64,
    /// When Adaptive RED last changed `max_p`.
    pub last_change: Time,
    /// The next periodic update (timer-driven ARED, dynamic thresholds).
    pub next_update: Option<Time>,
}

impl RedState {
    fn reset_count(&mut self) {
        self.count = 0;
        self.count_bytes = 0;
    }
}

/// What RED does with an arrival, before the hard limit is checked.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RedAction {
    Admit,
    /// Admit with CE set.
    Mark,
    /// [`DropReason::Early`] or [`DropReason::Forced`].
    Drop(DropReason),
}

/// The EWMA after `steps` decay steps and one sample `q`:
/// avg (1 - w_q)^steps + w_q q. `steps` is 1 for an ordinary arrival.
#[inline]
pub fn red_ewma(avg: f64, w_q: f64, q: f64, steps: u64) -> f64 {
    let keep = match steps {
        0 => 1.0,
        1 => 1.0 - w_q,
        // (1 - w_q)^steps through ln(1 - w_q), exact even for tiny w_q.
        _ => (steps as f64 * (-w_q).ln_1p()).exp(),
    };
    avg * keep + w_q * q
}

/// m = floor(C * idle), the packets of `mean_pktsize_bytes` the link could
/// have sent while idle, exactly in integers.
#[inline]
pub fn idle_packet_times(rate_bps: u64, mean_pktsize_bytes: u32, idle: Duration) -> u64 {
    let bits = rate_bps as u128 * idle.nanos() as u128;
    let per_pkt = 8 * mean_pktsize_bytes as u128 * NANOS_PER_SEC as u128;
    u64::try_from(bits / per_pkt).unwrap_or(u64::MAX)
}

/// Where the gentle line reaches 1 (and forced drops begin) for `max_th`:
/// `None` without a gentle line. Same unit as the thresholds.
#[inline]
pub fn red_gentle_end(gentle: Gentle, max_th: f64, limit: Limit) -> Option<f64> {
    match gentle {
        Gentle::Off => None,
        Gentle::TwiceMaxTh => Some(2.0 * max_th),
        Gentle::ToLimit => limit_value(limit),
    }
}

/// p_b at `avg` (Floyd–Jacobson Section 4). Above `max_th` the gentle line
/// runs from `gentle_max_p` at `max_th` to 1 at `gentle_end` (see
/// [`red_gentle_end`]; ns-2's 2 max_th gives the denominator max_th
/// exactly). Clamped to at most 1.
#[inline]
pub fn red_base_prob(
    avg: f64,
    min_th: f64,
    max_th: f64,
    max_p: f64,
    gentle_end: Option<f64>,
    gentle_max_p: f64,
) -> f64 {
    let p = if avg < min_th {
        0.0
    } else if avg < max_th {
        max_p * (avg - min_th) / (max_th - min_th)
    } else if let Some(end) = gentle_end.filter(|&end| avg < end) {
        gentle_max_p + (1.0 - gentle_max_p) * (avg - max_th) / (end - max_th)
    } else {
        1.0
    };
    p.min(1.0)
}

/// The count correction (Floyd–Jacobson Section 7; `wait` as ns-2), with
/// `c` arrivals counted since the last drop.
#[inline]
pub fn red_spacing(p_b: f64, c: f64, wait: bool, spacing: DropSpacing) -> f64 {
    if spacing == DropSpacing::None {
        return p_b;
    }
    let cp = c * p_b;
    if wait {
        if cp < 1.0 {
            0.0
        } else if cp < 2.0 {
            p_b / (2.0 - cp)
        } else {
            1.0
        }
    } else if cp < 1.0 {
        p_b / (1.0 - cp)
    } else {
        1.0
    }
}

/// RED's decision for one arrival, `avg` already updated: counts, the
/// exemptions, the forced region and the early draw `u` in [0, 1).
/// `q_pkts` is the packet backlog the arrival sees; `can_mark` says whether
/// ECN is on and the packet is ECN-capable.
pub fn red_decide(p: &RedParams, s: &mut RedState, q_pkts: u32, size_bytes: u32, can_mark: bool, u: f64) -> RedAction {
    s.count = s.count.saturating_add(1);
    if s.count > 0 {
        s.count_bytes = s.count_bytes.saturating_add(size_bytes as u64);
    }
    let gentle_max_p = match p.adapt {
        Adapt::Ared(AredParams {
            gentle_slope: GentleSlope::Initial,
            ..
        }) => p.max_p,
        _ => s.max_p,
    };
    let gentle_end = red_gentle_end(p.gentle, s.max_th, p.limit);
    s.p_b = red_base_prob(s.avg, s.min_th, s.max_th, s.max_p, gentle_end, gentle_max_p);
    s.p_a = 0.0;
    if s.avg < s.min_th || (p.exempt_first && q_pkts <= 1) {
        if p.exempt_first {
            // ns-2: leaving the band (or a near-empty queue) re-arms the exemption.
            s.old = false;
        } else {
            // Paper Fig. 2: count <- -1 below min_th.
            s.count = -1;
            s.count_bytes = 0;
        }
        return RedAction::Admit;
    }
    let forced = s.avg >= gentle_end.unwrap_or(s.max_th);
    if forced {
        s.p_a = 1.0;
        s.reset_count();
        return if can_mark && p.ecn_above_max_th == EcnAboveMaxTh::Mark {
            RedAction::Mark
        } else {
            RedAction::Drop(DropReason::Forced)
        };
    }
    if p.exempt_first && !s.old {
        // ns-2: the first arrival after avg reaches min_th is never dropped.
        s.old = true;
        s.count = 1;
        s.count_bytes = size_bytes as u64;
        return RedAction::Admit;
    }
    let c = if p.byte_mode {
        (s.count_bytes / p.mean_pktsize_bytes as u64) as f64
    } else {
        s.count.max(0) as f64
    };
    let mut p_a = red_spacing(s.p_b, c, p.wait, p.drop_spacing);
    if p.byte_mode && p_a < 1.0 {
        p_a *= size_bytes as f64 / p.mean_pktsize_bytes as f64;
    }
    s.p_a = p_a.min(1.0);
    if u >= s.p_a {
        return RedAction::Admit;
    }
    s.reset_count();
    if can_mark && (s.avg < s.max_th || p.ecn_above_max_th == EcnAboveMaxTh::Mark) {
        RedAction::Mark
    } else {
        RedAction::Drop(DropReason::Early)
    }
}

/// The next deadline of a periodic update due at `due`, after `now`.
fn next_period(due: Time, interval: Duration, now: Time) -> Time {
    let periods = now.saturating_since(due).nanos() / interval.nanos() + 1;
    Time(due.nanos().saturating_add(interval.nanos().saturating_mul(periods)))
}

/// RED's average, decisions and adaptation without a buffer: the caller
/// owns the queue, reports arrivals, departures and idle links, and applies
/// the hard limit (calling [`RedCore::on_overflow`] when it drops).
/// [`Red`] wraps it around a FIFO; a shared-buffer discipline can hold one.
#[derive(Clone, Debug)]
pub struct RedCore {
    params: RedParams,
    unit: QueueUnit,
    w_q: f64,
    rate_bps: u64,
    /// max_th - min_th, kept by dynamic thresholds.
    span: f64,
    state: RedState,
}

impl RedCore {
    pub fn new(params: RedParams, link: LinkInfo) -> Result<RedCore, ParamError> {
        let (params, r) = params.resolve(link)?;
        let next_update = match params.adapt {
            Adapt::Ared(AredParams {
                update: AredUpdate::Timer,
                interval,
                ..
            }) => Some(Time::ZERO + interval),
            Adapt::Feng(FengParams { dynamic: Some(d), .. }) => Some(Time::ZERO + d.interval),
            _ => None,
        };
        let idle_since = match params.idle_decay {
            IdleDecay::Ns2 | IdleDecay::Paper => Some(Time::ZERO),
            IdleDecay::None => None,
        };
        Ok(RedCore {
            unit: params.unit(),
            w_q: r.w_q,
            rate_bps: link.rate_bps,
            span: r.max_th - r.min_th,
            state: RedState {
                avg: 0.0,
                count: if params.exempt_first { 0 } else { -1 },
                count_bytes: 0,
                old: false,
                idle_since,
                max_p: params.max_p,
                min_th: r.min_th,
                max_th: r.max_th,
                p_b: 0.0,
                p_a: 0.0,
                feng_status: FengStatus::Between,
                p_d: 0.0,
                last_change: Time::ZERO,
                next_update,
            },
            params,
        })
    }

    /// The parameters after "auto" is resolved, as constructed; the adapted
    /// `max_p` and thresholds are in [`RedCore::state`].
    pub fn effective(&self) -> &RedParams {
        &self.params
    }

    pub fn state(&self) -> &RedState {
        &self.state
    }

    pub fn unit(&self) -> QueueUnit {
        self.unit
    }

    /// Updates `avg` for an arrival that sees `backlog`.
    fn average(&mut self, now: Time, backlog: Backlog) {
        let q = self.unit.of(backlog);
        let s = &mut self.state;
        let idle = |since: Time| {
            idle_packet_times(
                self.rate_bps,
                self.params.mean_pktsize_bytes,
                now.saturating_since(since),
            )
        };
        let steps = match self.params.idle_decay {
            IdleDecay::Ns2 => s.idle_since.take().map_or(1, |t| idle(t).saturating_add(1)),
            IdleDecay::Paper if backlog.pkts == 0 => {
                let m = s.idle_since.map_or(0, idle);
                s.idle_since = Some(now);
                m
            }
            IdleDecay::Paper | IdleDecay::None => 1,
        };
        s.avg = match self.params.avg_of {
            AvgOf::Instantaneous => q,
            AvgOf::Average => red_ewma(s.avg, self.w_q, q, steps),
        };
    }

    /// The stored average aged by the idle decay up to `now`, (1 - w_q)^m
    /// over the m packet times of the current idle period, without storing
    /// it (timer-driven ARED reads this, as Linux does); with
    /// `avg_of = instantaneous`, the backlog.
    pub fn avg_now(&self, now: Time, backlog: Backlog) -> f64 {
        let s = &self.state;
        if self.params.avg_of == AvgOf::Instantaneous {
            return self.unit.of(backlog);
        }
        let since = match self.params.idle_decay {
            IdleDecay::Ns2 => s.idle_since,
            IdleDecay::Paper => s.idle_since.filter(|_| backlog.pkts == 0),
            IdleDecay::None => None,
        };
        match since {
            Some(t) => {
                let m = idle_packet_times(self.rate_bps, self.params.mean_pktsize_bytes, now.saturating_since(t));
                red_ewma(s.avg, self.w_q, 0.0, m)
            }
            None => s.avg,
        }
    }

    /// An arrival of `size_bytes` that sees `backlog`: updates the average,
    /// runs the per-arrival adaptation and decides with the draw `u`.
    pub fn on_arrival(&mut self, now: Time, backlog: Backlog, size_bytes: u32, can_mark: bool, u: f64) -> RedAction {
        self.average(now, backlog);
        let s = &mut self.state;
        match &self.params.adapt {
            Adapt::Ared(a) if a.update == AredUpdate::Arrival => {
                if now > s.last_change + a.interval {
                    if let Some(max_p) = ared_step(a, s.max_p, s.avg, s.min_th, s.max_th) {
                        s.max_p = max_p;
                        s.last_change = now;
                    }
                }
            }
            Adapt::Feng(f) => {
                (s.feng_status, s.max_p) = feng_step(f, s.feng_status, s.max_p, s.avg, s.min_th, s.max_th);
            }
            Adapt::Ared(_) | Adapt::None => {}
        }
        let action = red_decide(&self.params, s, backlog.pkts, size_bytes, can_mark, u);
        if let Adapt::Feng(FengParams { dynamic: Some(d), .. }) = &self.params.adapt {
            s.p_d = (1.0 - d.w_p) * s.p_d + d.w_p * s.p_a;
        }
        action
    }

    /// The caller dropped an admitted arrival at the hard limit: ns-2 treats
    /// that as a forced drop and restarts the count.
    pub fn on_overflow(&mut self) {
        self.state.reset_count();
    }

    /// A packet left the queue, which now holds `backlog`.
    pub fn on_departure(&mut self, now: Time, backlog: Backlog) {
        match self.params.idle_decay {
            IdleDecay::Ns2 => self.state.idle_since = None,
            IdleDecay::Paper if backlog.pkts == 0 => self.state.idle_since = Some(now),
            IdleDecay::Paper | IdleDecay::None => {}
        }
    }

    /// A dequeue found nothing: the link goes idle.
    pub fn on_link_idle(&mut self, now: Time) {
        if self.params.idle_decay == IdleDecay::Ns2 && self.state.idle_since.is_none() {
            self.state.idle_since = Some(now);
        }
    }

    pub fn next_timer(&self) -> Option<Time> {
        self.state.next_update
    }

    /// The periodic update due at or before `now`, the queue holding
    /// `backlog`.
    pub fn on_timer(&mut self, now: Time, backlog: Backlog) {
        let Some(due) = self.state.next_update.filter(|&due| due <= now) else {
            return;
        };
        let interval = match self.params.adapt {
            Adapt::Ared(a) => {
                let avg = self.avg_now(now, backlog);
                let s = &mut self.state;
                if let Some(max_p) = ared_step(&a, s.max_p, avg, s.min_th, s.max_th) {
                    s.max_p = max_p;
                    s.last_change = now;
                }
                a.interval
            }
            Adapt::Feng(FengParams { dynamic: Some(d), .. }) => {
                let floor = self.params.one_packet();
                let ceiling = limit_value(self.params.limit).map(|lim| lim - self.span);
                let s = &mut self.state;
                s.min_th = dyn_thresholds_step(&d, s.p_d, s.min_th, floor, ceiling);
                s.max_th = s.min_th + self.span;
                d.interval
            }
            Adapt::Feng(_) | Adapt::None => return,
        };
        self.state.next_update = Some(next_period(due, interval, now));
    }

    /// Reports the traced quantities, the queue holding `backlog`.
    pub fn traced(&self, backlog: Backlog, out: &mut dyn FnMut(&'static str, f64)) {
        let s = &self.state;
        out("avg", s.avg);
        out("q", self.unit.of(backlog));
        out("p_b", s.p_b);
        out("p_a", s.p_a);
        out("count", s.count as f64);
        out("max_p", s.max_p);
        out("min_th", s.min_th);
        out("max_th", s.max_th);
        if self.params.uses_dynamic_thresholds() {
            out("P_d", s.p_d);
        }
    }
}

/// RED over a FIFO with a hard limit: the `red`, `ared` and `feng-ared`
/// disciplines.
#[derive(Clone, Debug)]
pub struct Red {
    core: RedCore,
    fifo: Fifo,
    rng: Rng,
}

impl Red {
    pub fn new(params: RedParams, link: LinkInfo, seed: u64) -> Result<Red, ParamError> {
        Ok(Red {
            core: RedCore::new(params, link)?,
            fifo: Fifo::new(),
            rng: <Rng as rand::SeedableRng>::seed_from_u64(seed),
        })
    }

    /// The parameters after "auto" is resolved, as constructed; the adapted
    /// `max_p` and thresholds are in [`Red::state`].
    pub fn effective(&self) -> RedParams {
        *self.core.effective()
    }

    pub fn state(&self) -> &RedState {
        self.core.state()
    }

    /// The enqueue rule with the uniform draw in [0, 1) given, for scripted
    /// tests.
    pub fn enqueue_with_draw(&mut self, mut pkt: Packet, now: Time, u: f64) -> Verdict {
        let backlog = self.fifo.backlog();
        let can_mark = self.core.params.ecn && pkt.ecn.is_ecn_capable();
        let action = self.core.on_arrival(now, backlog, pkt.size_bytes, can_mark, u);
        let admitted = match action {
            RedAction::Drop(reason) => return Verdict::Dropped(reason),
            RedAction::Admit => Verdict::Enqueued,
            RedAction::Mark => Verdict::Marked,
        };
        if !self.core.params.limit.admits(backlog, pkt.size_bytes) {
            self.core.on_overflow();
            return Verdict::Dropped(DropReason::Overflow);
        }
        if admitted == Verdict::Marked {
            pkt.ecn = Ecn::Ce;
        }
        self.fifo.push_back(pkt);
        admitted
    }
}

impl QueueDisc for Red {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now: Time, _fx: &mut Effects) -> Verdict {
        let u = rng::uniform(&mut self.rng);
        self.enqueue_with_draw(pkt, now, u)
    }

    #[inline]
    fn dequeue(&mut self, now: Time, _fx: &mut Effects) -> Option<Packet> {
        let pkt = self.fifo.pop_front();
        match pkt {
            Some(_) => self.core.on_departure(now, self.fifo.backlog()),
            None => self.core.on_link_idle(now),
        }
        pkt
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    fn next_timer(&self) -> Option<Time> {
        self.core.next_timer()
    }

    fn on_timer(&mut self, now: Time) {
        self.core.on_timer(now, self.fifo.backlog());
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        self.core.traced(self.fifo.backlog(), out);
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::ared::DynThresholds;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Constants

    /// 10 Mb/s with 500 B mean packets: C = 2500 packets/s, 400 us each.
    const LINK_10M: LinkInfo = LinkInfo {
        rate_bps: 10_000_000,
        mtu_bytes: 1500,
    };
    const LINK_1M5: LinkInfo = LinkInfo {
        rate_bps: 1_500_000,
        mtu_bytes: 1500,
    };
    /// A draw that hits no p_a below 0.999999.
    const MISS: f64 = 0.999_999;
    /// A draw that hits every p_a above 0.
    const HIT: f64 = 0.0;
    const SIZE: u32 = 500;

    // Helpers

    fn pkt(id: u64) -> Packet {
        sized(id, SIZE)
    }

    fn sized(id: u64, size_bytes: u32) -> Packet {
        Packet {
            id,
            size_bytes,
            ..Packet::default()
        }
    }

    fn ect(id: u64) -> Packet {
        Packet {
            ecn: Ecn::Ect0,
            ..pkt(id)
        }
    }

    fn ms(t: u64) -> Time {
        Time::from_millis(t)
    }

    /// Limit 100 packets, thresholds 5 / 15, max_p 0.1, w_q 0.002.
    fn red_5_15() -> RedParams {
        RedParams::red(
            Limit::Packets(100),
            Threshold::Packets(5.0),
            Threshold::Packets(15.0),
            0.1,
            Weight::Value(0.002),
        )
    }

    /// avg = q at every arrival, so a test sets avg by what it queues.
    fn instantaneous(p: RedParams) -> RedParams {
        RedParams {
            avg_of: AvgOf::Instantaneous,
            ..p
        }
    }

    /// Adaptive RED with thresholds 5 / 15, max_p 0.1, avg = q and no
    /// count correction, so p_a = p_b and adaptation is easy to follow.
    fn ared_5_15(update: AredUpdate, gentle_slope: GentleSlope) -> RedParams {
        RedParams {
            min_th: Threshold::Packets(5.0),
            max_th: Threshold::Packets(15.0),
            drop_spacing: DropSpacing::None,
            adapt: Adapt::Ared(AredParams {
                update,
                gentle_slope,
                ..AredParams::default()
            }),
            ..instantaneous(RedParams::ared(Limit::Packets(100)))
        }
    }

    fn red(params: RedParams) -> Red {
        Red::new(params, LINK_10M, 1).unwrap()
    }

    /// A busy RED holding `n` packets of 500 B; the exempt first arrival
    /// above min_th has not happened yet.
    fn red_holding(params: RedParams, n: u64) -> Red {
        let mut q = red(params);
        for id in 0..n {
            q.fifo.push_back(pkt(1000 + id));
        }
        q.core.state.idle_since = None;
        q
    }

    /// As [`red_holding`], with avg already past min_th (`old` set).
    fn red_holding_past_first(params: RedParams, n: u64) -> Red {
        let mut q = red_holding(params, n);
        q.core.state.old = true;
        q
    }

    /// A RED whose busy period left avg at `avg` and whose queue emptied
    /// (and link went idle) at `t`.
    fn red_idle_from(params: RedParams, avg: f64, t: Time) -> Red {
        let mut q = red(params);
        assert_eq!(q.enqueue_with_draw(pkt(0), Time::ZERO, MISS), Verdict::Enqueued);
        q.core.state.avg = avg;
        let mut fx = Effects::default();
        assert!(q.dequeue(t, &mut fx).is_some());
        assert!(q.dequeue(t, &mut fx).is_none());
        q
    }

    /// Effective parameters and a state with avg fixed at `avg`, past the
    /// exempt arrival and just after a drop (count 0), for `red_decide`.
    fn in_band_state(params: RedParams, avg: f64) -> (RedParams, RedState) {
        let core = RedCore::new(params, LINK_10M).unwrap();
        let mut s = *core.state();
        s.avg = avg;
        s.old = true;
        s.count = 0;
        (*core.effective(), s)
    }

    #[track_caller]
    fn offer(q: &mut Red, p: Packet, now: Time, u: f64) -> Verdict {
        q.enqueue_with_draw(p, now, u)
    }

    #[track_caller]
    fn offer_n(q: &mut Red, n: u64, now: Time) {
        for id in 0..n {
            assert_eq!(offer(q, pkt(id), now, MISS), Verdict::Enqueued, "arrival {id}");
        }
    }

    #[track_caller]
    fn dequeue_n(q: &mut Red, n: u32, now: Time) {
        for _ in 0..n {
            assert!(q.dequeue(now, &mut Effects::default()).is_some());
        }
    }

    #[track_caller]
    fn assert_close(got: f64, want: f64, tol: f64) {
        assert!((got - want).abs() <= tol, "got {got}, want {want} (tol {tol})");
    }

    fn traced(q: &Red) -> Vec<(&'static str, f64)> {
        let mut out = Vec::new();
        q.traced(&mut |k, v| out.push((k, v)));
        out
    }

    /// One gap between drops at constant p_b, all its arrivals driven by one
    /// uniform `v`: each arrival that survives passes on the part of its draw
    /// above p_a, rescaled to [0, 1), which is again uniform. So the gap is
    /// n exactly when v falls in the n-th slice of [0, 1) whose width is
    /// P(gap = n), and a grid of v counts the distribution exactly.
    fn gap_from_one_uniform(p: &RedParams, s: &mut RedState, v: f64) -> u32 {
        let mut u = v;
        for n in 1..=1000 {
            match red_decide(p, s, 10, SIZE, false, u) {
                RedAction::Drop(DropReason::Early) => return n,
                RedAction::Admit => u = (u - s.p_a) / (1.0 - s.p_a),
                other => panic!("unexpected {other:?}"),
            }
        }
        panic!("no drop in 1000 arrivals")
    }

    /// Gap lengths over the grid v = (i + 1/2) / n_draws, i < n_draws.
    fn gap_histogram(params: RedParams, n_draws: u32) -> std::collections::BTreeMap<u32, u32> {
        // avg 6 between 5 and 15 with max_p 0.1: p_b = 0.1 * 1/10 = 0.01.
        let (p, mut s) = in_band_state(params, 6.0);
        let mut hist = std::collections::BTreeMap::new();
        for i in 0..n_draws {
            let v = (i as f64 + 0.5) / n_draws as f64;
            *hist.entry(gap_from_one_uniform(&p, &mut s, v)).or_insert(0) += 1;
            assert_eq!(s.count, 0, "a drop resets the count");
        }
        hist
    }

    // Averaging (T1, T2, T3)

    #[test]
    fn test_ewma_every_arrival_sees_10_matches_t1() {
        // T1: avg_k = 10 (1 - 0.998^k).
        let mut avg = 0.0;
        let mut got = Vec::new();
        for k in 1..=1000 {
            avg = red_ewma(avg, 0.002, 10.0, 1);
            if [1, 2, 10, 100, 1000].contains(&k) {
                got.push(avg);
            }
        }
        let want = [0.02, 0.03996, 0.1982096, 1.8143320, 8.6493548];
        for (g, w) in got.iter().zip(want) {
            assert_close(*g, w, 5e-8);
        }
    }

    #[test]
    fn test_empty_start_arrivals_see_0_to_5_match_t2() {
        // T2: avg_k = 0.998 avg_(k-1) + 0.002 q_k with q = 0..5; the first
        // arrival at t = 0 finds the link idle for 0 packet times (k = 1).
        // T2 prints 0.01996004 for 0.019960039984, hence the tolerance.
        let mut q = red(red_5_15());
        let want = [0.0, 0.002, 0.005996, 0.011984008, 0.01996004, 0.02992012];
        for (id, w) in want.iter().enumerate() {
            assert_eq!(offer(&mut q, pkt(id as u64), Time::ZERO, MISS), Verdict::Enqueued);
            assert_close(q.state().avg, *w, 1e-9);
        }
    }

    #[test]
    fn test_idle_packet_times_exact() {
        // 10 Mb/s, 500 B: 400 us per packet. 10 ms -> 25; 0.3 ms -> 0;
        // exactly 400 us -> 1, one ns less -> 0.
        let t = |ns| idle_packet_times(10_000_000, 500, Duration(ns));
        assert_eq!(t(10_000_000), 25);
        assert_eq!(t(300_000), 0);
        assert_eq!(t(400_000), 1);
        assert_eq!(t(399_999), 0);
        assert_eq!(idle_packet_times(u64::MAX, 1, Duration(u64::MAX)), u64::MAX);
    }

    #[test]
    fn test_ns2_idle_10ms_arrival_decays_26_steps_t3() {
        // T3: m = floor(2500/s * 10 ms) = 25; avg = 10 * 0.998^26 = 9.4927944.
        let mut q = red_idle_from(red_5_15(), 10.0, Time::from_secs(1));
        offer(&mut q, pkt(1), Time::from_secs(1) + Duration::from_millis(10), MISS);
        assert_close(q.state().avg, 9.4927944, 5e-8);
        assert_close(q.state().avg, 10.0 * 0.998f64.powi(26), 1e-12);
    }

    #[test]
    fn test_ns2_idle_shorter_than_packet_time_one_step_t3() {
        // T3: idle 0.3 ms -> m = 0 -> avg = 10 * 0.998 = 9.98.
        let mut q = red_idle_from(red_5_15(), 10.0, Time::from_secs(1));
        offer(&mut q, pkt(1), Time::from_secs(1) + Duration::from_micros(300), MISS);
        assert_close(q.state().avg, 9.98, 1e-12);
    }

    #[test]
    fn test_paper_idle_10ms_arrival_decays_25_steps_t3() {
        // T3, paper variant: 10 * 0.998^25 = 9.5118180; idle 0.3 ms: m = 0,
        // avg unchanged.
        let paper = RedParams {
            idle_decay: IdleDecay::Paper,
            ..red_5_15()
        };
        let mut q = red_idle_from(paper, 10.0, Time::from_secs(1));
        offer(&mut q, pkt(1), Time::from_secs(1) + Duration::from_millis(10), MISS);
        assert_close(q.state().avg, 9.5118180, 5e-8);

        let mut q = red_idle_from(paper, 10.0, Time::from_secs(1));
        offer(&mut q, pkt(1), Time::from_secs(1) + Duration::from_micros(300), MISS);
        assert_eq!(q.state().avg, 10.0);
    }

    #[test]
    fn test_paper_idle_dropped_arrival_restarts_idle_clock() {
        // Paper mode, idle from 1 s. Arrival at 1.010 s: 10 * 0.998^25.
        // A second arrival at 1.020 s to the still-empty queue decays only
        // the 25 packet times since the first: 10 * 0.998^50.
        let paper = RedParams {
            idle_decay: IdleDecay::Paper,
            limit: Limit::Bytes(600),
            min_th: Threshold::Bytes(100.0),
            max_th: Threshold::Bytes(300.0),
            ..red_5_15()
        };
        let mut q = red_idle_from(paper, 10.0, Time::from_secs(1));
        let big = sized(1, 700);
        let t1 = Time::from_secs(1) + Duration::from_millis(10);
        assert_eq!(offer(&mut q, big, t1, MISS), Verdict::Dropped(DropReason::Overflow));
        offer(&mut q, pkt(2), t1 + Duration::from_millis(10), MISS);
        assert_close(q.state().avg, 10.0 * 0.998f64.powi(50), 1e-12);
    }

    #[test]
    fn test_no_idle_decay_idle_arrival_takes_one_step() {
        // idle_decay = none: 10 ms idle changes nothing; 10 * 0.998 = 9.98.
        let none = RedParams {
            idle_decay: IdleDecay::None,
            ..red_5_15()
        };
        let mut q = red_idle_from(none, 10.0, Time::from_secs(1));
        offer(&mut q, pkt(1), Time::from_secs(1) + Duration::from_millis(10), MISS);
        assert_close(q.state().avg, 9.98, 1e-12);
    }

    #[test]
    fn test_instantaneous_avg_is_backlog_seen() {
        let mut q = red_holding(instantaneous(red_5_15()), 3);
        offer(&mut q, pkt(1), ms(1), MISS);
        assert_eq!(q.state().avg, 3.0);
        assert_eq!(q.effective().w_q, Weight::Value(1.0));
    }

    // Automatic parameters (T4, T5)

    #[test]
    fn test_auto_params_10mbps_match_t4() {
        // T4: C = 2500/s; min_th = max(5, 0.005 * 2500 / 2) = 6.25, max_th
        // 18.75; w_q = 1 - exp(-1/2500) = 3.99920e-4.
        let eff = RedParams::ared(Limit::Packets(100)).effective(LINK_10M).unwrap();
        assert_eq!(eff.min_th, Threshold::Packets(6.25));
        assert_eq!(eff.max_th, Threshold::Packets(18.75));
        let Weight::Value(w) = eff.w_q else { panic!("auto left") };
        assert_close(w, 3.99920e-4, 5e-10);
    }

    #[test]
    fn test_auto_params_10mbps_byte_queue_match_t4() {
        // T4 in bytes: 6.25 * 500 = 3125 B, 18.75 * 500 = 9375 B.
        let eff = RedParams::ared(Limit::Bytes(100_000)).effective(LINK_10M).unwrap();
        assert_eq!(eff.min_th, Threshold::Bytes(3125.0));
        assert_eq!(eff.max_th, Threshold::Bytes(9375.0));
    }

    #[test]
    fn test_auto_params_1_5mbps_match_t5() {
        // T5: C = 375/s; 0.005 * 375 / 2 = 0.94 < 5 -> 5, 15; w_q =
        // 1 - exp(-1/375) = 2.663114e-3.
        let eff = RedParams::ared(Limit::Packets(100)).effective(LINK_1M5).unwrap();
        assert_eq!(eff.min_th, Threshold::Packets(5.0));
        assert_eq!(eff.max_th, Threshold::Packets(15.0));
        let Weight::Value(w) = eff.w_q else { panic!("auto left") };
        assert_close(w, 2.663114e-3, 5e-10);
    }

    #[test]
    fn test_auto_max_th_above_limit_rejected() {
        // Gentle: 2 * 18.75 = 37.5 > 30.
        let err = Red::new(RedParams::ared(Limit::Packets(30)), LINK_10M, 1).unwrap_err();
        assert_eq!(err.param, "max_th");
        assert!(err.message.contains("after resolving"), "{}", err.message);
    }

    // The drop decision (T6, T7)

    #[test]
    fn test_no_wait_p_a_matches_t6() {
        // T6: p_b = 0.01; p_a = p_b / (1 - count p_b): count 1 -> 0.010101,
        // 50 -> 0.02, 100 and above -> 1.
        let (p, s0) = in_band_state(red_5_15(), 6.0);
        for (count, want) in [(1, 0.01 / 0.99), (50, 0.02), (100, 1.0), (150, 1.0)] {
            let mut s = RedState { count: count - 1, ..s0 };
            red_decide(&p, &mut s, 10, SIZE, false, MISS);
            assert_eq!(s.p_b, 0.01);
            assert_close(s.p_a, want, 1e-15);
        }
    }

    #[test]
    fn test_wait_p_a_matches_t6() {
        // T6, wait: 0 while count p_b < 1; p_b / (2 - count p_b) below 2;
        // count 99 -> 0, 100 -> 0.01, 150 -> 0.02, 200 -> 1.
        let wait = RedParams {
            wait: true,
            ..red_5_15()
        };
        let (p, s0) = in_band_state(wait, 6.0);
        for (count, want) in [(99, 0.0), (100, 0.01), (150, 0.02), (200, 1.0)] {
            let mut s = RedState { count: count - 1, ..s0 };
            red_decide(&p, &mut s, 10, SIZE, false, MISS);
            assert_close(s.p_a, want, 1e-15);
        }
    }

    #[test]
    fn test_constant_p_b_no_wait_gap_uniform_1_to_99_t6() {
        // P(gap > n) = prod_{k<=n} (1 - (k+1) p_b) / (1 - k p_b)
        //            = (1 - (n+1) p_b) / (1 - p_b) = (99 - n) / 99,
        // so on a grid of 99 * 10 draws every gap 1..=99 occurs 10 times.
        let hist = gap_histogram(red_5_15(), 990);
        assert_eq!(hist.len(), 99);
        assert!(hist.iter().all(|(&n, &c)| (1..=99).contains(&n) && c == 10), "{hist:?}");
        let mean = hist.iter().map(|(&n, &c)| (n * c) as f64).sum::<f64>() / 990.0;
        assert_eq!(mean, 50.0);
    }

    #[test]
    fn test_constant_p_b_wait_gap_uniform_100_to_199_t6() {
        // Wait: P(gap > n) = 1 for n < 100, then (2 - (n+1) p_b) / (2 - 100 p_b)
        // = (199 - n) / 100: every gap 100..=199 occurs 10 times in 1000.
        let wait = RedParams {
            wait: true,
            ..red_5_15()
        };
        let hist = gap_histogram(wait, 1000);
        assert_eq!(hist.len(), 100);
        assert!(
            hist.iter().all(|(&n, &c)| (100..=199).contains(&n) && c == 10),
            "{hist:?}"
        );
        let mean = hist.iter().map(|(&n, &c)| (n * c) as f64).sum::<f64>() / 1000.0;
        assert_eq!(mean, 149.5);
    }

    #[test]
    fn test_gentle_base_prob_matches_t7() {
        // T7: max_p 0.1, max_th 15: p(15) = 0.1, p(22.5) = 0.1 + 0.9 * 7.5/15
        // = 0.55, p(30) = 1, p(31) = 1.
        let p = |avg| red_base_prob(avg, 5.0, 15.0, 0.1, Some(30.0), 0.1);
        assert_close(p(15.0), 0.1, 1e-15);
        assert_close(p(22.5), 0.55, 1e-15);
        assert_eq!(p(30.0), 1.0);
        assert_eq!(p(31.0), 1.0);
        // Not gentle: 1 from max_th on; linear below: 0.1 * 5/10 = 0.05.
        assert_eq!(red_base_prob(15.0, 5.0, 15.0, 0.1, None, 0.1), 1.0);
        assert_close(red_base_prob(10.0, 5.0, 15.0, 0.1, None, 0.1), 0.05, 1e-15);
        assert_eq!(red_base_prob(4.9, 5.0, 15.0, 0.1, None, 0.1), 0.0);
    }

    /// Brandauer et al.'s GRED in a limit of 20 (packets or bytes x 1000):
    /// thresholds 3/20 and 13/20 of it, max_p 0.1, p_a = p_b.
    fn gred_3_13_of_20(bytes: bool) -> RedParams {
        let (limit, th) = if bytes {
            (Limit::Bytes(20_000), Threshold::Bytes as fn(f64) -> Threshold)
        } else {
            (Limit::Packets(20), Threshold::Packets as fn(f64) -> Threshold)
        };
        let k = if bytes { 1000.0 } else { 1.0 };
        RedParams {
            gentle: Gentle::ToLimit,
            drop_spacing: DropSpacing::None,
            ..RedParams::red(limit, th(3.0 * k), th(13.0 * k), 0.1, Weight::Value(0.002))
        }
    }

    #[test]
    fn test_gentle_to_limit_base_prob_reaches_1_at_the_limit() {
        // min 3, max 13, limit 20, max_p 0.1: the line from (13, 0.1) to (20, 1):
        // p(16.5) = 0.1 + 0.9 * 3.5/7 = 0.55; p(19.3) = 0.1 + 0.9 * 6.3/7 = 0.91.
        let end = red_gentle_end(Gentle::ToLimit, 13.0, Limit::Packets(20));
        assert_eq!(end, Some(20.0));
        let p = |avg| red_base_prob(avg, 3.0, 13.0, 0.1, end, 0.1);
        assert_close(p(8.0), 0.05, 1e-15);
        assert_close(p(13.0), 0.1, 1e-15);
        assert_close(p(16.5), 0.55, 1e-15);
        assert_close(p(19.3), 0.91, 1e-15);
        assert_eq!(p(20.0), 1.0);
        // ns-2's line would already be at 1 at 2 * 13 = 26 > 20 only; at 16.5 it is
        // 0.1 + 0.9 * 3.5/13 = 0.34230769...
        let ns2 = red_gentle_end(Gentle::TwiceMaxTh, 13.0, Limit::Packets(20));
        assert_eq!(ns2, Some(26.0));
        assert_close(
            red_base_prob(16.5, 3.0, 13.0, 0.1, ns2, 0.1),
            0.1 + 0.9 * 3.5 / 13.0,
            1e-15,
        );
        assert_eq!(red_gentle_end(Gentle::Off, 13.0, Limit::Packets(20)), None);
    }

    #[test]
    fn test_gentle_to_limit_decides_in_the_limits_unit() {
        for bytes in [false, true] {
            let k = if bytes { 1000.0 } else { 1.0 };
            let (p, s0) = in_band_state(gred_3_13_of_20(bytes), 16.5 * k);
            let mut s = s0;
            assert_eq!(
                red_decide(&p, &mut s, 16, SIZE, false, 0.549),
                RedAction::Drop(DropReason::Early)
            );
            assert_close(s.p_b, 0.55, 1e-15);
            assert_close(s.p_a, 0.55, 1e-15);
            let mut s = s0;
            assert_eq!(red_decide(&p, &mut s, 16, SIZE, false, 0.551), RedAction::Admit);
        }
    }

    #[test]
    fn test_gentle_to_limit_forced_only_at_the_limit() {
        let mut q = red_holding_past_first(instantaneous(gred_3_13_of_20(false)), 19);
        // 19 < 20: early region, p_a = p_b = 0.1 + 0.9 * 6/7 = 0.8714...; MISS survives.
        assert_eq!(offer(&mut q, pkt(1), ms(1), MISS), Verdict::Enqueued);
        assert_close(q.state().p_b, 0.1 + 0.9 * 6.0 / 7.0, 1e-15);
        // q = 20 = the limit: forced.
        assert_eq!(offer(&mut q, pkt(2), ms(2), MISS), Verdict::Dropped(DropReason::Forced));
        assert_eq!(q.state().p_a, 1.0);
    }

    #[test]
    fn test_drop_spacing_none_uses_p_b_whatever_the_count() {
        // avg 10: p_b = 0.05; count 50 would give 1 with the correction.
        let none = RedParams {
            drop_spacing: DropSpacing::None,
            ..red_5_15()
        };
        let (p, s0) = in_band_state(none, 10.0);
        let mut s = RedState { count: 49, ..s0 };
        red_decide(&p, &mut s, 10, SIZE, false, MISS);
        assert_close(s.p_a, 0.05, 1e-15);
    }

    #[test]
    fn test_between_thresholds_hit_drops_early_and_resets_count() {
        // q = 10: p_b = 0.05, count 1: p_a = 0.05 / 0.95; u = 0.05 < 0.0526.
        let mut q = red_holding_past_first(instantaneous(red_5_15()), 10);
        assert_eq!(offer(&mut q, pkt(1), ms(1), 0.05), Verdict::Dropped(DropReason::Early));
        assert_eq!((q.state().count, q.state().count_bytes), (0, 0));
        // u = 0.06 misses the next p_a = 0.05 / 0.95 (count 1 again).
        assert_eq!(offer(&mut q, pkt(2), ms(2), 0.06), Verdict::Enqueued);
        assert_eq!(q.state().count, 1);
    }

    #[test]
    fn test_above_max_th_drops_forced_and_resets_count() {
        let mut q = red_holding_past_first(instantaneous(red_5_15()), 15);
        q.core.state.count = 7;
        assert_eq!(offer(&mut q, pkt(1), ms(1), MISS), Verdict::Dropped(DropReason::Forced));
        assert_eq!(q.state().count, 0);
        assert_eq!(q.state().p_a, 1.0);
    }

    #[test]
    fn test_gentle_at_twice_max_th_drops_forced() {
        let gentle = RedParams {
            gentle: Gentle::TwiceMaxTh,
            drop_spacing: DropSpacing::None,
            ..instantaneous(red_5_15())
        };
        let mut q = red_holding_past_first(gentle, 29);
        // 29 < 30: early region, p_a = p_b = 0.1 + 0.9 * 14/15 = 0.94; MISS survives.
        assert_eq!(offer(&mut q, pkt(1), ms(1), MISS), Verdict::Enqueued);
        assert_eq!(offer(&mut q, pkt(2), ms(2), MISS), Verdict::Dropped(DropReason::Forced));
    }

    #[test]
    fn test_hard_limit_drops_overflow_and_resets_count() {
        // w_q tiny: avg stays far below min_th 1 while 3 packets fill the limit.
        let p = RedParams::red(
            Limit::Packets(3),
            Threshold::Packets(1.0),
            Threshold::Packets(3.0),
            0.1,
            Weight::Value(1e-6),
        );
        let mut q = red(p);
        offer_n(&mut q, 3, ms(1));
        assert_eq!(q.state().count, 3);
        assert_eq!(
            offer(&mut q, pkt(9), ms(2), MISS),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(q.state().count, 0);
        assert_eq!(q.backlog(), Backlog { pkts: 3, bytes: 1500 });
    }

    // ns-2's exemptions

    #[test]
    fn test_one_packet_queued_above_max_th_not_dropped() {
        // avg 20 > max_th 15 but one packet queued: ns-2 admits. avg becomes
        // 0.998 * 20 + 0.002 * 1 = 19.962. With two queued: forced.
        let mut q = red_holding_past_first(red_5_15(), 1);
        q.core.state.avg = 20.0;
        assert_eq!(offer(&mut q, pkt(1), ms(1), HIT), Verdict::Enqueued);
        assert_close(q.state().avg, 19.962, 1e-12);
        assert!(!q.state().old);
        assert_eq!(offer(&mut q, pkt(2), ms(2), HIT), Verdict::Dropped(DropReason::Forced));
    }

    #[test]
    fn test_first_arrival_above_min_th_exempt_count_restarts_at_1() {
        let mut q = red_holding(instantaneous(red_5_15()), 10);
        q.core.state.count = 40;
        assert_eq!(offer(&mut q, pkt(1), ms(1), HIT), Verdict::Enqueued);
        assert_eq!((q.state().count, q.state().old, q.state().p_a), (1, true, 0.0));
        // Next: count 2, p_b = 0.06, p_a = 0.06 / 0.88; HIT drops.
        assert_eq!(offer(&mut q, pkt(2), ms(2), HIT), Verdict::Dropped(DropReason::Early));
    }

    #[test]
    fn test_exempt_first_off_first_in_band_gets_p_b() {
        // Paper: count = -1 below min_th, so the first arrival in the band
        // has count 0 and p_a = p_b = 0.05 (q = 10); the next has count 1,
        // p_b = 0.06, p_a = 0.06 / 0.94.
        let paper = RedParams {
            exempt_first: false,
            ..instantaneous(red_5_15())
        };
        let mut q = red_holding(paper, 0);
        assert_eq!(q.state().count, -1);
        offer(&mut q, pkt(0), ms(1), MISS);
        assert_eq!(q.state().count, -1);
        // The queue now holds 1 + 9 = 10 packets.
        for id in 100..109 {
            q.fifo.push_back(pkt(id));
        }
        offer(&mut q, pkt(1), ms(2), MISS);
        assert_eq!(q.state().count, 0);
        assert_close(q.state().p_a, 0.05, 1e-15);
        offer(&mut q, pkt(2), ms(3), MISS);
        assert_close(q.state().p_a, 0.06 / 0.94, 1e-15);
    }

    #[test]
    fn test_exempt_first_off_one_packet_queued_above_max_th_forced() {
        let paper = RedParams {
            exempt_first: false,
            ..red_5_15()
        };
        let mut q = red_holding(paper, 1);
        q.core.state.avg = 20.0;
        assert_eq!(offer(&mut q, pkt(1), ms(1), MISS), Verdict::Dropped(DropReason::Forced));
    }

    // Byte mode and byte queues

    #[test]
    fn test_byte_mode_counts_bytes_and_scales_by_size() {
        // p_b = 0.01 (avg 6). The count is floor(bytes / 500).
        let bytes = RedParams {
            byte_mode: true,
            ..red_5_15()
        };
        let (p, s0) = in_band_state(bytes, 6.0);
        let decide = |count_bytes: u64, size: u32| {
            let mut s = RedState { count_bytes, ..s0 };
            red_decide(&p, &mut s, 10, size, false, MISS);
            s.p_a
        };
        // 1000 + 500 B: c = 3, p = 0.01 / 0.97 = 0.0103093, * 500/500.
        assert_close(decide(1000, 500), 0.01 / 0.97, 1e-15);
        // 500 + 1000 B: c = 3, then * 1000/500: 0.0206186.
        assert_close(decide(500, 1000), 0.02 / 0.97, 1e-15);
        // 0 + 100 B: c = 0 (integer division), p = 0.01 * 100/500 = 0.002.
        assert_close(decide(0, 100), 0.002, 1e-15);
        // c p_b >= 1 gives 1, not scaled: 99 500 + 500 B -> c = 200.
        assert_eq!(decide(99_500, 100), 1.0);
    }

    #[test]
    fn test_byte_queue_avg_and_thresholds_in_bytes() {
        // Byte limit: thresholds 2500 / 7500 B. Holding 10 x 500 B = 5000 B:
        // p_b = 0.1 * 2500 / 5000 = 0.05; q traced in bytes.
        let p = instantaneous(RedParams::red(
            Limit::Bytes(10_000),
            Threshold::Bytes(2500.0),
            Threshold::Bytes(7500.0),
            0.1,
            Weight::Value(0.002),
        ));
        let mut q = red_holding_past_first(p, 10);
        offer(&mut q, pkt(1), ms(1), MISS);
        assert_eq!(q.state().avg, 5000.0);
        assert_close(q.state().p_b, 0.05, 1e-15);
        assert!(traced(&q).contains(&("q", 5500.0)));
    }

    #[test]
    fn test_byte_queue_one_packet_queued_exempt_by_packets() {
        // One 9000 B packet queued: avg 9000 B > max_th 7500 B, but only one
        // packet is queued, so ns-2's rule (counted in packets) admits.
        let p = instantaneous(RedParams::red(
            Limit::Bytes(20_000),
            Threshold::Bytes(2500.0),
            Threshold::Bytes(7500.0),
            0.1,
            Weight::Value(0.002),
        ));
        let mut q = red(p);
        q.fifo.push_back(sized(0, 9000));
        assert_eq!(offer(&mut q, pkt(1), ms(1), HIT), Verdict::Enqueued);
        assert_eq!(offer(&mut q, pkt(2), ms(2), HIT), Verdict::Dropped(DropReason::Forced));
    }

    // ECN

    fn ecn(above: EcnAboveMaxTh, gentle: bool) -> RedParams {
        RedParams {
            ecn: true,
            ecn_above_max_th: above,
            gentle: if gentle { Gentle::TwiceMaxTh } else { Gentle::Off },
            ..instantaneous(red_5_15())
        }
    }

    #[test]
    fn test_ecn_between_thresholds_hit_marks_ect_drops_not_ect() {
        // q = 10, p_a = 0.05 / 0.95: HIT.
        let mut q = red_holding_past_first(ecn(EcnAboveMaxTh::Drop, false), 10);
        assert_eq!(offer(&mut q, ect(1), ms(1), HIT), Verdict::Marked);
        assert_eq!(q.state().count, 0);
        assert_eq!(offer(&mut q, pkt(2), ms(2), HIT), Verdict::Dropped(DropReason::Early));
        let mut fx = Effects::default();
        let ids: Vec<(u64, Ecn)> = std::iter::from_fn(|| q.dequeue(ms(3), &mut fx))
            .map(|p| (p.id, p.ecn))
            .collect();
        assert_eq!(ids.last(), Some(&(1, Ecn::Ce)));
        assert_eq!(ids.len(), 11);
    }

    #[test]
    fn test_ecn_off_ect_packet_dropped() {
        let p = RedParams {
            ecn: false,
            ..ecn(EcnAboveMaxTh::Mark, false)
        };
        let mut q = red_holding_past_first(p, 10);
        assert_eq!(offer(&mut q, ect(1), ms(1), HIT), Verdict::Dropped(DropReason::Early));
    }

    #[test]
    fn test_ecn_above_max_th_drop_forces_drop_of_ect() {
        let mut q = red_holding_past_first(ecn(EcnAboveMaxTh::Drop, false), 15);
        assert_eq!(offer(&mut q, ect(1), ms(1), MISS), Verdict::Dropped(DropReason::Forced));
    }

    #[test]
    fn test_ecn_above_max_th_mark_marks_ect_and_resets_count() {
        let mut q = red_holding_past_first(ecn(EcnAboveMaxTh::Mark, false), 15);
        q.core.state.count = 5;
        assert_eq!(offer(&mut q, ect(1), ms(1), MISS), Verdict::Marked);
        assert_eq!(q.state().count, 0);
        assert_eq!(offer(&mut q, pkt(2), ms(2), MISS), Verdict::Dropped(DropReason::Forced));
    }

    #[test]
    fn test_ecn_gentle_region_hit_follows_ecn_above_max_th() {
        // q = 20 with gentle: p_b = 0.1 + 0.9 * 5/15 = 0.4, p_a = 0.4/0.6.
        let mut q = red_holding_past_first(ecn(EcnAboveMaxTh::Drop, true), 20);
        assert_eq!(offer(&mut q, ect(1), ms(1), HIT), Verdict::Dropped(DropReason::Early));
        assert_close(q.state().p_a, 0.4 / 0.6, 1e-15);
        let mut q = red_holding_past_first(ecn(EcnAboveMaxTh::Mark, true), 20);
        assert_eq!(offer(&mut q, ect(1), ms(1), HIT), Verdict::Marked);
    }

    // Adaptive RED (T9, T10 in ared.rs; here the timing)

    #[test]
    fn test_ared_timer_above_band_increases_below_decreases_t9() {
        let mut q = red(ared_5_15(AredUpdate::Timer, GentleSlope::Current));
        assert_eq!(q.next_timer(), Some(ms(500)));
        offer_n(&mut q, 13, ms(100));
        // At 0.5 s avg = q = 13 > 11: 0.1 + min(0.01, 0.025) = 0.11.
        q.on_timer(ms(500));
        assert_close(q.state().max_p, 0.11, 1e-15);
        assert_eq!(q.next_timer(), Some(ms(1000)));
        // At 1 s q = 3 < 9: 0.11 * 0.9 = 0.099.
        dequeue_n(&mut q, 10, ms(600));
        q.on_timer(ms(1000));
        assert_close(q.state().max_p, 0.099, 1e-15);
        // In the band [9, 11]: unchanged.
        offer_n(&mut q, 7, ms(1100));
        q.on_timer(ms(1500));
        assert_close(q.state().max_p, 0.099, 1e-15);
    }

    #[test]
    fn test_ared_timer_late_call_catches_up_deadline() {
        let mut q = red(ared_5_15(AredUpdate::Timer, GentleSlope::Current));
        q.on_timer(ms(400));
        assert_eq!(q.next_timer(), Some(ms(500)));
        q.on_timer(ms(1700));
        assert_eq!(q.next_timer(), Some(ms(2000)));
    }

    #[test]
    fn test_ared_timer_idle_link_sees_decayed_avg_decreases() {
        // avg 12 (above the band) left at 0.1 s, link idle since: at 0.5 s
        // m = 2500 * 0.4 = 1000, avg seen = 12 * 0.998^1000 = 1.62 < 9, so
        // max_p 0.1 -> 0.09; the stored avg is not touched.
        let p = RedParams {
            avg_of: AvgOf::Average,
            w_q: Weight::Value(0.002),
            ..ared_5_15(AredUpdate::Timer, GentleSlope::Current)
        };
        let mut q = red_idle_from(p, 12.0, ms(100));
        q.on_timer(ms(500));
        assert_close(q.state().max_p, 0.09, 1e-15);
        assert_eq!(q.state().avg, 12.0);
    }

    #[test]
    fn test_ared_arrival_changes_once_interval_passed_t9() {
        let mut q = red(ared_5_15(AredUpdate::Arrival, GentleSlope::Current));
        assert_eq!(q.next_timer(), None);
        offer_n(&mut q, 13, ms(100));
        assert_eq!(q.state().max_p, 0.1);
        // At exactly 0.5 s: not yet (now > last_change + interval is strict).
        offer(&mut q, pkt(20), ms(500), MISS);
        dequeue_n(&mut q, 1, ms(500));
        assert_eq!(q.state().max_p, 0.1);
        // 1 ns later, avg = 13 > 11: 0.11.
        let t = ms(500) + Duration(1);
        offer(&mut q, pkt(21), t, MISS);
        assert_close(q.state().max_p, 0.11, 1e-15);
        assert_eq!(q.state().last_change, t);
        // 0.9 s: within the interval of the change, avg 14: unchanged.
        offer(&mut q, pkt(22), ms(900), MISS);
        assert_close(q.state().max_p, 0.11, 1e-15);
        // 1.2 s, avg 10 in the band: unchanged, and last_change stays.
        dequeue_n(&mut q, 5, ms(1200));
        offer(&mut q, pkt(23), ms(1200), MISS);
        assert_close(q.state().max_p, 0.11, 1e-15);
        assert_eq!(q.state().last_change, t);
        // 1.3 s, avg 6 < 9: 0.11 * 0.9 = 0.099 at once.
        dequeue_n(&mut q, 5, ms(1300));
        offer(&mut q, pkt(24), ms(1300), MISS);
        assert_close(q.state().max_p, 0.099, 1e-15);
        assert_eq!(q.state().last_change, ms(1300));
    }

    #[track_caller]
    fn gentle_p_b_after_increase(slope: GentleSlope) -> f64 {
        let mut q = red(ared_5_15(AredUpdate::Timer, slope));
        offer_n(&mut q, 13, ms(100));
        q.on_timer(ms(500));
        assert_close(q.state().max_p, 0.11, 1e-15);
        // Arrivals see q = 13..=21; the last has avg 21 in the gentle region.
        offer_n(&mut q, 9, ms(600));
        assert_eq!(q.state().avg, 21.0);
        q.state().p_b
    }

    #[test]
    fn test_ared_gentle_slope_current_follows_adapted_max_p() {
        // 0.11 + (1 - 0.11) * (21 - 15)/15 = 0.466.
        assert_close(gentle_p_b_after_increase(GentleSlope::Current), 0.466, 1e-15);
    }

    #[test]
    fn test_ared_gentle_slope_initial_keeps_initial_max_p() {
        // ns-2: 0.1 + (1 - 0.1) * 6/15 = 0.46.
        assert_close(gentle_p_b_after_increase(GentleSlope::Initial), 0.46, 1e-15);
    }

    // Feng's adaptation (T12) and dynamic thresholds

    fn feng_5_15() -> RedParams {
        RedParams {
            gentle: Gentle::TwiceMaxTh,
            drop_spacing: DropSpacing::None,
            ..instantaneous(RedParams::feng(
                Limit::Packets(100),
                Threshold::Packets(5.0),
                Threshold::Packets(15.0),
                0.02,
                Weight::Value(0.002),
            ))
        }
    }

    #[test]
    fn test_feng_starts_between_first_arrival_divides_t12() {
        // T12: status starts Between; the first arrival (avg 0 < 5) moves it
        // to Below: 0.02 / 3 = 0.0066667. Further arrivals below: unchanged.
        let mut q = red(feng_5_15());
        assert_eq!(q.state().feng_status, FengStatus::Between);
        offer(&mut q, pkt(0), ms(1), MISS);
        assert_eq!(q.state().feng_status, FengStatus::Below);
        assert_close(q.state().max_p, 0.0066667, 5e-8);
        offer_n(&mut q, 3, ms(2));
        assert_close(q.state().max_p, 0.02 / 3.0, 1e-15);
    }

    #[test]
    fn test_feng_crossings_scale_max_p_once_each_t12() {
        let mut q = red(feng_5_15());
        // Arrivals see q = 0..=16: Below at 0 (/3), Between at 6, Above at 16 (*2).
        offer_n(&mut q, 17, ms(1));
        assert_eq!(q.state().feng_status, FengStatus::Above);
        assert_close(q.state().max_p, 0.02 / 3.0 * 2.0, 1e-15);
        // Back to 10: Between, max_p kept. Then 3: Below, / 3 again.
        dequeue_n(&mut q, 7, ms(2));
        offer(&mut q, pkt(30), ms(2), MISS);
        assert_eq!(q.state().feng_status, FengStatus::Between);
        assert_close(q.state().max_p, 0.02 / 3.0 * 2.0, 1e-15);
        dequeue_n(&mut q, 8, ms(3));
        offer(&mut q, pkt(31), ms(3), MISS);
        assert_eq!(q.state().feng_status, FengStatus::Below);
        assert_close(q.state().max_p, 0.02 / 3.0 * 2.0 / 3.0, 1e-15);
    }

    /// Feng with dynamic thresholds 10 / 30 (D = 20), max_p 0.3, avg = q,
    /// p_a = p_b, and w_p = 1 so P_d is the last arrival's p_a.
    fn feng_dynamic() -> RedParams {
        RedParams {
            min_th: Threshold::Packets(10.0),
            max_th: Threshold::Packets(30.0),
            max_p: 0.3,
            adapt: Adapt::Feng(FengParams {
                dynamic: Some(DynThresholds {
                    w_p: 1.0,
                    ..DynThresholds::default()
                }),
                ..FengParams::default()
            }),
            ..feng_5_15()
        }
    }

    #[test]
    fn test_dynamic_p_d_above_p_high_raises_min_th_by_gamma() {
        let mut q = red(feng_dynamic());
        assert_eq!(q.next_timer(), Some(ms(500)));
        // Arrivals see 0..=19; the first divides max_p: 0.3 / 3 = 0.1. The
        // last: p_b = 0.1 * (19 - 10)/20 = 0.045 = P_d > 0.02.
        offer_n(&mut q, 20, ms(100));
        assert_close(q.state().p_d, 0.045, 1e-15);
        q.on_timer(ms(500));
        // min_th 10 * 1.05 = 10.5, max_th 10.5 + 20.
        assert_close(q.state().min_th, 10.5, 1e-12);
        assert_close(q.state().max_th, 30.5, 1e-12);
        // Held at q = 19: P_d = 0.1 * 8.5/20 = 0.0425 > 0.02 -> 11.025.
        dequeue_n(&mut q, 1, ms(600));
        offer(&mut q, pkt(40), ms(600), MISS);
        assert_close(q.state().p_d, 0.0425, 1e-12);
        q.on_timer(ms(1000));
        assert_close(q.state().min_th, 11.025, 1e-12);
        assert_close(q.state().max_th, 31.025, 1e-12);
    }

    #[test]
    fn test_dynamic_p_d_below_p_low_lowers_min_th_by_gamma() {
        let mut q = red(feng_dynamic());
        offer_n(&mut q, 20, ms(100));
        q.on_timer(ms(500));
        dequeue_n(&mut q, 1, ms(600));
        offer(&mut q, pkt(40), ms(600), MISS);
        q.on_timer(ms(1000));
        // Held at q = 12: P_d = 0.1 * (12 - 11.025)/20 = 0.004875 < 0.01:
        // 11.025 * 0.95 = 10.47375, max_th 30.47375.
        dequeue_n(&mut q, 8, ms(1100));
        offer(&mut q, pkt(41), ms(1100), MISS);
        assert_close(q.state().p_d, 0.004875, 1e-12);
        q.on_timer(ms(1500));
        assert_close(q.state().min_th, 10.47375, 1e-12);
        assert_close(q.state().max_th, 30.47375, 1e-12);
        // P_d in [0.01, 0.02] holds them: q = 14, 0.1 * 3.52625/20 = 0.0176.
        offer(&mut q, pkt(42), ms(1600), MISS);
        offer(&mut q, pkt(43), ms(1600), MISS);
        assert_close(q.state().p_d, 0.1 * (14.0 - 10.47375) / 20.0, 1e-12);
        q.on_timer(ms(2000));
        assert_close(q.state().min_th, 10.47375, 1e-12);
    }

    #[test]
    fn test_dynamic_p_d_is_ewma_of_p_a() {
        // w_p 0.5: arrivals with p_a 0 (q = 0, below) then, holding 20 with
        // the exemption used, p_a = 0.1 * 10/20 = 0.05: P_d = 0.5 * 0.05.
        let p = RedParams {
            adapt: Adapt::Feng(FengParams {
                dynamic: Some(DynThresholds {
                    w_p: 0.5,
                    ..DynThresholds::default()
                }),
                ..FengParams::default()
            }),
            ..feng_dynamic()
        };
        let mut q = red_holding_past_first(p, 20);
        q.core.state.max_p = 0.1;
        q.core.state.feng_status = FengStatus::Between;
        offer(&mut q, pkt(1), ms(1), MISS);
        assert_close(q.state().p_d, 0.025, 1e-15);
        offer(&mut q, pkt(2), ms(1), MISS);
        // 0.5 * 0.025 + 0.5 * 0.1 * 11/20 = 0.04
        assert_close(q.state().p_d, 0.04, 1e-15);
    }

    // Validation

    #[track_caller]
    fn rejected(p: RedParams) -> ParamError {
        Red::new(p, LINK_10M, 1).unwrap_err()
    }

    #[test]
    fn test_thresholds_out_of_order_or_above_limit_rejected() {
        let p = red_5_15();
        let swapped = RedParams {
            min_th: Threshold::Packets(15.0),
            max_th: Threshold::Packets(5.0),
            ..p
        };
        assert_eq!(rejected(swapped).param, "max_th");
        let equal = RedParams {
            max_th: Threshold::Packets(5.0),
            ..p
        };
        assert_eq!(rejected(equal).param, "max_th");
        let above = RedParams {
            max_th: Threshold::Packets(101.0),
            ..p
        };
        assert_eq!(rejected(above).param, "max_th");
        let gentle = RedParams {
            gentle: Gentle::TwiceMaxTh,
            max_th: Threshold::Packets(51.0),
            ..p
        };
        assert_eq!(rejected(gentle).param, "max_th");
        let unlimited = RedParams {
            limit: Limit::Unlimited,
            ..gentle
        };
        assert!(Red::new(unlimited, LINK_10M, 1).is_ok());
        // GRED's line ends at the limit: max_th 13/20 of it is fine, no limit is not.
        assert!(Red::new(gred_3_13_of_20(false), LINK_10M, 1).is_ok());
        let ns2_gentle = RedParams {
            gentle: Gentle::TwiceMaxTh,
            ..gred_3_13_of_20(false)
        };
        let e = rejected(ns2_gentle);
        assert_eq!(e.param, "max_th");
        assert!(
            e.message.contains("2 * 13 > 20") && e.message.contains("to_limit"),
            "{}",
            e.message
        );
        let e = rejected(RedParams {
            limit: Limit::Unlimited,
            ..gred_3_13_of_20(false)
        });
        assert_eq!(e.param, "gentle");
        assert!(
            e.message.contains("\"to_limit\"") && e.message.contains("bounded limit"),
            "{}",
            e.message
        );
        let negative = RedParams {
            min_th: Threshold::Packets(-1.0),
            ..p
        };
        assert_eq!(rejected(negative).param, "min_th");
    }

    #[test]
    fn test_threshold_in_other_unit_than_limit_rejected() {
        let p = RedParams {
            min_th: Threshold::Bytes(2500.0),
            ..red_5_15()
        };
        let err = rejected(p);
        assert_eq!(err.param, "min_th");
        assert!(err.message.contains("bytes"), "{}", err.message);
        // Unlimited: the thresholds give the unit.
        let unlimited = RedParams {
            limit: Limit::Unlimited,
            min_th: Threshold::Bytes(2500.0),
            max_th: Threshold::Bytes(7500.0),
            ..red_5_15()
        };
        assert_eq!(unlimited.unit(), QueueUnit::Bytes);
        assert!(Red::new(unlimited, LINK_10M, 1).is_ok());
    }

    #[test]
    fn test_probabilities_and_weights_out_of_range_rejected() {
        for max_p in [0.0, 1.5, f64::NAN] {
            assert_eq!(rejected(RedParams { max_p, ..red_5_15() }).param, "max_p");
        }
        for w in [0.0, 1.1, f64::NAN] {
            let p = RedParams {
                w_q: Weight::Value(w),
                ..red_5_15()
            };
            assert_eq!(rejected(p).param, "w_q");
        }
        assert!(Red::new(
            RedParams {
                max_p: 1.0,
                ..red_5_15()
            },
            LINK_10M,
            1
        )
        .is_ok());
    }

    #[test]
    fn test_inconsistent_options_rejected() {
        let wait_uniform = RedParams {
            wait: true,
            drop_spacing: DropSpacing::None,
            ..red_5_15()
        };
        assert_eq!(rejected(wait_uniform).param, "wait");
        let zero_mean = RedParams {
            mean_pktsize_bytes: 0,
            ..red_5_15()
        };
        assert_eq!(rejected(zero_mean).param, "mean_pktsize");
        let feng_low = RedParams {
            max_p: 0.00001,
            ..feng_5_15()
        };
        assert_eq!(rejected(feng_low).param, "max_p");
        // Dynamic thresholds keep min_th >= 1 packet, so it must start there.
        let below_one = RedParams {
            min_th: Threshold::Packets(0.5),
            ..feng_dynamic()
        };
        assert_eq!(rejected(below_one).param, "min_th");
        let one = RedParams {
            min_th: Threshold::Packets(1.0),
            ..feng_dynamic()
        };
        assert!(Red::new(one, LINK_10M, 1).is_ok());
    }

    #[test]
    fn test_auto_without_link_rate_rejected() {
        let link = LinkInfo {
            rate_bps: 0,
            mtu_bytes: 1500,
        };
        let err = Red::new(RedParams::ared(Limit::Packets(100)), link, 1).unwrap_err();
        assert_eq!(err.param, "min_th");
        let w_q_auto = RedParams {
            w_q: Weight::Auto,
            ..red_5_15()
        };
        assert_eq!(Red::new(w_q_auto, link, 1).unwrap_err().param, "w_q");
        // max_th = 3 min_th and a given w_q need no rate.
        let max_th_auto = RedParams {
            max_th: Threshold::Auto,
            ..red_5_15()
        };
        assert_eq!(
            Red::new(max_th_auto, link, 1).unwrap().effective().max_th,
            Threshold::Packets(15.0)
        );
    }

    // Tracing and the trait

    #[test]
    fn test_traced_names_red_and_dynamic() {
        let mut q = red(red_5_15());
        offer(&mut q, pkt(1), ms(1), MISS);
        let names: Vec<&str> = traced(&q).iter().map(|(k, _)| *k).collect();
        assert_eq!(names, ["avg", "q", "p_b", "p_a", "count", "max_p", "min_th", "max_th"]);
        let q = red(feng_dynamic());
        assert_eq!(traced(&q).last(), Some(&("P_d", 0.0)));
    }

    #[test]
    fn test_seeded_enqueue_is_deterministic() {
        let run = || {
            let mut q = Red::new(instantaneous(red_5_15()), LINK_10M, 7).unwrap();
            let mut fx = Effects::default();
            (0..40).map(|i| q.enqueue(pkt(i), ms(i), &mut fx)).collect::<Vec<_>>()
        };
        assert_eq!(run(), run());
    }

    // Conservation (crate::conservation plays the operations)

    fn config(i: usize) -> RedParams {
        let gentle_ecn = RedParams {
            gentle: Gentle::TwiceMaxTh,
            ecn: true,
            ecn_above_max_th: EcnAboveMaxTh::Mark,
            limit: Limit::Packets(30),
            max_th: Threshold::Packets(15.0),
            w_q: Weight::Value(0.2),
            ..red_5_15()
        };
        let bytes = RedParams {
            limit: Limit::Bytes(12_000),
            min_th: Threshold::Bytes(1500.0),
            max_th: Threshold::Bytes(6000.0),
            byte_mode: true,
            wait: true,
            idle_decay: IdleDecay::Paper,
            w_q: Weight::Value(0.1),
            ..red_5_15()
        };
        match i {
            0 => RedParams {
                limit: Limit::Packets(20),
                w_q: Weight::Value(0.1),
                ..red_5_15()
            },
            1 => gentle_ecn,
            2 => bytes,
            3 => RedParams {
                limit: Limit::Packets(40),
                ..ared_5_15(AredUpdate::Arrival, GentleSlope::Initial)
            },
            4 => RedParams {
                limit: Limit::Packets(40),
                ..ared_5_15(AredUpdate::Timer, GentleSlope::Current)
            },
            _ => RedParams {
                limit: Limit::Packets(70),
                exempt_first: false,
                ..feng_dynamic()
            },
        }
    }

    impl Conserving for Red {
        const FIFO: bool = true;

        fn configs() -> BoxedStrategy<Red> {
            (0usize..6, any::<u64>())
                .prop_map(|(i, seed)| Red::new(config(i), LINK_10M, seed).unwrap())
                .boxed()
        }

        fn check_state(&self, _tally: &Tally) -> Result<(), TestCaseError> {
            let s = self.state();
            prop_assert!(s.avg >= 0.0 && s.avg.is_finite());
            prop_assert!((0.0..=1.0).contains(&s.p_a) && (0.0..=1.0).contains(&s.p_b));
            prop_assert!(s.min_th < s.max_th);
            Ok(())
        }
    }
}
