//! The ACK path of the Linux-style sender (`tcp_ack` and what it calls):
//! SACK and cumulative marking, delivery-rate sampling, RACK and RFC 6675
//! loss detection, the state machine of `tcp_fastretrans_alert`, the tail
//! loss probe's answer, PRR, and the congestion control's hooks.

use super::*;
use crate::transport::linux::rcvwnd::ts_clock_ms;

/// What one ACK delivered, gathered while marking (`tcp_sacktag_state`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Gathered {
    /// The rate sample's snapshot: the most recently sent packet delivered.
    pub(super) prior_delivered: Option<u64>,
    pub(super) prior_at: Time,
    last_sent: Time,
    last_end_seq: u64,
    pub(super) send_interval: Duration,
    is_app_limited: bool,
    is_retrans: bool,
    /// Send times of the oldest and newest packets never retransmitted
    /// that this ACK acknowledged cumulatively, and that it SACKed, for the
    /// RTT samples (`first_ackt`, `last_ackt`, `first_sackt`, `last_sackt`).
    cum_oldest: Option<Time>,
    cum_newest: Option<Time>,
    sack_oldest: Option<Time>,
    sack_newest: Option<Time>,
    /// A packet ever retransmitted was acknowledged cumulatively
    /// (`FLAG_RETRANS_DATA_ACKED`).
    retrans_acked: bool,
    /// Lowest never-retransmitted packet delivered below the highest SACK.
    reord: Option<u64>,
}

