//! Time-driven early discard (TED): a FIFO that discards a packet instead of
//! transmitting it once the packet's deadline has passed.
//!
//! M. Baldi and A. Vesco, time-driven early discard for TCP over
//! time-sensitive networks (Politecnico di Torino). The router bounds the
//! time a packet may spend queued; a packet that would leave late is of no
//! use to its application and only delays the packets behind it, so it is
//! thrown away instead (by default when it reaches the head of the queue;
//! `check` below).
//!
//! Two modes:
//! - `lbd` (locally bounded delay): each TED queue bounds the packet's
//!   sojourn *at this queue* by its deadline. A packet whose sojourn exceeds
//!   the deadline is discarded.
//! - `ebd` (end-to-end bounded delay): the packet carries its remaining
//!   queueing budget (`Packet::ted_budget`), set to the deadline by the
//!   sender. Each TED queue on the path subtracts the packet's sojourn there
//!   and discards the packet if the budget is exhausted.
//!
//! The deadline of a packet is, in order: its flow's (`Packet::ted_deadline`,
//! set from the traffic group's `ted_deadline`), the queue's deadline for the
//! packet's traffic class, the queue's `default_deadline`. A packet with none
//! never expires. In `ebd` mode a packet that reaches its first TED queue
//! with no budget gets that queue's deadline as its budget.
//!
//! Where the deadline is checked (`check`) is a choice the paper leaves
//! open; the wait compared with the deadline (lbd) or budget (ebd) is:
//! - `head` (default): at dequeue, the sojourn `now - enqueued_at`. An
//!   `ebd` queue spends the sojourn.
//! - `departure`: at dequeue, the sojourn plus the packet's own
//!   transmission time at the link rate (`size_bytes * 8 / rate_bps`,
//!   rounded up to the nanosecond), so that a packet that would *finish*
//!   leaving late is discarded. An `ebd` queue spends both.
//! - `arrival`: at enqueue, the predicted wait, the bytes queued ahead
//!   (the FIFO backlog, without the packet in transmission, which the queue
//!   does not hold) times 8 / `rate_bps`, rounded up. A packet predicted
//!   late is dropped at once (`DropReason::Expired`); nothing is discarded
//!   at dequeue, where an `ebd` queue spends the actual sojourn (the budget
//!   stopping at zero, since the prediction can fall short by up to one
//!   packet in transmission).
//!
//! "Exceeds" is strict: a packet whose wait equals its deadline is sent.
//! At dequeue only the head is checked, as the paper describes; packets
//! behind it are not scanned. The hard buffer limit applies at enqueue
//! first (tail drop, before an `arrival` check); `limit = "inf"` is allowed.

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::Packet;
use crate::time::{backlog_drain_time, transmission_time, Duration, Time};
use crate::{DropReason, Effects, LinkInfo, ParamError, QueueDisc, Verdict};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TedMode {
    /// Locally bounded delay: the deadline bounds the sojourn at each queue.
    Lbd,
    /// End-to-end bounded delay: queues spend the packet's budget.
    Ebd,
}

/// Where a packet's wait is compared with its deadline or budget (see the
/// module documentation for the wait each one measures).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum TedCheck {
    /// At dequeue: the sojourn so far.
    #[default]
    Head,
    /// At dequeue: the sojourn plus the packet's own transmission time.
    Departure,
    /// At enqueue: the backlog ahead's transmission time.
    Arrival,
}

impl TedCheck {
    pub fn as_str(self) -> &'static str {
        match self {
            TedCheck::Head => "head",
            TedCheck::Departure => "departure",
            TedCheck::Arrival => "arrival",
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct TedParams {
    pub limit: Limit,
    pub mode: TedMode,
    pub check: TedCheck,
    /// Deadline by traffic class index (`Packet::class`); `None` for a class
    /// without one.
    pub class_deadlines: Vec<Option<Duration>>,
    pub default_deadline: Option<Duration>,
}

impl TedParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()
    }

