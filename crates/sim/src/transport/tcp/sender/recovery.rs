//! Loss recovery: what Reno, NewReno and SACK (ns-2's `TcpAgent`,
//! `NewRenoTcpAgent` and `Sack1TcpAgent`) do with a new or a duplicate ACK,
//! fast retransmit and the recovery that follows it.

use super::*;

impl TcpSender {
    // Reno (`tcp/tcp-reno.cc`).

    pub(super) fn reno_ack(&mut self, a: i64, ece: bool, now: Time, out: &mut Vec<Segment>) {
        let n = self.params.numdupacks;
        if a > self.last_ack {
            if self.last_action == CwndAction::DupAck {
                self.last_action = CwndAction::Exited;
            }
            // Deflate: cwnd is already W/2.
            self.dupwnd = 0;
            self.recv_newack(a, ece, now);
            self.apply_initial_window();
        } else if a == self.last_ack {
            self.on_dupack(Self::reno_dupack_action, now, out);
        }
        if a >= self.last_ack && (self.dupacks == 0 || self.dupacks >= n) {
            self.send_much(self.params.max_burst, now, out);
        }
    }

    /// A duplicate ACK under Reno or NewReno: the one at the threshold runs the
    /// variant's `fast_retransmit` entry; later ones inflate the window
    /// (each is a packet that left); earlier ones send a new packet with
    /// limited transmit.
    pub(super) fn on_dupack(
        &mut self,
        enter: fn(&mut Self, Time, &mut Vec<Segment>),
        now: Time,
        out: &mut Vec<Segment>,
    ) {
        let n = self.params.numdupacks;
        self.dupacks += 1;
        if self.dupacks == n {
            enter(self, now, out);
        } else if self.dupacks > n && self.last_action == CwndAction::DupAck {
            self.dupwnd += 1;
        } else if self.dupacks < n && self.params.singledup {
            self.send_one(now, out);
        }
    }

    pub(super) fn reno_dupack_action(&mut self, now: Time, out: &mut Vec<Segment>) {
        let recovered = self.highest_ack > self.recover;
        let allow = self.last_action == CwndAction::DupAck;
        if recovered || allow || self.highest_ack == 0 {
            self.recover = self.maxseq;
            self.last_action = CwndAction::DupAck;
            self.slowdown(Cut::Halve);
            self.fast_retransmit(now, out);
        } else if self.params.ecn && self.last_action == CwndAction::Ecn {
            // Window already cut by ECN: retransmit without a second cut.
            self.last_action = CwndAction::DupAck;
            self.fast_retransmit(now, out);
        }
        // Otherwise bugFix_: one fast retransmit per window.
    }

    /// Restart the timer (no backoff, stop timing), resend the first
    /// unacknowledged packet and inflate by the dup ACKs seen.
    pub(super) fn fast_retransmit(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.reset_rtx_timer(true, false, now);
        self.stats.fast_retransmits += 1;
        self.resend_first_unacked(now, out);
        self.dupwnd = self.params.numdupacks;
    }

    /// Resends `last_ack + 1`, unless everything the application gave has
    /// been acknowledged (ns-2 would send a packet past the end).
    pub(super) fn resend_first_unacked(&mut self, now: Time, out: &mut Vec<Segment>) {
        if self.last_ack + 1 < self.curseq {
            self.output(self.last_ack + 1, now, out);
        }
    }

    // NewReno (`tcp/tcp-newreno.cc`).

    pub(super) fn newreno_ack(&mut self, a: i64, ece: bool, now: Time, out: &mut Vec<Segment>) {
        let n = self.params.numdupacks;
        if a > self.last_ack {
            if a >= self.recover || self.last_action != CwndAction::DupAck {
                // Full ACK, or not in fast recovery.
                if self.dupwnd > 0 {
                    self.dupwnd = 0;
                    if self.last_action == CwndAction::DupAck {
                        self.last_action = CwndAction::Exited;
                    }
                }
                self.firstpartial = false;
                self.recv_newack(a, ece, now);
                self.apply_initial_window();
            } else {
                self.partial_ack(a, now, out);
            }
        } else if a == self.last_ack {
            self.on_dupack(Self::newreno_dupack_action, now, out);
        }
        if a >= self.last_ack {
            if self.dupacks == 0 {
                self.send_much(self.params.max_burst, now, out);
            } else if self.dupacks >= n {
                // "Maxburst is really only needed for the first window of
                // data on exiting Fast Recovery": 2 while dup ACKs count.
                self.send_much(2, now, out);
            }
        }
    }

    pub(super) fn newreno_dupack_action(&mut self, now: Time, out: &mut Vec<Segment>) {
        let recovered = self.highest_ack > self.recover;
        if recovered || self.highest_ack == 0 {
            self.recover = self.maxseq;
            self.last_action = CwndAction::DupAck;
            self.slowdown(Cut::Halve);
            self.fast_retransmit(now, out);
        } else if self.params.ecn && self.last_action == CwndAction::Ecn {
            self.last_action = CwndAction::DupAck;
            self.fast_retransmit(now, out);
        }
    }

