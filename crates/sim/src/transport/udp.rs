//! Open-loop UDP sources: CBR, Poisson, batch arrivals and ON/OFF. The
//! ON/OFF schedule is also that of the rate-limited ON/OFF application of
//! an `onoff` group over TCP (`crate::app::bulk`).
//!
//! A source decides when its next packet (or batch) goes out and how large
//! each packet is; the engine does the rest (for the TCP application, the
//! sender gets the packet and sends it when its window allows). Each flow
//! draws from three streams named after it (`traffic[g].flow[j].start`,
//! `.gap`, `.size`), so changing one group's sizes does not move another's
//! arrival times.

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::{Duration, Time};

use crate::config::dist::Dist;

#[derive(Clone, Debug)]
enum Gen {
    /// Packet k leaves at `start + k * size * 8 / rate`, computed from k so
    /// no rounding error accumulates.
    Cbr {
        start: Time,
        k: u64,
        bits: f64,
        rate_bps: f64,
    },
    /// ns-2's `random_ = 1`: each gap is the interval plus a uniform
    /// +-50% of it.
    CbrJitter {
        interval_s: f64,
    },
    Poisson {
        mean_gap_s: f64,
    },
    Batch {
        gap: Dist,
        batch: Dist,
    },
    /// ns-2's `Application/Traffic/Pareto` and `/Exponential`: a burst of
    /// `round(on / interval)` (at least 1) packets at the peak rate, then an
    /// idle period drawn from `off`, added to the next packet interval.
    OnOff {
        interval_s: f64,
        on: Dist,
        off: Dist,
        remaining: u64,
    },
}

impl Gen {
    fn on_off(rate_bps: f64, size_bytes: u32, on: &Dist, off: &Dist) -> Gen {
        Gen::OnOff {
            interval_s: size_bytes as f64 * 8.0 / rate_bps,
            on: on.clone(),
            off: off.clone(),
            remaining: 0,
        }
    }
}

#[derive(Clone, Debug)]
enum Size {
    Fixed(u32),
    Drawn(Dist),
}

/// When an open-loop source sends and how large its packets are.
#[derive(Clone, Debug, PartialEq)]
pub enum Schedule {
    /// Constant bit rate; `jitter` adds a uniform +-50% of the interval to
    /// each gap, as ns-2's `random_`.
    Cbr {
        rate_bps: f64,
        size_bytes: u32,
        jitter: bool,
    },
    /// Poisson packet arrivals at a mean bit rate.
    Poisson { rate_bps: f64, size: Dist },
    /// Batches of `batch` packets separated by `gap`.
    Batch { gap: Dist, batch: Dist, size: Dist },
    /// ns-2's Pareto/Exponential ON/OFF source: bursts sent at `rate_bps`.
    OnOff {
        rate_bps: f64,
        size_bytes: u32,
        on: Dist,
        off: Dist,
    },
}

impl Schedule {
    /// The traffic kind that declares this schedule in a scenario file.
    pub fn kind(&self) -> &'static str {
        match self {
            Schedule::Cbr { .. } => "cbr",
            Schedule::Poisson { .. } => "poisson",
            Schedule::Batch { .. } => "batch-poisson",
            Schedule::OnOff { .. } => "onoff",
        }
    }
}

#[derive(Clone, Debug)]
pub struct UdpSource {
    gen: Gen,
    size: Size,
    stop: Time,
    rng_gap: Rng,
    rng_size: Rng,
}

/// Rounds a drawn size or count to a whole number, at least 1.
#[inline]
fn whole(x: f64) -> u64 {
    (x.round() as u64).max(1)
}

impl UdpSource {
    /// A source sending on `schedule` until `stop`, drawing its gaps and its
    /// sizes from two streams of its own.
    pub fn new(schedule: &Schedule, stop: Time, rng_gap: Rng, rng_size: Rng) -> UdpSource {
        let (gen, size) = match schedule {
            Schedule::Cbr {
                rate_bps,
                size_bytes,
                jitter: false,
            } => (
                Gen::Cbr {
                    start: Time::ZERO,
                    k: 0,
                    bits: *size_bytes as f64 * 8.0,
                    rate_bps: *rate_bps,
                },
                Size::Fixed(*size_bytes),
            ),
            Schedule::Cbr {
                rate_bps,
                size_bytes,
                jitter: true,
            } => (
                Gen::CbrJitter {
                    interval_s: *size_bytes as f64 * 8.0 / rate_bps,
                },
                Size::Fixed(*size_bytes),
            ),
            Schedule::Poisson { rate_bps, size } => {
                // Sizes are drawn, then rounded to whole bytes: the mean
                // rate is met with the mean of the rounded sizes.
                let mean_size = size.rounded_mean().expect("validated: finite mean size");
                (
                    Gen::Poisson {
                        mean_gap_s: mean_size * 8.0 / rate_bps,
                    },
                    Size::Drawn(size.clone()),
                )
            }
            Schedule::Batch { gap, batch, size } => (
                Gen::Batch {
                    gap: gap.clone(),
                    batch: batch.clone(),
                },
                Size::Drawn(size.clone()),
            ),
            Schedule::OnOff {
                rate_bps,
                size_bytes,
                on,
                off,
            } => (Gen::on_off(*rate_bps, *size_bytes, on, off), Size::Fixed(*size_bytes)),
        };
        UdpSource {
            gen,
            size,
            stop,
            rng_gap,
            rng_size,
        }
    }