impl LinuxSender {
    /// An ACK arrived.
    pub fn on_ack(&mut self, ack: &AckInfo, now: Time, out: &mut Vec<Segment>) {
        if !self.started {
            return;
        }
        self.tcp.now = now;
        let una_new = ack.ack.map_or(0, |a| u64::from(a) + 1);
        let prior_una = self.tcp.snd_una;
        // An ACK of what was never sent, or older than one already seen.
        if una_new > self.tcp.snd_nxt || una_new < prior_una {
            return;
        }
        // `tcp_replace_ts_recent`: the receiver sends no data, so every
        // ACK's timestamp is the one to echo.
        if self.params.timestamps {
            self.ts_recent_ms = ack.tsval_ms;
        }
        if let Some(w) = ack.wnd_bytes {
            self.update_window(w, una_new > prior_una);
        }
        let established = self.established;
        self.refresh_in_flight();
        let prior_in_flight = self.tcp.in_flight;
        let prior_delivered = self.tcp.delivered;
        let prior_lost = self.tcp.lost;
        let prior_packets = self.packets_out();
        let prior_fack = self.fack();
        let mut g = Gathered::default();

        // SACK blocks (`tcp_sacktag_write_queue`), then the cumulative part
        // (`tcp_clean_rtx_queue`).
        let mut sacked_new = false;
        for &(l, r) in ack.sack_blocks() {
            let lo = u64::from(l).max(una_new);
            let hi = u64::from(r).min(self.tcp.snd_nxt);
            for seq in lo..hi {
                let s = self.q[(seq - prior_una) as usize];
                if s.sacked {
                    continue;
                }
                self.q[(seq - prior_una) as usize].sacked = true;
                self.q[(seq - prior_una) as usize].rate_pending = false;
                self.sacked_out += 1;
                sacked_new = true;
                self.delivered_one(seq, &s, now, &mut g, true);
                self.highest_sacked = self.highest_sacked.max(seq + 1);
            }
        }
        for seq in prior_una..una_new {
            let s = self
                .q
                .pop_front()
                .expect("a packet for every sequence number below snd_nxt");
            g.retrans_acked |= s.ever_retrans;
            if s.sacked {
                self.sacked_out -= 1;
            } else {
                self.delivered_one(seq, &s, now, &mut g, false);
            }
        }
        let advanced = una_new > prior_una;
        if advanced {
            self.tcp.snd_una = una_new;
            self.rto_retransmits = 0;
            self.rtx_hint = self.rtx_hint.max(una_new);
            if !self.established {
                self.established = true;
                // `tcp_init_transfer`: IW 1 after more than one SYN
                // retransmission.
                self.tcp.cwnd = if self.syn_retransmits > 1 {
                    1
                } else {
                    self.params.initial_window
                };
            }
        }
        if let Some(low) = g.reord.filter(|&low| low < prior_fack) {
            // `tcp_check_sack_reordering`: the degree is the distance from
            // the packet to the highest SACK as this ACK leaves it.
            self.rack.reord = true;
            let metric = (self.fack() - low) as u32;
            if metric > self.reordering {
                self.reordering = metric.min(300);
            }
        }
        self.refresh_in_flight();

        // ECN: the receiver's CE count for the congestion controls that
        // read it, the echo flag for classic ECN.
        let ce = ack.ce_count.wrapping_sub(self.ce_seen);
        self.ce_seen = ack.ce_count;
        self.tcp.delivered_ce += u64::from(ce);
        // The ECE on the SYN's ACK is ECN's negotiation, not congestion.
        let ece = established
            && if self.counts_ce {
                ce > 0
            } else {
                self.ect.is_some() && ack.ece
            };
        let acked_sacked = (self.tcp.delivered - prior_delivered) as u32;
        if self.counts_ce && acked_sacked > 0 {
            let ev = if ce > 0 { CaEvent::EcnIsCe } else { CaEvent::EcnNoCe };
            self.cc.cwnd_event(&mut self.tcp, ev);
        }
        self.cc.in_ack_event(
            &mut self.tcp,
            &AckEvent {
                acked: acked_sacked,
                ce,
                ece,
                advanced,
            },
        );

        // RTT (`tcp_clean_rtx_queue`, `tcp_ack_update_rtt`): the estimator
        // from the oldest packet acknowledged cumulatively, unless a packet
        // ever retransmitted was too (Karn), else from the oldest SACKed;
        // the minimum and the rate sample from the newest SACKed, else the
        // newest acknowledged cumulatively.
        let cum = |t: Option<Time>| t.filter(|_| !g.retrans_acked);
        let mut ca_rtt = g.sack_newest.or(cum(g.cum_newest)).map(|t| now.saturating_since(t));
        let mut seq_rtt = cum(g.cum_oldest).or(g.sack_oldest).map(|t| now.saturating_since(t));
        if seq_rtt.is_none() && advanced && self.params.timestamps && ack.tsecr_ms != 0 {
            // `tcp_rtt_tsopt_us`: an ACK of retransmitted data alone is
            // timed by the timestamp it echoes, in whole milliseconds.
            let ms = ts_clock_ms(now).wrapping_sub(ack.tsecr_ms);
            if (ms as i32) >= 0 {
                let r = Duration::from_millis(u64::from(ms)).max(Duration::from_micros(1));
                (seq_rtt, ca_rtt) = (Some(r), Some(r));
            }
        }
        if let Some(r) = seq_rtt {
            self.rtt.sample(r, self.tcp.snd_una, self.tcp.snd_nxt);
            self.rtt.reset_backoff();
            self.tcp.srtt = self.rtt.srtt();
        }
        if let Some(r) = ca_rtt {
            self.update_min_rtt(r, now);
        }
        let cum_acked = prior_packets - self.packets_out();
        if cum_acked > 0 || ca_rtt.is_some() {
            self.cc.pkts_acked(&mut self.tcp, cum_acked, ca_rtt);
        }

        if self.tlp_high_seq.is_some() {
            self.process_tlp_ack(una_new, advanced, sacked_new);
        }
        let reo_armed = self.fastretrans_alert(now, ece);
        // What it marked lost is no longer in flight: Linux's
        // `tcp_packets_in_flight` is computed from the counters whenever it
        // is read, so BBR's packet conservation (`in_flight + acked`) and
        // the rest below see it.
        self.refresh_in_flight();
        // The timers again (`FLAG_SET_XMIT_TIMER`) when the ACK advanced
        // snd_una, or SACKed a packet first sent before the head's last
        // transmission (`tcp_clean_rtx_queue`): in recovery, the SACKs of
        // the flight sent before a retransmitted head keep its RTO off.
        let sack_rearm = !advanced
            && g.sack_oldest
                .is_some_and(|t| self.q.front().is_some_and(|h| t < h.sent_at));
        if (advanced || sack_rearm) && !reo_armed && !self.schedule_loss_probe(now, true) {
            self.rearm_rto(now);
        }

        let rs = self.rate_gen(
            &g,
            acked_sacked,
            (self.tcp.lost - prior_lost) as u32,
            prior_in_flight,
            ca_rtt,
            now,
        );
        if !self.cc.cong_control(&mut self.tcp, &rs) {
            if self.in_cwnd_reduction() {
                self.cwnd_reduction(acked_sacked, rs.losses, advanced);
            } else if advanced {
                self.tcp.is_cwnd_limited = self.is_cwnd_limited();
                self.cc.cong_avoid(&mut self.tcp, acked_sacked);
            }
            self.update_pacing_rate();
        }
        self.tcp.cwnd = self.tcp.cwnd.max(1);
        self.push(now, out);
        if self.packets_out() == 0 && self.xmit.is_some_and(|(k, _)| k != XmitTimer::ZeroWindow) {
            self.xmit = None;
        }
        self.check_probe_timer(now);
    }

