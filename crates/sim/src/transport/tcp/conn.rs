//! One TCP connection inside a run: the sender and the sink, the payload
//! size of every packet, and what is measured about it. The engine moves the
//! packets; this module turns what arrives into what goes out.
//!
//! Payload sizes: every data packet of a flow carries a payload drawn from
//! the group's `packet_size`, fixed per sequence number (a retransmission
//! carries the same bytes) by drawing it from a stream seeded with (flow
//! stream, sequence number), so nothing per packet is stored. A finite
//! transfer of S bytes is cut into packets of those sizes with the last one
//! trimmed, so exactly S bytes reach the application. Drawn payloads are
//! capped at `MAX_TCP_PAYLOAD_BYTES`.

use aqmlab_qdisc::rng::{self, Rng};
use aqmlab_qdisc::{Duration, Time};
use rand::SeedableRng;

use crate::config::dist::Dist;
use crate::transport::linux::sender::LinuxSender;
use crate::transport::tcp::MAX_TCP_PAYLOAD_BYTES;
use crate::transport::tcp::{AckInfo, DataInfo, Delivered, Segment, TcpConfig, TcpSender, TcpSenderStats, TcpSink};

/// The data of a flow: how many packets and how large each is.
#[derive(Clone, Debug)]
pub struct Payload {
    dist: Dist,
    seed: u64,
    /// Data packets in a finite transfer, and the last one's size.
    finite: Option<(u32, u32)>,
}

impl Payload {
    pub fn new(dist: Dist, seed: u64, size_bytes: Option<u64>) -> Payload {
        let mut p = Payload {
            dist,
            seed,
            finite: None,
        };
        p.finite = size_bytes.map(|total| match p.dist {
            // Fixed sizes: the count by division.
            Dist::Constant(_) => {
                let b = p.drawn(0) as u64;
                let n = total.div_ceil(b);
                (n as u32, (total - (n - 1) * b) as u32)
            }
            _ => {
                let (mut n, mut sum) = (0u32, 0u64);
                loop {
                    let b = p.drawn(n) as u64;
                    if sum + b >= total {
                        break (n + 1, (total - sum) as u32);
                    }
                    sum += b;
                    n += 1;
                }
            }
        });
        p
    }

    fn drawn(&self, i: u32) -> u32 {
        match self.dist {
            Dist::Constant(b) => b as u32,
            ref d => {
                let mut r = Rng::seed_from_u64(rng::stream_seed(self.seed, &i.to_string()));
                d.sample(&mut r).round().clamp(1.0, MAX_TCP_PAYLOAD_BYTES as f64) as u32
            }
        }
    }

    /// The payload of data packet `i` (0-based, the SYN not counted).
    pub fn bytes(&self, i: u32) -> u32 {
        match self.finite {
            Some((n, last)) if i + 1 == n => last,
            _ => self.drawn(i),
        }
    }

    /// Data packets of a finite transfer.
    pub fn packets(&self) -> Option<u32> {
        self.finite.map(|(n, _)| n)
    }
}

/// What is counted about one connection.
#[derive(Clone, Debug, Default)]
pub struct ConnStats {
    /// Payload bytes delivered in order, over the connection's life.
    pub delivered_total: u64,
}

/// A connection's sender: one of ns-2's agents, or the Linux-style
/// family's. Both answer the same calls. ns-2's agent stays inline (it is
/// what every classic study runs); the family's larger sender is boxed.
#[derive(Clone, Debug)]
#[allow(clippy::large_enum_variant)]
pub enum Sender {
    Ns2(TcpSender),
    Linux(Box<LinuxSender>),
}

/// Calls `$body` with `$s` bound to the sender inside a [`Sender`].
macro_rules! either {
    ($self:expr, $s:ident => $body:expr) => {
        match $self {
            Sender::Ns2($s) => $body,
            Sender::Linux($s) => $body,
        }
    };
}

