//! Adaptation of RED's `max_p` and thresholds: Adaptive RED, Feng's
//! self-configuring RED, and Jou–Tan–Baras dynamic thresholds.
//!
//! Heads up: read `red.rs` first. This module holds only the parameters and
//! the pure update rules; [`crate::red::Red`] decides when they run and keeps
//! the state they change. The rules are those of the papers cited below;
//! where ns-2, ns-3 and Linux differ, the choice made here is noted beside
//! the rule it concerns.
//!
//! # Adaptive RED
//!
//! S. Floyd, R. Gummadi, S. Shenker, "Adaptive RED: An Algorithm for
//! Increasing the Robustness of RED's Active Queue Management", ICSI
//! technical report, August 2001: the additive-increase /
//! multiplicative-decrease rule for `max_p`. Every `interval`:
//!
//! ```text
//! target band = [min_th + 0.4 (max_th - min_th), min_th + 0.6 (max_th - min_th)]
//! avg above the band and max_p <= top:     max_p <- max_p + min(alpha, max_p / 4)
//! avg below the band and max_p >= bottom:  max_p <- max_p * beta
//! ```
//!
//! Both bounds are inclusive, as in Linux (ns-2 tests strictly). So `max_p`
//! can end slightly outside [bottom, top]: 0.5 rises to 0.51 and 0.01 falls
//! to 0.009, as in Linux.
//!
//! * `interval` (default 0.5 s, > 0): time between checks.
//! * `alpha` (default 0.01, > 0): largest additive step; the step is at most
//!   `max_p / 4`, so one increase multiplies `max_p` by at most 1.25.
//! * `beta` (default 0.9, in (0, 1)): decrease factor.
//! * `top` (default 0.5) and `bottom` (default 0.01), 0 < bottom <= top <= 1.
//!   The default `bottom` is a fixed 0.01; ns-2's automatic `min(0.01,
//!   80000 / bandwidth)` is not used.
//! * `update`: [`AredUpdate::Timer`] (default, Linux): a periodic timer at
//!   interval, 2 interval, ..., reading the average aged by the idle decay
//!   up to that instant (not stored, as Linux). [`AredUpdate::Arrival`]
//!   (ns-2): checked at each arrival
//!   with the average just computed, once `now > last_change + interval`;
//!   `last_change` moves only when `max_p` changes, so while the average
//!   stays in the band every arrival checks again.
//! * `gentle_slope`: [`GentleSlope::Current`] (default: the paper's intent,
//!   the gentle line runs from the current `max_p` at `max_th` to 1 at
//!   `2 max_th`) or [`GentleSlope::Initial`] (ns-2 and ns-3: the line keeps
//!   the initial `max_p`, so the drop probability jumps at `max_th` once
//!   `max_p` has adapted).
//!
//! # Feng's self-configuring RED
//!
//! W. Feng, D. Kandlur, D. Saha, K. Shin, "A Self-Configuring RED Gateway",
//! IEEE INFOCOM 1999, the adaptive `max_p` algorithm: at every update of the
//! average,
//!
//! ```text
//! min_th < avg < max_th:                 status <- Between
//! avg < min_th and status != Below:      status <- Below; max_p <- max(max_p / a, bottom)
//! avg > max_th and status != Above:      status <- Above; max_p <- min(max_p * b, 1)
//! ```
//!
//! so `max_p` changes once per crossing, not once per packet. `a` (default
//! 3, > 1), `b` (default 2, > 1), `bottom` (default 0.0001, in (0, 1]). ns-2
//! and ns-3 leave `max_p` unbounded; aqmlab keeps it in [bottom, 1]. The
//! status starts at Between (ns-2 leaves it uninitialised, ns-3 starts at
//! Above). Because the average starts at 0, below any positive `min_th`, the
//! first arrival moves the status to Below and divides `max_p` by `a` once,
//! as in ns-3.
//!
//! # Dynamic thresholds
//!
//! J.-S. Jou, X. Tan, J. S. Baras, "A Parallel Queue Structure for Active
//! Queue Management", CISS 2004: the thresholds move to hold the averaged
//! drop probability `P_d` in [`p_low`, `p_high`] while `D = max_th - min_th`
//! stays fixed.
//!
//! ```text
//! each arrival:    P_d <- (1 - w_p) P_d + w_p p_a
//! every interval:  P_d > p_high: min_th <- min_th (1 + gamma)
//!                  P_d < p_low:  min_th <- min_th (1 - gamma)
//!                  min_th kept in [1 packet, limit - D]; max_th <- min_th + D
//! ```
//!
//! `p_a` is the probability with which RED dropped or marked that arrival
//! (after the count adjustment; 0 below `min_th` or when exempt, 1 in the
//! forced region), so that `P_d` estimates the fraction of arrivals dropped,
//! the quantity the scheme aims to hold. Defaults: `p_low` 0.01 and `p_high`
//! 0.02 (the paper's P_L and P_U, which study C1 uses), `w_p`
//! 0.002, `interval` 0.5 s (a periodic timer), `gamma` 0.05.