    /// An acceptable ACK's window (`tcp_ack_update_window`): taken if the
    /// ACK advances snd_una, widens the window or closes it (the receiver
    /// sends no data, so no other update is possible). A packet is let out only if
    /// all of it fits (`tcp_snd_wnd_test`), so the window counts in whole
    /// packets of the connection's payload.
    pub(super) fn update_window(&mut self, wnd_bytes: u32, advanced: bool) {
        let wnd = u64::from(wnd_bytes);
        if advanced || wnd == 0 || self.snd_wnd.is_none_or(|w| wnd > w) {
            self.snd_wnd = Some(wnd);
            let payload = u64::from(self.params.mss.saturating_sub(self.params.header).max(1));
            self.wnd_pkts = (wnd / payload).min(u64::from(self.params.rwnd));
        }
    }

    /// A packet newly delivered, by SACK or cumulatively: the counts, the
    /// rate sample (`tcp_rate_skb_delivered`), RACK (`tcp_rack_advance`)
    /// and the RTT and reordering evidence.
    fn delivered_one(&mut self, seq: u64, s: &Sent, now: Time, g: &mut Gathered, by_sack: bool) {
        self.tcp.delivered += 1;
        if s.lost {
            self.lost_out -= 1;
        }
        if s.retrans {
            self.retrans_out -= 1;
        }
        if s.rate_pending
            && (g.prior_delivered.is_none() || sent_after(s.sent_at, seq + 1, self.rate_first_tx, g.last_end_seq))
        {
            g.prior_delivered = Some(s.delivered);
            g.prior_at = s.delivered_at;
            g.is_app_limited = s.app_limited;
            g.is_retrans = s.ever_retrans;
            g.last_end_seq = seq + 1;
            g.last_sent = s.sent_at;
            g.send_interval = s.sent_at.saturating_since(s.first_tx);
            self.rate_first_tx = s.sent_at;
        }
        let rtt = now.saturating_since(s.sent_at);
        // A retransmission acknowledged faster than the minimum RTT was
        // probably the original's delivery: RACK ignores it.
        if !(s.ever_retrans && rtt < self.tcp.min_rtt) {
            self.rack.advanced = true;
            self.rack.rtt = rtt;
            if sent_after(s.sent_at, seq + 1, self.rack.xmit_time, self.rack.end_seq) {
                self.rack.xmit_time = s.sent_at;
                self.rack.end_seq = seq + 1;
            }
        }
        if !s.ever_retrans {
            let (oldest, newest) = if by_sack {
                (&mut g.sack_oldest, &mut g.sack_newest)
            } else {
                (&mut g.cum_oldest, &mut g.cum_newest)
            };
            *oldest = Some(oldest.map_or(s.sent_at, |t| t.min(s.sent_at)));
            *newest = Some(newest.map_or(s.sent_at, |t| t.max(s.sent_at)));
            if !s.sacked && seq < self.highest_sacked {
                g.reord = Some(g.reord.map_or(seq, |r| r.min(seq)));
            }
        }
    }

