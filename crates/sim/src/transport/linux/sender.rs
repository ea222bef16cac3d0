//! The sending half of the Linux-style TCP family: Linux's loss recovery
//! and sending (`net/ipv4/tcp_input.c`, `tcp_output.c`, `tcp_recovery.c`,
//! `tcp_rate.c`, `tcp_timer.c`) around a pluggable congestion control
//! ([`super::cc::CongestionControl`]), as a pure state machine with the
//! same interface as ns-2's [`crate::transport::tcp::TcpSender`]: it is
//! handed `now`, the application's data, ACKs and timer expiries, pushes
//! the packets to send onto a caller's buffer, and says when it next wants
//! to be woken.
//!
//! Heads up: read Linux's `tcp_ack`, `tcp_fastretrans_alert`,
//! `tcp_cwnd_reduction`, `tcp_rack_detect_loss`, `tcp_schedule_loss_probe`,
//! `tcp_send_loss_probe`, `tcp_enter_loss` and `tcp_rate_gen` before
//! changing this file, `ack.rs` (the ACK path) or `timers.rs` (the RTO,
//! reordering and probe timers); the comments name them where their logic
//! is followed.
//!
//! # What is modelled
//!
//! * **Sequence numbers count packets**, as in ns-2's agents, and every
//!   window is in packets, as Linux's own `snd_cwnd` and `packets_out` are.
//!   Each sent packet keeps Linux's per-packet state (`tcp_skb_cb`): sent
//!   time, SACKed, lost, retransmitted, and the delivery-rate snapshot.
//! * **SACK loss recovery** with Linux's states (Open, Disorder, CWR,
//!   Recovery, Loss). Losses are found by **RACK** (RFC 8985 as
//!   `tcp_recovery.c`: a packet is lost once a packet sent after it is
//!   delivered and a reordering window has passed; the window is zero
//!   until reordering is seen, once `dupack_threshold` packets are SACKed
//!   or in recovery, else min_rtt / 4, with a reordering timer), or, with
//!   `rack = false`, by RFC 6675's rule (`dupack_threshold` SACKed packets
//!   above it).
//! * **PRR** (RFC 6937 as `tcp_cwnd_reduction`) sets cwnd inside Recovery
//!   and CWR; with `prr = false` cwnd drops to ssthresh at once (RFC 6675).
//!   At the end of the reduction cwnd = ssthresh.
//! * **Tail loss probes** (RFC 8985 as `tcp_schedule_loss_probe`): 2 srtt
//!   (+ rto_min with one packet out, else + 2 ms), bounded by the RTO; the
//!   probe is a new packet if there is one, else the last packet again;
//!   an ACK above the probe that repaired a loss ends in a CWR-style
//!   reduction (`tcp_process_tlp_ack`).
//! * **Retransmission timeout** (`tcp_enter_loss`): the head and every
//!   packet not SACKed is marked lost, except, with RACK, those sent less
//!   than RACK's RTT ago (`tcp_timeout_mark_lost`); ssthresh from the
//!   congestion control, cwnd = packets in flight + 1, exponential
//!   backoff; Linux's RTT estimator and RTO ([`super::rtt`]). Linux's
//!   one timer for RTO, RACK and TLP (`icsk_pending`) is kept: arming one
//!   replaces the other. An ACK re-arms it if it advances snd_una or
//!   SACKs a packet sent before the head's last transmission
//!   (`tcp_clean_rtx_queue`).
//! * **ECN**: with the scenario's `ecn` (RFC 3168), new data is ECT(0), an
//!   ECN echo starts a CWR reduction (once per window), and the next new
//!   packet carries CWR. A congestion control that asks for ECN itself
//!   (DCTCP ECT(0), Prague ECT(1)) has every data packet carry its
//!   codepoint and reads the receiver's count of CE packets (carried in
//!   every ACK, as AccECN carries it) rather than the echo flag.
//! * **Delivery-rate sampling** (`tcp_rate.c`) for every ACK, with
//!   application-limited periods.
//! * **The receiver's window** (`tcp_ack_update_window`,
//!   `tcp_snd_wnd_test`): the window each ACK advertises
//!   ([`super::rcvwnd`]) is taken when the ACK advances snd_una or widens
//!   it, or closes it, and a packet goes out only if all of it fits; with
//!   `rwnd = N` the window is N packets. With data waiting, nothing out
//!   and no whole packet allowed, a zero-window probe (a header with an
//!   acknowledged sequence number) goes out an RTO later, backed off
//!   (`tcp_probe_timer`).
//! * **Timestamps** (`timestamps`): data carry the sender's clock and the
//!   last ACK's (the receiver times its round trip by it), ACKs the data's
//!   by RFC 7323's rule (the sink's `ts_recent`). The RTT sample is, as in
//!   `tcp_ack_update_rtt`, the oldest packet never retransmitted that an
//!   ACK covers cumulatively unless it covers a retransmitted one (Karn),
//!   else the oldest newly SACKed, else, for an ACK of retransmitted data
//!   alone, the echo (whole ms); any sample resets the RTO's backoff.
//! * **Pacing** (`tcp_wstamp_ns`): when the congestion control needs it
//!   (BBR) or `pacing = true`, each packet after the first 10 waits
//!   size / pacing rate after the one before. Without a congestion control
//!   of its own the rate is Linux's: 200% of cwnd / srtt in slow start
//!   (while cwnd < ssthresh / 2), 120% after.
//!
//! # Not modelled
//!
//! Undo of spurious reductions (D-SACK and the timestamp test of
//! `tcp_packet_delayed`), F-RTO, TSO and GSO (one packet per send), TCP
//! small queues, Nagle, the pacing credit for late timers, and a probe's
//! wait for pacing (`tcp_pacing_check` in the probe's `tcp_write_xmit`).
//!
//! # Counters
//!
//! In [`TcpSenderStats`]: `packets_sent`, `retransmits` (probes that resend
//! included), `timeouts` (RTO expiries with data outstanding),
//! `fast_retransmits` (entries into Recovery), `ecn_reductions` (entries
//! into CWR on an ECN echo). In [`LinuxStats`]: loss probes, packets RACK
//! or RFC 6675 marked lost, and lost retransmissions.

