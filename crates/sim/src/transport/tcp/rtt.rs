//! The retransmission timeout: RTT samples in, the timer's value out, with
//! exponential backoff. Which packet is timed and when the timer is armed
//! are the sender's business ([`super::sender`]); this file is only the
//! arithmetic.
//!
//! Heads up: read ns-2.35's `tcp/tcp.cc` (`rtt_update`, `rtt_timeout`,
//! `rtt_backoff`) and RFC 6298 before changing this file; the tests below
//! work one sequence of samples through both.
//!
//! # Modes ([`RtoConfig`])
//!
//! * `Ns2` (default, ns-2.35 with `timestamps_` off and `rfc2988_` on).
//!   A sample is measured on an emulated free-running clock of period
//!   `tick` whose phase is the connection's `boot_offset` (ns-2's
//!   `boot_time_`, drawn uniformly in `[0, tick)` by the engine):
//!   ```text
//!   m = max(1, floor((now - sent + ((sent + boot) mod tick)) / tick))    ticks
//!   first sample:  srtt8 = 8 m,  rttvar4 = 2 m                           (srtt = m, rttvar = m/2)
//!   later:         d = m - floor(srtt8 / 8);  srtt8 += d                 (srtt += (m - srtt)/8)
//!                  rttvar4 += |d| - floor(rttvar4 / 4)                   (rttvar += (|d| - rttvar)/4)
//!                  (each floored at 1)
//!   rtxcur = tick * floor((8 rttvar4 + srtt8) / 8)                       (srtt + 4 rttvar, whole ticks)
//!   RTO    = max(2 tick, min(max(rtxcur, min) * backoff, max))           (floor before backoff)
//!   ```
//!   `rtxcur` is `initial` until the first sample. On each backoff,
//!   `backoff` doubles while it is below 64 or the RTO is below `max`; once
//!   it exceeds 8, srtt is folded into rttvar and cleared, so the next
//!   sample starts afresh (ns-2; RFC 6298 section 5 only says MAY).
//!   Integer nanoseconds replace ns-2's doubles: ns-2 can truncate a sample
//!   that is an exact multiple of the tick one tick low (0.3 / 0.01 =
//!   29.999...), aqmlab does not.
//! * `Rfc6298`: RFC 6298 section 2 on exact samples (`now - sent`, clock
//!   granularity G = 0), at nanosecond resolution (each step rounds to the
//!   nearest nanosecond):
//!   ```text
//!   first:  SRTT = R,  RTTVAR = R/2
//!   later:  RTTVAR = 3/4 RTTVAR + 1/4 |SRTT - R|;  SRTT = 7/8 SRTT + 1/8 R
//!   RTO    = min(clamp(SRTT + 4 RTTVAR, min, max) * backoff, max)        (section 2.4, 2.5, 5.5)
//!   ```
//!   `initial` before the first sample. The backoff doubles as in `Ns2`;
//!   SRTT is never cleared.
//! * `Fixed(base)`: RTO = min(base * backoff, max(60 s, base)); no samples
//!   are used.
//! * `Ted` has no value of its own: the engine must resolve it to `Fixed`
//!   once the path is known, and [`RttEstimator::new`] rejects it.
//!
//! In every mode a valid sample (never one from a retransmission: Karn's
//! rule, enforced by the sender) resets the backoff to 1.

use aqmlab_qdisc::{Duration, Time};

use super::config::RtoConfig;

/// ns-2's `rtt_backoff`: double while below this factor, or while the RTO
/// is still under its ceiling.
const BACKOFF_DOUBLE_BELOW: u64 = 64;
/// Beyond this backoff ns-2 clears srtt (`t_backoff_ > 8`).
const BACKOFF_CLEAR_SRTT: u64 = 8;
/// The ceiling of a `Fixed` RTO under backoff (ns-2.35's `maxrto_`).
const FIXED_MAX: Duration = Duration::from_secs(60);
/// A backoff factor no RTO ever needs; keeps the doubling finite for any
/// configuration.
const BACKOFF_LIMIT: u64 = 1 << 40;

/// The RTO estimator of one sender, with its backoff factor.
#[derive(Clone, Debug)]
pub struct RttEstimator {
    mode: Mode,
    /// 1, 2, 4, ...: the factor the base RTO is multiplied by.
    backoff: u64,
}