    /// `tcp_highest_sack_seq`: one above the highest packet SACKed, or
    /// snd_una when none is.
    fn fack(&self) -> u64 {
        if self.sacked_out > 0 {
            self.highest_sacked
        } else {
            self.tcp.snd_una
        }
    }

    /// Linux's windowed minimum RTT (`tcp_update_rtt_min`): the minimum over
    /// the last 300 s (`sysctl_tcp_min_rtt_wlen`), kept here as the
    /// minimum and when it was seen, renewed once it is older.
    fn update_min_rtt(&mut self, rtt: Duration, now: Time) {
        let expired = now.saturating_since(self.min_rtt_at) > MIN_RTT_WINDOW;
        if self.tcp.min_rtt == Duration::ZERO || rtt <= self.tcp.min_rtt || expired {
            self.tcp.min_rtt = rtt.max(Duration::from_nanos(1));
            self.min_rtt_at = now;
        }
    }

    /// `tcp_rate_gen`: the rate sample of this ACK.
    pub(super) fn rate_gen(
        &mut self,
        g: &Gathered,
        delivered: u32,
        losses: u32,
        prior_in_flight: u32,
        rtt: Option<Duration>,
        now: Time,
    ) -> RateSample {
        if self.tcp.app_limited != 0 && self.tcp.delivered > self.tcp.app_limited {
            self.tcp.app_limited = 0;
        }
        if delivered > 0 {
            self.rate_delivered_at = now;
        }
        let mut rs = RateSample {
            acked_sacked: delivered,
            losses,
            prior_in_flight,
            rtt,
            ..Self::empty_rate_sample()
        };
        let Some(prior) = g.prior_delivered else {
            return rs;
        };
        rs.prior_delivered = prior;
        rs.is_app_limited = g.is_app_limited;
        rs.is_retrans = g.is_retrans;
        rs.delivered = (self.tcp.delivered - prior) as i64;
        let ack_interval = now.saturating_since(g.prior_at);
        let interval = g.send_interval.max(ack_interval);
        // Linux drops the interval of a sample over less than the minimum
        // RTT (it would overstate the rate, as when ACKs are compressed),
        // and keeps its count of packets delivered.
        rs.interval = (interval >= self.tcp.min_rtt && interval > Duration::ZERO).then_some(interval);
        rs
    }

    /// `tcp_process_tlp_ack`: was the loss probe needed?
    pub(super) fn process_tlp_ack(&mut self, una: u64, advanced: bool, sacked_new: bool) {
        let Some(high) = self.tlp_high_seq else { return };
        if una < high {
            return;
        }
        if !self.tlp_retrans {
            // A probe of new data was acknowledged.
            self.tlp_high_seq = None;
        } else if una > high {
            // The probe repaired a loss: reduce as for ECN, at once.
            self.tlp_high_seq = None;
            self.init_cwnd_reduction();
            self.set_state(CaState::Cwr);
            self.end_cwnd_reduction();
            self.set_state(CaState::Open);
        } else if !advanced && !sacked_new {
            // A pure duplicate: the original and the probe both arrived.
            self.tlp_high_seq = None;
        }
    }

