//! Bernoulli dropper: every arrival is dropped independently with a fixed
//! probability `p`, then the survivors go into a drop-tail FIFO.
//!
//! Used to validate TCP against throughput models that assume independent
//! losses (Mathis et al. 1997, Padhye et al. 1998) and for the small-file
//! delay study of Jou and Baras, where P_d is held fixed. With `ecn`, an
//! ECN-capable packet that draws a drop is marked CE and queued instead.
//!
//! One uniform draw is taken per arrival, before the limit is checked, so the
//! draws line up arrival by arrival whatever the queue holds.

use crate::fifo::{Backlog, Fifo, Limit};
use crate::packet::{Ecn, Packet};
use crate::rng::{self, Rng};
use crate::time::Time;
use crate::{DropReason, Effects, ParamError, QueueDisc, Verdict};

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BernoulliParams {
    pub limit: Limit,
    /// Probability of dropping each arrival, in [0, 1].
    pub p: f64,
    pub ecn: bool,
}

impl BernoulliParams {
    pub fn validate(&self) -> Result<(), ParamError> {
        self.limit.validate()?;
        if !(0.0..=1.0).contains(&self.p) {
            return Err(ParamError::new("p", format!("must be in [0, 1] (got {})", self.p)));
        }
        Ok(())
    }
}

/// The decision: drop when the draw `u` in [0, 1) falls below `p`.
#[inline]
pub fn bernoulli_decide(p: f64, u: f64) -> bool {
    u < p
}

#[derive(Clone, Debug)]
pub struct Bernoulli {
    params: BernoulliParams,
    fifo: Fifo,
    rng: Rng,
}

impl Bernoulli {
    pub fn new(params: BernoulliParams, seed: u64) -> Result<Bernoulli, ParamError> {
        params.validate()?;
        Ok(Bernoulli {
            params,
            fifo: Fifo::new(),
            rng: <Rng as rand::SeedableRng>::seed_from_u64(seed),
        })
    }

    pub fn params(&self) -> &BernoulliParams {
        &self.params
    }

    /// The enqueue rule with the uniform draw given, for scripted tests.
    pub fn enqueue_with_draw(&mut self, mut pkt: Packet, u: f64) -> Verdict {
        let hit = bernoulli_decide(self.params.p, u);
        if hit && !(self.params.ecn && pkt.ecn.is_ecn_capable()) {
            return Verdict::Dropped(DropReason::Early);
        }
        if !self.params.limit.admits(self.fifo.backlog(), pkt.size_bytes) {
            return Verdict::Dropped(DropReason::Overflow);
        }
        if hit {
            pkt.ecn = Ecn::Ce;
            self.fifo.push_back(pkt);
            Verdict::Marked
        } else {
            self.fifo.push_back(pkt);
            Verdict::Enqueued
        }
    }
}

impl QueueDisc for Bernoulli {
    #[inline]
    fn enqueue(&mut self, pkt: Packet, _now: Time, _fx: &mut Effects) -> Verdict {
        let u = rng::uniform(&mut self.rng);
        self.enqueue_with_draw(pkt, u)
    }

    #[inline]
    fn dequeue(&mut self, _now: Time, _fx: &mut Effects) -> Option<Packet> {
        self.fifo.pop_front()
    }

    #[inline]
    fn backlog(&self) -> Backlog {
        self.fifo.backlog()
    }

    fn traced(&self, out: &mut dyn FnMut(&'static str, f64)) {
        out("p", self.params.p);
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::conservation::{Conserving, Tally};
    use proptest::prelude::*;

    // Helpers

    fn bernoulli(p: f64, limit: u32, ecn: bool) -> Bernoulli {
        Bernoulli::new(
            BernoulliParams {
                limit: Limit::Packets(limit),
                p,
                ecn,
            },
            1,
        )
        .unwrap()
    }

    fn pkt(id: u64, ecn: Ecn) -> Packet {
        Packet {
            id,
            size_bytes: 100,
            ecn,
            ..Packet::default()
        }
    }

    #[test]
    fn test_scripted_draws_drop_below_p() {
        let mut q = bernoulli(0.25, 10, false);
        let draws = [0.10, 0.25, 0.249, 0.9];
        let got: Vec<Verdict> = draws
            .iter()
            .enumerate()
            .map(|(i, &u)| q.enqueue_with_draw(pkt(i as u64, Ecn::NotEct), u))
            .collect();
        assert_eq!(
            got,
            vec![
                Verdict::Dropped(DropReason::Early),
                Verdict::Enqueued,
                Verdict::Dropped(DropReason::Early),
                Verdict::Enqueued
            ]
        );
        assert_eq!(q.backlog().pkts, 2);
    }

    #[test]
    fn test_ecn_capable_hit_is_marked_and_queued() {
        let mut q = bernoulli(0.5, 10, true);
        assert_eq!(q.enqueue_with_draw(pkt(1, Ecn::Ect0), 0.1), Verdict::Marked);
        assert_eq!(
            q.enqueue_with_draw(pkt(2, Ecn::NotEct), 0.1),
            Verdict::Dropped(DropReason::Early)
        );
        let head = q.dequeue(Time::ZERO, &mut Effects::default()).unwrap();
        assert_eq!((head.id, head.ecn), (1, Ecn::Ce));
    }

    #[test]
    fn test_full_queue_overflows_after_surviving_draw() {
        let mut q = bernoulli(0.5, 1, false);
        assert_eq!(q.enqueue_with_draw(pkt(1, Ecn::NotEct), 0.9), Verdict::Enqueued);
        assert_eq!(
            q.enqueue_with_draw(pkt(2, Ecn::NotEct), 0.9),
            Verdict::Dropped(DropReason::Overflow)
        );
        assert_eq!(
            q.enqueue_with_draw(pkt(3, Ecn::NotEct), 0.1),
            Verdict::Dropped(DropReason::Early)
        );
    }

    #[test]
    fn test_p_outside_unit_interval_rejected() {
        let err = Bernoulli::new(
            BernoulliParams {
                limit: Limit::Packets(5),
                p: 1.5,
                ecn: false,
            },
            1,
        )
        .unwrap_err();
        assert_eq!(err.param, "p");
    }

    // Conservation (crate::conservation plays the operations)

    impl Conserving for Bernoulli {
        const FIFO: bool = true;

        fn configs() -> BoxedStrategy<Bernoulli> {
            let limit = prop_oneof![
                (1u32..40).prop_map(Limit::Packets),
                (1000u64..40_000).prop_map(Limit::Bytes),
            ];
            (limit, 0.0..=1.0f64, any::<bool>(), any::<u64>())
                .prop_map(|(limit, p, ecn, seed)| Bernoulli::new(BernoulliParams { limit, p, ecn }, seed).unwrap())
                .boxed()
        }

        fn check_state(&self, tally: &Tally) -> Result<(), TestCaseError> {
            // It decides on arrival only.
            prop_assert_eq!(tally.discarded_total(), 0);
            Ok(())
        }
    }
}
