//! Bulk applications over TCP: `ftp` (unlimited data, or one transfer of a
//! given size), `file` (repeated transfers, each of a drawn size on a new
//! connection, a drawn gap after the previous one is delivered) and `onoff`
//! over TCP (ON and OFF periods with unlimited data while ON; or, with a
//! rate, ns-2's `Application/Traffic/Pareto` handing packets to the sender
//! on the schedule of the UDP ON/OFF source, `crate::transport::udp`).
//!
//! Each is a pure state machine, as the web and HTTP/1.1 applications of
//! `web.rs` are: it decides what to ask of its connection ([`BulkAction`]:
//! start it, give it data or none, close it and open a new one) and says
//! when it wants [`Bulk::timer`] called next ([`Bulk::next_timer`]); the
//! engine carries the actions out on the TCP connection and tells the
//! machine when a transfer has been delivered ([`Bulk::transfer_done`]).
//! Nothing here knows about the event queue, packets or nodes. Every event
//! method takes `now` and an output vector it appends to (never clears).
//!
//! Heads up! Read first: the README's traffic kinds `ftp`, `file` and
//! `onoff`, and `crate::scenario::TcpOnOff` on the two ON/OFF applications.
//!
//! ```text
//! ftp:    at the start: Start (the connection has the group's data,
//!         unlimited or `size` bytes); nothing more
//! file:   at the start: Start (the first transfer's size was drawn when
//!         the machine was made, for the connection the engine builds)
//!         delivered: Close; the next transfer gap later: Open { size }
//! onoff:  at the start: Start (unlimited data: ON); ON for a drawn `on`,
//!         then Pause; OFF for a drawn `off`, then Resume; and so on
//! paced:  at each time of the UDP ON/OFF schedule: Send { pkts } (the
//!         first one opens the connection); the schedule never waits for TCP
//! ```
//!
//! Randomness: `file` draws from one stream, the sizes and gaps in the
//! order size, gap, size, gap, ...; `onoff` from one, on, off, on, ...; the
//! paced application from the UDP source's two. The draws do not depend on
//! the network except through when a `file` transfer is delivered.
//!
//! Times are computed from `now` at the call, as the engine calls the
//! machine when [`Bulk::next_timer`] says.

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::{Duration, Time};

use crate::config::dist::Dist;
use crate::transport::udp::UdpSource;

/// What a [`Bulk`] application asks of its connection.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BulkAction {
    /// Start the connection the engine made for the first transfer, with
    /// its data ([`Bulk::size_bytes`]: unlimited, or that many bytes).
    Start,
    /// An OFF period begins: give the sender no more data.
    Pause,
    /// An ON period begins: give the sender unlimited data again.
    Resume,
    /// Hand `pkts` more packets of one payload to the sender (ns-2's
    /// `sendmsg`); the first opens the connection.
    Send { pkts: u64 },
    /// The transfer is delivered: close the connection (its late packets
    /// are ignored).
    Close,
    /// Open a new connection carrying `size_bytes` and start it.
    Open { size_bytes: u64 },
}

#[derive(Clone, Debug)]
enum Kind {
    Ftp,
    File { size: Dist, gap: Dist, rng: Rng },
    OnOff { on: Dist, off: Dist, rng: Rng, is_on: bool },
    Paced { source: UdpSource },
}

/// A bulk application (see the module documentation).
#[derive(Clone, Debug)]
pub struct Bulk {
    kind: Kind,
    /// The current (or, before the start, the first) transfer's size.
    size_bytes: Option<u64>,
    started: bool,
    /// When [`Bulk::timer`] is due.
    wake: Option<Time>,
}

/// A drawn transfer size in whole bytes, at least 1.
#[inline]
fn whole_bytes(x: f64) -> u64 {
    x.round().max(1.0) as u64
}

#[inline]
fn period(d: &Dist, rng: &mut Rng) -> Duration {
    Duration::from_secs_f64(d.sample(rng))
}

impl Bulk {
    /// `ftp`: unlimited data (`size_bytes` None) or one transfer, from `start`.
    pub fn ftp(size_bytes: Option<u64>, start: Time) -> Bulk {
        Bulk::new(Kind::Ftp, size_bytes, Some(start))
    }