use crate::time::Duration;
use crate::ParamError;

/// How RED's `max_p` (and, with Feng, its thresholds) adapts.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub enum Adapt {
    /// Plain RED: `max_p` and the thresholds stay as configured.
    #[default]
    None,
    /// Adaptive RED (Floyd, Gummadi, Shenker 2001).
    Ared(AredParams),
    /// Feng's self-configuring RED, optionally with dynamic thresholds.
    Feng(FengParams),
}

/// When Adaptive RED checks the average against its target band.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum AredUpdate {
    /// ns-2: at the first arrival after `interval` has passed since the last
    /// change.
    Arrival,
    /// Linux: a periodic timer every `interval`.
    #[default]
    Timer,
}

/// Which `max_p` the gentle line above `max_th` starts from.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum GentleSlope {
    /// The current, adapted `max_p` (the ARED paper's intent).
    #[default]
    Current,
    /// The initial `max_p` (ns-2 and ns-3).
    Initial,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct AredParams {
    pub interval: Duration,
    pub alpha: f64,
    pub beta: f64,
    pub top: f64,
    pub bottom: f64,
    pub update: AredUpdate,
    pub gentle_slope: GentleSlope,
}

impl Default for AredParams {
    fn default() -> AredParams {
        AredParams {
            interval: Duration::from_millis(500),
            alpha: 0.01,
            beta: 0.9,
            top: 0.5,
            bottom: 0.01,
            update: AredUpdate::Timer,
            gentle_slope: GentleSlope::Current,
        }
    }
}

impl AredParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.interval == Duration::ZERO {
            return Err(ParamError::new("interval", "must be positive (got 0 s)"));
        }
        if !(self.alpha.is_finite() && self.alpha > 0.0) {
            return Err(ParamError::new(
                "alpha",
                format!("must be positive (got {})", self.alpha),
            ));
        }
        if !(self.beta > 0.0 && self.beta < 1.0) {
            return Err(ParamError::new(
                "beta",
                format!("must be in (0, 1) (got {})", self.beta),
            ));
        }
        if !(self.top > 0.0 && self.top <= 1.0) {
            return Err(ParamError::new("top", format!("must be in (0, 1] (got {})", self.top)));
        }
        if !(self.bottom > 0.0 && self.bottom <= self.top) {
            return Err(ParamError::new(
                "bottom",
                format!("must be in (0, top = {}] (got {})", self.top, self.bottom),
            ));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct FengParams {
    /// `max_p` is divided by `a` when the average falls below `min_th`.
    pub a: f64,
    /// `max_p` is multiplied by `b` when the average rises above `max_th`.
    pub b: f64,
    /// Lower bound of `max_p` (the upper bound is 1).
    pub bottom: f64,
    /// Jou–Tan–Baras dynamic thresholds, if on.
    pub dynamic: Option<DynThresholds>,
}

impl Default for FengParams {
    fn default() -> FengParams {
        FengParams {
            a: 3.0,
            b: 2.0,
            bottom: 0.0001,
            dynamic: None,
        }
    }
}

impl FengParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.a.is_finite() && self.a > 1.0) {
            return Err(ParamError::new("a", format!("must be greater than 1 (got {})", self.a)));
        }
        if !(self.b.is_finite() && self.b > 1.0) {
            return Err(ParamError::new("b", format!("must be greater than 1 (got {})", self.b)));
        }
        if !(self.bottom > 0.0 && self.bottom <= 1.0) {
            return Err(ParamError::new(
                "bottom",
                format!("must be in (0, 1] (got {})", self.bottom),
            ));
        }
        match &self.dynamic {
            Some(d) => d.validate(),
            None => Ok(()),
        }
    }
}

