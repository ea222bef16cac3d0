//! COBALT, CoDel and BLUE Alternate: the per-flow AQM of CAKE, described in
//! T. Høiland-Jørgensen, D. Täht and J. Morton, "Piece of CAKE: A
//! Comprehensive Queue Management Solution for Home Gateways", IEEE LANMAN
//! 2018 (its AQM section), as Linux's `sch_cake.c` implements it
//! (`cobalt_should_drop`, `cobalt_queue_full`, `cobalt_queue_empty`), and
//! as ns-3's `CobaltQueueDisc` runs it on a single queue (J. Palmei,
//! S. Gupta, P. Imputato, J. Morton, M. Tahiliani, S. Avallone and
//! D. Täht, "Design and Evaluation of COBALT Queue Discipline", IEEE LANMAN
//! 2019), which is what this discipline is and should be compared with.
//!
//! Heads up: read CoDel (RFC 8289 and `codel.rs`) and BLUE (`blue.rs`)
//! first; COBALT's CoDel is a restructured one, not RFC 8289's pseudo-code.
//!
//! # The algorithm
//!
//! CoDel part, at each dequeue ([`cobalt_should_drop`], with the packet's
//! `sojourn`; "due" means `count > 0` and `now >= drop_next`, taken before
//! anything changes):
//! - `sojourn > target`: enter the dropping state if not in it, with
//!   `drop_next = now + interval / sqrt(max(count, 1))`; `count` becomes at
//!   least 1. Otherwise leave the dropping state.
//! - Due and dropping: signal (mark if ECN-capable and `ecn`, else drop,
//!   reason `Head`), `count += 1`, `drop_next += interval / sqrt(count)`.
//! - Due and not dropping: while due, `count -= 1` and
//!   `drop_next += interval / sqrt(max(count, 1))`. The drop rate is thus
//!   remembered and decays while the delay is low, instead of RFC 8289's
//!   re-entry rule; and `interval` after entry plays the role of RFC 8289's
//!   `first_above_time`.
//! - Afterwards, `drop_next` doubles as an activity timer: with `count == 0`
//!   it becomes `now + interval`; else, if `now` was after `drop_next` (its
//!   value after the control law moved it, or before entry if it did not)
//!   and the packet is not dropped, it becomes `now`.
//!
//! BLUE part, `p_drop` in [0, 1]:
//! - An arrival that finds the queue full ([`cobalt_queue_full`]) raises
//!   `p_drop` by `increment`, and a dequeue that finds the queue empty
//!   ([`cobalt_queue_empty`]) lowers it by `decrement`, each only when
//!   more than `target` has passed since the last change (`blue_timer`, the
//!   hysteresis; BLUE's `freeze_time`). A full queue also enters CoDel's
//!   dropping state with `drop_next = now` and `count >= 1`; an empty one
//!   leaves it and, if due, decays `count` by one step.
//! - Every dequeued packet the CoDel part did not drop is dropped (reason
//!   `Early`) if the uniform draw `u < p_drop`, ECN-capable or not: BLUE
//!   handles flows that do not respond to marks.
//!
//! # Parameters ([`CobaltParams`]; defaults are ns-3's)
//!
//! - `limit` (1 500 000 bytes, ns-3's `1500 * DEFAULT_COBALT_LIMIT` bytes):
//!   the hard limit; an arrival that finds it reached is dropped (reason
//!   `Overflow`) and counts as "queue full" for BLUE.
//! - `target` (5 ms, > 0): CoDel's target and BLUE's hysteresis.
//! - `interval` (100 ms, > 0): CoDel's interval.
//! - `ecn` (false, as ns-3's `UseEcn`): let the CoDel part mark.
//! - `increment` (1/256) and `decrement` (1/4096), in [0, 1]: BLUE's steps
//!   (ns-3 and CAKE, whose Q0.32 values 2^24 and 2^20 are these).
//! - `blue_threshold` (400 ms; `None` disables it): a dequeued packet whose
//!   sojourn exceeds it also raises `p_drop` (same hysteresis). ns-3 has
//!   this rule (`BlueThreshold`); CAKE does not.
//!
//! # Choices between variants
//!
//! - Where CAKE and ns-3 differ, this follows ns-3 (the single-queue
//!   comparison): `ecn` is a switch, off by default (CAKE always marks
//!   ECN-capable packets); `blue_threshold` exists; a full queue drops the
//!   arrival (CAKE drops from the head of its fattest flow, see
//!   `fq_cobalt.rs`).
//! - CAKE's extra conditions on "over target" (the sojourn must also exceed
//!   two or four MTU transmission times at the shaped rate) vanish without
//!   CAKE's shaper (they are 0 when it is unlimited) and are not applied.
//! - `1/sqrt(count)` is exact, through `codel.rs`'s [`control_law`]
//!   (spacing rounded to the nearest ns); CAKE and ns-3 use a Q0.32 cache
//!   and Newton steps, where `interval / sqrt(1)` comes out 1 ns short.
//! - Probabilities are `f64`; CAKE's are Q0.32.
//! - The draw is taken for every dequeued packet, used only while
//!   `p_drop > 0`.
//! - ns-3's `CeThreshold` and L4S options are not offered.
//!
//! Traced: `count`, `dropping`, `drop_next` (s), `p_drop`, `qdelay` (s,
//! the last sojourn time), `blue_timer` (s).

