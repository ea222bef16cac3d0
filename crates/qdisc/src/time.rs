//! Simulated time: an integer count of nanoseconds.
//!
//! There is no floating-point clock anywhere in aqmlab. `Time` is an instant
//! since the start of a run, `Duration` a span; both are `u64` nanoseconds,
//! which covers 584 years. Conversions to seconds as `f64` exist only for
//! reporting and for the algorithms whose papers state their rules in real
//! numbers (for example RED's idle-time decay).

use std::fmt;
use std::ops::{Add, AddAssign, Sub};

/// An instant of simulated time, in nanoseconds since the start of the run.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Time(pub u64);

/// A span of simulated time, in nanoseconds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Duration(pub u64);

pub const NANOS_PER_SEC: u64 = 1_000_000_000;

impl Time {
    pub const ZERO: Time = Time(0);
    pub const MAX: Time = Time(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Time {
        Time(ns)
    }
    pub const fn from_millis(ms: u64) -> Time {
        Time(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Time {
        Time(s * NANOS_PER_SEC)
    }
    pub const fn nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
    /// The span from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_since(self, earlier: Time) -> Duration {
        Duration(self.0.saturating_sub(earlier.0))
    }
}

impl Duration {
    pub const ZERO: Duration = Duration(0);
    pub const MAX: Duration = Duration(u64::MAX);

    pub const fn from_nanos(ns: u64) -> Duration {
        Duration(ns)
    }
    pub const fn from_micros(us: u64) -> Duration {
        Duration(us * 1_000)
    }
    pub const fn from_millis(ms: u64) -> Duration {
        Duration(ms * 1_000_000)
    }
    pub const fn from_secs(s: u64) -> Duration {
        Duration(s * NANOS_PER_SEC)
    }
    /// Rounds to the nearest nanosecond; negative and NaN inputs give zero.
    pub fn from_secs_f64(s: f64) -> Duration {
        if s.is_nan() || s <= 0.0 {
            Duration(0)
        } else {
            Duration((s * NANOS_PER_SEC as f64).round() as u64)
        }
    }
    pub const fn nanos(self) -> u64 {
        self.0
    }
    pub fn as_secs_f64(self) -> f64 {
        self.0 as f64 / NANOS_PER_SEC as f64
    }
}

impl Add<Duration> for Time {
    type Output = Time;
    /// Saturates at `Time::MAX` ("never"): a huge drawn gap or delay must not
    /// wrap around to the past.
    fn add(self, d: Duration) -> Time {
        Time(self.0.saturating_add(d.0))
    }
}

impl AddAssign<Duration> for Time {
    fn add_assign(&mut self, d: Duration) {
        self.0 = self.0.saturating_add(d.0);
    }
}

impl Sub<Time> for Time {
    type Output = Duration;
    /// Panics (in debug builds) if `rhs` is later: use `saturating_since`
    /// where that can happen.
    fn sub(self, rhs: Time) -> Duration {
        Duration(self.0 - rhs.0)
    }
}

impl Add for Duration {
    type Output = Duration;
    fn add(self, d: Duration) -> Duration {
        Duration(self.0.saturating_add(d.0))
    }
}

impl fmt::Display for Time {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{:.9}s", self.as_secs_f64())
    }
}

/// Time to serialise `size_bytes` on a link of `rate_bps`, rounded up to the
/// next nanosecond so that a link never transmits faster than its rate.
pub fn transmission_time(size_bytes: u32, rate_bps: u64) -> Duration {
    backlog_drain_time(size_bytes as u64, rate_bps)
}

/// Time to serialise `bytes` (a whole backlog) on a link of `rate_bps`,
/// rounded up as [`transmission_time`] is; `Duration::MAX` if it does not
/// fit in 584 years.
pub fn backlog_drain_time(bytes: u64, rate_bps: u64) -> Duration {
    let bits = bytes as u128 * 8;
    let ns = (bits * NANOS_PER_SEC as u128).div_ceil(rate_bps as u128);
    Duration(u64::try_from(ns).unwrap_or(u64::MAX))
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_transmission_time_exact_and_rounded_up() {
        // 573 B at 10 Mb/s: 4584 bits / 1e7 = 458.4 us exactly.
        assert_eq!(transmission_time(573, 10_000_000), Duration(458_400));
        // 1 B at 3 b/s: 8/3 s = 2.666...s, rounded up.
        assert_eq!(transmission_time(1, 3), Duration(2_666_666_667));
    }

    #[test]
    fn test_time_addition_saturates_instead_of_wrapping() {
        assert_eq!(Time(u64::MAX - 1) + Duration(5), Time::MAX);
        assert_eq!(Time(3) + Duration::from_secs_f64(1e30), Time::MAX);
    }

    #[test]
    fn test_duration_from_secs_f64_rounds_to_nearest() {
        assert_eq!(Duration::from_secs_f64(0.0015), Duration(1_500_000));
        assert_eq!(Duration::from_secs_f64(-1.0), Duration(0));
    }
}
