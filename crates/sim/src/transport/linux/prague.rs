//! TCP Prague, the L4S sender: K. De Schepper, O. Tilmans, B. Briscoe and
//! V. Goel, "Prague Congestion Control", draft-briscoe-iccrg-prague-
//! congestion-control (IRTF ICCRG, work in progress), which describes the
//! reference Linux implementation; here as that implementation runs it,
//! `net/ipv4/tcp_prague.c` version 0.7 of the L4S team's Linux tree
//! (github.com/L4STeam/linux, Nokia Bell Labs), in its fractional-window
//! mode.
//!
//! Heads up: Prague is DCTCP adapted for the Internet. It marks its packets
//! ECT(1), must pace, and owns cwnd (Linux's `cong_control`: the sender
//! applies neither PRR nor `cong_avoid`). It keeps a fractional window
//! `frac_cwnd`; cwnd follows its ceiling (at least 2) by one packet per ACK,
//! and every step down also sets ssthresh to cwnd.
//!
//! Per ACK (`prague_cong_control`), with `acked` the packets it delivered
//! and `ce` those marked CE (the accurate ECN echo of
//! [`CongestionControl::in_ack_event`]):
//! - The first CE of the connection halves `frac_cwnd` (alpha starts at 0).
//! - Growth, only from the unmarked `acked - ce` packets, not while a loss
//!   reduction is in progress and only when cwnd limited: slow start as
//!   Reno's below ssthresh (`frac_cwnd` = cwnd), then additive increase,
//!   `frac_cwnd += n x ai / frac_cwnd x 1500 / mss`: `ai` (1 unscaled)
//!   packets per round trip, counted in 1500-byte packets. Growth continues
//!   during a CE reduction (CWR), as Linux's: the total increase over an RTT
//!   is proportional to the unmarked fraction.
//! - Once per round (when `snd_una` passes the `snd_nxt` recorded at the
//!   round's start), after the first CE: `alpha = (1 - g) alpha + g F`,
//!   `F = delivered_ce / delivered` over the round; a new round starts,
//!   counted when out of slow start.
//! - The pacing rate: `mss x max(frac_cwnd, in flight) / srtt`, doubled
//!   while cwnd is below ssthresh / 2, at least 12500 bytes/s.
//!
//! Reductions:
//! - CE: entering CWR (`set_state` Cwr, which the sender does at most once
//!   per round trip) takes `frac_cwnd alpha / 2` off `frac_cwnd`.
//! - Loss: entering Recovery, or a timeout (`cwnd_event` Loss), halves
//!   `frac_cwnd` and stops growth until the state is Open again
//!   (`set_state` Open) or the reduction is undone.
//! - `ssthresh` returns ssthresh as it is: cwnd's steps set it.
//! - `undo_cwnd`: growth resumes, `frac_cwnd` goes back to at least its
//!   value at the loss, and cwnd to at least the cwnd at the loss.
//!
//! RTT independence (Linux's default, the draft's "reduced RTT
//! dependence"): after 4 rounds out of slow start, a flow whose srtt is
//! below the 25 ms target grows by `(srtt / 25 ms)^2` packets per round trip
//! instead of 1 (the rate a flow at 25 ms would gain; unscaled above 100 ms),
//! updates alpha at most once per 25 ms, and reduces on CE at most once per
//! 25 ms.
//!
//! Constants: g = 1/16 (`PRAGUE_SHIFT_G` 4); RTT target 25 ms; 4 rounds of
//! transition; minimum cwnd 2; minimum rate 12500 bytes/s (100 kb/s); the
//! additive increase in units of 1500 bytes (`MTU_SYS`).
//!
//! Choices between variants: `frac_cwnd` and alpha are real-valued where
//! Linux keeps them in fixed point (2^-20 packets, 2^-24 with alpha stored
//! x 16) precisely so that they carry their remainders: the same values,
//! without the rounding. Alpha starts at 0 and the first CE halves the
//! window (Linux's default `prague_alpha_mode` 0); `alpha_starts_at_one`
//! gives mode 1, DCTCP's start.
//!
//! Not modelled: the rate-based mode Linux switches to at windows of 4
//! packets or less once CE was seen (`prague_cwnd_mode` 2), with its +/- 3 %
//! pacing alternation per half RTT and its packet-size reduction below a
//! 2-packet window: here the fractional window runs at every size, floored
//! at 2 packets. Undo restores the window, where Linux's rate-based undo
//! restores a rate. TSO burst sizing; the classic-ECN-AQM detection of older
//! versions; the fallback to Reno without accurate ECN.