use std::collections::VecDeque;

use aqmlab_qdisc::{Duration, Ecn, Time};

use super::cc::{AckEvent, CaEvent, CaState, CongestionControl, RateSample, Tcp};
use super::rtt::{LinuxRtt, RtoBounds};
use super::Cc;
use crate::transport::tcp::wire::{AckInfo, Segment};
use crate::transport::tcp::TcpSenderStats;

mod ack;
#[cfg(test)]
mod tests;
mod timers;

/// Linux's `TCP_TIMEOUT_MIN_US`: the smallest timer slack, 2 ms.
const TIMEOUT_MIN: Duration = Duration::from_millis(2);
/// Linux paces only after this many data segments (`tcp_update_skb_after_send`).
const UNPACED_SEGMENTS: u64 = 10;
/// Linux's window of the minimum RTT (`sysctl_tcp_min_rtt_wlen`), 300 s.
const MIN_RTT_WINDOW: Duration = Duration::from_secs(300);

/// What the family's sender is configured with.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LinuxParams {
    /// Packets in the first flight (Linux's `TCP_INIT_CWND`, 10).
    pub initial_window: u32,
    /// The receiver window, packets: fixed, or a cap (`u32::MAX` for none)
    /// on the window the sink advertises.
    pub rwnd: u32,
    /// Open with a SYN (packet 0).
    pub syn: bool,
    /// RFC 3168 ECN for congestion controls that do not ask for it.
    pub ecn: bool,
    /// Pace even when the congestion control does not need it.
    pub pacing: bool,
    pub rack: bool,
    pub tlp: bool,
    pub prr: bool,
    /// TCP timestamps (see the module doc).
    pub timestamps: bool,
    /// Linux's `tp->reordering` (`sysctl_tcp_reordering`, 3).
    pub dupthresh: u32,
    pub rto: RtoBounds,
    /// Bytes per packet for the pacing arithmetic.
    pub mss: u32,
    /// Of `mss`, the header's bytes. Linux counts rates in payload bytes
    /// (`mss_cache`), so the trace reports them so too.
    pub header: u32,
}

impl Default for LinuxParams {
    fn default() -> LinuxParams {
        LinuxParams {
            initial_window: 10,
            rwnd: 10_000,
            syn: true,
            ecn: false,
            pacing: false,
            rack: true,
            tlp: true,
            prr: true,
            timestamps: true,
            dupthresh: 3,
            rto: RtoBounds::default(),
            mss: 1500,
            header: 40,
        }
    }
}

