//! Stochastic Fair BLUE (SFB): BLUE per hashed bin, to find and rate-limit
//! flows that do not respond to congestion.
//!
//! W. Feng, D. D. Kandlur, D. Saha, K. G. Shin, "Stochastic Fair Blue: A
//! Queue Management Algorithm for Enforcing Fairness", Proc. IEEE INFOCOM
//! 2001 (the SFB algorithm, and its moving hash functions with double
//! buffering). Implemented as Linux `sch_sfb` (J. Chroboczek, E. Dumazet)
//! does it, which is the de-facto reference.
//!
//! Heads up: read Linux's `net/sched/sch_sfb.c` first, and [`crate::blue`]
//! for plain BLUE.
//!
//! # The algorithm
//!
//! Two slots of L = 8 levels x N = 16 bins. Each bin is a virtual queue: its
//! packet count `qlen` and its marking probability `p_mark`. A flow hashes,
//! with the slot's random key, to one 32-bit value whose eight 4-bit pieces
//! pick its bin on each level (so the levels are slices of one hash, not
//! independent hashes). At an arrival:
//!
//! 1. If the limit does not admit it: drop (`Overflow`).
//! 2. Rehash clock (below).
//! 3. For each of the flow's 8 bins in the active slot: `qlen == 0` lowers
//!    `p_mark` by `decrement`, else `qlen >= target` raises it by `increment`
//!    (saturating; per arrival, no freeze time). `p_min` and `minqlen` are the
//!    minima over the 8 bins after that update.
//! 4. `minqlen >= max`: drop (`Overflow`, the bin is full).
//! 5. `p_min` = 1: the flow is *inelastic*. While double buffering, the
//!    flow's bins in the standby slot get the same update and the packet is
//!    counted there too. The packet then needs a token from one bucket shared
//!    by all inelastic flows (`penalty_rate` pkt/s, depth `penalty_burst`):
//!    without one it is dropped (`Penalty`), with one it is queued unmarked.
//! 6. Otherwise draw `r` uniform on 0..=65535; `r < p_min` is a hit. If
//!    `p_min > 0.5` and `r < 2 (p_min - 0.5)` (in Q0.16, with Linux's half
//!    32767) the packet is dropped even if ECN-capable, so drops take over
//!    from marks as p_min goes from 1/2 to 1; any other hit marks an
//!    ECN-capable packet when `ecn` is on and drops otherwise (`Early`).
//! 7. Queued packets are counted in every bin they were hashed to; a
//!    dequeue uncounts them. Probabilities never change at dequeue.
//!
//! Rehash clock: when more than `rehash_interval` has passed since the last
//! swap, the active slot gets a new random key and becomes the standby slot,
//! the standby slot becomes active, and double buffering stops; from
//! `rehash_interval - warmup` after the last swap, double buffering is on.
//! As in Linux the new standby slot's bins are not cleared (its counts still
//! belong to queued packets) and only inelastic flows warm it up.
//!
//! # Fixed point
//!
//! `p_mark` is Q0.16 as in Linux: a `u16`, read as the probability
//! `p_mark / 65535` (tc's reading; 65535 is "1", the inelastic mark). The
//! parameters `increment` and `decrement` are probabilities converted as tc
//! does, `floor(x * 65535 + 0.5)`: the defaults 0.0005 and 0.00005 become 33
//! and 3, so a bin saturates after 1986 increments. The draw `u` in [0, 1)
//! becomes `r = floor(u * 65536)`, uniform on 0..=65535 like Linux's 16-bit
//! random number, so a hit has probability `p_min / 65536`.
//!
//! # Parameters ([`SfbParams`]), defaults as tc
//!
//! * `limit`: the hard limit of the whole queue, packets or bytes.
//! * `target_pkts` (`target`, 20): a bin holding this many packets raises its
//!   `p_mark` at each arrival. 1 <= target <= max.
//! * `max_pkts` (`max`, 25): an arrival whose bins all hold at least this
//!   many packets is dropped.
//! * `increment` (0.0005), `decrement` (0.00005): steps of `p_mark`, in
//!   (0, 1] and [0, 1]; a nonzero value must be at least one Q0.16 step
//!   (about 7.6e-6) after rounding.
//! * `penalty_rate_pps` (`penalty_rate`, 10 pkt/s), `penalty_burst_pkts`
//!   (`penalty_burst`, 20): the shared bucket of inelastic flows. Either 0
//!   drops every inelastic packet, as in Linux.
//! * `rehash_interval` (600 s; 0 never rehashes), `warmup` (60 s; 0 never
//!   double-buffers; a warmup of at least the interval double-buffers all
//!   the time).
//! * `ecn` (true): mark instead of drop where allowed (step 6).
//!
//! # Where aqmlab differs from Linux, and why
//!
//! * **Token bucket.** Here the bucket fills continuously at `penalty_rate`
//!   up to `penalty_burst` (exact, in billionths of a token) and is brought
//!   up to date at each inelastic arrival; it starts full. Linux refills it
//!   only once it is empty, to whole tokens, and restarts its clock each time:
//!   while inelastic packets arrive more often than once per 1/penalty_rate
//!   no token ever comes back after the burst, so the flows get nothing
//!   rather than `penalty_rate` pkt/s. aqmlab does what the parameter says.
//! * **`ecn` is a parameter** (Linux always tries ECN); the default, true,
//!   matches Linux.
//! * **Hash.** A keyed 64-bit mixer (SplitMix64's finaliser) of the slot key
//!   and `pkt.flow`, top 32 bits; Linux uses SipHash of the flow's keys.
//!   Keys come from the qdisc's own key stream, derived from its seed; a
//!   rehash draws the new key there, so the per-arrival draws are not
//!   shifted by it. Linux replaces a hash of 0 by 1 because 0 means "not
//!   counted"; here that is an `Option`, and 0 is an ordinary hash.
//! * **One uniform draw per arrival**, taken first whatever happens to the
//!   arrival (Linux draws only at step 6), so draws line up arrival by
//!   arrival across runs.
//! * **Bin counts** are `u32` (Linux: `u16`, saturating; the same below
//!   65535 queued packets). The limit may be in bytes (Linux: packets).
//! * **The rehash clock** starts at time 0, when the qdisc is built.
//!
//! A consequence of Linux's rule worth knowing: a bin's p_mark falls on any
//! arrival that finds the bin empty. A flow held to `penalty_rate` keeps its
//! bins nearly empty, so its next arrival lowers p_min below 1 and it leaves
//! the penalty box; with the default `decrement` a flood of 100 Mb/s on a
//! 10 Mb/s link measured about 690 pkt/s instead of 10. With `decrement = 0`
//! the classification sticks and the flow is held to `penalty_rate`
//! (`crates/sim/tests/aqm_runs.rs` shows both). aqmlab keeps Linux's
//! behaviour as the default and says so.