#[derive(Clone, Debug)]
enum Mode {
    Ns2 {
        tick_ns: u64,
        min: Duration,
        max: Duration,
        boot_ns: u64,
        /// 8 * srtt in ticks; 0 = no estimate.
        srtt8: i64,
        /// 4 * rttvar in ticks.
        rttvar4: i64,
        /// srtt + 4 rttvar in whole ticks (ns-2 `t_rtxcur_`).
        rtxcur: Duration,
    },
    Rfc6298 {
        min: Duration,
        max: Duration,
        /// None before the first sample.
        srtt_ns: Option<u64>,
        rttvar_ns: u64,
        /// SRTT + 4 RTTVAR, or `initial` before the first sample.
        base: Duration,
    },
    Fixed {
        base: Duration,
        max: Duration,
    },
}

impl RttEstimator {
    /// Builds the estimator. `boot_offset` is the phase of ns-2's emulated
    /// clock, in `[0, tick)`; other modes ignore it.
    pub fn new(cfg: &RtoConfig, boot_offset: Duration) -> Result<RttEstimator, String> {
        let mode = match *cfg {
            RtoConfig::Ns2 {
                tick,
                min,
                max,
                initial,
            } => {
                if tick.nanos() == 0 {
                    return Err("rto.tick must be positive (got 0)".to_string());
                }
                if min > max {
                    return Err(format!(
                        "rto.min must not exceed rto.max (got {} s > {} s)",
                        min.as_secs_f64(),
                        max.as_secs_f64()
                    ));
                }
                if boot_offset >= tick {
                    return Err(format!(
                        "the clock phase boot_offset must lie in [0, tick) (got {} s, tick {} s)",
                        boot_offset.as_secs_f64(),
                        tick.as_secs_f64()
                    ));
                }
                Mode::Ns2 {
                    tick_ns: tick.nanos(),
                    min,
                    max,
                    boot_ns: boot_offset.nanos(),
                    srtt8: 0,
                    rttvar4: 0,
                    rtxcur: initial,
                }
            }
            RtoConfig::Rfc6298 { min, max, initial } => {
                if min > max {
                    return Err(format!(
                        "rto.min must not exceed rto.max (got {} s > {} s)",
                        min.as_secs_f64(),
                        max.as_secs_f64()
                    ));
                }
                Mode::Rfc6298 {
                    min,
                    max,
                    srtt_ns: None,
                    rttvar_ns: 0,
                    base: initial,
                }
            }
            RtoConfig::Fixed(base) => {
                if base.nanos() == 0 {
                    return Err("a fixed rto must be positive (got 0)".to_string());
                }
                Mode::Fixed {
                    base,
                    max: if base > FIXED_MAX { base } else { FIXED_MAX },
                }
            }
            RtoConfig::Linux { .. } => {
                return Err("Linux's RTO belongs to the Linux-style family's own estimator".to_string())
            }
            RtoConfig::Ted => {
                return Err("rto = \"ted\" must be resolved to a fixed RTO from the flow's path \
                     before the sender is built"
                    .to_string())
            }
        };
        Ok(RttEstimator { mode, backoff: 1 })
    }