impl Sender {
    /// The sender `cfg.variant` asks for. `mss` is the bytes per packet the
    /// family's pacing counts with; `seed` seeds a congestion control's
    /// own randomness (BBR's).
    pub fn new(cfg: &TcpConfig, boot_offset: Duration, mss: u32, seed: u64) -> Result<Sender, String> {
        if cfg.variant.is_linux() {
            let cc = crate::transport::linux::Cc::new(cfg.variant, seed)?;
            Ok(Sender::Linux(Box::new(LinuxSender::new(cfg.linux_params(mss), cc)?)))
        } else {
            Ok(Sender::Ns2(TcpSender::new(cfg, boot_offset)?))
        }
    }

    pub fn start(&mut self, now: Time, out: &mut Vec<Segment>) {
        either!(self, s => s.start(now, out))
    }

    pub fn app_data(&mut self, npkts: Option<u64>, now: Time, out: &mut Vec<Segment>) {
        either!(self, s => s.app_data(npkts, now, out))
    }

    pub fn app_pause(&mut self) {
        either!(self, s => s.app_pause())
    }

    pub fn on_ack(&mut self, ack: &AckInfo, now: Time, out: &mut Vec<Segment>) {
        either!(self, s => s.on_ack(ack, now, out))
    }

    pub fn on_timer(&mut self, now: Time, out: &mut Vec<Segment>) {
        either!(self, s => s.on_timer(now, out))
    }

    pub fn timer_deadline(&self) -> Option<Time> {
        either!(self, s => s.timer_deadline())
    }

    pub fn is_started(&self) -> bool {
        either!(self, s => s.is_started())
    }

    pub fn is_done(&self) -> bool {
        either!(self, s => s.is_done())
    }

    pub fn cwnd(&self) -> f64 {
        either!(self, s => s.cwnd())
    }

    pub fn ssthresh(&self) -> u32 {
        either!(self, s => s.ssthresh())
    }

    pub fn srtt(&self) -> Duration {
        either!(self, s => s.srtt())
    }

    pub fn rto(&self) -> Duration {
        either!(self, s => s.rto())
    }

    pub fn stats(&self) -> &TcpSenderStats {
        either!(self, s => s.stats())
    }

    /// Traced columns beyond cwnd, ssthresh, srtt and RTO: the Linux-style
    /// family's pacing rate and congestion control state; none for ns-2's
    /// agents.
    pub fn trace(&self, out: &mut dyn FnMut(&'static str, f64)) {
        if let Sender::Linux(s) = self {
            s.trace(out);
        }
    }
}

/// A connection's two agents and its data.
#[derive(Clone, Debug)]
pub struct TcpConn {
    pub sender: Sender,
    pub sink: TcpSink,
    pub payload: Payload,
    pub header_bytes: u32,
    /// Sequence number of data packet 0 (1 with a SYN).
    first_data: u32,
    pub started_at: Time,
    pub done_at: Option<Time>,
    pub stats: ConnStats,
}

/// Puts the empty `with` in `slot` and returns what was there, emptied.
fn swap_buffer<T>(slot: &mut Vec<T>, with: Vec<T>) -> Vec<T> {
    debug_assert!(with.is_empty());
    let mut old = std::mem::replace(slot, with);
    old.clear();
    old
}

/// The heap buffers of a closed connection, emptied, for a new one to
/// reuse: a web run opens hundreds of thousands of short connections, and
/// allocating and freeing two small buffers for each was measurable.
#[derive(Debug, Default)]
pub struct Spare {
    scoreboard: Vec<(i64, i64)>,
    out_of_order: Vec<(u32, u32)>,
}

impl TcpConn {
    /// Gives up the connection's buffers, emptied (it must not be used
    /// after).
    pub fn take_spare(&mut self) -> Spare {
        let mut none = Vec::new();
        let scoreboard = match &mut self.sender {
            Sender::Ns2(s) => s.buffer(),
            Sender::Linux(_) => &mut none,
        };
        Spare {
            scoreboard: swap_buffer(scoreboard, Vec::new()),
            out_of_order: swap_buffer(self.sink.buffer(), Vec::new()),
        }
    }

