//! Reno: Linux's `tcp_reno` (`net/ipv4/tcp_cong.c`, the `tcp_reno_*`
//! functions), the congestion control of RFC 5681 as Linux runs it, and the
//! fallback of every Linux module that leaves a hook empty.
//!
//! - `ssthresh`: half of cwnd, at least 2 packets (`tcp_reno_ssthresh`,
//!   [`reno_ssthresh`]).
//! - `cong_avoid`: slow start below ssthresh, then one packet per window of
//!   acknowledged packets, nothing when cwnd did not limit the sending
//!   (`tcp_reno_cong_avoid`, [`super::cc::reno_cong_avoid`]).
//! - `undo_cwnd`: the larger of cwnd and the cwnd before the reduction
//!   (`tcp_reno_undo_cwnd`, the trait's default).
//!
//! It has no state and no parameters; ECN is the scenario's choice, with the
//! classic response (a CE echo is a loss for the window).

use super::cc::{reno_ssthresh, CongestionControl, Tcp};

/// Linux's `reno` congestion control.
#[derive(Clone, Copy, Debug, Default)]
pub struct Reno;

impl CongestionControl for Reno {
    fn name(&self) -> &'static str {
        "reno"
    }

    fn ssthresh(&mut self, tcp: &Tcp) -> u32 {
        reno_ssthresh(tcp)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_reno_halves_on_loss_and_grows_one_packet_per_window() {
        let mut cc = Reno;
        let mut t = Tcp::new(10, 1500);
        t.is_cwnd_limited = true;
        // Slow start: 10 ACKs of one packet double the window.
        for _ in 0..10 {
            cc.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.cwnd, 20);
        // A loss at 20: ssthresh 10, the sender sets cwnd to it.
        t.ssthresh = cc.ssthresh(&t);
        assert_eq!(t.ssthresh, 10);
        t.prior_cwnd = 20;
        t.cwnd = t.ssthresh;
        // Congestion avoidance: 10 ACKs at cwnd 10 add one packet.
        for _ in 0..10 {
            cc.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.cwnd, 11);
        // The loss proves spurious: back to the window before it.
        assert_eq!(cc.undo_cwnd(&t), 20);
    }

    #[test]
    fn test_reno_ssthresh_is_at_least_two() {
        let mut t = Tcp::new(3, 1500);
        assert_eq!(Reno.ssthresh(&t), 2);
        t.cwnd = 1;
        assert_eq!(Reno.ssthresh(&t), 2);
    }
}
