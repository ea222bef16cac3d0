//! The Linux-style sender's transmit timers (`tcp_timer.c`, `tcp_rearm_rto`,
//! `tcp_schedule_loss_probe`, `tcp_send_loss_probe`, `tcp_enter_loss`,
//! `tcp_rack_reo_timeout`): Linux's one timer (`icsk_pending`) for the
//! RTO, RACK's reordering timeout and the tail loss probe.

use super::*;

impl LinuxSender {
    pub(super) fn arm_rto(&mut self, now: Time) {
        self.xmit = Some((XmitTimer::Rto, now + self.rtt.rto()));
    }

    /// `tcp_rto_delta_us`: how far in the future the head's RTO is.
    pub(super) fn rto_delta(&self, now: Time) -> Duration {
        let head = self.q.front().map_or(now, |s| s.sent_at);
        (head + self.rtt.rto()).saturating_since(now)
    }

    /// `tcp_rearm_rto`.
    pub(super) fn rearm_rto(&mut self, now: Time) {
        if self.packets_out() == 0 {
            self.xmit = None;
            return;
        }
        let rto = match self.xmit {
            Some((XmitTimer::Reorder | XmitTimer::Probe, _)) => self.rto_delta(now).max(Duration::from_nanos(1)),
            _ => self.rtt.rto(),
        };
        self.xmit = Some((XmitTimer::Rto, now + rto));
    }

    /// `tcp_schedule_loss_probe`: arms the probe timer if a probe may be
    /// sent; returns whether it did.
    pub(super) fn schedule_loss_probe(&mut self, now: Time, advancing_rto: bool) -> bool {
        let out = self.packets_out();
        if !self.params.tlp
            || out == 0
            || !self.established
            || !matches!(self.tcp.ca_state, CaState::Open | CaState::Cwr)
        {
            return false;
        }
        let srtt = self.rtt.srtt();
        let mut timeout = if srtt > Duration::ZERO {
            let extra = if out == 1 { self.rtt.min_rto() } else { TIMEOUT_MIN };
            Duration::from_nanos(2 * srtt.nanos()) + extra
        } else {
            self.params.rto.initial
        };
        let rto_delta = if advancing_rto {
            self.rtt.rto()
        } else {
            self.rto_delta(now)
        };
        if rto_delta > Duration::ZERO {
            timeout = timeout.min(rto_delta);
        }
        self.xmit = Some((XmitTimer::Probe, now + timeout));
        true
    }

    /// `tcp_send_loss_probe`: a new packet if there is one, ignoring cwnd,
    /// else the last packet again. Unlike Linux's, a new packet ignores
    /// pacing too (bench/README.md, "The RTO in recovery", says why).
    pub(super) fn send_loss_probe(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.tlp_high_seq.is_none() {
            let nxt = self.tcp.snd_nxt;
            let mut sent = false;
            if nxt < self.limit && nxt < self.wnd_end() {
                self.transmit_new(now, out);
                self.tlp_retrans = false;
                sent = true;
            } else if nxt > self.tcp.snd_una {
                let last = nxt - 1;
                if !self.sent_mut(last).sacked {
                    // Not counted as a retransmission in flight.
                    self.resend(last, now, out, false);
                    self.tlp_retrans = true;
                    sent = true;
                }
            }
            if sent {
                self.tlp_high_seq = Some(self.tcp.snd_nxt);
                self.linux.loss_probes += 1;
                self.xmit = None;
            }
        }
        self.rearm_rto(now);
    }