    /// `file`: transfers of `size` bytes (drawn now for the first), each
    /// `gap` seconds after the previous one is delivered, from `start`.
    pub fn file(size: Dist, gap: Dist, mut rng: Rng, start: Time) -> Bulk {
        let first = whole_bytes(size.sample(&mut rng));
        Bulk::new(Kind::File { size, gap, rng }, Some(first), Some(start))
    }

    /// `onoff` over TCP without a rate: ON at `start` with unlimited data,
    /// periods drawn from `on` and `off` (seconds).
    pub fn on_off(on: Dist, off: Dist, rng: Rng, start: Time) -> Bulk {
        let kind = Kind::OnOff {
            on,
            off,
            rng,
            is_on: false,
        };
        Bulk::new(kind, None, Some(start))
    }

    /// `onoff` over TCP with a rate: packets on `source`'s schedule, which
    /// begins one OFF period plus an interval after `start`.
    pub fn paced(mut source: UdpSource, start: Time) -> Bulk {
        let first = source.first(start);
        Bulk::new(Kind::Paced { source }, None, first)
    }

    fn new(kind: Kind, size_bytes: Option<u64>, wake: Option<Time>) -> Bulk {
        Bulk {
            kind,
            size_bytes,
            started: false,
            wake,
        }
    }

    /// The bytes of the current transfer (before the start, of the first);
    /// None for unlimited data.
    pub fn size_bytes(&self) -> Option<u64> {
        self.size_bytes
    }

    /// Whether the application makes one transfer after another (`file`).
    pub fn repeats(&self) -> bool {
        matches!(self.kind, Kind::File { .. })
    }

    /// Does what is due at `now`: the start, an ON/OFF switch, the next
    /// `file` transfer or the next paced packets.
    pub fn timer(&mut self, now: Time, out: &mut Vec<BulkAction>) {
        if self.wake.is_none_or(|t| t > now) {
            return;
        }
        self.wake = None;
        let first = !self.started;
        self.started = true;
        match &mut self.kind {
            Kind::Ftp | Kind::File { .. } if first => out.push(BulkAction::Start),
            Kind::Ftp => {}
            Kind::File { size, rng, .. } => {
                let size_bytes = whole_bytes(size.sample(rng));
                self.size_bytes = Some(size_bytes);
                out.push(BulkAction::Open { size_bytes });
            }
            // It starts ON, with the data the start gives.
            Kind::OnOff { on, rng, is_on, .. } if first => {
                out.push(BulkAction::Start);
                *is_on = true;
                self.wake = Some(now + period(on, rng));
            }
            Kind::OnOff { on, off, rng, is_on } => {
                let (action, next) = if *is_on {
                    (BulkAction::Pause, period(off, rng))
                } else {
                    (BulkAction::Resume, period(on, rng))
                };
                out.push(action);
                *is_on = !*is_on;
                self.wake = Some(now + next);
            }
            Kind::Paced { source } => {
                let (pkts, next) = source.fire(now);
                out.push(BulkAction::Send { pkts });
                self.wake = next;
            }
        }
    }

    /// The current transfer has been delivered: a `file` application closes
    /// its connection and opens the next one a drawn gap later.
    pub fn transfer_done(&mut self, now: Time, out: &mut Vec<BulkAction>) {
        if let Kind::File { gap, rng, .. } = &mut self.kind {
            out.push(BulkAction::Close);
            self.wake = Some(now + period(gap, rng));
        }
    }

