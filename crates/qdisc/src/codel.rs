//! CoDel, controlled delay: K. Nichols, V. Jacobson, A. McGregor and
//! J. Iyengar, "Controlled Delay Active Queue Management", RFC 8289, IETF,
//! January 2018 (the algorithm of Section 4, the pseudo-code of Section 5);
//! first published by Nichols and Jacobson as "Controlling Queue Delay",
//! ACM Queue 10(5), 2012.
//!
//! Heads up: read RFC 8289's pseudo-code (Section 5) and the choices between
//! variants below (where Linux and ns-3 differ) before changing this file;
//! test vectors T15-T17 are at the end.
//!
//! Every decision is taken at dequeue, from the sojourn time of the packet
//! at the head; enqueue only applies the hard limit (tail drop, reason
//! `Overflow`). Per dequeue, with `sojourn = now - pkt.enqueued_at` and the
//! bytes left in the queue after the packet is removed:
//!
//! - *ok to drop* is false when `sojourn < target` or the bytes left are at
//!   most `maxpacket` (the "queue almost empty" guard); this also clears
//!   `first_above_time`. Otherwise the first such packet sets
//!   `first_above_time = now + interval` and later ones are ok to drop once
//!   `now >= first_above_time`.
//! - In the dropping state, while ok and `now >= drop_next`, the head packet
//!   is dropped, `count += 1`, the next packet is taken and
//!   `drop_next = drop_next + interval / sqrt(count)` (the control law).
//!   Not ok leaves the dropping state; `count` is kept.
//! - Outside it, an ok packet is dropped and the state entered with
//!   `count = count - lastcount` if that is more than 1 and
//!   `now - drop_next < 16 interval` (re-entry soon after the last episode
//!   reuses its drop rate), else `count = 1`; then
//!   `drop_next = now + interval / sqrt(count)` and `lastcount = count`.
//!
//! Parameters (scenario keys):
//! - `target` (default 5 ms): the acceptable standing sojourn time, > 0;
//!   RFC 8289 suggests 5-10 % of `interval`.
//! - `interval` (default 100 ms): the time the sojourn must stay above
//!   `target` before the first drop, and the scale of the control law; about
//!   a worst-case round-trip time, > 0.
//! - `limit` (default 1000 packets, as Linux): the hard buffer limit.
//! - `ecn` (default false, as Linux and ns-3): mark ECN-capable packets CE
//!   instead of dropping them.
//! - `ce_threshold` (default none): mark ECN-capable packets whose sojourn
//!   exceeds it (strictly), independently of the control law (Linux and
//!   ns-3 option, for DCTCP-style senders). Needs `ecn = true`: Linux also
//!   applies it with ECN off, but in aqmlab no discipline marks unless its
//!   `ecn` is on, so that combination is rejected rather than ignored.
//! - `maxpacket` is not a parameter: it is the link's MTU
//!   ([`LinkInfo::mtu_bytes`]), as the RFC asks ("should use interface MTU")
//!   and Linux does.
//!
//! Choices between variants (each the default, there is no switch):
//! - `1/sqrt(count)` is computed exactly in `f64`; Linux and ns-3 keep a
//!   Q0.32 estimate refined by one Newton step per change, which lags after a
//!   re-entry. The control-law spacing `interval / sqrt(count)` is rounded to
//!   the nearest nanosecond before it is added to the time it starts from,
//!   so `drop_next` accumulates one rounding per drop (T15 is stated in
//!   nanoseconds under this rule).
//! - The entry test is `now >= first_above_time`, as the RFC pseudo-code;
//!   Linux and ns-3 test `now > first_above_time`, one clock tick later.
//! - The guard compares the bytes left with `maxpacket` using `<=`, as the
//!   RFC and Linux; ns-3 uses `< MinBytes`.
//! - With `ecn`, a mark in the dropping state sets
//!   `drop_next = drop_next + interval / sqrt(count)` (control law from the
//!   scheduled time, as Linux and consistent with the drop path); ns-3 starts
//!   from `now`. A mark ends that dequeue: the marked packet is returned.
//!   On entry a marked packet is returned instead of dropping it and taking
//!   the next one.
//! - The re-entry test `now - drop_next < 16 interval` is read as signed,
//!   as Linux: re-entering before `drop_next` counts as recent.
//! - "ECN-capable" means ECT or already CE (marking a CE packet again is a
//!   mark, as Linux counts it); Not-ECT packets are dropped even with `ecn`.
//! - `count` saturates at `u32::MAX` instead of wrapping.
//!
//! The control law works on any [`Fifo`] through [`codel_dequeue`], with
//! [`CodelLaw`] and [`CodelState`] per queue, so FQ-CoDel runs one instance
//! per flow (`fq_codel.rs`).

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::time::{Duration, Time};
use crate::{DropReason, Effects, LinkInfo, ParamError, QueueDisc, Verdict};

