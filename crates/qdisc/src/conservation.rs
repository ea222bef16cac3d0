//! One conservation property, checked on every queue discipline.
//!
//! The same random sequences of arrivals, dequeues, waits and timer
//! expiries are played against each discipline (in each of the
//! configurations it offers through [`Conserving::configs`]), and after
//! every operation:
//!
//! - every packet offered is dequeued, dropped on arrival, discarded
//!   (`Effects::discards`) or still held, in packets and in bytes (the ns-3
//!   identity `received = dropped + dequeued + queued`);
//! - the backlog the discipline reports is exactly the packets a shadow
//!   queue says it holds, in packets and bytes;
//! - a dequeued or discarded packet is one that was held, and is taken
//!   once; a single FIFO sends in arrival order, any discipline sends each
//!   flow's packets in their order;
//! - only an ECN-capable packet is marked;
//! - whatever else the discipline promises about its own state
//!   ([`Conserving::check_state`]) and its departures
//!   ([`Conserving::check_departure`]): SFB's bin counts, FQ-CoDel's flow
//!   lists, TED's deadlines, probabilities in [0, 1], ...
//!
//! A discipline's configurations and promises live beside its own unit
//! tests, in its file; this module holds the operations, the shadow queue and
//! the list of disciplines ([`every_discipline!`] below), which must name
//! every variant of [`AnyQdisc`] or the crate's tests do not compile.

use std::fmt::Debug;

use proptest::prelude::*;

use crate::packet::{Ecn, Packet};
use crate::time::{Duration, Time};
use crate::{
    AnyQdisc, Bernoulli, Blue, Cobalt, Codel, DropReason, DropTail, DualPi2, Effects, FqCobalt, FqCodel, FqPie, Pie,
    QueueDisc, Red, RedTail, Sfb, Ted, Verdict,
};

/// What a discipline gives the harness.
pub(crate) trait Conserving: QueueDisc + Debug + Sized {
    /// Whether packets leave in the order they arrived (one FIFO); if not,
    /// only each flow's own packets are kept in order.
    const FIFO: bool;

    /// The configurations to exercise: limits in packets and in bytes,
    /// ECN on and off, the discipline's variants, seeds.
    fn configs() -> BoxedStrategy<Self>;

    /// What holds of the discipline's own state after every operation,
    /// given what the harness has counted so far.
    fn check_state(&self, _tally: &Tally) -> Result<(), TestCaseError> {
        Ok(())
    }

    /// What holds of a packet `dequeue` returns at `now`.
    fn check_departure(&self, _pkt: &Packet, _now: Time) -> Result<(), TestCaseError> {
        Ok(())
    }
}

/// What happened to the packets offered so far, by [`DropReason::index`].
#[derive(Debug, Default)]
pub(crate) struct Tally {
    /// Arrivals refused by their verdict.
    pub dropped: [u64; DropReason::ALL.len()],
    /// Packets reported in `Effects::discards`.
    pub discarded: [u64; DropReason::ALL.len()],
}

impl Tally {
    pub fn dropped_total(&self) -> u64 {
        self.dropped.iter().sum()
    }

    pub fn discarded_total(&self) -> u64 {
        self.discarded.iter().sum()
    }
}

#[derive(Clone, Debug)]
enum Op {
    /// A packet of `flow` arrives. Its traffic class is `flow % 2`, so
    /// disciplines that sort by class (RED-tail, TED's per-class deadlines)
    /// see both. An ECN-capable packet of flows 4 and 5 is ECT(1), of the
    /// others ECT(0), so a dual-queue AQM fills both its queues.
    Arrive {
        flow: u32,
        size_bytes: u32,
        ect: bool,
    },
    Dequeue,
    Wait {
        ns: u64,
    },
    /// The discipline's next timer, if it has one, expires.
    Timer,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        4 => (0u32..6, 1u32..3000, any::<bool>())
            .prop_map(|(flow, size_bytes, ect)| Op::Arrive { flow, size_bytes, ect }),
        3 => Just(Op::Dequeue),
        // Gaps at the scale of a packet time, of a CoDel interval and of
        // RED's idle periods and SFB's rehash interval.
        2 => prop_oneof![0u64..2_000_000, 0u64..20_000_000, 0u64..300_000_000].prop_map(|ns| Op::Wait { ns }),
        1 => Just(Op::Timer),
    ]
}

fn ops() -> impl Strategy<Value = Vec<Op>> {
    prop::collection::vec(op(), 0..400)
}

/// A packet the shadow queue holds.
#[derive(Clone, Copy, Debug)]
struct Held {
    id: u64,
    flow: u32,
    size_bytes: u32,
    ecn: Ecn,
}

/// The shadow queue, in arrival order, and the counts.
#[derive(Default)]
struct Books {
    held: Vec<Held>,
    tally: Tally,
    offered: (u64, u64),
    departed: (u64, u64),
    dropped_bytes: u64,
    discarded_bytes: u64,
}

