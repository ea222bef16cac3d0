//! CUBIC's window law: I. Rhee, L. Xu, S. Ha, A. Zimmermann, L. Eggert and
//! R. Scheffenegger, "CUBIC for Fast and Long-Distance Networks", RFC 9438,
//! IETF, August 2023 (Section 4: the window increase function, the
//! Reno-friendly region, the multiplicative decrease and fast convergence),
//! with the constants of Linux's `net/ipv4/tcp_cubic.c`.
//!
//! Heads up: read RFC 9438 Section 4 first. This file is the law alone: a
//! pure function of the time since the congestion epoch began and of the
//! state a loss leaves. The module that runs it per acknowledgement as
//! Linux does, with HyStart, is [`super::cubic_cc`]; it takes K from here
//! and keeps the rest of Linux's arithmetic (the bounds below are Linux's
//! there).
//!
//! Windows are in packets (f64), times in seconds (f64), as the RFC states
//! its equations:
//!
//! ```text
//! W_cubic(t) = C (t - K)^3 + W_max                               (RFC eq. 1)
//! K          = cbrt((W_max - cwnd_epoch) / C)                    (RFC eq. 2)
//! W_est(t)   = W_est + alpha_cubic (segments acked) / cwnd,
//!              which grows by alpha_cubic per round trip          (RFC eq. 4)
//! alpha_cubic = 3 (1 - beta_cubic) / (1 + beta_cubic)
//! target     = W_cubic(t + RTT), kept within [cwnd, 1.5 cwnd]    (Section 4.2)
//! on a loss: ssthresh = cwnd_epoch = max(cwnd beta_cubic, 2),
//!            W_max = cwnd, or cwnd (1 + beta_cubic) / 2 under fast
//!            convergence when cwnd < the previous W_max           (Sections 4.6, 4.7)
//! ```
//!
//! Parameters, with Linux's values as defaults:
//! - `c` (0.4; Linux's `bic_scale` 41 gives 41 x 10 / 1024 = 0.4004): the
//!   scaling constant of eq. 1, in packets per second cubed; > 0.
//! - `beta_cubic` (0.7; Linux's 717/1024 = 0.7002): the multiplicative
//!   decrease factor, in (0, 1).
//! - `fast_convergence` (true, Linux and RFC).
//! - `reno_friendly` (true, Linux's `tcp_friendliness`, RFC Section 4.3).
//!
//! Choices between variants: the RFC's real arithmetic rather than Linux's
//! fixed point (its cube root table, its 2^-10 second clock); the round
//! trip added to `t` for the target is the caller's (Linux uses the
//! minimum RTT, `delay_min`); Linux's limit of one increase per two ACKs
//! is the target's 1.5 cwnd bound of the RFC.

/// CUBIC's constants (see the module notes for meaning and defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicParams {
    pub c: f64,
    pub beta_cubic: f64,
    pub fast_convergence: bool,
    pub reno_friendly: bool,
}

impl Default for CubicParams {
    fn default() -> CubicParams {
        CubicParams {
            c: 0.4,
            beta_cubic: 0.7,
            fast_convergence: true,
            reno_friendly: true,
        }
    }
}

impl CubicParams {
    pub fn validate(&self) -> Result<(), String> {
        if !(self.c.is_finite() && self.c > 0.0) {
            return Err(format!("c must be a positive number (got {})", self.c));
        }
        if !(self.beta_cubic > 0.0 && self.beta_cubic < 1.0) {
            return Err(format!("beta_cubic must be in (0, 1) (got {})", self.beta_cubic));
        }
        Ok(())
    }

    /// alpha_cubic of the Reno-friendly estimate (RFC 9438 Section 4.3):
    /// the additive increase per round trip that gives Reno's average
    /// window under the same loss rate, 3 (1 - beta) / (1 + beta).
    pub fn alpha_cubic(&self) -> f64 {
        3.0 * (1.0 - self.beta_cubic) / (1.0 + self.beta_cubic)
    }
}

/// What a congestion epoch starts from: the window before the last loss
/// (`w_max`) and the window after its reduction (`cwnd_epoch`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CubicEpoch {
    pub w_max: f64,
    pub cwnd_epoch: f64,
    /// The time from the epoch's start at which W_cubic reaches `w_max`.
    pub k: f64,
}

/// A loss at window `cwnd`, the previous epoch's `w_max` being
/// `last_w_max` (0 for none): the new epoch (RFC 9438 Sections 4.6 and
/// 4.7). `ssthresh` is the epoch's `cwnd_epoch`.
pub fn on_loss(p: &CubicParams, cwnd: f64, last_w_max: f64) -> CubicEpoch {
    let w_max = if p.fast_convergence && cwnd < last_w_max {
        cwnd * (1.0 + p.beta_cubic) / 2.0
    } else {
        cwnd
    };
    let cwnd_epoch = (cwnd * p.beta_cubic).max(2.0);
    CubicEpoch {
        w_max,
        cwnd_epoch,
        k: k_of(p, w_max, cwnd_epoch),
    }
}

/// K of eq. 2; 0 when the epoch starts at or above `w_max` (as after
/// fast convergence can happen for small windows, or Linux's epoch that
/// starts from slow start).
pub fn k_of(p: &CubicParams, w_max: f64, cwnd_epoch: f64) -> f64 {
    ((w_max - cwnd_epoch).max(0.0) / p.c).cbrt()
}

/// W_cubic(t) of eq. 1, `t` seconds after the epoch began.
pub fn w_cubic(p: &CubicParams, e: &CubicEpoch, t: f64) -> f64 {
    p.c * (t - e.k).powi(3) + e.w_max
}

