//! Closed-loop property test of the two agents: a [`TcpSender`] and a
//! [`TcpSink`] joined by a scripted network (pure Rust, no engine). Each
//! direction is a FIFO that loses packets at random; the next event is a
//! delivery in either direction (chosen at random when both have packets
//! waiting), 1 ms after the previous one; timers fire when due, and when
//! nothing is in flight the clock jumps to the earliest one. ECN-capable
//! packets are marked CE at random instead of being dropped when asked.
//!
//! For every variant and option mix, ns-2's agents and the Linux-style
//! family's sender alike, the transfer of N packets completes, the sink
//! delivers exactly the N data packets once each and in order, and it never
//! delivers a packet the sender did not send.

use std::collections::{HashSet, VecDeque};

use aqmlab_qdisc::{Duration, Time};
use proptest::prelude::*;

use super::conn::Sender;
use super::{AckInfo, DataInfo, EcnAtCwnd1, RtoConfig, Segment, TcpConfig, TcpSenderStats, TcpSink, Variant};
use crate::transport::linux::rcvwnd::RcvParams;

// Constants

/// Far more events than any case needs: running out means a stall.
const MAX_EVENTS: u32 = 2_000_000;
const STEP: Duration = Duration::from_millis(1);

// Helpers

/// SplitMix64: the network's draws, from the case's seed.
struct Draws(u64);

impl Draws {
    fn next(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^ (z >> 31)
    }

    fn percent(&mut self, pct: u32) -> bool {
        self.next() % 100 < u64::from(pct)
    }
}

#[derive(Debug)]
struct Case {
    cfg: TcpConfig,
    npkts: u32,
    drop_pct: u32,
    ce_pct: u32,
    seed: u64,
    /// The Linux-style receiver's largest buffer, if not Linux's 32 MiB.
    rmem_max: Option<u32>,
}

struct Outcome {
    done: bool,
    events: u32,
    delivered: Vec<u32>,
    sent: HashSet<u32>,
    stats: TcpSenderStats,
}

fn run(case: &Case) -> Outcome {
    let mut draws = Draws(case.seed);
    let boot = Duration(draws.next() % Duration::from_millis(10).nanos());
    let mut snd = Sender::new(&case.cfg, boot, 1500, case.seed).unwrap();
    let mss = 1500 - case.cfg.header_bytes;
    let mut sink = match case.rmem_max {
        Some(rmem_max) => TcpSink::with_receive_window(
            &case.cfg,
            RcvParams {
                rmem_max,
                ..RcvParams::linux(mss)
            },
        ),
        None => TcpSink::new(&case.cfg, mss),
    };
    let (mut segs, mut acks): (Vec<Segment>, Vec<AckInfo>) = (vec![], vec![]);
    let (mut to_sink, mut to_sender) = (VecDeque::new(), VecDeque::new());
    let mut out = Outcome {
        done: false,
        events: 0,
        delivered: vec![],
        sent: HashSet::new(),
        stats: TcpSenderStats::default(),
    };
    let mut now = Time::ZERO;
    snd.app_data(Some(u64::from(case.npkts)), now, &mut segs);
    snd.start(now, &mut segs);
    while out.events < MAX_EVENTS {
        for s in segs.drain(..) {
            out.sent.insert(s.seq);
            // The engine stamps each segment with the sender's clock (TSval).
            to_sink.push_back((s, crate::transport::linux::rcvwnd::ts_clock_ms(now)));
        }
        // The engine stamps each ACK with the receiver's clock (TSval).
        to_sender.extend(acks.drain(..).map(|a| AckInfo {
            tsval_ms: crate::transport::linux::rcvwnd::ts_clock_ms(now),
            ..a
        }));
        if snd.is_done() {
            out.done = true;
            break;
        }
        out.events += 1;
        let to_data = match (to_sink.is_empty(), to_sender.is_empty()) {
            (false, false) => draws.percent(50),
            (false, true) => true,
            (true, false) => false,
            (true, true) => {
                // Nothing in flight: jump to the earliest timer.
                let next = [snd.timer_deadline(), sink.timer_deadline()]
                    .into_iter()
                    .flatten()
                    .min();
                let Some(t) = next else { break };
                now = now.max(t);
                sink.on_timer(now, &mut acks);
                snd.on_timer(now, &mut segs);
                continue;
            }
        };
        now += STEP;
        if to_data {
            let (s, tsval_ms) = to_sink.pop_front().unwrap();
            let (lost, ce) = if s.ect && draws.percent(case.ce_pct) {
                (false, true)
            } else {
                (draws.percent(case.drop_pct), false)
            };
            if !lost {
                let data = DataInfo {
                    tsval_ms,
                    ..DataInfo::from_segment(&s, ce)
                };
                let d = sink.on_data(&data, now, &mut acks);
                out.delivered.extend(d.from..d.to);
            }
        } else {
            let a = to_sender.pop_front().unwrap();
            if !draws.percent(case.drop_pct) {
                snd.on_ack(&a, now, &mut segs);
            }
        }
        if sink.timer_deadline().is_some_and(|t| t <= now) {
            sink.on_timer(now, &mut acks);
        }
        if snd.timer_deadline().is_some_and(|t| t <= now) {
            snd.on_timer(now, &mut segs);
        }
    }
    out.stats = *snd.stats();
    out
}

