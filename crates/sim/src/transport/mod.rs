//! Transports: TCP as ns-2's agents ([`tcp`]) and the open-loop UDP
//! sources ([`udp`]).

pub mod tcp;
pub mod udp;
