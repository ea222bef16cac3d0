//! BBR version 1: N. Cardwell, Y. Cheng, C. S. Gunn, S. Hassas Yeganeh and
//! V. Jacobson, "BBR: Congestion-Based Congestion Control", ACM Queue 14(5),
//! September-October 2016, as mainline Linux implements it in
//! `net/ipv4/tcp_bbr.c` (read from a 5.x release: with the ACK-aggregation
//! allowance added in 5.1 and the long-term "policer" bandwidth of the
//! first release, 4.9).
//!
//! Heads up: read the paper and Linux's module first. This file follows the
//! module's state machine, constants, fixed-point arithmetic and order of
//! operations; the notes below say where it cannot.
//!
//! The model, updated by every ACK through [`CongestionControl::cong_control`]
//! (Linux's `bbr_main`), in this order: bandwidth and round counting, the
//! ACK-aggregation estimate, the PROBE_BW gain cycle, full-pipe detection,
//! the move from STARTUP to DRAIN and from DRAIN to PROBE_BW, the min_rtt
//! filter and PROBE_RTT, the gains of the mode; then the pacing rate and cwnd.
//!
//! ```text
//! round       starts when the ACKed packet was sent after the previous
//!             round's start (rs.prior_delivered >= delivered at that start)
//! bw          windowed max of delivered / interval over 10 rounds (Nichols'
//!             three-sample filter, lib/win_minmax.c); app-limited samples
//!             enter only if they are at least the current max
//! min_rtt     lowest RTT sample (an equal one renews it), replaced by
//!             any sample once 10 s old
//! BDP(g)      ceil(bw * min_rtt * g), 10 packets before any RTT sample
//! pacing      g_pace * bw * mss * (1 - 1%), bytes/s; before the pipe is
//!             full it never decreases
//! cwnd target BDP(g_cwnd) + ACK-aggregation allowance + 3 * tso_segs_goal,
//!             rounded up to even, + 2 in the 1.25 phase; cwnd grows by the
//!             packets ACKed towards it (before the pipe is full it is never
//!             cut), at least 4 packets
//! STARTUP     g_pace = g_cwnd = 739/256 (2/ln 2 = 2.885, Linux rounds up);
//!             the pipe is full after 3 rounds, counted on non-app-limited
//!             round starts, in which max bw grew by less than 25 %
//! DRAIN       g_pace = 88/256 (1/2.885), g_cwnd = 739/256, until the
//!             packets in flight are at most BDP(1) + quantization budget;
//!             ssthresh is set to that value on entry
//! PROBE_BW    g_cwnd = 2, g_pace cycles [1.25, 0.75, 1, 1, 1, 1, 1, 1], one
//!             phase per min_rtt; 1.25 lasts until inflight reaches its
//!             target or a loss, 0.75 ends early once inflight is at most
//!             BDP(1) + budget; the cycle starts at a random phase but 0.75
//! PROBE_RTT   when min_rtt is older than 10 s (and not just back from idle):
//!             cwnd 4 packets, g = 1, held max(200 ms, one round) from when
//!             inflight first is at most 4, then back to PROBE_BW (pipe full)
//!             or STARTUP, with the cwnd saved on entry restored
//! recovery    on its first round, packet conservation: cwnd = inflight +
//!             ACKed; each ACK first takes its losses off cwnd; on leaving
//!             recovery the cwnd saved at its start is restored
//! policer     after a loss, intervals of 4-16 rounds ending in a loss with
//!             loss rate >= 50/256 (20 %); two consecutive ones with bw within
//!             1/8 or 4 kbit/s of each other set bw to their mean and the
//!             pacing gain to 1 for 48 rounds (the long-term "lt_bw")
//! ```
//!
//! Parameters, with Linux's values as defaults (the gains are rounded to
//! Linux's 1/256 units): `high_gain` (739/256), `drain_gain` (88/256),
//! `cwnd_gain` (2), `probe_up_gain` (1.25), `probe_down_gain` (0.75),
//! `full_bw_thresh` (1.25), `full_bw_rounds` (3), `bw_window_rounds` (10),
//! `min_rtt_window` (10 s), `probe_rtt_duration` (200 ms; zero disables
//! PROBE_RTT, as Linux's `bbr_probe_rtt_mode_ms` = 0), `cwnd_min_target`
//! (4), `pacing_margin_percent` (1), `extra_acked_gain` (1; zero gives the
//! BBR of Linux 4.9-5.0, without the ACK-aggregation allowance) and
//! `tso_segs_goal` (none: Linux's rule, below).
//!
//! Choices between variants, and what is not modelled:
//! - Linux's fixed point throughout: bandwidth in packets per microsecond
//!   scaled by 2^24, gains in 1/256, times in microseconds (each timestamp
//!   truncated from the simulator's nanoseconds, as Linux's microsecond
//!   clock), so cwnd and pacing rates are Linux's integers. Bandwidth is
//!   kept in 64 bits and the pacing arithmetic in 128, so nothing wraps
//!   where Linux's 32-bit fields would (above 256 Mpkt/s).
//! - The min_rtt filter's stamp and PROBE_RTT's 200 ms are kept in
//!   nanoseconds, where Linux counts jiffies (1-4 ms); comparisons stay
//!   strict ("after") as Linux's.
//! - The quantization budget: Linux budgets three "TSO" bursts even on a
//!   path without segmentation offload, since `bbr_tso_segs_goal` ignores
//!   the device: about 1 ms of data at the pacing rate (`sk_pacing_shift`
//!   10), at least 2 packets (1 below 1.2 Mbit/s), at most 127 packets and
//!   65536 - 1 - 320 bytes (`GSO_MAX_SIZE - 1 - MAX_TCP_HEADER`, with the
//!   320-byte header room of a common x86-64 build). That rule is the
//!   default, so cwnd matches a Linux sender; `tso_segs_goal = n` fixes the
//!   burst at `n` packets instead (1 for a sender that sends one packet at
//!   a time and wants no such allowance).
//! - Departure times: the simulator's sender schedules no packet ahead of
//!   now (no EDT queue), so Linux's estimate of the packets "in the
//!   network at the earliest departure time" is inflight itself, plus one
//!   burst while the pacing gain is above 1.
//! - `delivered_mstamp` (the time of the latest delivery) is the time of
//!   the last hook call in which `tcp.delivered` had grown, as Linux sets it
//!   on every ACK that delivers data.
//! - `rs.is_ack_delayed` is not in [`RateSample`]: an RTT sample always may
//!   replace an expired min_rtt, where Linux skips samples of possibly
//!   delayed ACKs.
//! - `sk_max_pacing_rate` is unlimited; `bbr_sndbuf_expand` and
//!   `get_info` have no counterpart.
//! - The random initial phase of the gain cycle comes from the seeded
//!   stream given to [`Bbr::new`], uniform over 7 phases as Linux's
//!   `prandom_u32_max(7)`.
//!
//! What the sender must do, as Linux's: call `cong_control` on every ACK,
//! with `tcp.in_flight` and `tcp.delivered` already updated by it and
//! `rs.prior_in_flight` from before it; call `ssthresh` before
//! `set_state(Recovery)` or `set_state(Loss)`; honour `tcp.app_limited`,
//! which PROBE_RTT sets so that its samples are marked app-limited; pace at
//! `tcp.pacing_rate`.

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::{Duration, Time};
use rand::Rng as _;

use super::cc::{CaEvent, CaState, CongestionControl, RateSample, Tcp, INFINITE_SSTHRESH};

mod estimators;

/// Bandwidth is packets per microsecond scaled by 2^BW_SCALE.
const BW_SCALE: u32 = 24;
const BW_UNIT: u64 = 1 << BW_SCALE;
/// Gains are in units of 1/BBR_UNIT.
const BBR_SCALE: u32 = 8;
const BBR_UNIT: u32 = 1 << BBR_SCALE;
/// Phases of the PROBE_BW gain cycle.
const CYCLE_LEN: usize = 8;
/// The cycle starts at one of this many phases (all but the 0.75 one).
const CYCLE_RAND: u32 = 7;
/// Linux's `TCP_INIT_CWND`.
const TCP_INIT_CWND: u32 = 10;
/// Long-term sampling: minimum rounds in an interval (at most 4 times it).
const LT_INTVL_MIN_RTTS: u32 = 4;
/// An interval is lossy when lost / delivered >= this / 256.
const LT_LOSS_THRESH: u64 = 50;
/// Two intervals agree when their bw differ by at most 1/8 ...
const LT_BW_RATIO: u64 = (BBR_UNIT / 8) as u64;
/// ... or by at most this many bytes per second (4 kbit/s).
const LT_BW_DIFF: u64 = 4000 / 8;
/// Rounds the long-term bw is used once detected.
const LT_BW_MAX_RTTS: u32 = 48;
/// Rounds per half of the two-part ACK-aggregation max filter.
const EXTRA_ACKED_WIN_RTTS: u32 = 5;
/// The aggregation epoch restarts after this many packets ACKed.
const ACK_EPOCH_ACKED_RESET_THRESH: u32 = 1 << 20;
/// The aggregation allowance is at most this much time at bw.
const EXTRA_ACKED_MAX_US: u64 = 100_000;
/// Below this pacing rate (bits/s) a burst is one packet.
const MIN_TSO_RATE: u64 = 1_200_000;
/// Linux's default `sk_pacing_shift`: a burst is 2^-10 s at the pacing rate.
const PACING_SHIFT: u32 = 10;
/// `GSO_MAX_SIZE - 1 - MAX_TCP_HEADER`, the largest burst in bytes.
const MAX_BURST_BYTES: u64 = 65536 - 1 - 320;
/// The largest burst in packets.
const MAX_TSO_SEGS: u32 = 0x7f;
/// `min_rtt_us` before any RTT sample (Linux's ~0U).
const NO_MIN_RTT: u64 = u32::MAX as u64;

