//! CUBIC as Linux's `net/ipv4/tcp_cubic.c` runs it (v2.3, with HyStart):
//! the window law of RFC 9438 ([`super::cubic`]) driven per ACK through
//! Linux's `bictcp` state, and Linux's hybrid slow start: S. Ha and I. Rhee,
//! "Taming the Elephants: New TCP Slow Start", Computer Networks 55(9),
//! 2011.
//!
//! Heads up: Linux does not set cwnd to the cubic curve. On each ACK in
//! congestion avoidance it computes `cnt`, the number of acknowledged
//! packets per one-packet increase, so that over the next round trip cwnd
//! moves towards the curve evaluated one minimum RTT ahead, and hands `cnt`
//! to Reno's `tcp_cong_avoid_ai`.
//!
//! Per hook, as Linux:
//! - `cong_avoid`: nothing unless cwnd limited; slow start below ssthresh;
//!   the packets left go to the update below, then `cong_avoid_ai(cnt)`.
//! - The update (`bictcp_update`): `ack_cnt` counts acknowledged packets.
//!   It returns early when cwnd is unchanged and at most `HZ/32` jiffies
//!   passed since the last update, and reuses `cnt` (only the Reno estimate
//!   moves) within the same jiffy. The first update of an epoch records
//!   `epoch_start`, syncs the Reno estimate `tcp_cwnd` to cwnd and sets the
//!   origin point and K: `K = 0`, origin = cwnd when cwnd is at or above
//!   `last_max_cwnd`, else origin = `last_max_cwnd` and
//!   `K = cbrt((last_max_cwnd - cwnd) / C)`. Then with
//!   `t = now - epoch_start + delay_min`,
//!   `target = origin -/+ floor(C |t - K|^3)` (below/above K),
//!   `cnt = cwnd / (target - cwnd)` if the target is above cwnd, else
//!   `100 cwnd`; `cnt <= 20` while `last_max_cwnd` is 0 (no loss yet).
//!   Reno-friendliness: `tcp_cwnd` grows by one per
//!   `cwnd x beta_scale / 8` acknowledged packets (`beta_scale` =
//!   8 (1024 + beta) / 3 / (1024 - beta) = 15 in integers, about
//!   `alpha_cubic` = 0.53 per round trip), and when it is above cwnd,
//!   `cnt <= cwnd / (tcp_cwnd - cwnd)`. Last, `cnt >= 2`: at most one
//!   increase per two ACKs, cwnd x 1.5 per round trip.
//! - `ssthresh`: ends the epoch; `last_max_cwnd` = cwnd, or
//!   `cwnd (1024 + beta) / 2048` under fast convergence when cwnd is below
//!   the previous one; returns `max(cwnd beta / 1024, 2)`.
//! - `set_state` to Loss (a timeout): all of the state above is reset,
//!   HyStart's round too.
//! - `cwnd_event` TxStart: after an idle period (`now - lsndtime`) the
//!   epoch start moves forward by it (never past now), so the curve resumes
//!   where it was.
//! - `pkts_acked`: RTT samples are ignored within 1 s of an epoch's start
//!   (right after a reduction); otherwise they lower `delay_min` and, in slow
//!   start before HyStart found its exit, feed HyStart.
//! - `undo_cwnd`: Reno's, the larger of cwnd and the cwnd before the
//!   reduction (Linux since 2017).
//!
//! HyStart (`hystart_update`), per RTT sample: a round ends when `snd_una`
//! passes the `snd_nxt` recorded at its start; nothing more below
//! `hystart_low_window`. ACK train: an ACK within `hystart_ack_delta` of the
//! previous one extends the train; when the train reaches past
//! `delay_min + cushion` from the round's start (half of that when the
//! sender does not pace), slow start ends. Delay: the round's minimum RTT
//! over its first 8 samples; from the ninth sample on, when it exceeds
//! `delay_min + clamp(delay_min / 8, 4 ms, 16 ms)`, slow start ends. Ending
//! slow start sets `ssthresh = cwnd` and stops HyStart until a timeout.
//!
//! Constants (Linux's module parameters and their defaults):
//! - `beta` 717 (of 1024, 0.7002), `bic_scale` 41 (C = 41 x 10 / 1024 =
//!   0.4004 packets / s^3), `fast_convergence` on, `tcp_friendliness` on.
//! - `hystart` on, both detections, `hystart_low_window` 16 packets,
//!   `hystart_ack_delta` 2 ms; 8 samples; 4 and 16 ms clamps.
//! - `initial_ssthresh` 0: ssthresh starts infinite.
//! - The jiffy clock: HZ = 1000.
//!
//! Choices between variants:
//! - Linux's integer state and arithmetic for everything but the curve
//!   itself: cwnd, `cnt`, `ack_cnt`, `tcp_cwnd`, `last_max_cwnd`, ssthresh
//!   and the jiffy clock are integers as in Linux, because their truncations
//!   set the steps in which cwnd moves. The curve (`K` and
//!   `C |t - K|^3`) is real-valued, through [`super::cubic::k_of`], where
//!   Linux uses a cube-root table with one Newton step (0.2 % error) and
//!   time in 1/1024 s: a fraction of a packet, and the same law.
//! - HyStart as in Linux 6.13 and later: the round restarts whatever cwnd
//!   is, and the low-window test comes after it (commit "tcp_cubic: fix
//!   incorrect HyStart round start detection").
//! - The ACK-train cushion (`hystart_ack_delay`) is Linux's
//!   `min(1 ms, 4 x 65536 bytes / pacing rate)`; when the sender does not
//!   pace, Linux's socket pacing rate still exists, and is taken as it is in
//!   slow start, 2 cwnd x mss / srtt.
//!
//! Not modelled: the 2024 proposals to make the Reno estimate match RFC
//! 9438 (they were not merged); Linux's delayed-ACK ratio of old kernels;
//! HyStart++ (RFC 9406), which Linux's CUBIC does not run.

