//! What is measured at queues and flows, over the measurement window.
//!
//! Definitions: counters count events whose time is inside [warmup,
//! duration]; the backlog is integrated over time (a time average, not a
//! per-arrival average); the sojourn time of a packet is from its arrival at
//! the queue to the start of its transmission; a loss run at a queue starts
//! when an arrival causes a drop after an accepted arrival and ends at the
//! next accepted arrival; runs still open at the end are discarded. Monitors
//! also keep whole-run totals, from time zero, for the conservation identity
//! arrivals = departures + drops + backlog.
//!
//! What the monitors measure is reported through the types of the run's
//! summary (`summary.rs`); a queue's measures are built by its monitor
//! ([`QueueMonitor::summary`]), a flow's by its counters
//! ([`FlowStats::measures`]).

use aqmlab_qdisc::time::NANOS_PER_SEC;
use aqmlab_qdisc::{DropReason, Duration, Time};

mod histogram;
mod summary;

pub use histogram::{Bin, DelayHistogram};
pub use summary::*;

/// Count, mean, standard deviation, minimum and maximum of durations,
/// kept exactly: the sums of the samples and of their squares in integer
/// nanoseconds. Per sample it costs integer adds and one multiplication
/// (no division, unlike Welford's update), merging is exact, so a total
/// over classes or flows is the same as one pass over all the samples,
/// and the mean comes out correctly rounded whatever the number of samples.
/// (The sums fit in 128 bits for, e.g., 10^12 samples of an hour each.)
#[derive(Clone, Copy, Debug)]
pub struct DelayStats {
    pub n: u64,
    sum_ns: u128,
    sum_sq_ns2: u128,
    min_ns: u64,
    max_ns: u64,
}

impl Default for DelayStats {
    fn default() -> Self {
        DelayStats {
            n: 0,
            sum_ns: 0,
            sum_sq_ns2: 0,
            min_ns: u64::MAX,
            max_ns: 0,
        }
    }
}

impl DelayStats {
    #[inline]
    pub fn push(&mut self, d: Duration) {
        let x = d.0;
        self.n += 1;
        self.sum_ns += x as u128;
        self.sum_sq_ns2 += x as u128 * x as u128;
        self.min_ns = self.min_ns.min(x);
        self.max_ns = self.max_ns.max(x);
    }

    pub fn merge(&mut self, o: &DelayStats) {
        self.n += o.n;
        self.sum_ns += o.sum_ns;
        self.sum_sq_ns2 += o.sum_sq_ns2;
        self.min_ns = self.min_ns.min(o.min_ns);
        self.max_ns = self.max_ns.max(o.max_ns);
    }

    /// The mean in seconds, or NaN (reported as null) over no samples.
    pub fn mean(&self) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        self.sum_ns as f64 / self.n as f64 / NANOS_PER_SEC as f64
    }

    /// The smallest sample in seconds, or NaN over no samples.
    pub fn min(&self) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        Duration(self.min_ns).as_secs_f64()
    }

    /// The largest sample in seconds, or NaN over no samples.
    pub fn max(&self) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        Duration(self.max_ns).as_secs_f64()
    }

    /// The population standard deviation in seconds, or NaN over no
    /// samples: sqrt(n S2 - S1^2) / n, with n S2 - S1^2 computed exactly
    /// (it is zero for equal samples), or in floating point in the
    /// unlikely case it does not fit in 128 bits.
    pub fn std(&self) -> f64 {
        if self.n == 0 {
            return f64::NAN;
        }
        let n = self.n as u128;
        let exact = n
            .checked_mul(self.sum_sq_ns2)
            .zip(self.sum_ns.checked_mul(self.sum_ns))
            .map(|(a, b)| a - b);
        let spread_ns = match exact {
            Some(v) => (v as f64).sqrt() / self.n as f64,
            None => {
                let mean = self.sum_ns as f64 / self.n as f64;
                (self.sum_sq_ns2 as f64 / self.n as f64 - mean * mean).max(0.0).sqrt()
            }
        };
        spread_ns / NANOS_PER_SEC as f64
    }
}

/// `a / b`, or NaN when b is zero.
pub fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 {
        f64::NAN
    } else {
        a / b
    }
}

/// Measurement window [start, end].
#[derive(Clone, Copy, Debug)]
pub struct Window {
    pub start: Time,
    pub end: Time,
}

