//! BLUE: one marking probability driven by packet loss and link idleness.
//!
//! W. Feng, D. D. Kandlur, D. Saha, K. G. Shin, "BLUE: A New Class of Active
//! Queue Management Algorithms", University of Michigan, CSE-TR-387-99, April
//! 1999; journal version "The BLUE Active Queue Management Algorithms",
//! IEEE/ACM Transactions on Networking 10(4), August 2002. Implemented: the
//! BLUE algorithm of the paper's section on BLUE (its pseudo-code), i.e.
//!
//! ```text
//! on packet loss (buffer overflow), or an arrival finding the queue longer than L:
//!     if now - last_update > freeze_time: p_m = min(1, p_m + d1); last_update = now
//! on link idle:
//!     if now - last_update > freeze_time: p_m = max(0, p_m - d2); last_update = now
//! on every arrival: mark (ECN) or drop with probability p_m
//! ```
//!
//! Heads up: ALTQ's BLUE and the ns-3 ports of Feng's code differ from the
//! paper and from each other; the choices below say which one each rule
//! follows and which differences were not taken.
//!
//! # Parameters ([`BlueParams`])
//!
//! * `limit`: the hard buffer limit, packets or bytes.
//! * `d1` in (0, 1], default 0.02: the step added to p_m on loss. The paper's
//!   design rule is `d1 >> d2`; its simulations reportedly use 0.02/0.002
//!   and 0.0025/0.00025 (unverified).
//! * `d2` in (0, 1], default 0.002: the step taken off p_m when the link idles.
//! * `freeze_time` > 0, default 100 ms: the least time between two changes of
//!   p_m (the same reported configurations use 10 ms and 100 ms).
//! * `l_threshold` (`L`), default `None`: an arrival that finds the queue
//!   longer than L (packets or bytes, before the arrival is queued) raises p_m
//!   as a loss does, whether or not the arrival is then queued. `None` (or
//!   `Some(Limit::Unlimited)`) means the limit, i.e. only overflow raises p_m.
//!   The unit need not be the limit's.
//! * `ecn`, default false: an ECN-capable arrival (ECT or CE) that draws a
//!   congestion signal is marked CE and queued instead of dropped.
//!
//! # Choices where the paper is silent
//!
//! * **Order at an arrival.** (1) Idle catch-up (below); (2) one uniform draw
//!   `u` in [0, 1) per arrival, compared with p_m as it stands: `u < p_m` is
//!   a hit; (3) if the arrival finds the queue longer than L, p_m may rise;
//!   (4) a hit that cannot be marked is an early drop (`DropReason::Early`),
//!   and is not a loss from overflow, so it does not raise p_m; (5) an arrival
//!   the limit does not admit is dropped (`Overflow`) and raises p_m (at most
//!   one rise per arrival, since the freeze time starts anew); (6) a hit that
//!   can be marked is queued with CE. Drawing before the limit check keeps the
//!   draws aligned arrival by arrival whatever the queue holds, as Bernoulli.
//! * **Link idle** is a `dequeue` that returns `None` (the link goes idle),
//!   as in the `jaysshinde/BLUE` ns-3 port of Feng's ns code, not ALTQ's
//!   "next arrival after an idle period". The decrement happens there,
//!   freeze time permitting.
//! * **Idle catch-up.** The simulator gets no further event while the link
//!   stays idle, so the first arrival after an idle period applies what an
//!   idle link examined continuously would have done: further decrements
//!   dated `last_update + k * freeze_time`, k = 1, 2, ..., each counted if it
//!   falls strictly before the arrival. Their number is
//!   `n = ceil((now - last_update) / freeze_time) - 1` (in integer
//!   nanoseconds, `(now - last_update - 1) / freeze_time`), p_m becomes
//!   `max(0, p_m - n * d2)` and `last_update` becomes the date of the last
//!   one, `last_update + n * freeze_time` (not `now`): a rise right after a
//!   long idle period still waits out the freeze time from that date. This is
//!   the `floor(idle / freeze_time)` variant of the ns-3 port, anchored at the
//!   last update rather than at the start of the idle period.
//! * **First update.** `last_update` starts unset, so the first rise or fall
//!   is never frozen.
//! * **ALTQ differences not taken:** ALTQ raises p_m by 1/8 per forced drop,
//!   lowers it by 0.001 only at the next arrival after an idle period longer
//!   than its hold time, resets it after about a second of idleness, and
//!   never early-drops when at most one packet is queued.

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::rng::{self, Rng};
use crate::time::{Duration, Time};
use crate::{DropReason, Effects, ParamError, QueueDisc, Verdict};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BlueParams {
    pub limit: Limit,
    /// Increase step of p_m on loss, in (0, 1].
    pub d1: f64,
    /// Decrease step of p_m on link idle, in (0, 1].
    pub d2: f64,
    /// Least time between two changes of p_m; positive.
    pub freeze_time: Duration,
    /// `L`: an arrival finding the queue longer than this raises p_m.
    /// `None` means the limit (overflow only).
    pub l_threshold: Option<Limit>,
    pub ecn: bool,
}