use aqmlab_qdisc::{Duration, Time};

use super::cc::{slow_start_first, CaEvent, CaState, CongestionControl, Tcp};
use super::cubic::{k_of, CubicParams};

/// Linux's clock rate for the epoch arithmetic, ticks per second.
const HZ: u64 = 1000;
/// `BICTCP_BETA_SCALE`.
const BETA_SCALE: u32 = 1024;
/// `HYSTART_MIN_SAMPLES`.
const HYSTART_MIN_SAMPLES: u8 = 8;
/// `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`, in microseconds.
const HYSTART_DELAY_MIN_US: u32 = 4000;
const HYSTART_DELAY_MAX_US: u32 = 16000;
/// Linux's default `sk_gso_max_size`, bytes, for the ACK-train cushion.
const GSO_MAX_SIZE: f64 = 65536.0;

/// CUBIC's constants, Linux's module parameters (see the module notes).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CubicCcParams {
    /// The multiplicative decrease, in 1/1024; in 1..1024.
    pub beta: u32,
    /// C x 1024 / 10; C = 0.4004 at 41.
    pub bic_scale: u32,
    pub fast_convergence: bool,
    pub tcp_friendliness: bool,
    pub hystart: bool,
    pub hystart_ack_train: bool,
    pub hystart_delay: bool,
    /// Packets; HyStart does not act below it.
    pub hystart_low_window: u32,
    /// The largest ACK spacing that extends a train.
    pub hystart_ack_delta: Duration,
}

impl Default for CubicCcParams {
    fn default() -> CubicCcParams {
        CubicCcParams {
            beta: 717,
            bic_scale: 41,
            fast_convergence: true,
            tcp_friendliness: true,
            hystart: true,
            hystart_ack_train: true,
            hystart_delay: true,
            hystart_low_window: 16,
            hystart_ack_delta: Duration::from_micros(2000),
        }
    }
}

impl CubicCcParams {
    pub fn validate(&self) -> Result<(), String> {
        if !(1..BETA_SCALE).contains(&self.beta) {
            return Err(format!("beta must be in 1..1024 (got {})", self.beta));
        }
        if self.bic_scale == 0 {
            return Err("bic_scale must be positive".to_string());
        }
        Ok(())
    }

    /// The window law's constants in real terms.
    pub fn law(&self) -> CubicParams {
        CubicParams {
            c: (self.bic_scale * 10) as f64 / 1024.0,
            beta_cubic: self.beta as f64 / BETA_SCALE as f64,
            fast_convergence: self.fast_convergence,
            reno_friendly: self.tcp_friendliness,
        }
    }
}

