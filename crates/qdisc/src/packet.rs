//! The packet as every queue discipline and link sees it.
//!
//! A packet is a small `Copy` value: queues hold packets by value, so the hot
//! path allocates nothing per packet.

use crate::time::{Duration, Time};

/// The two ECN bits of the IP header: the four codepoints of RFC 3168
/// section 5, with ECT(1) given to L4S traffic by RFC 9331.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Ecn {
    /// Not-ECT (0b00): not ECN-capable; an AQM must drop, not mark.
    #[default]
    NotEct,
    /// ECT(0) (0b10): ECN-capable with classic (RFC 3168) reaction to a
    /// mark. What every ECN-capable sender in aqmlab sets unless told
    /// otherwise.
    Ect0,
    /// ECT(1) (0b01): ECN-capable, identifying L4S traffic (RFC 9331
    /// section 5.1), which a dual-queue AQM sends to its low-latency queue.
    Ect1,
    /// CE (0b11): congestion experienced, marked by some queue on the path.
    Ce,
}

impl Ecn {
    /// ECN-capable transport: ECT(0), ECT(1), or CE (a CE packet was
    /// ECN-capable when some earlier queue marked it). An AQM may mark such
    /// a packet instead of dropping it; marking CE again leaves it CE, as
    /// Linux's `INET_ECN_set_ce` does (it reports CE packets as marked).
    pub fn is_ecn_capable(self) -> bool {
        self != Ecn::NotEct
    }

    /// The codepoint from the IP header's two ECN bits (RFC 3168 section 5).
    pub fn from_bits(bits: u8) -> Ecn {
        match bits & 3 {
            0b00 => Ecn::NotEct,
            0b10 => Ecn::Ect0,
            0b01 => Ecn::Ect1,
            _ => Ecn::Ce,
        }
    }

    /// The IP header's two ECN bits for the codepoint.
    pub fn bits(self) -> u8 {
        match self {
            Ecn::NotEct => 0b00,
            Ecn::Ect0 => 0b10,
            Ecn::Ect1 => 0b01,
            Ecn::Ce => 0b11,
        }
    }
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
    /// The time it has waited in queues so far on its path: the sum of its
    /// sojourn times (for the queueing delay a flow's packets met).
    pub queued: Duration,
    pub kind: PacketKind,
    /// TCP: which connection of the flow (the flow's connections are
    /// numbered as they open), so that late packets of a closed one are
    /// recognised.
    pub conn_gen: u32,
    /// TCP data: the packet's sequence number (packets, not bytes). TCP
    /// ACKs: the receiver's count of CE-marked data packets (AccECN's
    /// counter), which the Linux-style family's DCTCP and Prague read.
    pub seq: u32,
    /// TCP ACKs: the highest packet received in order (`u32::MAX` before any).
    pub ack: u32,
    /// TCP flags, see [`tcp_flags`].
    pub tcp_flags: u8,
    /// TCP ACKs: how many of `sack` are in use.
    pub n_sack: u8,
    /// TCP ACKs: SACK blocks as half-open packet ranges, most recent first.
    pub sack: [(u32, u32); 3],
    /// TCP data of the Linux-style family: the timestamp echo (RFC 7323's
    /// TSecr), the receiver's millisecond clock when it sent the ACK the
    /// sender last heard, from which the receiver measures its RTT.
    pub tsecr_ms: u32,
    /// TCP ACKs of the Linux-style family's sink: the window it advertises,
    /// bytes above the acknowledged data (`u32::MAX`: none, ns-2's sink).
    pub wnd_bytes: u32,
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
            queued: Duration::ZERO,
            kind: PacketKind::Udp,
            conn_gen: 0,
            seq: 0,
            ack: u32::MAX,
            tcp_flags: 0,
            n_sack: 0,
            sack: [(0, 0); 3],
            tsecr_ms: 0,
            wnd_bytes: u32::MAX,
            ted_deadline: Duration::MAX,
            ted_budget: Duration::MAX,
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_from_bits_reads_the_rfc_3168_codepoints() {
        // RFC 3168 section 5: 00 Not-ECT, 10 ECT(0), 01 ECT(1), 11 CE; the
        // upper six bits (DSCP) do not matter.
        assert_eq!(Ecn::from_bits(0b00), Ecn::NotEct);
        assert_eq!(Ecn::from_bits(0b10), Ecn::Ect0);
        assert_eq!(Ecn::from_bits(0b01), Ecn::Ect1);
        assert_eq!(Ecn::from_bits(0b11), Ecn::Ce);
        assert_eq!(Ecn::from_bits(0xb9), Ecn::Ect1);
    }

    #[test]
    fn test_ecn_capable_is_every_codepoint_but_not_ect() {
        assert!(!Ecn::NotEct.is_ecn_capable());
        assert!(Ecn::Ect0.is_ecn_capable() && Ecn::Ect1.is_ecn_capable() && Ecn::Ce.is_ecn_capable());
    }
}
