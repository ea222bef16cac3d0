//! A histogram of durations with log-spaced bins, for percentiles and
//! distributions of delays (latency CDFs) at a per-sample cost of a few
//! integer operations.
//!
//! The bins are those of an HDR histogram with 64 sub-bins per power of
//! two: durations below 64 ns have a bin each (exact); a duration x >= 64 ns
//! with 2^e <= x < 2^(e+1) falls into one of the 64 equal bins that split
//! [2^e, 2^(e+1)), each 2^(e-6) ns wide. A bin is at most 1/64 of its lower
//! edge wide, so a bin's midpoint is within 0.8% of any sample in it.
//! Percentiles are nearest-rank (the ceil(n p)-th smallest sample, as
//! [`TimesSummary`](super::TimesSummary) takes them) and reported as the
//! midpoint of that sample's bin, clamped to the smallest and largest
//! sample, which are kept exactly (and reported for the first and last
//! rank): a constant delay is reported exactly.

use aqmlab_qdisc::time::NANOS_PER_SEC;
use aqmlab_qdisc::Duration;

const SUB_BITS: u32 = 6;
const SUB: u64 = 1 << SUB_BITS;

/// The bin of `x` ns.
#[inline]
fn bin(x: u64) -> usize {
    if x < SUB {
        return x as usize;
    }
    let e = 63 - x.leading_zeros(); // 2^e <= x, e >= SUB_BITS
    let shift = e - SUB_BITS;
    let sub = (x >> shift) & (SUB - 1);
    ((shift as u64 + 1) * SUB + sub) as usize
}

/// The bin's lower edge and width in ns.
fn bin_range(i: usize) -> (u64, u64) {
    let i = i as u64;
    if i < SUB {
        return (i, 1);
    }
    let shift = i / SUB - 1;
    let sub = i % SUB;
    ((SUB + sub) << shift, 1 << shift)
}

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct DelayHistogram {
    /// `counts[i]`: samples in bin i; grown to the largest bin used.
    counts: Vec<u64>,
    n: u64,
    min_ns: u64,
    max_ns: u64,
}

/// One bin of a histogram that holds samples: its edges in seconds and how
/// many samples fell into [lower, upper).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Bin {
    pub lower_s: f64,
    pub upper_s: f64,
    pub count: u64,
}

impl DelayHistogram {
    #[inline]
    pub fn push(&mut self, d: Duration) {
        let x = d.0;
        let i = bin(x);
        if i >= self.counts.len() {
            self.counts.resize(i + 1, 0);
        }
        self.counts[i] += 1;
        if self.n == 0 {
            self.min_ns = x;
            self.max_ns = x;
        } else {
            self.min_ns = self.min_ns.min(x);
            self.max_ns = self.max_ns.max(x);
        }
        self.n += 1;
    }

    pub fn merge(&mut self, o: &DelayHistogram) {
        if o.n == 0 {
            return;
        }
        if self.counts.len() < o.counts.len() {
            self.counts.resize(o.counts.len(), 0);
        }
        for (a, b) in self.counts.iter_mut().zip(&o.counts) {
            *a += b;
        }
        if self.n == 0 {
            (self.min_ns, self.max_ns) = (o.min_ns, o.max_ns);
        } else {
            self.min_ns = self.min_ns.min(o.min_ns);
            self.max_ns = self.max_ns.max(o.max_ns);
        }
        self.n += o.n;
    }

    pub fn count(&self) -> u64 {
        self.n
    }