/// The family's own counters (see the module doc).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct LinuxStats {
    pub loss_probes: u64,
    pub marked_lost: u64,
    pub lost_retransmits: u64,
}

/// Linux's per-packet state (`tcp_skb_cb` and its `tx` rate snapshot).
#[derive(Clone, Copy, Debug, Default)]
struct Sent {
    /// The last transmission.
    sent_at: Time,
    /// The rate snapshot at the last transmission (`tcp_rate_skb_sent`).
    first_tx: Time,
    delivered_at: Time,
    delivered: u64,
    app_limited: bool,
    /// The snapshot is still to be used (Linux clears `delivered_mstamp`
    /// once a packet's delivery was sampled).
    rate_pending: bool,
    sacked: bool,
    lost: bool,
    /// A retransmission is in flight (`TCPCB_SACKED_RETRANS`).
    retrans: bool,
    /// Sent more than once (`TCPCB_RETRANS`, `TCPCB_EVER_RETRANS`).
    ever_retrans: bool,
}

/// Which of Linux's transmit timers is armed (`icsk_pending`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum XmitTimer {
    Rto,
    Reorder,
    Probe,
    /// The zero-window probe (`ICSK_TIME_PROBE0`).
    ZeroWindow,
}

/// RACK's state (`tp->rack`).
#[derive(Clone, Copy, Debug, Default)]
struct Rack {
    /// Send time and sequence number of the most recently sent packet
    /// delivered so far.
    xmit_time: Time,
    end_seq: u64,
    /// The RTT of the last delivery that advanced it.
    rtt: Duration,
    advanced: bool,
    /// Reordering was seen (`tp->reord_seen`).
    reord: bool,
}

/// One sender of the family.
#[derive(Clone, Debug)]
pub struct LinuxSender {
    params: LinuxParams,
    tcp: Tcp,
    cc: Cc,
    rtt: LinuxRtt,
    stats: TcpSenderStats,
    linux: LinuxStats,
    /// Packets `una..nxt`, by sequence number.
    q: VecDeque<Sent>,
    /// The application's send limit: packets below it may be sent.
    limit: u64,
    unlimited: bool,
    started: bool,
    /// The SYN was acknowledged (always true without one).
    established: bool,
    /// For a sender that does not pace, the rate `tcp_update_pacing_rate`
    /// computed at the last ACK: Linux computes and reports it even so.
    unpaced_rate: Option<f64>,
    syn_retransmits: u32,
    /// RTOs since snd_una last advanced (`icsk_retransmits`).
    rto_retransmits: u32,
    sacked_out: u32,
    lost_out: u32,
    retrans_out: u32,
    /// Highest sequence number SACKed so far, plus one.
    highest_sacked: u64,
    /// Linux's `tp->reordering`: `dupack_threshold`, raised by reordering.
    reordering: u32,
    /// When the minimum RTT was taken.
    min_rtt_at: Time,
    /// The rate sampler's clocks (`first_tx_mstamp`, `delivered_mstamp`).
    rate_first_tx: Time,
    rate_delivered_at: Time,
    /// The end of the current reduction or loss episode (`high_seq`).
    high_seq: u64,
    prr_delivered: u32,
    prr_out: u32,
    rack: Rack,
    /// The probe's `snd_nxt` while a loss probe is unanswered, and whether
    /// it resent a packet.
    tlp_high_seq: Option<u64>,
    tlp_retrans: bool,
    /// The CE count of the last ACK (AccECN's counter).
    ce_seen: u32,
    /// The TSval of the last ACK (`ts_recent`), echoed in every packet.
    ts_recent_ms: u32,
    /// The receiver's advertised window in bytes (`snd_wnd`), once an ACK
    /// has carried one; until then, and behind ns-2's sink, `rwnd` rules.
    snd_wnd: Option<u64>,
    /// The usable window in whole packets: min(`rwnd`, snd_wnd / payload).
    wnd_pkts: u64,
    /// Zero-window probes sent since the window last let a packet out
    /// (`icsk_probes_out`).
    zero_window_probes: u32,
    /// The next new packet carries CWR.
    cwr_pending: bool,
    /// The lowest sequence number that may need retransmitting.
    rtx_hint: u64,
    /// `is_cwnd_limited` bookkeeping (`tcp_cwnd_validate`).
    max_packets_out: u32,
    cwnd_usage_seq: u64,
    cwnd_limited_now: bool,
    data_segs_out: u64,
    /// Pacing: when the next packet may leave (`tcp_wstamp_ns`).
    next_send: Time,
    pace_at: Option<Time>,
    xmit: Option<(XmitTimer, Time)>,
    /// The congestion control paces or the scenario asked for it.
    paced: bool,
    /// The codepoint data packets carry, if ECN-capable.
    ect: Option<Ecn>,
    /// The congestion control reads the CE count rather than the echo flag.
    counts_ce: bool,
}

