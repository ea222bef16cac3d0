//! The receiving half of ns-2's one-way TCP (`Agent/TCPSink`,
//! `Agent/TCPSink/DelAck`, `Agent/TCPSink/Sack1` and `Sack1/DelAck`) as a
//! pure state machine: handed each arriving packet and `now`, it says which
//! packets are newly delivered in order, which ACKs to send (pushed onto a
//! caller's buffer) and when its delayed-ACK timer wants to fire.
//!
//! Heads up: read ns-2.35's `tcp/tcp-sink.cc` (sinks, delayed ACKs, the
//! SACK blocks and the receiver's ECN rules in `ack()`) and RFC 3168 before
//! changing this file.
//!
//! # Rules
//!
//! * Reassembly: the ACK carries the highest packet received in order
//!   (`None` before packet 0). Duplicates are acknowledged again.
//! * Without `delayed_ack` every arrival is ACKed at once. With it (ns-2
//!   DelAck, `RFC2581_immediate_ack_` and `SYN_immediate_ack_` on): if no
//!   ACK is being held and the arrival is now the highest in-order packet,
//!   it is held and the timer set to `delack_interval` (a Linux receiver's
//!   adaptive timeout, [`RcvWindow::delack_timeout`]), unless packets above
//!   it have already arrived (it fills a gap) or it is packet 0 (the SYN).
//!   Any other arrival (out of order, duplicate, or the second in-order
//!   packet while one is held) cancels the timer and is ACKed at once. When
//!   the timer fires, the held packet is ACKed. ns-2 counts packets, not
//!   "full-sized segments"; RFC 5681 allows up to 500 ms.
//! * ECN (ns-2's `ack()`): a packet with CWR clears the echo state, an ECT
//!   packet with CE sets it (CWR first, so a packet with both leaves it set),
//!   and every ACK of an ECT packet carries ECE while it is set. With a held
//!   packet, both packets' flags count. Packet 0 sent not-ECT by an ECN
//!   sender is the negotiation and gets ECE back (the sink is built from the
//!   same `TcpConfig`, so `ecn` says whether the sender asked). Every ACK
//!   also carries the count of ECN-capable packets that arrived CE, as
//!   AccECN does, for the Linux-style family's DCTCP and Prague.
//! * SACK (`variant` "sack" or any of the Linux-style family, up to 3 blocks, half-open `[left, right)`):
//!   the first block is the contiguous run holding the packet just
//!   received (none if that packet is at or below the cumulative ACK), then
//!   the most recently reported blocks, most recent first, leaving out any
//!   already included (RFC 2018 section 4). No blocks once nothing is held
//!   out of order.
//!
//! # Departures from ns-2
//!
//! * ns-2's sink repeats a remembered block with the extent it had when
//!   first reported, even after the cumulative ACK has passed it; here a
//!   remembered block is refreshed to the run that now holds it and
//!   dropped once acknowledged cumulatively (blocks only grow, and a run
//!   that grew was the first block when it did, so this changes nothing
//!   but the stale blocks). D-SACK (`generateDSacks_`, off in ns-2) is not
//!   modelled.
//! * ns-2's reassembly starts with `maxseen_ = 0`; here nothing has been
//!   seen yet (-1). Identical for every arrival order.

use aqmlab_qdisc::{Duration, Time};

use super::config::TcpConfig;
use super::wire::{AckInfo, DataInfo, Delivered};
use crate::transport::linux::rcvwnd::{Arrival, ArrivalKind, RcvParams, RcvWindow};

/// At most this many SACK blocks per ACK (ns-2 `maxSackBlocks_`).
const MAX_SACK_BLOCKS: usize = 3;

#[derive(Clone, Copy, Debug)]
struct SinkParams {
    delayed_ack: bool,
    delack_interval: Duration,
    sack: bool,
    ecn: bool,
    /// Packet 0 is a SYN, not data.
    syn: bool,
    /// The Linux-style family: ACKs echo the data's timestamps.
    timestamps: bool,
}

