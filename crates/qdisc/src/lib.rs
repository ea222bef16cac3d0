//! Queue disciplines for aqmlab, as plain state machines.
//!
//! A queue discipline never sees the simulator. It is handed the current time
//! and a packet, it may own a seeded random stream, and it says what it did
//! (a [`Verdict`]) so that monitors can count early drops, forced drops and
//! marks apart. Every discipline is split the way the Linux kernel splits
//! `red_parms` / `red_vars`: a `Params` struct validated once at construction
//! (an object that exists is valid) and a `State` struct that changes per
//! packet. Its state is readable for tracing through [`QueueDisc::traced`].
//!
//! Layers: [`time`] (integer nanoseconds), [`packet`] (the `Copy` packet),
//! [`rng`] (per-component seeded streams), [`fifo`] (the byte/packet counted
//! FIFO every discipline queues into), then one module per discipline.
//!
//! `docs/qdiscs.md` summarises every discipline and its choices between
//! variants for readers who do not open the source.

pub mod ared;
pub mod bernoulli;
pub mod blue;
pub mod cobalt;
pub mod codel;
#[cfg(test)]
mod conservation;
pub mod droptail;
pub mod dualpi2;
pub mod fifo;
pub mod fq;
pub mod fq_cobalt;
pub mod fq_codel;
pub mod fq_pie;
pub mod packet;
pub mod pie;
pub mod red;
pub mod red_tail;
pub mod rng;
pub mod sfb;
pub mod ted;
pub mod time;

use std::fmt;

pub use ared::{Adapt, AredParams, AredUpdate, DynThresholds, FengParams, FengStatus, GentleSlope};
pub use bernoulli::{Bernoulli, BernoulliParams};
pub use blue::{Blue, BlueParams, BlueState};
pub use cobalt::{Cobalt, CobaltAction, CobaltLaw, CobaltParams, CobaltState, CobaltStats};
pub use codel::{codel_dequeue, Codel, CodelLaw, CodelParams, CodelState, CodelStats};
pub use droptail::{DropTail, DropTailParams, DropWhere};
pub use dualpi2::{DualPi2, DualPi2Action, DualPi2Params, DualPi2State, DualPi2Stats, Lane, QdelayOf, StepThresh};
pub use fifo::{Backlog, Fifo, Limit};
pub use fq::{FlowList, FqStats};
pub use fq_cobalt::{FqCobalt, FqCobaltParams};
pub use fq_codel::{FqCodel, FqCodelParams, FqCodelStats};
pub use fq_pie::{FqPie, FqPieParams};
pub use packet::{tcp_flags, Ecn, Packet, PacketKind};
pub use pie::{DelayEstimator, Pie, PieAction, PieParams, PieState};
pub use red::{
    AvgOf, DropSpacing, EcnAboveMaxTh, Gentle, IdleDecay, QueueUnit, Red, RedAction, RedCore, RedParams, RedState,
    Threshold, Weight,
};
pub use red_tail::{RedTail, RedTailParams, RedTailState};
pub use sfb::{Sfb, SfbParams, SfbState};
pub use ted::{Ted, TedCheck, TedMode, TedParams};
pub use time::{Duration, Time};

/// Why a packet was dropped. Monitors count drops by reason.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum DropReason {
    /// The hard buffer limit was reached.
    Overflow,
    /// A probabilistic AQM decision.
    Early,
    /// An AQM decision taken with probability 1 (e.g. RED above max_th).
    Forced,
    /// A deadline passed (time-driven early discard).
    Expired,
    /// Dropped from the head of the queue by a sojourn-time AQM.
    Head,
    /// Dropped by a rate limiter (SFB's penalty box).
    Penalty,
}

impl DropReason {
    pub const ALL: [DropReason; 6] = [
        DropReason::Overflow,
        DropReason::Early,
        DropReason::Forced,
        DropReason::Expired,
        DropReason::Head,
        DropReason::Penalty,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            DropReason::Overflow => "overflow",
            DropReason::Early => "early",
            DropReason::Forced => "forced",
            DropReason::Expired => "expired",
            DropReason::Head => "head",
            DropReason::Penalty => "penalty",
        }
    }

    pub fn index(self) -> usize {
        self as usize
    }
}

/// What happened to an arriving packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Verdict {
    /// Queued unchanged.
    Enqueued,
    /// Queued with its ECN field set to CE instead of being dropped.
    Marked,
    /// Not queued.
    Dropped(DropReason),
}

/// A packet that left the queue without being transmitted, and why.
pub type Discard = (Packet, DropReason);