impl LinuxSender {
    pub fn new(params: LinuxParams, mut cc: Cc) -> Result<LinuxSender, String> {
        if params.initial_window == 0 {
            return Err("initial_window must be at least 1 (got 0)".to_string());
        }
        if params.rwnd == 0 {
            return Err("rwnd must be at least 1 packet (got 0)".to_string());
        }
        if params.dupthresh == 0 {
            return Err("dupack_threshold must be at least 1 (got 0)".to_string());
        }
        if params.rto.min > params.rto.max || params.rto.min == Duration::ZERO {
            return Err(format!(
                "min_rto must be positive and at most max_rto (got {} s and {} s)",
                params.rto.min.as_secs_f64(),
                params.rto.max.as_secs_f64()
            ));
        }
        let mut tcp = Tcp::new(if params.syn { 1 } else { params.initial_window }, params.mss);
        let own_ecn = cc.ecn();
        let ect = own_ecn.or(params.ecn.then_some(Ecn::Ect0));
        let paced = params.pacing || cc.needs_pacing();
        cc.init(&mut tcp);
        Ok(LinuxSender {
            params,
            tcp,
            cc,
            rtt: LinuxRtt::new(params.rto),
            stats: TcpSenderStats::default(),
            linux: LinuxStats::default(),
            q: VecDeque::new(),
            limit: 0,
            unlimited: false,
            started: false,
            established: !params.syn,
            unpaced_rate: None,
            syn_retransmits: 0,
            rto_retransmits: 0,
            sacked_out: 0,
            lost_out: 0,
            retrans_out: 0,
            highest_sacked: 0,
            reordering: params.dupthresh,
            min_rtt_at: Time::ZERO,
            rate_first_tx: Time::ZERO,
            rate_delivered_at: Time::ZERO,
            high_seq: 0,
            prr_delivered: 0,
            prr_out: 0,
            rack: Rack::default(),
            tlp_high_seq: None,
            tlp_retrans: false,
            ce_seen: 0,
            ts_recent_ms: 0,
            snd_wnd: None,
            wnd_pkts: u64::from(params.rwnd),
            zero_window_probes: 0,
            cwr_pending: false,
            rtx_hint: 0,
            max_packets_out: 0,
            cwnd_usage_seq: 0,
            cwnd_limited_now: false,
            data_segs_out: 0,
            next_send: Time::ZERO,
            pace_at: None,
            xmit: None,
            paced,
            ect,
            counts_ce: own_ecn.is_some(),
        })
    }

    // The application's interface, as ns-2's sender has it.

    /// The application starts: the SYN (or the first flight) goes out.
    pub fn start(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.started {
            return;
        }
        self.started = true;
        self.tcp.now = now;
        if self.params.syn {
            self.limit += 1;
        }
        self.push(now, out);
    }

    /// `Some(n)` adds `n` packets to the send limit, `None` makes it
    /// unlimited. Sends if started.
    pub fn app_data(&mut self, npkts: Option<u64>, now: Time, out: &mut Vec<Segment>) {
        match npkts {
            None => {
                self.unlimited = true;
                self.limit = u64::from(u32::MAX);
            }
            Some(n) => self.limit = self.limit.saturating_add(n).min(u64::from(u32::MAX)),
        }
        if self.started {
            self.tcp.now = now;
            self.slow_start_after_idle(now);
            self.push(now, out);
        }
    }

