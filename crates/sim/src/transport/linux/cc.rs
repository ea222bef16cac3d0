//! The interface between the Linux-style sender and its congestion
//! controls, shaped like Linux's `struct tcp_congestion_ops`
//! (`include/net/tcp.h`) so that each algorithm reads as its Linux module
//! does: the sender calls the same hooks at the same moments, and hands the
//! algorithm a [`Tcp`], the fields of Linux's `tcp_sock` the modules read
//! and write.
//!
//! Heads up: units are packets, not bytes. Linux's `snd_cwnd`,
//! `snd_ssthresh`, `packets_out`, `delivered` and the rate sample's counts
//! are already in segments, so they carry over unchanged; only the pacing
//! rate is in bytes per second, as Linux's `sk_pacing_rate`, and [`Tcp::mss`]
//! converts.
//!
//! When the sender calls what (as `net/ipv4/tcp_input.c` and
//! `tcp_output.c` do):
//! - [`CongestionControl::init`] once, when the connection starts.
//! - On every ACK, in this order: [`CongestionControl::in_ack_event`] (with
//!   whether the ACK echoed congestion), [`CongestionControl::pkts_acked`]
//!   (with the packets the ACK newly delivered and its RTT sample), then
//!   either [`CongestionControl::cong_control`] when the algorithm has one
//!   (it then owns cwnd and the pacing rate, as BBR does), or else the
//!   sender's own logic: [`CongestionControl::cong_avoid`] outside loss
//!   recovery and CWR when cwnd limited the sending, PRR inside them.
//! - [`CongestionControl::ssthresh`] when a reduction starts: fast recovery,
//!   an ECN echo (CWR), or a retransmission timeout.
//! - [`CongestionControl::set_state`] on every change of [`CaState`], and
//!   [`CongestionControl::cwnd_event`] on the events of [`CaEvent`].
//! - [`CongestionControl::undo_cwnd`] when a reduction proves spurious.

use std::fmt;

use aqmlab_qdisc::{Duration, Ecn, Time};

/// Linux's `TCP_INFINITE_SSTHRESH`: ssthresh before the first reduction.
pub const INFINITE_SSTHRESH: u32 = 0x7fff_ffff;

/// Linux's `icsk_ca_state`: where the sender is in loss recovery.
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord, Default)]
pub enum CaState {
    /// Nothing outstanding is suspected lost.
    #[default]
    Open,
    /// SACKs or duplicate ACKs seen, nothing yet marked lost.
    Disorder,
    /// Reducing cwnd after an ECN echo.
    Cwr,
    /// Fast recovery after a loss.
    Recovery,
    /// After a retransmission timeout.
    Loss,
}

/// Linux's `enum tcp_ca_event`: events a congestion control may react to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CaEvent {
    /// The first transmission when nothing was in flight.
    TxStart,
    /// cwnd restarted after an idle period.
    CwndRestart,
    /// The end of a CWR reduction.
    CompleteCwr,
    /// A retransmission timeout.
    Loss,
    /// A data packet arrived at the receiver without CE (DCTCP's receiver
    /// state; here, an ACK covered packets none of which was CE).
    EcnNoCe,
    /// A data packet arrived with CE.
    EcnIsCe,
}

/// What one ACK said about congestion, for
/// [`CongestionControl::in_ack_event`] (Linux's `CA_ACK_*` flags, with the
/// counts an accurate ECN echo gives).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckEvent {
    /// Packets newly delivered by this ACK (cumulatively or by SACK).
    pub acked: u32,
    /// Of those, how many arrived at the receiver marked CE.
    pub ce: u32,
    /// The ACK echoed congestion (ECE).
    pub ece: bool,
    /// The ACK advanced the cumulative acknowledgement (`CA_ACK_WIN_UPDATE`
    /// aside, what Linux's slow path and fast path both report).
    pub advanced: bool,
}