use aqmlab_qdisc::{Duration, Ecn, Time};

use super::cc::{AckEvent, CaEvent, CaState, CongestionControl, RateSample, Tcp};

/// The smallest cwnd (`MIN_CWND_RTT`).
const MIN_CWND: u32 = 2;
/// Bytes per packet the additive increase counts in (`MTU_SYS`).
const MTU_SYS: f64 = 1500.0;
/// The lowest pacing rate, bytes per second (`MINIMUM_RATE`).
const MINIMUM_RATE: f64 = 12500.0;
/// RTTs above this are never scaled (`MAX_SCALED_RTT`).
const MAX_SCALED_RTT: Duration = Duration::from_millis(100);

/// Prague's constants (see the module notes).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PragueParams {
    /// The EWMA gain g = 2^-shift_g (Linux 4).
    pub shift_g: u32,
    /// RTT independence on (Linux always).
    pub rtt_scaling: bool,
    /// The RTT target (Linux 25 ms).
    pub rtt_target: Duration,
    /// Rounds out of slow start before RTT independence (Linux 4).
    pub rtt_transition: u32,
    /// Alpha starts at 1 and the first CE does not halve (Linux's
    /// `prague_alpha_mode` 1; default 0).
    pub alpha_starts_at_one: bool,
}

impl Default for PragueParams {
    fn default() -> PragueParams {
        PragueParams {
            shift_g: 4,
            rtt_scaling: true,
            rtt_target: Duration::from_millis(25),
            rtt_transition: 4,
            alpha_starts_at_one: false,
        }
    }
}

impl PragueParams {
    pub fn validate(&self) -> Result<(), String> {
        if self.shift_g > 10 {
            return Err(format!("shift_g must be in 0..=10 (got {})", self.shift_g));
        }
        if self.rtt_target == Duration::ZERO {
            return Err("rtt_target must be positive".to_string());
        }
        Ok(())
    }
}

/// The L4S team's `prague` congestion control.
#[derive(Clone, Debug)]
pub struct Prague {
    p: PragueParams,
    /// The congestion estimate, in [0, 1].
    alpha: f64,
    /// When alpha was last updated and the last CE reduction.
    alpha_stamp: Time,
    cwr_stamp: Option<Time>,
    /// The fractional window, packets.
    frac_cwnd: f64,
    /// Packets added per round trip by the additive increase.
    ai_ack_increase: f64,
    /// cwnd and `frac_cwnd` at the last loss, for undo.
    loss_cwnd: u32,
    loss_frac_cwnd: f64,
    /// The round: `snd_nxt`, `delivered` and `delivered_ce` at its start.
    next_seq: u64,
    old_delivered: u64,
    old_delivered_ce: u64,
    /// Rounds counted out of slow start.
    round: u32,
    /// A CE was seen: there is an AQM on the path.
    saw_ce: bool,
    /// Growth is held after a loss.
    in_loss: bool,
    /// CE-marked packets of the ACK being handled (Linux's `ece_delta`).
    ack_ce: u32,
}

impl Prague {
    pub fn new(p: PragueParams) -> Prague {
        Prague {
            p,
            alpha: if p.alpha_starts_at_one { 1.0 } else { 0.0 },
            alpha_stamp: Time::ZERO,
            cwr_stamp: None,
            frac_cwnd: 0.0,
            ai_ack_increase: 1.0,
            loss_cwnd: 0,
            loss_frac_cwnd: 0.0,
            next_seq: 0,
            old_delivered: 0,
            old_delivered_ce: 0,
            round: 0,
            saw_ce: false,
            in_loss: false,
            ack_ce: 0,
        }
    }