    /// The retransmission timer fired (`tcp_retransmit_timer`).
    pub(super) fn retransmit_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.packets_out() == 0 {
            return;
        }
        self.stats.timeouts += 1;
        if !self.established {
            // The SYN again, with backoff.
            self.rtt.back_off();
            self.retransmit(0, now, out);
            self.arm_rto(now);
            return;
        }
        self.enter_loss(now);
        self.rto_retransmits += 1;
        self.rtt.back_off();
        self.refresh_in_flight();
        if let Some(seq) = self.next_retransmission() {
            self.retransmit(seq, now, out);
        }
        self.arm_rto(now);
        self.push(now, out);
    }

    /// `tcp_enter_loss`.
    pub(super) fn enter_loss(&mut self, now: Time) {
        self.timeout_mark_lost(now);
        let state = self.tcp.ca_state;
        if state <= CaState::Disorder
            || self.high_seq <= self.tcp.snd_una
            || (state == CaState::Loss && self.rto_retransmits == 0)
        {
            self.tcp.prior_cwnd = self.tcp.cwnd;
            self.tcp.ssthresh = self.cc.ssthresh(&self.tcp);
            self.cc.cwnd_event(&mut self.tcp, CaEvent::Loss);
        }
        self.refresh_in_flight();
        self.tcp.cwnd = self.tcp.in_flight + 1;
        self.tcp.cwnd_cnt = 0;
        // A timeout with many packets SACKed outside a recovery suggests the
        // reordering degree was overestimated: back to `dupack_threshold`.
        if state <= CaState::Disorder && self.sacked_out >= self.params.dupthresh {
            self.reordering = self.reordering.min(self.params.dupthresh);
        }
        self.set_state(CaState::Loss);
        self.high_seq = self.tcp.snd_nxt;
        self.tlp_high_seq = None;
        if self.ect.is_some() {
            self.cwr_pending = true;
        }
    }

    /// `tcp_timeout_mark_lost`: the head and every packet not SACKed are
    /// lost (a retransmission in flight is lost again), except, with RACK,
    /// the packets sent less than RACK's RTT ago (`tcp_rack_skb_timeout`
    /// with no reordering window is still positive): those stay in flight.
    fn timeout_mark_lost(&mut self, now: Time) {
        let una = self.tcp.snd_una;
        for seq in una..self.tcp.snd_nxt {
            let s = &self.q[(seq - una) as usize];
            if s.sacked {
                continue;
            }
            if self.params.rack && seq != una && now.saturating_since(s.sent_at) < self.rack.rtt {
                continue;
            }
            self.mark_lost(seq);
        }
    }

    /// RACK's reordering timer fired (`tcp_rack_reo_timeout`).
    pub(super) fn reorder_timeout(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.refresh_in_flight();
        let prior_in_flight = self.tcp.in_flight;
        // The timer is not armed again from here: a packet still waiting
        // waits for the next ACK, or the RTO.
        self.rack_detect_loss(now);
        self.refresh_in_flight();
        if prior_in_flight != self.tcp.in_flight {
            // Recovery starts from any other state, Loss included.
            if self.tcp.ca_state != CaState::Recovery {
                self.enter_recovery();
                if !self.cc_owns_cwnd() {
                    self.cwnd_reduction(1, 0, false);
                }
            }
            self.send(now, out, false);
        }
        // With the reordering timer still pending, the RTO is re-armed to
        // fire an RTO after the head's last transmission.
        if self.xmit.is_none_or(|(k, _)| k != XmitTimer::Rto) {
            self.rearm_rto(now);
        }
    }

    /// `tcp_check_probe_timer`: data waits, nothing is out, and the
    /// receiver's window holds no whole packet; arms the probe unless a
    /// timer is armed.
    pub(super) fn check_probe_timer(&mut self, now: Time) {
        if self.established
            && self.xmit.is_none()
            && self.packets_out() == 0
            && self.tcp.snd_nxt < self.limit
            && self.tcp.snd_nxt >= self.wnd_end()
        {
            self.arm_zero_window_probe(now);
        }
    }

    /// `tcp_reset_xmit_timer(ICSK_TIME_PROBE0)`: the RTO (at least
    /// `rto_min`), doubled per probe already sent, at most the largest RTO.
    pub(super) fn arm_zero_window_probe(&mut self, now: Time) {
        let base = self.rtt.rto().max(self.rtt.min_rto()).nanos();
        let when = base.saturating_mul(1u64 << self.zero_window_probes.min(20));
        let when = Duration::from_nanos(when).min(self.params.rto.max);
        self.xmit = Some((XmitTimer::ZeroWindow, now + when));
    }

    /// `tcp_probe_timer` and `tcp_xmit_probe_skb`: a header with the last
    /// acknowledged sequence number, which the receiver answers with its
    /// window, then the timer again, backed off.
    pub(super) fn send_zero_window_probe(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.xmit = None;
        if self.packets_out() > 0 || self.tcp.snd_nxt >= self.limit || self.tcp.snd_nxt < self.wnd_end() {
            self.zero_window_probes = 0;
            self.push(now, out);
            return;
        }
        if let Some(seq) = self.tcp.snd_una.checked_sub(1) {
            out.push(Segment {
                seq: seq as u32,
                tsecr_ms: self.ts_recent_ms,
                probe: true,
                ..Segment::default()
            });
        }
        self.zero_window_probes += 1;
        self.arm_zero_window_probe(now);
    }
}
