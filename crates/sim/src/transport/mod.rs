//! Transports: TCP as ns-2's agents ([`tcp`]), the Linux-style TCP family
//! under construction ([`linux`]), and the open-loop UDP sources ([`udp`]).

pub mod linux;
pub mod tcp;
pub mod udp;
