//! Applications that drive TCP connections: bulk transfers and ON/OFF
//! (`bulk.rs`), HTTP/1.0 web sessions (`web.rs`) and persistent HTTP/1.1
//! clients (`http11.rs`). Each is a state machine that says what it asks of
//! its connections and when it wants to be woken; the engine (`crate::sim`)
//! carries it out.

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::Duration;

use crate::config::dist::Dist;

pub mod bulk;
pub mod http11;
pub mod web;

/// Packets in the request (client -> server) that precedes each web object
/// and each HTTP/1.1 response: ns-2's WebTraf sends one.
pub const REQUEST_PKTS: u32 = 1;

/// A drawn count or size rounded up to a whole number, at least 1
/// (`ceil`, as WebTraf's `ceil(rv.value())`). Saturates at `u64::MAX`; NaN
/// gives 1.
#[inline]
fn ceil_whole(x: f64) -> u64 {
    (x.ceil() as u64).max(1)
}

/// A drawn time in seconds.
#[inline]
fn gap(d: &Dist, rng: &mut Rng) -> Duration {
    Duration::from_secs_f64(d.sample(rng))
}