/// BBR's constants (see the module notes for meaning and defaults).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BbrParams {
    pub high_gain: f64,
    pub drain_gain: f64,
    pub cwnd_gain: f64,
    pub probe_up_gain: f64,
    pub probe_down_gain: f64,
    pub full_bw_thresh: f64,
    pub full_bw_rounds: u32,
    pub bw_window_rounds: u32,
    pub min_rtt_window: Duration,
    pub probe_rtt_duration: Duration,
    pub cwnd_min_target: u32,
    pub pacing_margin_percent: u32,
    pub extra_acked_gain: f64,
    pub tso_segs_goal: Option<u32>,
}

impl Default for BbrParams {
    fn default() -> BbrParams {
        BbrParams {
            high_gain: 739.0 / 256.0,
            drain_gain: 88.0 / 256.0,
            cwnd_gain: 2.0,
            probe_up_gain: 1.25,
            probe_down_gain: 0.75,
            full_bw_thresh: 1.25,
            full_bw_rounds: 3,
            bw_window_rounds: 10,
            min_rtt_window: Duration::from_secs(10),
            probe_rtt_duration: Duration::from_millis(200),
            cwnd_min_target: 4,
            pacing_margin_percent: 1,
            extra_acked_gain: 1.0,
            tso_segs_goal: None,
        }
    }
}

/// A gain in 1/256 units, as Linux stores it.
fn fixed(g: f64) -> u32 {
    (g * BBR_UNIT as f64).round() as u32
}

impl BbrParams {
    pub fn validate(&self) -> Result<(), String> {
        let gain = |key: &str, g: f64, lo: f64, hi: f64, what: &str| {
            if g.is_finite() && g >= lo && g <= hi && fixed(g) > 0 {
                Ok(())
            } else {
                Err(format!("{key} must be {what} (got {g})"))
            }
        };
        gain("high_gain", self.high_gain, 1.0, 16.0, "in [1, 16]")?;
        gain("drain_gain", self.drain_gain, 0.0, 1.0, "in (0, 1]")?;
        gain("cwnd_gain", self.cwnd_gain, 1.0, 16.0, "in [1, 16]")?;
        gain("probe_up_gain", self.probe_up_gain, 1.0, 16.0, "in [1, 16]")?;
        gain("probe_down_gain", self.probe_down_gain, 0.0, 1.0, "in (0, 1]")?;
        gain("full_bw_thresh", self.full_bw_thresh, 1.0, 16.0, "in [1, 16]")?;
        if !(self.extra_acked_gain.is_finite() && (0.0..=16.0).contains(&self.extra_acked_gain)) {
            return Err(format!(
                "extra_acked_gain must be in [0, 16] (got {})",
                self.extra_acked_gain
            ));
        }
        for (key, v) in [
            ("full_bw_rounds", self.full_bw_rounds),
            ("bw_window_rounds", self.bw_window_rounds),
            ("cwnd_min_target", self.cwnd_min_target),
        ] {
            if v == 0 {
                return Err(format!("{key} must be at least 1 (got 0)"));
            }
        }
        if self.min_rtt_window == Duration::ZERO {
            return Err("min_rtt_window must be positive (got 0)".into());
        }
        if self.pacing_margin_percent >= 100 {
            return Err(format!(
                "pacing_margin_percent must be in [0, 99] (got {})",
                self.pacing_margin_percent
            ));
        }
        if let Some(n) = self.tso_segs_goal {
            if n == 0 || n > MAX_TSO_SEGS {
                return Err(format!(
                    "tso_segs_goal must be in [1, {MAX_TSO_SEGS}] packets or unset (got {n})"
                ));
            }
        }
        Ok(())
    }
}

/// BBR's modes (Linux's `enum bbr_mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum BbrMode {
    /// Ramp up the sending rate to fill the pipe.
    #[default]
    Startup,
    /// Drain the queue STARTUP built.
    Drain,
    /// Cruise at the estimated bandwidth, probing it with the gain cycle.
    ProbeBw,
    /// Cut inflight to a minimum to measure the path's delay again.
    ProbeRtt,
}

/// One sample of the windowed max filter: its round and its value.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Sample {
    t: u32,
    v: u64,
}

/// Kathleen Nichols' windowed max (Linux's `lib/win_minmax.c`): the best,
/// second and third best values, each no older than the one before,
/// spread over the window so that the max rarely errs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct WindowedMax {
    s: [Sample; 3],
}

impl WindowedMax {
    fn get(&self) -> u64 {
        self.s[0].v
    }

    fn reset(&mut self, t: u32, v: u64) -> u64 {
        self.s = [Sample { t, v }; 3];
        v
    }

    /// Adds value `v` at time `t`; `win` is the window length.
    fn running_max(&mut self, win: u32, t: u32, v: u64) -> u64 {
        let val = Sample { t, v };
        if v >= self.s[0].v || t.wrapping_sub(self.s[2].t) > win {
            return self.reset(t, v);
        }
        if v >= self.s[1].v {
            self.s[1] = val;
            self.s[2] = val;
        } else if v >= self.s[2].v {
            self.s[2] = val;
        }
        // As time passes, promote the later choices.
        let dt = t.wrapping_sub(self.s[0].t);
        if dt > win {
            self.s = [self.s[1], self.s[2], val];
            if t.wrapping_sub(self.s[0].t) > win {
                self.s = [self.s[1], self.s[2], val];
            }
        } else if self.s[1].t == self.s[0].t && dt > win / 4 {
            self.s[1] = val;
            self.s[2] = val;
        } else if self.s[2].t == self.s[1].t && dt > win / 2 {
            self.s[2] = val;
        }
        self.s[0].v
    }
}

impl State {
    /// Linux's state after `bbr_init` zeroes it: no RTT sample yet.
    fn new() -> State {
        State {
            min_rtt_us: NO_MIN_RTT,
            ..State::default()
        }
    }
}

/// A time in Linux's microseconds.
fn us(t: Time) -> u64 {
    t.nanos() / 1000
}

/// `tcp_stamp_us_delta`: microseconds from `t0` to `t1`, zero if negative.
fn us_delta(t1: Time, t0: Time) -> u64 {
    us(t1).saturating_sub(us(t0))
}

/// BBR (see the module notes): its parameters, with the gains in Linux's
/// 1/256 units, the stream of its gain-cycle phases, and its state.
#[derive(Clone, Debug)]
pub struct Bbr {
    p: BbrParams,
    high_gain: u32,
    drain_gain: u32,
    steady_cwnd_gain: u32,
    cycle_gains: [u32; CYCLE_LEN],
    full_bw_thresh: u32,
    extra_acked_gain: u32,
    rng: Rng,
    s: State,
}

/// What changes as the connection runs (Linux's `struct bbr`).
#[derive(Clone, Debug, Default)]
struct State {
    mode: BbrMode,
    min_rtt_us: u64,
    min_rtt_stamp: Time,
    probe_rtt_done_stamp: Option<Time>,
    bw: WindowedMax,
    rtt_cnt: u32,
    next_rtt_delivered: u64,
    cycle_mstamp: Time,
    prev_ca_state: CaState,
    packet_conservation: bool,
    round_start: bool,
    idle_restart: bool,
    probe_rtt_round_done: bool,
    lt_is_sampling: bool,
    lt_rtt_cnt: u32,
    lt_use_bw: bool,
    lt_bw: u64,
    lt_last_delivered: u64,
    lt_last_stamp_ms: u64,
    lt_last_lost: u64,
    pacing_gain: u32,
    cwnd_gain: u32,
    full_bw_reached: bool,
    full_bw_cnt: u32,
    cycle_idx: usize,
    has_seen_rtt: bool,
    prior_cwnd: u32,
    full_bw: u64,
    ack_epoch_mstamp: Time,
    extra_acked: [u32; 2],
    ack_epoch_acked: u32,
    extra_acked_win_rtts: u32,
    extra_acked_win_idx: usize,
    // Linux's tp->delivered_mstamp, kept here (see the module notes).
    delivered_mstamp: Time,
    seen_delivered: u64,
}

