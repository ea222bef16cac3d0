//! DCTCP, Data Center TCP: S. Bensley, D. Thaler, P. Balasubramanian,
//! L. Eggert and G. Judd, "Data Center TCP (DCTCP): TCP Congestion Control
//! for Data Centers", RFC 8257, IETF, October 2017 (Section 3.3, the
//! sender); first published by M. Alizadeh et al., "Data Center TCP
//! (DCTCP)", ACM SIGCOMM 2010. As Linux's `net/ipv4/tcp_dctcp.c` runs it.
//!
//! Heads up: the sender reacts to the fraction of marked packets, not to
//! each mark. Once per window of data it updates
//!
//! ```text
//! alpha = (1 - g) alpha + g F,   F = delivered_ce / delivered over the window
//! ```
//!
//! and a reduction (the sender's CWR on an ECN echo) sets
//! `ssthresh = max(cwnd - cwnd alpha / 2, 2)`. Growth is Reno's.
//!
//! As Linux, per hook:
//! - `in_ack_event`: when `snd_una` has reached the `snd_nxt` recorded at the
//!   window's start, alpha is updated from the packets delivered and CE-marked
//!   since then (`tp->delivered`, `tp->delivered_ce`, which the sender keeps
//!   from the accurate ECN echo) and a new window starts. The sender must
//!   have applied this ACK to those counters and to `snd_una` first.
//! - `ssthresh`: the alpha reduction above; remembers cwnd for undo.
//! - `set_state` to Recovery (from another state) and `cwnd_event` Loss
//!   (a timeout): a loss is Reno's, `ssthresh = max(cwnd / 2, 2)`, written
//!   over what `ssthresh` returned (`dctcp_react_to_loss`).
//! - `cong_avoid`: Reno's; `undo_cwnd`: the larger of cwnd and the cwnd at
//!   the last reduction.
//! - `ecn`: ECT(0) on every data packet.
//!
//! Constants (Linux's module parameters):
//! - g = 1/16 (`dctcp_shift_g` 4).
//! - alpha starts at 1 (`dctcp_alpha_on_init` 1024 of 1024): the first
//!   reduction halves, as Reno's would.
//!
//! Choices between variants: Linux's fixed point, alpha in units of 1/1024,
//! kept as its integer arithmetic because it changes behaviour: the decay
//! step `alpha - alpha / 16` truncates, and below 16/1024 it takes alpha
//! straight to 0 (Linux's `min_not_zero`), so without marks alpha reaches 0
//! in a finite number of windows; the reduction `cwnd alpha / 2048`
//! truncates too (cwnd 100, alpha 512/1024 gives 75).
//!
//! Not modelled: the receiver's delayed-ACK state machine that keeps the CE
//! echo exact with one-bit ECN (`dctcp_ece_ack_update`, the `EcnIsCe` and
//! `EcnNoCe` events; the simulated receiver echoes counts, as accurate ECN
//! does); the fallback to Reno when ECN is not negotiated (`dctcp-reno`):
//! a DCTCP sender in aqmlab always marks its packets ECT(0).

use aqmlab_qdisc::Ecn;

use super::cc::{AckEvent, CaEvent, CaState, CongestionControl, Tcp};

/// alpha's unit: 1024 is 1 (`DCTCP_MAX_ALPHA`).
const MAX_ALPHA: u32 = 1024;

/// DCTCP's constants (see the module notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DctcpParams {
    /// g = 2^-shift_g; Linux accepts 0 to 10, default 4.
    pub shift_g: u32,
    /// alpha at the start, in 1/1024 (Linux default 1024).
    pub alpha_on_init: u32,
}

impl Default for DctcpParams {
    fn default() -> DctcpParams {
        DctcpParams {
            shift_g: 4,
            alpha_on_init: MAX_ALPHA,
        }
    }
}

impl DctcpParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.shift_g > 10 {
            return Err(format!("shift_g must be in 0..=10 (got {})", self.shift_g));
        }
        Ok(())
    }
}

/// Linux's `dctcp` congestion control.
#[derive(Clone, Debug)]
pub struct Dctcp {
    p: DctcpParams,
    /// alpha in 1/1024.
    alpha: u32,
    /// `snd_nxt` when the current window started.
    next_seq: u64,
    /// `tp->delivered` and `tp->delivered_ce` when it started.
    old_delivered: u64,
    old_delivered_ce: u64,
    /// cwnd at the last reduction, for undo.
    loss_cwnd: u32,
}