use std::collections::VecDeque;

use rand::Rng as _;

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::rng::{self, Rng};
use crate::time::{Duration, Time, NANOS_PER_SEC};
use crate::{DropReason, Effects, ParamError, QueueDisc, Verdict};

/// Levels of bins (L): one 4-bit slice of the 32-bit flow hash each.
pub const SFB_LEVELS: usize = 8;
/// Bins per level (N).
pub const SFB_BINS: usize = 16;
const BIN_BITS: u32 = 4;
/// Q0.16 "one": a bin or flow at this probability is inelastic.
pub const SFB_P_ONE: u16 = u16::MAX;
/// Q0.16 one half, as Linux takes it (65535 / 2, rounded down).
const SFB_P_HALF: u16 = SFB_P_ONE / 2;
/// The token bucket counts billionths of a token: one token per second at
/// a rate of 1 pkt/s is `NANOS_PER_SEC` units per second, 1 unit per ns.
const TOKEN: u64 = NANOS_PER_SEC;

/// A probability in [0, 1] as Q0.16, rounded as tc does: `floor(x * 65535 + 0.5)`.
pub fn prob_to_q16(x: f64) -> u16 {
    (x * SFB_P_ONE as f64 + 0.5) as u16
}

/// A Q0.16 probability as a real number, `q / 65535`.
pub fn q16_to_prob(q: u16) -> f64 {
    q as f64 / SFB_P_ONE as f64
}

/// The draw `u` in [0, 1) as a 16-bit number `floor(u * 65536)`.
#[inline]
pub fn q16_draw(u: f64) -> u16 {
    (u * 65536.0) as u16
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct SfbParams {
    pub limit: Limit,
    pub target_pkts: u32,
    pub max_pkts: u32,
    /// Step up of a bin's p_mark, a probability in (0, 1].
    pub increment: f64,
    /// Step down of a bin's p_mark, a probability in [0, 1].
    pub decrement: f64,
    pub penalty_rate_pps: u32,
    pub penalty_burst_pkts: u32,
    pub rehash_interval: Duration,
    pub warmup: Duration,
    pub ecn: bool,
}

impl SfbParams {
    pub const DEFAULT_TARGET_PKTS: u32 = 20;
    pub const DEFAULT_MAX_PKTS: u32 = 25;
    pub const DEFAULT_INCREMENT: f64 = 0.0005;
    pub const DEFAULT_DECREMENT: f64 = 0.00005;
    pub const DEFAULT_PENALTY_RATE_PPS: u32 = 10;
    pub const DEFAULT_PENALTY_BURST_PKTS: u32 = 20;
    pub const DEFAULT_REHASH_INTERVAL: Duration = Duration::from_secs(600);
    pub const DEFAULT_WARMUP: Duration = Duration::from_secs(60);

    /// tc's defaults with the given limit, ECN on.
    pub fn new(limit: Limit) -> SfbParams {
        SfbParams {
            limit,
            target_pkts: SfbParams::DEFAULT_TARGET_PKTS,
            max_pkts: SfbParams::DEFAULT_MAX_PKTS,
            increment: SfbParams::DEFAULT_INCREMENT,
            decrement: SfbParams::DEFAULT_DECREMENT,
            penalty_rate_pps: SfbParams::DEFAULT_PENALTY_RATE_PPS,
            penalty_burst_pkts: SfbParams::DEFAULT_PENALTY_BURST_PKTS,
            rehash_interval: SfbParams::DEFAULT_REHASH_INTERVAL,
            warmup: SfbParams::DEFAULT_WARMUP,
            ecn: true,
        }
    }

    /// `increment` as Q0.16.
    pub fn increment_q16(&self) -> u16 {
        prob_to_q16(self.increment)
    }

    /// `decrement` as Q0.16.
    pub fn decrement_q16(&self) -> u16 {
        prob_to_q16(self.decrement)
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        if self.max_pkts == 0 {
            return Err(ParamError::new("max", "must be at least 1 packet (got 0)"));
        }
        if self.target_pkts == 0 || self.target_pkts > self.max_pkts {
            return Err(ParamError::new(
                "target",
                format!(
                    "must be in [1, max] = [1, {}] packets (got {})",
                    self.max_pkts, self.target_pkts
                ),
            ));
        }
        let step = 0.5 / SFB_P_ONE as f64;
        if !(self.increment > 0.0 && self.increment <= 1.0) || self.increment_q16() == 0 {
            return Err(ParamError::new(
                "increment",
                format!(
                    "must be in [{step:.2e}, 1], at least one Q0.16 step after rounding (got {})",
                    self.increment
                ),
            ));
        }
        if !(0.0..=1.0).contains(&self.decrement) || (self.decrement > 0.0 && self.decrement_q16() == 0) {
            return Err(ParamError::new(
                "decrement",
                format!(
                    "must be 0 or in [{step:.2e}, 1], at least one Q0.16 step after rounding (got {})",
                    self.decrement
                ),
            ));
        }
        Ok(())
    }
}

/// One virtual queue.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct SfbBin {
    /// Queued packets hashed to this bin.
    pub qlen_pkts: u32,
    /// Marking probability, Q0.16.
    pub p_mark: u16,
}

/// One set of L x N bins with its hash key.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SfbSlot {
    pub key: u64,
    pub bins: [[SfbBin; SFB_BINS]; SFB_LEVELS],
}

impl SfbSlot {
    fn new(key: u64) -> SfbSlot {
        SfbSlot {
            key,
            bins: [[SfbBin::default(); SFB_BINS]; SFB_LEVELS],
        }
    }