impl BlueParams {
    pub const DEFAULT_D1: f64 = 0.02;
    pub const DEFAULT_D2: f64 = 0.002;
    pub const DEFAULT_FREEZE_TIME: Duration = Duration::from_millis(100);

    /// aqmlab's defaults with the given limit.
    pub fn new(limit: Limit) -> BlueParams {
        BlueParams {
            limit,
            d1: BlueParams::DEFAULT_D1,
            d2: BlueParams::DEFAULT_D2,
            freeze_time: BlueParams::DEFAULT_FREEZE_TIME,
            l_threshold: None,
            ecn: false,
        }
    }

    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        for (key, step) in [("d1", self.d1), ("d2", self.d2)] {
            if !(step > 0.0 && step <= 1.0) {
                return Err(ParamError::new(key, format!("must be in (0, 1] (got {step})")));
            }
        }
        if self.freeze_time == Duration::ZERO {
            return Err(ParamError::new("freeze_time", "must be positive (got 0)"));
        }
        Ok(())
    }
}

#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct BlueState {
    /// The marking probability applied to every arrival, in [0, 1].
    pub p_m: f64,
    /// The date of the last change of p_m (see the idle catch-up in the
    /// module doc); unset before the first.
    pub last_update: Option<Time>,
    /// When the link went idle, if no packet has arrived since.
    pub idle_since: Option<Time>,
}

/// Whether p_m may change at `now`: more than `freeze_time` since the last
/// change, or no change yet.
#[inline]
fn unfrozen(p: &BlueParams, s: &BlueState, now: Time) -> bool {
    match s.last_update {
        None => true,
        Some(t) => now.saturating_since(t) > p.freeze_time,
    }
}

/// Loss or an over-L arrival: `p_m = min(1, p_m + d1)` unless frozen.
/// Returns whether p_m was updated.
pub fn blue_increase(p: &BlueParams, s: &mut BlueState, now: Time) -> bool {
    if !unfrozen(p, s, now) {
        return false;
    }
    s.p_m = (s.p_m + p.d1).min(1.0);
    s.last_update = Some(now);
    true
}

/// A dequeue found the queue empty: `p_m = max(0, p_m - d2)` unless frozen,
/// and the idle period starts. Returns whether p_m was updated.
pub fn blue_link_idle(p: &BlueParams, s: &mut BlueState, now: Time) -> bool {
    if s.idle_since.is_none() {
        s.idle_since = Some(now);
    }
    if !unfrozen(p, s, now) {
        return false;
    }
    s.p_m = (s.p_m - p.d2).max(0.0);
    s.last_update = Some(now);
    true
}

