//! TCP with Linux's mechanisms, the family beside ns-2's agents
//! ([`super::tcp`]), which stay the default for the classic studies. It is
//! being built: so far the congestion-control laws, as pure functions the
//! family's sender will call per acknowledgement; no scenario uses them
//! yet.
//!
//! - [`cubic`]: CUBIC's window law (RFC 9438, Linux's constants).

pub mod cubic;