use crate::codel::control_law;
use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::rng::{self, Rng};
use crate::time::{Duration, Time};
use crate::{DropReason, Effects, ParamError, QueueDisc, Verdict};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CobaltParams {
    pub limit: Limit,
    pub target: Duration,
    pub interval: Duration,
    pub ecn: bool,
    pub increment: f64,
    pub decrement: f64,
    pub blue_threshold: Option<Duration>,
}

impl Default for CobaltParams {
    fn default() -> CobaltParams {
        CobaltParams {
            limit: Limit::Bytes(1_500_000),
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: false,
            increment: 1.0 / 256.0,
            decrement: 1.0 / 4096.0,
            blue_threshold: Some(Duration::from_millis(400)),
        }
    }
}

impl CobaltParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        self.law().validate()
    }

    pub fn law(&self) -> CobaltLaw {
        CobaltLaw {
            target: self.target,
            interval: self.interval,
            ecn: self.ecn,
            increment: self.increment,
            decrement: self.decrement,
            blue_threshold: self.blue_threshold,
        }
    }
}

/// What one COBALT instance needs to decide; shared by every flow of an
/// FQ-COBALT.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CobaltLaw {
    pub target: Duration,
    pub interval: Duration,
    pub ecn: bool,
    pub increment: f64,
    pub decrement: f64,
    pub blue_threshold: Option<Duration>,
}

impl CobaltLaw {
    pub(crate) fn validate(&self) -> Result<(), ParamError> {
        if self.target == Duration::ZERO {
            return Err(ParamError::new("target", "must be positive (got 0 s)"));
        }
        if self.interval == Duration::ZERO {
            return Err(ParamError::new("interval", "must be positive (got 0 s)"));
        }
        for (name, v) in [("increment", self.increment), ("decrement", self.decrement)] {
            if !(0.0..=1.0).contains(&v) {
                return Err(ParamError::new(name, format!("must be in [0, 1] (got {v})")));
            }
        }
        Ok(())
    }
}

/// COBALT's variables (CAKE's `cobalt_vars` names).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CobaltState {
    /// CoDel's signal count; decays while the delay is low.
    pub count: u32,
    pub dropping: bool,
    /// When the next signal is due, or the activity timer (see above).
    pub drop_next: Time,
    /// BLUE's drop probability.
    pub p_drop: f64,
    /// When `p_drop` last changed (the hysteresis).
    pub blue_timer: Time,
    /// Sojourn time of the last packet judged.
    pub qdelay: Duration,
}

/// Counters of what COBALT did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CobaltStats {
    /// Packets dropped at the head by the CoDel part.
    pub codel_drops: u64,
    /// Packets marked CE by the CoDel part.
    pub codel_marks: u64,
    /// Packets dropped at the head by BLUE.
    pub blue_drops: u64,
}

/// What to do with a dequeued packet.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CobaltAction {
    Deliver,
    /// Set CE and deliver it.
    Mark,
    Drop(DropReason),
}

/// The queue overflowed at `now` (CAKE `cobalt_queue_full`). Returns
/// whether BLUE went from quiet (`p_drop == 0`) to active.
pub fn cobalt_queue_full(law: &CobaltLaw, s: &mut CobaltState, now: Time) -> bool {
    let mut up = false;
    if now.saturating_since(s.blue_timer) > law.target {
        up = s.p_drop == 0.0;
        s.p_drop = (s.p_drop + law.increment).min(1.0);
        s.blue_timer = now;
    }
    s.dropping = true;
    s.drop_next = now;
    if s.count == 0 {
        s.count = 1;
    }
    up
}