    /// `tcp_slow_start_after_idle_check`: after more than an RTO without
    /// sending, with nothing outstanding, cwnd halves once per RTO idle,
    /// down to the initial window (`tcp_cwnd_restart`); not for a
    /// congestion control that sets cwnd itself.
    fn slow_start_after_idle(&mut self, now: Time) {
        if !self.established || self.packets_out() > 0 || self.cc_owns_cwnd() || self.data_segs_out == 0 {
            return;
        }
        let rto = self.rtt.rto().nanos();
        let mut idle = now.saturating_since(self.tcp.lsndtime).nanos();
        if idle <= rto {
            return;
        }
        self.cc.cwnd_event(&mut self.tcp, CaEvent::CwndRestart);
        let restart = self.params.initial_window.min(self.tcp.cwnd);
        self.tcp.ssthresh = self.tcp.ssthresh.max(self.tcp.cwnd / 2 + self.tcp.cwnd / 4);
        while idle > rto && self.tcp.cwnd > restart {
            idle -= rto;
            self.tcp.cwnd >>= 1;
        }
        self.tcp.cwnd = self.tcp.cwnd.max(restart);
        self.tcp.cwnd_cnt = 0;
    }

    /// `tcp_event_data_sent`: a data packet leaves.
    fn data_sent(&mut self, now: Time) {
        self.refresh_in_flight();
        if self.tcp.in_flight == 0 {
            self.cc.cwnd_event(&mut self.tcp, CaEvent::TxStart);
        }
        self.tcp.lsndtime = now;
    }

    /// Nothing beyond what was sent will be sent until `app_data`.
    pub fn app_pause(&mut self) {
        self.unlimited = false;
        self.limit = self.limit.min(self.tcp.snd_nxt);
    }

