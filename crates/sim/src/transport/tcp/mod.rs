//! Packet-granularity one-way TCP as ns-2 has it: a sender agent and a sink
//! agent, sequence numbers that count packets, a real-valued cwnd, ACKs that
//! carry the highest in-order packet, and the Reno, NewReno and SACK
//! variants. Both agents are plain state machines: they are handed `now` and
//! what arrived, and say what to send and when they next want a timer, so
//! they are tested without the engine.

pub mod config;
pub mod conn;
pub mod rtt;
mod scoreboard;
pub mod sender;
pub mod sink;
pub mod wire;

#[cfg(test)]
mod closed_loop_test;

/// The largest TCP payload (an IPv4 datagram's 65535 B less 40 B of
/// headers). Drawn payloads are capped at it.
pub const MAX_TCP_PAYLOAD_BYTES: u32 = 65_495;

pub use config::{EcnAtCwnd1, RtoConfig, TcpConfig, Variant};
pub use rtt::RttEstimator;
pub use sender::{CwndAction, TcpSender, TcpSenderStats};
pub use sink::{TcpSink, TcpSinkStats};
pub use wire::{AckInfo, DataInfo, Delivered, Segment};