/// The Reno-friendly estimate after `rtts` round trips of the epoch
/// (eq. 4 summed over the ACKs of those round trips).
pub fn w_est(p: &CubicParams, e: &CubicEpoch, rtts: f64) -> f64 {
    e.cwnd_epoch + p.alpha_cubic() * rtts
}

/// The window CUBIC aims at one round trip ahead, `t` seconds into the
/// epoch with round trip `rtt` and window `cwnd` now (Section 4.2), or the
/// Reno-friendly estimate where that is larger (Section 4.3). The sender
/// grows cwnd by `(target - cwnd) / cwnd` per acknowledged packet.
pub fn target(p: &CubicParams, e: &CubicEpoch, t: f64, rtt: f64, cwnd: f64) -> f64 {
    let cubic = w_cubic(p, e, t + rtt).clamp(cwnd, 1.5 * cwnd);
    if p.reno_friendly {
        let est = w_est(p, e, t / rtt);
        if est > cubic {
            return est;
        }
    }
    cubic
}

#[cfg(test)]
mod test {
    use super::*;

    // Helpers

    #[track_caller]
    fn close(a: f64, b: f64) {
        assert!((a - b).abs() < 1e-9 * b.abs().max(1.0), "{a} != {b}");
    }

    fn linux() -> CubicParams {
        CubicParams::default()
    }

    #[test]
    fn test_loss_at_100_sets_k_to_the_cube_root_of_75() {
        // W_max = 100, cwnd_epoch = 70: K = cbrt(30 / 0.4) = cbrt(75).
        let e = on_loss(&linux(), 100.0, 0.0);
        close(e.w_max, 100.0);
        close(e.cwnd_epoch, 70.0);
        close(e.k, 75f64.cbrt());
        close(e.k, 4.217163326508746);
    }

    #[test]
    fn test_window_curve_starts_at_the_reduced_window_and_plateaus_at_w_max() {
        let p = linux();
        let e = on_loss(&p, 100.0, 0.0);
        // Eq. 1 at t = 0 is the reduced window, at t = K the old maximum,
        // and it is symmetric about K: concave before, convex after.
        close(w_cubic(&p, &e, 0.0), 70.0);
        close(w_cubic(&p, &e, e.k), 100.0);
        close(w_cubic(&p, &e, e.k + 1.0) - 100.0, 100.0 - w_cubic(&p, &e, e.k - 1.0));
        close(w_cubic(&p, &e, e.k + 2.0), 100.0 + 0.4 * 8.0);
    }

    #[test]
    fn test_fast_convergence_releases_bandwidth_below_the_last_maximum() {
        // A loss at 80 after an epoch that had reached 100: W_max is
        // 80 (1 + 0.7) / 2 = 68, below the window at the loss.
        let e = on_loss(&linux(), 80.0, 100.0);
        close(e.w_max, 68.0);
        close(e.cwnd_epoch, 56.0);
        close(e.k, (12.0f64 / 0.4).cbrt());
        // Without it, W_max is the window at the loss.
        let p = CubicParams {
            fast_convergence: false,
            ..linux()
        };
        close(on_loss(&p, 80.0, 100.0).w_max, 80.0);
    }

    #[test]
    fn test_ssthresh_is_at_least_two_packets() {
        close(on_loss(&linux(), 2.0, 0.0).cwnd_epoch, 2.0);
    }

    #[test]
    fn test_alpha_cubic_gives_reno_its_average_window() {
        // 3 (1 - 0.7) / (1 + 0.7) = 0.9 / 1.7; with beta 0.5 it is Reno's 1.
        close(linux().alpha_cubic(), 0.9 / 1.7);
        let p = CubicParams {
            beta_cubic: 0.5,
            ..linux()
        };
        close(p.alpha_cubic(), 1.0);
    }

    #[test]
    fn test_short_round_trips_are_in_the_reno_friendly_region() {
        // W_max = 10 at a 10 ms round trip: K = cbrt(3 / 0.4) = 1.957 s.
        // After 1 s (100 round trips) eq. 4 gives 7 + 100 x 0.9 / 1.7 =
        // 59.94 while eq. 1 one RTT ahead gives 0.4 (1.01 - 1.957)^3 + 10
        // = 9.66: the target is the estimate.
        let p = linux();
        let e = on_loss(&p, 10.0, 0.0);
        close(w_est(&p, &e, 100.0), 7.0 + 100.0 * 0.9 / 1.7);
        let t = target(&p, &e, 1.0, 0.01, 20.0);
        close(t, 7.0 + 100.0 * 0.9 / 1.7);
        // Without the Reno-friendly region: eq. 1, held at cwnd.
        let q = CubicParams {
            reno_friendly: false,
            ..linux()
        };
        close(target(&q, &e, 1.0, 0.01, 20.0), 20.0);
    }

    #[test]
    fn test_target_is_bounded_by_half_a_window_more_per_round_trip() {
        // Far past K, eq. 1 is huge; the target is at most 1.5 cwnd.
        let p = CubicParams {
            reno_friendly: false,
            ..linux()
        };
        let e = on_loss(&p, 100.0, 0.0);
        close(target(&p, &e, 30.0, 0.1, 200.0), 300.0);
        // One RTT ahead of t = K - 0.1 with an RTT of 0.1 s is K itself.
        close(target(&p, &e, e.k - 0.1, 0.1, 90.0), 100.0);
    }

    #[test]
    fn test_params_are_checked() {
        assert!(linux().validate().is_ok());
        assert!(CubicParams { c: 0.0, ..linux() }.validate().is_err());
        assert!(CubicParams {
            beta_cubic: 1.0,
            ..linux()
        }
        .validate()
        .is_err());
    }
}