    /// The flow's 32-bit hash under this slot's key.
    #[inline]
    pub fn hash(&self, flow: u32) -> u32 {
        sfb_hash(self.key, flow)
    }

    /// The flow's bin on each level.
    pub fn bins_of(&self, flow: u32) -> [SfbBin; SFB_LEVELS] {
        let h = self.hash(flow);
        std::array::from_fn(|level| self.bins[level][bin_index(h, level)])
    }

    /// Applies step 3 to the bins of hash `h`: returns (minqlen, p_min).
    fn update(&mut self, h: u32, p: &SfbParams) -> (u32, u16) {
        let (inc, dec) = (p.increment_q16(), p.decrement_q16());
        let mut min_qlen = u32::MAX;
        let mut p_min = SFB_P_ONE;
        for (level, row) in self.bins.iter_mut().enumerate() {
            let b = &mut row[bin_index(h, level)];
            if b.qlen_pkts == 0 {
                b.p_mark = b.p_mark.saturating_sub(dec);
            } else if b.qlen_pkts >= p.target_pkts {
                b.p_mark = b.p_mark.saturating_add(inc);
            }
            min_qlen = min_qlen.min(b.qlen_pkts);
            p_min = p_min.min(b.p_mark);
        }
        (min_qlen, p_min)
    }

    /// Counts (`+1`) or uncounts (`-1`) a packet in the bins of hash `h`.
    fn count(&mut self, h: u32, queued: bool) {
        for (level, row) in self.bins.iter_mut().enumerate() {
            let b = &mut row[bin_index(h, level)];
            b.qlen_pkts = if queued {
                b.qlen_pkts + 1
            } else {
                b.qlen_pkts.saturating_sub(1)
            };
        }
    }
}

/// The keyed flow hash: SplitMix64's finaliser over the key mixed with the
/// flow scaled by the golden-ratio constant (a bijection of the flow for a
/// fixed key), top 32 bits.
#[inline]
pub fn sfb_hash(key: u64, flow: u32) -> u32 {
    let mut z = key ^ (flow as u64).wrapping_mul(0x9e37_79b9_7f4a_7c15);
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^= z >> 31;
    (z >> 32) as u32
}

/// The bin of hash `h` on `level`: its `level`-th 4-bit slice.
#[inline]
fn bin_index(h: u32, level: usize) -> usize {
    ((h >> (BIN_BITS * level as u32)) & (SFB_BINS as u32 - 1)) as usize
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SfbState {
    pub slots: [SfbSlot; 2],
    /// Index of the active slot; the other is the standby slot.
    pub active: usize,
    /// Inelastic arrivals are also hashed into the standby slot.
    pub double_buffering: bool,
    /// When the slots were last swapped (0 at construction).
    pub rehash_time: Time,
    /// Tokens of the penalty bucket in billionths of a token, as of
    /// `token_time`.
    pub token_nanos: u64,
    pub token_time: Time,
    /// Arrivals found inelastic so far (passed or dropped by the bucket).
    pub penalized: u64,
}

impl SfbState {
    fn new(p: &SfbParams, keys: [u64; 2]) -> SfbState {
        SfbState {
            slots: [SfbSlot::new(keys[0]), SfbSlot::new(keys[1])],
            active: 0,
            double_buffering: false,
            rehash_time: Time::ZERO,
            token_nanos: bucket_depth(p),
            token_time: Time::ZERO,
            penalized: 0,
        }
    }

    /// Tokens in the penalty bucket as of the last inelastic arrival.
    pub fn tokens(&self) -> f64 {
        self.token_nanos as f64 / TOKEN as f64
    }
}

fn bucket_depth(p: &SfbParams) -> u64 {
    p.penalty_burst_pkts as u64 * TOKEN
}

/// Step 6 for a flow at `p_min` and a 16-bit draw `r`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SfbHit {
    /// No congestion signal.
    Pass,
    /// Mark if ECN-capable and `ecn` is on, else drop.
    MarkOrDrop,
    /// Drop even if ECN-capable (`p_min > 1/2` and `r < 2 (p_min - 1/2)`).
    Drop,
}

#[inline]
pub fn sfb_hit(p_min: u16, r: u16) -> SfbHit {
    if r >= p_min {
        SfbHit::Pass
    } else if p_min > SFB_P_HALF && (r as u32) < 2 * (p_min - SFB_P_HALF) as u32 {
        SfbHit::Drop
    } else {
        SfbHit::MarkOrDrop
    }
}

/// What to do with an admitted arrival.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SfbAction {
    /// Queue it, counted in the bins of `hashes[slot]` of each slot, with CE
    /// if `mark`.
    Enqueue {
        hashes: [Option<u32>; 2],
        mark: bool,
    },
    Drop(DropReason),
}

/// The rehash clock (module doc), at an admitted arrival. `new_key` gives
/// the key of the slot that leaves active duty.
pub fn sfb_rehash(p: &SfbParams, s: &mut SfbState, now: Time, new_key: impl FnOnce() -> u64) {
    if p.rehash_interval == Duration::ZERO {
        return;
    }
    let due = s.rehash_time + p.rehash_interval;
    if now > due {
        s.slots[s.active].key = new_key();
        s.active ^= 1;
        s.double_buffering = false;
        s.rehash_time = now;
    } else if !s.double_buffering
        && p.warmup > Duration::ZERO
        && now.nanos() > due.nanos().saturating_sub(p.warmup.nanos())
    {
        s.double_buffering = true;
    }
}

/// Takes a token from the penalty bucket, brought up to date at `now`.
fn sfb_take_token(p: &SfbParams, s: &mut SfbState, now: Time) -> bool {
    if p.penalty_rate_pps == 0 || p.penalty_burst_pkts == 0 {
        return false;
    }
    let elapsed_ns = now.saturating_since(s.token_time).nanos();
    // rate [tokens/s] * elapsed [ns] = rate * elapsed billionths of a token.
    let earned = elapsed_ns.saturating_mul(p.penalty_rate_pps as u64);
    s.token_nanos = s.token_nanos.saturating_add(earned).min(bucket_depth(p));
    s.token_time = now;
    if s.token_nanos >= TOKEN {
        s.token_nanos -= TOKEN;
        true
    } else {
        false
    }
}