/// Linux's `cubic` congestion control.
#[derive(Clone, Debug)]
pub struct Cubic {
    p: CubicCcParams,
    law: CubicParams,
    /// `8 (1024 + beta) / 3 / (1024 - beta)` in integers.
    beta_scale: u32,
    /// Acknowledged packets per one-packet increase.
    cnt: u32,
    last_max_cwnd: u32,
    /// cwnd and the jiffy at the last full update.
    last_cwnd: u32,
    last_time: u64,
    /// The origin point of the curve and K, seconds.
    origin_point: u32,
    k: f64,
    /// The minimum RTT, microseconds (0 before the first sample).
    delay_min: u32,
    /// The jiffy the epoch started; `None` outside one.
    epoch_start: Option<u64>,
    ack_cnt: u32,
    /// The Reno estimate.
    tcp_cwnd: u32,
    // HyStart
    sample_cnt: u8,
    found: bool,
    round_start: Time,
    end_seq: u64,
    last_ack: Time,
    /// The round's minimum RTT, microseconds.
    curr_rtt: u32,
}

fn jiffies(t: Time) -> u64 {
    t.nanos() / (1_000_000_000 / HZ)
}

fn usecs_to_jiffies(us: u32) -> u64 {
    (us as u64 * HZ).div_ceil(1_000_000)
}

fn micros(d: Duration) -> u32 {
    (d.nanos() / 1000).min(u32::MAX as u64) as u32
}

impl Cubic {
    pub fn new(p: CubicCcParams) -> Cubic {
        Cubic {
            p,
            law: p.law(),
            beta_scale: 8 * (BETA_SCALE + p.beta) / 3 / (BETA_SCALE - p.beta),
            cnt: 0,
            last_max_cwnd: 0,
            last_cwnd: 0,
            last_time: 0,
            origin_point: 0,
            k: 0.0,
            delay_min: 0,
            epoch_start: None,
            ack_cnt: 0,
            tcp_cwnd: 0,
            sample_cnt: 0,
            found: false,
            round_start: Time::ZERO,
            end_seq: 0,
            last_ack: Time::ZERO,
            curr_rtt: u32::MAX,
        }
    }

    /// The packets per one-packet increase the last update set.
    pub fn cnt(&self) -> u32 {
        self.cnt
    }

    /// The window before the last reduction (`last_max_cwnd`).
    pub fn last_max_cwnd(&self) -> u32 {
        self.last_max_cwnd
    }

    /// The minimum RTT seen (`delay_min`); zero before the first sample.
    pub fn delay_min(&self) -> Duration {
        Duration::from_micros(self.delay_min as u64)
    }

    /// `bictcp_reset`: everything but HyStart's round.
    fn reset(&mut self) {
        let keep = (self.round_start, self.end_seq, self.last_ack, self.curr_rtt);
        *self = Cubic::new(self.p);
        (self.round_start, self.end_seq, self.last_ack, self.curr_rtt) = keep;
    }

    fn hystart_reset(&mut self, tcp: &Tcp) {
        self.round_start = tcp.now;
        self.last_ack = tcp.now;
        self.end_seq = tcp.snd_nxt;
        self.curr_rtt = u32::MAX;
        self.sample_cnt = 0;
    }

    /// `bictcp_update`: sets `cnt` for cwnd `cwnd` after `acked` packets.
    fn update(&mut self, now: Time, cwnd: u32, acked: u32) {
        let now = jiffies(now);
        self.ack_cnt += acked;
        if self.last_cwnd == cwnd && now.saturating_sub(self.last_time) <= HZ / 32 {
            return;
        }
        // The curve is evaluated at most once per jiffy; a reduction ends
        // the epoch, which forces it.
        if self.epoch_start.is_none() || now != self.last_time {
            self.last_cwnd = cwnd;
            self.last_time = now;
            let epoch_start = match self.epoch_start {
                Some(e) => e,
                None => {
                    self.epoch_start = Some(now);
                    self.ack_cnt = acked;
                    self.tcp_cwnd = cwnd;
                    if self.last_max_cwnd <= cwnd {
                        self.k = 0.0;
                        self.origin_point = cwnd;
                    } else {
                        self.k = k_of(&self.law, self.last_max_cwnd as f64, cwnd as f64);
                        self.origin_point = self.last_max_cwnd;
                    }
                    now
                }
            };
            // One minimum RTT ahead, in Linux's jiffies.
            let t = (now - epoch_start + usecs_to_jiffies(self.delay_min)) as f64 / HZ as f64;
            let delta = (self.law.c * (t - self.k).abs().powi(3)).floor().min(u32::MAX as f64) as u32;
            let target = if t < self.k {
                self.origin_point.saturating_sub(delta)
            } else {
                self.origin_point.saturating_add(delta)
            };
            self.cnt = if target > cwnd {
                cwnd / (target - cwnd)
            } else {
                100 * cwnd
            };
            // The curve can be too cautious before the first loss.
            if self.last_max_cwnd == 0 && self.cnt > 20 {
                self.cnt = 20;
            }
        }
        if self.p.tcp_friendliness {
            let delta = (cwnd * self.beta_scale) >> 3;
            while self.ack_cnt > delta {
                self.ack_cnt -= delta;
                self.tcp_cwnd += 1;
            }
            if self.tcp_cwnd > cwnd {
                let max_cnt = cwnd / (self.tcp_cwnd - cwnd);
                self.cnt = self.cnt.min(max_cnt);
            }
        }
        self.cnt = self.cnt.max(2);
    }

