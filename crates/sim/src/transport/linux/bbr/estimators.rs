//! BBR's two side estimators, as `tcp_bbr.c` keeps them: the long-term
//! bandwidth that detects a policer (`bbr_lt_bw_sampling`: intervals of 4
//! to 16 rounds with losses of at least 50/256 of what was delivered; two
//! such intervals with rates within 1/8 or 4 kb/s mean a policer, whose
//! rate is then used for 48 rounds), and the ACK aggregation allowance
//! added to cwnd (`bbr_update_ack_aggregation`).

use super::*;

impl Bbr {
    /// Starts a new long-term sampling interval.
    pub(super) fn reset_lt_bw_sampling_interval(&mut self, tcp: &Tcp) {
        self.s.lt_last_stamp_ms = us(self.s.delivered_mstamp) / 1000;
        self.s.lt_last_delivered = tcp.delivered;
        self.s.lt_last_lost = tcp.lost;
        self.s.lt_rtt_cnt = 0;
    }

    /// Forgets all long-term sampling.
    pub(super) fn reset_lt_bw_sampling(&mut self, tcp: &Tcp) {
        self.s.lt_bw = 0;
        self.s.lt_use_bw = false;
        self.s.lt_is_sampling = false;
        self.reset_lt_bw_sampling_interval(tcp);
    }

    /// A long-term interval ended with bandwidth `bw`: if it agrees with
    /// the previous interval's, policing is assumed.
    pub(super) fn lt_bw_interval_done(&mut self, tcp: &Tcp, bw: u64) {
        if self.s.lt_bw > 0 {
            let diff = bw.abs_diff(self.s.lt_bw);
            if diff * BBR_UNIT as u64 <= LT_BW_RATIO * self.s.lt_bw
                || self.rate_bytes_per_sec(tcp.mss, diff, BBR_UNIT) <= LT_BW_DIFF
            {
                self.s.lt_bw = (bw + self.s.lt_bw) >> 1;
                self.s.lt_use_bw = true;
                self.s.pacing_gain = BBR_UNIT;
                self.s.lt_rtt_cnt = 0;
                return;
            }
        }
        self.s.lt_bw = bw;
        self.reset_lt_bw_sampling_interval(tcp);
    }

    /// Long-term (policer) bandwidth sampling, per ACK and at a timeout.
    pub(super) fn lt_bw_sampling(&mut self, tcp: &Tcp, losses: u32, is_app_limited: bool) {
        if self.s.lt_use_bw {
            if self.s.mode == BbrMode::ProbeBw && self.s.round_start {
                self.s.lt_rtt_cnt += 1;
                if self.s.lt_rtt_cnt >= LT_BW_MAX_RTTS {
                    self.reset_lt_bw_sampling(tcp);
                    self.reset_probe_bw_mode();
                }
            }
            return;
        }
        // Sampling starts at the first loss, once a policer's tokens ran out.
        if !self.s.lt_is_sampling {
            if losses == 0 {
                return;
            }
            self.reset_lt_bw_sampling_interval(tcp);
            self.s.lt_is_sampling = true;
        }
        if is_app_limited {
            self.reset_lt_bw_sampling(tcp);
            return;
        }
        if self.s.round_start {
            self.s.lt_rtt_cnt += 1;
        }
        if self.s.lt_rtt_cnt < LT_INTVL_MIN_RTTS {
            return;
        }
        if self.s.lt_rtt_cnt > 4 * LT_INTVL_MIN_RTTS {
            self.reset_lt_bw_sampling(tcp);
            return;
        }
        // An interval ends at a loss.
        if losses == 0 {
            return;
        }
        let lost = tcp.lost - self.s.lt_last_lost;
        let delivered = tcp.delivered - self.s.lt_last_delivered;
        if delivered == 0 || (lost << BBR_SCALE) < LT_LOSS_THRESH * delivered {
            return;
        }
        let now_ms = us(self.s.delivered_mstamp) / 1000;
        if now_ms < self.s.lt_last_stamp_ms + 1 {
            return;
        }
        let t_us = (now_ms - self.s.lt_last_stamp_ms) * 1000;
        if t_us >= u32::MAX as u64 {
            self.reset_lt_bw_sampling(tcp);
            return;
        }
        self.lt_bw_interval_done(tcp, delivered * BW_UNIT / t_us);
    }

    /// The largest excess of packets ACKed over what bw predicts, in an
    /// epoch that restarts when ACKs fall behind bw; a max over 5-10 rounds.
    pub(super) fn update_ack_aggregation(&mut self, tcp: &Tcp, rs: &RateSample) {
        let valid = rs.delivered >= 0 && rs.interval.is_some_and(|i| i.nanos() >= 1000);
        if self.extra_acked_gain == 0 || rs.acked_sacked == 0 || !valid {
            return;
        }
        if self.s.round_start {
            self.s.extra_acked_win_rtts = (self.s.extra_acked_win_rtts + 1).min(0x1f);
            if self.s.extra_acked_win_rtts >= EXTRA_ACKED_WIN_RTTS {
                self.s.extra_acked_win_rtts = 0;
                self.s.extra_acked_win_idx ^= 1;
                self.s.extra_acked[self.s.extra_acked_win_idx] = 0;
            }
        }
        let epoch_us = us_delta(self.s.delivered_mstamp, self.s.ack_epoch_mstamp);
        let mut expected = (self.bw() as u128 * epoch_us as u128 / BW_UNIT as u128) as u64;
        if self.s.ack_epoch_acked as u64 <= expected
            || self.s.ack_epoch_acked + rs.acked_sacked >= ACK_EPOCH_ACKED_RESET_THRESH
        {
            self.s.ack_epoch_acked = 0;
            self.s.ack_epoch_mstamp = self.s.delivered_mstamp;
            expected = 0;
        }
        self.s.ack_epoch_acked = (self.s.ack_epoch_acked + rs.acked_sacked).min(0xfffff);
        let extra = (self.s.ack_epoch_acked as u64 - expected).min(tcp.cwnd as u64) as u32;
        // Linux keeps the value in 16 bits; cwnd bounds it below that in practice.
        let extra = extra.min(u16::MAX as u32);
        let slot = &mut self.s.extra_acked[self.s.extra_acked_win_idx];
        if extra > *slot {
            *slot = extra;
        }
    }
}
