//! TCP with Linux's mechanisms, the family beside ns-2's agents
//! ([`super::tcp`]), which stay the default for the classic studies. It is
//! being built: so far the interface to the congestion controls, their laws
//! and the modules; no scenario uses them yet.
//!
//! - [`cc`]: the congestion-control interface, shaped like Linux's
//!   `tcp_congestion_ops`, and Reno's window arithmetic every module uses.
//! - [`cubic`]: CUBIC's window law (RFC 9438, Linux's constants).
//! - [`cubic_cc`]: CUBIC with HyStart as Linux's `cubic` module.
//! - [`dctcp`]: DCTCP (RFC 8257) as Linux's `dctcp` module.
//! - [`prague`]: TCP Prague, the L4S sender, as the L4S team's Linux
//!   `prague` module.
//! - [`reno`]: Linux's `reno` module.

pub mod cc;
pub mod cubic;
pub mod cubic_cc;
pub mod dctcp;
pub mod prague;
pub mod reno;