/// Steps 3 to 6 for an admitted arrival of `flow` (the rehash clock has
/// been run). `ect`: the packet is ECN-capable; `u`: its draw in [0, 1).
pub fn sfb_decide(p: &SfbParams, s: &mut SfbState, flow: u32, ect: bool, now: Time, u: f64) -> SfbAction {
    let active = s.active;
    let h = s.slots[active].hash(flow);
    let (min_qlen, p_min) = s.slots[active].update(h, p);
    let mut hashes = [None; 2];
    hashes[active] = Some(h);
    if min_qlen >= p.max_pkts {
        return SfbAction::Drop(DropReason::Overflow);
    }
    if p_min == SFB_P_ONE {
        s.penalized += 1;
        if s.double_buffering {
            let standby = active ^ 1;
            let h = s.slots[standby].hash(flow);
            s.slots[standby].update(h, p);
            hashes[standby] = Some(h);
        }
        return if sfb_take_token(p, s, now) {
            SfbAction::Enqueue { hashes, mark: false }
        } else {
            SfbAction::Drop(DropReason::Penalty)
        };
    }
    match sfb_hit(p_min, q16_draw(u)) {
        SfbHit::Pass => SfbAction::Enqueue { hashes, mark: false },
        SfbHit::MarkOrDrop if p.ecn && ect => SfbAction::Enqueue { hashes, mark: true },
        SfbHit::MarkOrDrop | SfbHit::Drop => SfbAction::Drop(DropReason::Early),
    }
}

#[derive(Clone, Debug)]
pub struct Sfb {
    params: SfbParams,
    state: SfbState,
    fifo: Fifo,
    /// The bins each queued packet is counted in, in queue order.
    hashes: VecDeque<[Option<u32>; 2]>,
    /// One uniform draw per arrival.
    rng: Rng,
    /// Hash keys, at construction and at each rehash.
    key_rng: Rng,
}

impl Sfb {
    pub fn new(params: SfbParams, seed: u64) -> Result<Sfb, ParamError> {
        params.validate()?;
        let mut key_rng = rng::stream(seed, "sfb.keys");
        let keys = [key_rng.random(), key_rng.random()];
        Ok(Sfb {
            state: SfbState::new(&params, keys),
            params,
            fifo: Fifo::new(),
            hashes: VecDeque::new(),
            rng: <Rng as rand::SeedableRng>::seed_from_u64(seed),
            key_rng,
        })
    }

    /// The parameters in force (SFB configures nothing automatically).
    pub fn effective(&self) -> SfbParams {
        self.params
    }

    pub fn state(&self) -> &SfbState {
        &self.state
    }

    /// The enqueue rule with the uniform draw given, for scripted tests.
    pub fn enqueue_with_draw(&mut self, mut pkt: Packet, now: Time, u: f64) -> Verdict {
        if !self.params.limit.admits(self.fifo.backlog(), pkt.size_bytes) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        let key_rng = &mut self.key_rng;
        sfb_rehash(&self.params, &mut self.state, now, || key_rng.random());
        let ect = pkt.ecn.is_ecn_capable();
        match sfb_decide(&self.params, &mut self.state, pkt.flow, ect, now, u) {
            SfbAction::Drop(reason) => Verdict::Dropped(reason),
            SfbAction::Enqueue { hashes, mark } => {
                for (slot, h) in self.state.slots.iter_mut().zip(hashes) {
                    if let Some(h) = h {
                        slot.count(h, true);
                    }
                }
                self.hashes.push_back(hashes);
                if mark {
                    pkt.ecn = Ecn::Ce;
                }
                self.fifo.push_back(pkt);
                if mark {
                    Verdict::Marked
                } else {
                    Verdict::Enqueued
                }
            }
        }
    }
}