/// Jou–Tan–Baras dynamic thresholds (the `dynamic_thresholds` option).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DynThresholds {
    pub p_low: f64,
    pub p_high: f64,
    /// EWMA weight of `P_d`.
    pub w_p: f64,
    pub interval: Duration,
    /// Relative step of `min_th`.
    pub gamma: f64,
}

impl Default for DynThresholds {
    fn default() -> DynThresholds {
        DynThresholds {
            p_low: 0.01,
            p_high: 0.02,
            w_p: 0.002,
            interval: Duration::from_millis(500),
            gamma: 0.05,
        }
    }
}

impl DynThresholds {
    pub fn validate(&self) -> Result<(), ParamError> {
        if !(self.p_low >= 0.0 && self.p_low < self.p_high && self.p_high <= 1.0) {
            return Err(ParamError::new(
                "dynamic_thresholds.p_high",
                format!(
                    "need 0 <= p_low < p_high <= 1 (got p_low = {}, p_high = {})",
                    self.p_low, self.p_high
                ),
            ));
        }
        if !(self.w_p > 0.0 && self.w_p <= 1.0) {
            return Err(ParamError::new(
                "dynamic_thresholds.w_p",
                format!("must be in (0, 1] (got {})", self.w_p),
            ));
        }
        if self.interval == Duration::ZERO {
            return Err(ParamError::new(
                "dynamic_thresholds.interval",
                "must be positive (got 0 s)",
            ));
        }
        if !(self.gamma > 0.0 && self.gamma < 1.0) {
            return Err(ParamError::new(
                "dynamic_thresholds.gamma",
                format!("must be in (0, 1) (got {})", self.gamma),
            ));
        }
        Ok(())
    }
}

/// Where the average stands relative to the thresholds, for Feng's rule.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FengStatus {
    Below,
    #[default]
    Between,
    Above,
}

/// Adaptive RED's target band for the average: 40% to 60% of the way from
/// `min_th` to `max_th`.
#[inline]
pub fn ared_target_band(min_th: f64, max_th: f64) -> (f64, f64) {
    let d = max_th - min_th;
    (min_th + 0.4 * d, min_th + 0.6 * d)
}

/// One Adaptive RED check: the new `max_p`, or `None` if it stays.
#[inline]
pub fn ared_step(cfg: &AredParams, max_p: f64, avg: f64, min_th: f64, max_th: f64) -> Option<f64> {
    let (lo, hi) = ared_target_band(min_th, max_th);
    if avg > hi && max_p <= cfg.top {
        Some(max_p + cfg.alpha.min(max_p / 4.0))
    } else if avg < lo && max_p >= cfg.bottom {
        Some(max_p * cfg.beta)
    } else {
        None
    }
}

/// Feng's rule at one update of the average: the new status and `max_p`.
#[inline]
pub fn feng_step(
    cfg: &FengParams,
    status: FengStatus,
    max_p: f64,
    avg: f64,
    min_th: f64,
    max_th: f64,
) -> (FengStatus, f64) {
    if avg < min_th && status != FengStatus::Below {
        (FengStatus::Below, (max_p / cfg.a).max(cfg.bottom))
    } else if avg > max_th && status != FengStatus::Above {
        (FengStatus::Above, (max_p * cfg.b).min(1.0))
    } else if min_th < avg && avg < max_th {
        (FengStatus::Between, max_p)
    } else {
        (status, max_p)
    }
}