    /// The congestion estimate alpha.
    pub fn alpha(&self) -> f64 {
        self.alpha
    }

    /// The fractional window, packets.
    pub fn frac_cwnd(&self) -> f64 {
        self.frac_cwnd
    }

    fn g(&self) -> f64 {
        1.0 / (1u64 << self.p.shift_g) as f64
    }

    /// RTT independence applies now.
    fn is_rtt_indep(&self, tcp: &Tcp) -> bool {
        self.p.rtt_scaling && !tcp.in_slow_start() && self.round >= self.p.rtt_transition
    }

    /// Packets per round trip of additive increase.
    fn update_ai(&mut self, tcp: &Tcp) {
        let rtt = tcp.srtt;
        let target = self.p.rtt_target;
        self.ai_ack_increase = if !self.p.rtt_scaling
            || self.round < self.p.rtt_transition
            || rtt == Duration::ZERO
            || rtt > MAX_SCALED_RTT
            || rtt >= target
        {
            1.0
        } else {
            let r = rtt.as_secs_f64() / target.as_secs_f64();
            r * r
        };
    }

    fn new_round(&mut self, tcp: &Tcp) {
        self.next_seq = tcp.snd_nxt;
        self.old_delivered = tcp.delivered;
        self.old_delivered_ce = tcp.delivered_ce;
        if !tcp.in_slow_start() {
            self.round = self.round.saturating_add(1);
        }
        self.update_ai(tcp);
    }

    fn should_update_ewma(&self, tcp: &Tcp) -> bool {
        tcp.snd_una >= self.next_seq
            && (!self.is_rtt_indep(tcp) || tcp.now.saturating_since(self.alpha_stamp) >= self.p.rtt_target)
    }

    fn update_alpha(&mut self, tcp: &Tcp) {
        if self.saw_ce {
            let ce = (tcp.delivered_ce - self.old_delivered_ce) as f64;
            let delivered = (tcp.delivered - self.old_delivered).max(1) as f64;
            let g = self.g();
            self.alpha = ((1.0 - g) * self.alpha + g * ce / delivered).min(1.0);
            self.alpha_stamp = tcp.now;
        }
        self.new_round(tcp);
    }

    /// cwnd as the fractional window asks: its ceiling, within [2, clamp].
    fn target_cwnd(&self, tcp: &Tcp) -> u32 {
        (self.frac_cwnd.ceil().min(u32::MAX as f64) as u32)
            .max(MIN_CWND)
            .min(tcp.cwnd_clamp)
    }

    fn update_cwnd(&mut self, tcp: &mut Tcp, rs: &RateSample) {
        let mut acked = rs.acked_sacked as i64;
        if self.ack_ce > 0 {
            if !self.saw_ce && !self.p.alpha_starts_at_one {
                self.frac_cwnd /= 2.0;
            }
            self.saw_ce = true;
            acked -= self.ack_ce as i64;
        }
        if acked > 0 && !self.in_loss && tcp.is_cwnd_limited {
            let mut acked = acked as u32;
            let mut grow = true;
            if tcp.in_slow_start() {
                acked = tcp.slow_start(acked);
                self.frac_cwnd = tcp.cwnd as f64;
                if acked == 0 {
                    self.update_ai(tcp);
                    grow = false;
                }
            }
            if grow {
                let inc = acked as f64 * self.ai_ack_increase / self.frac_cwnd.max(1.0) * MTU_SYS / tcp.mss as f64;
                self.frac_cwnd += inc;
            }
        }
        let want = self.target_cwnd(tcp);
        if tcp.cwnd > want {
            tcp.cwnd -= 1;
            tcp.ssthresh = tcp.cwnd;
            self.update_ai(tcp);
        } else if tcp.cwnd < want {
            tcp.cwnd += 1;
            self.update_ai(tcp);
        }
    }