impl Window {
    #[inline]
    pub fn contains(&self, t: Time) -> bool {
        t >= self.start
    }

    pub fn secs(&self) -> f64 {
        (self.end - self.start).as_secs_f64()
    }

    /// Nanoseconds of [from, to] inside the window.
    #[inline]
    pub fn overlap_ns(&self, from: Time, to: Time) -> u64 {
        let a = from.max(self.start);
        let b = to.min(self.end);
        b.0.saturating_sub(a.0)
    }
}

#[derive(Clone, Debug, Default)]
struct ClassStats {
    arrivals: u64,
    drops: u64,
    sojourn: DelayStats,
}

/// Counts loss runs as the module documentation defines them.
#[derive(Clone, Debug, Default)]
pub struct LossRuns {
    run: u64,
    /// `hist[n - 1]`: runs of length n that ended inside the window.
    pub hist: Vec<u64>,
}

impl LossRuns {
    /// An arrival that caused a drop (itself or another packet).
    #[inline]
    pub fn dropped(&mut self) {
        self.run += 1;
    }

    /// An accepted arrival; closes an open run, counting it if `count`.
    #[inline]
    pub fn accepted(&mut self, count: bool) {
        if self.run > 0 {
            if count {
                let n = self.run as usize;
                if self.hist.len() < n {
                    self.hist.resize(n, 0);
                }
                self.hist[n - 1] += 1;
            }
            self.run = 0;
        }
    }

    /// Mean and population variance of the run length.
    pub fn moments(&self) -> (f64, f64) {
        let runs: u64 = self.hist.iter().sum();
        if runs == 0 {
            return (f64::NAN, f64::NAN);
        }
        let (mut s1, mut s2) = (0.0, 0.0);
        for (i, &c) in self.hist.iter().enumerate() {
            let n = (i + 1) as f64;
            s1 += n * c as f64;
            s2 += n * n * c as f64;
        }
        let mean = s1 / runs as f64;
        (mean, s2 / runs as f64 - mean * mean)
    }
}

/// Whole-run counters, from time zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Totals {
    pub arrivals: u64,
    pub departures: u64,
    pub drops: u64,
}

#[derive(Clone, Debug)]
pub struct QueueMonitor {
    window: Window,
    arrivals: u64,
    departures: u64,
    drops: [u64; 6],
    marks: u64,
    // Backlog integral since the window opened, exact in packet-nanoseconds.
    last_change: Time,
    last_pkts: u64,
    area: u128,
    area2: u128,
    busy_ns: u64,
    runs: LossRuns,
    classes: Vec<ClassStats>,
    /// Sojourn times of all classes, for percentiles.
    sojourn_hist: DelayHistogram,
    pub totals: Totals,
    /// Keep only `totals`: for a queue that is never reported.
    light: bool,
}

impl QueueMonitor {
    pub fn new(window: Window, n_classes: usize) -> QueueMonitor {
        QueueMonitor {
            window,
            arrivals: 0,
            departures: 0,
            drops: [0; 6],
            marks: 0,
            last_change: Time::ZERO,
            last_pkts: 0,
            area: 0,
            area2: 0,
            busy_ns: 0,
            runs: LossRuns::default(),
            classes: vec![ClassStats::default(); n_classes],
            sojourn_hist: DelayHistogram::default(),
            totals: Totals::default(),
            light: false,
        }
    }

    /// A monitor that keeps only the run totals (for conservation checks
    /// and tracing), for a queue whose summary is never asked for: per
    /// packet it costs a counter.
    pub fn totals_only(window: Window) -> QueueMonitor {
        QueueMonitor {
            light: true,
            ..QueueMonitor::new(window, 0)
        }
    }

    /// An arrival and what happened to it: `dropped` if it was dropped,
    /// `caused_drop` if it or any other packet was dropped because of it.
    #[inline]
    pub fn arrival(&mut self, now: Time, class: u8, dropped: bool, caused_drop: bool) {
        self.totals.arrivals += 1;
        if self.light {
            return;
        }
        let inside = self.window.contains(now);
        if inside {
            self.arrivals += 1;
            let c = &mut self.classes[class as usize];
            c.arrivals += 1;
            c.drops += dropped as u64;
        }
        if caused_drop {
            if inside {
                self.runs.dropped();
            }
        } else {
            self.runs.accepted(inside);
        }
    }