/// The first arrival after an idle period: applies the decrements an idle
/// link examined continuously would have applied, one per whole
/// `freeze_time` that ends strictly before `now` counting from
/// `last_update`, and ends the idle period. Returns their number.
pub fn blue_idle_catch_up(p: &BlueParams, s: &mut BlueState, now: Time) -> u64 {
    if s.idle_since.take().is_none() {
        return 0;
    }
    let Some(last) = s.last_update else {
        return 0;
    };
    let elapsed = now.saturating_since(last).nanos();
    if elapsed == 0 {
        return 0;
    }
    // ceil(elapsed / F) - 1 = (elapsed - 1) / F for elapsed >= 1.
    let n = (elapsed - 1) / p.freeze_time.nanos();
    if n > 0 {
        s.p_m = (s.p_m - n as f64 * p.d2).max(0.0);
        s.last_update = Some(last + Duration(n * p.freeze_time.nanos()));
    }
    n
}

/// Whether a queue holding `backlog` is longer than `l`.
#[inline]
fn longer_than(backlog: Backlog, l: Limit) -> bool {
    match l {
        Limit::Packets(n) => backlog.pkts > n,
        Limit::Bytes(b) => backlog.bytes > b,
        Limit::Unlimited => false,
    }
}

/// The arrival rule (see the module doc for the order). `backlog` is what
/// the queue holds before the arrival, `ect` whether the arrival is
/// ECN-capable, `u` the arrival's uniform draw in [0, 1). The verdict says
/// what to do with the arrival; `Marked` means queue it with CE.
pub fn blue_decide(
    p: &BlueParams,
    s: &mut BlueState,
    backlog: Backlog,
    size_bytes: u32,
    ect: bool,
    now: Time,
    u: f64,
) -> Verdict {
    blue_idle_catch_up(p, s, now);
    let hit = u < s.p_m;
    if p.l_threshold.is_some_and(|l| longer_than(backlog, l)) {
        blue_increase(p, s, now);
    }
    let markable = p.ecn && ect;
    if hit && !markable {
        return Verdict::Dropped(DropReason::Early);
    }
    if !p.limit.admits(backlog, size_bytes) {
        blue_increase(p, s, now);
        return Verdict::Dropped(DropReason::Overflow);
    }
    if hit {
        Verdict::Marked
    } else {
        Verdict::Enqueued
    }
}

#[derive(Clone, Debug)]
pub struct Blue {
    params: BlueParams,
    state: BlueState,
    fifo: Fifo,
    rng: Rng,
}

impl Blue {
    pub fn new(params: BlueParams, seed: u64) -> Result<Blue, ParamError> {
        params.validate()?;
        Ok(Blue {
            params,
            state: BlueState::default(),
            fifo: Fifo::new(),
            rng: <Rng as rand::SeedableRng>::seed_from_u64(seed),
        })
    }

    /// The parameters in force. BLUE configures nothing automatically, so
    /// these are the parameters given (`l_threshold: None` stays `None`,
    /// meaning the limit).
    pub fn effective(&self) -> BlueParams {
        self.params
    }

    pub fn state(&self) -> &BlueState {
        &self.state
    }

    /// The enqueue rule with the uniform draw given, for scripted tests.
    pub fn enqueue_with_draw(&mut self, mut pkt: Packet, now: Time, u: f64) -> Verdict {
        let verdict = blue_decide(
            &self.params,
            &mut self.state,
            self.fifo.backlog(),
            pkt.size_bytes,
            pkt.ecn.is_ecn_capable(),
            now,
            u,
        );
        match verdict {
            Verdict::Enqueued => self.fifo.push_back(pkt),
            Verdict::Marked => {
                pkt.ecn = Ecn::Ce;
                self.fifo.push_back(pkt);
            }
            Verdict::Dropped(_) => {}
        }
        verdict
    }
}