/// One dynamic-thresholds step: the new `min_th`, kept in [`floor`,
/// `ceiling`] (`ceiling` is `limit - D`, `None` for an unlimited buffer).
/// The caller sets `max_th = min_th + D`.
#[inline]
pub fn dyn_thresholds_step(cfg: &DynThresholds, p_d: f64, min_th: f64, floor: f64, ceiling: Option<f64>) -> f64 {
    let moved = if p_d > cfg.p_high {
        min_th * (1.0 + cfg.gamma)
    } else if p_d < cfg.p_low {
        min_th * (1.0 - cfg.gamma)
    } else {
        min_th
    };
    let floored = moved.max(floor);
    match ceiling {
        Some(c) => floored.min(c),
        None => floored,
    }
}

#[cfg(test)]
mod test {
    use super::*;

    // Constants

    const TOL: f64 = 1e-12;

    // Helpers

    #[track_caller]
    fn assert_close(got: f64, want: f64) {
        assert!(
            (got - want).abs() <= TOL * want.abs().max(1.0),
            "got {got}, want {want}"
        );
    }

    #[track_caller]
    fn step(max_p: f64, avg: f64) -> Option<f64> {
        ared_step(&AredParams::default(), max_p, avg, 5.0, 15.0)
    }

    #[test]
    fn test_target_band_5_15_is_9_11_t10() {
        // T10: 5 + 0.4 * 10 = 9, 5 + 0.6 * 10 = 11.
        let (lo, hi) = ared_target_band(5.0, 15.0);
        assert_close(lo, 9.0);
        assert_close(hi, 11.0);
        // T10, Linux byte thresholds 30000/90000: [54000, 66000].
        let (lo, hi) = ared_target_band(30_000.0, 90_000.0);
        assert_close(lo, 54_000.0);
        assert_close(hi, 66_000.0);
    }

    #[test]
    fn test_ared_above_band_increases_t9() {
        // T9: 0.1 + min(0.01, 0.025) = 0.11; 0.02 + min(0.01, 0.005) = 0.025.
        assert_close(step(0.1, 12.0).unwrap(), 0.11);
        assert_close(step(0.02, 12.0).unwrap(), 0.025);
        // 0.495 <= top: 0.495 + 0.01 = 0.505 (the ns-2 overshoot).
        assert_close(step(0.495, 12.0).unwrap(), 0.505);
        // Inclusive bound (Linux, and aqmlab): 0.5 -> 0.51.
        assert_close(step(0.5, 12.0).unwrap(), 0.51);
        assert_eq!(step(0.51, 12.0), None);
    }

    #[test]
    fn test_ared_below_band_decreases_t9() {
        // T9: 0.1 * 0.9 = 0.09.
        assert_close(step(0.1, 8.0).unwrap(), 0.09);
        // Inclusive bottom: 0.01 -> 0.009; below bottom it stays.
        assert_close(step(0.01, 8.0).unwrap(), 0.009);
        assert_eq!(step(0.009, 8.0), None);
    }

    #[test]
    fn test_ared_inside_band_keeps_max_p() {
        // The band is closed: avg exactly 9 or 11 changes nothing.
        assert_eq!(step(0.1, 9.0), None);
        assert_eq!(step(0.1, 10.0), None);
        assert_eq!(step(0.1, 11.0), None);
    }

