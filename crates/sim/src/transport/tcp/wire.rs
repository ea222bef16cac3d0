//! What crosses the network between a [`TcpSender`](super::TcpSender) and a
//! [`TcpSink`](super::TcpSink): the TCP fields of a data packet and of an
//! ACK, in ns-2's one-way model (the `hdr_tcp` of `tcp/tcp.h`, as
//! `tcp/tcp.cc` and `tcp/tcp-sink.cc` use it). Sizes, addresses and queueing
//! belong to the engine; these types carry only what the agents read.
//!
//! Sequence numbers count packets. With `syn` packet 0 is the SYN (header
//! only) and data packets are 1, 2, ...; without it data starts at 0. An ACK
//! carries the highest packet received in order (ns-2's numbering, not
//! real TCP's "next expected"), `None` before packet 0 has arrived.

/// A packet the sender asks the engine to transmit.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Segment {
    pub seq: u32,
    /// Packet 0 of a connection that opens with a SYN: header bytes only.
    pub syn: bool,
    /// Sent before (go-back-N after a timeout, fast retransmit, SACK hole,
    /// NewReno partial ACK). A retransmission is never timed (Karn).
    pub retransmit: bool,
    /// Congestion Window Reduced: the first packet after a window cut
    /// (ns-2 sets it on retransmissions too, `SetCWRonRetransmit_`).
    /// Only ever set when the sender has `ecn` on.
    pub cwr: bool,
    /// ECN-capable transport: every packet but packet 0 when `ecn` is on
    /// (packet 0 carries the ECN negotiation instead). ns-2 marks
    /// retransmissions ECT too, which RFC 3168 section 6.1.5 forbids.
    pub ect: bool,
    /// With `ect`: the codepoint is ECT(1), the L4S identifier, rather than
    /// ECT(0) (the Linux-style family's scalable senders).
    pub ect1: bool,
    /// The Linux-style family's timestamp echo (TSecr): the `tsval_ms` of
    /// the last ACK the sender heard. ns-2's agents leave it 0.
    pub tsecr_ms: u32,
    /// A zero-window probe (`tcp_xmit_probe_skb`): the header alone, with
    /// the sequence number of data already acknowledged, so the receiver
    /// answers with its window.
    pub probe: bool,
}

/// An acknowledgement, as the sink builds it and the sender reads it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct AckInfo {
    /// Highest packet received in order: packets `0..=ack` have all
    /// arrived. `None` while packet 0 has not (ns-2's `-1`).
    pub ack: Option<u32>,
    /// ECN-Echo: congestion experienced since the sender last said CWR
    /// (also set on the ACK of packet 0 as ECN negotiation).
    pub ece: bool,
    /// SACK blocks as half-open packet ranges `[left, right)`, the first
    /// `n_sack` valid; the first is the block holding the packet that
    /// triggered this ACK (RFC 2018 order). Each block adds 8 bytes to the
    /// ACK in ns-2.
    pub sack: [(u32, u32); 3],
    pub n_sack: u8,
    /// The receiver's count of ECN-capable data packets that arrived marked
    /// CE, as AccECN's counter carries it (RFC 9768, in packets, wrapping).
    /// ns-2's agents ignore it; the Linux-style family's DCTCP and Prague
    /// read it. It travels in the ACK packet's otherwise unused `seq`.
    pub ce_count: u32,
    /// The window the Linux-style family's sink advertises, bytes above
    /// `ack` (Linux's scaled window field); `None` from ns-2's sink, whose
    /// window is the sender's fixed `rwnd`.
    pub wnd_bytes: Option<u32>,
    /// The timestamp the ACK carries (TSval): the receiver's clock in
    /// milliseconds when it sent the ACK, set by the engine.
    pub tsval_ms: u32,
    /// The Linux-style family's echo of the data's timestamp (TSecr,
    /// `ts_recent`); 0 from ns-2's sink, which keeps no timestamps.
    pub tsecr_ms: u32,
}

impl AckInfo {
    /// A plain cumulative ACK without ECN-Echo or SACK blocks.
    pub fn cumulative(ack: Option<u32>) -> AckInfo {
        AckInfo {
            ack,
            ..AckInfo::default()
        }
    }

    /// The valid SACK blocks.
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..usize::from(self.n_sack.min(3))]
    }
}

/// A data packet (or the SYN) as the sink sees it on arrival, after the
/// network may have set CE.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DataInfo {
    pub seq: u32,
    pub syn: bool,
    pub ect: bool,
    /// Congestion Experienced, set by an AQM that marked the packet.
    pub ce: bool,
    pub cwr: bool,
    /// The segment's timestamp echo ([`Segment::tsecr_ms`]).
    pub tsecr_ms: u32,
    /// The segment's own timestamp (TSval): the sender's clock in
    /// milliseconds when it sent the segment, set by the engine.
    pub tsval_ms: u32,
}

impl DataInfo {
    /// The packet a [`Segment`] becomes on the wire, `ce` as the network
    /// left it.
    pub fn from_segment(seg: &Segment, ce: bool) -> DataInfo {
        DataInfo {
            seq: seg.seq,
            syn: seg.syn,
            ect: seg.ect,
            ce: ce && seg.ect,
            cwr: seg.cwr,
            tsecr_ms: seg.tsecr_ms,
            tsval_ms: 0,
        }
    }
}

/// Packets newly delivered in order to the application by one arrival:
/// the half-open range `[from, to)`, empty if none. The SYN is not data and
/// is never part of it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Delivered {
    pub from: u32,
    pub to: u32,
}

impl Delivered {
    pub fn is_empty(&self) -> bool {
        self.to <= self.from
    }

    /// Number of packets delivered.
    pub fn len(&self) -> u32 {
        self.to.saturating_sub(self.from)
    }
}