/// Linux's `struct rate_sample` (`include/net/tcp.h`, filled by
/// `net/ipv4/tcp_rate.c`): the delivery rate measured over the flight that
/// this ACK ends.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct RateSample {
    /// `tp->delivered` when the acknowledged packet was sent.
    pub prior_delivered: u64,
    /// Packets delivered over the interval (`delivered`); negative
    /// (Linux's -1) when there is no valid sample.
    pub delivered: i64,
    /// The interval, the longer of the send and ACK intervals
    /// (`interval_us`); `None` when there is no valid sample.
    pub interval: Option<Duration>,
    /// The RTT of the most recently sent packet this ACK delivered
    /// (`rtt_us`), if one was never retransmitted.
    pub rtt: Option<Duration>,
    /// Packets newly marked lost while processing this ACK (`losses`).
    pub losses: u32,
    /// Packets newly delivered, cumulatively or by SACK (`acked_sacked`).
    pub acked_sacked: u32,
    /// Packets in flight before this ACK (`prior_in_flight`).
    pub prior_in_flight: u32,
    /// The sample was taken while the application, not the network, limited
    /// the sending (`is_app_limited`).
    pub is_app_limited: bool,
    /// The packet that ended the sample was a retransmission (`is_retrans`).
    pub is_retrans: bool,
}

impl RateSample {
    /// The delivery rate in packets per second, when the sample is valid.
    pub fn rate_pps(&self) -> Option<f64> {
        match self.interval {
            Some(i) if self.delivered >= 0 && i > Duration::ZERO => Some(self.delivered as f64 / i.as_secs_f64()),
            _ => None,
        }
    }
}

/// The fields of Linux's `tcp_sock` (and `sock`) a congestion control reads
/// or writes. The sender owns it and keeps the read-only fields current
/// before every hook.
#[derive(Clone, Debug)]
pub struct Tcp {
    /// The time of the event being handled (`tcp_mstamp`).
    pub now: Time,
    /// `snd_cwnd`, packets; a hook may set it (the sender keeps it >= 1).
    pub cwnd: u32,
    /// `snd_cwnd_cnt`: the additive increase's fractional counter.
    pub cwnd_cnt: u32,
    /// `snd_cwnd_clamp`.
    pub cwnd_clamp: u32,
    /// `snd_ssthresh`, packets.
    pub ssthresh: u32,
    /// `prior_cwnd`: cwnd when the current reduction began.
    pub prior_cwnd: u32,
    /// `sk_pacing_rate`, bytes per second; `None` while not pacing.
    pub pacing_rate: Option<f64>,
    /// Bytes of one packet on the wire, for the pacing arithmetic
    /// (`mss_cache`, headers included).
    pub mss: u32,
    /// Smoothed RTT (`srtt_us >> 3`); zero before the first sample.
    pub srtt: Duration,
    /// The minimum RTT seen over Linux's window (`tcp_min_rtt`); zero before
    /// the first sample.
    pub min_rtt: Duration,
    /// `tp->delivered`: packets delivered so far, SACKed ones included.
    pub delivered: u64,
    /// `tp->delivered_ce`: of those, how many arrived marked CE.
    pub delivered_ce: u64,
    /// `tp->lost`: packets marked lost so far.
    pub lost: u64,
    /// `tp->app_limited`: while non-zero, the `delivered` count at which the
    /// application-limited period ends.
    pub app_limited: u64,
    /// Packets in flight (`tcp_packets_in_flight`: sent, not yet delivered
    /// and not marked lost, plus retransmissions in flight).
    pub in_flight: u32,
    /// The sending was limited by cwnd in the last round (`is_cwnd_limited`).
    pub is_cwnd_limited: bool,
    /// `icsk_ca_state`.
    pub ca_state: CaState,
    /// The highest sequence number sent plus one (`snd_nxt`), in packets.
    pub snd_nxt: u64,
    /// The first unacknowledged sequence number (`snd_una`), in packets.
    pub snd_una: u64,
    /// When data was last sent (`lsndtime`); CUBIC shifts its epoch by the
    /// idle time since then on [`CaEvent::TxStart`].
    pub lsndtime: Time,
}

impl Tcp {
    /// A sender's state before it sends: cwnd `initial_window`, ssthresh
    /// infinite, no RTT sample.
    pub fn new(initial_window: u32, mss: u32) -> Tcp {
        Tcp {
            now: Time::ZERO,
            cwnd: initial_window,
            cwnd_cnt: 0,
            cwnd_clamp: u32::MAX,
            ssthresh: INFINITE_SSTHRESH,
            prior_cwnd: 0,
            pacing_rate: None,
            mss,
            srtt: Duration::ZERO,
            min_rtt: Duration::ZERO,
            delivered: 0,
            delivered_ce: 0,
            lost: 0,
            app_limited: 0,
            in_flight: 0,
            is_cwnd_limited: false,
            ca_state: CaState::Open,
            snd_nxt: 0,
            snd_una: 0,
            lsndtime: Time::ZERO,
        }
    }