    /// The deadline this queue applies to `pkt` in `lbd` mode, or gives it
    /// as a budget in `ebd` mode.
    #[inline]
    fn deadline(&self, pkt: &Packet) -> Option<Duration> {
        if pkt.ted_deadline != Duration::MAX {
            return Some(pkt.ted_deadline);
        }
        self.class_deadlines
            .get(pkt.class as usize)
            .copied()
            .flatten()
            .or(self.default_deadline)
    }

    /// What bounds `pkt`'s wait at this queue: its deadline (lbd) or the
    /// budget it carries (ebd), `None` for nothing.
    #[inline]
    fn bound(&self, pkt: &Packet) -> Option<Duration> {
        match self.mode {
            TedMode::Lbd => self.deadline(pkt),
            TedMode::Ebd => (pkt.ted_budget != Duration::MAX).then_some(pkt.ted_budget),
        }
    }
}

/// What happens to the packet at the head: sent with its (new) budget, or
/// discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TedAction {
    Send { budget: Duration },
    Expire,
}

/// The decision for a packet whose wait is `sojourn` (measured where
/// `check` says), given its deadline (lbd) or budget (ebd), `None` for none.
#[inline]
pub fn ted_decide(mode: TedMode, limit: Option<Duration>, budget: Duration, sojourn: Duration) -> TedAction {
    match (mode, limit) {
        (_, None) => TedAction::Send { budget },
        (TedMode::Lbd, Some(d)) if sojourn > d => TedAction::Expire,
        (TedMode::Lbd, Some(_)) => TedAction::Send { budget },
        (TedMode::Ebd, Some(b)) if sojourn > b => TedAction::Expire,
        (TedMode::Ebd, Some(b)) => TedAction::Send {
            budget: Duration(b.0 - sojourn.0),
        },
    }
}

#[derive(Clone, Debug, Default)]
pub struct TedState {
    /// Packets discarded as expired so far.
    pub expired: u64,
}

#[derive(Clone, Debug)]
pub struct Ted {
    params: TedParams,
    state: TedState,
    /// The link's rate, for the `departure` and `arrival` checks.
    rate_bps: u64,
    fifo: Fifo,
}

impl Ted {
    pub fn new(params: TedParams, link: LinkInfo) -> Result<Ted, ParamError> {
        params.validate()?;
        if params.check != TedCheck::Head && link.rate_bps == 0 {
            return Err(ParamError::new(
                "check",
                format!(
                    "\"{}\" needs the link's rate to compute transmission times (got a rate of 0)",
                    params.check.as_str()
                ),
            ));
        }
        Ok(Ted {
            params,
            state: TedState::default(),
            rate_bps: link.rate_bps,
            fifo: Fifo::new(),
        })
    }

    pub fn params(&self) -> &TedParams {
        &self.params
    }

    pub fn state(&self) -> &TedState {
        &self.state
    }
}

impl QueueDisc for Ted {
    #[inline]
    fn enqueue(&mut self, mut pkt: Packet, _now: Time, _fx: &mut Effects) -> Verdict {
        if !self.params.limit.admits(self.fifo.backlog(), pkt.size_bytes) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        if self.params.mode == TedMode::Ebd && pkt.ted_budget == Duration::MAX {
            if let Some(d) = self.params.deadline(&pkt) {
                pkt.ted_budget = d;
            }
        }
        if self.params.check == TedCheck::Arrival {
            // Predicted wait: the backlog ahead, serialised at the link rate.
            let wait = backlog_drain_time(self.fifo.backlog().bytes, self.rate_bps);
            let bound = self.params.bound(&pkt);
            if ted_decide(self.params.mode, bound, pkt.ted_budget, wait) == TedAction::Expire {
                self.state.expired += 1;
                return Verdict::Dropped(DropReason::Expired);
            }
        }
        self.fifo.push_back(pkt);
        Verdict::Enqueued
    }

