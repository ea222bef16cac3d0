//! Linux's RTT estimator and retransmission timeout (`tcp_rtt_estimator`
//! and `tcp_set_rto` in `net/ipv4/tcp_input.c`): Jacobson's smoothed RTT
//! and mean deviation with Linux's two refinements, and an RTO of
//! srtt + rttvar where rttvar never falls below the minimum RTO.
//!
//! Heads up: Linux keeps srtt scaled by 8 and mdev by 4 in microseconds;
//! here the same arithmetic runs in nanoseconds with the same scalings, so
//! every shift and comparison is Linux's.
//!
//! ```text
//! first sample m:  srtt = m, mdev = m/2, rttvar = max(4 mdev, rto_min)
//! later samples:   err = m - srtt;  srtt += err/8
//!                  4 mdev += (|err| - 4 mdev/4) / 4, but only 1/8 of that
//!                  when the RTT fell (err < 0) and |err| > mdev (Eifel-like)
//!                  mdev_max = max over the round; rttvar = max(rttvar, mdev_max)
//!                  once per round (snd_una passes rtt_seq): rttvar decays a
//!                  quarter of the way to mdev_max, mdev_max = rto_min
//! rto = srtt + rttvar, at most max_rto; doubled per backoff
//! ```
//!
//! Defaults (Linux): rto_min 200 ms (`TCP_RTO_MIN`), initial RTO 1 s
//! (`TCP_TIMEOUT_INIT`), max 120 s (`TCP_RTO_MAX`).

use aqmlab_qdisc::Duration;

/// Linux's RTO bounds.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RtoBounds {
    pub min: Duration,
    pub max: Duration,
    pub initial: Duration,
}

impl Default for RtoBounds {
    fn default() -> RtoBounds {
        RtoBounds {
            min: Duration::from_millis(200),
            max: Duration::from_secs(120),
            initial: Duration::from_secs(1),
        }
    }
}

/// The estimator's state; times in nanoseconds, srtt scaled by 8 and the
/// deviations by 4, as Linux's.
#[derive(Clone, Debug)]
pub struct LinuxRtt {
    bounds: RtoBounds,
    srtt8: i64,
    mdev4: i64,
    mdev_max4: i64,
    rttvar4: i64,
    /// The round ends when snd_una passes this (`rtt_seq`).
    rtt_seq: u64,
    backoff: u32,
}

impl LinuxRtt {
    pub fn new(bounds: RtoBounds) -> LinuxRtt {
        LinuxRtt {
            bounds,
            srtt8: 0,
            mdev4: 0,
            mdev_max4: 0,
            rttvar4: 0,
            rtt_seq: 0,
            backoff: 0,
        }
    }

    /// Takes one RTT sample `m`; `snd_una` and `snd_nxt` mark the round.
    pub fn sample(&mut self, m: Duration, snd_una: u64, snd_nxt: u64) {
        let rto_min = self.bounds.min.nanos() as i64;
        let mut m = (m.nanos() as i64).max(1);
        if self.srtt8 != 0 {
            m -= self.srtt8 >> 3;
            self.srtt8 += m;
            if m < 0 {
                m = -m - (self.mdev4 >> 2);
                if m > 0 {
                    m >>= 3;
                }
            } else {
                m -= self.mdev4 >> 2;
            }
            self.mdev4 += m;
            if self.mdev4 > self.mdev_max4 {
                self.mdev_max4 = self.mdev4;
                self.rttvar4 = self.rttvar4.max(self.mdev_max4);
            }
            if snd_una > self.rtt_seq {
                if self.mdev_max4 < self.rttvar4 {
                    self.rttvar4 -= (self.rttvar4 - self.mdev_max4) >> 2;
                }
                self.rtt_seq = snd_nxt;
                self.mdev_max4 = rto_min;
            }
        } else {
            self.srtt8 = m << 3;
            self.mdev4 = m << 1;
            self.rttvar4 = self.mdev4.max(rto_min);
            self.mdev_max4 = self.rttvar4;
            self.rtt_seq = snd_nxt;
        }
        self.srtt8 = self.srtt8.max(1);
    }

    /// The smoothed RTT, zero before the first sample.
    pub fn srtt(&self) -> Duration {
        Duration::from_nanos((self.srtt8 >> 3) as u64)
    }

    /// The RTO before backoff: srtt + rttvar, or the initial RTO.
    pub fn base_rto(&self) -> Duration {
        if self.srtt8 == 0 {
            return self.bounds.initial;
        }
        Duration::from_nanos(((self.srtt8 >> 3) + self.rttvar4) as u64).min(self.bounds.max)
    }