/// What a call did besides its result: the packets it removed without
/// transmitting them (drop-front, head drops, overflow from another flow's
/// queue), and whether it set CE on the packet it dequeued. The caller
/// clears it between calls.
#[derive(Clone, Debug, Default)]
pub struct Effects {
    pub discards: Vec<Discard>,
    /// The packet returned by `dequeue` was ECN-marked by that call.
    pub marked: bool,
}

impl Effects {
    pub fn clear(&mut self) {
        self.discards.clear();
        self.marked = false;
    }

    #[inline]
    pub fn discard(&mut self, pkt: Packet, reason: DropReason) {
        self.discards.push((pkt, reason));
    }
}

/// What a discipline may need to know about the link it feeds: its rate
/// (RED's idle decay and automatic parameters) and its MTU (CoDel's
/// "queue almost empty" guard, FQ-CoDel's quantum).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LinkInfo {
    pub rate_bps: u64,
    pub mtu_bytes: u32,
}

/// An invalid parameter: names the parameter, the value and the constraint.
#[derive(Clone, Debug, PartialEq)]
pub struct ParamError {
    /// The parameter's name as the scenario file spells it, e.g. `"max_p"`.
    pub param: &'static str,
    /// What was given and what is allowed.
    pub message: String,
}

impl ParamError {
    pub fn new(param: &'static str, message: impl Into<String>) -> ParamError {
        ParamError {
            param,
            message: message.into(),
        }
    }
}

impl fmt::Display for ParamError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.param, self.message)
    }
}

impl std::error::Error for ParamError {}

/// The operations of a queue discipline, shaped like the kernel's `Qdisc_ops`.
///
/// Every packet a call removes from the system other than the one returned
/// (drop-front, head drops, overflow from another flow's queue) is reported
/// in `fx.discards` with its reason, never hidden.
pub trait QueueDisc {
    /// Offers an arriving packet (its `enqueued_at` already set to `now`).
    /// The verdict is about that packet only.
    fn enqueue(&mut self, pkt: Packet, now: Time, fx: &mut Effects) -> Verdict;

    /// The next packet to transmit, if any. A `None` means the link goes
    /// idle (RED and BLUE take note).
    fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet>;

    /// Packets and bytes held (the packet being transmitted is not held).
    fn backlog(&self) -> Backlog;

    /// When the discipline next wants [`QueueDisc::on_timer`] called.
    fn next_timer(&self) -> Option<Time> {
        None
    }

    /// A timer the discipline asked for has expired.
    fn on_timer(&mut self, _now: Time) {}

    /// Reports the discipline's internal state, one named value at a time,
    /// for time series. Names are the papers' symbols (`avg`, `p_m`, ...).
    fn traced(&self, _out: &mut dyn FnMut(&'static str, f64)) {}
}

/// Enum dispatch over every discipline: no virtual call on the hot path.
#[derive(Clone, Debug)]
pub enum AnyQdisc {
    DropTail(DropTail),
    Bernoulli(Bernoulli),
    Ted(Ted),
    Pie(Pie),
    DualPi2(DualPi2),
    Codel(Codel),
    FqCodel(FqCodel),
    FqPie(FqPie),
    Cobalt(Cobalt),
    FqCobalt(FqCobalt),
    Blue(Blue),
    /// Boxed: its bin arrays are large.
    Sfb(Box<Sfb>),
    Red(Red),
    RedTail(Box<RedTail>),
}

macro_rules! dispatch {
    ($self:ident, $q:ident => $e:expr) => {
        match $self {
            AnyQdisc::DropTail($q) => $e,
            AnyQdisc::Bernoulli($q) => $e,
            AnyQdisc::Ted($q) => $e,
            AnyQdisc::Pie($q) => $e,
            AnyQdisc::DualPi2($q) => $e,
            AnyQdisc::Codel($q) => $e,
            AnyQdisc::FqCodel($q) => $e,
            AnyQdisc::FqPie($q) => $e,
            AnyQdisc::Cobalt($q) => $e,
            AnyQdisc::FqCobalt($q) => $e,
            AnyQdisc::Blue($q) => $e,
            AnyQdisc::Sfb($q) => $e,
            AnyQdisc::Red($q) => $e,
            AnyQdisc::RedTail($q) => $e,
        }
    };
}

impl QueueDisc for AnyQdisc {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now: Time, fx: &mut Effects) -> Verdict {
        dispatch!(self, q => q.enqueue(pkt, now, fx))
    }
    #[inline]
    fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet> {
        dispatch!(self, q => q.dequeue(now, fx))
    }
    #[inline]
    fn backlog(&self) -> Backlog {
        dispatch!(self, q => q.backlog())
    }
    fn next_timer(&self) -> Option<Time> {
        dispatch!(self, q => q.next_timer())
    }
    fn on_timer(&mut self, now: Time) {
        dispatch!(self, q => q.on_timer(now))
    }
    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        dispatch!(self, q => q.traced(out))
    }
}