    /// The `p`-quantile (0 < p <= 1) in seconds, as the module documentation
    /// defines it, or `None` without samples.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        if self.n == 0 {
            return None;
        }
        let rank = ((self.n as f64 * p).ceil() as u64).clamp(1, self.n);
        let s = |ns: u64| ns as f64 / NANOS_PER_SEC as f64;
        // The smallest and the largest sample are known exactly.
        if rank == 1 {
            return Some(s(self.min_ns));
        }
        if rank == self.n {
            return Some(s(self.max_ns));
        }
        let mut seen = 0;
        for (i, &c) in self.counts.iter().enumerate() {
            seen += c;
            if seen >= rank {
                let (lower, width) = bin_range(i);
                // Twice the midpoint, to stay in integers: 2 lower + width.
                let mid2 = 2 * lower + width - 1;
                return Some(s((mid2 / 2).clamp(self.min_ns, self.max_ns)));
            }
        }
        unreachable!("the counts add up to n")
    }

    /// The bins that hold samples, shortest delays first.
    pub fn bins(&self) -> Vec<Bin> {
        let s = |ns: u64| ns as f64 / NANOS_PER_SEC as f64;
        self.counts
            .iter()
            .enumerate()
            .filter(|(_, &c)| c > 0)
            .map(|(i, &count)| {
                let (lower, width) = bin_range(i);
                Bin {
                    lower_s: s(lower),
                    upper_s: s(lower + width),
                    count,
                }
            })
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn test_bins_tile_the_line() {
        // Every bin starts where the previous one ends, and each value
        // falls into the bin whose range holds it.
        let mut end = 0;
        for i in 0..(SUB as usize * 40) {
            let (lower, width) = bin_range(i);
            assert_eq!(lower, end, "bin {i}");
            assert_eq!(bin(lower), i);
            assert_eq!(bin(lower + width - 1), i);
            // At most 1/64 of the lower edge wide (exact below 64 ns).
            assert!(i < SUB as usize || width * SUB <= lower);
            end = lower + width;
        }
        // Hand-computed: 100 ms = 10^8 ns lies in [2^26, 2^27); 10^8 >> 20 = 95,
        // so its sub-bin is 95 - 64 = 31 and its bin (20 + 1) * 64 + 31.
        assert_eq!(bin(100_000_000), 21 * 64 + 31);
        assert_eq!(bin_range(21 * 64 + 31), (95 << 20, 1 << 20));
        assert_eq!(bin(u64::MAX), 58 * 64 + 63);
    }

    #[test]
    fn test_percentiles_nearest_rank() {
        // 1..=100 ns are exact bins: the p-th percentile is the ceil(100 p)-th
        // sample below 64 ns; 90 ns lies in [90, 91) (width 1 from 64 to 127).
        let mut h = DelayHistogram::default();
        for x in (1..=100).rev() {
            h.push(Duration(x));
        }
        let ns = |p| (h.percentile(p).unwrap() * 1e9).round() as u64;
        assert_eq!(ns(0.5), 50);
        assert_eq!(ns(0.9), 90);
        assert_eq!(ns(0.99), 99);
        assert_eq!(ns(1.0), 100);
        assert_eq!(ns(0.001), 1);
        assert_eq!(DelayHistogram::default().percentile(0.5), None);
    }

    #[test]
    fn test_percentile_within_bin_and_clamped() {
        // A constant delay is reported exactly (clamped to min = max).
        let mut c = DelayHistogram::default();
        for _ in 0..10 {
            c.push(Duration(12_345_678));
        }
        assert_eq!(c.percentile(0.99), Some(0.012_345_678));
        // 1000 samples 1 ms apart from 1 ms: the median is the 500th, 500 ms,
        // reported to within half a bin (0.8%); p99 the 990th, 990 ms.
        let mut h = DelayHistogram::default();
        for k in 1..=1000u64 {
            h.push(Duration(k * 1_000_000));
        }
        for (p, exact) in [(0.5, 0.5), (0.99, 0.99), (0.95, 0.95)] {
            let got = h.percentile(p).unwrap();
            assert!((got / exact - 1.0).abs() <= 1.0 / 128.0, "p{p}: {got} against {exact}");
        }
        assert_eq!(h.percentile(1.0), Some(1.0));
        assert_eq!(h.percentile(1e-9), Some(0.001));
    }

    #[test]
    fn test_merge_equals_one_pass() {
        let xs: Vec<u64> = (0..5000u64).map(|k| (k * 7919) % 100_003 * 1_000 + 17).collect();
        let mut all = DelayHistogram::default();
        xs.iter().for_each(|&x| all.push(Duration(x)));
        let (mut a, mut b) = (DelayHistogram::default(), DelayHistogram::default());
        xs[..1234].iter().for_each(|&x| a.push(Duration(x)));
        xs[1234..].iter().for_each(|&x| b.push(Duration(x)));
        let mut merged = DelayHistogram::default();
        merged.merge(&b);
        merged.merge(&a);
        merged.merge(&DelayHistogram::default());
        // Trailing empty bins aside, the same histogram.
        assert_eq!(merged.bins(), all.bins());
        assert_eq!(
            (merged.n, merged.min_ns, merged.max_ns),
            (all.n, all.min_ns, all.max_ns)
        );
        assert_eq!(all.bins().iter().map(|b| b.count).sum::<u64>(), 5000);
    }
}