    /// A packet dropped, whether the arrival or one already queued.
    #[inline]
    pub fn drop(&mut self, now: Time, class: u8, reason: DropReason, queued: bool) {
        self.totals.drops += 1;
        if self.light {
            return;
        }
        if self.window.contains(now) {
            self.drops[reason.index()] += 1;
            if queued {
                // An arrival's own drop was counted with the arrival.
                self.classes[class as usize].drops += 1;
            }
        }
    }

    #[inline]
    pub fn mark(&mut self, now: Time) {
        if !self.light && self.window.contains(now) {
            self.marks += 1;
        }
    }

    /// A packet leaves the queue to be transmitted, until `tx_end`. The
    /// link's busy time inside the window is counted here, in full.
    #[inline]
    pub fn departure(&mut self, now: Time, class: u8, enqueued_at: Time, tx_end: Time) {
        self.totals.departures += 1;
        if self.light {
            return;
        }
        self.busy_ns += self.window.overlap_ns(now, tx_end);
        if self.window.contains(now) {
            self.departures += 1;
            let d = now - enqueued_at;
            self.classes[class as usize].sojourn.push(d);
            self.sojourn_hist.push(d);
        }
    }

    /// The backlog is now `pkts`.
    #[inline]
    pub fn backlog(&mut self, now: Time, pkts: u32) {
        if self.light {
            return;
        }
        let dt = self.window.overlap_ns(self.last_change, now) as u128;
        let q = self.last_pkts as u128;
        self.area += q * dt;
        self.area2 += q * q * dt;
        self.last_change = now;
        self.last_pkts = pkts as u64;
    }

    /// Closes the backlog integrals at the end of the run.
    pub fn finish(&mut self, end: Time) {
        let q = self.last_pkts as u32;
        self.backlog(end, q);
    }

    pub fn drops_total(&self) -> u64 {
        self.drops.iter().sum()
    }

    /// What was measured in the window, with the classes named by
    /// `classes` (those that had an arrival or a drop).
    pub fn summary(&self, classes: &[String]) -> QueueMeasures {
        debug_assert!(!self.light, "a totals-only monitor has no summary");
        let w_ns = (self.window.end - self.window.start).0 as f64;
        let drops = self.drops_total();
        let mean = self.area as f64 / w_ns;
        let var = self.area2 as f64 / w_ns - mean * mean;
        let (run_mean, run_var) = self.runs.moments();
        let mut sojourn = DelayStats::default();
        self.classes.iter().for_each(|c| sojourn.merge(&c.sojourn));
        let hist = self
            .runs
            .hist
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &c)| ((i + 1).to_string(), c))
            .collect();
        let by_class = self
            .classes
            .iter()
            .zip(classes)
            .filter(|(c, _)| c.arrivals > 0 || c.drops > 0)
            .map(|(c, name)| {
                let class = ClassSummary {
                    arrivals: c.arrivals,
                    drops: c.drops,
                    loss_rate: ratio(c.drops as f64, c.arrivals as f64),
                    qdelay_mean_s: c.sojourn.mean(),
                    qdelay_std_s: c.sojourn.std(),
                    qdelay_max_s: c.sojourn.max(),
                };
                (name.clone(), class)
            })
            .collect();
        let by_reason = |r: DropReason| self.drops[r.index()];
        QueueMeasures {
            arrivals: self.arrivals,
            departures: self.departures,
            drops,
            drops_overflow: by_reason(DropReason::Overflow),
            drops_early: by_reason(DropReason::Early),
            drops_forced: by_reason(DropReason::Forced),
            drops_expired: by_reason(DropReason::Expired),
            drops_head: by_reason(DropReason::Head),
            drops_penalty: by_reason(DropReason::Penalty),
            marks: self.marks,
            loss_rate: ratio(drops as f64, self.arrivals as f64),
            qdelay_mean_s: sojourn.mean(),
            qdelay_std_s: sojourn.std(),
            qdelay_max_s: sojourn.max(),
            qdelay_p50_s: self.sojourn_hist.percentile(0.5),
            qdelay_p95_s: self.sojourn_hist.percentile(0.95),
            qdelay_p99_s: self.sojourn_hist.percentile(0.99),
            qlen_mean_pkts: mean,
            qlen_var_pkts: var.max(0.0),
            utilization: self.busy_ns as f64 / w_ns,
            consecutive_loss: LossRunSummary {
                mean: run_mean,
                var: run_var,
                hist,
            },
            by_class,
        }
    }

    /// The whole-run counters, with the discipline's backlog now.
    pub fn run_totals(&self, backlog_pkts: u32) -> RunTotals {
        let t = self.totals;
        RunTotals {
            arrivals: t.arrivals,
            departures: t.departures,
            drops: t.drops,
            backlog_pkts,
        }
    }
}