    /// `tcp_fastretrans_alert`, for SACK: leaves a finished episode, finds
    /// losses, and moves between the states (from Loss to Recovery too,
    /// when a retransmission is lost again). Returns whether RACK armed its
    /// reordering timer.
    pub(super) fn fastretrans_alert(&mut self, now: Time, ece: bool) -> bool {
        let una = self.tcp.snd_una;
        if una >= self.high_seq {
            match self.tcp.ca_state {
                // CWR waits for something above high_seq: the CWR flag must
                // have reached the receiver.
                CaState::Cwr if una != self.high_seq => {
                    self.end_cwnd_reduction();
                    self.set_state(CaState::Open);
                }
                CaState::Recovery => {
                    self.end_cwnd_reduction();
                    self.set_state(CaState::Open);
                }
                CaState::Loss => self.set_state(CaState::Open),
                _ => {}
            }
        }
        let prior_retrans = self.retrans_out;
        let armed = self.identify_loss(now);
        // `FLAG_LOST_RETRANS`: a retransmission was found lost again.
        let lost_retrans = self.retrans_out < prior_retrans;
        match self.tcp.ca_state {
            CaState::Recovery => {}
            // Loss falls through to Recovery when a retransmission is lost.
            CaState::Loss if !lost_retrans => {}
            _ if self.lost_out > 0 => self.enter_recovery(),
            _ => {
                // `tcp_try_to_open`.
                if ece && self.tcp.ca_state < CaState::Cwr {
                    self.init_cwnd_reduction();
                    self.set_state(CaState::Cwr);
                    self.stats.ecn_reductions += 1;
                }
                if self.tcp.ca_state != CaState::Cwr {
                    let any_retrans = self.retrans_out > 0 || self.q.front().is_some_and(|s| s.ever_retrans);
                    let state = if self.sacked_out + self.lost_out > 0 || any_retrans {
                        CaState::Disorder
                    } else {
                        CaState::Open
                    };
                    if state != self.tcp.ca_state {
                        self.set_state(state);
                        self.high_seq = self.tcp.snd_nxt;
                    }
                }
            }
        }
        armed
    }

    /// `tcp_enter_recovery`: a reduction starts unless one is under way.
    pub(super) fn enter_recovery(&mut self) {
        if !self.in_cwnd_reduction() {
            self.init_cwnd_reduction();
        }
        self.set_state(CaState::Recovery);
        self.stats.fast_retransmits += 1;
    }

    /// `tcp_identify_packet_loss`: RACK, or RFC 6675's rule. Returns whether
    /// RACK armed its reordering timer.
    pub(super) fn identify_loss(&mut self, now: Time) -> bool {
        if self.q.is_empty() {
            return false;
        }
        if self.params.rack {
            if !std::mem::take(&mut self.rack.advanced) {
                return false;
            }
            if let Some(wait) = self.rack_detect_loss(now) {
                self.xmit = Some((XmitTimer::Reorder, now + wait + TIMEOUT_MIN));
                return true;
            }
            false
        } else {
            self.rfc6675_mark_lost();
            false
        }
    }

    /// `tcp_rack_reo_wnd`: no reordering window until reordering is seen,
    /// in recovery or once `dupack_threshold` packets are SACKed; else
    /// min_rtt / 4, at most srtt.
    fn rack_reo_wnd(&self) -> Duration {
        if !self.rack.reord && (self.tcp.ca_state >= CaState::Recovery || self.sacked_out >= self.reordering) {
            return Duration::ZERO;
        }
        Duration::from_nanos(self.tcp.min_rtt.nanos() / 4).min(self.rtt.srtt())
    }

    /// `tcp_rack_detect_loss`: every packet sent before the most recently
    /// sent delivered one, and outstanding longer than RACK's RTT plus the
    /// reordering window, is lost. Returns how long the next one still has
    /// to wait, if any waits.
    pub(super) fn rack_detect_loss(&mut self, now: Time) -> Option<Duration> {
        let reo_wnd = self.rack_reo_wnd();
        let deadline = self.rack.rtt + reo_wnd;
        let una = self.tcp.snd_una;
        let mut wait: Option<Duration> = None;
        for seq in una..self.tcp.snd_nxt {
            let s = self.q[(seq - una) as usize];
            if s.sacked || (s.lost && !s.retrans) {
                continue;
            }
            if !sent_after(self.rack.xmit_time, self.rack.end_seq, s.sent_at, seq + 1) {
                continue;
            }
            let elapsed = now.saturating_since(s.sent_at);
            if elapsed >= deadline {
                self.mark_lost(seq);
            } else {
                let left = Duration::from_nanos(deadline.nanos() - elapsed.nanos());
                wait = Some(wait.map_or(left, |w| w.max(left)));
            }
        }
        wait
    }

