//! TCP with Linux's mechanisms, the family beside ns-2's agents
//! ([`super::tcp`]), which stay the default for the classic studies. It is
//! being built: so far the interface to the congestion controls and their
//! laws; no scenario uses them yet.
//!
//! - [`cc`]: the congestion-control interface, shaped like Linux's
//!   `tcp_congestion_ops`, and Reno's window arithmetic every module uses.
//! - [`cubic`]: CUBIC's window law (RFC 9438, Linux's constants).
//! - [`bbr`]: BBR version 1, as Linux's `tcp_bbr.c`.

pub mod bbr;
pub mod cc;
pub mod cubic;
