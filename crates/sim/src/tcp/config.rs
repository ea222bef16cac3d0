//! TCP's parameters as a scenario sets them (`tcp = { ... }` on a traffic
//! group), with ns-2.35's defaults except the receiver window
//! (`spec/transport.md`, reference `tcp-traffic-models.md` section 1).

use aqmlab_qdisc::Duration;

/// The congestion-control variant, as ns-2's one-way agents.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Variant {
    /// `Agent/TCP/Reno`.
    Reno,
    /// `Agent/TCP/Newreno` (partial window deflation, "impatient" timer).
    NewReno,
    /// `Agent/TCP/Sack1`: a scoreboard of up to 3 SACK blocks and a pipe counter.
    Sack,
}

/// How the retransmission timeout is computed.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RtoConfig {
    /// ns-2: srtt and rttvar in integer ticks of `tick`, RTO = srtt + 4
    /// rttvar truncated to whole ticks, clamped to [`min`, `max`] (the floor
    /// applied before the backoff), `initial` before the first sample.
    Ns2 { tick: Duration, min: Duration, max: Duration, initial: Duration },
    /// RFC 6298 arithmetic in real numbers (G = 0), clamped to [`min`, `max`].
    Rfc6298 { min: Duration, max: Duration, initial: Duration },
    /// A constant RTO (still doubled by backoff).
    Fixed(Duration),
    /// The TED paper's "TDTO": a fixed RTO equal to the largest round-trip
    /// time the TED deadlines on the flow's path allow; resolved by the
    /// engine into `Fixed` once the path is known.
    Ted,
}

impl RtoConfig {
    /// ns-2.35: tick 10 ms, min 0.2 s, max 60 s, initial 3 s.
    pub const NS2: RtoConfig = RtoConfig::Ns2 {
        tick: Duration::from_millis(10),
        min: Duration::from_millis(200),
        max: Duration::from_secs(60),
        initial: Duration::from_secs(3),
    };
    /// RFC 6298: min 1 s, max 60 s, initial 1 s.
    pub const RFC6298: RtoConfig = RtoConfig::Rfc6298 {
        min: Duration::from_secs(1),
        max: Duration::from_secs(60),
        initial: Duration::from_secs(1),
    };
}

/// What a sender does when an ECN echo arrives with cwnd at 1.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum EcnAtCwnd1 {
    /// RFC 3168 and ns-2.35: halve to 0.5 (nothing may be sent) and wait for
    /// the retransmission timer, backing off while marks continue.
    Timeout,
    /// The older behaviour: keep sending at cwnd 1.
    Ignore,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct TcpConfig {
    pub variant: Variant,
    /// Packets in the first data flight, after the SYN's ACK (ns-2 2).
    pub initial_window: u32,
    /// The receiver window in packets; the usable window is min(cwnd, rwnd).
    /// ns-2's `window_` is 20, which silently caps every flow; aqmlab
    /// defaults to 10000 (effectively unlimited) and says so.
    pub rwnd_pkts: u32,
    /// Initial ssthresh; ns-2 sets it to the receiver window.
    pub initial_ssthresh_pkts: u32,
    /// Duplicate ACKs that trigger fast retransmit (1 gives the TED paper's
    /// "1ACK").
    pub dupack_threshold: u32,
    /// RFC 3042: a new packet on each of the first two duplicate ACKs.
    pub limited_transmit: bool,
    pub rto: RtoConfig,
    /// cwnd back to 1 after an idle period of one RTO.
    pub slow_start_restart: bool,
    pub ecn: bool,
    pub ecn_at_cwnd1: EcnAtCwnd1,
    /// Most packets sent in one burst (0: unlimited). NewReno uses 2 inside
    /// recovery whatever this says.
    pub max_burst: u32,
    /// Open with a 40-byte SYN; cwnd 1 until its ACK, then `initial_window`.
    pub syn: bool,
    /// The sink ACKs every second in-order packet, or `delack_interval`
    /// after the first unacknowledged one.
    pub delayed_ack: bool,
    pub delack_interval: Duration,
    /// Header bytes added to every data packet; an ACK or SYN is this size.
    pub header_bytes: u32,
}

impl Default for TcpConfig {
    /// ns-2.35's one-way TCP (`Agent/TCP/Newreno` and `TCPSink`), with an
    /// effectively unlimited receiver window.
    fn default() -> TcpConfig {
        TcpConfig {
            variant: Variant::NewReno,
            initial_window: 2,
            rwnd_pkts: 10_000,
            initial_ssthresh_pkts: 10_000,
            dupack_threshold: 3,
            limited_transmit: true,
            rto: RtoConfig::NS2,
            slow_start_restart: true,
            ecn: false,
            ecn_at_cwnd1: EcnAtCwnd1::Timeout,
            max_burst: 0,
            syn: true,
            delayed_ack: false,
            delack_interval: Duration::from_millis(100),
            header_bytes: 40,
        }
    }
}