    /// When [`Bulk::timer`] should be called next; None while only a
    /// transfer's delivery is awaited, or when nothing more will happen.
    pub fn next_timer(&self) -> Option<Time> {
        self.wake
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use aqmlab_qdisc::rng;

    use crate::transport::udp::Schedule;

    // Helpers

    fn s(x: u64) -> Time {
        Time::from_secs(x)
    }

    /// Calls `timer` at `now` and returns what it asked for.
    #[track_caller]
    fn fire(b: &mut Bulk, now: Time) -> Vec<BulkAction> {
        let mut out = Vec::new();
        b.timer(now, &mut out);
        out
    }

    #[test]
    fn test_ftp_starts_once_at_its_start() {
        let mut b = Bulk::ftp(Some(5000), s(2));
        assert_eq!(b.size_bytes(), Some(5000));
        assert_eq!(b.next_timer(), Some(s(2)));
        assert_eq!(fire(&mut b, s(1)), vec![]);
        assert_eq!(fire(&mut b, s(2)), vec![BulkAction::Start]);
        assert_eq!(b.next_timer(), None);
        let mut out = Vec::new();
        b.transfer_done(s(3), &mut out);
        assert_eq!((out, b.next_timer()), (vec![], None));
    }

    #[test]
    fn test_file_closes_then_opens_a_drawn_size_a_gap_later() {
        let mut b = Bulk::file(Dist::Constant(999.6), Dist::Constant(0.5), rng::stream(1, "r"), s(1));
        assert!(b.repeats());
        assert_eq!(b.size_bytes(), Some(1000));
        assert_eq!(fire(&mut b, s(1)), vec![BulkAction::Start]);
        assert_eq!(b.next_timer(), None);
        let mut out = Vec::new();
        b.transfer_done(s(4), &mut out);
        assert_eq!(out, vec![BulkAction::Close]);
        assert_eq!(b.next_timer(), Some(Time::from_millis(4500)));
        assert_eq!(
            fire(&mut b, Time::from_millis(4500)),
            vec![BulkAction::Open { size_bytes: 1000 }]
        );
        assert_eq!(b.next_timer(), None);
    }

    #[test]
    fn test_file_draws_size_then_gap_from_one_stream() {
        let (size, gap) = (Dist::Exponential { mean: 1e5 }, Dist::Exponential { mean: 1.0 });
        let mut r = rng::stream(3, "r");
        let expected: Vec<f64> = (0..4)
            .map(|i| if i % 2 == 0 { &size } else { &gap }.sample(&mut r))
            .collect();
        let mut b = Bulk::file(size, gap, rng::stream(3, "r"), s(0));
        assert_eq!(b.size_bytes(), Some(whole_bytes(expected[0])));
        fire(&mut b, s(0));
        b.transfer_done(s(10), &mut Vec::new());
        assert_eq!(b.next_timer(), Some(s(10) + Duration::from_secs_f64(expected[1])));
        let at = b.next_timer().unwrap();
        let out = fire(&mut b, at);
        assert_eq!(
            out,
            vec![BulkAction::Open {
                size_bytes: whole_bytes(expected[2])
            }]
        );
    }

    #[test]
    fn test_on_off_starts_on_then_alternates() {
        let mut b = Bulk::on_off(Dist::Constant(2.0), Dist::Constant(3.0), rng::stream(1, "o"), s(1));
        assert!(!b.repeats());
        assert_eq!(fire(&mut b, s(1)), vec![BulkAction::Start]);
        assert_eq!(b.next_timer(), Some(s(3)));
        assert_eq!(fire(&mut b, s(3)), vec![BulkAction::Pause]);
        assert_eq!(b.next_timer(), Some(s(6)));
        assert_eq!(fire(&mut b, s(6)), vec![BulkAction::Resume]);
        assert_eq!(b.next_timer(), Some(s(8)));
    }

    #[test]
    fn test_paced_sends_on_the_udp_on_off_schedule() {
        let schedule = Schedule::OnOff {
            rate_bps: 8000.0,
            size_bytes: 1000,
            on: Dist::Constant(2.0),
            off: Dist::Constant(1.0),
        };
        let source = || UdpSource::new(&schedule, Time::MAX, rng::stream(1, "g"), rng::stream(1, "s"));
        let mut reference = source();
        let mut b = Bulk::paced(source(), s(0));
        let mut t = reference.first(s(0)).unwrap();
        assert_eq!(b.next_timer(), Some(t));
        for _ in 0..10 {
            let (pkts, next) = reference.fire(t);
            assert_eq!(fire(&mut b, t), vec![BulkAction::Send { pkts }]);
            assert_eq!(b.next_timer(), next);
            t = next.unwrap();
        }
    }
}