/// Jain's fairness index (Jain, Chiu, Hawe, DEC TR-301, 1984):
/// (sum x)^2 / (n sum x^2), from 1/n (one flow gets everything) to 1
/// (equal shares). NaN for no flows or all zero.
pub fn jain_index(xs: &[f64]) -> f64 {
    let n = xs.len() as f64;
    let sum: f64 = xs.iter().sum();
    let sq: f64 = xs.iter().map(|x| x * x).sum();
    ratio(sum * sum, n * sq)
}

/// Per-flow counters at the sender and receiver.
#[derive(Clone, Debug, Default)]
pub struct FlowStats {
    pub sent_pkts: u64,
    pub sent_bytes: u64,
    pub delivered_pkts: u64,
    pub delivered_bytes: u64,
    /// The part of `delivered_bytes` that was web or HTTP/1.1 requests
    /// (client to server): goodput counts the responses, what the user
    /// downloads, and reports requests apart.
    pub request_bytes: u64,
    pub drops: u64,
    pub delay: DelayStats,
}

impl FlowStats {
    /// Adds another flow's counts (a group's total).
    pub fn merge(&mut self, o: &FlowStats) {
        self.sent_pkts += o.sent_pkts;
        self.sent_bytes += o.sent_bytes;
        self.delivered_pkts += o.delivered_pkts;
        self.delivered_bytes += o.delivered_bytes;
        self.request_bytes += o.request_bytes;
        self.drops += o.drops;
        self.delay.merge(&o.delay);
    }

    /// Goodput (what was delivered less the requests) and throughput (what
    /// was sent) over a window of `window_s` seconds, in bits per second.
    pub fn rates_bps(&self, window_s: f64) -> (f64, f64) {
        (
            (self.delivered_bytes - self.request_bytes) as f64 * 8.0 / window_s,
            self.sent_bytes as f64 * 8.0 / window_s,
        )
    }

