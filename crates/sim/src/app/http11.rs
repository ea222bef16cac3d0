//! Persistent HTTP/1.1 clients with think times: request, wait for the
//! response, pause, repeat.
//!
//! A pure state machine, as the web sessions of `web.rs` are: it decides
//! when to request and how large the response is, and the engine does the
//! rest (moving the request and the response on the client's two
//! connections, telling the machine when the response is complete).
//! Nothing here knows about nodes, packets or the event queue. Every event
//! method takes `now` and an output vector it appends to (never clears);
//! `next_timer()` says when the machine wants `timer()` called next.
//!
//! Heads up! Read first: the README's traffic kind `http11` and its
//! distributions (under "Scenario files").
//!
//! [`Http11Client`]: one persistent connection per client/server pair;
//! repeat a 1-packet request, a response of `response_size` bytes (default
//! Pareto type I with K = 2.3 KB = 2300 B, alpha = 1.3, mean 9966.7 B;
//! kilo is decimal as everywhere in aqmlab), then a think time (default
//! exponential, mean 50 s) from the response's completion. Whether cwnd
//! restarts after the idle think time (`slow_start_restart`) is the TCP
//! layer's business, not this machine's.

use aqmlab_qdisc::rng::Rng;
use aqmlab_qdisc::Time;

use super::{ceil_whole, gap};
use crate::config::dist::Dist;

/// Where a request/pause cycle is.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Cycle {
    Idle,
    /// Transfer `id` is under way.
    Busy {
        id: u64,
    },
    /// The next transfer starts at `until`.
    Waiting {
        until: Time,
    },
}

impl Cycle {
    fn next_timer(self) -> Option<Time> {
        match self {
            Cycle::Waiting { until } => Some(until),
            _ => None,
        }
    }
}

/// A persistent HTTP/1.1 client's distributions.
#[derive(Clone, Debug, PartialEq)]
pub struct Http11Params {
    /// Bytes in a response.
    pub response_size: Dist,
    /// Seconds from a response's completion to the next request.
    pub think: Dist,
}

impl Default for Http11Params {
    /// Responses Pareto type I with K = 2.3 KB (2300 B) and alpha = 1.3
    /// (mean 9966.7 B, median 3.92 KB); think times exponential, mean 50 s.
    fn default() -> Http11Params {
        Http11Params {
            response_size: Dist::Pareto {
                shape: 1.3,
                scale: 2300.0,
            },
            think: Dist::Exponential { mean: 50.0 },
        }
    }
}

/// What an [`Http11Client`] asks of the engine.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Http11Action {
    /// On the client's persistent connection, send a
    /// [`REQUEST_PKTS`](super::REQUEST_PKTS)-packet request, then
    /// `response_pkts` packets (`response_bytes` bytes rounded up to whole
    /// packets of the payload size) back; call
    /// [`Http11Client::response_done`] when the response is complete.
    Request {
        request: u64,
        response_bytes: u64,
        response_pkts: u32,
    },
}

/// A persistent HTTP/1.1 client (see the module documentation). One
/// stream; draws: the response size at each request, the think time at
/// each completion.
#[derive(Clone, Debug)]
pub struct Http11Client {
    params: Http11Params,
    payload_bytes: u32,
    rng: Rng,
    cycle: Cycle,
    next_request: u64,
}

impl Http11Client {
    /// A client whose responses are cut into packets of `payload_bytes`.
    pub fn new(params: &Http11Params, payload_bytes: u32, rng: Rng) -> Result<Http11Client, String> {
        if payload_bytes == 0 {
            return Err("an HTTP/1.1 client needs a positive payload size (got 0 bytes)".to_string());
        }
        Ok(Http11Client {
            params: params.clone(),
            payload_bytes,
            rng,
            cycle: Cycle::Idle,
            next_request: 0,
        })
    }

    /// Sends the first request now. Ignored unless not yet started.
    pub fn start(&mut self, now: Time, out: &mut Vec<Http11Action>) {
        if self.cycle == Cycle::Idle {
            self.cycle = Cycle::Waiting { until: now };
            self.timer(now, out);
        }
    }

    /// The current response is complete: think, then request again.
    pub fn response_done(&mut self, now: Time, out: &mut Vec<Http11Action>) {
        if let Cycle::Busy { .. } = self.cycle {
            self.cycle = Cycle::Waiting {
                until: now + gap(&self.params.think, &mut self.rng),
            };
            self.timer(now, out);
        }
    }

    /// Sends the next request if the think time is over.
    pub fn timer(&mut self, now: Time, out: &mut Vec<Http11Action>) {
        if let Cycle::Waiting { until } = self.cycle {
            if until <= now {
                let response_bytes = ceil_whole(self.params.response_size.sample(&mut self.rng));
                let response_pkts = response_bytes.div_ceil(self.payload_bytes as u64).min(u32::MAX as u64) as u32;
                out.push(Http11Action::Request {
                    request: self.next_request,
                    response_bytes,
                    response_pkts,
                });
                self.cycle = Cycle::Busy { id: self.next_request };
                self.next_request += 1;
            }
        }
    }

    /// When the think time ends, while thinking.
    pub fn next_timer(&self) -> Option<Time> {
        self.cycle.next_timer()
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use aqmlab_qdisc::rng;
    use aqmlab_qdisc::Duration;

    // Constants

    const PAYLOAD_BYTES: u32 = 1000;

    // Helpers

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    #[test]
    fn test_http11_request_think_repeat() {
        let p = Http11Params {
            response_size: Dist::Constant(2300.5),
            think: Dist::Constant(50.0),
        };
        let mut c = Http11Client::new(&p, PAYLOAD_BYTES, rng::stream(1, "h")).unwrap();
        let mut out = Vec::new();
        let request = |request| Http11Action::Request {
            request,
            response_bytes: 2301,
            response_pkts: 3,
        };
        c.start(ms(0), &mut out);
        assert_eq!(out, vec![request(0)]);
        assert_eq!(c.next_timer(), None);
        out.clear();
        // Think time runs from the response's completion.
        c.response_done(ms(1200), &mut out);
        assert!(out.is_empty());
        assert_eq!(c.next_timer(), Some(ms(51_200)));
        c.timer(ms(51_000), &mut out);
        assert!(out.is_empty());
        c.timer(ms(51_200), &mut out);
        assert_eq!(out, vec![request(1)]);
        assert!(Http11Client::new(&p, 0, rng::stream(1, "h")).is_err());
    }

    #[test]
    fn test_http11_default_responses_are_pareto_bytes_in_whole_packets() {
        let p = Http11Params::default();
        assert!((p.response_size.mean().unwrap() - 9_966.666_666).abs() < 1e-3);
        assert_eq!(p.think.mean(), Some(50.0));
        let mut c = Http11Client::new(&p, PAYLOAD_BYTES, rng::stream(1, "h")).unwrap();
        let mut out = Vec::new();
        let mut now = ms(0);
        c.start(now, &mut out);
        for k in 0..10_000u64 {
            let &[Http11Action::Request {
                request,
                response_bytes,
                response_pkts,
            }] = &out[..]
            else {
                panic!("{out:?}")
            };
            assert_eq!(request, k);
            assert!(response_bytes >= 2300);
            assert_eq!(response_pkts as u64, response_bytes.div_ceil(1000));
            out.clear();
            now += Duration::from_millis(100);
            c.response_done(now, &mut out);
            now = c.next_timer().unwrap();
            c.timer(now, &mut out);
        }
    }
}