    #[inline]
    fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet> {
        while let Some(mut pkt) = self.fifo.pop_front() {
            let sojourn = now.saturating_since(pkt.enqueued_at);
            let wait = match self.params.check {
                TedCheck::Head => sojourn,
                TedCheck::Departure => sojourn + transmission_time(pkt.size_bytes, self.rate_bps),
                TedCheck::Arrival => {
                    // Checked at enqueue; an ebd budget is spent, down to zero.
                    if self.params.mode == TedMode::Ebd && pkt.ted_budget != Duration::MAX {
                        pkt.ted_budget = Duration(pkt.ted_budget.0.saturating_sub(sojourn.0));
                    }
                    return Some(pkt);
                }
            };
            match ted_decide(self.params.mode, self.params.bound(&pkt), pkt.ted_budget, wait) {
                TedAction::Send { budget } => {
                    pkt.ted_budget = budget;
                    return Some(pkt);
                }
                TedAction::Expire => {
                    self.state.expired += 1;
                    fx.discard(pkt, DropReason::Expired);
                }
            }
        }
        None
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("expired", self.state.expired as f64);
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Constants

    const MS: u64 = 1_000_000;
    /// 8 Mb/s: a 1000-byte packet takes exactly 1 ms to transmit.
    const LINK: LinkInfo = LinkInfo {
        rate_bps: 8_000_000,
        mtu_bytes: 1500,
    };

    // Helpers

    fn ted(mode: TedMode, class_deadlines: Vec<Option<Duration>>, default_deadline: Option<Duration>) -> Ted {
        Ted::new(
            TedParams {
                limit: Limit::Unlimited,
                mode,
                check: TedCheck::Head,
                class_deadlines,
                default_deadline,
            },
            LINK,
        )
        .unwrap()
    }

    /// A queue checking at `check` with a default deadline of 2 ms.
    fn ted_2ms(mode: TedMode, check: TedCheck) -> Ted {
        Ted::new(
            TedParams {
                limit: Limit::Unlimited,
                mode,
                check,
                class_deadlines: vec![],
                default_deadline: Some(Duration::from_millis(2)),
            },
            LINK,
        )
        .unwrap()
    }

    /// A 1000-byte packet (1 ms on `LINK`) arriving at `at_ms`.
    fn kb(id: u64, at_ms: u64) -> Packet {
        Packet {
            size_bytes: 1000,
            ..pkt(id, 0, at_ms)
        }
    }

    /// Packets 1, 2 and 3 at 0 ms and 4 at 1 ms; the link dequeues at 0, 1,
    /// 2 and 3 ms, as it does when busy with 1 ms packets.
    fn four_then_drain(q: &mut Ted) -> Vec<Step> {
        for p in [kb(1, 0), kb(2, 0), kb(3, 0), kb(4, 1)] {
            offer(q, p);
        }
        (0..4).map(|t| take(q, t)).collect()
    }

    fn pkt(id: u64, class: u8, at_ms: u64) -> Packet {
        Packet {
            id,
            class,
            size_bytes: 100,
            enqueued_at: Time(at_ms * MS),
            ..Packet::default()
        }
    }

    fn arrive(q: &mut Ted, p: Packet) -> Verdict {
        let mut fx = Effects::default();
        let v = q.enqueue(p, p.enqueued_at, &mut fx);
        assert!(fx.discards.is_empty());
        v
    }

    #[track_caller]
    fn offer(q: &mut Ted, p: Packet) {
        assert_eq!(arrive(q, p), Verdict::Enqueued);
    }

    /// What a dequeue did: the packet sent (id, budget in ms) and the ids expired.
    type Step = (Option<(u64, Option<u64>)>, Vec<u64>);

    /// Dequeues at `now_ms`.
    fn take(q: &mut Ted, now_ms: u64) -> Step {
        let mut fx = Effects::default();
        let sent = q
            .dequeue(Time(now_ms * MS), &mut fx)
            .map(|p| (p.id, (p.ted_budget != Duration::MAX).then_some(p.ted_budget.0 / MS)));
        (
            sent,
            fx.discards
                .iter()
                .map(|(p, r)| {
                    assert_eq!(*r, DropReason::Expired);
                    p.id
                })
                .collect(),
        )
    }

    #[test]
    fn test_lbd_head_past_deadline_is_discarded_next_sent() {
        // Class 0 deadline 10 ms. Packets queued at 0, 5 and 8 ms; at t = 12 ms
        // packet 1 waited 12 > 10 (expired), packet 2 waited 7 (sent).
        let mut q = ted(TedMode::Lbd, vec![Some(Duration::from_millis(10))], None);
        offer(&mut q, pkt(1, 0, 0));
        offer(&mut q, pkt(2, 0, 5));
        offer(&mut q, pkt(3, 0, 8));
        assert_eq!(take(&mut q, 12), (Some((2, None)), vec![1]));
        // At 18 ms packet 3 waited exactly 10 ms: not more than its deadline.
        assert_eq!(take(&mut q, 18), (Some((3, None)), vec![]));
        assert_eq!(q.state().expired, 1);
    }

    #[test]
    fn test_lbd_deadline_precedence_flow_then_class_then_default() {
        // Flow deadline 2 ms beats the class's 10 ms; class 1 has none and
        // falls back to the default 4 ms; with no default it never expires.
        let mut q = ted(
            TedMode::Lbd,
            vec![Some(Duration::from_millis(10)), None],
            Some(Duration::from_millis(4)),
        );
        offer(
            &mut q,
            Packet {
                ted_deadline: Duration::from_millis(2),
                ..pkt(1, 0, 0)
            },
        );
        offer(&mut q, pkt(2, 1, 0));
        offer(&mut q, pkt(3, 0, 0));
        // At 5 ms: 1 waited 5 > 2, 2 waited 5 > 4 (default), 3 waited 5 <= 10.
        assert_eq!(take(&mut q, 5), (Some((3, None)), vec![1, 2]));
        let mut q = ted(TedMode::Lbd, vec![None], None);
        offer(&mut q, pkt(4, 0, 0));
        assert_eq!(take(&mut q, 1_000_000), (Some((4, None)), vec![]));
    }

    #[test]
    fn test_ebd_budget_is_spent_across_two_queues() {
        // Budget 10 ms from the sender; 4 ms at the first queue leaves 6 ms;
        // 6 ms at the second is still within it (0 left); 7 ms would expire.
        let mut a = ted(TedMode::Ebd, vec![], None);
        let mut b = ted(TedMode::Ebd, vec![], None);
        let sent = Packet {
            ted_budget: Duration::from_millis(10),
            ..pkt(1, 0, 0)
        };
        offer(&mut a, sent);
        let mut fx = Effects::default();
        let mut hop = a.dequeue(Time(4 * MS), &mut fx).unwrap();
        assert_eq!(hop.ted_budget, Duration::from_millis(6));
        hop.enqueued_at = Time(10 * MS);
        offer(&mut b, hop);
        offer(
            &mut b,
            Packet {
                ted_budget: Duration::from_millis(6),
                ..pkt(2, 0, 10)
            },
        );
        assert_eq!(take(&mut b, 16), (Some((1, Some(0))), vec![]));
        assert_eq!(take(&mut b, 17), (None, vec![2]));
    }

    #[test]
    fn test_ebd_first_queue_gives_its_deadline_as_budget() {
        let mut q = ted(TedMode::Ebd, vec![Some(Duration::from_millis(3))], None);
        offer(&mut q, pkt(1, 0, 0));
        assert_eq!(take(&mut q, 1), (Some((1, Some(2))), vec![]));
    }

    #[test]
    fn test_limit_still_applies() {
        let mut q = Ted::new(
            TedParams {
                limit: Limit::Packets(1),
                mode: TedMode::Lbd,
                check: TedCheck::Head,
                class_deadlines: vec![],
                default_deadline: None,
            },
            LINK,
        )
        .unwrap();
        offer(&mut q, pkt(1, 0, 0));
        assert_eq!(
            q.enqueue(pkt(2, 0, 0), Time::ZERO, &mut Effects::default()),
            Verdict::Dropped(DropReason::Overflow)
        );
    }

    #[test]
    fn test_lbd_head_check_sends_a_packet_leaving_at_its_deadline() {
        // Deadline 2 ms. Sojourns at dequeue: 1: 0, 2: 1, 3: 2 (= 2, sent),
        // 4: 3 - 1 = 2 (sent).
        let mut q = ted_2ms(TedMode::Lbd, TedCheck::Head);
        assert_eq!(
            four_then_drain(&mut q),
            [
                (Some((1, None)), vec![]),
                (Some((2, None)), vec![]),
                (Some((3, None)), vec![]),
                (Some((4, None)), vec![]),
            ]
        );
        assert_eq!(q.state().expired, 0);
    }

    #[test]
    fn test_lbd_departure_check_discards_a_packet_that_would_finish_late() {
        // The same trace; sojourn + 1 ms of transmission: 1: 0 + 1, 2: 1 + 1
        // (= 2, sent, it finishes at exactly 2 ms), 3: 2 + 1 = 3 > 2
        // (discarded, though head sends it), then 4 in the same call:
        // 1 + 1 = 2 (sent). Nothing is left for 3 ms.
        let mut q = ted_2ms(TedMode::Lbd, TedCheck::Departure);
        assert_eq!(
            four_then_drain(&mut q),
            [
                (Some((1, None)), vec![]),
                (Some((2, None)), vec![]),
                (Some((4, None)), vec![3]),
                (None, vec![]),
            ]
        );
        assert_eq!(q.state().expired, 1);
    }

    #[test]
    fn test_lbd_arrival_check_drops_behind_three_queued_packets() {
        // Deadline 2 ms; predicted wait = bytes queued / 1000 B per ms.
        let mut q = ted_2ms(TedMode::Lbd, TedCheck::Arrival);
        offer(&mut q, kb(1, 0)); // 0 B ahead: 0 ms
        offer(&mut q, kb(2, 0)); // 1000 B: 1 ms
        offer(&mut q, kb(3, 0)); // 2000 B: 2 ms, not more than 2
        assert_eq!(arrive(&mut q, kb(4, 0)), Verdict::Dropped(DropReason::Expired)); // 3 ms > 2
        assert_eq!(q.state().expired, 1);
        assert_eq!(q.backlog().bytes, 3000);
        // 1 leaves (the queue no longer holds it): 5 sees 2000 B ahead, 2 ms,
        // and is queued although it will wait 3 ms (1, 2, 3 before it).
        assert_eq!(take(&mut q, 0), (Some((1, None)), vec![]));
        offer(&mut q, kb(5, 0));
        // Nothing is discarded at dequeue, however late.
        assert_eq!(take(&mut q, 1), (Some((2, None)), vec![]));
        assert_eq!(take(&mut q, 2), (Some((3, None)), vec![]));
        assert_eq!(take(&mut q, 3), (Some((5, None)), vec![]));
        assert_eq!(q.state().expired, 1);
    }

    #[test]
    fn test_ebd_head_check_spends_the_sojourn() {
        // Budget 2 ms (the queue's deadline); left: 1: 2 - 0, 2: 2 - 1,
        // 3: 2 - 2, 4: 2 - (3 - 1).
        let mut q = ted_2ms(TedMode::Ebd, TedCheck::Head);
        assert_eq!(
            four_then_drain(&mut q),
            [
                (Some((1, Some(2))), vec![]),
                (Some((2, Some(1))), vec![]),
                (Some((3, Some(0))), vec![]),
                (Some((4, Some(0))), vec![]),
            ]
        );
    }

    #[test]
    fn test_ebd_departure_check_spends_sojourn_and_transmission() {
        // Left: 1: 2 - (0 + 1), 2: 2 - (1 + 1); 3: 2 + 1 = 3 > 2 discarded;
        // 4: 2 - (1 + 1).
        let mut q = ted_2ms(TedMode::Ebd, TedCheck::Departure);
        assert_eq!(
            four_then_drain(&mut q),
            [
                (Some((1, Some(1))), vec![]),
                (Some((2, Some(0))), vec![]),
                (Some((4, Some(0))), vec![3]),
                (None, vec![]),
            ]
        );
        assert_eq!(q.state().expired, 1);
    }

    #[test]
    fn test_ebd_arrival_check_compares_the_carried_budget() {
        // Budget 2 ms from this queue; 4 sees 3000 B ahead, 3 ms > 2.
        let mut q = ted_2ms(TedMode::Ebd, TedCheck::Arrival);
        offer(&mut q, kb(1, 0));
        offer(&mut q, kb(2, 0));
        offer(&mut q, kb(3, 0));
        assert_eq!(arrive(&mut q, kb(4, 0)), Verdict::Dropped(DropReason::Expired));
        // A packet carrying 1 ms from upstream sees 2000 B ahead (after 1
        // leaves): 2 ms > 1, dropped; the queue's 2 ms deadline is not used.
        assert_eq!(take(&mut q, 0), (Some((1, Some(2))), vec![]));
        assert_eq!(
            arrive(
                &mut q,
                Packet {
                    ted_budget: Duration::from_millis(1),
                    ..kb(5, 0)
                }
            ),
            Verdict::Dropped(DropReason::Expired)
        );
        assert_eq!(q.state().expired, 2);
        // Dequeue spends the actual sojourn: 2: 2 - 1; 3 waited 3 ms, more
        // than its 2, and is sent with nothing left.
        assert_eq!(take(&mut q, 1), (Some((2, Some(1))), vec![]));
        assert_eq!(take(&mut q, 3), (Some((3, Some(0))), vec![]));
    }

    #[test]
    fn test_check_other_than_head_needs_a_link_rate() {
        let params = TedParams {
            check: TedCheck::Departure,
            ..ted_2ms(TedMode::Lbd, TedCheck::Head).params().clone()
        };
        let no_rate = LinkInfo { rate_bps: 0, ..LINK };
        let e = Ted::new(params.clone(), no_rate).unwrap_err();
        assert_eq!(e.param, "check");
        assert!(e.message.contains("\"departure\" needs the link's rate"), "{e}");
        let head = TedParams {
            check: TedCheck::Head,
            ..params
        };
        assert!(Ted::new(head, no_rate).is_ok());
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for Ted {
        const FIFO: bool = true;

        /// Class 0 has a deadline of 1 to 5 ms, class 1 none.
        fn configs() -> BoxedStrategy<Ted> {
            let checks = vec![TedCheck::Head, TedCheck::Departure, TedCheck::Arrival];
            (1u64..6, prop::sample::select(checks))
                .prop_map(|(deadline_ms, check)| {
                    let d = Duration::from_millis(deadline_ms);
                    let params = TedParams {
                        check,
                        ..ted(TedMode::Lbd, vec![Some(d)], None).params().clone()
                    };
                    Ted::new(params, LINK).unwrap()
                })
                .boxed()
        }

        fn check_state(&self, tally: &Tally) -> Result<(), TestCaseError> {
            let expired = DropReason::Expired.index();
            prop_assert_eq!(self.state.expired, tally.dropped[expired] + tally.discarded[expired]);
            if self.params.check == TedCheck::Arrival {
                // Decided at arrival: nothing is discarded later, and with no
                // limit every drop is an expiry.
                prop_assert_eq!(tally.discarded_total(), 0);
                prop_assert_eq!(tally.dropped_total(), tally.dropped[expired]);
            } else {
                prop_assert_eq!(tally.dropped_total(), 0);
            }
            Ok(())
        }

        /// No packet leaves later than its deadline allows.
        fn check_departure(&self, pkt: &Packet, now: Time) -> Result<(), TestCaseError> {
            let Some(d) = self.params.deadline(pkt) else {
                return Ok(());
            };
            let sojourn = now.saturating_since(pkt.enqueued_at);
            match self.params.check {
                TedCheck::Head => prop_assert!(sojourn <= d),
                TedCheck::Departure => {
                    prop_assert!(sojourn + transmission_time(pkt.size_bytes, self.rate_bps) <= d)
                }
                TedCheck::Arrival => {}
            }
            Ok(())
        }
    }
}
