//! Time-driven early discard (TED): a FIFO that discards a packet instead of
//! transmitting it once the packet's deadline has passed.
//!
//! M. Baldi and A. Vesco, time-driven early discard for TCP over
//! time-sensitive networks (Politecnico di Torino). The router bounds the
//! time a packet may spend queued; a packet that would leave late is of no
//! use to its application and only delays the packets behind it, so it is
//! thrown away when it reaches the head of the queue.
//!
//! Two modes:
//! - `lbd` (locally bounded delay): each TED queue bounds the packet's
//!   sojourn *at this queue* by its deadline. A packet whose sojourn exceeds
//!   the deadline when it reaches the head is discarded.
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
//! "Exceeds" is strict: a packet whose sojourn equals its deadline is sent.
//! Expired packets are checked only at the head (at dequeue), as the paper
//! describes; packets behind the head are not scanned. The hard buffer
//! limit still applies at enqueue (tail drop); `limit = "inf"` is allowed.

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::Packet;
use crate::time::{Duration, Time};
use crate::{DropReason, Effects, ParamError, QueueDisc, Verdict};

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TedMode {
    /// Locally bounded delay: the deadline bounds the sojourn at each queue.
    Lbd,
    /// End-to-end bounded delay: queues spend the packet's budget.
    Ebd,
}

#[derive(Clone, Debug, PartialEq)]
pub struct TedParams {
    pub limit: Limit,
    pub mode: TedMode,
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
}

/// What happens to the packet at the head: sent with its (new) budget, or
/// discarded.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TedAction {
    Send { budget: Duration },
    Expire,
}

/// The decision at the head of the queue for a packet that waited
/// `sojourn`, given its deadline (lbd) or budget (ebd), `None` for none.
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
    fifo: Fifo,
}

impl Ted {
    pub fn new(params: TedParams) -> Result<Ted, ParamError> {
        params.validate()?;
        Ok(Ted {
            params,
            state: TedState::default(),
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
        self.fifo.push_back(pkt);
        Verdict::Enqueued
    }

    #[inline]
    fn dequeue(&mut self, now: Time, fx: &mut Effects) -> Option<Packet> {
        while let Some(mut pkt) = self.fifo.pop_front() {
            let limit = match self.params.mode {
                TedMode::Lbd => self.params.deadline(&pkt),
                TedMode::Ebd => (pkt.ted_budget != Duration::MAX).then_some(pkt.ted_budget),
            };
            match ted_decide(
                self.params.mode,
                limit,
                pkt.ted_budget,
                now.saturating_since(pkt.enqueued_at),
            ) {
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
    use proptest::prelude::*;

    // Constants

    const MS: u64 = 1_000_000;

    // Helpers

    fn ted(mode: TedMode, class_deadlines: Vec<Option<Duration>>, default_deadline: Option<Duration>) -> Ted {
        Ted::new(TedParams {
            limit: Limit::Unlimited,
            mode,
            class_deadlines,
            default_deadline,
        })
        .unwrap()
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

    #[track_caller]
    fn offer(q: &mut Ted, p: Packet) {
        assert_eq!(q.enqueue(p, p.enqueued_at, &mut Effects::default()), Verdict::Enqueued);
    }

    /// Dequeues at `now_ms`: the packet sent (id, budget in ms) and the ids expired.
    fn take(q: &mut Ted, now_ms: u64) -> (Option<(u64, Option<u64>)>, Vec<u64>) {
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
        let mut q = Ted::new(TedParams {
            limit: Limit::Packets(1),
            mode: TedMode::Lbd,
            class_deadlines: vec![],
            default_deadline: None,
        })
        .unwrap();
        offer(&mut q, pkt(1, 0, 0));
        assert_eq!(
            q.enqueue(pkt(2, 0, 0), Time::ZERO, &mut Effects::default()),
            Verdict::Dropped(DropReason::Overflow)
        );
    }

    proptest! {
        #[test]
        fn prop_conservation_and_no_late_departure(
            ops in prop::collection::vec((any::<bool>(), 0u64..5), 1..200),
            deadline_ms in 1u64..6,
        ) {
            let d = Duration::from_millis(deadline_ms);
            let mut q = ted(TedMode::Lbd, vec![Some(d)], None);
            let (mut now, mut offered, mut sent, mut expired) = (0u64, 0u64, 0u64, 0u64);
            for (i, (arrive, step_ms)) in ops.into_iter().enumerate() {
                now += step_ms * MS;
                if arrive {
                    offer(&mut q, Packet { id: i as u64, size_bytes: 100, enqueued_at: Time(now), ..Packet::default() });
                    offered += 1;
                } else {
                    let mut fx = Effects::default();
                    if let Some(p) = q.dequeue(Time(now), &mut fx) {
                        prop_assert!(Time(now).saturating_since(p.enqueued_at) <= d);
                        sent += 1;
                    }
                    expired += fx.discards.len() as u64;
                }
            }
            prop_assert_eq!(offered, sent + expired + q.backlog().pkts as u64);
            prop_assert_eq!(q.backlog().bytes, 100 * q.backlog().pkts as u64);
        }
    }
}