fn case() -> impl Strategy<Value = Case> {
    (
        (0usize..3, any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        (1u32..4, any::<bool>(), 0u32..3, 0u32..3),
        (1u32..200, 0u32..30, 0u32..20, any::<u64>()),
    )
        .prop_map(
            |(
                (variant, syn, delayed_ack, ecn, limited_transmit),
                (dupack_threshold, ignore_at_cwnd1, rto_kind, max_burst),
                (npkts, drop_pct, ce_pct, seed),
            )| Case {
                cfg: TcpConfig {
                    variant: [Variant::Reno, Variant::NewReno, Variant::Sack][variant],
                    syn,
                    delayed_ack,
                    ecn,
                    limited_transmit,
                    dupack_threshold,
                    ecn_at_cwnd1: if ignore_at_cwnd1 {
                        EcnAtCwnd1::Ignore
                    } else {
                        EcnAtCwnd1::Timeout
                    },
                    rto: [
                        RtoConfig::NS2,
                        RtoConfig::RFC6298,
                        RtoConfig::Fixed(Duration::from_millis(40)),
                    ][rto_kind as usize],
                    max_burst,
                    initial_window: 1 + (seed % 4) as u32,
                    ..TcpConfig::default()
                },
                npkts,
                drop_pct,
                ce_pct: if ecn { ce_pct } else { 0 },
                seed,
                rmem_max: None,
            },
        )
}

/// The Linux-style family with its own options.
fn linux_case() -> impl Strategy<Value = Case> {
    (
        (0usize..1, any::<bool>(), any::<bool>(), any::<bool>(), any::<bool>()),
        (any::<bool>(), any::<bool>(), any::<bool>(), 1u32..4),
        (1u32..200, 0u32..30, 0u32..20, any::<u64>()),
    )
        .prop_map(
            |(
                (variant, syn, delayed_ack, ecn, pacing),
                (rack, tlp, prr, dupack_threshold),
                (npkts, drop_pct, ce_pct, seed),
            )| {
                let variant = [Variant::LinuxReno][variant];
                Case {
                    cfg: TcpConfig {
                        syn,
                        delayed_ack,
                        ecn,
                        pacing,
                        rack,
                        tlp,
                        prr,
                        dupack_threshold,
                        initial_window: 1 + (seed % 10) as u32,
                        ..TcpConfig::linux(variant)
                    },
                    npkts,
                    drop_pct,
                    ce_pct,
                    seed,
                    rmem_max: None,
                }
            },
        )
}

/// The transfer completed, delivering exactly its packets once each, in
/// order, none of them unsent.
fn check_transfer(case: &Case) -> Result<(), TestCaseError> {
    let out = run(case);
    prop_assert!(out.done, "stalled after {} events", out.events);
    let first = u32::from(case.cfg.syn);
    let want: Vec<u32> = (first..first + case.npkts).collect();
    prop_assert_eq!(&out.delivered, &want);
    for seq in &out.delivered {
        prop_assert!(out.sent.contains(seq), "delivered {} never sent", seq);
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn prop_linux_transfer_completes_in_order_with_only_sent_packets(case in linux_case()) {
        check_transfer(&case)?;
    }

    #[test]
    fn prop_transfer_completes_in_order_with_only_sent_packets(case in case()) {
        check_transfer(&case)?;
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(64))]

    /// Long transfers through a receiver whose buffer cannot grow past
    /// Linux's first 128 KB: the window, not cwnd, limits them, and after a
    /// loss the held data fill the buffer until the window offered is no
    /// whole packet. The read that follows must reopen it (Linux's window
    /// update, or the sender's zero-window probe).
    #[test]
    fn prop_linux_transfer_through_a_full_receive_buffer_completes(
        case in linux_case().prop_map(|c| Case { npkts: 600 + c.npkts * 5, rmem_max: Some(131_072), ..c })
    ) {
        check_transfer(&case)?;
    }
}

#[test]
fn test_every_variant_lossless_transfer_completes_without_retransmission() {
    for variant in [Variant::Reno, Variant::NewReno, Variant::Sack] {
        let case = Case {
            cfg: TcpConfig {
                variant,
                ..TcpConfig::default()
            },
            npkts: 1000,
            drop_pct: 0,
            ce_pct: 0,
            seed: 7,
            rmem_max: None,
        };
        let out = run(&case);
        assert!(out.done, "{variant:?}");
        assert_eq!(out.delivered, (1..=1000).collect::<Vec<_>>(), "{variant:?}");
        assert_eq!(out.stats.retransmits, 0, "{variant:?}");
        assert_eq!(out.stats.packets_sent, 1001, "{variant:?}");
    }
}