    fn update_pacing_rate(&self, tcp: &mut Tcp) {
        if tcp.srtt == Duration::ZERO {
            return;
        }
        let inflight = self.frac_cwnd.floor().max(tcp.in_flight as f64);
        let mut rate = (tcp.mss as f64 * inflight / tcp.srtt.as_secs_f64()).max(MINIMUM_RATE);
        if tcp.cwnd < tcp.ssthresh / 2 {
            rate *= 2.0;
        }
        tcp.pacing_rate = Some(rate);
    }

    fn enter_loss(&mut self, tcp: &Tcp) {
        self.loss_cwnd = tcp.cwnd;
        self.loss_frac_cwnd = self.frac_cwnd;
        self.frac_cwnd /= 2.0;
        self.in_loss = true;
    }

    fn enter_cwr(&mut self, tcp: &Tcp) {
        if let Some(stamp) = self.cwr_stamp {
            if self.is_rtt_indep(tcp) && tcp.now.saturating_since(stamp) < self.p.rtt_target {
                return;
            }
        }
        self.cwr_stamp = Some(tcp.now);
        self.frac_cwnd -= self.frac_cwnd * self.alpha / 2.0;
    }
}

impl Default for Prague {
    fn default() -> Prague {
        Prague::new(PragueParams::default())
    }
}

impl CongestionControl for Prague {
    fn name(&self) -> &'static str {
        "prague"
    }

    fn ecn(&self) -> Option<Ecn> {
        Some(Ecn::Ect1)
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn init(&mut self, tcp: &mut Tcp) {
        *self = Prague::new(self.p);
        self.alpha_stamp = tcp.now;
        self.frac_cwnd = tcp.cwnd as f64;
        self.saw_ce = tcp.delivered_ce > 0;
        self.update_pacing_rate(tcp);
        self.new_round(tcp);
    }

    fn ssthresh(&mut self, tcp: &Tcp) -> u32 {
        tcp.ssthresh
    }

    fn set_state(&mut self, tcp: &mut Tcp, new: CaState) {
        if new == tcp.ca_state {
            return;
        }
        match new {
            CaState::Recovery => self.enter_loss(tcp),
            CaState::Cwr => self.enter_cwr(tcp),
            CaState::Open => self.in_loss = false,
            _ => {}
        }
    }

    fn cwnd_event(&mut self, tcp: &mut Tcp, ev: CaEvent) {
        if ev == CaEvent::Loss {
            self.enter_loss(tcp);
        }
    }

    fn in_ack_event(&mut self, _tcp: &mut Tcp, ev: &AckEvent) {
        self.ack_ce = ev.ce;
    }

    fn undo_cwnd(&mut self, tcp: &Tcp) -> u32 {
        self.in_loss = false;
        self.frac_cwnd = self.frac_cwnd.max(self.loss_frac_cwnd);
        self.loss_cwnd.max(tcp.cwnd)
    }

    fn cong_control(&mut self, tcp: &mut Tcp, rs: &RateSample) -> bool {
        self.update_cwnd(tcp, rs);
        self.ack_ce = 0;
        if self.should_update_ewma(tcp) {
            self.update_alpha(tcp);
        }
        self.update_pacing_rate(tcp);
        true
    }
}

#[cfg(test)]
mod test {
    use super::*;

    // Helpers

    /// A Prague sender out of slow start at cwnd `w`, `w` packets in
    /// flight, srtt `rtt`.
    fn start(w: u32, rtt: Duration) -> (Prague, Tcp) {
        let mut t = Tcp::new(w, 1500);
        t.ssthresh = w;
        t.srtt = rtt;
        t.snd_nxt = w as u64;
        t.in_flight = w;
        t.is_cwnd_limited = true;
        let mut cc = Prague::default();
        cc.init(&mut t);
        (cc, t)
    }