/// A dequeue found the queue empty at `now` (CAKE `cobalt_queue_empty`).
/// Returns whether BLUE went from active to quiet.
pub fn cobalt_queue_empty(law: &CobaltLaw, s: &mut CobaltState, now: Time) -> bool {
    let mut down = false;
    if s.p_drop > 0.0 && now.saturating_since(s.blue_timer) > law.target {
        s.p_drop = (s.p_drop - law.decrement).max(0.0);
        s.blue_timer = now;
        down = s.p_drop == 0.0;
    }
    s.dropping = false;
    if s.count > 0 && now >= s.drop_next {
        s.count -= 1;
        s.drop_next = control_law(s.drop_next, law.interval, s.count.max(1));
    }
    down
}

/// The decision for a packet dequeued at `now` after `sojourn` in the
/// queue (CAKE `cobalt_should_drop`), given the uniform draw `u` in [0, 1).
pub fn cobalt_should_drop(
    law: &CobaltLaw,
    s: &mut CobaltState,
    now: Time,
    sojourn: Duration,
    ecn_capable: bool,
    u: f64,
) -> CobaltAction {
    s.qdelay = sojourn;
    // Whether now is after drop_next, kept from before entry moves it.
    let mut after_next = now > s.drop_next;
    let over_target = sojourn > law.target;
    let mut next_due = s.count > 0 && now >= s.drop_next;

    if over_target {
        if !s.dropping {
            s.dropping = true;
            s.drop_next = control_law(now, law.interval, s.count.max(1));
        }
        if s.count == 0 {
            s.count = 1;
        }
    } else if s.dropping {
        s.dropping = false;
    }

    let mut action = CobaltAction::Deliver;
    if next_due && s.dropping {
        action = if law.ecn && ecn_capable {
            CobaltAction::Mark
        } else {
            CobaltAction::Drop(DropReason::Head)
        };
        s.count = s.count.saturating_add(1);
        s.drop_next = control_law(s.drop_next, law.interval, s.count);
        after_next = now > s.drop_next;
    } else {
        // Not dropping: let the remembered rate decay, one step per
        // control-law spacing that has passed.
        while next_due {
            s.count -= 1;
            s.drop_next = control_law(s.drop_next, law.interval, s.count.max(1));
            after_next = now > s.drop_next;
            next_due = s.count > 0 && now >= s.drop_next;
        }
    }

    if let Some(th) = law.blue_threshold {
        if sojourn > th && now.saturating_since(s.blue_timer) > law.target {
            s.p_drop = (s.p_drop + law.increment).min(1.0);
            s.blue_timer = now;
        }
    }
    let dropped = matches!(action, CobaltAction::Drop(_));
    if !dropped && s.p_drop > 0.0 && u < s.p_drop {
        action = CobaltAction::Drop(DropReason::Early);
    }

    let dropped = matches!(action, CobaltAction::Drop(_));
    if s.count == 0 {
        s.drop_next = now + law.interval;
    } else if after_next && !dropped {
        s.drop_next = now;
    }
    action
}

/// One COBALT dequeue from `queue`: drops go to `fx` with their reason
/// until a packet is delivered (a mark sets `fx.marked`) or the queue is
/// found empty.
pub fn cobalt_dequeue(
    law: &CobaltLaw,
    s: &mut CobaltState,
    stats: &mut CobaltStats,
    queue: &mut Fifo,
    now: Time,
    fx: &mut Effects,
    rng: &mut Rng,
) -> Option<Packet> {
    loop {
        let Some(mut pkt) = queue.pop_front() else {
            cobalt_queue_empty(law, s, now);
            return None;
        };
        let u = rng::uniform(rng);
        let sojourn = now.saturating_since(pkt.enqueued_at);
        match cobalt_should_drop(law, s, now, sojourn, pkt.ecn != Ecn::NotEct, u) {
            CobaltAction::Deliver => return Some(pkt),
            CobaltAction::Mark => {
                pkt.ecn = Ecn::Ce;
                fx.marked = true;
                stats.codel_marks += 1;
                return Some(pkt);
            }
            CobaltAction::Drop(reason) => {
                if reason == DropReason::Head {
                    stats.codel_drops += 1;
                } else {
                    stats.blue_drops += 1;
                }
                fx.discard(pkt, reason);
            }
        }
    }
}