    /// A partial ACK in NewReno fast recovery: deflate by the packets it
    /// covers less one, restart the timer if it is the first, resend the
    /// next hole. dupacks is not reset.
    pub(super) fn partial_ack(&mut self, a: i64, now: Time, out: &mut Vec<Segment>) {
        if !self.firstpartial {
            // Impatient (newreno_changes1_): only the first partial ACK
            // restarts the timer.
            self.firstpartial = true;
            self.newtimer(a, now);
        }
        // partial_window_deflation_: W' = W - k + 1.
        let k = a - self.last_ack;
        if self.dupwnd > k {
            self.dupwnd -= k - 1;
        } else {
            self.cwnd -= (k - self.dupwnd) as f64;
            // Leave dupwnd > 0 to flag fast recovery.
            self.dupwnd = 1;
        }
        if self.cwnd < 1.0 {
            self.cwnd = 1.0;
        }
        self.last_ack = a;
        self.highest_ack = a;
        if self.t_seqno < a + 1 {
            self.t_seqno = a + 1;
        }
        if self.rtt_active && a >= self.rtt_seq {
            // The timed packet is covered but may have been retransmitted:
            // no sample.
            self.rtt_active = false;
            self.rtt.reset_backoff();
        }
        self.output(self.last_ack + 1, now, out);
    }

    // SACK (`tcp/tcp-sack1.cc`).

    pub(super) fn sack_ack(&mut self, a: i64, ack: &AckInfo, now: Time, out: &mut Vec<Segment>) {
        let valid = a >= self.last_ack;
        let n = self.params.numdupacks;
        if !self.fastrecov {
            if a > self.last_ack {
                self.firstpartial = false;
                self.recv_newack(a, ack.ece, now);
                self.after_timeout = false;
                self.scoreboard.clear();
                self.apply_initial_window();
            } else if a == self.last_ack && !self.after_timeout {
                // A dup ACK counts only if it told the scoreboard something.
                if self.scoreboard.update(self.highest_ack, ack.sack_blocks()) {
                    self.dupacks += 1;
                    if self.dupacks == n {
                        self.sack_dupack_action(now, out);
                    } else if self.dupacks < n && self.params.singledup {
                        self.send_one(now, out);
                    }
                }
            }
            if valid && self.dupacks == 0 {
                self.send_much(self.params.max_burst, now, out);
            }
        } else {
            // Every ACK in recovery is a packet that left the network.
            self.pipe -= 1;
            if a >= self.recover {
                // Recovery over; no cwnd increase on this ACK.
                self.recover = 0;
                self.fastrecov = false;
                self.newack(a, ack.ece, now);
                self.after_timeout = false;
                self.scoreboard.clear();
            } else if a > self.highest_ack {
                // Partial ACK: highest_ack moves, last_ack does not.
                self.highest_ack = a;
                self.scoreboard.update(self.highest_ack, ack.sack_blocks());
                // partial_ack_ false: the retransmission left too.
                self.pipe -= 1;
                self.newtimer(a, now);
                self.rtt.reset_backoff();
            } else if !self.after_timeout
                && self.scoreboard.update(self.highest_ack, ack.sack_blocks())
                && self.dupacks > 0
            {
                self.dupacks += 1;
            }
            if valid {
                self.send_much(self.params.max_burst, now, out);
            }
        }
    }

    pub(super) fn sack_dupack_action(&mut self, now: Time, out: &mut Vec<Segment>) {
        let recovered = self.highest_ack > self.recover;
        if recovered || self.highest_ack == 0 {
            self.recover = self.maxseq;
            self.enter_sack_recovery(now);
            self.last_action = CwndAction::DupAck;
            self.slowdown(Cut::Halve);
            self.stats.fast_retransmits += 1;
            self.resend_first_unacked(now, out);
        } else if self.params.ecn && self.last_action == CwndAction::Ecn {
            // Window already cut by ECN: recover without a second cut.
            self.last_action = CwndAction::DupAck;
            self.enter_sack_recovery(now);
            self.stats.fast_retransmits += 1;
            self.resend_first_unacked(now, out);
        }
    }

    pub(super) fn enter_sack_recovery(&mut self, now: Time) {
        // LimTransmitFix_ false: the dup ACKs are packets that left.
        self.pipe = self.maxseq - self.highest_ack - self.params.numdupacks;
        self.reset_rtx_timer(true, false, now);
        self.fastrecov = true;
        self.scoreboard.mark_retransmitted(self.highest_ack + 1);
    }

    // The retransmission timer (`tcp/tcp.cc`: `timeout`, `rtt_backoff`).
}