    /// `hystart_ack_delay`: the cushion for TSO/GRO batching.
    fn ack_delay_us(tcp: &Tcp) -> u32 {
        let rate = match tcp.pacing_rate {
            Some(r) => r,
            None if tcp.srtt > Duration::ZERO => 2.0 * tcp.cwnd as f64 * tcp.mss as f64 / tcp.srtt.as_secs_f64(),
            None => return 0,
        };
        if rate <= 0.0 {
            return 0;
        }
        (4.0 * GSO_MAX_SIZE / rate * 1e6).min(1000.0) as u32
    }

    fn hystart_update(&mut self, tcp: &mut Tcp, delay: u32) {
        if tcp.snd_una > self.end_seq {
            self.hystart_reset(tcp);
        }
        if tcp.cwnd < self.p.hystart_low_window {
            return;
        }
        if self.p.hystart_ack_train && tcp.now.saturating_since(self.last_ack) <= self.p.hystart_ack_delta {
            self.last_ack = tcp.now;
            let mut threshold = self.delay_min + Cubic::ack_delay_us(tcp);
            // Without pacing, a window's ACKs come back within half an RTT.
            if tcp.pacing_rate.is_none() {
                threshold >>= 1;
            }
            if micros(tcp.now.saturating_since(self.round_start)) > threshold {
                self.found = true;
                tcp.ssthresh = tcp.cwnd;
            }
        }
        if self.p.hystart_delay {
            self.curr_rtt = self.curr_rtt.min(delay);
            if self.sample_cnt < HYSTART_MIN_SAMPLES {
                self.sample_cnt += 1;
            } else {
                let thresh = (self.delay_min >> 3).clamp(HYSTART_DELAY_MIN_US, HYSTART_DELAY_MAX_US);
                if self.curr_rtt > self.delay_min + thresh {
                    self.found = true;
                    tcp.ssthresh = tcp.cwnd;
                }
            }
        }
    }
}

impl Default for Cubic {
    fn default() -> Cubic {
        Cubic::new(CubicCcParams::default())
    }
}