    /// Uses `spare`'s buffers; for a connection that has not started (its
    /// own are empty and unallocated).
    pub fn reuse(&mut self, spare: Spare) {
        if let Sender::Ns2(s) = &mut self.sender {
            swap_buffer(s.buffer(), spare.scoreboard);
        }
        swap_buffer(self.sink.buffer(), spare.out_of_order);
    }

    pub fn new(cfg: &TcpConfig, payload: Payload, boot_offset: Duration) -> Result<TcpConn, String> {
        let mss = cfg.header_bytes + payload.bytes(0);
        Ok(TcpConn {
            sender: Sender::new(cfg, boot_offset, mss, payload.seed)?,
            sink: TcpSink::new(cfg, payload.bytes(0)),
            payload,
            header_bytes: cfg.header_bytes,
            first_data: u32::from(cfg.syn),
            started_at: Time::ZERO,
            done_at: None,
            stats: ConnStats::default(),
        })
    }

    /// The application starts: the SYN (or the first flight) goes out.
    pub fn start(&mut self, now: Time, out: &mut Vec<Segment>) {
        self.started_at = now;
        self.sender.start(now, out);
        self.sender.app_data(self.payload.packets().map(u64::from), now, out);
    }

    /// Bytes on the wire of a segment.
    pub fn wire_bytes(&self, seg: &Segment) -> u32 {
        if seg.syn || seg.probe {
            self.header_bytes
        } else {
            self.header_bytes + self.payload.bytes(seg.seq - self.first_data)
        }
    }

    /// Bytes on the wire of an ACK: the header plus 8 per SACK block, as ns-2.
    pub fn ack_bytes(&self, ack: &AckInfo) -> u32 {
        self.header_bytes + 8 * ack.n_sack as u32
    }

    /// A data packet (or the SYN) reached the sink. Returns the data packets
    /// and payload bytes newly delivered in order to the application.
    pub fn on_data(&mut self, info: &DataInfo, now: Time, acks: &mut Vec<AckInfo>) -> (u64, u64) {
        let d: Delivered = self.sink.on_data(info, now, acks);
        let pkts = (d.from..d.to).filter(|&s| s >= self.first_data).count() as u64;
        let bytes: u64 = (d.from..d.to)
            .filter(|&s| s >= self.first_data)
            .map(|s| self.payload.bytes(s - self.first_data) as u64)
            .sum();
        self.stats.delivered_total += bytes;
        if let Some(n) = self.payload.packets() {
            if self.done_at.is_none() && d.to >= self.first_data + n {
                self.done_at = Some(now);
            }
        }
        (pkts, bytes)
    }
}

#[cfg(test)]
mod test {
    use super::*;

    #[test]
    fn test_finite_transfer_cut_into_packets_with_last_trimmed() {
        // 1e6 B in packets of 1460 B: 684 full packets (998640 B) and a last
        // one of 1360 B.
        let p = Payload::new(Dist::Constant(1460.0), 1, Some(1_000_000));
        assert_eq!(p.packets(), Some(685));
        assert_eq!(p.bytes(683), 1460);
        assert_eq!(p.bytes(684), 1360);
        // Drawn sizes add up to the transfer too, and repeat per index.
        let p = Payload::new(
            Dist::Uniform {
                min: 1400.0,
                max: 1628.0,
            },
            9,
            Some(123_456),
        );
        let n = p.packets().unwrap();
        let total: u64 = (0..n).map(|i| p.bytes(i) as u64).sum();
        assert_eq!(total, 123_456);
        assert_eq!(p.bytes(3), p.bytes(3));
        assert!((0..n - 1).all(|i| (1400..=1628).contains(&p.bytes(i))));
    }
}