impl Bbr {
    /// A BBR with parameters `p` (checked with [`BbrParams::validate`]
    /// first) drawing the initial gain-cycle phase from `rng`.
    pub fn new(p: BbrParams, rng: Rng) -> Bbr {
        let up = fixed(p.probe_up_gain);
        let down = fixed(p.probe_down_gain);
        let u = BBR_UNIT;
        Bbr {
            p,
            high_gain: fixed(p.high_gain),
            drain_gain: fixed(p.drain_gain),
            steady_cwnd_gain: fixed(p.cwnd_gain),
            cycle_gains: [up, down, u, u, u, u, u, u],
            full_bw_thresh: fixed(p.full_bw_thresh),
            extra_acked_gain: fixed(p.extra_acked_gain),
            rng,
            s: State::new(),
        }
    }

    /// The current mode.
    pub fn mode(&self) -> BbrMode {
        self.s.mode
    }

    /// The bandwidth estimate in packets per second (the long-term one
    /// while policing is suspected).
    pub fn bw_pps(&self) -> f64 {
        self.bw() as f64 * 1e6 / BW_UNIT as f64
    }

    /// The min_rtt estimate, `None` before any RTT sample.
    pub fn min_rtt(&self) -> Option<Duration> {
        (self.s.min_rtt_us != NO_MIN_RTT).then(|| Duration::from_micros(self.s.min_rtt_us))
    }

    /// The current pacing and cwnd gains.
    pub fn gains(&self) -> (f64, f64) {
        let f = |g: u32| g as f64 / BBR_UNIT as f64;
        (f(self.s.pacing_gain), f(self.s.cwnd_gain))
    }

    /// Whether STARTUP is estimated to have filled the pipe.
    pub fn full_bw_reached(&self) -> bool {
        self.s.full_bw_reached
    }

    /// Keeps `delivered_mstamp` as Linux's: the time of the latest delivery.
    fn note_delivery(&mut self, tcp: &Tcp) {
        if tcp.delivered != self.s.seen_delivered {
            self.s.seen_delivered = tcp.delivered;
            self.s.delivered_mstamp = tcp.now;
        }
    }

    fn max_bw(&self) -> u64 {
        self.s.bw.get()
    }

    fn bw(&self) -> u64 {
        if self.s.lt_use_bw {
            self.s.lt_bw
        } else {
            self.max_bw()
        }
    }

    fn extra_acked(&self) -> u32 {
        self.s.extra_acked[0].max(self.s.extra_acked[1])
    }

    /// A scaled bandwidth times `gain`, less the pacing margin, in bytes
    /// per second (Linux's order of operations, without its overflow).
    fn rate_bytes_per_sec(&self, mss: u32, rate: u64, gain: u32) -> u64 {
        let mut r = rate as u128 * mss as u128 * gain as u128;
        r >>= BBR_SCALE;
        r *= (1_000_000 / 100 * (100 - self.p.pacing_margin_percent as u64)) as u128;
        (r >> BW_SCALE) as u64
    }

    /// The initial pacing rate: high gain times cwnd over srtt, or over
    /// 1 ms without an RTT sample.
    fn init_pacing_rate_from_rtt(&mut self, tcp: &mut Tcp) {
        let rtt_us = if tcp.srtt > Duration::ZERO {
            self.s.has_seen_rtt = true;
            (tcp.srtt.nanos() / 1000).max(1)
        } else {
            1000
        };
        let bw = tcp.cwnd as u64 * BW_UNIT / rtt_us;
        tcp.pacing_rate = Some(self.rate_bytes_per_sec(tcp.mss, bw, self.high_gain) as f64);
    }

    fn set_pacing_rate(&mut self, tcp: &mut Tcp, bw: u64, gain: u32) {
        let rate = self.rate_bytes_per_sec(tcp.mss, bw, gain) as f64;
        if !self.s.has_seen_rtt && tcp.srtt > Duration::ZERO {
            self.init_pacing_rate_from_rtt(tcp);
        }
        if self.s.full_bw_reached || rate > tcp.pacing_rate.unwrap_or(0.0) {
            tcp.pacing_rate = Some(rate);
        }
    }

    /// Linux's `bbr_min_tso_segs`.
    fn min_tso_segs(&self, tcp: &Tcp) -> u32 {
        if tcp.pacing_rate.unwrap_or(0.0) < (MIN_TSO_RATE >> 3) as f64 {
            1
        } else {
            2
        }
    }

    /// Packets per burst (Linux's `bbr_tso_segs_goal`; see the module notes).
    fn tso_segs_goal(&self, tcp: &Tcp) -> u32 {
        if let Some(n) = self.p.tso_segs_goal {
            return n;
        }
        let bytes = ((tcp.pacing_rate.unwrap_or(0.0) as u64) >> PACING_SHIFT).min(MAX_BURST_BYTES);
        let segs = ((bytes / tcp.mss.max(1) as u64) as u32).max(self.min_tso_segs(tcp));
        segs.min(MAX_TSO_SEGS)
    }

    /// Saves the last cwnd known to be good, to restore after recovery or
    /// PROBE_RTT.
    fn save_cwnd(&mut self, tcp: &Tcp) {
        if self.s.prev_ca_state < CaState::Recovery && self.s.mode != BbrMode::ProbeRtt {
            self.s.prior_cwnd = tcp.cwnd;
        } else {
            self.s.prior_cwnd = self.s.prior_cwnd.max(tcp.cwnd);
        }
    }

    /// ceil(bw * min_rtt * gain) in packets.
    fn bdp(&self, bw: u64, gain: u32) -> u32 {
        if self.s.min_rtt_us == NO_MIN_RTT {
            return TCP_INIT_CWND;
        }
        let w = bw as u128 * self.s.min_rtt_us as u128;
        (((w * gain as u128) >> BBR_SCALE).div_ceil(BW_UNIT as u128)) as u32
    }

    /// Adds room for three bursts, rounds up to even, and two more packets
    /// in the probing phase so that it can exceed BDP even when BDP is small.
    fn quantization_budget(&self, tcp: &Tcp, cwnd: u32) -> u32 {
        let mut cwnd = cwnd + 3 * self.tso_segs_goal(tcp);
        cwnd = (cwnd + 1) & !1;
        if self.s.mode == BbrMode::ProbeBw && self.s.cycle_idx == 0 {
            cwnd += 2;
        }
        cwnd
    }

    /// The inflight a gain aims at: BDP plus the quantization budget.
    fn inflight(&self, tcp: &Tcp, bw: u64, gain: u32) -> u32 {
        self.quantization_budget(tcp, self.bdp(bw, gain))
    }

    /// Linux's `bbr_packets_in_net_at_edt` with no departure scheduled
    /// ahead of now (see the module notes).
    fn packets_in_net_at_edt(&self, tcp: &Tcp, inflight_now: u32) -> u32 {
        if self.s.pacing_gain > BBR_UNIT {
            inflight_now + self.tso_segs_goal(tcp)
        } else {
            inflight_now
        }
    }

    /// The cwnd allowance for ACK aggregation, once the pipe is full.
    fn ack_aggregation_cwnd(&self) -> u32 {
        if self.extra_acked_gain == 0 || !self.s.full_bw_reached {
            return 0;
        }
        let max_aggr = (self.bw() as u128 * EXTRA_ACKED_MAX_US as u128 / BW_UNIT as u128) as u64;
        let aggr = (self.extra_acked_gain as u64 * self.extra_acked() as u64) >> BBR_SCALE;
        aggr.min(max_aggr) as u32
    }

    /// Losses come off cwnd; the first round of recovery conserves
    /// packets; leaving recovery restores the saved cwnd. Returns the cwnd
    /// and whether packet conservation decides it.
    fn set_cwnd_to_recover_or_restore(&mut self, tcp: &Tcp, rs: &RateSample, acked: u32) -> (u32, bool) {
        let prev = self.s.prev_ca_state;
        let state = tcp.ca_state;
        let mut cwnd = tcp.cwnd;
        if rs.losses > 0 {
            cwnd = cwnd.saturating_sub(rs.losses).max(1);
        }
        if state == CaState::Recovery && prev != CaState::Recovery {
            self.s.packet_conservation = true;
            self.s.next_rtt_delivered = tcp.delivered;
            cwnd = tcp.in_flight + acked;
        } else if prev >= CaState::Recovery && state < CaState::Recovery {
            cwnd = cwnd.max(self.s.prior_cwnd);
            self.s.packet_conservation = false;
        }
        self.s.prev_ca_state = state;
        if self.s.packet_conservation {
            return (cwnd.max(tcp.in_flight + acked), true);
        }
        (cwnd, false)
    }