    /// One ACK of `n` packets of which `ce` were marked, `dt` after the
    /// last; the sender then sends `n` more.
    fn ack(cc: &mut Prague, t: &mut Tcp, n: u32, ce: u32, dt: Duration) {
        t.now += dt;
        t.snd_una += n as u64;
        t.delivered += n as u64;
        t.delivered_ce += ce as u64;
        let ev = AckEvent {
            acked: n,
            ce,
            ece: ce > 0,
            advanced: true,
        };
        cc.in_ack_event(t, &ev);
        let rs = RateSample {
            acked_sacked: n,
            ..RateSample::default()
        };
        assert!(cc.cong_control(t, &rs));
        t.snd_nxt += n as u64;
    }

    #[test]
    fn test_alpha_converges_to_the_marked_fraction() {
        // A quarter of each 100-packet round marked, alpha from 0:
        // alpha_n = F (1 - (1 - g)^n) with F = 1/4, g = 1/16.
        let (mut cc, mut t) = start(100, Duration::from_millis(50));
        for n in 1..=80 {
            ack(&mut cc, &mut t, 100, 25, Duration::from_millis(50));
            let exact = 0.25 * (1.0 - (15.0f64 / 16.0).powi(n));
            assert!(
                (cc.alpha() - exact).abs() < 1e-12,
                "round {n}: {} vs {exact}",
                cc.alpha()
            );
        }
    }

    #[test]
    fn test_the_first_mark_halves_and_a_ce_reduction_is_alpha_over_two() {
        let (mut cc, mut t) = start(100, Duration::from_millis(50));
        // The first CE: frac_cwnd 100 -> 50, cwnd follows one packet per
        // ACK, and each step down sets ssthresh.
        ack(&mut cc, &mut t, 1, 1, Duration::from_millis(1));
        assert_eq!(cc.frac_cwnd(), 50.0);
        assert_eq!((t.cwnd, t.ssthresh), (99, 99));
        // With alpha 1/2, entering CWR takes a quarter: 100 -> 75.
        let (mut cc, mut t) = start(100, Duration::from_millis(50));
        cc.saw_ce = true;
        cc.alpha = 0.5;
        cc.set_state(&mut t, CaState::Cwr);
        assert_eq!(cc.frac_cwnd(), 75.0);
        // Already in CWR: no second reduction.
        t.ca_state = CaState::Cwr;
        cc.set_state(&mut t, CaState::Cwr);
        assert_eq!(cc.frac_cwnd(), 75.0);
        // cwnd steps down one per ACK (marked ACKs: no growth) to 75.
        for _ in 0..30 {
            ack(&mut cc, &mut t, 1, 1, Duration::from_millis(1));
        }
        assert_eq!((t.cwnd, t.ssthresh), (75, 75));
    }

    #[test]
    fn test_no_marks_no_reduction() {
        // alpha stays 0 without CE: entering CWR takes nothing off.
        let (mut cc, mut t) = start(100, Duration::from_millis(50));
        for _ in 0..10 {
            ack(&mut cc, &mut t, 100, 0, Duration::from_millis(50));
        }
        assert_eq!(cc.alpha(), 0.0);
        let before = cc.frac_cwnd();
        cc.set_state(&mut t, CaState::Cwr);
        assert_eq!(cc.frac_cwnd(), before);
    }

    #[test]
    fn test_additive_increase_is_one_packet_per_round_trip() {
        // 50 ACKs of one packet at frac_cwnd 50: sum of 1 / w over the
        // round, 50 x (1/50 .. 1/51), one packet within 2 %.
        let (mut cc, mut t) = start(50, Duration::from_millis(50));
        for _ in 0..50 {
            ack(&mut cc, &mut t, 1, 0, Duration::from_millis(1));
        }
        assert!((cc.frac_cwnd() - 51.0).abs() < 0.02, "{}", cc.frac_cwnd());
        assert_eq!(t.cwnd, 51);
        // Marked packets do not count: 25 of 50 marked is half a packet
        // (here on a path that already saw CE, so no halving).
        let (mut cc, mut t) = start(50, Duration::from_millis(50));
        cc.saw_ce = true;
        for i in 0..50 {
            ack(&mut cc, &mut t, 1, i % 2, Duration::from_millis(1));
        }
        assert!((cc.frac_cwnd() - 50.5).abs() < 0.01, "{}", cc.frac_cwnd());
    }