/// Counters of one sink.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSinkStats {
    /// Packets that arrived, SYN and duplicates included.
    pub packets_received: u64,
    /// Arrivals of a packet already received.
    pub duplicates: u64,
    pub acks_sent: u64,
}

/// One TCP sink.
#[derive(Clone, Debug)]
pub struct TcpSink {
    params: SinkParams,
    stats: TcpSinkStats,

    // State.
    /// Next packet expected: `0..next` have all arrived.
    next: u32,
    /// Runs received above `next`: half-open, sorted, disjoint, not
    /// adjacent, all starting above `next`.
    out_of_order: Vec<(u32, u32)>,
    /// Highest packet seen (-1: none).
    maxseen: i64,
    /// The blocks of the last ACK, most recent first.
    reported: [(u32, u32); MAX_SACK_BLOCKS],
    n_reported: usize,
    /// Congestion seen and not yet answered by a CWR (`ecn_unacked_`).
    ecn_unacked: bool,
    /// ECN-capable packets that arrived marked CE (AckInfo::ce_count).
    ce_count: u32,
    /// The packet whose ACK is being delayed.
    held: Option<DataInfo>,
    delack_deadline: Option<Time>,
    /// Packets held out of order (the sum of `out_of_order`'s runs).
    ofo_pkts: u32,
    /// The Linux-style family's receive window (`rwnd = "auto"`); ns-2's
    /// sink advertises none.
    rcv: Option<Box<RcvWindow>>,
    /// When the SYN arrived.
    syn_at: Option<Time>,
    /// With `timestamps`: the TSval to echo (`ts_recent`), and `next` when
    /// the last ACK went out (`rcv_wup`, in packets).
    ts_recent_ms: u32,
    wup_next: u32,
}

impl TcpSink {
    /// A sink for `cfg`'s connections, whose data packets carry
    /// `mss_payload` bytes (what a Linux receiver's window counts).
    pub fn new(cfg: &TcpConfig, mss_payload: u32) -> TcpSink {
        TcpSink {
            params: SinkParams {
                delayed_ack: cfg.delayed_ack,
                delack_interval: cfg.delack_interval,
                sack: cfg.variant.sack(),
                ecn: cfg.ecn,
                syn: cfg.syn,
                timestamps: cfg.variant.is_linux() && cfg.timestamps,
            },
            stats: TcpSinkStats::default(),
            next: 0,
            out_of_order: Vec::new(),
            maxseen: -1,
            reported: [(0, 0); MAX_SACK_BLOCKS],
            n_reported: 0,
            ecn_unacked: false,
            ce_count: 0,
            held: None,
            delack_deadline: None,
            ofo_pkts: 0,
            rcv: (cfg.variant.is_linux() && cfg.rwnd_auto).then(|| {
                Box::new(RcvWindow::new(RcvParams {
                    ato_min: cfg.delack_interval,
                    ..RcvParams::linux(mss_payload)
                }))
            }),
            syn_at: None,
            ts_recent_ms: 0,
            wup_next: 0,
        }
    }

    /// A sink whose Linux-style window has `params` (for tests of other
    /// buffer sizes).
    #[cfg(test)]
    pub(crate) fn with_receive_window(cfg: &TcpConfig, params: RcvParams) -> TcpSink {
        let mut sink = TcpSink::new(cfg, params.advmss);
        sink.rcv = Some(Box::new(RcvWindow::new(params)));
        sink
    }

    /// The Linux-style receive window, if this sink keeps one.
    pub fn receive_window(&self) -> Option<&RcvWindow> {
        self.rcv.as_deref()
    }

    /// The out-of-order buffer, only to hand it between connections
    /// ([`crate::transport::tcp::conn::Spare`]).
    pub(crate) fn buffer(&mut self) -> &mut Vec<(u32, u32)> {
        &mut self.out_of_order
    }