    /// RFC 6675's IsLost: a packet is lost once `dupack_threshold` packets
    /// above it are SACKed.
    fn rfc6675_mark_lost(&mut self) {
        if self.sacked_out < self.reordering {
            return;
        }
        let una = self.tcp.snd_una;
        let mut above = 0;
        for seq in (una..self.tcp.snd_nxt).rev() {
            let s = self.q[(seq - una) as usize];
            if s.sacked {
                above += 1;
            } else if above >= self.reordering && !s.lost && !s.retrans {
                self.mark_lost(seq);
            }
        }
    }

    /// `tcp_cwnd_reduction`: PRR (RFC 6937) sets cwnd so that what is sent
    /// over the recovery tracks ssthresh / prior_cwnd of what is delivered,
    /// then slow-starts back up to ssthresh.
    pub(super) fn cwnd_reduction(&mut self, newly_acked_sacked: u32, newly_lost: u32, advanced: bool) {
        if !self.params.prr || newly_acked_sacked == 0 || self.tcp.prior_cwnd == 0 {
            return;
        }
        self.refresh_in_flight();
        let in_flight = i64::from(self.tcp.in_flight);
        let delta = i64::from(self.tcp.ssthresh) - in_flight;
        self.prr_delivered += newly_acked_sacked;
        let (delivered, out) = (i64::from(self.prr_delivered), i64::from(self.prr_out));
        let mut sndcnt = if delta < 0 {
            let prior = i64::from(self.tcp.prior_cwnd);
            (i64::from(self.tcp.ssthresh) * delivered + prior - 1) / prior - out
        } else {
            let mut n = (delivered - out).max(i64::from(newly_acked_sacked));
            if advanced && newly_lost == 0 {
                n += 1;
            }
            delta.min(n)
        };
        // The first ACK of a recovery always sends the retransmission.
        sndcnt = sndcnt.max(if self.prr_out > 0 { 0 } else { 1 });
        self.tcp.cwnd = (in_flight + sndcnt).max(1) as u32;
    }

    /// `tcp_update_pacing_rate`, for congestion controls that leave the
    /// rate to the sender.
    pub(super) fn update_pacing_rate(&mut self) {
        let Some(rate) = self.default_pacing_rate() else {
            return;
        };
        // An unpaced sender keeps it aside: `tcp.pacing_rate` stays `None`,
        // which is how the congestion controls (HyStart) see it does not pace.
        if self.paced {
            self.tcp.pacing_rate = Some(rate);
        } else {
            self.unpaced_rate = Some(rate);
        }
    }

    /// The rate `tcp_update_pacing_rate` computes, bytes per second: 200%
    /// of cwnd / srtt in slow start (cwnd below half ssthresh), 120% after;
    /// `None` before an RTT sample.
    fn default_pacing_rate(&self) -> Option<f64> {
        let srtt = self.rtt.srtt();
        if srtt == Duration::ZERO {
            return None;
        }
        let ratio = if self.tcp.cwnd < self.tcp.ssthresh / 2 {
            2.0
        } else {
            1.2
        };
        let w = self.tcp.cwnd.max(self.packets_out());
        Some(ratio * f64::from(self.tcp.mss) * f64::from(w) / srtt.as_secs_f64())
    }
}

/// `tcp_skb_sent_after`: packet 1 was sent after packet 2 (later, or at
/// the same time with a higher sequence number).
fn sent_after(t1: Time, seq1: u64, t2: Time, seq2: u64) -> bool {
    t1 > t2 || (t1 == t2 && seq1 > seq2)
}