#[derive(Clone, Debug)]
pub struct Cobalt {
    params: CobaltParams,
    law: CobaltLaw,
    state: CobaltState,
    stats: CobaltStats,
    fifo: Fifo,
    rng: Rng,
}

impl Cobalt {
    pub fn new(params: CobaltParams, seed: u64) -> Result<Cobalt, ParamError> {
        params.validate()?;
        Ok(Cobalt {
            params,
            law: params.law(),
            state: CobaltState::default(),
            stats: CobaltStats::default(),
            fifo: Fifo::new(),
            rng: <Rng as rand::SeedableRng>::seed_from_u64(seed),
        })
    }

    /// The parameters in force (nothing is configured automatically).
    pub fn effective(&self) -> CobaltParams {
        self.params
    }

    pub fn state(&self) -> &CobaltState {
        &self.state
    }

    pub fn stats(&self) -> &CobaltStats {
        &self.stats
    }
}

impl QueueDisc for Cobalt {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, now: Time, _fx: &mut Effects) -> Verdict {
        if !self.params.limit.admits(self.fifo.backlog(), pkt.size_bytes) {
            cobalt_queue_full(&self.law, &mut self.state, now);
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.fifo.push_back(pkt);
        Verdict::Enqueued
    }

    #[inline]
    fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet> {
        cobalt_dequeue(
            &self.law,
            &mut self.state,
            &mut self.stats,
            &mut self.fifo,
            now,
            fx,
            &mut self.rng,
        )
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        traced_state(&self.state, out);
    }
}