    /// A packet arrived. Returns the packets it delivers in order.
    pub fn on_data(&mut self, seg: &DataInfo, now: Time, acks: &mut Vec<AckInfo>) -> Delivered {
        self.stats.packets_received += 1;
        if seg.ect && seg.ce {
            self.ce_count = self.ce_count.wrapping_add(1);
        }
        // `tcp_replace_ts_recent`: the echo is the TSval of a segment that
        // starts at or below where the last ACK left `rcv_nxt` (the one
        // that filled it, not the ones after it), never moving back (PAWS).
        if self.params.timestamps
            && (seg.syn || seg.seq <= self.wup_next)
            && seg.tsval_ms.wrapping_sub(self.ts_recent_ms) as i32 >= 0
        {
            self.ts_recent_ms = seg.tsval_ms;
        }
        let old_next = self.next;
        let dup = !self.receive(seg.seq);
        if dup {
            self.stats.duplicates += 1;
        }
        let first = u32::from(self.params.syn);
        if self.rcv.is_some() {
            if seg.syn {
                self.syn_at = Some(now);
            } else if seg.seq >= first {
                let kind = match (dup, seg.seq < old_next) {
                    (true, true) => ArrivalKind::Old,
                    (true, false) => ArrivalKind::Duplicate,
                    (false, _) if self.next > old_next => ArrivalKind::InOrder,
                    (false, _) => ArrivalKind::OutOfOrder,
                };
                let last = self.out_of_order.last().copied();
                let ofo_end = last.map_or(self.next, |b| b.1);
                let a = Arrival {
                    tsecr_ms: seg.tsecr_ms,
                    kind,
                    rcv_nxt: u64::from(self.next.saturating_sub(first)),
                    ofo_segs: u64::from(self.ofo_pkts),
                    ofo_end: u64::from(ofo_end.saturating_sub(first)),
                    extends_last: kind == ArrivalKind::OutOfOrder
                        && last.is_some_and(|b| b.0 < seg.seq && b.1 == seg.seq + 1),
                };
                let syn_at = self.syn_at;
                if let Some(rcv) = self.rcv.as_mut() {
                    rcv.on_data(&a, now, syn_at);
                }
            }
        }
        let delivered = self.arrival_acks(seg, old_next, now, acks);
        // The application reads at once what arrived in order; if that
        // frees enough of the buffer, Linux says so in an ACK of its own,
        // which also answers a delayed one.
        if self.rcv.as_mut().is_some_and(|r| r.on_read(now)) {
            self.delack_deadline = None;
            let held = self.held.take();
            self.ack(seg, held.as_ref(), acks);
        }
        delivered
    }

    /// The ACKs of an arrival; returns the packets it delivers in order.
    fn arrival_acks(&mut self, seg: &DataInfo, old_next: u32, now: Time, acks: &mut Vec<AckInfo>) -> Delivered {
        let first_data = u32::from(self.params.syn);
        let from = old_next.max(first_data);
        let delivered = Delivered {
            from,
            to: self.next.max(from),
        };

        // A Linux receiver in quick-ACK mode ACKs every packet.
        let quick = self.rcv.as_ref().is_some_and(|r| r.quick() > 0);
        if self.params.delayed_ack {
            let in_order_top = self.next > 0 && seg.seq == self.next - 1;
            if self.delack_deadline.is_none() && in_order_top && !quick {
                let fills_gap = i64::from(seg.seq) < self.maxseen;
                let is_syn = seg.seq == 0;
                if !fills_gap && !is_syn {
                    self.held = Some(*seg);
                    let wait = self
                        .rcv
                        .as_ref()
                        .map_or(self.params.delack_interval, |r| r.delack_timeout());
                    self.delack_deadline = Some(now + wait);
                    return delivered;
                }
            }
            self.delack_deadline = None;
            let held = self.held.take();
            self.ack(seg, held.as_ref(), acks);
        } else {
            self.ack(seg, None, acks);
        }
        delivered
    }