impl CongestionControl for Cubic {
    fn name(&self) -> &'static str {
        "cubic"
    }

    fn init(&mut self, tcp: &mut Tcp) {
        self.reset();
        if self.p.hystart {
            self.hystart_reset(tcp);
        }
    }

    fn ssthresh(&mut self, tcp: &Tcp) -> u32 {
        self.epoch_start = None;
        self.last_max_cwnd = if tcp.cwnd < self.last_max_cwnd && self.p.fast_convergence {
            tcp.cwnd * (BETA_SCALE + self.p.beta) / (2 * BETA_SCALE)
        } else {
            tcp.cwnd
        };
        (tcp.cwnd * self.p.beta / BETA_SCALE).max(2)
    }

    fn cong_avoid(&mut self, tcp: &mut Tcp, acked: u32) {
        let Some(acked) = slow_start_first(tcp, acked) else {
            return;
        };
        self.update(tcp.now, tcp.cwnd, acked);
        tcp.cong_avoid_ai(self.cnt, acked);
    }

    fn set_state(&mut self, tcp: &mut Tcp, new: CaState) {
        if new == CaState::Loss {
            self.reset();
            self.hystart_reset(tcp);
        }
    }

    fn cwnd_event(&mut self, tcp: &mut Tcp, ev: CaEvent) {
        if ev != CaEvent::TxStart {
            return;
        }
        let now = jiffies(tcp.now);
        let idle = now.saturating_sub(jiffies(tcp.lsndtime));
        if let Some(e) = self.epoch_start {
            if idle > 0 {
                self.epoch_start = Some((e + idle).min(now));
            }
        }
    }

    fn pkts_acked(&mut self, tcp: &mut Tcp, _acked: u32, rtt: Option<Duration>) {
        let Some(rtt) = rtt else { return };
        // Samples right after a reduction are discarded.
        if let Some(e) = self.epoch_start {
            if jiffies(tcp.now).saturating_sub(e) < HZ {
                return;
            }
        }
        let delay = micros(rtt).max(1);
        if self.delay_min == 0 || self.delay_min > delay {
            self.delay_min = delay;
        }
        if !self.found && tcp.in_slow_start() && self.p.hystart {
            self.hystart_update(tcp, delay);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::transport::linux::cc::INFINITE_SSTHRESH;

    // Helpers

    const C: f64 = 410.0 / 1024.0;

    /// A CUBIC sender that has seen a minimum RTT of `rtt` and lost a packet
    /// at window `w_max`, with cwnd set to the new ssthresh as after
    /// recovery; the clock at zero.
    fn after_loss(w_max: u32, rtt: Duration) -> (Cubic, Tcp) {
        let mut t = Tcp::new(10, 1500);
        let mut cc = Cubic::default();
        cc.init(&mut t);
        cc.pkts_acked(&mut t, 1, Some(rtt));
        t.cwnd = w_max;
        t.ssthresh = cc.ssthresh(&t);
        t.cwnd = t.ssthresh;
        t.is_cwnd_limited = true;
        (cc, t)
    }

    /// Runs an ACK clock until `end`: each round trip, cwnd packets are
    /// acknowledged one by one, evenly spaced; returns cwnd at the end.
    fn ack_clock(cc: &mut Cubic, t: &mut Tcp, rtt: Duration, end: Time) -> u32 {
        while t.now < end {
            let n = t.cwnd as u64;
            let gap = Duration::from_nanos(rtt.nanos() / n);
            for _ in 0..n {
                if t.now >= end {
                    break;
                }
                t.now += gap;
                t.snd_una += 1;
                t.snd_nxt += 1;
                cc.pkts_acked(t, 1, Some(rtt));
                cc.cong_avoid(t, 1);
            }
        }
        t.cwnd
    }

    #[test]
    fn test_cwnd_follows_the_cubic_curve_back_to_w_max() {
        // A loss at 100: ssthresh 100 x 717 / 1024 = 70, K =
        // cbrt(30 / 0.4004) = 4.216 s. With a 100 ms RTT the Reno estimate
        // (70 + 0.53 per RTT) stays below the curve, so cwnd follows
        // W(t) = 0.4004 (t - K)^3 + 100 within a packet or two: a little
        // ahead of it, since Linux aims one RTT ahead, behind by the packet
        // steps of cnt.
        let rtt = Duration::from_millis(100);
        let (mut cc, mut t) = after_loss(100, rtt);
        assert_eq!(t.cwnd, 70);
        let k = (30.0f64 / C).cbrt();
        for s in [0.5, 1.0, 2.0, 3.0, 4.0, k, 5.0, 6.0, 7.0] {
            let cwnd = ack_clock(&mut cc, &mut t, rtt, Time::from_nanos((s * 1e9) as u64)) as f64;
            let w = C * (s - k).powi(3) + 100.0;
            assert!((cwnd - w).abs() <= 2.0, "t = {s}: cwnd {cwnd}, W(t) {w:.2}");
        }
        // At K itself cwnd is back at the old maximum.
        assert!((k - 4.2158).abs() < 1e-4);
    }

    #[test]
    fn test_short_rtts_grow_as_the_reno_estimate() {
        // A loss at 20 with a 10 ms RTT: ssthresh 14, K = cbrt(6 / 0.4004)
        // = 2.47 s, and the curve one RTT ahead stays below 17 for the first
        // half second. The Reno estimate grows by one per cwnd x 15 / 8
        // packets acknowledged, 8/15 of a packet per RTT: after 50 RTTs,
        // 14 + 50 x 8 / 15 = 40.7, and cwnd follows it.
        let rtt = Duration::from_millis(10);
        let (mut cc, mut t) = after_loss(20, rtt);
        assert_eq!(t.cwnd, 14);
        let cwnd = ack_clock(&mut cc, &mut t, rtt, Time::from_millis(500)) as f64;
        let reno = 14.0 + 50.0 * 8.0 / 15.0;
        assert!((cwnd - reno).abs() <= 2.0, "cwnd {cwnd}, Reno estimate {reno:.1}");
        // Without the Reno-friendly region cwnd creeps along the curve.
        let mut cc = Cubic::new(CubicCcParams {
            tcp_friendliness: false,
            ..CubicCcParams::default()
        });
        let mut t2 = Tcp::new(10, 1500);
        cc.init(&mut t2);
        cc.pkts_acked(&mut t2, 1, Some(rtt));
        t2.cwnd = 20;
        t2.ssthresh = cc.ssthresh(&t2);
        t2.cwnd = t2.ssthresh;
        t2.is_cwnd_limited = true;
        assert!(ack_clock(&mut cc, &mut t2, rtt, Time::from_millis(500)) <= 18);
    }

    #[test]
    fn test_growth_is_at_most_one_packet_per_two_acks() {
        // Far past K the curve asks for thousands of packets (at 30 s,
        // 100 + 0.4004 x 25.8^3 = 6950); cnt is held at 2, so the 70 ACKs of
        // one round trip add 35 packets: 1.5 x cwnd.
        let (mut cc, mut t) = after_loss(100, Duration::from_millis(100));
        cc.cong_avoid(&mut t, 1);
        t.cwnd = 70;
        t.cwnd_cnt = 0;
        t.now = Time::from_secs(30);
        for _ in 0..70 {
            t.now += Duration::from_millis(1);
            cc.cong_avoid(&mut t, 1);
            assert_eq!(cc.cnt(), 2);
        }
        assert_eq!(t.cwnd, 105);
    }

    #[test]
    fn test_ssthresh_with_fast_convergence() {
        let mut t = Tcp::new(100, 1500);
        let mut cc = Cubic::default();
        cc.init(&mut t);
        // 100 x 717 / 1024 = 70.02: 70; W_max 100.
        assert_eq!(cc.ssthresh(&t), 70);
        assert_eq!(cc.last_max_cwnd(), 100);
        // A loss at 80 below that maximum: W_max = 80 x 1741 / 2048 = 68.0
        // (68), ssthresh 80 x 717 / 1024 = 56.
        t.cwnd = 80;
        assert_eq!(cc.ssthresh(&t), 56);
        assert_eq!(cc.last_max_cwnd(), 68);
        // Never below 2.
        t.cwnd = 2;
        assert_eq!(cc.ssthresh(&t), 2);
    }

    #[test]
    fn test_a_timeout_resets_the_state() {
        let rtt = Duration::from_millis(100);
        let (mut cc, mut t) = after_loss(100, rtt);
        ack_clock(&mut cc, &mut t, rtt, Time::from_secs(2));
        assert!(cc.epoch_start.is_some());
        cc.set_state(&mut t, CaState::Loss);
        assert_eq!(cc.last_max_cwnd(), 0);
        assert_eq!(cc.epoch_start, None);
        assert_eq!(cc.delay_min(), Duration::ZERO);
        assert_eq!(cc.end_seq, t.snd_nxt);
    }

    #[test]
    fn test_idle_time_shifts_the_epoch() {
        let rtt = Duration::from_millis(100);
        let (mut cc, mut t) = after_loss(100, rtt);
        t.now = Time::from_secs(1);
        cc.cong_avoid(&mut t, 1);
        assert_eq!(cc.epoch_start, Some(1000));
        // Idle from 1.5 s to 3.5 s: the epoch starts 2 s later.
        t.lsndtime = Time::from_millis(1500);
        t.now = Time::from_millis(3500);
        cc.cwnd_event(&mut t, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, Some(3000));
        // Never later than now.
        t.lsndtime = Time::ZERO;
        t.now = Time::from_millis(4000);
        cc.cwnd_event(&mut t, CaEvent::TxStart);
        assert_eq!(cc.epoch_start, Some(4000));
    }

    /// A sender in slow start at `cwnd` with a round of `cwnd` packets sent;
    /// HyStart's first round begins at time zero.
    fn slow_start(cwnd: u32) -> (Cubic, Tcp) {
        let mut t = Tcp::new(cwnd, 1500);
        t.snd_nxt = cwnd as u64;
        let mut cc = Cubic::default();
        cc.init(&mut t);
        (cc, t)
    }

    /// `n` RTT samples of `rtt` 3 ms apart (too far apart for an ACK train),
    /// each acknowledging one packet; returns ssthresh after each.
    fn samples(cc: &mut Cubic, t: &mut Tcp, n: usize, rtt: Duration) -> Vec<u32> {
        (0..n)
            .map(|_| {
                t.now += Duration::from_millis(3);
                t.snd_una += 1;
                cc.pkts_acked(t, 1, Some(rtt));
                t.ssthresh
            })
            .collect()
    }

    /// Starts HyStart's next round: the last round's packets are
    /// acknowledged past its end, and another round is sent.
    fn next_round(t: &mut Tcp) {
        t.snd_una = t.snd_nxt;
        t.snd_nxt += t.cwnd as u64;
    }

    #[test]
    fn test_hystart_exits_on_a_delay_increase_after_eight_samples() {
        // Round 1 sets delay_min = 100 ms; the threshold is
        // clamp(100 / 8, 4, 16) = 12.5 ms. Round 2's RTTs are 113 ms: its
        // first 8 samples only gather the round's minimum, the ninth
        // compares 113 > 112.5 and ends slow start at cwnd.
        let (mut cc, mut t) = slow_start(20);
        samples(&mut cc, &mut t, 8, Duration::from_millis(100));
        next_round(&mut t);
        let s = samples(&mut cc, &mut t, 9, Duration::from_millis(113));
        assert!(s[..8].iter().all(|&x| x == INFINITE_SSTHRESH));
        assert_eq!(s[8], 20);
        assert!(!t.in_slow_start());
    }

    #[test]
    fn test_hystart_ignores_increases_below_the_threshold_or_low_windows() {
        // 112 ms is not above 100 + 12.5.
        let (mut cc, mut t) = slow_start(20);
        samples(&mut cc, &mut t, 8, Duration::from_millis(100));
        next_round(&mut t);
        samples(&mut cc, &mut t, 16, Duration::from_millis(112));
        assert_eq!(t.ssthresh, INFINITE_SSTHRESH);
        // Below hystart_low_window (16), even 150 ms does nothing.
        let (mut cc, mut t) = slow_start(15);
        samples(&mut cc, &mut t, 8, Duration::from_millis(100));
        next_round(&mut t);
        samples(&mut cc, &mut t, 16, Duration::from_millis(150));
        assert_eq!(t.ssthresh, INFINITE_SSTHRESH);
        // A 10 ms minimum: 10 / 8 is clamped to 4 ms; 13.9 ms passes, 14.1
        // does not.
        let (mut cc, mut t) = slow_start(20);
        samples(&mut cc, &mut t, 8, Duration::from_millis(10));
        next_round(&mut t);
        samples(&mut cc, &mut t, 9, Duration::from_micros(13_900));
        assert_eq!(t.ssthresh, INFINITE_SSTHRESH);
        next_round(&mut t);
        samples(&mut cc, &mut t, 9, Duration::from_micros(14_100));
        assert_eq!(t.ssthresh, 20);
    }

    #[test]
    fn test_hystart_exits_when_the_ack_train_passes_half_the_minimum_rtt() {
        // delay_min 20 ms, no pacing: the socket's rate is 2 x 32 x 1500 /
        // 20 ms = 4.8 MB/s, so the cushion is min(1 ms, 262144 / 4.8e6 s)
        // = 1 ms and the threshold (20 + 1) / 2 = 10.5 ms. ACKs 1 ms apart
        // from the round's start: the one at 11 ms ends slow start.
        let (mut cc, mut t) = slow_start(32);
        t.srtt = Duration::from_millis(20);
        let rtt = Duration::from_millis(20);
        for ms in 1..=11 {
            t.now = Time::from_millis(ms);
            t.snd_una += 1;
            cc.pkts_acked(&mut t, 1, Some(rtt));
            let want = if ms < 11 { INFINITE_SSTHRESH } else { 32 };
            assert_eq!(t.ssthresh, want, "at {ms} ms");
        }
    }

    #[test]
    fn test_params_are_checked() {
        assert!(CubicCcParams::default().validate().is_ok());
        let bad = CubicCcParams {
            beta: 1024,
            ..CubicCcParams::default()
        };
        assert!(bad.validate().is_err());
        assert_eq!(Cubic::default().beta_scale, 15);
    }
}