    /// One RTT measurement: the timed packet left at `sent` and its ACK
    /// arrived at `now` (ns-2 `rtt_update(now - rtt_ts)`).
    pub fn sample(&mut self, sent: Time, now: Time) {
        let tao = now.saturating_since(sent).nanos();
        match &mut self.mode {
            Mode::Ns2 {
                tick_ns,
                boot_ns,
                srtt8,
                rttvar4,
                rtxcur,
                ..
            } => {
                let tick = *tick_ns;
                // Reading of the emulated clock: the phase of the send time.
                let tickoff = (sent.nanos() % tick + *boot_ns) % tick;
                let m = ((tao as u128 + tickoff as u128) / tick as u128).max(1);
                let m = m.min(i64::MAX as u128 >> 4) as i64;
                if *srtt8 != 0 {
                    // d = m - srtt; srtt8 += d is srtt += d/8 at scale 8.
                    let delta = m - (*srtt8 >> 3);
                    *srtt8 += delta;
                    if *srtt8 <= 0 {
                        *srtt8 = 1;
                    }
                    // rttvar4 += |d| - rttvar is rttvar += (|d| - rttvar)/4 at scale 4.
                    *rttvar4 += delta.abs() - (*rttvar4 >> 2);
                    if *rttvar4 <= 0 {
                        *rttvar4 = 1;
                    }
                } else {
                    *srtt8 = m << 3;
                    *rttvar4 = m << 1;
                }
                // (8 rttvar4 + srtt8) / 8 = rttvar4 + srtt8/8 = 4 rttvar + srtt, in ticks.
                let ticks = ((*rttvar4 << 3) + *srtt8) >> 3;
                *rtxcur = Duration(tick.saturating_mul(ticks as u64));
            }
            Mode::Rfc6298 {
                srtt_ns,
                rttvar_ns,
                base,
                ..
            } => {
                let r = tao;
                match *srtt_ns {
                    None => {
                        // RFC 6298 (2.2).
                        *srtt_ns = Some(r);
                        *rttvar_ns = r / 2;
                    }
                    Some(s) => {
                        // RFC 6298 (2.3): RTTVAR first, with the old SRTT.
                        let d = s.abs_diff(r) as u128;
                        *rttvar_ns = ((3 * *rttvar_ns as u128 + d + 2) / 4) as u64;
                        *srtt_ns = Some(((7 * s as u128 + r as u128 + 4) / 8) as u64);
                    }
                }
                let s = srtt_ns.unwrap_or(0);
                *base = Duration(s.saturating_add(rttvar_ns.saturating_mul(4)));
            }
            Mode::Fixed { .. } => {}
        }
    }

    /// The timer's value now: the base RTO, floored, times the backoff,
    /// capped (ns-2 `rtt_timeout`).
    pub fn rto(&self) -> Duration {
        match &self.mode {
            Mode::Ns2 {
                tick_ns,
                min,
                max,
                rtxcur,
                ..
            } => {
                // rfc2988_: the floor applies before the backoff.
                let base = if rtxcur < min { *min } else { *rtxcur };
                let t = base.nanos().saturating_mul(self.backoff).min(max.nanos());
                Duration(t.max(tick_ns.saturating_mul(2)))
            }
            Mode::Rfc6298 { min, max, base, .. } => {
                let b = base.nanos().clamp(min.nanos(), max.nanos());
                Duration(b.saturating_mul(self.backoff).min(max.nanos()))
            }
            Mode::Fixed { base, max } => Duration(base.nanos().saturating_mul(self.backoff).min(max.nanos())),
        }
    }

    /// A retransmission timeout (or an ECN echo at cwnd 1 with backoff
    /// pending): double the backoff (ns-2 `rtt_backoff`).
    pub fn back_off(&mut self) {
        let max = match &self.mode {
            Mode::Ns2 { max, .. } | Mode::Rfc6298 { max, .. } | Mode::Fixed { max, .. } => *max,
        };
        if (self.backoff < BACKOFF_DOUBLE_BELOW || self.rto() < max) && self.backoff < BACKOFF_LIMIT {
            self.backoff *= 2;
        }
        if let Mode::Ns2 { srtt8, rttvar4, .. } = &mut self.mode {
            if self.backoff > BACKOFF_CLEAR_SRTT {
                // Keep the old srtt as variance; the next sample re-initialises.
                *rttvar4 += *srtt8 >> 3;
                *srtt8 = 0;
            }
        }
    }

    /// A valid sample was taken: back to the base RTO.
    pub fn reset_backoff(&mut self) {
        self.backoff = 1;
    }

    /// The current backoff factor (1, 2, 4, ...).
    pub fn backoff(&self) -> u64 {
        self.backoff
    }

    /// The smoothed RTT; zero while there is no estimate.
    pub fn srtt(&self) -> Duration {
        match &self.mode {
            Mode::Ns2 { tick_ns, srtt8, .. } => Duration((*srtt8 as u128 * *tick_ns as u128 / 8) as u64),
            Mode::Rfc6298 { srtt_ns, .. } => Duration(srtt_ns.unwrap_or(0)),
            Mode::Fixed { .. } => Duration::ZERO,
        }
    }