    /// The delayed-ACK timer may have expired; does nothing unless `now`
    /// has reached [`timer_deadline`](Self::timer_deadline).
    pub fn on_timer(&mut self, now: Time, acks: &mut Vec<AckInfo>) {
        match self.delack_deadline {
            Some(d) if now >= d => {
                self.delack_deadline = None;
                if let Some(held) = self.held.take() {
                    if let Some(rcv) = self.rcv.as_mut() {
                        rcv.on_delack_timer();
                    }
                    self.ack(&held, None, acks);
                }
            }
            _ => {}
        }
    }

    /// When the delayed-ACK timer expires, if it is armed.
    pub fn timer_deadline(&self) -> Option<Time> {
        self.delack_deadline
    }

    /// Highest packet received in order.
    pub fn cumulative_ack(&self) -> Option<u32> {
        self.next.checked_sub(1)
    }

    pub fn stats(&self) -> &TcpSinkStats {
        &self.stats
    }

    /// Records `seq`; false if it had arrived before.
    fn receive(&mut self, seq: u32) -> bool {
        if i64::from(seq) > self.maxseen {
            self.maxseen = i64::from(seq);
        }
        if seq < self.next {
            return false;
        }
        let blocks = &mut self.out_of_order;
        // First run ending at or after seq (touching or holding it).
        let i = blocks.partition_point(|b| b.1 < seq);
        if i < blocks.len() && blocks[i].0 <= seq && seq < blocks[i].1 {
            return false;
        }
        if seq == self.next {
            self.next += 1;
            // A run starting right after fills in behind.
            if blocks.first().is_some_and(|b| b.0 == self.next) {
                self.ofo_pkts -= blocks[0].1 - blocks[0].0;
                self.next = blocks[0].1;
                blocks.remove(0);
            }
            return true;
        }
        self.ofo_pkts += 1;
        let joins_left = i < blocks.len() && blocks[i].1 == seq;
        let joins_right_at = if joins_left { i + 1 } else { i };
        let joins_right = joins_right_at < blocks.len() && blocks[joins_right_at].0 == seq + 1;
        match (joins_left, joins_right) {
            (true, true) => {
                blocks[i].1 = blocks[i + 1].1;
                blocks.remove(i + 1);
            }
            (true, false) => blocks[i].1 = seq + 1,
            (false, true) => blocks[i].0 = seq,
            (false, false) => blocks.insert(i, (seq, seq + 1)),
        }
        true
    }

    /// The out-of-order run holding `seq`.
    fn run_holding(&self, seq: u32) -> Option<(u32, u32)> {
        let i = self.out_of_order.partition_point(|b| b.1 <= seq);
        self.out_of_order.get(i).copied().filter(|b| b.0 <= seq && seq < b.1)
    }

    /// Builds and sends the ACK for `pkt` (and the held packet, if any).
    fn ack(&mut self, pkt: &DataInfo, held: Option<&DataInfo>, acks: &mut Vec<AckInfo>) {
        let any = |f: &dyn Fn(&DataInfo) -> bool| f(pkt) || held.is_some_and(f);
        // As ns-2's `ack()`: CWR first, then CE.
        if any(&|p| p.cwr) {
            self.ecn_unacked = false;
        }
        if any(&|p| p.ect && p.ce) {
            self.ecn_unacked = true;
        }
        let mut ece = any(&|p| p.ect) && self.ecn_unacked;
        if self.params.ecn && any(&|p| !p.ect && p.seq == 0) {
            // ECN negotiation on packet 0.
            ece = true;
        }

        let mut info = AckInfo {
            ack: self.cumulative_ack(),
            ece,
            ce_count: self.ce_count,
            ..AckInfo::default()
        };
        if let Some(rcv) = self.rcv.as_mut() {
            // The SYN's answer carries the first window unscaled; later
            // ACKs what `tcp_select_window` says.
            info.wnd_bytes = Some(if pkt.syn { rcv.syn_window() } else { rcv.select_window() });
        }
        if self.params.sack {
            self.fill_sack(pkt.seq, &mut info);
        }
        if self.params.timestamps {
            info.tsecr_ms = self.ts_recent_ms;
            self.wup_next = self.next;
        }
        acks.push(info);
        self.stats.acks_sent += 1;
    }