/// Re-entering the dropping state within this many intervals of the last
/// `drop_next` reuses the previous episode's drop rate (RFC 8289, Section 5).
const REENTRY_INTERVALS: u64 = 16;

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelParams {
    pub limit: Limit,
    pub target: Duration,
    pub interval: Duration,
    pub ecn: bool,
    pub ce_threshold: Option<Duration>,
}

impl Default for CodelParams {
    fn default() -> CodelParams {
        CodelParams {
            limit: Limit::Packets(1000),
            target: Duration::from_millis(5),
            interval: Duration::from_millis(100),
            ecn: false,
            ce_threshold: None,
        }
    }
}

impl CodelParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        validate_law(self.target, self.interval, self.ecn, self.ce_threshold)
    }

    /// The control law these parameters give on a link of `mtu_bytes`.
    pub fn law(&self, mtu_bytes: u32) -> CodelLaw {
        CodelLaw {
            target: self.target,
            interval: self.interval,
            maxpacket_bytes: mtu_bytes,
            ecn: self.ecn,
            ce_threshold: self.ce_threshold,
        }
    }
}

/// The checks CoDel and FQ-CoDel share on the control law's parameters.
pub(crate) fn validate_law(
    target: Duration,
    interval: Duration,
    ecn: bool,
    ce_threshold: Option<Duration>,
) -> Result<(), ParamError> {
    if target == Duration::ZERO {
        return Err(ParamError::new("target", "must be positive (got 0 s)"));
    }
    if interval == Duration::ZERO {
        return Err(ParamError::new("interval", "must be positive (got 0 s)"));
    }
    if let Some(th) = ce_threshold {
        if !ecn {
            return Err(ParamError::new(
                "ce_threshold",
                format!(
                    "marks packets CE, which needs ecn = true (got ce_threshold {} s with ecn = false)",
                    th.as_secs_f64()
                ),
            ));
        }
    }
    Ok(())
}

/// What one CoDel instance needs to decide: the parameters with `maxpacket`
/// resolved to the link's MTU. Shared by every flow of an FQ-CoDel.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CodelLaw {
    pub target: Duration,
    pub interval: Duration,
    /// The "queue almost empty" guard: no drop while at most this many bytes
    /// are left behind the head packet.
    pub maxpacket_bytes: u32,
    pub ecn: bool,
    pub ce_threshold: Option<Duration>,
}

/// CoDel's variables (RFC 8289 names).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CodelState {
    /// When the sojourn time will have been above target for an interval;
    /// `None` while it is below target (the RFC's 0).
    pub first_above_time: Option<Time>,
    /// When the next drop is due in the dropping state.
    pub drop_next: Time,
    /// Drops (and marks) in the current dropping episode, carried over on
    /// re-entry by the re-entry rule.
    pub count: u32,
    /// `count` when the dropping state was last entered.
    pub lastcount: u32,
    pub dropping: bool,
    /// Sojourn time of the last packet taken from the queue.
    pub qdelay: Duration,
}

/// Counters of what the control law did.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CodelStats {
    /// Packets dropped from the head by the control law.
    pub head_drops: u64,
    /// Packets marked CE by the control law instead of being dropped.
    pub ecn_marks: u64,
    /// Packets marked CE because their sojourn exceeded `ce_threshold`.
    pub ce_marks: u64,
}

/// `t + interval / sqrt(count)`, the spacing rounded to the nearest
/// nanosecond (RFC 8289 `control_law`). `count` is at least 1.
#[inline]
pub fn control_law(t: Time, interval: Duration, count: u32) -> Time {
    let spacing_ns = interval.nanos() as f64 / f64::from(count).sqrt();
    t + Duration::from_nanos(spacing_ns.round() as u64)
}

/// Takes the head packet and says whether it may be dropped (the RFC's
/// `dodequeue`). An empty queue clears `first_above_time`.
#[inline]
fn take_head(law: &CodelLaw, s: &mut CodelState, queue: &mut Fifo, now: Time) -> Option<(Packet, bool)> {
    let Some(pkt) = queue.pop_front() else {
        s.first_above_time = None;
        return None;
    };
    s.qdelay = now.saturating_since(pkt.enqueued_at);
    let ok = if s.qdelay < law.target || queue.backlog().bytes <= u64::from(law.maxpacket_bytes) {
        s.first_above_time = None;
        false
    } else {
        match s.first_above_time {
            None => {
                s.first_above_time = Some(now + law.interval);
                false
            }
            Some(t) => now >= t,
        }
    };
    Some((pkt, ok))
}