impl Books {
    /// Takes `pkt` out of the shadow queue; `in_order` also requires that
    /// no packet held before it may leave first (the whole queue's for a
    /// FIFO, else its flow's).
    fn take(&mut self, pkt: &Packet, in_order: Option<bool>) -> Result<(), TestCaseError> {
        let Some(i) = self.held.iter().position(|h| h.id == pkt.id) else {
            return Err(TestCaseError::fail(format!("packet {} left but is not held", pkt.id)));
        };
        let h = self.held.remove(i);
        prop_assert_eq!(h.size_bytes, pkt.size_bytes);
        prop_assert_eq!(h.flow, pkt.flow);
        match in_order {
            Some(true) => prop_assert_eq!(i, 0, "packet {} overtook the head", pkt.id),
            // A dual-queue AQM sends a flow's ECT(1) packets by another
            // queue than its others: order holds among the same codepoint.
            Some(false) => prop_assert!(
                self.held[..i].iter().all(|e| e.flow != h.flow || e.ecn != h.ecn),
                "packet {} overtook an earlier packet of flow {}",
                pkt.id,
                h.flow
            ),
            None => {}
        }
        Ok(())
    }

    fn discards(&mut self, fx: &Effects) -> Result<(), TestCaseError> {
        for (p, reason) in &fx.discards {
            self.take(p, None)?;
            self.tally.discarded[reason.index()] += 1;
            self.discarded_bytes += u64::from(p.size_bytes);
        }
        Ok(())
    }
}

/// Plays `ops` against `q` and checks the invariants after every one.
fn conserves<Q: Conserving>(mut q: Q, ops: Vec<Op>) -> Result<(), TestCaseError> {
    let mut books = Books::default();
    let mut now = Time::ZERO;
    let mut fx = Effects::default();
    for (id, op) in ops.into_iter().enumerate() {
        fx.clear();
        match op {
            Op::Arrive { flow, size_bytes, ect } => {
                let ecn = match (ect, flow) {
                    (false, _) => Ecn::NotEct,
                    (true, 4 | 5) => Ecn::Ect1,
                    (true, _) => Ecn::Ect0,
                };
                let pkt = Packet {
                    id: id as u64,
                    flow,
                    class: (flow % 2) as u8,
                    size_bytes,
                    ecn,
                    enqueued_at: now,
                    ..Packet::default()
                };
                books.offered.0 += 1;
                books.offered.1 += u64::from(size_bytes);
                // Held before the discards are read: a discipline may
                // discard the packet it has just accepted (FQ-CoDel's
                // overflow from the fattest flow, front drop).
                match q.enqueue(pkt, now, &mut fx) {
                    Verdict::Dropped(reason) => {
                        books.tally.dropped[reason.index()] += 1;
                        books.dropped_bytes += u64::from(size_bytes);
                    }
                    v => {
                        prop_assert!(v == Verdict::Enqueued || ect, "a Not-ECT packet was marked");
                        books.held.push(Held {
                            id: pkt.id,
                            flow,
                            size_bytes,
                            ecn,
                        });
                    }
                }
                books.discards(&fx)?;
            }
            Op::Dequeue => {
                let out = q.dequeue(now, &mut fx);
                // Discards happen before the packet returned is chosen.
                books.discards(&fx)?;
                if let Some(p) = out {
                    books.take(&p, Some(Q::FIFO))?;
                    books.departed.0 += 1;
                    books.departed.1 += u64::from(p.size_bytes);
                    prop_assert!(!fx.marked || p.ecn == Ecn::Ce, "marked but not CE");
                    q.check_departure(&p, now)?;
                } else {
                    prop_assert!(!fx.marked);
                }
            }
            Op::Wait { ns } => now += Duration(ns),
            Op::Timer => {
                if let Some(t) = q.next_timer() {
                    now = now.max(t);
                    q.on_timer(now);
                }
            }
        }
        let b = q.backlog();
        let t = &books.tally;
        prop_assert_eq!(
            books.offered.0,
            books.departed.0 + t.dropped_total() + t.discarded_total() + u64::from(b.pkts)
        );
        prop_assert_eq!(
            books.offered.1,
            books.departed.1 + books.dropped_bytes + books.discarded_bytes + b.bytes
        );
        prop_assert_eq!(b.pkts as usize, books.held.len());
        prop_assert_eq!(b.bytes, books.held.iter().map(|h| u64::from(h.size_bytes)).sum::<u64>());
        q.check_state(&books.tally)?;
    }
    Ok(())
}

/// One property test per discipline, and a match that fails to compile
/// when [`AnyQdisc`] gains a discipline this list does not name.
macro_rules! every_discipline {
    ($($kind:ident => $test:ident),* $(,)?) => {
        #[allow(dead_code)]
        fn every_variant_is_listed(q: &AnyQdisc) {
            match q {
                $(AnyQdisc::$kind(_) => {})*
            }
        }

        proptest! {
            $(
                #[test]
                fn $test(q in <$kind as Conserving>::configs(), ops in ops()) {
                    conserves(q, ops)?;
                }
            )*
        }
    };
}

every_discipline! {
    DropTail => prop_droptail_conserves_packets_and_bytes,
    Bernoulli => prop_bernoulli_conserves_packets_and_bytes,
    Ted => prop_ted_conserves_packets_and_bytes,
    Pie => prop_pie_conserves_packets_and_bytes,
    DualPi2 => prop_dualpi2_conserves_packets_and_bytes,
    Codel => prop_codel_conserves_packets_and_bytes,
    FqCodel => prop_fq_codel_conserves_packets_and_bytes,
    FqPie => prop_fq_pie_conserves_packets_and_bytes,
    Cobalt => prop_cobalt_conserves_packets_and_bytes,
    FqCobalt => prop_fq_cobalt_conserves_packets_and_bytes,
    Blue => prop_blue_conserves_packets_and_bytes,
    Sfb => prop_sfb_conserves_packets_and_bytes,
    Red => prop_red_conserves_packets_and_bytes,
    RedTail => prop_red_tail_conserves_packets_and_bytes,
}