impl QueueDisc for Sfb {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now: Time, _fx: &mut Effects) -> Verdict {
        let u = rng::uniform(&mut self.rng);
        self.enqueue_with_draw(pkt, now, u)
    }

    #[inline]
    fn dequeue(&mut self, _now: Time, _fx: &mut Effects) -> Option<Packet> {
        let pkt = self.fifo.pop_front()?;
        let hashes = self.hashes.pop_front().expect("one hash record per queued packet");
        for (slot, h) in self.state.slots.iter_mut().zip(hashes) {
            if let Some(h) = h {
                slot.count(h, false);
            }
        }
        Some(pkt)
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    /// `p_mark_max`, `p_mark_mean` (over the active slot's bins, as
    /// probabilities), `bin_qlen_max` (packets), `penalized` (inelastic
    /// arrivals so far), `tokens` (in the penalty bucket as of the last
    /// inelastic arrival).
    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let bins = self.state.slots[self.state.active].bins.iter().flatten();
        let (mut p_max, mut p_sum, mut q_max) = (0u16, 0u64, 0u32);
        for b in bins {
            p_max = p_max.max(b.p_mark);
            p_sum += b.p_mark as u64;
            q_max = q_max.max(b.qlen_pkts);
        }
        let n = (SFB_LEVELS * SFB_BINS) as f64;
        out("p_mark_max", q16_to_prob(p_max));
        out("p_mark_mean", p_sum as f64 / SFB_P_ONE as f64 / n);
        out("bin_qlen_max", q_max as f64);
        out("penalized", self.state.penalized as f64);
        out("tokens", self.state.tokens());
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Constants

    const SEED: u64 = 7;
    /// A draw whose 16-bit value is 65535: never below a p_min.
    const NEVER: f64 = 0.99999;
    const FLOOD: u32 = 7;

    // Helpers

    fn ms(t: u64) -> Time {
        Time::from_millis(t)
    }

    fn pkt(id: u64, flow: u32, ecn: Ecn) -> Packet {
        Packet {
            id,
            flow,
            size_bytes: 100,
            ecn,
            ..Packet::default()
        }
    }

    fn sfb_with(p: SfbParams) -> Sfb {
        Sfb::new(p, SEED).unwrap()
    }

    /// Defaults with a limit that never binds.
    fn defaults() -> SfbParams {
        SfbParams::new(Limit::Packets(10_000))
    }

    /// A bin reaching `target` = 1 saturates at once (increment 1 is
    /// 65535 in Q0.16), the bucket never runs dry, no rehash.
    fn quick() -> SfbParams {
        SfbParams {
            target_pkts: 1,
            max_pkts: 100,
            increment: 1.0,
            penalty_rate_pps: 1000,
            penalty_burst_pkts: 1000,
            rehash_interval: Duration::ZERO,
            ..defaults()
        }
    }

    #[track_caller]
    fn offer(q: &mut Sfb, id: u64, flow: u32, now: Time, u: f64) -> Verdict {
        q.enqueue_with_draw(pkt(id, flow, Ecn::NotEct), now, u)
    }

    fn drain(q: &mut Sfb, now: Time) -> Vec<Packet> {
        let mut out = Vec::new();
        while let Some(p) = q.dequeue(now, &mut Effects::default()) {
            out.push(p);
        }
        out
    }

    fn active_bins(q: &Sfb, flow: u32) -> [SfbBin; SFB_LEVELS] {
        q.state.slots[q.state.active].bins_of(flow)
    }

    #[track_caller]
    fn assert_all_bins_empty(q: &Sfb) {
        for slot in &q.state.slots {
            assert!(slot.bins.iter().flatten().all(|b| b.qlen_pkts == 0));
        }
    }

    /// Floods `flow` with no service until its p_min is 1 (draws never
    /// hit); returns the number of increments it took (arrivals after the
    /// first `target`, which only fill the bins).
    #[track_caller]
    fn increments_to_saturate(p: SfbParams) -> u64 {
        let mut q = sfb_with(p);
        let mut n = 0;
        while active_bins(&q, FLOOD).iter().any(|b| b.p_mark < SFB_P_ONE) {
            n += 1;
            assert!(n < 100_000, "no saturation");
            offer(&mut q, n, FLOOD, ms(n), NEVER);
        }
        n - p.target_pkts as u64
    }

    /// ECN on, increment 2137 (Q0.16), target 1: FLOOD has 23 packets
    /// queued and p_mark 22 * 2137 = 47014 in all its bins (arrival 1 found
    /// them empty, arrivals 2..=23 each raised them). The next arrival raises
    /// them to 23 * 2137 = 49151 (0.75), vector T21's p_min, and draws.
    fn sfb_flow_one_step_below_t21() -> Sfb {
        let mut q = sfb_with(SfbParams {
            increment: 2137.0 / 65535.0,
            ..quick()
        });
        assert_eq!(q.params.increment_q16(), 2137);
        for n in 1..=23 {
            assert_eq!(offer(&mut q, n, FLOOD, ms(n), NEVER), Verdict::Enqueued);
        }
        assert!(active_bins(&q, FLOOD).iter().all(|b| b.p_mark == 47014));
        q
    }

    // Fixed point (Linux's Q0.16 probabilities; T20, T21)

    #[test]
    fn test_tc_probabilities_convert_to_linux_q16_steps() {
        // tc: floor(0.0005 * 65535 + 0.5) = floor(33.27) = 33;
        // floor(0.00005 * 65535 + 0.5) = floor(3.78) = 3.
        let p = defaults();
        assert_eq!((p.increment_q16(), p.decrement_q16()), (33, 3));
        // The kernel's built-ins 66 and 11 read back: 0.001 -> 66.04, 0.000168 -> 11.51.
        assert_eq!((prob_to_q16(0.001), prob_to_q16(0.000168)), (66, 11));
        assert_eq!((prob_to_q16(1.0), prob_to_q16(0.0)), (SFB_P_ONE, 0));
    }

    #[test]
    fn test_unserved_flood_default_bins_saturate_after_1986_increments() {
        // ceil(65535 / 33) = 1986 (33 * 1985 = 65505 < 65535 <= 33 * 1986).
        assert_eq!(increments_to_saturate(defaults()), 1986);
        // Kernel increment 66: ceil(65535 / 66) = 993.
        let kernel = SfbParams {
            increment: 0.001,
            ..defaults()
        };
        assert_eq!(increments_to_saturate(kernel), 993);
    }

    #[test]
    fn test_unserved_flood_fills_bins_to_max_then_overflows() {
        let mut q = sfb_with(defaults());
        // Arrival n finds the flow's 8 bins at qlen min(n - 1, 25). Arrivals
        // 1..=25 are queued (from n = 21, qlen >= target 20 raises p_mark by
        // 33, and p_min = 33 (n - 20) never beats r = 65535); from n = 26
        // every bin holds max = 25: Overflow, yet p_mark still rises.
        for n in 1..=100u64 {
            let want = if n <= 25 {
                Verdict::Enqueued
            } else {
                Verdict::Dropped(DropReason::Overflow)
            };
            assert_eq!(offer(&mut q, n, FLOOD, ms(n), NEVER), want, "arrival {n}");
        }
        for b in active_bins(&q, FLOOD) {
            assert_eq!(
                b,
                SfbBin {
                    qlen_pkts: 25,
                    p_mark: 33 * 80
                }
            );
        }
        assert_eq!(q.backlog().pkts, 25);
    }

    #[test]
    fn test_p_min_three_quarters_hit_table_t21() {
        // p_min = 49151: 2 * (49151 - 32767) = 32768, so r < 32768 drops
        // (P = 0.5) and 32768 <= r < 49151 marks (P = 0.25).
        for (r, want) in [
            (0, SfbHit::Drop),
            (32767, SfbHit::Drop),
            (32768, SfbHit::MarkOrDrop),
            (49150, SfbHit::MarkOrDrop),
            (49151, SfbHit::Pass),
            (65535, SfbHit::Pass),
        ] {
            assert_eq!(sfb_hit(49151, r), want, "r = {r}");
        }
    }

    #[test]
    fn test_p_min_half_or_just_above_hit_table() {
        // 32767 is Linux's one half: not above it, every hit may mark.
        assert_eq!(sfb_hit(32767, 0), SfbHit::MarkOrDrop);
        assert_eq!(sfb_hit(32767, 32766), SfbHit::MarkOrDrop);
        assert_eq!(sfb_hit(32767, 32767), SfbHit::Pass);
        // 32768: 2 * (32768 - 32767) = 2, only r in {0, 1} drops.
        assert_eq!(sfb_hit(32768, 1), SfbHit::Drop);
        assert_eq!(sfb_hit(32768, 2), SfbHit::MarkOrDrop);
        // p_min = 1 (inelastic) never reaches the draw in sfb_decide; 0 never hits.
        assert_eq!(sfb_hit(0, 0), SfbHit::Pass);
    }

    #[test]
    fn test_draw_maps_to_16_bits() {
        assert_eq!(q16_draw(0.0), 0);
        assert_eq!(q16_draw(32767.0 / 65536.0), 32767);
        assert_eq!(q16_draw(32768.0 / 65536.0), 32768);
        assert_eq!(q16_draw(NEVER), 65535);
        assert_eq!(q16_draw(1.0 - f64::EPSILON), 65535);
    }

    #[test]
    fn test_three_quarters_flow_ect_draw_below_half_dropped_not_marked() {
        let mut q = sfb_flow_one_step_below_t21();
        let u = 32767.0 / 65536.0;
        assert_eq!(
            q.enqueue_with_draw(pkt(24, FLOOD, Ecn::Ect0), ms(24), u),
            Verdict::Dropped(DropReason::Early)
        );
        assert!(active_bins(&q, FLOOD).iter().all(|b| b.p_mark == 49151));
    }

    #[test]
    fn test_three_quarters_flow_ect_draw_in_mark_band_marked() {
        let mut q = sfb_flow_one_step_below_t21();
        let u = 32768.0 / 65536.0;
        assert_eq!(
            q.enqueue_with_draw(pkt(24, FLOOD, Ecn::Ect0), ms(24), u),
            Verdict::Marked
        );
        let last = drain(&mut q, ms(25)).pop().unwrap();
        assert_eq!((last.id, last.ecn), (24, Ecn::Ce));
    }

    #[test]
    fn test_three_quarters_flow_not_ect_draw_in_mark_band_dropped() {
        let mut q = sfb_flow_one_step_below_t21();
        let u = 49150.0 / 65536.0;
        assert_eq!(offer(&mut q, 24, FLOOD, ms(24), u), Verdict::Dropped(DropReason::Early));
    }

    #[test]
    fn test_three_quarters_flow_draw_at_p_min_passes() {
        let mut q = sfb_flow_one_step_below_t21();
        let u = 49151.0 / 65536.0;
        assert_eq!(offer(&mut q, 24, FLOOD, ms(24), u), Verdict::Enqueued);
    }

    #[test]
    fn test_ecn_off_three_quarters_flow_ect_draw_in_mark_band_dropped() {
        let mut q = sfb_flow_one_step_below_t21();
        q.params.ecn = false;
        let u = 32768.0 / 65536.0;
        assert_eq!(
            q.enqueue_with_draw(pkt(24, FLOOD, Ecn::Ect0), ms(24), u),
            Verdict::Dropped(DropReason::Early)
        );
    }

    // Misclassification (T22)

    #[test]
    fn test_hash_levels_misclassification_rate_matches_formula() {
        // A responsive flow is misclassified when each of its 8 bins is also
        // a bin of one of M non-responsive flows: (1 - (1 - 1/16)^M)^8 if
        // the 4-bit slices behave as independent uniform hashes.
        let formula = |m: i32| (1.0 - (15.0 / 16.0f64).powi(m)).powi(8);
        assert!((formula(10) - 0.002615).abs() < 5e-7);
        assert!((formula(20) - 0.0763).abs() < 5e-5);
        // Measured over 1000 keys x 1000 responsive flows with M = 20 (this
        // seed gives 0.07791, 2.1% above). The spread of the estimate is
        // about 1.5% of 0.0763 (per-key variation of the covered bins); the
        // bound is 5%.
        let mut keys = rng::stream(SEED, "t22");
        let (mut hits, mut trials) = (0u64, 0u64);
        for _ in 0..1000 {
            let slot = SfbSlot::new(keys.random());
            let mut covered = [[false; SFB_BINS]; SFB_LEVELS];
            for flow in 0..20 {
                let h = slot.hash(flow);
                for (level, row) in covered.iter_mut().enumerate() {
                    row[bin_index(h, level)] = true;
                }
            }
            for flow in 1000..2000 {
                let h = slot.hash(flow);
                trials += 1;
                if (0..SFB_LEVELS).all(|level| covered[level][bin_index(h, level)]) {
                    hits += 1;
                }
            }
        }
        let rate = hits as f64 / trials as f64;
        assert!((rate / formula(20) - 1.0).abs() < 0.05, "rate {rate}");
    }

    // Penalty box

    #[test]
    fn test_flood_among_mice_rate_limited_to_burst_plus_penalty_rate() {
        // target 2, increment 1 (a bin holding 2 packets saturates at the
        // next arrival), max 50, tc's bucket: 10 pkt/s, 20 deep. No service.
        let mut q = sfb_with(SfbParams {
            target_pkts: 2,
            max_pkts: 50,
            increment: 1.0,
            ..defaults()
        });
        // FLOOD sends at k * 10 ms, k = 0..=200 (100 pkt/s for 2 s); twenty
        // one-packet flows 100..=119 send at 5 + 100 j ms.
        let mut arrivals: Vec<(Time, u32)> = (0..=200).map(|k| (ms(10 * k), FLOOD)).collect();
        arrivals.extend((0..20).map(|j| (ms(5 + 100 * j), 100 + j as u32)));
        arrivals.sort();
        let mut flood_passed = Vec::new();
        for (id, &(now, flow)) in arrivals.iter().enumerate() {
            let v = offer(&mut q, id as u64, flow, now, NEVER);
            if flow == FLOOD {
                let k = now.nanos() / 10_000_000;
                match v {
                    Verdict::Enqueued => flood_passed.push(k),
                    Verdict::Dropped(reason) => assert_eq!(reason, DropReason::Penalty, "k = {k}"),
                    Verdict::Marked => panic!("inelastic packets pass unmarked"),
                }
            } else {
                assert_eq!(v, Verdict::Enqueued, "flow {flow}");
            }
        }
        // k = 0, 1 find the flow's bins below target: elastic, queued. From
        // k = 2 its bins hold 2 and saturate: inelastic. The bucket is full
        // (20; the 0.2 token of 0..20 ms is lost to the cap) and gains 0.1
        // token per 10 ms: after k = 2..=21 (20 passes) it holds
        // 20 - 20 + 19 * 0.1 = 1.9; k = 22 (2.0) and 23 (1.1) pass, leaving
        // 0.1; then one token per 100 ms, at k = 32, 42, ..., 192. k = 200
        // leaves 0.8 tokens.
        let mut want: Vec<u64> = (0..=23).collect();
        want.extend((32..=192).step_by(10));
        assert_eq!(flood_passed, want);
        // 2 elastic + 20 + 19 inelastic = 20 + floor(10 pkt/s * 1.98 s) + 2.
        assert_eq!(flood_passed.len(), 41);
        assert!(active_bins(&q, FLOOD).iter().all(|b| b.p_mark == SFB_P_ONE));
        // Only the flood was ever inelastic: k = 2..=200.
        assert_eq!(q.state.penalized, 199);
        // Traced: every bin is at 0 or 1 (increment 1, nothing emptied), the
        // fullest holds the 41 flood packets and any mice sharing it.
        let bins: Vec<SfbBin> = q.state.slots[0].bins.iter().flatten().copied().collect();
        let saturated = bins.iter().filter(|b| b.p_mark == SFB_P_ONE).count() as f64;
        let qlen_max = bins.iter().map(|b| b.qlen_pkts).max().unwrap();
        assert!((41..=61).contains(&qlen_max));
        let mut traced = Vec::new();
        q.traced(&mut |k, v| traced.push((k, v)));
        assert_eq!(
            traced,
            vec![
                ("p_mark_max", 1.0),
                ("p_mark_mean", saturated * 65535.0 / 65535.0 / 128.0),
                ("bin_qlen_max", qlen_max as f64),
                ("penalized", 199.0),
                ("tokens", 0.8),
            ]
        );
        let out = drain(&mut q, ms(3000));
        assert_eq!(out.iter().filter(|p| p.flow == FLOOD).count(), 41);
        assert_eq!(out.iter().filter(|p| p.flow != FLOOD).count(), 20);
        assert_all_bins_empty(&q);
    }

    #[test]
    fn test_empty_bucket_long_pause_refills_to_burst_only() {
        let mut q = sfb_with(SfbParams {
            penalty_rate_pps: 10,
            penalty_burst_pkts: 3,
            ..quick()
        });
        // Arrival 1 is elastic; 2..=4 take the 3 tokens; 5 finds none.
        for n in 1..=5 {
            offer(&mut q, n, FLOOD, ms(0), NEVER);
        }
        assert_eq!(q.state.penalized, 4);
        assert_eq!(q.state.token_nanos, 0);
        // 10 s later the bucket holds min(3, 100) = 3: three pass, one not.
        let got: Vec<Verdict> = (6..=9).map(|n| offer(&mut q, n, FLOOD, ms(10_000), NEVER)).collect();
        let pass = Verdict::Enqueued;
        assert_eq!(got, vec![pass, pass, pass, Verdict::Dropped(DropReason::Penalty)]);
    }

    #[test]
    fn test_zero_penalty_rate_or_burst_drops_every_inelastic_packet() {
        for (rate, burst) in [(0, 20), (10, 0)] {
            let mut q = sfb_with(SfbParams {
                penalty_rate_pps: rate,
                penalty_burst_pkts: burst,
                ..quick()
            });
            assert_eq!(offer(&mut q, 1, FLOOD, ms(0), NEVER), Verdict::Enqueued);
            assert_eq!(
                offer(&mut q, 2, FLOOD, ms(1000), NEVER),
                Verdict::Dropped(DropReason::Penalty)
            );
        }
    }

    // Limits

    #[test]
    fn test_full_queue_arrival_overflows_before_bins_change() {
        let mut q = sfb_with(SfbParams {
            limit: Limit::Packets(2),
            ..quick()
        });
        offer(&mut q, 1, FLOOD, ms(0), NEVER);
        offer(&mut q, 2, 3, ms(0), NEVER);
        let before = q.state.clone();
        assert_eq!(
            offer(&mut q, 3, FLOOD, ms(1), NEVER),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(q.state, before);
    }

    // Rehash

    #[test]
    fn test_rehash_clock_warmup_then_swap() {
        let mut q = sfb_with(SfbParams {
            rehash_interval: Duration::from_secs(10),
            warmup: Duration::from_secs(2),
            ..defaults()
        });
        let keys = (q.state.slots[0].key, q.state.slots[1].key);
        let at = |s: u64, ns: u64| Time::from_secs(s) + Duration(ns);
        // Double buffering from more than 10 - 2 = 8 s after the last swap.
        offer(&mut q, 1, 1, at(8, 0), NEVER);
        assert!(!q.state.double_buffering);
        offer(&mut q, 2, 1, at(8, 1), NEVER);
        assert!(q.state.double_buffering);
        offer(&mut q, 3, 1, at(10, 0), NEVER);
        assert_eq!(q.state.active, 0);
        // Swap more than 10 s after the last: slot 0 gets a new key and
        // goes standby, slot 1 becomes active.
        offer(&mut q, 4, 1, at(10, 1), NEVER);
        assert_eq!(q.state.active, 1);
        assert!(!q.state.double_buffering);
        assert_eq!(q.state.rehash_time, at(10, 1));
        assert_ne!(q.state.slots[0].key, keys.0);
        assert_eq!(q.state.slots[1].key, keys.1);
        offer(&mut q, 5, 1, at(18, 1), NEVER);
        assert!(!q.state.double_buffering);
        offer(&mut q, 6, 1, at(18, 2), NEVER);
        assert!(q.state.double_buffering);
    }

    #[test]
    fn test_zero_rehash_interval_never_swaps_or_double_buffers() {
        let mut q = sfb_with(quick());
        let keys = [q.state.slots[0].key, q.state.slots[1].key];
        offer(&mut q, 1, 1, Time::from_secs(1_000_000), NEVER);
        assert_eq!((q.state.active, q.state.double_buffering), (0, false));
        assert_eq!([q.state.slots[0].key, q.state.slots[1].key], keys);
    }

    #[test]
    fn test_double_buffering_inelastic_flow_warms_standby_slot_and_stays_penalized() {
        let mut q = sfb_with(SfbParams {
            rehash_interval: Duration::from_secs(10),
            warmup: Duration::from_secs(2),
            ..quick()
        });
        // 9.0 s: double buffering starts; elastic (bins empty), counted in
        // slot 0 only. 9.1 s: slot 0 bins hold 1 >= target, saturate:
        // inelastic, so also hashed into slot 1 (empty bins) and counted
        // there. 9.2 s: slot 1 bins hold 1, saturate too.
        for (n, t) in [(1, 9000), (2, 9100), (3, 9200)] {
            assert_eq!(offer(&mut q, n, FLOOD, ms(t), NEVER), Verdict::Enqueued);
        }
        // A one-packet flow is elastic: not counted in slot 1.
        assert_eq!(offer(&mut q, 4, 3, ms(9300), NEVER), Verdict::Enqueued);
        assert_eq!(q.state.penalized, 2);
        for b in q.state.slots[1].bins_of(FLOOD) {
            assert_eq!(
                b,
                SfbBin {
                    qlen_pkts: 2,
                    p_mark: SFB_P_ONE
                }
            );
        }
        for b in q.state.slots[0].bins_of(FLOOD) {
            assert_eq!(b.p_mark, SFB_P_ONE);
            assert!(b.qlen_pkts >= 3);
        }
        // 10.5 s: swap. Slot 1 is active and already knows the flood.
        assert_eq!(offer(&mut q, 5, FLOOD, ms(10_500), NEVER), Verdict::Enqueued);
        assert_eq!((q.state.active, q.state.penalized), (1, 3));
        // As in Linux, the new standby slot is not cleared.
        let old = q.state.slots[0].bins.iter().flatten();
        assert!(old.filter(|b| b.p_mark == SFB_P_ONE).count() >= SFB_LEVELS);
        // Every packet is uncounted from the bins it was counted in.
        assert_eq!(drain(&mut q, ms(11_000)).len(), 5);
        assert_all_bins_empty(&q);
    }

    // Draws

    #[test]
    fn test_enqueue_takes_one_draw_per_arrival_across_rehashes() {
        // Four responsive flows and a flood, ECN on, fast rehashing: the
        // verdicts of `enqueue` equal those of `enqueue_with_draw` fed the
        // same stream one draw per arrival.
        let p = SfbParams {
            target_pkts: 3,
            max_pkts: 6,
            increment: 0.05,
            decrement: 0.01,
            rehash_interval: Duration::from_millis(50),
            warmup: Duration::from_millis(20),
            ..defaults()
        };
        let (mut a, mut b) = (sfb_with(p), sfb_with(p));
        let mut draws = a.rng.clone();
        for i in 0..2000u64 {
            let now = ms(i);
            let flow = if i % 2 == 0 { FLOOD } else { (i % 8) as u32 };
            let p = pkt(i, flow, Ecn::Ect0);
            let va = a.enqueue(p, now, &mut Effects::default());
            let vb = b.enqueue_with_draw(p, now, rng::uniform(&mut draws));
            assert_eq!(va, vb, "arrival {i}");
            if i % 3 == 0 {
                a.dequeue(now, &mut Effects::default());
                b.dequeue(now, &mut Effects::default());
            }
        }
        assert_eq!(a.state, b.state);
        assert_ne!(a.state.rehash_time, Time::ZERO);
    }

    // Validation

    #[test]
    fn test_invalid_parameters_rejected_with_their_key() {
        let base = defaults();
        for (p, key) in [
            (SfbParams { max_pkts: 0, ..base }, "max"),
            (SfbParams { target_pkts: 0, ..base }, "target"),
            (
                SfbParams {
                    target_pkts: 26,
                    ..base
                },
                "target",
            ),
            (SfbParams { increment: 0.0, ..base }, "increment"),
            (SfbParams { increment: 1.5, ..base }, "increment"),
            (
                SfbParams {
                    increment: 7e-6,
                    ..base
                },
                "increment",
            ),
            (
                SfbParams {
                    increment: f64::NAN,
                    ..base
                },
                "increment",
            ),
            (
                SfbParams {
                    decrement: -0.1,
                    ..base
                },
                "decrement",
            ),
            (
                SfbParams {
                    decrement: 7e-6,
                    ..base
                },
                "decrement",
            ),
            (
                SfbParams {
                    limit: Limit::Bytes(0),
                    ..base
                },
                "limit",
            ),
        ] {
            assert_eq!(Sfb::new(p, SEED).unwrap_err().param, key, "{p:?}");
        }
        // Zero decrement, rates and intervals are allowed.
        let lenient = SfbParams {
            decrement: 0.0,
            penalty_rate_pps: 0,
            penalty_burst_pkts: 0,
            rehash_interval: Duration::ZERO,
            warmup: Duration::ZERO,
            ..base
        };
        assert!(Sfb::new(lenient, SEED).is_ok());
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for Sfb {
        const FIFO: bool = true;

        fn configs() -> BoxedStrategy<Sfb> {
            (any::<bool>(), any::<u64>())
                .prop_map(|(byte_limit, seed)| {
                    let limit = if byte_limit {
                        Limit::Bytes(12_000)
                    } else {
                        Limit::Packets(12)
                    };
                    let params = SfbParams {
                        limit,
                        target_pkts: 2,
                        max_pkts: 4,
                        increment: 0.2,
                        decrement: 0.01,
                        penalty_rate_pps: 50,
                        penalty_burst_pkts: 2,
                        rehash_interval: Duration::from_millis(300),
                        warmup: Duration::from_millis(100),
                        ecn: true,
                    };
                    Sfb::new(params, seed).unwrap()
                })
                .boxed()
        }

        fn check_state(&self, tally: &Tally) -> Result<(), TestCaseError> {
            // SFB decides on arrival only: it never discards a held packet.
            prop_assert_eq!(tally.discarded_total(), 0);
            prop_assert_eq!(self.hashes.len(), self.backlog().pkts as usize);
            // Each level of each slot counts exactly the queued packets
            // hashed into that slot.
            for (s, slot) in self.state.slots.iter().enumerate() {
                let counted = self.hashes.iter().filter(|h| h[s].is_some()).count() as u32;
                for row in &slot.bins {
                    prop_assert_eq!(row.iter().map(|b| b.qlen_pkts).sum::<u32>(), counted);
                }
            }
            Ok(())
        }
    }
}