    fn set_cwnd(&mut self, tcp: &mut Tcp, rs: &RateSample, acked: u32, bw: u64, gain: u32) {
        let mut cwnd = tcp.cwnd;
        if acked > 0 {
            let (c, conserving) = self.set_cwnd_to_recover_or_restore(tcp, rs, acked);
            cwnd = c;
            if !conserving {
                let target = self.bdp(bw, gain) + self.ack_aggregation_cwnd();
                let target = self.quantization_budget(tcp, target);
                if self.s.full_bw_reached {
                    cwnd = (cwnd + acked).min(target);
                } else if cwnd < target || tcp.delivered < TCP_INIT_CWND as u64 {
                    cwnd += acked;
                }
                cwnd = cwnd.max(self.p.cwnd_min_target);
            }
        }
        tcp.cwnd = cwnd.min(tcp.cwnd_clamp);
        if self.s.mode == BbrMode::ProbeRtt {
            tcp.cwnd = tcp.cwnd.min(self.p.cwnd_min_target);
        }
    }

    /// Whether the gain-cycle phase ends: after a min_rtt, and for 1.25 only
    /// once inflight reached its target or packets were lost; 0.75 also
    /// ends as soon as inflight is down to BDP.
    fn is_next_cycle_phase(&self, tcp: &Tcp, rs: &RateSample) -> bool {
        let is_full_length = us_delta(self.s.delivered_mstamp, self.s.cycle_mstamp) > self.s.min_rtt_us;
        if self.s.pacing_gain == BBR_UNIT {
            return is_full_length;
        }
        let inflight = self.packets_in_net_at_edt(tcp, rs.prior_in_flight);
        let bw = self.max_bw();
        if self.s.pacing_gain > BBR_UNIT {
            return is_full_length && (rs.losses > 0 || inflight >= self.inflight(tcp, bw, self.s.pacing_gain));
        }
        is_full_length || inflight <= self.inflight(tcp, bw, BBR_UNIT)
    }

    fn advance_cycle_phase(&mut self) {
        self.s.cycle_idx = (self.s.cycle_idx + 1) % CYCLE_LEN;
        self.s.cycle_mstamp = self.s.delivered_mstamp;
    }

    fn update_cycle_phase(&mut self, tcp: &Tcp, rs: &RateSample) {
        if self.s.mode == BbrMode::ProbeBw && self.is_next_cycle_phase(tcp, rs) {
            self.advance_cycle_phase();
        }
    }

    /// Enters PROBE_BW at a random phase other than the 0.75 one: the
    /// index drawn is 7 - r, r uniform in 0..7, then advanced by one.
    fn reset_probe_bw_mode(&mut self) {
        self.s.mode = BbrMode::ProbeBw;
        let r = self.rng.random_range(0..CYCLE_RAND) as usize;
        self.s.cycle_idx = CYCLE_LEN - 1 - r;
        self.advance_cycle_phase();
    }

    fn reset_mode(&mut self) {
        if self.s.full_bw_reached {
            self.reset_probe_bw_mode();
        } else {
            self.s.mode = BbrMode::Startup;
        }
    }

    /// Round counting and the bandwidth filter.
    fn update_bw(&mut self, tcp: &Tcp, rs: &RateSample) {
        self.s.round_start = false;
        let interval_us = rs.interval.map_or(0, |i| i.nanos() / 1000);
        if rs.delivered < 0 || interval_us == 0 {
            return;
        }
        if rs.prior_delivered >= self.s.next_rtt_delivered {
            self.s.next_rtt_delivered = tcp.delivered;
            self.s.rtt_cnt = self.s.rtt_cnt.wrapping_add(1);
            self.s.round_start = true;
            self.s.packet_conservation = false;
        }
        self.lt_bw_sampling(tcp, rs.losses, rs.is_app_limited);
        let bw = rs.delivered as u64 * BW_UNIT / interval_us;
        if !rs.is_app_limited || bw >= self.max_bw() {
            self.s.bw.running_max(self.p.bw_window_rounds, self.s.rtt_cnt, bw);
        }
    }

    /// STARTUP has filled the pipe when max bw grew less than 25 % in 3
    /// consecutive non-app-limited rounds.
    fn check_full_bw_reached(&mut self, rs: &RateSample) {
        if self.s.full_bw_reached || !self.s.round_start || rs.is_app_limited {
            return;
        }
        let thresh = ((self.s.full_bw as u128 * self.full_bw_thresh as u128) >> BBR_SCALE) as u64;
        if self.max_bw() >= thresh {
            self.s.full_bw = self.max_bw();
            self.s.full_bw_cnt = 0;
            return;
        }
        self.s.full_bw_cnt += 1;
        self.s.full_bw_reached = self.s.full_bw_cnt >= self.p.full_bw_rounds;
    }

    fn check_drain(&mut self, tcp: &mut Tcp) {
        if self.s.mode == BbrMode::Startup && self.s.full_bw_reached {
            self.s.mode = BbrMode::Drain;
            tcp.ssthresh = self.inflight(tcp, self.max_bw(), BBR_UNIT);
        }
        if self.s.mode == BbrMode::Drain
            && self.packets_in_net_at_edt(tcp, tcp.in_flight) <= self.inflight(tcp, self.max_bw(), BBR_UNIT)
        {
            self.reset_probe_bw_mode();
        }
    }

    fn check_probe_rtt_done(&mut self, tcp: &mut Tcp) {
        match self.s.probe_rtt_done_stamp {
            Some(done) if tcp.now > done => {}
            _ => return,
        }
        self.s.min_rtt_stamp = tcp.now;
        tcp.cwnd = tcp.cwnd.max(self.s.prior_cwnd);
        self.reset_mode();
    }

    /// The min_rtt filter, and PROBE_RTT when it expires.
    fn update_min_rtt(&mut self, tcp: &mut Tcp, rs: &RateSample) {
        let filter_expired = tcp.now > self.s.min_rtt_stamp + self.p.min_rtt_window;
        if let Some(rtt) = rs.rtt {
            let rtt_us = rtt.nanos() / 1000;
            if rtt_us <= self.s.min_rtt_us || filter_expired {
                self.s.min_rtt_us = rtt_us;
                self.s.min_rtt_stamp = tcp.now;
            }
        }
        if self.p.probe_rtt_duration > Duration::ZERO
            && filter_expired
            && !self.s.idle_restart
            && self.s.mode != BbrMode::ProbeRtt
        {
            self.s.mode = BbrMode::ProbeRtt;
            self.save_cwnd(tcp);
            self.s.probe_rtt_done_stamp = None;
        }
        if self.s.mode == BbrMode::ProbeRtt {
            // Samples of this mode's low rate are app-limited.
            tcp.app_limited = (tcp.delivered + tcp.in_flight as u64).max(1);
            if self.s.probe_rtt_done_stamp.is_none() && tcp.in_flight <= self.p.cwnd_min_target {
                self.s.probe_rtt_done_stamp = Some(tcp.now + self.p.probe_rtt_duration);
                self.s.probe_rtt_round_done = false;
                self.s.next_rtt_delivered = tcp.delivered;
            } else if self.s.probe_rtt_done_stamp.is_some() {
                if self.s.round_start {
                    self.s.probe_rtt_round_done = true;
                }
                if self.s.probe_rtt_round_done {
                    self.check_probe_rtt_done(tcp);
                }
            }
        }
        // Idle restart ends with the first ACK that delivers data.
        if rs.delivered > 0 {
            self.s.idle_restart = false;
        }
    }

    fn update_gains(&mut self) {
        (self.s.pacing_gain, self.s.cwnd_gain) = match self.s.mode {
            BbrMode::Startup => (self.high_gain, self.high_gain),
            BbrMode::Drain => (self.drain_gain, self.high_gain),
            BbrMode::ProbeBw => {
                let g = if self.s.lt_use_bw {
                    BBR_UNIT
                } else {
                    self.cycle_gains[self.s.cycle_idx]
                };
                (g, self.steady_cwnd_gain)
            }
            BbrMode::ProbeRtt => (BBR_UNIT, BBR_UNIT),
        };
    }

    fn update_model(&mut self, tcp: &mut Tcp, rs: &RateSample) {
        self.update_bw(tcp, rs);
        self.update_ack_aggregation(tcp, rs);
        self.update_cycle_phase(tcp, rs);
        self.check_full_bw_reached(rs);
        self.check_drain(tcp);
        self.update_min_rtt(tcp, rs);
        self.update_gains();
    }
}