    /// The RTT variation; zero while there is no estimate.
    pub fn rttvar(&self) -> Duration {
        match &self.mode {
            Mode::Ns2 { tick_ns, rttvar4, .. } => Duration((*rttvar4 as u128 * *tick_ns as u128 / 4) as u64),
            Mode::Rfc6298 { rttvar_ns, .. } => Duration(*rttvar_ns),
            Mode::Fixed { .. } => Duration::ZERO,
        }
    }

    /// ns-2's scaled integers `(srtt8, rttvar4)`, in ticks, in `Ns2` mode.
    pub fn ns2_scaled(&self) -> Option<(i64, i64)> {
        match &self.mode {
            Mode::Ns2 { srtt8, rttvar4, .. } => Some((*srtt8, *rttvar4)),
            _ => None,
        }
    }

    /// The RTO before floor, ceiling and backoff: ns-2's `rtxcur`, RFC
    /// 6298's SRTT + 4 RTTVAR (or `initial`), or the fixed value.
    pub fn base_rto(&self) -> Duration {
        match &self.mode {
            Mode::Ns2 { rtxcur, .. } => *rtxcur,
            Mode::Rfc6298 { base, .. } => *base,
            Mode::Fixed { base, .. } => *base,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    // Constants

    const MS: u64 = 1_000_000;

    // Helpers

    fn ns2() -> RttEstimator {
        RttEstimator::new(&RtoConfig::NS2, Duration::ZERO).unwrap()
    }

    fn rfc() -> RttEstimator {
        RttEstimator::new(&RtoConfig::RFC6298, Duration::ZERO).unwrap()
    }

    /// A sample of `ms` milliseconds on a packet sent at time 0.
    fn sample_ms(e: &mut RttEstimator, ms: u64) {
        e.sample(Time::ZERO, Time(ms * MS));
    }

    #[track_caller]
    fn assert_rto_ms(e: &RttEstimator, ms_x10: u64) {
        assert_eq!(e.rto(), Duration(ms_x10 * MS / 10), "rto");
    }

    // Samples of 100, 100, 300 and 50 ms (ns-2)

    #[test]
    fn test_ns2_before_any_sample_rto_is_3s() {
        assert_eq!(ns2().rto(), Duration::from_secs(3));
    }

    #[test]
    fn test_ns2_samples_100_100_300_50ms_give_vector6() {
        // Ticks of 10 ms: m = 10, 10, 30, 5.
        // 10: srtt8 = 80, rttvar4 = 20, rtxcur = (160 + 80) >> 3 = 30 ticks = 0.30 s.
        // 10: d = 0, srtt8 80; rttvar4 += 0 - 5 = 15; (120 + 80) >> 3 = 25 -> 0.25 s.
        // 30: d = 20, srtt8 100; rttvar4 += 20 - 3 = 32; (256 + 100) >> 3 = 44 -> 0.44 s.
        // 5:  d = 5 - 12 = -7, srtt8 93; rttvar4 += 7 - 8 = 31; (248 + 93) >> 3 = 42 -> 0.42 s.
        let mut e = ns2();
        let expect = [
            (100, 80, 20, 3000),
            (100, 80, 15, 2500),
            (300, 100, 32, 4400),
            (50, 93, 31, 4200),
        ];
        for (ms, srtt8, rttvar4, rto_x10) in expect {
            sample_ms(&mut e, ms);
            assert_eq!(e.ns2_scaled(), Some((srtt8, rttvar4)), "after {ms} ms");
            assert_rto_ms(&e, rto_x10);
        }
    }

    #[test]
    fn test_ns2_10ms_rtt_rto_floored_at_200ms() {
        // m = 1: srtt8 8, rttvar4 2, rtxcur = (16 + 8) >> 3 = 3 ticks = 30 ms < min 0.2 s.
        let mut e = ns2();
        sample_ms(&mut e, 10);
        assert_eq!(e.base_rto(), Duration(30 * MS));
        assert_eq!(e.rto(), Duration(200 * MS));
    }

    #[test]
    fn test_ns2_backoff_from_300ms_doubles_to_60s_cap() {
        // 0.3 * 2^k, capped at 60 s: 0.3 0.6 1.2 2.4 4.8 9.6 19.2 38.4 60 60.
        let mut e = ns2();
        sample_ms(&mut e, 100);
        let expect_x10 = [3000, 6000, 12000, 24000, 48000, 96000, 192000, 384000, 600000, 600000];
        for want in expect_x10 {
            assert_rto_ms(&e, want);
            e.back_off();
        }
        // Doubling stops once the backoff is >= 64 and the RTO is at its ceiling.
        assert_eq!(e.backoff(), 256);
    }

    #[test]
    fn test_ns2_backoff_beyond_8_clears_srtt_next_sample_reinitialises() {
        // After the 4th backoff (16 > 8): rttvar4 = 20 + 80 >> 3 = 30, srtt8 = 0.
        let mut e = ns2();
        sample_ms(&mut e, 100);
        for _ in 0..4 {
            e.back_off();
        }
        assert_eq!(e.ns2_scaled(), Some((0, 30)));
        // A sample of 200 ms starts again: srtt8 = 160, rttvar4 = 40, rtxcur = 60 ticks.
        e.reset_backoff();
        sample_ms(&mut e, 200);
        assert_eq!(e.ns2_scaled(), Some((160, 40)));
        assert_rto_ms(&e, 6000);
    }

    #[test]
    fn test_ns2_sample_counts_emulated_clock_ticks() {
        // boot 3 ms, sent at 12 ms: clock phase (12 + 3) mod 10 = 5 ms.
        // A 96 ms RTT crosses floor((96 + 5) / 10) = 10 ticks; a 4 ms one 0 -> 1 tick.
        let mut e = RttEstimator::new(&RtoConfig::NS2, Duration(3 * MS)).unwrap();
        e.sample(Time(12 * MS), Time(108 * MS));
        assert_eq!(e.ns2_scaled(), Some((80, 20)));
        let mut f = RttEstimator::new(&RtoConfig::NS2, Duration(3 * MS)).unwrap();
        f.sample(Time(12 * MS), Time(16 * MS));
        assert_eq!(f.ns2_scaled(), Some((8, 2)));
    }

    // The same samples (RFC 6298)

    #[test]
    fn test_rfc6298_samples_give_raw_vector6_then_1s_floor() {
        // 0.1: SRTT .1, RTTVAR .05 -> .3; 0.1: RTTVAR .0375 -> .25;
        // 0.3: RTTVAR .75*.0375 + .25*.2 = .078125, SRTT .125 -> .4375;
        // 0.05: RTTVAR .75*.078125 + .25*.075 = .07734375, SRTT .115625 -> .425.
        let mut e = rfc();
        assert_eq!(e.rto(), Duration::from_secs(1));
        for (ms, raw_ns) in [
            (100, 300_000_000),
            (100, 250_000_000),
            (300, 437_500_000),
            (50, 425_000_000),
        ] {
            sample_ms(&mut e, ms);
            assert_eq!(e.base_rto(), Duration(raw_ns), "after {ms} ms");
            assert_eq!(e.rto(), Duration::from_secs(1));
        }
    }

    #[test]
    fn test_rfc6298_backoff_doubles_from_floor() {
        let mut e = rfc();
        sample_ms(&mut e, 100);
        e.back_off();
        e.back_off();
        assert_eq!(e.rto(), Duration::from_secs(4));
    }

    // Fixed and Ted

    #[test]
    fn test_fixed_backoff_doubles_and_caps_at_60s() {
        let mut e = RttEstimator::new(&RtoConfig::Fixed(Duration(40 * MS)), Duration::ZERO).unwrap();
        sample_ms(&mut e, 500);
        assert_eq!(e.rto(), Duration(40 * MS));
        for _ in 0..20 {
            e.back_off();
        }
        assert_eq!(e.rto(), Duration::from_secs(60));
    }

    #[test]
    fn test_ted_unresolved_is_rejected() {
        let err = RttEstimator::new(&RtoConfig::Ted, Duration::ZERO).unwrap_err();
        assert!(err.contains("ted"), "{err}");
    }

    #[test]
    fn test_ns2_boot_offset_outside_tick_is_rejected() {
        assert!(RttEstimator::new(&RtoConfig::NS2, Duration(10 * MS)).is_err());
    }
}
