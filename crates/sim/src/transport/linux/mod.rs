//! TCP with Linux's mechanisms, the family beside ns-2's agents
//! ([`super::tcp`]), which stay the default for the classic studies: the
//! sender speaks the same packets as ns-2's and talks to the same sink
//! (with SACK, and with the CE count every ACK carries).
//!
//! - [`cc`]: the congestion-control interface, shaped like Linux's
//!   `tcp_congestion_ops`, and Reno's window arithmetic every module uses.
//! - [`sender`]: the sender: Linux's loss recovery (SACK, RACK, PRR, tail
//!   loss probes, the RTO), ECN, delivery-rate sampling and pacing.
//! - [`rtt`]: Linux's RTT estimator and RTO.
//! - [`rcvwnd`]: the receiver's side: Linux's receive window and its
//!   autotuning, and the quick ACKs they drive, which the sink consults.
//! - [`reno`]: Linux's `reno` module.
//! - [`cubic`]: CUBIC's window law (RFC 9438, Linux's constants).
//! - [`cubic_cc`]: CUBIC with HyStart as Linux's `cubic` module.
//! - [`bbr`]: BBR version 1, as Linux's `tcp_bbr.c`.
//! - [`dctcp`]: DCTCP (RFC 8257) as Linux's `dctcp` module.
//! - [`prague`]: TCP Prague, the L4S sender, as the L4S team's Linux
//!   `prague` module.

pub mod bbr;
pub mod cc;
pub mod cubic;
pub mod cubic_cc;
pub mod dctcp;
pub mod prague;
pub mod rcvwnd;
pub mod reno;
pub mod rtt;
pub mod sender;

use aqmlab_qdisc::{rng, Duration, Ecn};

use crate::transport::tcp::config::Variant;
use cc::{AckEvent, CaEvent, CaState, CongestionControl, RateSample, Tcp};

/// The family's congestion controls, one variant each, so that a sender
/// holds its algorithm without a box.
#[derive(Clone, Debug)]
pub enum Cc {
    Reno(reno::Reno),
    Cubic(cubic_cc::Cubic),
    Bbr(Box<bbr::Bbr>),
    Dctcp(dctcp::Dctcp),
    Prague(prague::Prague),
}

/// Calls `$body` with `$c` bound to the algorithm inside a [`Cc`].
macro_rules! each {
    ($self:expr, $c:ident => $body:expr) => {
        match $self {
            Cc::Reno($c) => $body,
            Cc::Cubic($c) => $body,
            Cc::Bbr($c) => $body,
            Cc::Dctcp($c) => $body,
            Cc::Prague($c) => $body,
        }
    };
}

impl Cc {
    /// The congestion control of a Linux-style `variant`, with Linux's
    /// parameters; `seed` seeds its own randomness (BBR's first gain
    /// phase).
    pub fn new(variant: Variant, seed: u64) -> Result<Cc, String> {
        Ok(match variant {
            Variant::LinuxReno => Cc::Reno(reno::Reno),
            Variant::Cubic => Cc::Cubic(cubic_cc::Cubic::default()),
            Variant::Bbr => Cc::Bbr(Box::new(bbr::Bbr::new(
                bbr::BbrParams::default(),
                rng::stream(seed, "bbr"),
            ))),
            Variant::Dctcp => Cc::Dctcp(dctcp::Dctcp::default()),
            Variant::Prague => Cc::Prague(prague::Prague::default()),
            v => {
                return Err(format!(
                    "{:?} is one of ns-2's agents, not of the Linux-style family",
                    v.name()
                ))
            }
        })
    }
}

impl CongestionControl for Cc {
    fn name(&self) -> &'static str {
        each!(self, c => c.name())
    }
    fn ecn(&self) -> Option<Ecn> {
        each!(self, c => c.ecn())
    }
    fn needs_pacing(&self) -> bool {
        each!(self, c => c.needs_pacing())
    }
    fn has_cong_control(&self) -> bool {
        each!(self, c => c.has_cong_control())
    }
    fn init(&mut self, tcp: &mut Tcp) {
        each!(self, c => c.init(tcp))
    }
    fn ssthresh(&mut self, tcp: &Tcp) -> u32 {
        each!(self, c => c.ssthresh(tcp))
    }
    fn cong_avoid(&mut self, tcp: &mut Tcp, acked: u32) {
        each!(self, c => c.cong_avoid(tcp, acked))
    }
    fn set_state(&mut self, tcp: &mut Tcp, new: CaState) {
        each!(self, c => c.set_state(tcp, new))
    }
    fn cwnd_event(&mut self, tcp: &mut Tcp, ev: CaEvent) {
        each!(self, c => c.cwnd_event(tcp, ev))
    }
    fn in_ack_event(&mut self, tcp: &mut Tcp, ev: &AckEvent) {
        each!(self, c => c.in_ack_event(tcp, ev))
    }
    fn pkts_acked(&mut self, tcp: &mut Tcp, acked: u32, rtt: Option<Duration>) {
        each!(self, c => c.pkts_acked(tcp, acked, rtt))
    }
    fn undo_cwnd(&mut self, tcp: &Tcp) -> u32 {
        each!(self, c => c.undo_cwnd(tcp))
    }
    fn cong_control(&mut self, tcp: &mut Tcp, rs: &RateSample) -> bool {
        each!(self, c => c.cong_control(tcp, rs))
    }
    fn info(&self, tcp: &Tcp, mss: u32, out: &mut dyn FnMut(&'static str, f64)) {
        each!(self, c => c.info(tcp, mss, out))
    }
}