    /// `tcp_in_slow_start`.
    pub fn in_slow_start(&self) -> bool {
        self.cwnd < self.ssthresh
    }

    /// `tcp_slow_start`: cwnd grows by the packets acknowledged, up to
    /// ssthresh; returns the acknowledged packets left over for congestion
    /// avoidance.
    pub fn slow_start(&mut self, acked: u32) -> u32 {
        let cwnd = self.cwnd.saturating_add(acked).min(self.ssthresh);
        let left = acked - cwnd.saturating_sub(self.cwnd).min(acked);
        self.cwnd = cwnd.min(self.cwnd_clamp);
        left
    }

    /// `tcp_cong_avoid_ai`: cwnd grows by one packet for every `w` packets
    /// acknowledged (by `acked / w` at once when `acked` covers several).
    pub fn cong_avoid_ai(&mut self, w: u32, acked: u32) {
        let w = w.max(1);
        // If credits accumulated at a higher w, apply them gently now.
        if self.cwnd_cnt >= w {
            self.cwnd_cnt = 0;
            self.cwnd += 1;
        }
        self.cwnd_cnt += acked;
        if self.cwnd_cnt >= w {
            let delta = self.cwnd_cnt / w;
            self.cwnd_cnt -= delta * w;
            self.cwnd += delta;
        }
        self.cwnd = self.cwnd.min(self.cwnd_clamp);
    }
}

/// A congestion control, as a Linux `tcp_congestion_ops`. Only
/// [`CongestionControl::ssthresh`] has no default; the defaults do what
/// Linux does when a module leaves the hook empty.
pub trait CongestionControl: fmt::Debug {
    /// The name in scenarios and results (Linux's module name).
    fn name(&self) -> &'static str;

    /// The ECN codepoint the algorithm itself asks data packets to carry
    /// (DCTCP ECT(0), Prague ECT(1)); `None` when ECN is the scenario's
    /// choice, with the classic response of RFC 3168.
    fn ecn(&self) -> Option<Ecn> {
        None
    }

    /// Whether the sender must pace (Linux's `SK_PACING_NEEDED`, which BBR
    /// sets); otherwise pacing is the scenario's choice.
    fn needs_pacing(&self) -> bool {
        false
    }

    /// `init`: the connection starts.
    fn init(&mut self, _tcp: &mut Tcp) {}

    /// `ssthresh`: the slow-start threshold a reduction sets; the sender
    /// stores `tcp.cwnd` in `prior_cwnd` first.
    fn ssthresh(&mut self, tcp: &Tcp) -> u32;

    /// `cong_avoid`: grow cwnd on an ACK that newly delivered `acked`
    /// packets, outside recovery and CWR. Linux's default is Reno's
    /// ([`reno_cong_avoid`]).
    fn cong_avoid(&mut self, tcp: &mut Tcp, acked: u32) {
        reno_cong_avoid(tcp, acked);
    }

    /// `set_state`: `tcp.ca_state` is about to become `new`.
    fn set_state(&mut self, _tcp: &mut Tcp, _new: CaState) {}

    /// `cwnd_event`.
    fn cwnd_event(&mut self, _tcp: &mut Tcp, _ev: CaEvent) {}

    /// `in_ack_event`: an ACK arrived, before anything else is done with it.
    fn in_ack_event(&mut self, _tcp: &mut Tcp, _ev: &AckEvent) {}

    /// `pkts_acked`: the ACK newly delivered `acked` packets; `rtt` is its
    /// RTT sample, if it has one.
    fn pkts_acked(&mut self, _tcp: &mut Tcp, _acked: u32, _rtt: Option<Duration>) {}

    /// `undo_cwnd`: the cwnd to restore when a reduction proves spurious.
    /// Linux's default, `tcp_reno_undo_cwnd`, is the larger of cwnd and the
    /// cwnd before the reduction.
    fn undo_cwnd(&mut self, tcp: &Tcp) -> u32 {
        tcp.cwnd.max(tcp.prior_cwnd)
    }