impl QueueDisc for Blue {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now: Time, _fx: &mut Effects) -> Verdict {
        let u = rng::uniform(&mut self.rng);
        self.enqueue_with_draw(pkt, now, u)
    }

    #[inline]
    fn dequeue(&mut self, now: Time, _fx: &mut Effects) -> Option<Packet> {
        let pkt = self.fifo.pop_front();
        if pkt.is_none() {
            blue_link_idle(&self.params, &mut self.state, now);
        }
        pkt
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("p_m", self.state.p_m);
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Constants

    /// Dyadic steps, so that sums and differences are exact in binary.
    const D1: f64 = 0.25;
    const D2: f64 = 1.0 / 64.0;
    const F: Duration = Duration::from_millis(100);
    /// Draws that never hit (p_m < 1) and always hit (p_m > 0).
    const MISS: f64 = 0.999_999;
    const HIT: f64 = 0.0;

    // Helpers

    fn ms(t: u64) -> Time {
        Time::from_millis(t)
    }

    fn pkt(id: u64, ecn: Ecn) -> Packet {
        Packet {
            id,
            size_bytes: 100,
            ecn,
            ..Packet::default()
        }
    }

    fn params(limit: u32) -> BlueParams {
        BlueParams {
            limit: Limit::Packets(limit),
            d1: D1,
            d2: D2,
            freeze_time: F,
            l_threshold: None,
            ecn: false,
        }
    }

    fn blue_with(p: BlueParams) -> Blue {
        Blue::new(p, 1).unwrap()
    }

    /// An empty BLUE queue, limit 2, p_m = 0, never updated.
    fn blue_fresh() -> Blue {
        blue_with(params(2))
    }

    /// Offers a packet with a draw that never hits (p_m < 1).
    #[track_caller]
    fn offer(q: &mut Blue, id: u64, now: Time) -> Verdict {
        q.enqueue_with_draw(pkt(id, Ecn::NotEct), now, MISS)
    }

    /// Fills the queue to its limit at `now` with draws that never hit.
    #[track_caller]
    fn fill(q: &mut Blue, now: Time) {
        let mut id = 1000;
        while q.params.limit.admits(q.backlog(), 100) {
            assert_eq!(offer(q, id, now), Verdict::Enqueued);
            id += 1;
        }
    }

    /// Fills the queue and overflows it once at `now`.
    #[track_caller]
    fn overflow(q: &mut Blue, now: Time) {
        fill(q, now);
        assert_eq!(offer(q, 1, now), Verdict::Dropped(DropReason::Overflow));
    }

    #[track_caller]
    fn drain(q: &mut Blue, now: Time) -> Vec<Packet> {
        let mut out = Vec::new();
        while let Some(p) = q.dequeue(now, &mut Effects::default()) {
            out.push(p);
        }
        out
    }

    /// p_m = 0.5 (two rises, at 0 and 150 ms), the queue drained and the
    /// link gone idle at 300 ms, 150 ms after the last rise, which took one
    /// d2: p_m = 0.5 - 1/64, last_update = 300 ms.
    fn blue_idle_since_300ms() -> Blue {
        let mut q = blue_fresh();
        overflow(&mut q, ms(0));
        overflow(&mut q, ms(150));
        drain(&mut q, ms(300));
        assert_eq!(q.state.p_m, 0.5 - D2);
        assert_eq!(q.state.last_update, Some(ms(300)));
        assert_eq!(q.state.idle_since, Some(ms(300)));
        q
    }

    // Rises

    #[test]
    fn test_fresh_overflow_raises_p_m_by_d1() {
        let mut q = blue_fresh();
        overflow(&mut q, ms(5));
        // Never updated before: not frozen. 0 + 0.25.
        assert_eq!(q.state.p_m, D1);
        assert_eq!(q.state.last_update, Some(ms(5)));
    }

    #[test]
    fn test_recent_rise_overflow_within_freeze_time_keeps_p_m() {
        let mut q = blue_fresh();
        overflow(&mut q, ms(0));
        // 100 ms after the rise is not more than freeze_time: frozen.
        assert_eq!(offer(&mut q, 2, ms(100)), Verdict::Dropped(DropReason::Overflow));
        assert_eq!(q.state.p_m, D1);
        assert_eq!(q.state.last_update, Some(ms(0)));
        // 100 ms + 1 ns is: 0.25 + 0.25.
        let later = ms(100) + Duration(1);
        assert_eq!(offer(&mut q, 3, later), Verdict::Dropped(DropReason::Overflow));
        assert_eq!(q.state.p_m, 2.0 * D1);
        assert_eq!(q.state.last_update, Some(later));
    }

    #[test]
    fn test_high_p_m_overflows_cap_p_m_at_one() {
        let mut q = blue_with(BlueParams { d1: 0.75, ..params(2) });
        overflow(&mut q, ms(0));
        overflow(&mut q, ms(200));
        // 0.75 + 0.75 capped at 1; last_update still moves.
        assert_eq!(q.state.p_m, 1.0);
        assert_eq!(q.state.last_update, Some(ms(200)));
    }

    #[test]
    fn test_queue_longer_than_l_arrival_raises_p_m_and_is_queued() {
        let mut q = blue_with(BlueParams {
            l_threshold: Some(Limit::Packets(1)),
            ..params(10)
        });
        // Arrivals see 0 and 1 packets: not longer than L = 1.
        assert_eq!(offer(&mut q, 1, ms(0)), Verdict::Enqueued);
        assert_eq!(offer(&mut q, 2, ms(0)), Verdict::Enqueued);
        assert_eq!(q.state.p_m, 0.0);
        // The third sees 2 > 1: p_m rises, and the packet is still queued.
        assert_eq!(offer(&mut q, 3, ms(1)), Verdict::Enqueued);
        assert_eq!(q.state.p_m, D1);
        assert_eq!(q.backlog().pkts, 3);
    }

    #[test]
    fn test_byte_l_threshold_counts_bytes() {
        let mut q = blue_with(BlueParams {
            l_threshold: Some(Limit::Bytes(150)),
            ..params(10)
        });
        offer(&mut q, 1, ms(0));
        // Sees 100 B, not longer than 150 B.
        offer(&mut q, 2, ms(0));
        assert_eq!(q.state.p_m, 0.0);
        // Sees 200 B > 150 B.
        offer(&mut q, 3, ms(0));
        assert_eq!(q.state.p_m, D1);
    }

    #[test]
    fn test_over_l_and_overflow_at_one_arrival_raise_p_m_once() {
        let mut q = blue_with(BlueParams {
            l_threshold: Some(Limit::Packets(0)),
            ..params(1)
        });
        assert_eq!(offer(&mut q, 1, ms(0)), Verdict::Enqueued);
        // Sees 1 > L = 0 (rise at 1 ms), then overflows: frozen, no second rise.
        assert_eq!(offer(&mut q, 2, ms(1)), Verdict::Dropped(DropReason::Overflow));
        assert_eq!(q.state.p_m, D1);
    }

    // Early drops and marks

    #[test]
    fn test_draw_below_p_m_drops_early_without_ecn() {
        let mut q = blue_with(params(4));
        overflow(&mut q, ms(0));
        drain(&mut q, ms(0));
        // p_m = 0.25 (the idle at 0 ms is frozen). u < 0.25 drops; u = 0.25 does not.
        assert_eq!(q.state.p_m, D1);
        let v1 = q.enqueue_with_draw(pkt(1, Ecn::NotEct), ms(1), 0.249_999);
        let v2 = q.enqueue_with_draw(pkt(2, Ecn::NotEct), ms(1), 0.25);
        assert_eq!(v1, Verdict::Dropped(DropReason::Early));
        assert_eq!(v2, Verdict::Enqueued);
        // An early drop is not an overflow: p_m unchanged.
        assert_eq!(q.state.p_m, D1);
    }

    #[test]
    fn test_ecn_on_hit_marks_ect_and_drops_not_ect() {
        let mut q = blue_with(BlueParams { ecn: true, ..params(4) });
        overflow(&mut q, ms(0));
        drain(&mut q, ms(0));
        let ect = q.enqueue_with_draw(pkt(1, Ecn::Ect0), ms(1), HIT);
        let ce = q.enqueue_with_draw(pkt(2, Ecn::Ce), ms(1), HIT);
        let not_ect = q.enqueue_with_draw(pkt(3, Ecn::NotEct), ms(1), HIT);
        assert_eq!(
            (ect, ce, not_ect),
            (Verdict::Marked, Verdict::Marked, Verdict::Dropped(DropReason::Early))
        );
        let queued: Vec<(u64, Ecn)> = drain(&mut q, ms(2)).iter().map(|p| (p.id, p.ecn)).collect();
        assert_eq!(queued, vec![(1, Ecn::Ce), (2, Ecn::Ce)]);
    }

    #[test]
    fn test_ecn_off_hit_drops_ect() {
        let mut q = blue_with(params(4));
        overflow(&mut q, ms(0));
        drain(&mut q, ms(0));
        assert_eq!(
            q.enqueue_with_draw(pkt(1, Ecn::Ect0), ms(1), HIT),
            Verdict::Dropped(DropReason::Early)
        );
    }

    #[test]
    fn test_full_queue_early_hit_is_early_drop_and_keeps_p_m() {
        let mut q = blue_fresh();
        overflow(&mut q, ms(0));
        // Still full. At 200 ms (unfrozen) a hit is dropped early before the
        // limit is checked: not a loss from overflow, p_m stays 0.25.
        assert_eq!(
            q.enqueue_with_draw(pkt(1, Ecn::NotEct), ms(200), HIT),
            Verdict::Dropped(DropReason::Early)
        );
        assert_eq!(q.state.p_m, D1);
    }

    #[test]
    fn test_full_queue_markable_hit_overflows_and_raises_p_m() {
        let mut q = blue_with(BlueParams { ecn: true, ..params(2) });
        overflow(&mut q, ms(0));
        assert_eq!(
            q.enqueue_with_draw(pkt(1, Ecn::Ect0), ms(200), HIT),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(q.state.p_m, 2.0 * D1);
    }

    // Idle

    #[test]
    fn test_recent_rise_link_idle_after_freeze_time_lowers_p_m_by_d2() {
        let mut q = blue_fresh();
        overflow(&mut q, ms(0));
        // The dequeue that finds the queue empty comes 101 ms after the rise.
        let idle = ms(101);
        drain(&mut q, idle);
        assert_eq!(q.state.p_m, D1 - D2);
        assert_eq!(q.state.last_update, Some(idle));
        assert_eq!(q.state.idle_since, Some(idle));
    }

    #[test]
    fn test_recent_rise_link_idle_within_freeze_time_keeps_p_m() {
        let mut q = blue_fresh();
        overflow(&mut q, ms(0));
        // Idle 100 ms after the rise: not more than F, no decrement.
        drain(&mut q, ms(100));
        assert_eq!(q.state.p_m, D1);
        assert_eq!(q.state.last_update, Some(ms(0)));
        assert_eq!(q.state.idle_since, Some(ms(100)));
    }

    #[test]
    fn test_idle_arrival_within_freeze_time_applies_no_catch_up() {
        let mut q = blue_idle_since_300ms();
        // 100 ms after the last update: ceil(100/100) - 1 = 0 decrements.
        assert_eq!(offer(&mut q, 1, ms(400)), Verdict::Enqueued);
        assert_eq!(q.state.p_m, 0.5 - D2);
        assert_eq!(q.state.last_update, Some(ms(300)));
        assert_eq!(q.state.idle_since, None);
    }

    #[test]
    fn test_long_idle_arrival_applies_one_d2_per_whole_freeze_time() {
        let mut q = blue_idle_since_300ms();
        // Idle from 300 ms, arrival at 650 ms: decrements dated 400, 500,
        // 600 ms fall before it, n = (350 ms - 1 ns) / 100 ms = 3.
        // p_m = 0.5 - 1/64 - 3/64 = 0.4375; last_update = 600 ms.
        assert_eq!(offer(&mut q, 1, ms(650)), Verdict::Enqueued);
        assert_eq!(q.state.p_m, 0.5 - 4.0 * D2);
        assert_eq!(q.state.last_update, Some(ms(600)));
    }

    #[test]
    fn test_idle_catch_up_counts_only_freeze_times_ending_before_arrival() {
        // Arrival at exactly 600 ms: the decrement dated 600 ms is not
        // strictly before it, n = (300 ms - 1 ns) / 100 ms = 2.
        let mut q = blue_idle_since_300ms();
        offer(&mut q, 1, ms(600));
        assert_eq!(q.state.p_m, 0.5 - 3.0 * D2);
        assert_eq!(q.state.last_update, Some(ms(500)));
        // One nanosecond later it is: n = 3.
        let mut q = blue_idle_since_300ms();
        offer(&mut q, 1, ms(600) + Duration(1));
        assert_eq!(q.state.p_m, 0.5 - 4.0 * D2);
        assert_eq!(q.state.last_update, Some(ms(600)));
    }

    #[test]
    fn test_caught_up_idle_overflow_waits_freeze_time_from_last_decrement() {
        let mut q = blue_with(params(1));
        overflow(&mut q, ms(0));
        drain(&mut q, ms(150));
        // p_m = 0.25 - 1/64, last_update 150 ms. Arrival at 420 ms: n =
        // (270 ms - 1 ns) / 100 ms = 2, p_m = 0.25 - 3/64, last_update 350 ms.
        assert_eq!(offer(&mut q, 1, ms(420)), Verdict::Enqueued);
        assert_eq!(q.state.last_update, Some(ms(350)));
        // Overflow at 440 ms: 90 ms after 350 ms, frozen.
        assert_eq!(offer(&mut q, 2, ms(440)), Verdict::Dropped(DropReason::Overflow));
        assert_eq!(q.state.p_m, D1 - 3.0 * D2);
        // Overflow at 451 ms: 101 ms after, rises.
        offer(&mut q, 3, ms(451));
        assert_eq!(q.state.p_m, D1 - 3.0 * D2 + D1);
    }

    #[test]
    fn test_very_long_idle_floors_p_m_at_zero() {
        let mut q = blue_idle_since_300ms();
        // 3600 s idle: n = 35999 decrements, far more than p_m holds.
        offer(&mut q, 1, Time::from_secs(3600) + Duration::from_millis(300));
        assert_eq!(q.state.p_m, 0.0);
        assert_eq!(
            q.state.last_update,
            Some(Time::from_secs(3600) + Duration::from_millis(200))
        );
    }

    #[test]
    fn test_busy_link_arrival_applies_no_catch_up() {
        let mut q = blue_fresh();
        overflow(&mut q, ms(0));
        drain(&mut q, ms(0));
        // The idle period (frozen, no decrement) ends with the arrival at
        // 1 ms (0 whole freeze times). No dequeue finds the queue empty after
        // it, so an arrival 10 s later applies no catch-up.
        offer(&mut q, 1, ms(1));
        assert_eq!(offer(&mut q, 2, ms(10_000)), Verdict::Enqueued);
        assert_eq!(q.state.p_m, D1);
    }

    #[test]
    fn test_idle_link_dropped_arrival_next_dequeue_keeps_catch_up_dates() {
        let mut q = blue_idle_since_300ms();
        // Arrival at 650 ms is dropped early (u = 0 < p_m); three decrements
        // dated up to 600 ms; the engine then finds the queue empty again at
        // 650 ms: 50 ms after 600 ms, frozen.
        assert_eq!(
            q.enqueue_with_draw(pkt(1, Ecn::NotEct), ms(650), HIT),
            Verdict::Dropped(DropReason::Early)
        );
        assert!(q.dequeue(ms(650), &mut Effects::default()).is_none());
        assert_eq!(q.state.p_m, 0.5 - 4.0 * D2);
        assert_eq!(q.state.idle_since, Some(ms(650)));
        // Next arrival at 1000 ms: (400 ms - 1 ns) / 100 ms = 3 more.
        offer(&mut q, 2, ms(1000));
        assert_eq!(q.state.p_m, 0.5 - 7.0 * D2);
        assert_eq!(q.state.last_update, Some(ms(900)));
    }

    // Defaults (the cases of ALTQ's BLUE, with aqmlab's values and semantics)

    #[test]
    fn test_defaults_overflow_idle_and_long_idle() {
        let mut q = blue_with(BlueParams::new(Limit::Packets(2)));
        overflow(&mut q, ms(0));
        assert_eq!(q.state.p_m, 0.02);
        // Idle 150 ms after the rise: one d2.
        drain(&mut q, ms(150));
        assert_eq!(q.state.p_m, 0.02 - 0.002);
        // Idle 30 ms after the rise (in a fresh queue): unchanged.
        let mut r = blue_with(BlueParams::new(Limit::Packets(2)));
        overflow(&mut r, ms(0));
        drain(&mut r, ms(30));
        assert_eq!(r.state.p_m, 0.02);
        // First queue, still idle: last_update = 150 ms, arrival at 2150 ms,
        // n = (2 s - 1 ns) / 100 ms = 19; 0.018 - 19 * 0.002 < 0, floored.
        offer(&mut q, 1, ms(2150));
        assert_eq!(q.state.p_m, 0.0);
        assert_eq!(q.state.last_update, Some(ms(2050)));
    }

    // Draws

    #[test]
    fn test_enqueue_takes_one_draw_per_arrival() {
        // With p_m = 0.5 (two rises), the verdicts of `enqueue` equal those of
        // `enqueue_with_draw` fed the same stream one draw per arrival,
        // overflows included.
        let make = || {
            let mut q = blue_with(params(3));
            overflow(&mut q, ms(0));
            overflow(&mut q, ms(150));
            assert_eq!(q.state.p_m, 2.0 * D1);
            q
        };
        let (mut a, mut b) = (make(), make());
        let mut draws = a.rng.clone();
        for i in 0..200 {
            let now = ms(300 + i);
            let va = a.enqueue(pkt(i, Ecn::NotEct), now, &mut Effects::default());
            let vb = b.enqueue_with_draw(pkt(i, Ecn::NotEct), now, rng::uniform(&mut draws));
            assert_eq!(va, vb, "arrival {i}");
            if i % 3 == 0 {
                a.dequeue(now, &mut Effects::default());
                b.dequeue(now, &mut Effects::default());
            }
        }
        assert_eq!(a.state, b.state);
    }

    // Validation

    #[test]
    fn test_steps_outside_unit_interval_rejected() {
        for (p, key) in [
            (BlueParams { d1: 0.0, ..params(5) }, "d1"),
            (BlueParams { d1: 1.5, ..params(5) }, "d1"),
            (
                BlueParams {
                    d2: f64::NAN,
                    ..params(5)
                },
                "d2",
            ),
            (BlueParams { d2: -0.1, ..params(5) }, "d2"),
        ] {
            assert_eq!(Blue::new(p, 1).unwrap_err().param, key);
        }
    }

    #[test]
    fn test_zero_freeze_time_rejected() {
        let err = Blue::new(
            BlueParams {
                freeze_time: Duration::ZERO,
                ..params(5)
            },
            1,
        )
        .unwrap_err();
        assert_eq!(err.param, "freeze_time");
    }

    #[test]
    fn test_traced_reports_p_m() {
        let mut q = blue_fresh();
        overflow(&mut q, ms(0));
        let mut seen = Vec::new();
        q.traced(&mut |k, v| seen.push((k, v)));
        assert_eq!(seen, vec![("p_m", D1)]);
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for Blue {
        const FIFO: bool = true;

        fn configs() -> BoxedStrategy<Blue> {
            (any::<bool>(), any::<bool>(), any::<u64>())
                .prop_map(|(byte_limit, ecn, seed)| {
                    let limit = if byte_limit {
                        Limit::Bytes(6000)
                    } else {
                        Limit::Packets(8)
                    };
                    let params = BlueParams {
                        limit,
                        d1: 0.1,
                        d2: 0.01,
                        freeze_time: Duration::from_millis(10),
                        l_threshold: Some(Limit::Packets(4)),
                        ecn,
                    };
                    Blue::new(params, seed).unwrap()
                })
                .boxed()
        }

        fn check_state(&self, tally: &Tally) -> Result<(), TestCaseError> {
            // BLUE decides on arrival only: it never discards a held packet.
            prop_assert_eq!(tally.discarded_total(), 0);
            prop_assert!((0.0..=1.0).contains(&self.state.p_m));
            Ok(())
        }
    }
}