/// Sets CE on a packet about to be returned by `dequeue`.
#[inline]
fn mark(pkt: &mut Packet, fx: &mut Effects) {
    pkt.ecn = Ecn::Ce;
    fx.marked = true;
}

/// One CoDel dequeue from `queue` (RFC 8289, Section 5, `dequeue`): head
/// drops go to `fx` with reason `Head`, a CE mark on the returned packet sets
/// `fx.marked`. The guard counts the bytes left in `queue` itself.
pub fn codel_dequeue(
    law: &CodelLaw,
    s: &mut CodelState,
    stats: &mut CodelStats,
    queue: &mut Fifo,
    now: Time,
    fx: &mut Effects,
) -> Option<Packet> {
    let Some((mut pkt, ok)) = take_head(law, s, queue, now) else {
        s.dropping = false;
        return None;
    };
    let markable = |p: &Packet| law.ecn && p.ecn.is_ecn_capable();
    let mut marked = false;
    if s.dropping {
        if !ok {
            // Sojourn below target or queue almost empty: leave, keep count.
            s.dropping = false;
        }
        while s.dropping && now >= s.drop_next {
            s.count = s.count.saturating_add(1);
            if markable(&pkt) {
                mark(&mut pkt, fx);
                marked = true;
                stats.ecn_marks += 1;
                s.drop_next = control_law(s.drop_next, law.interval, s.count);
                break;
            }
            fx.discard(pkt, DropReason::Head);
            stats.head_drops += 1;
            match take_head(law, s, queue, now) {
                None => {
                    s.dropping = false;
                    return None;
                }
                Some((next, next_ok)) => {
                    pkt = next;
                    if next_ok {
                        s.drop_next = control_law(s.drop_next, law.interval, s.count);
                    } else {
                        s.dropping = false;
                    }
                }
            }
        }
    } else if ok {
        let out = if markable(&pkt) {
            mark(&mut pkt, fx);
            marked = true;
            stats.ecn_marks += 1;
            Some(pkt)
        } else {
            fx.discard(pkt, DropReason::Head);
            stats.head_drops += 1;
            take_head(law, s, queue, now).map(|(next, _)| next)
        };
        s.dropping = true;
        let delta = s.count.saturating_sub(s.lastcount);
        let recent = now.saturating_since(s.drop_next).nanos() < law.interval.nanos().saturating_mul(REENTRY_INTERVALS);
        s.count = if delta > 1 && recent { delta } else { 1 };
        s.drop_next = control_law(now, law.interval, s.count);
        s.lastcount = s.count;
        pkt = out?;
    }
    if let Some(th) = law.ce_threshold {
        if !marked && s.qdelay > th && pkt.ecn.is_ecn_capable() {
            mark(&mut pkt, fx);
            stats.ce_marks += 1;
        }
    }
    Some(pkt)
}

#[derive(Clone, Debug)]
pub struct Codel {
    params: CodelParams,
    law: CodelLaw,
    state: CodelState,
    stats: CodelStats,
    fifo: Fifo,
}

impl Codel {
    pub fn new(params: CodelParams, link: LinkInfo) -> Result<Codel, ParamError> {
        params.validate()?;
        Ok(Codel {
            params,
            law: params.law(link.mtu_bytes),
            state: CodelState::default(),
            stats: CodelStats::default(),
            fifo: Fifo::new(),
        })
    }

    /// The parameters in force (nothing is configured automatically).
    pub fn effective(&self) -> CodelParams {
        self.params
    }

    /// The control law in force, with `maxpacket` resolved to the link MTU.
    pub fn law(&self) -> &CodelLaw {
        &self.law
    }

    pub fn state(&self) -> &CodelState {
        &self.state
    }

    pub fn stats(&self) -> &CodelStats {
        &self.stats
    }

    /// Clears the variables, keeping the queue and the counters.
    pub fn reset(&mut self) {
        self.state = CodelState::default();
    }
}

