//! Drop-tail (FIFO with a hard limit), with tail or front drop.
//!
//! Tail drop discards the arrival that finds the buffer full, as ns-2's
//! `DropTail` and Linux's `pfifo`/`bfifo`. Front drop (ns-2 `drop_front_`)
//! accepts the arrival and discards packets from the head until it fits,
//! which hands the congestion signal to the sender one queueing delay
//! earlier. A packet larger than a whole byte limit is always discarded.

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::Packet;
use crate::time::Time;
use crate::{DropReason, Effects, ParamError, QueueDisc, Verdict};

#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum DropWhere {
    #[default]
    Tail,
    Front,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct DropTailParams {
    pub limit: Limit,
    pub drop: DropWhere,
}

impl DropTailParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()
    }
}

#[derive(Clone, Debug)]
pub struct DropTail {
    params: DropTailParams,
    fifo: Fifo,
}

impl DropTail {
    pub fn new(params: DropTailParams) -> Result<DropTail, ParamError> {
        params.validate()?;
        Ok(DropTail {
            params,
            fifo: Fifo::new(),
        })
    }

    pub fn params(&self) -> &DropTailParams {
        &self.params
    }
}

impl QueueDisc for DropTail {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, _now: Time, fx: &mut Effects) -> Verdict {
        let limit = self.params.limit;
        if limit.admits(self.fifo.backlog(), pkt.size_bytes) {
            self.fifo.push_back(pkt);
            return Verdict::Enqueued;
        }
        if self.params.drop == DropWhere::Tail || !limit.admits(Backlog::default(), pkt.size_bytes) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        while !limit.admits(self.fifo.backlog(), pkt.size_bytes) {
            let head = self.fifo.pop_front().expect("a non-admitting queue is not empty");
            fx.discard(head, DropReason::Overflow);
        }
        self.fifo.push_back(pkt);
        Verdict::Enqueued
    }

    #[inline]
    fn dequeue(&mut self, _now: Time, _fx: &mut Effects) -> Option<Packet> {
        self.fifo.pop_front()
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Helpers

    fn pkt(id: u64, size_bytes: u32) -> Packet {
        Packet {
            id,
            size_bytes,
            ..Packet::default()
        }
    }

    fn droptail(limit: Limit, drop: DropWhere) -> DropTail {
        DropTail::new(DropTailParams { limit, drop }).unwrap()
    }

    #[track_caller]
    fn offer(q: &mut DropTail, p: Packet) -> (Verdict, Vec<u64>) {
        let mut fx = Effects::default();
        let v = q.enqueue(p, Time::ZERO, &mut fx);
        (v, fx.discards.iter().map(|(p, _)| p.id).collect())
    }

    fn drain(q: &mut DropTail) -> Vec<u64> {
        let mut out = Vec::new();
        while let Some(p) = q.dequeue(Time::ZERO, &mut Effects::default()) {
            out.push(p.id);
        }
        out
    }

    #[test]
    fn test_tail_packet_limit_drops_third_arrival() {
        let mut q = droptail(Limit::Packets(2), DropWhere::Tail);
        assert_eq!(offer(&mut q, pkt(1, 100)), (Verdict::Enqueued, vec![]));
        assert_eq!(offer(&mut q, pkt(2, 100)), (Verdict::Enqueued, vec![]));
        assert_eq!(
            offer(&mut q, pkt(3, 100)),
            (Verdict::Dropped(DropReason::Overflow), vec![])
        );
        assert_eq!(q.backlog(), Backlog { pkts: 2, bytes: 200 });
        assert_eq!(drain(&mut q), vec![1, 2]);
    }

    #[test]
    fn test_tail_byte_limit_admits_only_what_fits() {
        let mut q = droptail(Limit::Bytes(1000), DropWhere::Tail);
        assert_eq!(offer(&mut q, pkt(1, 600)).0, Verdict::Enqueued);
        assert_eq!(offer(&mut q, pkt(2, 500)).0, Verdict::Dropped(DropReason::Overflow));
        assert_eq!(offer(&mut q, pkt(3, 400)).0, Verdict::Enqueued);
        assert_eq!(q.backlog(), Backlog { pkts: 2, bytes: 1000 });
    }

    #[test]
    fn test_front_packet_limit_discards_head() {
        let mut q = droptail(Limit::Packets(2), DropWhere::Front);
        offer(&mut q, pkt(1, 100));
        offer(&mut q, pkt(2, 100));
        assert_eq!(offer(&mut q, pkt(3, 100)), (Verdict::Enqueued, vec![1]));
        assert_eq!(drain(&mut q), vec![2, 3]);
    }

    #[test]
    fn test_front_byte_limit_discards_until_arrival_fits() {
        let mut q = droptail(Limit::Bytes(1000), DropWhere::Front);
        offer(&mut q, pkt(1, 300));
        offer(&mut q, pkt(2, 300));
        offer(&mut q, pkt(3, 300));
        // 900 B held; a 700 B arrival needs 600 B freed: packets 1 and 2 go.
        assert_eq!(offer(&mut q, pkt(4, 700)), (Verdict::Enqueued, vec![1, 2]));
        assert_eq!(q.backlog(), Backlog { pkts: 2, bytes: 1000 });
    }

    #[test]
    fn test_front_oversized_arrival_is_dropped_itself() {
        let mut q = droptail(Limit::Bytes(1000), DropWhere::Front);
        offer(&mut q, pkt(1, 300));
        assert_eq!(
            offer(&mut q, pkt(2, 1001)),
            (Verdict::Dropped(DropReason::Overflow), vec![])
        );
        assert_eq!(drain(&mut q), vec![1]);
    }

    #[test]
    fn test_zero_limit_rejected() {
        let err = DropTail::new(DropTailParams {
            limit: Limit::Packets(0),
            drop: DropWhere::Tail,
        })
        .unwrap_err();
        assert_eq!(err.param, "limit");
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for DropTail {
        const FIFO: bool = true;

        fn configs() -> BoxedStrategy<DropTail> {
            let limit = prop_oneof![
                (1u32..40).prop_map(Limit::Packets),
                (1000u64..40_000).prop_map(Limit::Bytes),
                Just(Limit::Unlimited),
            ];
            let drop = prop_oneof![Just(DropWhere::Tail), Just(DropWhere::Front)];
            (limit, drop).prop_map(|(limit, drop)| droptail(limit, drop)).boxed()
        }

        fn check_state(&self, tally: &Tally) -> Result<(), TestCaseError> {
            // Only the limit drops, at the tail or the front.
            let overflow = DropReason::Overflow.index();
            prop_assert_eq!(tally.dropped_total(), tally.dropped[overflow]);
            prop_assert_eq!(tally.discarded_total(), tally.discarded[overflow]);
            if self.params.drop == DropWhere::Tail {
                prop_assert_eq!(tally.discarded_total(), 0);
            }
            Ok(())
        }
    }
}
