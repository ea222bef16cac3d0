//! The packet as every queue discipline and link sees it.
//!
//! A packet is a small `Copy` value: queues hold packets by value, so the hot
//! path allocates nothing per packet.

use crate::time::{Duration, Time};

/// The two ECN bits of the IP header (RFC 3168), reduced to what AQM needs.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    /// Not ECN-capable transport: an AQM must drop, not mark.
    #[default]
    NotEct,
    /// ECN-capable transport: an AQM may mark instead of dropping.
    Ect,
    /// Congestion experienced: marked by some queue on the path.
    Ce,
}

/// What a packet carries.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum PacketKind {
    /// A UDP datagram of an open-loop source.
    #[default]
    Udp,
    /// A TCP data packet (sequence number `seq`).
    TcpData,
    /// A TCP SYN (sequence number 0, no payload).
    TcpSyn,
    /// A TCP acknowledgement (`ack`, SACK blocks, ECN echo).
    TcpAck,
}

/// TCP header flags aqmlab models.
pub mod tcp_flags {
    /// ECN echo, on ACKs.
    pub const ECE: u8 = 1;
    /// Congestion window reduced, on data.
    pub const CWR: u8 = 2;
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Packet {
    /// Unique within a run, in order of creation.
    pub id: u64,
    /// Index of the flow (over all traffic groups) the packet belongs to.
    pub flow: u32,
    /// Index of the traffic group of the flow.
    pub group: u16,
    /// Index of the traffic class (`bulk`, `realtime`, ...) of the group.
    pub class: u8,
    pub ecn: Ecn,
    /// Size on the wire, headers included.
    pub size_bytes: u32,
    /// Node that emitted the packet.
    pub src: u32,
    /// Node the packet is addressed to.
    pub dst: u32,
    /// When the sender emitted it (for one-way delay).
    pub sent_at: Time,
    /// When it arrived at the queue that holds it now (for sojourn time).
    pub enqueued_at: Time,
    pub kind: PacketKind,
    /// TCP: which connection of the flow (the flow's connections are
    /// numbered as they open), so that late packets of a closed one are
    /// recognised.
    pub conn_gen: u32,
    /// TCP: the packet's sequence number (packets, not bytes).
    pub seq: u32,
    /// TCP ACKs: the highest packet received in order (`u32::MAX` before any).
    pub ack: u32,
    /// TCP flags, see [`tcp_flags`].
    pub tcp_flags: u8,
    /// TCP ACKs: how many of `sack` are in use.
    pub n_sack: u8,
    /// TCP ACKs: SACK blocks as half-open packet ranges, most recent first.
    pub sack: [(u32, u32); 3],
    /// Time-driven early discard: the flow's deadline (`Duration::MAX` for
    /// none), used by queues in locally-bounded-delay mode.
    pub ted_deadline: Duration,
    /// Time-driven early discard: the queueing budget left on the path
    /// (`Duration::MAX` for none), spent by queues in end-to-end mode.
    pub ted_budget: Duration,
}

impl Default for Packet {
    fn default() -> Packet {
        Packet {
            id: 0,
            flow: 0,
            group: 0,
            class: 0,
            ecn: Ecn::NotEct,
            size_bytes: 0,
            src: 0,
            dst: 0,
            sent_at: Time::ZERO,
            enqueued_at: Time::ZERO,
            kind: PacketKind::Udp,
            conn_gen: 0,
            seq: 0,
            ack: u32::MAX,
            tcp_flags: 0,
            n_sack: 0,
            sack: [(0, 0); 3],
            ted_deadline: Duration::MAX,
            ted_budget: Duration::MAX,
        }
    }
}