impl QueueDisc for Codel {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, _now: Time, _fx: &mut Effects) -> Verdict {
        if !self.params.limit.admits(self.fifo.backlog(), pkt.size_bytes) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        self.fifo.push_back(pkt);
        Verdict::Enqueued
    }

    #[inline]
    fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet> {
        codel_dequeue(&self.law, &mut self.state, &mut self.stats, &mut self.fifo, now, fx)
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    /// `first_above_time` is 0 while unset, as in the RFC.
    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        let s = &self.state;
        out("count", f64::from(s.count));
        out("lastcount", f64::from(s.lastcount));
        out("dropping", if s.dropping { 1.0 } else { 0.0 });
        out("drop_next", s.drop_next.as_secs_f64());
        out("qdelay", s.qdelay.as_secs_f64());
        out("first_above_time", s.first_above_time.map_or(0.0, Time::as_secs_f64));
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::Conserving;
    use proptest::prelude::*;

    // Constants

    const MTU: u32 = 1500;
    const LINK: LinkInfo = LinkInfo {
        rate_bps: 12_000_000,
        mtu_bytes: MTU,
    };
    /// The control-law spacings 100 ms / sqrt(n) for n = 2..5, in ns, each
    /// rounded to the nearest ns: 70710678.12, 57735026.92, 50000000,
    /// 44721359.55.
    const SPACING_NS: [u64; 4] = [70_710_678, 57_735_027, 50_000_000, 44_721_360];

    // Helpers

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    fn pkt(id: u64, size_bytes: u32, ecn: Ecn, at: Time) -> Packet {
        Packet {
            id,
            size_bytes,
            ecn,
            enqueued_at: at,
            ..Packet::default()
        }
    }

    fn codel(params: CodelParams) -> Codel {
        Codel::new(params, LINK).unwrap()
    }

    fn codel_ecn() -> Codel {
        codel(CodelParams {
            ecn: true,
            ..CodelParams::default()
        })
    }

    /// Enqueues `n` packets of `size_bytes` at `at`, ids `first..first + n`.
    #[track_caller]
    fn fill(q: &mut Codel, first: u64, n: u64, size_bytes: u32, ecn: Ecn, at: Time) {
        for id in first..first + n {
            let v = q.enqueue(pkt(id, size_bytes, ecn, at), at, &mut Effects::default());
            assert_eq!(v, Verdict::Enqueued, "packet {id}");
        }
    }

    /// What one dequeue did: the id returned, the ids head-dropped, and
    /// whether the returned packet was marked.
    #[derive(Debug, PartialEq)]
    struct Out {
        id: Option<u64>,
        dropped: Vec<u64>,
        marked: bool,
    }

    #[track_caller]
    fn deq(q: &mut Codel, now: Time) -> Out {
        let mut fx = Effects::default();
        let got = q.dequeue(now, &mut fx);
        assert!(fx.discards.iter().all(|(_, r)| *r == DropReason::Head));
        assert_eq!(fx.marked, got.is_some_and(|p| p.ecn == Ecn::Ce));
        Out {
            id: got.map(|p| p.id),
            dropped: fx.discards.iter().map(|(p, _)| p.id).collect(),
            marked: fx.marked,
        }
    }

    fn out(id: u64, dropped: &[u64], marked: bool) -> Out {
        Out {
            id: Some(id),
            dropped: dropped.to_vec(),
            marked,
        }
    }

    /// 20 packets of 1500 B queued at 0 (ids 0..20); a dequeue at 5 ms saw
    /// sojourn 5 ms = target with 28500 B left, so first_above_time = 105 ms.
    fn codel_above_target(mut q: Codel, ecn: Ecn) -> Codel {
        fill(&mut q, 0, 20, MTU, ecn, Time::ZERO);
        assert_eq!(deq(&mut q, ms(5)), out(0, &[], false));
        assert_eq!(q.state().first_above_time, Some(ms(105)));
        q
    }

    /// `codel_above_target` after the dequeue at 105 ms entered the dropping
    /// state: count 1, lastcount 1, drop_next 205 ms; 17 packets (ids 3..20)
    /// left.
    fn codel_dropping() -> Codel {
        let mut q = codel_above_target(codel(CodelParams::default()), Ecn::NotEct);
        assert_eq!(deq(&mut q, ms(105)), out(2, &[1], false));
        q
    }

    /// A FIFO of `n` packets of 1500 B enqueued at `at` (ids 0..n).
    fn fifo_of(n: u64, at: Time) -> Fifo {
        let mut f = Fifo::new();
        for id in 0..n {
            f.push_back(pkt(id, MTU, Ecn::NotEct, at));
        }
        f
    }

    fn law() -> CodelLaw {
        CodelParams::default().law(MTU)
    }

    // Test vectors, computed from RFC 8289's control law (exact square roots)

    /// T15. 100 packets of 1500 B at t = 0, then one arrival and one dequeue
    /// every ms from 1 ms to 505 ms (arrivals first), plus dequeues at each
    /// expected drop time and 1 ns before it. At 5 ms the head's sojourn is
    /// 5 ms, so first_above_time = 105 ms and the state is entered at
    /// t0 = 105 ms. The backlog never falls below ~80 packets (sojourn
    /// ~80 ms > target), so the drops come at t0 + 0, 100, then + 100/sqrt(n)
    /// for n = 2..6, each spacing rounded to the nearest ns:
    /// 100, 170.710678, 228.445705, 278.445705, 323.167065, 363.991894 ms;
    /// the next (+37.796447 ms, at 401.788341 ms) is past the end. Seven
    /// drops leave count = 7.
    #[test]
    fn test_overloaded_persistent_drops_at_t15_times() {
        let t0 = ms(105);
        let expected_ns = [
            0,
            100_000_000,
            170_710_678,
            228_445_705,
            278_445_705,
            323_167_065,
            363_991_894,
        ];
        let mut q = codel(CodelParams::default());
        fill(&mut q, 0, 100, MTU, Ecn::NotEct, Time::ZERO);
        let mut events: Vec<(Time, bool)> = (1..=505).flat_map(|k| [(ms(k), true), (ms(k), false)]).collect();
        for &d in &expected_ns {
            events.push((t0 + Duration(d), false));
            events.push((Time(t0.nanos() + d - 1), false));
        }
        events.sort_by_key(|&(t, arrival)| (t, !arrival));
        let mut next_id = 100;
        let mut drop_offsets_ns = Vec::new();
        for (t, arrival) in events {
            if arrival {
                fill(&mut q, next_id, 1, MTU, Ecn::NotEct, t);
                next_id += 1;
            } else {
                let o = deq(&mut q, t);
                assert!(o.id.is_some());
                for _ in o.dropped {
                    drop_offsets_ns.push((t - t0).nanos());
                }
            }
        }
        assert_eq!(drop_offsets_ns, expected_ns);
        assert_eq!((q.state().count, q.state().dropping), (7, true));
        assert_eq!(q.state().drop_next, Time(t0.nanos() + 401_788_341));
    }

    /// T16. first_above_time = 105 ms: a dequeue at 105 ms - 1 ns returns
    /// its packet; the dequeue at exactly 105 ms drops (RFC `>=`; Linux and
    /// ns-3 compare with `>` and would drop one tick later).
    #[test]
    fn test_above_target_dequeue_at_first_above_time_drops() {
        let mut q = codel_above_target(codel(CodelParams::default()), Ecn::NotEct);
        assert_eq!(deq(&mut q, Time(ms(105).nanos() - 1)), out(1, &[], false));
        assert!(!q.state().dropping);
        assert_eq!(deq(&mut q, ms(105)), out(3, &[2], false));
        let s = q.state();
        assert_eq!((s.dropping, s.count, s.lastcount), (true, 1, 1));
        assert_eq!(s.drop_next, ms(205));
    }

    /// T17. count 10, lastcount 1, drop_next 1 s; re-entry at 2 s (1 s after
    /// drop_next, < 16 x 100 ms): delta = 9 > 1, so count = 9 and drop_next =
    /// 2 s + 100 ms / 3 = 2.033333333 s (33333333.33 ns rounded), lastcount 9.
    #[test]
    fn test_left_dropping_reentry_within_16_intervals_reuses_delta() {
        let mut s = CodelState {
            count: 10,
            lastcount: 1,
            drop_next: ms(1000),
            first_above_time: Some(ms(1900)),
            ..CodelState::default()
        };
        let mut f = fifo_of(5, ms(1950));
        let mut fx = Effects::default();
        let got = codel_dequeue(&law(), &mut s, &mut CodelStats::default(), &mut f, ms(2000), &mut fx);
        assert_eq!(got.map(|p| p.id), Some(1));
        assert_eq!(
            fx.discards,
            vec![(pkt(0, MTU, Ecn::NotEct, ms(1950)), DropReason::Head)]
        );
        assert_eq!((s.dropping, s.count, s.lastcount), (true, 9, 9));
        assert_eq!(s.drop_next, Time(2_033_333_333));
    }

    // CoDel rules

    /// As T17 but re-entering exactly 16 intervals (1.6 s) after drop_next:
    /// not within, so count = 1 and drop_next = now + 100 ms.
    #[test]
    fn test_left_dropping_reentry_after_16_intervals_resets_count() {
        let mut s = CodelState {
            count: 10,
            lastcount: 1,
            drop_next: ms(1000),
            first_above_time: Some(ms(2500)),
            ..CodelState::default()
        };
        let mut f = fifo_of(5, ms(2550));
        let got = codel_dequeue(
            &law(),
            &mut s,
            &mut CodelStats::default(),
            &mut f,
            ms(2600),
            &mut Effects::default(),
        );
        assert_eq!(got.map(|p| p.id), Some(1));
        assert_eq!((s.dropping, s.count, s.lastcount), (true, 1, 1));
        assert_eq!(s.drop_next, ms(2700));
    }

    /// Re-entry before drop_next counts as within 16 intervals (the RFC's
    /// difference is signed): count 10 - lastcount 4 = 6, drop_next =
    /// 500 ms + 100/sqrt(6) ms = 540.824829 ms.
    #[test]
    fn test_left_dropping_reentry_before_drop_next_reuses_delta() {
        let mut s = CodelState {
            count: 10,
            lastcount: 4,
            drop_next: ms(600),
            first_above_time: Some(ms(400)),
            ..CodelState::default()
        };
        let mut f = fifo_of(5, ms(300));
        codel_dequeue(
            &law(),
            &mut s,
            &mut CodelStats::default(),
            &mut f,
            ms(500),
            &mut Effects::default(),
        );
        assert_eq!((s.count, s.lastcount), (6, 6));
        assert_eq!(s.drop_next, Time(540_824_829));
    }

    /// delta = count - lastcount = 1 is not > 1: count restarts at 1.
    #[test]
    fn test_left_dropping_reentry_delta_one_resets_count() {
        let mut s = CodelState {
            count: 2,
            lastcount: 1,
            drop_next: ms(1000),
            first_above_time: Some(ms(1900)),
            ..CodelState::default()
        };
        let mut f = fifo_of(5, ms(1950));
        codel_dequeue(
            &law(),
            &mut s,
            &mut CodelStats::default(),
            &mut f,
            ms(2000),
            &mut Effects::default(),
        );
        assert_eq!((s.count, s.lastcount), (1, 1));
        assert_eq!(s.drop_next, ms(2100));
    }

    /// Sojourn 5 ms - 1 ns is below target: first_above_time stays unset.
    #[test]
    fn test_idle_dequeue_sojourn_below_target_no_first_above_time() {
        let mut q = codel(CodelParams::default());
        fill(&mut q, 0, 5, MTU, Ecn::NotEct, Time::ZERO);
        assert_eq!(deq(&mut q, Time(4_999_999)), out(0, &[], false));
        assert_eq!(q.state().first_above_time, None);
        assert_eq!(q.state().qdelay, Duration(4_999_999));
    }

    /// 3 packets at 0, dequeue at 5 ms sets first_above_time = 105 ms; 3 more
    /// arrive at 9 ms. At 10 ms heads 1 and 2 (sojourn 10 ms) keep it; head 3
    /// (sojourn 1 ms) clears it.
    #[test]
    fn test_above_target_sojourn_below_target_clears_first_above_time() {
        let mut q = codel(CodelParams::default());
        fill(&mut q, 0, 3, MTU, Ecn::NotEct, Time::ZERO);
        assert_eq!(deq(&mut q, ms(5)), out(0, &[], false));
        assert_eq!(q.state().first_above_time, Some(ms(105)));
        fill(&mut q, 3, 3, MTU, Ecn::NotEct, ms(9));
        assert_eq!(deq(&mut q, ms(10)), out(1, &[], false));
        assert_eq!(deq(&mut q, ms(10)), out(2, &[], false));
        assert_eq!(q.state().first_above_time, Some(ms(105)));
        assert_eq!(deq(&mut q, ms(10)), out(3, &[], false));
        assert_eq!(q.state().first_above_time, None);
    }

    /// Guard: [1000 B, 1500 B] at 0, dequeue at 10 ms leaves exactly 1500 B
    /// = MTU: no first_above_time. [1000 B, 1501 B] leaves 1501 B: set.
    #[test]
    fn test_idle_dequeue_bytes_left_at_most_mtu_guard_holds() {
        for (second, expected) in [(1500, None), (1501, Some(ms(110)))] {
            let mut q = codel(CodelParams::default());
            fill(&mut q, 0, 1, 1000, Ecn::NotEct, Time::ZERO);
            fill(&mut q, 1, 1, second, Ecn::NotEct, Time::ZERO);
            deq(&mut q, ms(10));
            assert_eq!(q.state().first_above_time, expected, "second {second} B");
        }
    }

    /// One 1500 B packet queued, then every second one arrival and one
    /// dequeue: each head has waited 1 s, but only 1500 B = MTU is left
    /// behind it, so nothing is ever dropped.
    #[test]
    fn test_short_queue_long_sojourn_never_dropped() {
        let mut q = codel(CodelParams::default());
        fill(&mut q, 0, 1, MTU, Ecn::NotEct, Time::ZERO);
        for k in 1..=50 {
            fill(&mut q, k, 1, MTU, Ecn::NotEct, ms(1000 * k));
            assert_eq!(deq(&mut q, ms(1000 * k)), out(k - 1, &[], false));
            assert_eq!(q.state().first_above_time, None);
        }
        assert_eq!(q.stats().head_drops, 0);
    }

    /// Dropping (count 1, drop_next 205 ms), dequeue at 400 ms: drops while
    /// drop_next <= now: 205 (count 2, next 275.710678), 275.71 (count 3,
    /// next 333.445705), 333.45 (count 4, next 383.445705), 383.45 (count 5,
    /// next 428.167065 > 400): four drops in one call.
    #[test]
    fn test_dropping_far_past_drop_next_drops_in_one_call() {
        let mut q = codel_dropping();
        assert_eq!(deq(&mut q, ms(400)), out(7, &[3, 4, 5, 6], false));
        let s = q.state();
        assert_eq!((s.count, s.lastcount, s.dropping), (5, 1, true));
        assert_eq!(s.drop_next, Time(205_000_000 + SPACING_NS.iter().sum::<u64>()));
    }

    /// Dropping, dequeue before drop_next: the head goes out undropped.
    #[test]
    fn test_dropping_before_drop_next_no_drop() {
        let mut q = codel_dropping();
        assert_eq!(deq(&mut q, Time(ms(205).nanos() - 1)), out(3, &[], false));
        assert!(q.state().dropping);
    }

    /// Dropping (count 4, drop_next 150 ms), dequeue at 200 ms of a head
    /// that waited 2 ms < target with 6000 B behind it: no drop although
    /// drop_next has passed; the state is left with count and lastcount kept.
    #[test]
    fn test_dropping_sojourn_below_target_leaves_keeps_count() {
        let mut s = CodelState {
            dropping: true,
            count: 4,
            lastcount: 2,
            drop_next: ms(150),
            first_above_time: Some(ms(50)),
            ..CodelState::default()
        };
        let mut f = fifo_of(5, ms(198));
        let mut fx = Effects::default();
        let got = codel_dequeue(&law(), &mut s, &mut CodelStats::default(), &mut f, ms(200), &mut fx);
        assert_eq!(got.map(|p| p.id), Some(0));
        assert!(fx.discards.is_empty());
        assert_eq!((s.dropping, s.count, s.lastcount), (false, 4, 2));
        assert_eq!((s.first_above_time, s.drop_next), (None, ms(150)));
    }

    /// Dropping with an empty queue (FQ-CoDel's overflow rule can empty a
    /// flow's queue behind CoDel's back): None, and the state is left.
    #[test]
    fn test_dropping_empty_queue_leaves() {
        let mut s = CodelState {
            dropping: true,
            count: 3,
            lastcount: 1,
            drop_next: ms(100),
            first_above_time: Some(ms(50)),
            ..CodelState::default()
        };
        let got = codel_dequeue(
            &law(),
            &mut s,
            &mut CodelStats::default(),
            &mut Fifo::new(),
            ms(200),
            &mut Effects::default(),
        );
        assert_eq!(got, None);
        assert_eq!((s.dropping, s.first_above_time, s.count), (false, None, 3));
    }

    /// ECN: at 105 ms the ECT head is marked and returned instead of being
    /// dropped; count 1, drop_next 205 ms. At 210 ms the next is marked,
    /// count 2, drop_next = 205 + 70.710678 ms (control law from drop_next,
    /// as Linux; ns-3 would give 280.710678 ms from now).
    #[test]
    fn test_ecn_entry_and_dropping_mark_instead_of_drop() {
        let mut q = codel_above_target(codel_ecn(), Ecn::Ect0);
        assert_eq!(deq(&mut q, ms(105)), out(1, &[], true));
        assert_eq!((q.state().count, q.state().drop_next), (1, ms(205)));
        assert_eq!(deq(&mut q, ms(150)), out(2, &[], false));
        assert_eq!(deq(&mut q, ms(210)), out(3, &[], true));
        let s = q.state();
        assert_eq!((s.count, s.dropping), (2, true));
        assert_eq!(s.drop_next, Time(205_000_000 + SPACING_NS[0]));
        assert_eq!(q.stats().ecn_marks, 2);
        assert_eq!(q.stats().head_drops, 0);
    }

    /// ECN on, but the head is not ECN-capable: it is dropped.
    #[test]
    fn test_ecn_not_ect_head_dropped() {
        let mut q = codel_above_target(codel_ecn(), Ecn::NotEct);
        assert_eq!(deq(&mut q, ms(105)), out(2, &[1], false));
        assert_eq!(q.stats().head_drops, 1);
    }

    /// ce_threshold 1 ms: sojourn exactly 1 ms is not marked, 1 ms + 1 ns is;
    /// a Not-ECT packet is never marked; the control law is untouched.
    #[test]
    fn test_ce_threshold_marks_sojourn_above_threshold() {
        let mut q = codel(CodelParams {
            ecn: true,
            ce_threshold: Some(Duration::from_millis(1)),
            ..CodelParams::default()
        });
        fill(&mut q, 0, 2, MTU, Ecn::Ect0, Time::ZERO);
        fill(&mut q, 2, 1, MTU, Ecn::NotEct, Time::ZERO);
        fill(&mut q, 3, 1, MTU, Ecn::Ect0, Time::ZERO);
        assert_eq!(deq(&mut q, ms(1)), out(0, &[], false));
        assert_eq!(deq(&mut q, Time(1_000_001)), out(1, &[], true));
        assert_eq!(deq(&mut q, ms(2)), out(2, &[], false));
        assert_eq!(deq(&mut q, ms(2)), out(3, &[], true));
        assert_eq!(q.stats().ce_marks, 2);
        assert_eq!((q.state().count, q.state().dropping), (0, false));
    }

    #[test]
    fn test_ce_threshold_without_ecn_rejected() {
        let err = Codel::new(
            CodelParams {
                ce_threshold: Some(Duration::from_millis(1)),
                ..CodelParams::default()
            },
            LINK,
        )
        .unwrap_err();
        assert_eq!(err.param, "ce_threshold");
    }

    #[test]
    fn test_zero_target_or_interval_rejected() {
        let zero_target = CodelParams {
            target: Duration::ZERO,
            ..CodelParams::default()
        };
        let zero_interval = CodelParams {
            interval: Duration::ZERO,
            ..CodelParams::default()
        };
        assert_eq!(Codel::new(zero_target, LINK).unwrap_err().param, "target");
        assert_eq!(Codel::new(zero_interval, LINK).unwrap_err().param, "interval");
    }

    #[test]
    fn test_full_queue_enqueue_tail_drops() {
        let mut q = codel(CodelParams {
            limit: Limit::Packets(3),
            ..CodelParams::default()
        });
        fill(&mut q, 0, 3, MTU, Ecn::NotEct, Time::ZERO);
        let v = q.enqueue(
            pkt(3, MTU, Ecn::NotEct, Time::ZERO),
            Time::ZERO,
            &mut Effects::default(),
        );
        assert_eq!(v, Verdict::Dropped(DropReason::Overflow));
        assert_eq!(q.backlog(), Backlog { pkts: 3, bytes: 4500 });
    }

    #[test]
    fn test_dropping_traced_reports_rfc_names() {
        let q = codel_dropping();
        let mut got = Vec::new();
        q.traced(&mut |k, v| got.push((k, v)));
        assert_eq!(
            got,
            vec![
                ("count", 1.0),
                ("lastcount", 1.0),
                ("dropping", 1.0),
                ("drop_next", 0.205),
                ("qdelay", 0.105),
                ("first_above_time", 0.105),
            ]
        );
    }

    #[test]
    fn test_default_params_follow_spec() {
        let q = codel(CodelParams::default());
        assert_eq!(q.effective().limit, Limit::Packets(1000));
        assert_eq!(q.law().maxpacket_bytes, MTU);
        assert_eq!(
            (q.law().target, q.law().interval),
            (Duration::from_millis(5), Duration::from_millis(100))
        );
        assert!(!q.law().ecn);
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for Codel {
        const FIFO: bool = true;

        fn configs() -> BoxedStrategy<Codel> {
            (1u32..60, any::<bool>())
                .prop_map(|(limit, ecn)| {
                    codel(CodelParams {
                        limit: Limit::Packets(limit),
                        ecn,
                        ..CodelParams::default()
                    })
                })
                .boxed()
        }
    }
}