    /// One of the timers may be due; does nothing unless `now` has reached
    /// [`timer_deadline`](Self::timer_deadline).
    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.tcp.now = now;
        if let Some((kind, at)) = self.xmit {
            if now >= at {
                // As `tcp_write_timer_handler`, the reordering and probe
                // timers stay pending while their handlers run, so that
                // `tcp_rearm_rto` counts the RTO from the head's send time.
                match kind {
                    XmitTimer::Rto => {
                        self.xmit = None;
                        self.retransmit_timeout(now, out);
                    }
                    XmitTimer::Reorder => self.reorder_timeout(now, out),
                    XmitTimer::Probe => self.send_loss_probe(now, out),
                    XmitTimer::ZeroWindow => self.send_zero_window_probe(now, out),
                }
            }
        }
        if self.pace_at.is_some_and(|at| now >= at) {
            self.pace_at = None;
            self.push(now, out);
        }
    }

    /// The earliest of the armed timers. Re-read after every call.
    pub fn timer_deadline(&self) -> Option<Time> {
        match (self.xmit.map(|(_, t)| t), self.pace_at) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        }
    }

    pub fn is_started(&self) -> bool {
        self.started
    }

    /// A finite transfer is fully acknowledged.
    pub fn is_done(&self) -> bool {
        self.started && !self.unlimited && self.tcp.snd_una >= self.limit
    }

    // Accessors.

    pub fn cwnd(&self) -> f64 {
        f64::from(self.tcp.cwnd)
    }

    pub fn ssthresh(&self) -> u32 {
        self.tcp.ssthresh
    }

    pub fn srtt(&self) -> Duration {
        self.rtt.srtt()
    }

    pub fn rto(&self) -> Duration {
        self.rtt.rto()
    }

    pub fn stats(&self) -> &TcpSenderStats {
        &self.stats
    }

    pub fn linux_stats(&self) -> &LinuxStats {
        &self.linux
    }

    pub fn ca_state(&self) -> CaState {
        self.tcp.ca_state
    }

    pub fn in_flight(&self) -> u32 {
        self.tcp.in_flight
    }

    pub fn pacing_rate(&self) -> Option<f64> {
        self.tcp.pacing_rate
    }

    /// The traced columns beyond the window and RTT estimates, in payload
    /// bits as Linux reports them: the pacing rate (`tcpi_pacing_rate`,
    /// which Linux computes at every ACK whether or not it paces; null
    /// before the first RTT sample), the receiver's window in packets
    /// (`tcpi_snd_wnd` over the payload: the advertised window, or the
    /// scenario's fixed `rwnd`), then the congestion control's own
    /// (`TCP_CC_INFO`). All null until the connection is established, as
    /// emulation reports them.
    pub fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        if !(self.started && self.established) {
            out("pacing_rate_bps", f64::NAN);
            out("rwnd_pkts", f64::NAN);
            self.cc.info(&self.tcp, 1, &mut |key, _| out(key, f64::NAN));
            return;
        }
        let payload = self.params.mss.saturating_sub(self.params.header);
        let rate = self.tcp.pacing_rate.or(self.unpaced_rate);
        let bits = |bytes: f64| bytes * f64::from(payload) / f64::from(self.params.mss) * 8.0;
        out("pacing_rate_bps", rate.map_or(f64::NAN, bits));
        let advertised = self.snd_wnd.map(|w| w as f64 / f64::from(payload));
        out("rwnd_pkts", advertised.unwrap_or(f64::INFINITY).min(f64::from(self.params.rwnd)));
        self.cc.info(&self.tcp, payload, out);
    }

    /// The first packet the receiver's window does not let out
    /// (`tcp_wnd_end`).
    fn wnd_end(&self) -> u64 {
        self.tcp.snd_una + self.wnd_pkts
    }

    pub fn congestion_control(&self) -> &Cc {
        &self.cc
    }

    /// The state the congestion control sees.
    pub fn tcp(&self) -> &Tcp {
        &self.tcp
    }

    // Bookkeeping.

    fn packets_out(&self) -> u32 {
        (self.tcp.snd_nxt - self.tcp.snd_una) as u32
    }

    /// `tcp_packets_in_flight`: sent, minus delivered or lost, plus
    /// retransmissions in flight.
    fn refresh_in_flight(&mut self) {
        self.tcp.in_flight = self.packets_out() - (self.sacked_out + self.lost_out) + self.retrans_out;
    }

    fn sent_mut(&mut self, seq: u64) -> &mut Sent {
        let i = (seq - self.tcp.snd_una) as usize;
        &mut self.q[i]
    }

    fn set_state(&mut self, new: CaState) {
        if new != self.tcp.ca_state {
            self.cc.set_state(&mut self.tcp, new);
            self.tcp.ca_state = new;
        }
    }

    fn in_cwnd_reduction(&self) -> bool {
        matches!(self.tcp.ca_state, CaState::Cwr | CaState::Recovery)
    }

    /// `tcp_init_cwnd_reduction`: a reduction starts now.
    fn init_cwnd_reduction(&mut self) {
        self.high_seq = self.tcp.snd_nxt;
        self.tlp_high_seq = None;
        self.tcp.cwnd_cnt = 0;
        self.tcp.prior_cwnd = self.tcp.cwnd;
        self.prr_delivered = 0;
        self.prr_out = 0;
        self.tcp.ssthresh = self.cc.ssthresh(&self.tcp);
        if self.ect.is_some() {
            self.cwr_pending = true;
        }
        if !self.params.prr && !self.cc_owns_cwnd() {
            // RFC 6675 without PRR: cwnd = ssthresh at once.
            self.tcp.cwnd = self.tcp.ssthresh.max(1);
        }
    }

    /// `tcp_end_cwnd_reduction`.
    fn end_cwnd_reduction(&mut self) {
        if self.cc_owns_cwnd() {
            return;
        }
        if self.tcp.ssthresh < super::cc::INFINITE_SSTHRESH {
            self.tcp.cwnd = self.tcp.ssthresh.max(1);
        }
        self.cc.cwnd_event(&mut self.tcp, CaEvent::CompleteCwr);
    }

    /// `tcp_mark_skb_lost`.
    fn mark_lost(&mut self, seq: u64) {
        let s = self.sent_mut(seq);
        if s.sacked {
            return;
        }
        let (was_lost, was_retrans) = (s.lost, s.retrans);
        s.lost = true;
        s.retrans = false;
        if was_lost {
            if was_retrans {
                self.retrans_out -= 1;
                self.linux.lost_retransmits += 1;
                self.tcp.lost += 1;
            }
        } else {
            if was_retrans {
                self.retrans_out -= 1;
            }
            self.lost_out += 1;
            self.tcp.lost += 1;
            self.linux.marked_lost += 1;
        }
        self.rtx_hint = self.rtx_hint.min(seq);
    }

    // Sending (`tcp_xmit_retransmit_queue`, `tcp_write_xmit`).

    /// Sends what cwnd, the receiver window, the application and pacing
    /// allow: lost packets first, then new data.
    fn push(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.send(now, out, true);
    }

    /// [`push`](Self::push), or with `new_data` false only the lost packets
    /// (`tcp_xmit_retransmit_queue`, as a timer sends).
    fn send(&mut self, now: Time, out: &mut Vec<Segment>, new_data: bool) {
        if !self.started {
            return;
        }
        if !self.established {
            // Only the SYN until it is acknowledged.
            if self.tcp.snd_nxt == 0 && self.limit > 0 {
                self.transmit_new(now, out);
                self.arm_rto(now);
            }
            return;
        }
        self.refresh_in_flight();
        let prior_out = self.packets_out();
        let mut sent_new = false;
        let mut sent_any = false;
        loop {
            if self.paced && self.next_send > now {
                self.pace_at = Some(self.next_send);
                break;
            }
            if self.tcp.in_flight >= self.tcp.cwnd {
                self.cwnd_limited_now = true;
                break;
            }
            if let Some(seq) = self.next_retransmission() {
                self.retransmit(seq, now, out);
                sent_any = true;
                if seq == self.tcp.snd_una && self.xmit.is_none_or(|(k, _)| k != XmitTimer::Reorder) {
                    self.xmit = Some((XmitTimer::Rto, now + self.rtt.rto()));
                }
                continue;
            }
            if !new_data {
                break;
            }
            let nxt = self.tcp.snd_nxt;
            if nxt >= self.limit || nxt >= self.wnd_end() {
                if nxt >= self.limit && self.lost_out <= self.retrans_out {
                    // `tcp_rate_check_app_limited`.
                    self.tcp.app_limited = (self.tcp.delivered + u64::from(self.tcp.in_flight)).max(1);
                }
                break;
            }
            if self.transmit_new(now, out) {
                sent_new = true;
                sent_any = true;
            }
        }
        // `tcp_write_xmit`: whatever stopped the sending, cwnd limited it if
        // it is full now (a paced sender fills it between pacing gaps).
        if sent_any && self.tcp.in_flight >= self.tcp.cwnd {
            self.cwnd_limited_now = true;
        }
        if sent_new {
            self.zero_window_probes = 0;
            if prior_out == 0 || self.xmit.is_some_and(|(k, _)| matches!(k, XmitTimer::Probe | XmitTimer::ZeroWindow)) {
                self.rearm_rto(now);
            }
            self.schedule_loss_probe(now, false);
        }
        if new_data {
            self.check_probe_timer(now);
        }
        // Linux validates cwnd only after sending something, in
        // `tcp_write_xmit`.
        if sent_any && new_data {
            self.cwnd_validate();
        }
        self.cwnd_limited_now = false;
    }

    /// The lowest lost packet not yet retransmitted, while retransmissions
    /// are owed (`retrans_out < lost_out`).
    fn next_retransmission(&mut self) -> Option<u64> {
        if self.retrans_out >= self.lost_out {
            return None;
        }
        let una = self.tcp.snd_una;
        let mut seq = self.rtx_hint.max(una);
        while seq < self.tcp.snd_nxt {
            let s = &self.q[(seq - una) as usize];
            if s.lost && !s.retrans && !s.sacked {
                self.rtx_hint = seq;
                return Some(seq);
            }
            seq += 1;
        }
        self.rtx_hint = seq;
        None
    }

    /// Pacing: the next packet waits size / rate after this one.
    fn paced_send(&mut self, now: Time) {
        self.data_segs_out += 1;
        if !self.paced || self.data_segs_out < UNPACED_SEGMENTS {
            return;
        }
        if let Some(rate) = self.tcp.pacing_rate.filter(|r| *r > 0.0) {
            let gap = Duration::from_secs_f64(f64::from(self.tcp.mss) / rate);
            self.next_send = self.next_send.max(now) + gap;
        }
    }

    /// `tcp_rate_skb_sent`: the delivery-rate snapshot a packet carries.
    fn rate_snapshot(&mut self, now: Time) -> (Time, Time, u64, bool) {
        if self.packets_out() == 0 {
            self.rate_first_tx = now;
            self.rate_delivered_at = now;
        }
        (
            self.rate_first_tx,
            self.rate_delivered_at,
            self.tcp.delivered,
            self.tcp.app_limited != 0,
        )
    }

    /// Sends packet `snd_nxt`. Returns whether it was data (not the SYN).
    fn transmit_new(&mut self, now: Time, out: &mut Vec<Segment>) -> bool {
        let seq = self.tcp.snd_nxt;
        let syn = self.params.syn && seq == 0;
        if !syn {
            self.data_sent(now);
        }
        let (first_tx, delivered_at, delivered, app_limited) = self.rate_snapshot(now);
        self.q.push_back(Sent {
            sent_at: now,
            first_tx,
            delivered_at,
            delivered,
            app_limited,
            rate_pending: true,
            ..Sent::default()
        });
        self.tcp.snd_nxt += 1;
        self.tcp.in_flight += 1;
        if self.in_cwnd_reduction() {
            self.prr_out += 1;
        }
        let ect = if syn { None } else { self.ect };
        let cwr = !syn && ect.is_some() && std::mem::take(&mut self.cwr_pending);
        self.stats.packets_sent += 1;
        out.push(Segment {
            seq: seq as u32,
            syn,
            retransmit: false,
            cwr,
            ect: ect.is_some(),
            ect1: ect == Some(Ecn::Ect1),
            tsecr_ms: self.ts_recent_ms,
            probe: false,
        });
        if !syn {
            self.paced_send(now);
        }
        !syn
    }

    /// Sends packet `seq` again (`tcp_retransmit_skb`).
    fn retransmit(&mut self, seq: u64, now: Time, out: &mut Vec<Segment>) {
        self.resend(seq, now, out, true);
    }

    /// Sends packet `seq` again; `tracked` as `tcp_retransmit_skb`, which
    /// counts it in `retrans_out` (and PRR's `prr_out`), else as the loss
    /// probe's bare `__tcp_retransmit_skb`, which leaves the packet's
    /// accounting as it was.
    fn resend(&mut self, seq: u64, now: Time, out: &mut Vec<Segment>, tracked: bool) {
        if !(self.params.syn && seq == 0) {
            self.data_sent(now);
        }
        let (first_tx, delivered_at, delivered, app_limited) = self.rate_snapshot(now);
        let reduction = self.in_cwnd_reduction();
        let s = self.sent_mut(seq);
        let newly = !s.retrans;
        s.sent_at = now;
        s.first_tx = first_tx;
        s.delivered_at = delivered_at;
        s.delivered = delivered;
        s.app_limited = app_limited;
        s.rate_pending = true;
        s.ever_retrans = true;
        if tracked {
            s.retrans = true;
            if newly {
                self.retrans_out += 1;
                self.tcp.in_flight += 1;
            }
            if reduction {
                self.prr_out += 1;
            }
        }
        let syn = self.params.syn && seq == 0;
        if syn {
            self.syn_retransmits += 1;
        }
        // RFC 3168 section 6.1.5: a classic ECN sender's retransmissions are
        // not ECN-capable; DCTCP's and Prague's are (Linux sets their
        // codepoint on the socket).
        let ect = if syn || !self.counts_ce { None } else { self.ect };
        self.stats.packets_sent += 1;
        self.stats.retransmits += 1;
        out.push(Segment {
            seq: seq as u32,
            syn,
            retransmit: true,
            cwr: false,
            ect: ect.is_some(),
            ect1: ect == Some(Ecn::Ect1),
            tsecr_ms: self.ts_recent_ms,
            probe: false,
        });
        if !syn {
            self.paced_send(now);
        }
    }

    /// `tcp_cwnd_validate`: whether cwnd limited the sending over the last
    /// window of data.
    fn cwnd_validate(&mut self) {
        let out = self.packets_out();
        let limited = std::mem::take(&mut self.cwnd_limited_now);
        if self.tcp.snd_una >= self.cwnd_usage_seq
            || limited
            || (!self.tcp.is_cwnd_limited && out > self.max_packets_out)
        {
            self.tcp.is_cwnd_limited = limited;
            self.max_packets_out = out;
            self.cwnd_usage_seq = self.tcp.snd_nxt;
        }
    }

    /// `tcp_is_cwnd_limited`: in slow start, also while cwnd is below twice
    /// what was sent.
    fn is_cwnd_limited(&self) -> bool {
        self.tcp.is_cwnd_limited || (self.tcp.in_slow_start() && self.tcp.cwnd < 2 * self.max_packets_out)
    }

    /// Whether the congestion control sets cwnd itself (`cong_control`).
    fn cc_owns_cwnd(&self) -> bool {
        self.cc.has_cong_control()
    }

    /// A rate sample with nothing in it, for hooks called off an ACK.
    fn empty_rate_sample() -> RateSample {
        RateSample {
            delivered: -1,
            ..RateSample::default()
        }
    }
}