/// COBALT's variables as time series.
pub(crate) fn traced_state(s: &CobaltState, out: &mut dyn FnMut(&'static str, f64)) {
    out("count", f64::from(s.count));
    out("dropping", if s.dropping { 1.0 } else { 0.0 });
    out("drop_next", s.drop_next.as_secs_f64());
    out("p_drop", s.p_drop);
    out("qdelay", s.qdelay.as_secs_f64());
    out("blue_timer", s.blue_timer.as_secs_f64());
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Constants

    const INC: f64 = 1.0 / 256.0;
    const DEC: f64 = 1.0 / 4096.0;
    /// 100 ms / sqrt(2), rounded to the nearest ns.
    const SPACING_2_NS: u64 = 70_710_678;

    // Helpers

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn law() -> CobaltLaw {
        CobaltParams::default().law()
    }

    fn law_ecn() -> CobaltLaw {
        CobaltLaw { ecn: true, ..law() }
    }

    /// BLUE active at `p_drop`, last changed at 10 ms; CoDel at rest.
    fn cobalt_blue_active(p_drop: f64) -> CobaltState {
        CobaltState {
            p_drop,
            blue_timer: ms(10),
            drop_next: ms(150),
            ..CobaltState::default()
        }
    }

    /// CoDel at rest, the activity timer set by a packet at 50 ms.
    fn cobalt_warm() -> CobaltState {
        CobaltState {
            drop_next: ms(150),
            ..CobaltState::default()
        }
    }

    /// Not dropping, count 3 remembered, drop_next at 100 ms.
    fn cobalt_remembering() -> CobaltState {
        CobaltState {
            count: 3,
            drop_next: ms(100),
            ..CobaltState::default()
        }
    }

    fn decide(law: &CobaltLaw, s: &mut CobaltState, now: Time, sojourn_ms: u64, u: f64) -> CobaltAction {
        cobalt_should_drop(law, s, now, Duration::from_millis(sojourn_ms), false, u)
    }

    // BLUE

    /// Quiet BLUE (p_drop 0, blue_timer 0): an overflow at 10 ms (> target
    /// after the last change) raises p_drop to 1/256, restarts the
    /// hysteresis, and puts CoDel in the dropping state due now.
    #[test]
    fn test_quiet_overflow_raises_p_drop_by_increment() {
        let mut s = CobaltState::default();
        assert!(cobalt_queue_full(&law(), &mut s, ms(10)));
        assert_eq!(
            s,
            CobaltState {
                p_drop: INC,
                blue_timer: ms(10),
                dropping: true,
                drop_next: ms(10),
                count: 1,
                ..CobaltState::default()
            }
        );
    }

    /// p_drop 1/256 set at 10 ms: an overflow at 15 ms (5 ms later, not
    /// more than target) leaves it; one at 15 ms + 1 ns raises it to 2/256.
    #[test]
    fn test_blue_active_overflow_within_hysteresis_holds_then_rises() {
        let mut s = cobalt_blue_active(INC);
        assert!(!cobalt_queue_full(&law(), &mut s, ms(15)));
        assert_eq!((s.p_drop, s.blue_timer), (INC, ms(10)));
        let later = ms(15) + Duration::from_nanos(1);
        cobalt_queue_full(&law(), &mut s, later);
        assert_eq!((s.p_drop, s.blue_timer), (2.0 * INC, later));
    }

    /// p_drop 2/256 set at 10 ms: an empty queue at 15 ms holds it, at 16 ms
    /// lowers it by 1/4096 to 31/4096.
    #[test]
    fn test_blue_active_empty_lowers_p_drop_by_decrement() {
        let mut s = cobalt_blue_active(2.0 * INC);
        cobalt_queue_empty(&law(), &mut s, ms(15));
        assert_eq!(s.p_drop, 2.0 * INC);
        assert!(!cobalt_queue_empty(&law(), &mut s, ms(16)));
        assert_eq!((s.p_drop, s.blue_timer), (31.0 / 4096.0, ms(16)));
    }

    /// p_drop 1/8192, below one decrement: an empty queue sets it to 0.
    #[test]
    fn test_blue_small_empty_floors_p_drop_at_zero() {
        let mut s = cobalt_blue_active(DEC / 2.0);
        assert!(cobalt_queue_empty(&law(), &mut s, ms(16)));
        assert_eq!(s.p_drop, 0.0);
    }

    /// BLUE at 0.25, a packet below target: a draw of 0.2 drops it (reason
    /// Early), a draw of 0.25 delivers it.
    #[test]
    fn test_blue_active_draw_below_p_drop_drops() {
        let mut s = cobalt_blue_active(0.25);
        assert_eq!(
            decide(&law(), &mut s, ms(100), 1, 0.2),
            CobaltAction::Drop(DropReason::Early)
        );
        let mut s = cobalt_blue_active(0.25);
        assert_eq!(decide(&law(), &mut s, ms(100), 1, 0.25), CobaltAction::Deliver);
    }

    /// ns-3's blue_threshold: a sojourn of 401 ms at 100 ms (90 ms after the
    /// last change) raises p_drop by 1/256; 400 ms exactly does not.
    #[test]
    fn test_sojourn_above_blue_threshold_raises_p_drop() {
        let mut s = cobalt_blue_active(INC);
        decide(&law(), &mut s, ms(100), 400, 0.9);
        assert_eq!(s.p_drop, INC);
        decide(&law(), &mut s, ms(100), 401, 0.9);
        assert_eq!((s.p_drop, s.blue_timer), (2.0 * INC, ms(100)));
    }

    // CoDel part

    /// Warm, not dropping. At 100 ms a sojourn of 6 ms (> 5 ms) enters the
    /// dropping state with drop_next = 100 + 100 = 200 ms, count 1, and
    /// delivers. At 199 ms: not due, delivered. At 200 ms: due, dropped
    /// (Head); count 2, drop_next = 200 ms + 100 ms / sqrt(2).
    #[test]
    fn test_warm_over_target_waits_interval_then_drops() {
        let (law, mut s) = (law(), cobalt_warm());
        assert_eq!(decide(&law, &mut s, ms(100), 6, 0.9), CobaltAction::Deliver);
        assert_eq!((s.dropping, s.count, s.drop_next), (true, 1, ms(200)));
        assert_eq!(decide(&law, &mut s, ms(199), 6, 0.9), CobaltAction::Deliver);
        assert_eq!(
            decide(&law, &mut s, ms(200), 6, 0.9),
            CobaltAction::Drop(DropReason::Head)
        );
        assert_eq!(
            (s.count, s.drop_next),
            (2, ms(200) + Duration::from_nanos(SPACING_2_NS))
        );
    }

    /// The same with ecn and an ECN-capable packet: marked instead.
    #[test]
    fn test_dropping_due_ect_packet_marked_with_ecn() {
        let mut s = CobaltState {
            dropping: true,
            count: 1,
            drop_next: ms(200),
            ..CobaltState::default()
        };
        let got = cobalt_should_drop(&law_ecn(), &mut s, ms(200), Duration::from_millis(6), true, 0.9);
        assert_eq!(got, CobaltAction::Mark);
        assert_eq!(s.count, 2);
    }

    /// Remembering count 3 with drop_next at 100 ms; a packet below target
    /// at 160 ms: one decay step, count 2 and drop_next = 100 ms + 100 ms /
    /// sqrt(2) = 170.71 ms, now no longer due; delivered.
    #[test]
    fn test_remembering_below_target_decays_count() {
        let mut s = cobalt_remembering();
        assert_eq!(decide(&law(), &mut s, ms(160), 1, 0.9), CobaltAction::Deliver);
        assert_eq!(
            (s.count, s.drop_next),
            (2, ms(100) + Duration::from_nanos(SPACING_2_NS))
        );
    }

    /// Below target with count 0: drop_next becomes the activity timer
    /// now + interval.
    #[test]
    fn test_warm_below_target_sets_activity_timer() {
        let mut s = cobalt_warm();
        decide(&law(), &mut s, ms(120), 1, 0.9);
        assert_eq!((s.count, s.drop_next), (0, ms(220)));
    }

    /// An empty queue leaves the dropping state and, due, decays count by
    /// one step: count 3 -> 2 at 100 ms.
    #[test]
    fn test_remembering_empty_due_decays_count_once() {
        let mut s = CobaltState {
            dropping: true,
            ..cobalt_remembering()
        };
        cobalt_queue_empty(&law(), &mut s, ms(300));
        assert_eq!(
            (s.dropping, s.count, s.drop_next),
            (false, 2, ms(100) + Duration::from_nanos(SPACING_2_NS))
        );
    }

    // The discipline

    /// Limit 2 packets: the third arrival at 10 ms is dropped and raises
    /// p_drop to 1/256.
    #[test]
    fn test_full_arrival_dropped_raises_p_drop() {
        let mut q = Cobalt::new(
            CobaltParams {
                limit: Limit::Packets(2),
                ..CobaltParams::default()
            },
            1,
        )
        .unwrap();
        let p = Packet {
            size_bytes: 1000,
            ..Packet::default()
        };
        let mut fx = Effects::default();
        assert_eq!(q.enqueue(p, ms(10), &mut fx), Verdict::Enqueued);
        assert_eq!(q.enqueue(p, ms(10), &mut fx), Verdict::Enqueued);
        assert_eq!(q.enqueue(p, ms(10), &mut fx), Verdict::Dropped(DropReason::Overflow));
        assert_eq!(q.state().p_drop, INC);
    }

    #[test]
    fn test_bad_params_rejected_by_name() {
        let d = CobaltParams::default();
        let cases = [
            (
                CobaltParams {
                    target: Duration::ZERO,
                    ..d
                },
                "target",
            ),
            (
                CobaltParams {
                    interval: Duration::ZERO,
                    ..d
                },
                "interval",
            ),
            (CobaltParams { increment: 1.5, ..d }, "increment"),
            (CobaltParams { decrement: -0.1, ..d }, "decrement"),
            (
                CobaltParams {
                    limit: Limit::Packets(0),
                    ..d
                },
                "limit",
            ),
        ];
        for (params, key) in cases {
            assert_eq!(Cobalt::new(params, 1).unwrap_err().param, key);
        }
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for Cobalt {
        const FIFO: bool = true;

        fn configs() -> BoxedStrategy<Cobalt> {
            (any::<bool>(), any::<bool>(), 1u32..40, any::<u64>())
                .prop_map(|(ecn, bytes, limit, seed)| {
                    let params = CobaltParams {
                        limit: if bytes {
                            Limit::Bytes(u64::from(limit) * 1000)
                        } else {
                            Limit::Packets(limit)
                        },
                        ecn,
                        increment: 0.25,
                        decrement: 0.125,
                        ..CobaltParams::default()
                    };
                    Cobalt::new(params, seed).unwrap()
                })
                .boxed()
        }

        fn check_state(&self, _tally: &Tally) -> Result<(), TestCaseError> {
            prop_assert!((0.0..=1.0).contains(&self.state.p_drop));
            Ok(())
        }
    }
}