    /// The RTO with the current backoff, at most the maximum.
    pub fn rto(&self) -> Duration {
        let base = self.base_rto().nanos();
        Duration::from_nanos(base.saturating_mul(1u64 << self.backoff.min(32))).min(self.bounds.max)
    }

    /// A retransmission timeout: the next RTO doubles.
    pub fn back_off(&mut self) {
        self.backoff = (self.backoff + 1).min(32);
    }

    /// New data was acknowledged: the backoff ends.
    pub fn reset_backoff(&mut self) {
        self.backoff = 0;
    }

    pub fn backoff(&self) -> u32 {
        self.backoff
    }

    pub fn min_rto(&self) -> Duration {
        self.bounds.min
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn ms(x: u64) -> Duration {
        Duration::from_millis(x)
    }

    #[test]
    fn test_the_first_sample_gives_srtt_and_an_rto_floored_by_rto_min() {
        let mut r = LinuxRtt::new(RtoBounds::default());
        assert_eq!(r.rto(), ms(1000), "before any sample: the initial RTO");
        // 100 ms: srtt 100, 4 mdev = 200 ms = rto_min; rto = 300 ms.
        r.sample(ms(100), 0, 10);
        assert_eq!(r.srtt(), ms(100));
        assert_eq!(r.rto(), ms(300));
        // 20 ms: 4 mdev = 40 ms < rto_min, so rttvar is 200 ms: rto 220 ms.
        let mut r = LinuxRtt::new(RtoBounds::default());
        r.sample(ms(20), 0, 10);
        assert_eq!(r.rto(), ms(220));
    }

    #[test]
    fn test_a_rise_moves_srtt_an_eighth_and_mdev_a_quarter() {
        let mut r = LinuxRtt::new(RtoBounds::default());
        r.sample(ms(100), 0, 10);
        // 180 ms within the round: err 80, srtt 110; 4 mdev: 200 + (80 -
        // 50) = 230 ms, the round's maximum, so rttvar 230: rto 340 ms.
        r.sample(ms(180), 5, 12);
        assert_eq!(r.srtt(), ms(110));
        assert_eq!(r.rto(), ms(340));
    }

    #[test]
    fn test_a_fall_moves_mdev_by_only_an_eighth_of_the_usual_step() {
        let mut r = LinuxRtt::new(RtoBounds::default());
        r.sample(ms(100), 0, 10);
        // 20 ms: err -80, srtt 90; |err| - 4 mdev / 4 = 80 - 50 = 30, an
        // eighth is 3.75: 4 mdev = 203.75 ms, above the round's 200, so
        // rttvar 203.75 and rto 293.75 ms.
        r.sample(ms(20), 5, 12);
        assert_eq!(r.srtt(), ms(90));
        assert_eq!(r.rto(), Duration::from_micros(293_750));
    }

    #[test]
    fn test_rttvar_decays_once_per_round_towards_the_rounds_maximum() {
        let mut r = LinuxRtt::new(RtoBounds::default());
        r.sample(ms(100), 0, 10);
        r.sample(ms(180), 5, 12); // rttvar 230, as above
                                  // A sample equal to srtt after snd_una passed 10: err 0, 4 mdev =
                                  // 230 - 57.5 = 172.5, below the round's maximum of 230 = rttvar:
                                  // nothing rises; the round ends, rttvar stays (mdev_max = rttvar),
                                  // and mdev_max restarts at rto_min.
        r.sample(ms(110), 11, 20);
        assert_eq!(r.rto(), ms(340));
        // Next round: 110 ms again, 4 mdev = 172.5 - 43.125 = 129.375; at
        // the round's end rttvar decays by (230 - 200) / 4 = 7.5 to 222.5.
        r.sample(ms(110), 21, 30);
        assert_eq!(r.rto(), Duration::from_micros(332_500));
    }

    #[test]
    fn test_backoff_doubles_up_to_the_maximum() {
        let mut r = LinuxRtt::new(RtoBounds::default());
        r.sample(ms(100), 0, 10);
        r.back_off();
        r.back_off();
        assert_eq!(r.rto(), ms(1200));
        for _ in 0..20 {
            r.back_off();
        }
        assert_eq!(r.rto(), Duration::from_secs(120));
        r.reset_backoff();
        assert_eq!(r.rto(), ms(300));
    }
}