    #[test]
    fn test_short_rtts_grow_as_at_the_25_ms_target() {
        // srtt 5 ms, past the 4 transition rounds: (5 / 25)^2 = 0.04
        // packets per round trip, the rate a 25 ms flow gains. The rounds
        // of the transition grew the window to w (about 53): 50 ACKs then
        // add 50 x 0.04 / w.
        let rtt = Duration::from_millis(5);
        let (mut cc, mut t) = start(50, rtt);
        for _ in 0..5 {
            ack(&mut cc, &mut t, 50, 0, rtt);
        }
        assert!(cc.round >= 4);
        assert!((cc.ai_ack_increase - 0.04).abs() < 1e-12);
        let before = cc.frac_cwnd();
        for _ in 0..50 {
            ack(&mut cc, &mut t, 1, 0, Duration::from_micros(100));
        }
        let want = 50.0 * 0.04 / before;
        assert!(
            (cc.frac_cwnd() - before - want).abs() < 1e-4,
            "{} vs {want}",
            cc.frac_cwnd() - before
        );
        // Reductions on CE at most once per 25 ms: a second CWR 10 ms
        // after the first is ignored, one 25 ms after it is not.
        cc.alpha = 0.5;
        cc.set_state(&mut t, CaState::Cwr);
        let w = cc.frac_cwnd();
        t.now += Duration::from_millis(10);
        cc.set_state(&mut t, CaState::Cwr);
        assert_eq!(cc.frac_cwnd(), w);
        t.now += Duration::from_millis(15);
        cc.set_state(&mut t, CaState::Cwr);
        assert_eq!(cc.frac_cwnd(), w * 0.75);
    }

    #[test]
    fn test_a_loss_halves_and_holds_growth_until_open() {
        let (mut cc, mut t) = start(100, Duration::from_millis(50));
        cc.set_state(&mut t, CaState::Recovery);
        assert_eq!(cc.frac_cwnd(), 50.0);
        t.ca_state = CaState::Recovery;
        for _ in 0..100 {
            ack(&mut cc, &mut t, 1, 0, Duration::from_millis(1));
        }
        assert_eq!(cc.frac_cwnd(), 50.0);
        assert_eq!(t.cwnd, 50);
        cc.set_state(&mut t, CaState::Open);
        t.ca_state = CaState::Open;
        ack(&mut cc, &mut t, 1, 0, Duration::from_millis(1));
        assert!(cc.frac_cwnd() > 50.0);
        // That ACK took frac_cwnd to 50.02 and cwnd to its ceiling, 51. A
        // timeout halves too; undo restores the window at the loss.
        assert_eq!(t.cwnd, 51);
        cc.cwnd_event(&mut t, CaEvent::Loss);
        assert!(cc.frac_cwnd() < 25.1);
        assert_eq!(cc.undo_cwnd(&t), 51);
        assert!(cc.frac_cwnd() > 50.0);
    }

    #[test]
    fn test_prague_sends_ect1_paced_at_the_window_per_rtt() {
        let (cc, t) = start(100, Duration::from_millis(50));
        assert_eq!(cc.ecn(), Some(Ecn::Ect1));
        assert!(cc.needs_pacing());
        // 100 packets of 1500 bytes per 50 ms: 3 MB/s.
        assert_eq!(t.pacing_rate, Some(3e6));
        // In slow start below ssthresh / 2 the rate doubles.
        let mut t = Tcp::new(10, 1500);
        t.srtt = Duration::from_millis(50);
        let mut cc = Prague::default();
        cc.init(&mut t);
        assert_eq!(t.pacing_rate, Some(600e3));
    }
}