    /// The counts as a flow's row reports them, over a window of
    /// `window_s` seconds.
    pub fn measures(&self, window_s: f64) -> FlowMeasures {
        let (goodput_bps, throughput_bps) = self.rates_bps(window_s);
        FlowMeasures {
            sent: self.sent_pkts,
            delivered: self.delivered_pkts,
            drops: self.drops,
            goodput_bps,
            throughput_bps,
            loss_rate: ratio(self.drops as f64, self.sent_pkts as f64),
            delay_mean_s: self.delay.mean(),
            delay_std_s: self.delay.std(),
            delay_min_s: self.delay.min(),
            delay_max_s: self.delay.max(),
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    fn window() -> Window {
        Window {
            start: Time(0),
            end: Time(100),
        }
    }

    #[test]
    fn test_loss_runs_reference_sequence() {
        // A D D A D A A D D D A D (A accepted, D dropped) gives closed runs
        // 2, 1, 3 and an open run that is discarded.
        let mut r = LossRuns::default();
        for c in "ADDADAADDDAD".chars() {
            if c == 'D' {
                r.dropped()
            } else {
                r.accepted(true)
            }
        }
        assert_eq!(r.hist, vec![1, 1, 1]);
        let (mean, var) = r.moments();
        assert_eq!(mean, 2.0);
        assert!((var - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn test_jain_index_reference_vectors() {
        // Jain, Chiu, Hawe (DEC-TR-301, 1984): (sum x)^2 / (n sum x^2).
        assert!((jain_index(&[1.0, 2.0, 3.0, 4.0]) - 0.833_333_333).abs() < 1e-9);
        assert_eq!(jain_index(&[1.0, 1.0, 1.0, 1.0]), 1.0);
        assert_eq!(jain_index(&[10.0, 0.0, 0.0, 0.0]), 0.25);
        assert!(jain_index(&[]).is_nan());
    }

    #[test]
    fn test_delay_stats_exact_and_merge_equals_single_pass() {
        let ns = [1_000, 4_000, 2_500, 8_000, 3_000, 500];
        let mut all = DelayStats::default();
        ns.iter().for_each(|&x| all.push(Duration(x)));
        let (mut a, mut b) = (DelayStats::default(), DelayStats::default());
        ns[..2].iter().for_each(|&x| a.push(Duration(x)));
        ns[2..].iter().for_each(|&x| b.push(Duration(x)));
        a.merge(&b);
        assert_eq!(a.n, 6);
        assert_eq!(
            (a.mean(), a.std(), a.min(), a.max()),
            (all.mean(), all.std(), all.min(), all.max())
        );
        // By hand, in microseconds: sum 19, sum of squares 96.5, so
        // var = 96.5/6 - (19/6)^2 = 218/36.
        assert_eq!(all.mean(), 19e-6 / 6.0);
        assert!((all.std() - (218.0_f64 / 36.0).sqrt() * 1e-6).abs() < 1e-18);
        assert_eq!((all.min(), all.max()), (0.5e-6, 8e-6));
        // Equal samples have no spread at all, however many and however long.
        let mut same = DelayStats::default();
        (0..1000).for_each(|_| same.push(Duration(123_456_789_012)));
        assert_eq!((same.std(), same.mean()), (0.0, 123.456789012));
        // Past 128 bits (n S2 overflows) the floating-point fallback: 16
        // samples of x and 16 of 3x, x = 2^58 ns, have mean 2x and std x,
        // all exact in binary.
        let x = 1u64 << 58;
        let mut huge = DelayStats::default();
        (0..16).for_each(|_| huge.push(Duration(x)));
        (0..16).for_each(|_| huge.push(Duration(3 * x)));
        assert!((huge.n as u128).checked_mul(huge.sum_sq_ns2).is_none());
        assert_eq!((huge.mean(), huge.std()), (2.0 * x as f64 / 1e9, x as f64 / 1e9));
        let none = DelayStats::default();
        assert!(none.mean().is_nan() && none.std().is_nan() && none.min().is_nan() && none.max().is_nan());
    }

    #[test]
    fn test_backlog_time_average_and_variance() {
        // Backlog 0 on [0,10), 2 on [10,60), 1 on [60,100]: mean = (100 + 40)/100
        // = 1.4, E[q^2] = (200 + 40)/100 = 2.4, var = 2.4 - 1.96 = 0.44.
        let mut m = QueueMonitor::new(window(), 1);
        m.backlog(Time(10), 2);
        m.backlog(Time(60), 1);
        m.finish(Time(100));
        let s = m.summary(&["c".to_string()]);
        assert!((s.qlen_mean_pkts - 1.4).abs() < 1e-12);
        assert!((s.qlen_var_pkts - 0.44).abs() < 1e-12);
    }

    #[test]
    fn test_totals_only_monitor_counts_totals() {
        let mut m = QueueMonitor::totals_only(window());
        m.arrival(Time(10), 0, false, false);
        m.backlog(Time(10), 1);
        m.departure(Time(10), 0, Time(10), Time(20));
        m.arrival(Time(30), 0, true, true);
        m.drop(Time(30), 0, DropReason::Overflow, false);
        m.finish(Time(100));
        assert_eq!(
            m.totals,
            Totals {
                arrivals: 2,
                departures: 1,
                drops: 1
            }
        );
        assert_eq!(
            (m.arrivals, m.departures, m.busy_ns, m.area),
            (0, 0, 0, 0),
            "nothing else kept"
        );
    }

    #[test]
    fn test_window_clips_integrals_and_counts() {
        let w = Window {
            start: Time(50),
            end: Time(100),
        };
        let mut m = QueueMonitor::new(w, 1);
        m.arrival(Time(10), 0, false, false);
        m.backlog(Time(10), 4);
        m.departure(Time(40), 0, Time(10), Time(70));
        m.arrival(Time(60), 0, true, true);
        m.drop(Time(60), 0, DropReason::Overflow, false);
        m.finish(Time(100));
        let s = m.summary(&["c".to_string()]);
        assert_eq!((s.arrivals, s.departures, s.drops_overflow), (1, 0, 1));
        // 4 packets over the 50 ns window; busy from 50 to 70 of 50 ns.
        assert_eq!((s.qlen_mean_pkts, s.utilization), (4.0, 0.4));
        assert_eq!(
            m.totals,
            Totals {
                arrivals: 2,
                departures: 1,
                drops: 1
            }
        );
    }
}