    /// The source of the flow called `name` (see
    /// `GroupSpec::flow_name`), drawing from its two streams of the run
    /// with `seed`: the simulator and the emulator send the same packets at
    /// the same times.
    pub fn seeded(seed: u64, name: &str, schedule: &Schedule, stop: Time) -> UdpSource {
        UdpSource::new(
            schedule,
            stop,
            aqmlab_qdisc::rng::stream(seed, &format!("{name}.gap")),
            aqmlab_qdisc::rng::stream(seed, &format!("{name}.size")),
        )
    }

    /// When the first emission happens, for a flow starting at `start`.
    /// CBR sends at once (as ns-2); Poisson and batch sources wait one gap,
    /// so their arrivals form a stationary process from `start`; ON/OFF
    /// sources begin with an idle period, as ns-2's.
    pub fn first(&mut self, start: Time) -> Option<Time> {
        let t = match &mut self.gen {
            Gen::Cbr { start: s, .. } => {
                *s = start;
                start
            }
            Gen::CbrJitter { .. } => start,
            _ => start + self.next_gap(),
        };
        (t < self.stop).then_some(t)
    }

    /// Packets to emit now, and when to come back (None: the source is done).
    #[inline]
    pub fn fire(&mut self, now: Time) -> (u64, Option<Time>) {
        let n = match &self.gen {
            Gen::Batch { batch, .. } => whole(batch.sample(&mut self.rng_gap)),
            _ => 1,
        };
        let next = match &mut self.gen {
            Gen::Cbr {
                start,
                k,
                bits,
                rate_bps,
            } => {
                *k += 1;
                *start + Duration((*k as f64 * *bits * 1e9 / *rate_bps).round() as u64)
            }
            _ => now + self.next_gap(),
        };
        (n, (next < self.stop).then_some(next))
    }

    fn next_gap(&mut self) -> Duration {
        let r = &mut self.rng_gap;
        let s = match &mut self.gen {
            Gen::Cbr { .. } => unreachable!("CBR times are computed from the packet index"),
            Gen::CbrJitter { interval_s } => *interval_s * (1.0 + (aqmlab_qdisc::rng::uniform(r) - 0.5)),
            Gen::Poisson { mean_gap_s } => -*mean_gap_s * libm::log(aqmlab_qdisc::rng::uniform_open0(r)),
            Gen::Batch { gap, .. } => gap.sample(r),
            Gen::OnOff {
                interval_s,
                on,
                off,
                remaining,
            } => {
                let mut t = *interval_s;
                if *remaining == 0 {
                    *remaining = whole(on.sample(r) / *interval_s);
                    t += off.sample(r);
                }
                *remaining -= 1;
                t
            }
        };
        Duration::from_secs_f64(s)
    }

    /// The size of the next packet.
    #[inline]
    pub fn packet_size(&mut self) -> u32 {
        match &self.size {
            Size::Fixed(b) => *b,
            Size::Drawn(d) => whole(d.sample(&mut self.rng_size)).min(u32::MAX as u64) as u32,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use aqmlab_qdisc::rng;

    fn source(spec: Schedule) -> UdpSource {
        UdpSource::new(&spec, Time::MAX, rng::stream(1, "gap"), rng::stream(1, "size"))
    }

    #[test]
    fn test_cbr_times_are_exact_multiples() {
        // 573 B at 250 kb/s: 18.336 ms between packets.
        let mut s = source(Schedule::Cbr {
            rate_bps: 250e3,
            size_bytes: 573,
            jitter: false,
        });
        let mut t = s.first(Time::from_millis(5)).unwrap();
        for k in 1..=100_000u64 {
            t = s.fire(t).1.unwrap();
            assert_eq!(t, Time::from_millis(5) + Duration(k * 18_336_000));
        }
    }

    #[test]
    fn test_onoff_burst_structure_follows_ns2() {
        // Constant ON of 5 intervals and OFF of 1 s: bursts of 5 packets 10 ms
        // apart, the first of each burst after interval + 1 s.
        let on = Dist::Constant(0.05);
        let off = Dist::Constant(1.0);
        let mut s = source(Schedule::OnOff {
            rate_bps: 80_000.0,
            size_bytes: 100,
            on,
            off,
        });
        let mut times = vec![s.first(Time::ZERO).unwrap()];
        for _ in 0..9 {
            let now = *times.last().unwrap();
            times.push(s.fire(now).1.unwrap());
        }
        let ms: Vec<u64> = times.iter().map(|t| t.0 / 1_000_000).collect();
        assert_eq!(ms, vec![1010, 1020, 1030, 1040, 1050, 2060, 2070, 2080, 2090, 2100]);
    }

    #[test]
    fn test_stop_time_ends_source() {
        let mut s = UdpSource::new(
            &Schedule::Cbr {
                rate_bps: 8000.0,
                size_bytes: 100,
                jitter: false,
            },
            Time::from_millis(250),
            rng::stream(1, "gap"),
            rng::stream(1, "size"),
        );
        // Packets at 0, 100, 200 ms; 300 ms is past the stop.
        let t0 = s.first(Time::ZERO).unwrap();
        let t1 = s.fire(t0).1.unwrap();
        let t2 = s.fire(t1).1.unwrap();
        assert_eq!((t1, t2), (Time::from_millis(100), Time::from_millis(200)));
        assert_eq!(s.fire(t2).1, None);
    }
}