impl Dctcp {
    pub fn new(p: DctcpParams) -> Dctcp {
        Dctcp {
            p,
            alpha: p.alpha_on_init.min(MAX_ALPHA),
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            loss_cwnd: 0,
        }
    }

    /// alpha, the estimate of the marked fraction, in [0, 1].
    pub fn alpha(&self) -> f64 {
        self.alpha as f64 / MAX_ALPHA as f64
    }

    fn reset(&mut self, tcp: &Tcp) {
        self.next_seq = tcp.snd_nxt;
        self.old_delivered = tcp.delivered;
        self.old_delivered_ce = tcp.delivered_ce;
    }

    fn update_alpha(&mut self, tcp: &Tcp) {
        if tcp.snd_una < self.next_seq {
            return;
        }
        let ce = tcp.delivered_ce - self.old_delivered_ce;
        let mut alpha = self.alpha;
        // alpha (1 - g), where a decay step that truncates to 0 takes all
        // of alpha.
        let step = alpha >> self.p.shift_g;
        alpha -= if step == 0 { alpha } else { step };
        if ce > 0 {
            let delivered = (tcp.delivered - self.old_delivered).max(1);
            // g F in 1/1024: (ce << 10) / delivered, divided by 2^shift_g.
            let gf = ((ce << (10 - self.p.shift_g)) / delivered) as u32;
            alpha = (alpha + gf).min(MAX_ALPHA);
        }
        self.alpha = alpha;
        self.reset(tcp);
    }

    fn react_to_loss(&mut self, tcp: &mut Tcp) {
        self.loss_cwnd = tcp.cwnd;
        tcp.ssthresh = (tcp.cwnd >> 1).max(2);
    }
}

impl Default for Dctcp {
    fn default() -> Dctcp {
        Dctcp::new(DctcpParams::default())
    }
}

