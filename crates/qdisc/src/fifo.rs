//! The FIFO every discipline queues into, counted in packets and bytes.

use std::collections::VecDeque;

use crate::packet::Packet;
use crate::ParamError;

/// A hard buffer limit.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Limit {
    Packets(u32),
    Bytes(u64),
    /// No limit (memory permitting).
    Unlimited,
}

impl Limit {
    /// Whether a queue holding `backlog` has room for one more packet of
    /// `size_bytes`. A byte limit admits a packet only if all of it fits.
    #[inline]
    pub fn admits(self, backlog: Backlog, size_bytes: u32) -> bool {
        match self {
            Limit::Packets(n) => backlog.pkts < n,
            Limit::Bytes(b) => backlog.bytes + size_bytes as u64 <= b,
            Limit::Unlimited => true,
        }
    }

    pub fn validate(self) -> Result<(), ParamError> {
        match self {
            Limit::Packets(0) | Limit::Bytes(0) => {
                Err(ParamError::new("limit", "must be at least 1 packet or 1 byte (got 0)"))
            }
            _ => Ok(()),
        }
    }
}

/// What a queue holds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Backlog {
    pub pkts: u32,
    pub bytes: u64,
}

#[derive(Clone, Debug, Default)]
pub struct Fifo {
    queue: VecDeque<Packet>,
    bytes: u64,
}

impl Fifo {
    pub fn new() -> Fifo {
        Fifo::default()
    }

    #[inline]
    pub fn push_back(&mut self, pkt: Packet) {
        self.bytes += pkt.size_bytes as u64;
        self.queue.push_back(pkt);
    }

    #[inline]
    pub fn pop_front(&mut self) -> Option<Packet> {
        let pkt = self.queue.pop_front()?;
        self.bytes -= pkt.size_bytes as u64;
        Some(pkt)
    }

    #[inline]
    pub fn front(&self) -> Option<&Packet> {
        self.queue.front()
    }

    #[inline]
    pub fn backlog(&self) -> Backlog {
        Backlog {
            pkts: self.queue.len() as u32,
            bytes: self.bytes,
        }
    }

    #[inline]
    pub fn is_empty(&self) -> bool {
        self.queue.is_empty()
    }
}