    #[test]
    fn test_feng_crossings_scale_max_p_once_t12() {
        let cfg = FengParams::default();
        // T12: from Between, avg below min_th: 0.02 / 3 = 0.0066667.
        let (s, p) = feng_step(&cfg, FengStatus::Between, 0.02, 2.0, 5.0, 15.0);
        assert_eq!(s, FengStatus::Below);
        assert_close(p, 0.02 / 3.0);
        // Still below: no second division.
        assert_eq!(feng_step(&cfg, s, p, 1.0, 5.0, 15.0), (FengStatus::Below, p));
        // T12: from Between, avg above max_th: 0.02 * 2 = 0.04.
        let (s, p) = feng_step(&cfg, FengStatus::Between, 0.02, 16.0, 5.0, 15.0);
        assert_eq!(s, FengStatus::Above);
        assert_close(p, 0.04);
        assert_eq!(feng_step(&cfg, s, p, 20.0, 5.0, 15.0), (FengStatus::Above, p));
        // Back between: status resets, max_p stays.
        assert_eq!(feng_step(&cfg, s, p, 10.0, 5.0, 15.0), (FengStatus::Between, p));
        // On a threshold exactly: nothing changes.
        assert_eq!(
            feng_step(&cfg, FengStatus::Above, p, 5.0, 5.0, 15.0),
            (FengStatus::Above, p)
        );
    }

    #[test]
    fn test_feng_max_p_kept_in_bottom_to_one() {
        let cfg = FengParams::default();
        // 0.6 * 2 = 1.2 capped at 1; 0.0002 / 3 floored at 0.0001.
        let (_, p) = feng_step(&cfg, FengStatus::Between, 0.6, 16.0, 5.0, 15.0);
        assert_eq!(p, 1.0);
        let (_, p) = feng_step(&cfg, FengStatus::Between, 0.0002, 1.0, 5.0, 15.0);
        assert_eq!(p, 0.0001);
    }

    #[test]
    fn test_dyn_step_moves_min_th_by_gamma() {
        let cfg = DynThresholds::default();
        // P_d 0.03 > 0.02: 10 * 1.05 = 10.5; P_d 0.005 < 0.01: 10 * 0.95 = 9.5.
        assert_close(dyn_thresholds_step(&cfg, 0.03, 10.0, 1.0, Some(80.0)), 10.5);
        assert_close(dyn_thresholds_step(&cfg, 0.005, 10.0, 1.0, Some(80.0)), 9.5);
        // In [p_low, p_high] (ends included): unchanged.
        assert_eq!(dyn_thresholds_step(&cfg, 0.01, 10.0, 1.0, None), 10.0);
        assert_eq!(dyn_thresholds_step(&cfg, 0.02, 10.0, 1.0, None), 10.0);
    }

    #[test]
    fn test_dyn_step_clamps_to_floor_and_ceiling() {
        let cfg = DynThresholds::default();
        // 1.02 * 0.95 = 0.969 < 1 packet: floored at 1.
        assert_eq!(dyn_thresholds_step(&cfg, 0.0, 1.02, 1.0, None), 1.0);
        // 79 * 1.05 = 82.95 > limit - D = 80: capped.
        assert_eq!(dyn_thresholds_step(&cfg, 0.5, 79.0, 1.0, Some(80.0)), 80.0);
    }

    #[test]
    fn test_invalid_adaptation_params_rejected() {
        let bad_beta = AredParams {
            beta: 1.0,
            ..AredParams::default()
        };
        assert_eq!(bad_beta.validate().unwrap_err().param, "beta");
        let bad_bottom = AredParams {
            bottom: 0.6,
            ..AredParams::default()
        };
        assert_eq!(bad_bottom.validate().unwrap_err().param, "bottom");
        let bad_a = FengParams {
            a: 1.0,
            ..FengParams::default()
        };
        assert_eq!(bad_a.validate().unwrap_err().param, "a");
        let bad_band = FengParams {
            dynamic: Some(DynThresholds {
                p_low: 0.02,
                p_high: 0.01,
                ..DynThresholds::default()
            }),
            ..FengParams::default()
        };
        assert_eq!(bad_band.validate().unwrap_err().param, "dynamic_thresholds.p_high");
    }
}