    fn fill_sack(&mut self, seq: u32, info: &mut AckInfo) {
        if self.out_of_order.is_empty() {
            self.n_reported = 0;
            return;
        }
        let mut n = 0;
        if let Some(first) = self.run_holding(seq) {
            info.sack[0] = first;
            n = 1;
        }
        for k in 0..self.n_reported {
            if n == MAX_SACK_BLOCKS {
                break;
            }
            let (left, right) = self.reported[k];
            if right <= self.next {
                continue;
            }
            let Some(run) = self.run_holding(left.max(self.next)) else {
                continue;
            };
            if info.sack[..n].contains(&run) {
                continue;
            }
            info.sack[n] = run;
            n += 1;
        }
        self.reported[..n].copy_from_slice(&info.sack[..n]);
        self.n_reported = n;
        info.n_sack = n as u8;
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use crate::transport::tcp::config::Variant;

    // Constants

    const MS: u64 = 1_000_000;

    // Helpers

    /// A sink with a clock and the ACKs of its last call.
    struct Rx {
        sink: TcpSink,
        now: Time,
        acks: Vec<AckInfo>,
    }

    impl Rx {
        fn new(cfg: &TcpConfig) -> Rx {
            Rx {
                sink: TcpSink::new(cfg, 1000),
                now: Time::ZERO,
                acks: vec![],
            }
        }

        fn pkt(&mut self, d: DataInfo) -> Delivered {
            self.acks.clear();
            self.sink.on_data(&d, self.now, &mut self.acks)
        }

        /// A plain data packet (the SYN for 0).
        fn data(&mut self, seq: u32) -> Delivered {
            self.pkt(DataInfo {
                seq,
                syn: seq == 0,
                ..DataInfo::default()
            })
        }

        /// The cumulative ACKs sent by the last call.
        fn acked(&self) -> Vec<Option<u32>> {
            self.acks.iter().map(|a| a.ack).collect()
        }

        fn fire(&mut self) {
            self.now = self.sink.timer_deadline().expect("timer armed");
            self.acks.clear();
            self.sink.on_timer(self.now, &mut self.acks);
        }
    }

    fn ect(seq: u32) -> DataInfo {
        DataInfo {
            seq,
            ect: true,
            ..DataInfo::default()
        }
    }

    /// Packets 0 (SYN) to 3 received.
    fn sink_at_3(cfg: &TcpConfig) -> Rx {
        let mut rx = Rx::new(cfg);
        for seq in 0..=3 {
            rx.data(seq);
        }
        rx.sink.on_timer(Time::MAX, &mut rx.acks);
        rx
    }

    fn delack() -> TcpConfig {
        TcpConfig {
            delayed_ack: true,
            ..TcpConfig::default()
        }
    }

    fn sack_cfg() -> TcpConfig {
        TcpConfig {
            variant: Variant::Sack,
            ..TcpConfig::default()
        }
    }

    #[track_caller]
    fn assert_blocks(rx: &Rx, ack: u32, blocks: &[(u32, u32)]) {
        assert_eq!(rx.acks.len(), 1);
        assert_eq!(rx.acks[0].ack, Some(ack));
        assert_eq!(rx.acks[0].sack_blocks(), blocks);
    }

    // Reassembly and delivery

    #[test]
    fn test_new_syn_is_acked_but_delivers_nothing() {
        let mut rx = Rx::new(&TcpConfig::default());
        assert!(rx.data(0).is_empty());
        assert_eq!(rx.acked(), vec![Some(0)]);
    }

    #[test]
    fn test_at_3_out_of_order_held_then_gap_fill_delivers_run() {
        let mut rx = sink_at_3(&TcpConfig::default());
        assert!(rx.data(5).is_empty());
        assert_eq!(rx.acked(), vec![Some(3)]);
        assert!(rx.data(6).is_empty());
        assert_eq!(rx.data(4), Delivered { from: 4, to: 7 });
        assert_eq!(rx.acked(), vec![Some(6)]);
        // A duplicate delivers nothing and is ACKed again.
        assert!(rx.data(5).is_empty());
        assert_eq!(rx.acked(), vec![Some(6)]);
        assert_eq!(rx.sink.stats().duplicates, 1);
    }

    #[test]
    fn test_new_without_syn_packet_0_is_data_and_missing_0_acks_none() {
        let c = TcpConfig {
            syn: false,
            ..TcpConfig::default()
        };
        let mut rx = Rx::new(&c);
        assert!(rx
            .pkt(DataInfo {
                seq: 1,
                ..DataInfo::default()
            })
            .is_empty());
        assert_eq!(rx.acked(), vec![None]);
        assert_eq!(rx.data(0), Delivered { from: 0, to: 2 });
    }

    // Delayed ACKs

    #[test]
    fn test_delack_syn_acked_at_once() {
        let mut rx = Rx::new(&delack());
        rx.data(0);
        assert_eq!(rx.acked(), vec![Some(0)]);
        assert_eq!(rx.sink.timer_deadline(), None);
    }

    #[test]
    fn test_delack_every_second_in_order_packet_acked() {
        let mut rx = Rx::new(&delack());
        rx.data(0);
        // 1 is held (timer at 100 ms), 2 releases one ACK for both.
        assert_eq!(rx.data(1), Delivered { from: 1, to: 2 });
        assert!(rx.acks.is_empty());
        assert_eq!(rx.sink.timer_deadline(), Some(Time(100 * MS)));
        rx.data(2);
        assert_eq!(rx.acked(), vec![Some(2)]);
        assert_eq!(rx.sink.timer_deadline(), None);
    }

    #[test]
    fn test_delack_lone_packet_acked_when_timer_fires() {
        let mut rx = Rx::new(&delack());
        rx.data(0);
        rx.now = Time(30 * MS);
        rx.data(1);
        rx.fire();
        assert_eq!(rx.now, Time(130 * MS));
        assert_eq!(rx.acked(), vec![Some(1)]);
    }

    #[test]
    fn test_delack_out_of_order_acked_at_once_and_releases_held() {
        let mut rx = sink_at_3(&delack());
        rx.data(4);
        assert!(rx.acks.is_empty());
        // 6 is out of order: one ACK (of 4) at once, timer cancelled.
        rx.data(6);
        assert_eq!(rx.acked(), vec![Some(4)]);
        assert_eq!(rx.sink.timer_deadline(), None);
    }

    #[test]
    fn test_delack_gap_fill_acked_at_once() {
        // Becomes the cumulative point with 6 above it (RFC2581_immediate_ack_).
        let mut rx = sink_at_3(&delack());
        rx.data(6);
        assert_eq!(rx.acked(), vec![Some(3)]);
        rx.data(4);
        assert_eq!(rx.acked(), vec![Some(4)]);
        // Fills the whole gap: not the cumulative point's own packet either.
        rx.data(5);
        assert_eq!(rx.acked(), vec![Some(6)]);
    }

    // SACK blocks

    #[test]
    fn test_sack_blocks_newest_first_then_most_recently_reported() {
        let mut rx = sink_at_3(&sack_cfg());
        rx.data(5);
        assert_blocks(&rx, 3, &[(5, 6)]);
        rx.data(7);
        assert_blocks(&rx, 3, &[(7, 8), (5, 6)]);
        rx.data(9);
        assert_blocks(&rx, 3, &[(9, 10), (7, 8), (5, 6)]);
        // 6 joins 5..8: that run first; the older blocks it covers drop out.
        rx.data(6);
        assert_blocks(&rx, 3, &[(5, 8), (9, 10)]);
        rx.data(11);
        assert_blocks(&rx, 3, &[(11, 12), (5, 8), (9, 10)]);
        rx.data(13);
        assert_blocks(&rx, 3, &[(13, 14), (11, 12), (5, 8)]);
        // 4 moves the cumulative ACK to 7; it is in no block itself.
        rx.data(4);
        assert_blocks(&rx, 7, &[(13, 14), (11, 12)]);
        // Nothing out of order left: no blocks.
        for seq in [8, 10, 12] {
            rx.data(seq);
        }
        assert_blocks(&rx, 13, &[]);
    }

    #[test]
    fn test_no_sack_variant_sends_no_blocks() {
        let mut rx = sink_at_3(&TcpConfig::default());
        rx.data(5);
        assert_blocks(&rx, 3, &[]);
    }

    // ECN echo

    #[test]
    fn test_ecn_syn_negotiation_echoed() {
        let c = TcpConfig {
            ecn: true,
            ..TcpConfig::default()
        };
        let mut rx = Rx::new(&c);
        rx.data(0);
        assert!(rx.acks[0].ece);
        // Without ECN configured the SYN gets no echo.
        let mut plain = Rx::new(&TcpConfig::default());
        plain.data(0);
        assert!(!plain.acks[0].ece);
    }

    #[test]
    fn test_ce_echoed_on_every_ack_until_cwr() {
        let mut rx = sink_at_3(&TcpConfig::default());
        rx.pkt(ect(4));
        assert!(!rx.acks[0].ece);
        rx.pkt(DataInfo { ce: true, ..ect(5) });
        assert!(rx.acks[0].ece);
        rx.pkt(ect(6));
        assert!(rx.acks[0].ece);
        rx.pkt(DataInfo { cwr: true, ..ect(7) });
        assert!(!rx.acks[0].ece);
        // CWR and CE together: CWR first, so the echo starts again.
        rx.pkt(DataInfo {
            cwr: true,
            ce: true,
            ..ect(8)
        });
        assert!(rx.acks[0].ece);
    }

    #[test]
    fn test_delack_held_packet_ce_counts_in_the_joint_ack() {
        let mut rx = sink_at_3(&delack());
        rx.pkt(DataInfo { ce: true, ..ect(4) });
        assert!(rx.acks.is_empty());
        rx.pkt(ect(5));
        assert_eq!(rx.acked(), vec![Some(5)]);
        assert!(rx.acks[0].ece);
    }

    // The Linux-style family's receiver

    #[test]
    fn test_linux_sink_advertises_linuxs_window_and_acks_every_packet_while_it_opens() {
        let mut rx = linux_rx();
        // The SYN's answer: 65160 B, 45 segments of 1448 B, unscaled.
        rx.data(0);
        assert_eq!(rx.acks[0].wnd_bytes, Some(65160));
        // The first data, 100 ms later, is ACKed at once (a quick ACK)
        // with the window rcvwnd.rs's trace computes: 67 x 1024 B.
        rx.now = Time(100 * MS);
        rx.data(1);
        assert_eq!(rx.acked(), vec![Some(1)]);
        assert_eq!(rx.acks[0].wnd_bytes, Some(68608));
        // The next 15 too, though delayed ACKs are on: the 16 quick ACKs
        // and the window's growth.
        for seq in 2..=16 {
            rx.now = Time((100 + u64::from(seq)) * MS);
            rx.data(seq);
            assert_eq!(rx.acked(), vec![Some(seq)], "packet {seq}");
        }
        // ns-2's sink advertises nothing.
        let mut ns2 = Rx::new(&delack());
        ns2.data(0);
        assert_eq!(ns2.acks[0].wnd_bytes, None);
    }

    fn linux_rx() -> Rx {
        Rx {
            sink: TcpSink::new(&TcpConfig::linux(Variant::Cubic), 1448),
            now: Time::ZERO,
            acks: vec![],
        }
    }

    #[test]
    fn test_linux_sink_acks_a_hole_before_packet_1_with_its_current_window() {
        let mut rx = linux_rx();
        rx.data(0);
        // Packet 1 lost, 2 arrives 100 ms after the SYN: held out of order,
        // ACKed at once. rcvwnd's arithmetic: the ratio measured (clamp
        // 80896), rcv_ssthresh 65160 + 2896 = 68056 (the segment not yet
        // charged), the free space (131072 - 2340) x 158 / 256 = 79451,
        // so min(79451, 68056) rounded up to 1024 B: 68608, not the SYN's
        // 65160.
        rx.now = Time(100 * MS);
        rx.data(2);
        assert_eq!(rx.acked(), vec![Some(0)]);
        assert_eq!(rx.acks[0].wnd_bytes, Some(68608));
    }

    #[test]
    fn test_linux_sink_returns_to_quick_acks_after_old_data() {
        let mut rx = linux_rx();
        rx.data(0);
        // In order until the quick ACKs are spent and one is delayed.
        let mut seq = 1;
        loop {
            rx.now = Time((100 + u64::from(seq)) * MS);
            rx.data(seq);
            if rx.acks.is_empty() {
                break;
            }
            seq += 1;
            assert!(seq < 40, "still ACKing every packet");
        }
        assert!(seq > 16, "delayed at {seq}, within the first 16 quick ACKs");
        rx.fire();
        // A copy of packet 1 (a spurious retransmission): ACKed, and the
        // next in-order packet too, at once (16 quick ACKs again).
        rx.data(1);
        assert_eq!(rx.acked(), vec![Some(seq)]);
        rx.data(seq + 1);
        assert_eq!(rx.acked(), vec![Some(seq + 1)]);
        // ns-2's sink would have held it.
        let mut ns2 = Rx::new(&delack());
        for p in 0..=3 {
            ns2.data(p);
        }
        ns2.fire();
        ns2.data(1);
        ns2.data(4);
        assert!(ns2.acks.is_empty());
    }

    #[test]
    fn test_linux_sink_echoes_the_timestamp_of_the_segment_that_moved_its_left_edge() {
        let stamped = |seq: u32, tsval_ms: u32| DataInfo {
            seq,
            syn: seq == 0,
            tsval_ms,
            ..DataInfo::default()
        };
        let mut rx = linux_rx();
        rx.pkt(stamped(0, 5));
        assert_eq!(rx.acks[0].tsecr_ms, 5);
        rx.now = Time(100 * MS);
        rx.pkt(stamped(1, 105));
        assert_eq!((rx.acked(), rx.acks[0].tsecr_ms), (vec![Some(1)], 105));
        // 2 is lost; 3 is held above the hole and ACKed at once, echoing
        // 1's TSval still: 3 starts beyond where the last ACK left rcv_nxt.
        rx.pkt(stamped(3, 107));
        assert_eq!((rx.acked(), rx.acks[0].tsecr_ms), (vec![Some(1)], 105));
        // 2's retransmission fills the hole: its own TSval is echoed.
        rx.pkt(stamped(2, 300));
        assert_eq!((rx.acked(), rx.acks[0].tsecr_ms), (vec![Some(3)], 300));
        // In order until an ACK is delayed: the ACK of the pair echoes the
        // first of the two (RFC 7323's rule for delayed ACKs).
        let mut seq = 4;
        loop {
            rx.pkt(stamped(seq, 300 + seq));
            if rx.acks.is_empty() {
                break;
            }
            seq += 1;
            assert!(seq < 60, "still ACKing every packet");
        }
        rx.pkt(stamped(seq + 1, 301 + seq));
        assert_eq!((rx.acked(), rx.acks[0].tsecr_ms), (vec![Some(seq + 1)], 300 + seq));
        // ns-2's sink keeps no timestamps, nor the family's with them off.
        let mut ns2 = Rx::new(&sack_cfg());
        ns2.pkt(stamped(0, 5));
        assert_eq!(ns2.acks[0].tsecr_ms, 0);
        let mut off = Rx::new(&TcpConfig {
            timestamps: false,
            ..TcpConfig::linux(Variant::Cubic)
        });
        off.pkt(stamped(0, 5));
        assert_eq!(off.acks[0].tsecr_ms, 0);
    }
}