impl CongestionControl for Dctcp {
    fn name(&self) -> &'static str {
        "dctcp"
    }

    fn ecn(&self) -> Option<Ecn> {
        Some(Ecn::Ect0)
    }

    fn init(&mut self, tcp: &mut Tcp) {
        self.alpha = self.p.alpha_on_init.min(MAX_ALPHA);
        self.loss_cwnd = 0;
        self.reset(tcp);
    }

    fn ssthresh(&mut self, tcp: &Tcp) -> u32 {
        self.loss_cwnd = tcp.cwnd;
        let cut = ((tcp.cwnd as u64 * self.alpha as u64) >> 11) as u32;
        (tcp.cwnd - cut).max(2)
    }

    fn set_state(&mut self, tcp: &mut Tcp, new: CaState) {
        if new == CaState::Recovery && new != tcp.ca_state {
            self.react_to_loss(tcp);
        }
    }

    fn cwnd_event(&mut self, tcp: &mut Tcp, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.react_to_loss(tcp);
        }
    }

    fn in_ack_event(&mut self, tcp: &mut Tcp, _ev: &AckEvent) {
        self.update_alpha(tcp);
    }

    fn undo_cwnd(&mut self, tcp: &Tcp) -> u32 {
        tcp.cwnd.max(self.loss_cwnd)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    // Helpers

    /// A sender with `window` packets in flight and DCTCP started.
    fn start(window: u32) -> (Dctcp, Tcp) {
        let mut t = Tcp::new(window, 1500);
        t.snd_nxt = window as u64;
        let mut cc = Dctcp::default();
        cc.init(&mut t);
        (cc, t)
    }

    /// One window of `n` packets of which `ce` were marked, acknowledged by
    /// one ACK, after which the next window is sent.
    fn window(cc: &mut Dctcp, t: &mut Tcp, n: u64, ce: u64) {
        t.snd_una += n;
        t.delivered += n;
        t.delivered_ce += ce;
        let ev = AckEvent {
            acked: n as u32,
            ce: ce as u32,
            ece: ce > 0,
            advanced: true,
        };
        cc.in_ack_event(t, &ev);
        t.snd_nxt += n;
    }

    #[test]
    fn test_alpha_converges_to_the_marked_fraction() {
        // A quarter of every window marked: alpha_n = F + (1 - F)(1 - g)^n
        // from alpha_0 = 1, with F = 1/4 and g = 1/16. Linux's truncation
        // keeps the fixed-point value within 16/1024 of it: the EWMA stops
        // where alpha / 16 truncates to F / g = 16, alpha in [256, 271].
        let (mut cc, mut t) = start(100);
        assert_eq!(cc.alpha(), 1.0);
        for n in 1..=120 {
            window(&mut cc, &mut t, 100, 25);
            let exact = 0.25 + 0.75 * (15.0f64 / 16.0).powi(n);
            assert!(
                (cc.alpha() - exact).abs() <= 16.0 / 1024.0,
                "window {n}: {} vs {exact}",
                cc.alpha()
            );
        }
        assert!(cc.alpha() >= 0.25 && cc.alpha() < 0.25 + 16.0 / 1024.0);
        // The first step is exact: 1024 - 64 + (25 << 6) / 100 = 976.
        let (mut cc, mut t) = start(100);
        window(&mut cc, &mut t, 100, 25);
        assert_eq!(cc.alpha, 976);
    }

    #[test]
    fn test_alpha_is_updated_once_per_window() {
        let (mut cc, mut t) = start(10);
        // Nine of the ten packets acknowledged, all marked: not yet.
        window(&mut cc, &mut t, 9, 9);
        assert_eq!(cc.alpha, 1024);
        // The tenth ends the window (F = 9/10): 1024 - 64 + 576 / 10 = 1017.
        window(&mut cc, &mut t, 1, 0);
        assert_eq!(cc.alpha, 1017);
    }

    #[test]
    fn test_reduction_is_alpha_over_two_of_the_window() {
        let mut t = Tcp::new(100, 1500);
        let mut cc = Dctcp::new(DctcpParams {
            alpha_on_init: 512,
            ..DctcpParams::default()
        });
        cc.init(&mut t);
        // alpha 1/2: 100 - 100 x 512 / 2048 = 75.
        assert_eq!(cc.ssthresh(&t), 75);
        // alpha 1: half, and never below 2.
        let mut cc = Dctcp::default();
        cc.init(&mut t);
        assert_eq!(cc.ssthresh(&t), 50);
        t.cwnd = 3;
        assert_eq!(cc.ssthresh(&t), 2);
    }

    #[test]
    fn test_without_marks_alpha_decays_to_zero_and_nothing_is_reduced() {
        let (mut cc, mut t) = start(100);
        // Unmarked windows: alpha about (15/16)^n, a little above it since
        // each step alpha / 16 truncates: after 38 windows 95/1024 where
        // 1024 (15/16)^38 = 88.1.
        for _ in 0..38 {
            window(&mut cc, &mut t, 100, 0);
        }
        assert_eq!(cc.alpha, 95);
        // The sequence reaches 15 at window 74; there the step truncates to
        // 0 and Linux takes the whole of alpha: 0 at window 75, and a
        // reduction then leaves cwnd as it is.
        for _ in 38..74 {
            window(&mut cc, &mut t, 100, 0);
        }
        assert_eq!(cc.alpha, 15);
        window(&mut cc, &mut t, 100, 0);
        assert_eq!(cc.alpha, 0);
        assert_eq!(cc.ssthresh(&t), 100);
    }

    #[test]
    fn test_a_loss_is_reno_s_halving_whatever_alpha() {
        let (mut cc, mut t) = start(100);
        for _ in 0..100 {
            window(&mut cc, &mut t, 100, 0);
        }
        // Fast recovery: the sender stores ssthresh() (100 at alpha 0),
        // then enters Recovery, where DCTCP writes Reno's 50 over it.
        t.ssthresh = cc.ssthresh(&t);
        assert_eq!(t.ssthresh, 100);
        cc.set_state(&mut t, CaState::Recovery);
        assert_eq!(t.ssthresh, 50);
        // Already in Recovery: nothing more.
        t.ca_state = CaState::Recovery;
        t.ssthresh = 77;
        cc.set_state(&mut t, CaState::Recovery);
        assert_eq!(t.ssthresh, 77);
        // A timeout likewise, through the Loss event.
        t.cwnd = 40;
        cc.cwnd_event(&mut t, CaEvent::Loss);
        assert_eq!(t.ssthresh, 20);
        // Undo restores the cwnd at the last reduction.
        t.cwnd = 1;
        assert_eq!(cc.undo_cwnd(&t), 40);
    }

    #[test]
    fn test_dctcp_sends_ect0_and_grows_as_reno() {
        let (mut cc, mut t) = start(10);
        assert_eq!(cc.ecn(), Some(Ecn::Ect0));
        t.ssthresh = 10;
        t.is_cwnd_limited = true;
        for _ in 0..10 {
            cc.cong_avoid(&mut t, 1);
        }
        assert_eq!(t.cwnd, 11);
    }
}