    /// `get_info`: the algorithm's own state, as `ss` and `TCP_CC_INFO`
    /// report it (rates in bytes of payload, `mss` per packet, as Linux's
    /// `mss_cache`), handed to `out` as (column, value) pairs for the
    /// trace. Linux's default reports nothing.
    fn info(&self, _tcp: &Tcp, _mss: u32, _out: &mut dyn FnMut(&'static str, f64)) {}

    /// Whether the algorithm has a `cong_control` (BBR, Prague): it then
    /// sets cwnd itself, and the sender applies neither PRR nor the
    /// reduction's end (`tcp_end_cwnd_reduction` returns early).
    fn has_cong_control(&self) -> bool {
        false
    }

    /// `cong_control`: when the algorithm has one it returns true and has
    /// set cwnd and the pacing rate from the rate sample itself; the sender
    /// then neither calls [`CongestionControl::cong_avoid`] nor applies PRR.
    fn cong_control(&mut self, _tcp: &mut Tcp, _rs: &RateSample) -> bool {
        false
    }
}

/// `tcp_reno_cong_avoid`: slow start below ssthresh, then one packet per
/// window of acknowledged packets; nothing when cwnd did not limit the
/// sending.
pub fn reno_cong_avoid(tcp: &mut Tcp, acked: u32) {
    if let Some(acked) = slow_start_first(tcp, acked) {
        let w = tcp.cwnd;
        tcp.cong_avoid_ai(w, acked);
    }
}

/// The start every `cong_avoid` of Linux shares: nothing when cwnd did not
/// limit the sending; slow start below ssthresh; then the acknowledged
/// packets left for congestion avoidance, if any.
pub fn slow_start_first(tcp: &mut Tcp, acked: u32) -> Option<u32> {
    if !tcp.is_cwnd_limited {
        return None;
    }
    let acked = if tcp.in_slow_start() { tcp.slow_start(acked) } else { acked };
    (acked > 0).then_some(acked)
}

/// `tcp_reno_ssthresh`: half of cwnd, at least 2.
pub fn reno_ssthresh(tcp: &Tcp) -> u32 {
    (tcp.cwnd >> 1).max(2)
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_slow_start_stops_at_ssthresh_and_returns_the_rest() {
        let mut t = Tcp::new(10, 1500);
        t.ssthresh = 14;
        // 10 + 6 would pass 14: cwnd stops there and 2 packets are left.
        assert_eq!(t.slow_start(6), 2);
        assert_eq!(t.cwnd, 14);
        assert_eq!(t.slow_start(3), 3);
        assert_eq!(t.cwnd, 14);
    }

    #[test]
    fn test_additive_increase_is_one_packet_per_window() {
        let mut t = Tcp::new(10, 1500);
        t.ssthresh = 10;
        t.is_cwnd_limited = true;
        // Nine ACKs of one packet leave cwnd at 10 with 9 credits; the tenth
        // makes it 11.
        for _ in 0..9 {
            reno_cong_avoid(&mut t, 1);
        }
        assert_eq!((t.cwnd, t.cwnd_cnt), (10, 9));
        reno_cong_avoid(&mut t, 1);
        assert_eq!((t.cwnd, t.cwnd_cnt), (11, 0));
        // An ACK of 25 packets at cwnd 11: two more packets, 3 credits.
        reno_cong_avoid(&mut t, 25);
        assert_eq!((t.cwnd, t.cwnd_cnt), (13, 3));
        // Not limited by cwnd: no growth.
        t.is_cwnd_limited = false;
        reno_cong_avoid(&mut t, 100);
        assert_eq!(t.cwnd, 13);
    }

    #[test]
    fn test_reno_ssthresh_halves_with_a_floor_of_two() {
        let mut t = Tcp::new(10, 1500);
        t.cwnd = 21;
        assert_eq!(reno_ssthresh(&t), 10);
        t.cwnd = 3;
        assert_eq!(reno_ssthresh(&t), 2);
    }

    #[test]
    fn test_a_rate_sample_is_packets_over_its_interval() {
        let rs = RateSample {
            delivered: 50,
            interval: Some(Duration::from_millis(100)),
            ..RateSample::default()
        };
        assert_eq!(rs.rate_pps(), Some(500.0));
        let none = RateSample { delivered: -1, ..rs };
        assert_eq!(none.rate_pps(), None);
    }
}