impl CongestionControl for Bbr {
    fn name(&self) -> &'static str {
        "bbr"
    }

    fn needs_pacing(&self) -> bool {
        true
    }

    fn has_cong_control(&self) -> bool {
        true
    }

    fn init(&mut self, tcp: &mut Tcp) {
        self.s = State::new();
        // The count now rather than Linux's 0 (tcp_bbr.c as read): the same
        // first round at a connection's start, and right if init runs later.
        self.s.next_rtt_delivered = tcp.delivered;
        self.s.seen_delivered = tcp.delivered;
        self.s.delivered_mstamp = tcp.now;
        tcp.ssthresh = INFINITE_SSTHRESH;
        if tcp.min_rtt > Duration::ZERO {
            self.s.min_rtt_us = tcp.min_rtt.nanos() / 1000;
        }
        self.s.min_rtt_stamp = tcp.now;
        self.init_pacing_rate_from_rtt(tcp);
        self.reset_lt_bw_sampling(tcp);
        self.s.ack_epoch_mstamp = tcp.now;
    }

    /// Saves cwnd for the end of recovery; ssthresh stays as it is.
    fn ssthresh(&mut self, tcp: &Tcp) -> u32 {
        self.save_cwnd(tcp);
        tcp.ssthresh
    }

    /// cwnd stays; the reduction was spurious, so full-pipe detection and
    /// long-term sampling start over.
    fn undo_cwnd(&mut self, tcp: &Tcp) -> u32 {
        self.note_delivery(tcp);
        self.s.full_bw = 0;
        self.s.full_bw_cnt = 0;
        self.reset_lt_bw_sampling(tcp);
        tcp.cwnd
    }

    /// A timeout ends the round and counts as a loss for long-term sampling.
    fn set_state(&mut self, tcp: &mut Tcp, new: CaState) {
        if new == CaState::Loss {
            self.note_delivery(tcp);
            self.s.prev_ca_state = CaState::Loss;
            self.s.full_bw = 0;
            self.s.round_start = true;
            self.lt_bw_sampling(tcp, 1, false);
        }
    }

    /// Restarting from idle while app-limited: pace at bw in PROBE_BW, and
    /// end PROBE_RTT if it is due.
    fn cwnd_event(&mut self, tcp: &mut Tcp, ev: CaEvent) {
        if ev == CaEvent::TxStart && tcp.app_limited != 0 {
            self.note_delivery(tcp);
            self.s.idle_restart = true;
            self.s.ack_epoch_mstamp = tcp.now;
            self.s.ack_epoch_acked = 0;
            if self.s.mode == BbrMode::ProbeBw {
                self.set_pacing_rate(tcp, self.bw(), BBR_UNIT);
            } else if self.s.mode == BbrMode::ProbeRtt {
                self.check_probe_rtt_done(tcp);
            }
        }
    }

    /// As `bbr_get_info` (`ss`'s `bbr:(bw,mrtt,pacing_gain,cwnd_gain)`):
    /// the bandwidth estimate (the long-term one while in use) in payload
    /// bits per second, min_rtt (null before a sample) and the two gains.
    fn info(&self, _tcp: &Tcp, mss: u32, out: &mut dyn FnMut(&'static str, f64)) {
        out("bbr_bw_bps", self.bw_pps() * f64::from(mss) * 8.0);
        out("bbr_min_rtt_s", self.min_rtt().map_or(f64::NAN, |d| d.as_secs_f64()));
        let (pacing, cwnd) = self.gains();
        out("bbr_pacing_gain", pacing);
        out("bbr_cwnd_gain", cwnd);
    }

    fn cong_control(&mut self, tcp: &mut Tcp, rs: &RateSample) -> bool {
        self.note_delivery(tcp);
        self.update_model(tcp, rs);
        let bw = self.bw();
        self.set_pacing_rate(tcp, bw, self.s.pacing_gain);
        self.set_cwnd(tcp, rs, rs.acked_sacked, bw, self.s.cwnd_gain);
        true
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use aqmlab_qdisc::rng;

    // Helpers. The path of most tests: 1500-byte packets, 64 packets per
    // 1024 us (bw = 64 / 1024 pkt/us = 2^20 in Linux's 2^-24 units, 62500
    // pkt/s) and a 1024 us RTT, so BDP = 64 packets. Bursts are fixed at one
    // packet (tso_segs_goal = 1), so the quantization budget is 3 packets.

    const BW: u64 = 1 << 20;

    fn params() -> BbrParams {
        BbrParams {
            tso_segs_goal: Some(1),
            ..BbrParams::default()
        }
    }

    fn start_with(p: BbrParams) -> (Bbr, Tcp) {
        let mut t = Tcp::new(10, 1500);
        let mut b = Bbr::new(p, rng::stream(1, "bbr"));
        b.init(&mut t);
        (b, t)
    }

    fn start() -> (Bbr, Tcp) {
        start_with(params())
    }

    /// An ACK `interval_us` after the previous one that delivers `n`
    /// packets, with a rate sample of those `n` packets over that interval
    /// and an RTT sample; the ACKed packet was sent once everything before
    /// it was delivered, so each such ACK starts a round.
    fn ack(t: &mut Tcp, n: u32, interval_us: u64, rtt_us: u64) -> RateSample {
        t.now += Duration::from_micros(interval_us);
        let prior = t.delivered;
        t.delivered += n as u64;
        RateSample {
            prior_delivered: prior,
            delivered: n as i64,
            interval: Some(Duration::from_micros(interval_us)),
            rtt: Some(Duration::from_micros(rtt_us)),
            acked_sacked: n,
            prior_in_flight: t.in_flight,
            ..RateSample::default()
        }
    }

    /// An ACK `us_` after the previous one, of one packet, whose rate
    /// sample (one packet in 1024 us) is far below the path's bw.
    fn nudge(t: &mut Tcp, us_: u64) -> RateSample {
        let mut rs = ack(t, 1, us_, 1024);
        rs.interval = Some(Duration::from_micros(1024));
        rs
    }

    /// One round of the standard path.
    fn round(b: &mut Bbr, t: &mut Tcp) {
        let rs = ack(t, 64, 1024, 1024);
        b.cong_control(t, &rs);
    }

    /// Startup on the standard path until the pipe is full: the first round
    /// sets full_bw, three more without growth fill the pipe, and with 60
    /// packets in flight (<= BDP 64 + 3, even: 68) DRAIN ends at once.
    fn in_probe_bw() -> (Bbr, Tcp) {
        let (mut b, mut t) = start();
        t.in_flight = 60;
        for _ in 0..4 {
            round(&mut b, &mut t);
        }
        assert_eq!(b.mode(), BbrMode::ProbeBw);
        (b, t)
    }

    /// Puts PROBE_BW in phase `idx` starting now.
    fn set_phase(b: &mut Bbr, t: &Tcp, idx: usize) {
        b.s.cycle_idx = idx;
        b.s.cycle_mstamp = t.now;
        b.update_gains();
    }

    #[test]
    fn test_linux_gains_in_256ths() {
        let b = Bbr::new(BbrParams::default(), rng::stream(1, "bbr"));
        // 256 x 2885 / 1000 + 1 = 739, 256 x 1000 / 2885 = 88.
        assert_eq!((b.high_gain, b.drain_gain, b.steady_cwnd_gain), (739, 88, 512));
        assert_eq!(b.cycle_gains, [320, 192, 256, 256, 256, 256, 256, 256]);
        assert_eq!((b.full_bw_thresh, b.extra_acked_gain), (320, 256));
    }

    #[test]
    fn test_initial_pacing_rate_is_high_gain_times_cwnd_over_one_ms_without_rtt() {
        let (b, t) = start();
        // 10 packets per 1 ms: bw = 10 x 2^24 / 1000 = 167772 (truncated);
        // x 1500 B x 739 / 256 x 990000 / 2^24 = 42867732 B/s, about
        // 10 000 pkt/s x 1500 B x 2.887 x 0.99.
        assert_eq!(t.pacing_rate, Some(42_867_732.0));
        assert_eq!(t.ssthresh, INFINITE_SSTHRESH);
        assert_eq!(b.mode(), BbrMode::Startup);
        assert!(b.needs_pacing());
        // With srtt 1024 us and cwnd 16: bw = 16 x 2^24 / 1024 = 2^18, and
        // 2^18 x 1500 x 739 / 256 x 990000 / 2^24 = 66980895 B/s.
        let mut t = Tcp::new(16, 1500);
        t.srtt = Duration::from_micros(1024);
        let mut b = Bbr::new(params(), rng::stream(1, "bbr"));
        b.init(&mut t);
        assert_eq!(t.pacing_rate, Some(66_980_895.0));
    }

    #[test]
    fn test_startup_paces_and_sizes_cwnd_at_high_gain_times_bdp() {
        let (mut b, mut t) = start();
        round(&mut b, &mut t);
        assert_eq!(b.bw(), BW);
        assert_eq!(b.min_rtt(), Some(Duration::from_micros(1024)));
        assert_eq!(b.gains(), (739.0 / 256.0, 739.0 / 256.0));
        // Pacing: 2^20 x 1500 x 739 / 256 x 990000 / 2^24 = 267923583 B/s
        // (62500 pkt/s x 1500 B x 2.887 x 0.99).
        assert_eq!(t.pacing_rate, Some(267_923_583.0));
        // cwnd target: ceil(64 x 739 / 256) = ceil(184.75) = 185, + 3 = 188
        // (even). Below it cwnd grows by the packets ACKed: 10 + 64 = 74,
        // 138, 202; at or above it STARTUP neither grows nor cuts it.
        assert_eq!(b.bdp(BW, b.high_gain), 185);
        assert_eq!(b.inflight(&t, BW, b.high_gain), 188);
        assert_eq!(t.cwnd, 74);
        round(&mut b, &mut t);
        assert_eq!(t.cwnd, 138);
        round(&mut b, &mut t);
        assert_eq!(t.cwnd, 202);
        assert_eq!(b.mode(), BbrMode::Startup);
        // Before the pipe is full the pacing rate never decreases.
        t.pacing_rate = Some(3e8);
        let mut rs = ack(&mut t, 64, 1024, 1024);
        rs.prior_delivered = 0;
        b.cong_control(&mut t, &rs);
        assert_eq!(t.pacing_rate, Some(3e8));
        assert_eq!(t.cwnd, 202);
    }

    #[test]
    fn test_full_bw_is_reached_after_three_rounds_without_25_percent_growth() {
        let (mut b, mut t) = start();
        t.in_flight = 300;
        // Doubling each round: no count.
        for n in [16, 32, 64] {
            let rs = ack(&mut t, n, 1024, 1024);
            b.cong_control(&mut t, &rs);
            assert_eq!(b.s.full_bw_cnt, 0);
        }
        // Two rounds at the same rate count 1 and 2; 80 packets is exactly
        // 1.25 x 64 and starts the count again.
        round(&mut b, &mut t);
        round(&mut b, &mut t);
        assert_eq!(b.s.full_bw_cnt, 2);
        let rs = ack(&mut t, 80, 1024, 1024);
        b.cong_control(&mut t, &rs);
        assert_eq!((b.s.full_bw_cnt, b.s.full_bw), (0, 80 << 14));
        for cnt in [1, 2] {
            let rs = ack(&mut t, 80, 1024, 1024);
            b.cong_control(&mut t, &rs);
            assert_eq!(b.s.full_bw_cnt, cnt);
        }
        // An app-limited round does not count.
        let mut rs = ack(&mut t, 80, 1024, 1024);
        rs.is_app_limited = true;
        b.cong_control(&mut t, &rs);
        assert_eq!((b.s.full_bw_cnt, b.mode()), (2, BbrMode::Startup));
        // The third: DRAIN, with ssthresh = BDP(1) + 3 = 80 + 3, even: 84.
        let rs = ack(&mut t, 80, 1024, 1024);
        b.cong_control(&mut t, &rs);
        assert!(b.full_bw_reached());
        assert_eq!(b.mode(), BbrMode::Drain);
        assert_eq!(t.ssthresh, 84);
        assert_eq!(b.gains(), (88.0 / 256.0, 739.0 / 256.0));
    }

    #[test]
    fn test_drain_ends_when_inflight_is_down_to_bdp() {
        let (mut b, mut t) = start();
        t.in_flight = 300;
        for _ in 0..4 {
            round(&mut b, &mut t);
        }
        assert_eq!(b.mode(), BbrMode::Drain);
        // Pacing at 88/256: 2^20 x 1500 x 88 / 256 x 990000 / 2^24.
        assert_eq!(t.pacing_rate, Some(31_904_296.0));
        // The target is BDP(1) + 3 = 67, even: 68 packets.
        t.in_flight = 69;
        round(&mut b, &mut t);
        assert_eq!(b.mode(), BbrMode::Drain);
        t.in_flight = 68;
        round(&mut b, &mut t);
        assert_eq!(b.mode(), BbrMode::ProbeBw);
        assert_eq!(b.gains().1, 2.0);
        assert_ne!(b.s.cycle_idx, 1);
    }

    #[test]
    fn test_probe_bw_starts_at_a_seeded_random_phase_never_the_drain_phase() {
        let mut b = Bbr::new(params(), rng::stream(7, "bbr"));
        let mut c = Bbr::new(params(), rng::stream(7, "bbr"));
        let mut seen = [0u32; CYCLE_LEN];
        for _ in 0..700 {
            b.reset_probe_bw_mode();
            c.reset_probe_bw_mode();
            assert_eq!(b.s.cycle_idx, c.s.cycle_idx);
            seen[b.s.cycle_idx] += 1;
        }
        assert_eq!(seen[1], 0);
        // The other seven phases all occur, each about 100 times.
        for (i, &n) in seen.iter().enumerate() {
            assert!(i == 1 || (50..150).contains(&n), "phase {i}: {n}");
        }
    }

    #[test]
    fn test_probe_bw_cycle_advances_each_min_rtt() {
        let (mut b, mut t) = in_probe_bw();
        set_phase(&mut b, &t, 2);
        // A phase of gain 1 lasts more than min_rtt (1024 us), however much
        // is in flight.
        t.in_flight = 10;
        let rs = ack(&mut t, 64, 1024, 1024);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.cycle_idx, 2);
        let rs = nudge(&mut t, 1);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.cycle_idx, 3);
        assert_eq!(b.s.cycle_mstamp, t.now);
        // Through the cycle: 3 .. 7, then 0 (the 1.25 phase).
        for idx in [4, 5, 6, 7, 0] {
            let rs = ack(&mut t, 64, 1025, 1024);
            b.cong_control(&mut t, &rs);
            assert_eq!(b.s.cycle_idx, idx);
        }
        assert_eq!(b.gains(), (1.25, 2.0));
        // Pacing at 1.25: 2^20 x 1500 x 320 / 256 x 990000 / 2^24.
        assert_eq!(t.pacing_rate, Some(116_015_625.0));
    }

    #[test]
    fn test_probe_up_phase_lasts_until_inflight_reaches_its_target_or_a_loss() {
        let (mut b, mut t) = in_probe_bw();
        set_phase(&mut b, &t, 0);
        // Target: ceil(64 x 1.25) = 80, + 3, even: 84, + 2 in this phase: 86;
        // in flight counts one more burst (1 packet) while probing up.
        assert_eq!(b.inflight(&t, BW, 320), 86);
        t.in_flight = 84;
        let rs = ack(&mut t, 64, 1025, 1024);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.cycle_idx, 0);
        // Enough in flight, but not yet a min_rtt.
        set_phase(&mut b, &t, 0);
        t.in_flight = 200;
        let rs = ack(&mut t, 64, 1024, 1024);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.cycle_idx, 0);
        t.in_flight = 85;
        let rs = nudge(&mut t, 1);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.cycle_idx, 1);
        // A loss ends it with little in flight.
        set_phase(&mut b, &t, 0);
        t.in_flight = 10;
        let mut rs = ack(&mut t, 64, 1025, 1024);
        rs.losses = 1;
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.cycle_idx, 1);
    }

    #[test]
    fn test_probe_down_phase_ends_early_once_inflight_is_down_to_bdp() {
        let (mut b, mut t) = in_probe_bw();
        set_phase(&mut b, &t, 1);
        assert_eq!(b.gains().0, 0.75);
        // BDP(1) + 3, even: 68.
        t.in_flight = 69;
        let rs = nudge(&mut t, 10);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.cycle_idx, 1);
        assert_eq!(t.pacing_rate, Some(69_609_375.0));
        t.in_flight = 68;
        let rs = nudge(&mut t, 10);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.cycle_idx, 2);
    }

    #[test]
    fn test_pacing_rate_is_gain_times_bw_less_one_percent_in_bytes_per_second() {
        let (mut b, mut t) = in_probe_bw();
        set_phase(&mut b, &t, 3);
        let rs = nudge(&mut t, 10);
        b.cong_control(&mut t, &rs);
        // 62500 pkt/s x 1500 B x 0.99 = 92812500 B/s.
        assert_eq!(t.pacing_rate, Some(92_812_500.0));
        assert_eq!(b.bw_pps(), 62500.0);
        // With 1000-byte packets, two thirds of it.
        t.mss = 1000;
        let rs = nudge(&mut t, 10);
        b.cong_control(&mut t, &rs);
        assert_eq!(t.pacing_rate, Some(61_875_000.0));
        // No margin: exactly bw x mss.
        let b2 = Bbr::new(
            BbrParams {
                pacing_margin_percent: 0,
                ..params()
            },
            rng::stream(1, "bbr"),
        );
        assert_eq!(b2.rate_bytes_per_sec(1500, BW, BBR_UNIT), 93_750_000);
    }

    #[test]
    fn test_probe_bw_cwnd_is_twice_bdp_plus_aggregation_and_budget() {
        let (mut b, mut t) = in_probe_bw();
        set_phase(&mut b, &t, 3);
        // Each ACK delivers a whole round of 64 packets at once: the
        // aggregation estimate is 64 (at most bw x 100 ms = 6400). Target:
        // 2 x 64 + 64 + 3 = 195, even: 196.
        assert_eq!(b.extra_acked(), 64);
        t.cwnd = 150;
        round(&mut b, &mut t);
        assert_eq!(t.cwnd, 196);
        // Above the target cwnd is cut to it.
        t.cwnd = 300;
        round(&mut b, &mut t);
        assert_eq!(t.cwnd, 196);
        // Without the aggregation allowance: 128 + 3, even: 132.
        b.extra_acked_gain = 0;
        round(&mut b, &mut t);
        assert_eq!(t.cwnd, 132);
    }

    #[test]
    fn test_max_bw_filter_forgets_a_sample_after_ten_rounds() {
        let mut f = WindowedMax::default();
        f.running_max(10, 1, 100);
        for t in 2..=11 {
            assert_eq!(f.running_max(10, t, 50), 100, "round {t}");
        }
        assert_eq!(f.running_max(10, 12, 50), 50);
        // Through BBR: 128 packets in one round (125000 pkt/s), then 64.
        let (mut b, mut t) = start();
        let rs = ack(&mut t, 128, 1024, 1024);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.bw_pps(), 125000.0);
        for _ in 0..10 {
            round(&mut b, &mut t);
        }
        assert_eq!(b.bw_pps(), 125000.0);
        round(&mut b, &mut t);
        assert_eq!(b.bw_pps(), 62500.0);
    }

    #[test]
    fn test_app_limited_samples_raise_bw_but_never_lower_it() {
        let (mut b, mut t) = start();
        round(&mut b, &mut t);
        // Over 12 rounds of app-limited samples at a quarter of the rate,
        // the estimate stays, though the window would have forgotten it.
        for _ in 0..12 {
            let mut rs = ack(&mut t, 16, 1024, 1024);
            rs.is_app_limited = true;
            b.cong_control(&mut t, &rs);
        }
        assert_eq!(b.bw(), BW);
        // An app-limited sample above it counts.
        let mut rs = ack(&mut t, 128, 1024, 1024);
        rs.is_app_limited = true;
        b.cong_control(&mut t, &rs);
        assert_eq!(b.bw(), 2 * BW);
    }

    #[test]
    fn test_probe_rtt_after_ten_seconds_holds_cwnd_4_for_200_ms_and_a_round() {
        let (mut b, mut t) = in_probe_bw();
        let stamp = b.s.min_rtt_stamp;
        assert_eq!(stamp, t.now);
        t.cwnd = 150;
        // Higher RTT samples do not refresh min_rtt; at exactly 10 s the
        // filter has not expired.
        let rs = ack(&mut t, 64, 10_000_000 - 1, 2000);
        b.cong_control(&mut t, &rs);
        let rs = ack(&mut t, 64, 1, 2000);
        b.cong_control(&mut t, &rs);
        assert_eq!(t.now.saturating_since(stamp), Duration::from_secs(10));
        assert_eq!(b.mode(), BbrMode::ProbeBw);
        assert_eq!(b.min_rtt(), Some(Duration::from_micros(1024)));
        let cwnd = t.cwnd;
        // One microsecond later: PROBE_RTT, the 2 ms sample is the new
        // min_rtt, cwnd 4.
        t.in_flight = 100;
        let rs = ack(&mut t, 64, 1, 2000);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.mode(), BbrMode::ProbeRtt);
        assert_eq!(b.min_rtt(), Some(Duration::from_micros(2000)));
        assert_eq!(t.cwnd, 4);
        assert_eq!(b.gains(), (1.0, 1.0));
        assert_eq!(b.s.prior_cwnd, cwnd);
        assert!(t.app_limited > 0);
        // The 200 ms start once inflight is down to 4 packets.
        let rs = ack(&mut t, 64, 50_000, 2000);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.s.probe_rtt_done_stamp, None);
        t.in_flight = 4;
        let rs = ack(&mut t, 4, 1000, 2000);
        b.cong_control(&mut t, &rs);
        let p = t.now;
        assert_eq!(b.s.probe_rtt_done_stamp, Some(p + Duration::from_millis(200)));
        // A round ends 100 ms later; 200 ms are not yet over.
        let rs = ack(&mut t, 4, 100_000, 2000);
        b.cong_control(&mut t, &rs);
        assert!(b.s.probe_rtt_round_done);
        assert_eq!(b.mode(), BbrMode::ProbeRtt);
        let rs = ack(&mut t, 4, 100_000, 2000);
        b.cong_control(&mut t, &rs);
        assert_eq!(t.now, p + Duration::from_millis(200));
        assert_eq!(b.mode(), BbrMode::ProbeRtt);
        assert_eq!(t.cwnd, 4);
        // Strictly after: back to PROBE_BW (the pipe was full) with the
        // saved cwnd, and the min_rtt stamp renewed.
        let rs = ack(&mut t, 4, 1, 2000);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.mode(), BbrMode::ProbeBw);
        assert_eq!(b.s.min_rtt_stamp, t.now);
        assert!(t.cwnd >= cwnd);
    }

    #[test]
    fn test_probe_rtt_waits_for_a_round_and_exits_to_startup_before_the_pipe_is_full() {
        let (mut b, mut t) = start();
        t.in_flight = 4;
        round(&mut b, &mut t);
        assert!(!b.full_bw_reached());
        let rs = ack(&mut t, 64, 10_000_001, 2000);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.mode(), BbrMode::ProbeRtt);
        assert!(b.s.probe_rtt_done_stamp.is_some());
        // 300 ms later, but the ACKed packet was sent before PROBE_RTT's
        // round began: no round yet, no exit.
        let mut rs = ack(&mut t, 4, 300_000, 2000);
        rs.prior_delivered = 0;
        b.cong_control(&mut t, &rs);
        assert_eq!(b.mode(), BbrMode::ProbeRtt);
        let rs = ack(&mut t, 4, 1000, 2000);
        b.cong_control(&mut t, &rs);
        assert_eq!(b.mode(), BbrMode::Startup);
        assert_eq!(b.gains(), (739.0 / 256.0, 739.0 / 256.0));
    }

    #[test]
    fn test_recovery_conserves_packets_for_a_round_then_restores_cwnd() {
        let (mut b, mut t) = in_probe_bw();
        set_phase(&mut b, &t, 3);
        t.cwnd = 100;
        // ssthresh keeps its value (set on leaving STARTUP: 68) and saves cwnd.
        assert_eq!(b.ssthresh(&t), 68);
        assert_eq!(b.s.prior_cwnd, 100);
        b.set_state(&mut t, CaState::Recovery);
        t.ca_state = CaState::Recovery;
        // First ACK of recovery: cwnd = inflight + ACKed = 30 + 2.
        t.in_flight = 30;
        let mut rs = ack(&mut t, 2, 100, 1024);
        rs.losses = 1;
        b.cong_control(&mut t, &rs);
        assert_eq!(t.cwnd, 32);
        // The same round (packets sent before recovery): cwnd only follows
        // inflight + ACKed, never below it.
        for (in_flight, cwnd) in [(29, 32), (35, 38)] {
            t.in_flight = in_flight;
            let mut rs = ack(&mut t, 3, 100, 1024);
            rs.prior_delivered = 0;
            b.cong_control(&mut t, &rs);
            assert_eq!(t.cwnd, cwnd);
        }
        // Next round: growth by the packets ACKed up to the target (196).
        let rs = ack(&mut t, 3, 100, 1024);
        b.cong_control(&mut t, &rs);
        assert_eq!(t.cwnd, 41);
        // Losses come off first.
        let mut rs = ack(&mut t, 3, 100, 1024);
        rs.losses = 2;
        b.cong_control(&mut t, &rs);
        assert_eq!(t.cwnd, 42);
        // Recovery over: the saved 100, + 2 ACKed.
        t.ca_state = CaState::Open;
        let rs = ack(&mut t, 2, 100, 1024);
        b.cong_control(&mut t, &rs);
        assert_eq!(t.cwnd, 102);
    }

    #[test]
    fn test_consistent_lossy_intervals_mean_a_policer_and_pace_at_its_rate() {
        let (mut b, mut t) = in_probe_bw();
        t.in_flight = 60;
        // Rounds of 1 ms, 64 delivered and 16 lost in each (25 % >= 50/256).
        let lossy = |b: &mut Bbr, t: &mut Tcp| {
            let mut rs = ack(t, 64, 1000, 1024);
            rs.losses = 16;
            t.lost += 16;
            b.cong_control(t, &rs);
        };
        // The first loss starts sampling; the interval ends at the 4th
        // round: 192 packets in 3 ms (from 5 ms to 8 ms), 192 x 2^24 / 3000
        // = 1073741 (64 pkt/ms).
        assert_eq!(t.now, Time::from_nanos(4_096_000));
        for _ in 0..4 {
            lossy(&mut b, &mut t);
        }
        assert_eq!(b.s.lt_bw, 1_073_741);
        assert!(!b.s.lt_use_bw);
        // The second: 256 packets in 4 ms, the same rate: policed.
        for _ in 0..4 {
            lossy(&mut b, &mut t);
        }
        assert!(b.s.lt_use_bw);
        assert_eq!(b.bw(), 1_073_741);
        assert_eq!(b.gains().0, 1.0);
        // 1073741 x 1500 x 990000 / 2^24 B/s.
        assert_eq!(t.pacing_rate, Some(95_039_927.0));
        // 48 rounds later the long-term rate is dropped.
        for _ in 0..47 {
            round(&mut b, &mut t);
        }
        assert!(b.s.lt_use_bw);
        round(&mut b, &mut t);
        assert!(!b.s.lt_use_bw);
        assert_eq!(b.mode(), BbrMode::ProbeBw);
    }

    #[test]
    fn test_timeout_and_undo_restart_full_bw_and_long_term_sampling() {
        let (mut b, mut t) = in_probe_bw();
        assert_ne!(b.s.full_bw, 0);
        b.set_state(&mut t, CaState::Loss);
        assert_eq!(b.s.full_bw, 0);
        assert!(b.s.round_start);
        assert!(b.s.lt_is_sampling);
        assert_eq!(b.s.prev_ca_state, CaState::Loss);
        t.cwnd = 37;
        assert_eq!(b.undo_cwnd(&t), 37);
        assert!(!b.s.lt_is_sampling);
        assert_eq!((b.s.full_bw, b.s.full_bw_cnt), (0, 0));
    }

    #[test]
    fn test_restart_from_idle_paces_at_bw_in_probe_bw() {
        let (mut b, mut t) = in_probe_bw();
        set_phase(&mut b, &t, 0);
        let rs = nudge(&mut t, 1);
        b.cong_control(&mut t, &rs);
        assert_eq!(t.pacing_rate, Some(116_015_625.0));
        // Not app-limited: nothing happens.
        b.cwnd_event(&mut t, CaEvent::TxStart);
        assert_eq!(t.pacing_rate, Some(116_015_625.0));
        t.app_limited = 5;
        b.cwnd_event(&mut t, CaEvent::TxStart);
        assert!(b.s.idle_restart);
        assert_eq!(t.pacing_rate, Some(92_812_500.0));
    }

    #[test]
    fn test_quantization_budget_follows_linux_burst_size() {
        let (b, mut t) = start_with(BbrParams::default());
        // 92812500 B/s >> 10 = 90637 B, capped at 65215 B: 43 packets.
        t.pacing_rate = Some(92_812_500.0);
        assert_eq!(b.tso_segs_goal(&t), 43);
        // 12 MB/s: 11718 B, 7 packets.
        t.pacing_rate = Some(12_000_000.0);
        assert_eq!(b.tso_segs_goal(&t), 7);
        // Below 1.2 Mbit/s one packet, above it at least two.
        t.pacing_rate = Some(149_999.0);
        assert_eq!(b.tso_segs_goal(&t), 1);
        t.pacing_rate = Some(150_000.0);
        assert_eq!(b.tso_segs_goal(&t), 2);
        // At most 127 packets.
        t.mss = 100;
        t.pacing_rate = Some(1e9);
        assert_eq!(b.tso_segs_goal(&t), 127);
        // Budget: BDP + 3 bursts, rounded up to even.
        t.mss = 1500;
        t.pacing_rate = Some(12_000_000.0);
        assert_eq!(b.quantization_budget(&t, 50), 72);
    }

    #[test]
    fn test_cwnd_never_below_four_packets() {
        let (mut b, mut t) = in_probe_bw();
        set_phase(&mut b, &t, 3);
        t.cwnd = 2;
        b.s.bw.reset(b.s.rtt_cnt, 1);
        let mut rs = nudge(&mut t, 1);
        rs.delivered = -1;
        b.cong_control(&mut t, &rs);
        assert_eq!(t.cwnd, 4);
    }

    /// A bulk flow through a 10 000 pkt/s bottleneck (100 us per packet,
    /// unlimited FIFO) with 10 ms of propagation delay, one ACK per packet,
    /// rate samples as `tcp_rate.c` takes them; returns the sender, its
    /// socket, the packets delivered in the last 10 s and each change of
    /// mode with its time.
    fn bulk_flow(secs: u64) -> (Bbr, Tcp, u64, Vec<(Time, BbrMode)>) {
        struct Pkt {
            sent: Time,
            delivered: u64,
            delivered_at: Time,
            first_tx: Time,
        }
        let service = Duration::from_micros(100);
        let prop = Duration::from_millis(10);
        let (mut b, mut t) = start_with(BbrParams::default());
        let end = Time::from_secs(secs);
        let mut flight: std::collections::VecDeque<(Time, Pkt)> = Default::default();
        let (mut next_send, mut link_free) = (Time::ZERO, Time::ZERO);
        let (mut first_tx, mut delivered_at) = (Time::ZERO, Time::ZERO);
        let mut modes = vec![(Time::ZERO, b.mode())];
        let mut late = 0;
        loop {
            let ack_at = flight.front().map_or(Time::MAX, |p| p.0);
            let can_send = t.in_flight < t.cwnd;
            let send_at = next_send.max(t.now);
            if can_send && send_at <= ack_at {
                t.now = send_at;
                if t.now >= end {
                    break;
                }
                if t.in_flight == 0 {
                    first_tx = t.now;
                    delivered_at = t.now;
                }
                let pkt = Pkt {
                    sent: t.now,
                    delivered: t.delivered,
                    delivered_at,
                    first_tx,
                };
                link_free = link_free.max(t.now) + service;
                flight.push_back((link_free + prop, pkt));
                t.in_flight += 1;
                let gap = t.mss as f64 / t.pacing_rate.unwrap();
                next_send = t.now + Duration::from_secs_f64(gap);
                continue;
            }
            let (at, pkt) = flight.pop_front().unwrap();
            t.now = at;
            if t.now >= end {
                break;
            }
            let prior_in_flight = t.in_flight;
            t.in_flight -= 1;
            t.delivered += 1;
            if t.now >= Time::from_secs(secs - 10) {
                late += 1;
            }
            first_tx = pkt.sent;
            let rtt = t.now - pkt.sent;
            t.srtt = rtt;
            let interval = (pkt.sent - pkt.first_tx).max(t.now - pkt.delivered_at);
            delivered_at = t.now;
            let rs = RateSample {
                prior_delivered: pkt.delivered,
                delivered: (t.delivered - pkt.delivered) as i64,
                interval: Some(interval),
                rtt: Some(rtt),
                acked_sacked: 1,
                prior_in_flight,
                ..RateSample::default()
            };
            b.cong_control(&mut t, &rs);
            if modes.last().unwrap().1 != b.mode() {
                modes.push((t.now, b.mode()));
            }
        }
        (b, t, late, modes)
    }

    #[test]
    fn test_a_bulk_flow_fills_the_bottleneck_and_probes_rtt_every_ten_seconds() {
        let (b, _t, late, modes) = bulk_flow(30);
        // STARTUP, DRAIN, then PROBE_BW, with PROBE_RTT about every 10 s.
        let names: Vec<BbrMode> = modes.iter().map(|m| m.1).collect();
        assert_eq!(
            &names[..4],
            &[BbrMode::Startup, BbrMode::Drain, BbrMode::ProbeBw, BbrMode::ProbeRtt]
        );
        let probes: Vec<f64> = modes
            .iter()
            .filter(|m| m.1 == BbrMode::ProbeRtt)
            .map(|m| m.0.as_secs_f64())
            .collect();
        assert_eq!(probes.len(), 2, "{modes:?}");
        assert!(probes[0] > 10.0 && probes[0] < 10.5, "{probes:?}");
        // The estimates are the path's: 10 000 pkt/s, 10.1 ms.
        assert!((b.bw_pps() - 10_000.0).abs() < 100.0, "{}", b.bw_pps());
        assert_eq!(b.min_rtt(), Some(Duration::from_micros(10_100)));
        // The link is kept busy: PROBE_RTT's 200 ms and the 0.75 phases
        // cost a few percent.
        assert!(late > 95_000 && late <= 100_000, "{late}");
    }

    #[test]
    fn test_params_are_checked() {
        assert!(BbrParams::default().validate().is_ok());
        let bad = |p: BbrParams, key: &str| {
            let e = p.validate().unwrap_err();
            assert!(e.starts_with(key), "{e}");
        };
        let d = BbrParams::default();
        bad(BbrParams { high_gain: 0.5, ..d }, "high_gain");
        bad(BbrParams { drain_gain: 0.0, ..d }, "drain_gain");
        bad(
            BbrParams {
                cwnd_gain: f64::NAN,
                ..d
            },
            "cwnd_gain",
        );
        bad(
            BbrParams {
                probe_down_gain: 1.5,
                ..d
            },
            "probe_down_gain",
        );
        bad(BbrParams { full_bw_rounds: 0, ..d }, "full_bw_rounds");
        bad(
            BbrParams {
                pacing_margin_percent: 100,
                ..d
            },
            "pacing_margin_percent",
        );
        bad(
            BbrParams {
                tso_segs_goal: Some(0),
                ..d
            },
            "tso_segs_goal",
        );
        bad(
            BbrParams {
                min_rtt_window: Duration::ZERO,
                ..d
            },
            "min_rtt_window",
        );
    }
}
