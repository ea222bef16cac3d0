//! HTTP/1.0 web sessions (ns-2's PagePool/WebTraf): pages of objects, each
//! object a request and a response. (Persistent HTTP/1.1 clients are in
//! `http11.rs`, repeated file transfers, the `file` kind, in `bulk.rs`.)
//!
//! Each is a pure state machine: it decides what to launch and when, and the
//! engine does the rest (opening TCP connections, moving packets, telling the
//! machine when a transfer has completed). Nothing here knows about nodes,
//! packets or the event queue. Every event method takes `now` and an output
//! vector it appends to (never clears), so nothing is allocated per event;
//! `next_timer()` says when the machine wants `timer()` called next, in the
//! spirit of smoltcp's `poll_at()`.
//!
//! Heads up! Read first: the README's traffic kind `web` and its
//! distributions (under "Scenario files"), and ns-2.35's
//! `tools/ranvar.cc` (random variables) and `webcache/webtraf.cc` (WebTraf).
//!
//! # Web sessions
//!
//! A. Feldmann, A. C. Gilbert, P. Huang, W. Willinger, "Dynamics of IP
//! traffic: a study of the role of variability and the impact of control",
//! SIGCOMM 1999, section 2.4 and appendix A.1, as ns-2 implements it
//! (NS235 `webcache/webtraf.cc`, `tcl/webcache/webtraf.tcl`):
//!
//! ```text
//! session: client = uniform over the clients, fixed for the session
//!          pages = max(1, ceil(pages_per_session))
//!   page:  server = uniform over the servers (per page)
//!          n = max(1, ceil(objects_per_page))
//!          object 1 at once, object j+1 inter_object after object j
//!          (launches do not wait for completions)
//!          size of each object = max(1, ceil(object_size)) packets
//!          the page is done when all n objects are done
//!   next page: inter_page after the previous page is DONE (ns-2's
//!          interPageOption 1, its default)
//!   after `pages` pages the session is done
//! ```
//!
//! Each object is one HTTP/1.0 exchange: a 1-packet request client ->
//! server, then `size_pkts` packets server -> client; the engine calls
//! [`WebSession::object_done`] when the response is complete. How the
//! engine carries the exchange is a [`WebResponse`] choice:
//!
//! ```text
//! new-connection (default; WebTraf's launch-req, done-req, launch-resp
//!          and done-resp in tcl/webcache/webtraf.tcl, with the server of
//!          webcache/webserver.cc in its default mode 0, no delay):
//!   request:  a new client -> server connection (a SYN if the TCP's `syn`,
//!             ns-2's syn_), 1 data packet; it ends when the CLIENT has the
//!             ACK of that packet (the request agent's `done`, which
//!             tcp/tcp.cc calls once all it sent is acknowledged)
//!   response: at that same instant, a new server -> client connection
//!             with its own SYN (likewise), size_pkts packets; the object
//!             is done when the SERVER has the ACK of the last one (the
//!             response agent's `done`, which calls doneObj)
//!   every connection starts afresh: WebTraf takes its agents from a pool
//!   but resets them first (cwnd, srtt, rttvar, RTO, backoff all initial),
//!   so nothing is carried from one object to the next
//! same-connection (aqmlab's only behaviour up to engine 0.3.1):
//!   request:  a new client -> server connection with a SYN, 1 data packet;
//!             it ends when the SERVER has the packet
//!   response: at once, on the open connection (no second SYN, the
//!             initial window); the object is done when the CLIENT has the
//!             last packet
//! ```
//!
//! On an idle path a 1-packet object takes 4 round trips under
//! `new-connection` (SYN, request, SYN, response, each acknowledged) and 2
//! under `same-connection`; ns-2 has the client receive the response's last
//! packet 1.5 round trips later than `same-connection` does, and counts the
//! object done half a round trip after that. WebTraf has no server
//! processing time by default (its WebServer's FCFS and shortest-first
//! queues are options aqmlab does not model).
//!
//! A [`WebSession`] is a slot that holds one session at a time. With
//! `replace_finished`, a finished session is followed by a new one (new
//! client, new page count) whose first page starts one `inter_page` after
//! the old session's last page is done, so the slot's pages form one renewal
//! process (page, gap, page, gap, ...) and the offered load
//! `sessions x E[page bytes] / (E[inter_page] + E[page time])` holds over
//! the whole run, replacements included ([`WebParams::offered_load_bps`]).
//! Without it the slot goes idle after [`Action::SessionDone`]; the engine
//! may call [`WebSession::start`] again.
//!
//! Randomness: one stream per slot, drawn in a fixed order that does not
//! depend on the network: at a session's start the client, then the page
//! count; at a page's start the server, then the object count; at each
//! launch the object's size, then (if another object follows) the
//! inter-object gap; when a page is done the inter-page gap (also after a
//! session's last page when it is replaced). A session's pages are
//! sequential and a page's objects are all launched before it can be done,
//! so the draws happen in this order whatever the completion times are: the
//! i-th page of a slot has the same server, objects and sizes under every
//! queue discipline (common random numbers).
//!
//! Ids: object and page ids count up from 0 per slot, across replacements;
//! the engine pairs them with the slot to make them unique in a run.
//!
//! Times are computed from scheduled times, not from when `timer()` was
//! called, so a late call does not shift later launches; zero gaps are
//! handled inside one call (several launches, or a page done and the next
//! page started, at the same `now`).

use aqmlab_qdisc::rng::{self, Rng};
use aqmlab_qdisc::Time;

use super::{ceil_whole, gap};
use crate::config::dist::Dist;

/// How a web object's request and response travel (see the module
/// documentation): the scenario key `response` of a `web` group.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum WebResponse {
    /// ns-2's WebTraf: the response on a second connection with its own
    /// SYN, opened once the request is acknowledged; the object is done
    /// when the response is acknowledged.
    #[default]
    NewConnection,
    /// The response on the request's connection as soon as the server has
    /// the request; the object is done when the client has the response.
    SameConnection,
}

impl WebResponse {
    /// The values of the scenario key, the default first.
    pub const NAMES: &'static [&'static str] = &["new-connection", "same-connection"];
}

/// The mean of `max(1, ceil X)`; `None` where it is infinite.
fn ceil_whole_mean(d: &Dist) -> Option<f64> {
    match *d {
        Dist::Constant(v) => Some(ceil_whole(v) as f64),
        // The distributions here are continuous and X >= 0 in a scenario,
        // so max(1, ceil X) = ceil X almost surely.
        _ => d.ceil_mean(),
    }
}

/// A uniform index in 0..n (n >= 1): floor(n U), U in [0, 1).
#[inline]
fn pick(n: u32, rng: &mut Rng) -> u32 {
    ((rng::uniform(rng) * n as f64) as u32).min(n - 1)
}

// ---------------------------------------------------------------------------
// Web sessions

/// A web session's distributions. Counts and sizes are rounded up to whole
/// numbers, at least 1; times are seconds.
#[derive(Clone, Debug, PartialEq)]
pub struct WebParams {
    /// Pages in a session (a count), drawn once per session.
    pub pages_per_session: Dist,
    /// Seconds from a page's completion to the next page's start.
    pub inter_page: Dist,
    /// Objects in a page (a count), drawn per page.
    pub objects_per_page: Dist,
    /// Seconds between the launches of consecutive objects of a page.
    pub inter_object: Dist,
    /// Packets in an object's response, drawn per object.
    pub object_size: Dist,
    /// Whether a finished session is followed by a new one in its slot.
    pub replace_finished: bool,
}

impl Default for WebParams {
    /// ns-2's `tcl/ex/large-scale-web-traffic.tcl`: 250 pages per session,
    /// exponential inter-page times of mean 15 s, 1 object per page,
    /// exponential inter-object times of mean 10 ms, object sizes ParetoII
    /// (Lomax) with mean 12 packets and shape 1.2 (scale 12 x 0.2 = 2.4;
    /// E[ceil X] = 12.54), and sessions replaced when they finish.
    fn default() -> WebParams {
        WebParams {
            pages_per_session: Dist::Constant(250.0),
            inter_page: Dist::Exponential { mean: 15.0 },
            objects_per_page: Dist::Constant(1.0),
            inter_object: Dist::Exponential { mean: 0.010 },
            object_size: Dist::Pareto2 { shape: 1.2, scale: 2.4 },
            replace_finished: true,
        }
    }
}

impl WebParams {
    /// E[objects per page] = E[max(1, ceil N)].
    pub fn mean_objects_per_page(&self) -> Option<f64> {
        ceil_whole_mean(&self.objects_per_page)
    }

    /// E[object size] = E[max(1, ceil S)] packets.
    pub fn mean_object_pkts(&self) -> Option<f64> {
        ceil_whole_mean(&self.object_size)
    }

    /// The response payload that `sessions` slots offer, in bit/s, while
    /// their sessions run:
    ///
    /// `sessions x E[N] E[S] payload_bytes x 8 / (E[inter_page] + page_time)`
    ///
    /// with N objects per page and S packets per object (independent, so
    /// E[page packets] = E[N] E[S] by Wald's identity), and `mean_page_time_s`
    /// the mean time from a page's start to its completion, which the
    /// network decides. Requests and headers are not counted. With
    /// `replace_finished` it holds over the whole run; without, only while
    /// the sessions last. `None` where a mean is infinite.
    pub fn offered_load_bps(&self, sessions: u64, payload_bytes: u32, mean_page_time_s: f64) -> Option<f64> {
        let page_bits = self.mean_objects_per_page()? * self.mean_object_pkts()? * payload_bytes as f64 * 8.0;
        Some(sessions as f64 * page_bits / (self.inter_page.mean()? + mean_page_time_s))
    }
}

/// What a [`WebSession`] asks of the engine, or tells it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Action {
    /// Open a new connection from `client` to `server`, send a
    /// [`REQUEST_PKTS`](super::REQUEST_PKTS)-packet request, then a
    /// `size_pkts`-packet response back (as the group's [`WebResponse`]
    /// says); call
    /// [`WebSession::object_done`] with `object` when the response is
    /// complete.
    Launch {
        object: u64,
        page: u64,
        client: u32,
        server: u32,
        size_pkts: u32,
    },
    /// All objects of `page`, which started at `started`, are done.
    PageDone { page: u64, started: Time, now: Time },
    /// The session's last page is done.
    SessionDone,
}

/// A slot's counters.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct WebStats {
    pub sessions_started: u64,
    pub sessions_done: u64,
    pub pages_started: u64,
    pub pages_done: u64,
    pub objects_launched: u64,
    pub objects_done: u64,
    /// Response packets of the launched objects.
    pub pkts_launched: u64,
}

/// The page in progress.
#[derive(Clone, Copy, Debug)]
struct Page {
    page: u64,
    server: u32,
    started: Time,
    /// Objects in the page.
    objects: u64,
    /// The id of the page's first object; its objects have consecutive ids.
    first_object: u64,
    launched: u64,
    done: u64,
    /// When the next object is launched, while `launched < objects`.
    next_launch: Time,
}

#[derive(Clone, Copy, Debug)]
enum Phase {
    /// No session: not started, or finished and not replaced.
    Idle,
    Page(Page),
    /// Until the next page; `new_session` when it is the first page of a
    /// new session.
    Gap {
        until: Time,
        new_session: bool,
    },
}

/// One web session slot (see the module documentation).
#[derive(Clone, Debug)]
pub struct WebSession {
    params: WebParams,
    n_clients: u32,
    n_servers: u32,
    rng: Rng,
    phase: Phase,
    /// The current session's client.
    client: u32,
    /// The current session's page count, and pages started so far.
    pages: u64,
    pages_started: u64,
    next_page: u64,
    next_object: u64,
    stats: WebStats,
}

impl WebSession {
    /// An idle slot choosing among `n_clients` clients and `n_servers`
    /// servers (indices from 0), drawing from `rng`.
    pub fn new(params: &WebParams, n_clients: u32, n_servers: u32, rng: Rng) -> Result<WebSession, String> {
        if n_clients == 0 || n_servers == 0 {
            return Err(format!(
                "a web session needs at least one client and one server (got {n_clients} clients, {n_servers} servers)"
            ));
        }
        Ok(WebSession {
            params: params.clone(),
            n_clients,
            n_servers,
            rng,
            phase: Phase::Idle,
            client: 0,
            pages: 0,
            pages_started: 0,
            next_page: 0,
            next_object: 0,
            stats: WebStats::default(),
        })
    }

    /// Starts a session now: its first page and first object at once.
    /// Ignored unless the slot is idle.
    pub fn start(&mut self, now: Time, out: &mut Vec<Action>) {
        if let Phase::Idle = self.phase {
            self.phase = Phase::Gap {
                until: now,
                new_session: true,
            };
            self.advance(now, out);
        }
    }

    /// The response of `object` is complete. The engine reports each
    /// launched object once; an id not in the current page is an engine bug
    /// (a debug assertion; ignored in release builds).
    pub fn object_done(&mut self, object: u64, now: Time, out: &mut Vec<Action>) {
        let Phase::Page(p) = &mut self.phase else {
            debug_assert!(false, "object {object} done with no page in progress");
            return;
        };
        if !(p.first_object..p.first_object + p.launched).contains(&object) {
            debug_assert!(false, "object {object} is not one of page {}'s", p.page);
            return;
        }
        p.done += 1;
        self.stats.objects_done += 1;
        if p.done < p.objects {
            return;
        }
        // done == launched == objects: the page is done.
        out.push(Action::PageDone {
            page: p.page,
            started: p.started,
            now,
        });
        self.stats.pages_done += 1;
        let last = self.pages_started == self.pages;
        if last {
            out.push(Action::SessionDone);
            self.stats.sessions_done += 1;
        }
        self.phase = if last && !self.params.replace_finished {
            Phase::Idle
        } else {
            Phase::Gap {
                until: now + gap(&self.params.inter_page, &mut self.rng),
                new_session: last,
            }
        };
        self.advance(now, out);
    }

    /// Launches what is due at `now`: the next object of the page, or the
    /// next page. Calls before [`WebSession::next_timer`] do nothing.
    pub fn timer(&mut self, now: Time, out: &mut Vec<Action>) {
        self.advance(now, out);
    }

    /// When [`WebSession::timer`] should be called next; `None` while only
    /// completions are awaited, or when idle.
    pub fn next_timer(&self) -> Option<Time> {
        match self.phase {
            Phase::Idle => None,
            Phase::Page(p) => (p.launched < p.objects).then_some(p.next_launch),
            Phase::Gap { until, .. } => Some(until),
        }
    }

    /// Whether a session is under way (a page or a gap before the next one).
    pub fn is_active(&self) -> bool {
        !matches!(self.phase, Phase::Idle)
    }

    pub fn stats(&self) -> &WebStats {
        &self.stats
    }

    pub fn params(&self) -> &WebParams {
        &self.params
    }

    /// Does everything due by `now`, in scheduled order.
    fn advance(&mut self, now: Time, out: &mut Vec<Action>) {
        loop {
            match self.phase {
                Phase::Gap { until, new_session } if until <= now => {
                    if new_session {
                        self.begin_session();
                    }
                    self.begin_page(until);
                }
                Phase::Page(p) if p.launched < p.objects && p.next_launch <= now => self.launch(out),
                _ => return,
            }
        }
    }

    fn begin_session(&mut self) {
        self.client = pick(self.n_clients, &mut self.rng);
        self.pages = ceil_whole(self.params.pages_per_session.sample(&mut self.rng));
        self.pages_started = 0;
        self.stats.sessions_started += 1;
    }

    /// A new page at `at`; its first object is due at once.
    fn begin_page(&mut self, at: Time) {
        let server = pick(self.n_servers, &mut self.rng);
        let objects = ceil_whole(self.params.objects_per_page.sample(&mut self.rng));
        self.phase = Phase::Page(Page {
            page: self.next_page,
            server,
            started: at,
            objects,
            first_object: self.next_object,
            launched: 0,
            done: 0,
            next_launch: at,
        });
        self.next_page += 1;
        self.pages_started += 1;
        self.stats.pages_started += 1;
    }

    /// Launches the page's next object (due at `next_launch`).
    fn launch(&mut self, out: &mut Vec<Action>) {
        let Phase::Page(p) = &mut self.phase else {
            unreachable!("launch only from a page")
        };
        let size_pkts = ceil_whole(self.params.object_size.sample(&mut self.rng)).min(u32::MAX as u64) as u32;
        out.push(Action::Launch {
            object: self.next_object,
            page: p.page,
            client: self.client,
            server: p.server,
            size_pkts,
        });
        self.next_object += 1;
        self.stats.objects_launched += 1;
        self.stats.pkts_launched += size_pkts as u64;
        p.launched += 1;
        if p.launched < p.objects {
            p.next_launch += gap(&self.params.inter_object, &mut self.rng);
        }
    }
}

#[cfg(test)]
mod test {
    use super::*;
    use aqmlab_qdisc::Duration;
    use std::cmp::Reverse;
    use std::collections::BinaryHeap;

    // Constants

    const PAYLOAD_BYTES: u32 = 1000;

    // Helpers

    fn ms(x: u64) -> Time {
        Time::from_millis(x)
    }

    /// Constant distributions throughout: times in seconds.
    fn constant_params(pages: f64, objects: f64, inter_object_s: f64, size: f64, inter_page_s: f64) -> WebParams {
        WebParams {
            pages_per_session: Dist::Constant(pages),
            inter_page: Dist::Constant(inter_page_s),
            objects_per_page: Dist::Constant(objects),
            inter_object: Dist::Constant(inter_object_s),
            object_size: Dist::Constant(size),
            replace_finished: false,
        }
    }

    #[track_caller]
    fn slot(params: &WebParams, n_clients: u32, n_servers: u32, name: &str) -> WebSession {
        WebSession::new(params, n_clients, n_servers, rng::stream(7, name)).unwrap()
    }

    fn launch(object: u64, page: u64, size_pkts: u32) -> Action {
        Action::Launch {
            object,
            page,
            client: 0,
            server: 0,
            size_pkts,
        }
    }

    /// Runs a slot as an engine would, from a start at 0 until `end`: each
    /// object completes `service(size_pkts)` after its launch; at equal
    /// times completions go first (in object order), then the timer. Returns
    /// every action with the time it was emitted.
    fn drive(s: &mut WebSession, end: Time, service: impl Fn(u32) -> Duration) -> Vec<(Time, Action)> {
        let mut log = Vec::new();
        let mut out = Vec::new();
        let mut pending: BinaryHeap<Reverse<(Time, u64)>> = BinaryHeap::new();
        let mut now = Time::ZERO;
        s.start(now, &mut out);
        loop {
            for a in out.drain(..) {
                if let Action::Launch { object, size_pkts, .. } = a {
                    pending.push(Reverse((now + service(size_pkts), object)));
                }
                log.push((now, a));
            }
            let done_at = pending.peek().map(|r| r.0 .0);
            let timer_at = s.next_timer();
            let completion_first = match (done_at, timer_at) {
                (Some(d), Some(t)) => d <= t,
                (Some(_), None) => true,
                (None, Some(_)) => false,
                (None, None) => return log,
            };
            if completion_first {
                let Reverse((d, object)) = pending.pop().unwrap();
                if d > end {
                    return log;
                }
                now = d;
                s.object_done(object, now, &mut out);
            } else {
                let t = timer_at.unwrap();
                if t > end {
                    return log;
                }
                now = t;
                s.timer(now, &mut out);
            }
        }
    }

    fn launches(log: &[(Time, Action)]) -> Vec<Action> {
        log.iter()
            .filter(|(_, a)| matches!(a, Action::Launch { .. }))
            .map(|&(_, a)| a)
            .collect()
    }

    // Web sessions

    #[test]
    fn test_default_params_are_ns2_large_scale_example() {
        let p = WebParams::default();
        assert_eq!(p.pages_per_session, Dist::Constant(250.0));
        assert_eq!(p.inter_page, Dist::Exponential { mean: 15.0 });
        assert_eq!(p.objects_per_page, Dist::Constant(1.0));
        assert_eq!(p.inter_object, Dist::Exponential { mean: 0.010 });
        assert!(matches!(p.object_size, Dist::Pareto2 { shape, .. } if shape == 1.2));
        assert!((p.object_size.mean().unwrap() - 12.0).abs() < 1e-12);
        assert!(p.replace_finished);
        // E[ceil X] = 12.5409 (see `Dist::ceil_mean`'s tests).
        assert!((p.mean_object_pkts().unwrap() - 12.5409).abs() < 1e-3);
        // 400 sessions, 1000-B packets, pages taking 0.5 s on average:
        // 400 x 12.5409 x 8000 / 15.5 = 2.5891 Mb/s.
        let load = p.offered_load_bps(400, PAYLOAD_BYTES, 0.5).unwrap();
        assert!((load / 2.589_1e6 - 1.0).abs() < 1e-4, "{load}");
    }

    #[test]
    fn test_new_without_clients_or_servers_is_an_error() {
        let p = WebParams::default();
        let e = WebSession::new(&p, 0, 3, rng::stream(1, "w")).unwrap_err();
        assert!(e.contains("0 clients"), "{e}");
        assert!(WebSession::new(&p, 3, 0, rng::stream(1, "w")).is_err());
    }

    #[test]
    fn test_constant_session_page_object_structure_and_timing() {
        // 2 pages of ceil(2.2) = 3 objects of ceil(4.2) = 5 packets, launched
        // 100 ms apart; each takes 500 ms; 2 s from a page's end to the next.
        let p = constant_params(2.0, 2.2, 0.1, 4.2, 2.0);
        let mut s = slot(&p, 1, 1, "web");
        let log = drive(&mut s, Time::from_secs(100), |_| Duration::from_millis(500));
        let expected = vec![
            (ms(0), launch(0, 0, 5)),
            (ms(100), launch(1, 0, 5)),
            (ms(200), launch(2, 0, 5)),
            (
                ms(700),
                Action::PageDone {
                    page: 0,
                    started: ms(0),
                    now: ms(700),
                },
            ),
            (ms(2700), launch(3, 1, 5)),
            (ms(2800), launch(4, 1, 5)),
            (ms(2900), launch(5, 1, 5)),
            (
                ms(3400),
                Action::PageDone {
                    page: 1,
                    started: ms(2700),
                    now: ms(3400),
                },
            ),
            (ms(3400), Action::SessionDone),
        ];
        assert_eq!(log, expected);
        assert!(!s.is_active());
        assert_eq!(s.next_timer(), None);
        assert_eq!(
            *s.stats(),
            WebStats {
                sessions_started: 1,
                sessions_done: 1,
                pages_started: 2,
                pages_done: 2,
                objects_launched: 6,
                objects_done: 6,
                pkts_launched: 30,
            }
        );
    }

    #[test]
    fn test_page_launches_do_not_wait_and_next_page_follows_completion() {
        let p = constant_params(3.0, 3.0, 0.1, 1.0, 2.0);
        let mut s = slot(&p, 1, 1, "web");
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        assert_eq!(out, vec![launch(0, 0, 1)]);
        assert_eq!(s.next_timer(), Some(ms(100)));
        out.clear();
        // Early calls do nothing.
        s.timer(ms(50), &mut out);
        assert!(out.is_empty());
        s.timer(ms(100), &mut out);
        assert_eq!(out, vec![launch(1, 0, 1)]);
        out.clear();
        // Completions out of launch order, while launches continue.
        s.object_done(1, ms(150), &mut out);
        s.timer(ms(200), &mut out);
        assert_eq!(out, vec![launch(2, 0, 1)]);
        out.clear();
        assert_eq!(s.next_timer(), None, "all launched: only completions awaited");
        s.object_done(2, ms(250), &mut out);
        assert!(out.is_empty());
        // The slowest object ends the page at 5 s; the next page is due
        // inter_page (2 s) later, not 2 s after the page's start.
        s.object_done(0, ms(5000), &mut out);
        assert_eq!(
            out,
            vec![Action::PageDone {
                page: 0,
                started: ms(0),
                now: ms(5000)
            }]
        );
        out.clear();
        assert_eq!(s.next_timer(), Some(ms(7000)));
        // A late call launches at once; the next launch keeps to the schedule.
        s.timer(ms(7050), &mut out);
        assert_eq!(out, vec![launch(3, 1, 1)]);
        assert_eq!(s.next_timer(), Some(ms(7100)));
    }

    #[test]
    fn test_zero_gaps_are_handled_within_one_call() {
        let p = constant_params(2.0, 3.0, 0.0, 1.0, 0.0);
        let mut s = slot(&p, 1, 1, "web");
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        assert_eq!(out, vec![launch(0, 0, 1), launch(1, 0, 1), launch(2, 0, 1)]);
        out.clear();
        s.object_done(0, ms(10), &mut out);
        s.object_done(2, ms(10), &mut out);
        s.object_done(1, ms(10), &mut out);
        let page_done = Action::PageDone {
            page: 0,
            started: ms(0),
            now: ms(10),
        };
        assert_eq!(out, vec![page_done, launch(3, 1, 1), launch(4, 1, 1), launch(5, 1, 1)]);
    }

    #[test]
    fn test_counts_and_sizes_round_up_to_at_least_one() {
        // 0 pages, 0.3 objects and 0-packet objects all become 1.
        let p = constant_params(0.0, 0.3, 0.1, 0.0, 1.0);
        let mut s = slot(&p, 1, 1, "web");
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        assert_eq!(out, vec![launch(0, 0, 1)]);
        out.clear();
        s.object_done(0, ms(40), &mut out);
        assert_eq!(
            out,
            vec![
                Action::PageDone {
                    page: 0,
                    started: ms(0),
                    now: ms(40)
                },
                Action::SessionDone
            ]
        );
        for (size, pkts) in [(12.0, 12), (12.000_001, 13), (1.0, 1), (0.2, 1)] {
            let mut s = slot(&constant_params(1.0, 1.0, 0.1, size, 1.0), 1, 1, "web");
            let mut out = Vec::new();
            s.start(ms(0), &mut out);
            assert_eq!(out, vec![launch(0, 0, pkts)], "size {size}");
        }
    }

    #[test]
    fn test_default_object_sizes_are_ceil_of_pareto2() {
        // 10^5 objects in one page, all launched at once. P(size = 1) =
        // P(X <= 1) = 1 - (1 + 1/2.4)^-1.2 = 0.34162; its standard error
        // over 1e5 draws is 0.0015, so 0.0075 is five.
        let n = 100_000u64;
        let p = WebParams {
            objects_per_page: Dist::Constant(n as f64),
            inter_object: Dist::Constant(0.0),
            ..WebParams::default()
        };
        let mut s = slot(&p, 1, 1, "web");
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        assert_eq!(out.len() as u64, n);
        let sizes: Vec<u32> = out
            .iter()
            .map(|a| match a {
                Action::Launch { size_pkts, .. } => *size_pkts,
                _ => unreachable!(),
            })
            .collect();
        assert!(sizes.iter().all(|&k| k >= 1));
        let ones = sizes.iter().filter(|&&k| k == 1).count() as f64 / n as f64;
        let exact = 1.0 - libm::pow(1.0 + 1.0 / 2.4, -1.2);
        assert!((exact - 0.341_62).abs() < 1e-5);
        assert!((ones - exact).abs() < 0.0075, "{ones} vs {exact}");
    }

    #[test]
    fn test_replaced_session_starts_inter_page_after_last_page() {
        let p = WebParams {
            replace_finished: true,
            ..constant_params(2.0, 1.0, 0.1, 1.0, 1.0)
        };
        let mut s = slot(&p, 1, 1, "web");
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        s.object_done(0, ms(500), &mut out);
        s.timer(ms(1500), &mut out);
        out.clear();
        s.object_done(1, ms(2000), &mut out);
        assert_eq!(
            out,
            vec![
                Action::PageDone {
                    page: 1,
                    started: ms(1500),
                    now: ms(2000)
                },
                Action::SessionDone
            ]
        );
        out.clear();
        assert!(s.is_active());
        assert_eq!(s.next_timer(), Some(ms(3000)));
        s.timer(ms(3000), &mut out);
        // Ids carry on across sessions.
        assert_eq!(out, vec![launch(2, 2, 1)]);
        assert_eq!((s.stats().sessions_started, s.stats().sessions_done), (2, 1));
        // start() on a busy slot is ignored.
        out.clear();
        s.start(ms(3000), &mut out);
        assert!(out.is_empty());
    }

    #[test]
    fn test_unreplaced_session_goes_idle_until_started_again() {
        let p = constant_params(1.0, 1.0, 0.1, 1.0, 1.0);
        let mut s = slot(&p, 1, 1, "web");
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        s.object_done(0, ms(500), &mut out);
        assert_eq!(out.last(), Some(&Action::SessionDone));
        out.clear();
        assert!(!s.is_active());
        assert_eq!(s.next_timer(), None);
        s.timer(ms(1500), &mut out);
        assert!(out.is_empty());
        // The engine may replace the session itself: at once.
        s.start(ms(10_000), &mut out);
        assert_eq!(out, vec![launch(1, 1, 1)]);
        assert_eq!(s.stats().sessions_started, 2);
    }

    #[test]
    fn test_client_fixed_per_session_server_fixed_per_page() {
        let p = WebParams {
            pages_per_session: Dist::Constant(10.0),
            inter_page: Dist::Exponential { mean: 1.0 },
            objects_per_page: Dist::Constant(4.0),
            inter_object: Dist::Exponential { mean: 0.01 },
            object_size: Dist::Constant(1.0),
            replace_finished: true,
        };
        let mut s = slot(&p, 1000, 1000, "web");
        let log = drive(&mut s, Time::from_secs(200), |_| Duration::from_millis(50));
        let mut session_clients = Vec::new();
        let mut page_servers = Vec::new();
        let mut client = None;
        let mut page: Option<(u64, u32, u32)> = None; // (page, server, objects)
        for &(_, a) in &log {
            match a {
                Action::Launch {
                    page: pg,
                    client: c,
                    server,
                    ..
                } => {
                    assert_eq!(*client.get_or_insert(c), c, "one client per session");
                    match &mut page {
                        Some((cur, srv, n)) if *cur == pg => {
                            assert_eq!(*srv, server, "one server per page");
                            *n += 1;
                        }
                        _ => page = Some((pg, server, 1)),
                    }
                }
                Action::PageDone { page: pg, .. } => {
                    let (cur, srv, n) = page.take().unwrap();
                    assert_eq!((cur, n), (pg, 4));
                    page_servers.push(srv);
                }
                Action::SessionDone => session_clients.push(client.take().unwrap()),
            }
        }
        assert!(session_clients.len() >= 5, "{} sessions", session_clients.len());
        assert_eq!(page_servers.len() as u64, s.stats().pages_done);
        let distinct = |v: &[u32]| {
            let mut v = v.to_vec();
            v.sort();
            v.dedup();
            v.len()
        };
        // Drawn anew per session and per page (1000 of each to choose from).
        assert!(distinct(&session_clients) > session_clients.len() / 2);
        assert!(distinct(&page_servers) > page_servers.len() / 2);
    }

    #[test]
    fn test_clients_and_servers_are_uniform() {
        // 40000 one-page sessions over 4 clients and 4 servers: each index
        // 10000 times +- 433 (five standard deviations).
        let p = WebParams {
            replace_finished: true,
            ..constant_params(1.0, 1.0, 0.1, 1.0, 0.0)
        };
        let mut s = slot(&p, 4, 4, "web");
        let (mut clients, mut servers) = ([0u32; 4], [0u32; 4]);
        let mut out = Vec::new();
        s.start(ms(0), &mut out);
        for k in 0..40_000u64 {
            let Some(&Action::Launch {
                object, client, server, ..
            }) = out.iter().find(|a| matches!(a, Action::Launch { .. }))
            else {
                panic!("no launch")
            };
            assert_eq!(object, k);
            clients[client as usize] += 1;
            servers[server as usize] += 1;
            out.clear();
            s.object_done(object, ms(k + 1), &mut out);
        }
        for c in clients.iter().chain(&servers) {
            assert!((*c as i64 - 10_000).abs() < 433, "{clients:?} {servers:?}");
        }
    }

    #[test]
    fn test_same_draws_whatever_the_completion_times() {
        // One stream drawn in a fixed order: two "networks" with different
        // object times see the same pages, servers, clients and sizes.
        let p = WebParams {
            pages_per_session: Dist::Constant(20.0),
            inter_page: Dist::Exponential { mean: 1.0 },
            objects_per_page: Dist::Exponential { mean: 3.0 },
            ..WebParams::default()
        };
        let mut fast = slot(&p, 50, 50, "web");
        let mut slow = slot(&p, 50, 50, "web");
        let a = launches(&drive(&mut fast, Time::from_secs(2000), |_| Duration::from_millis(10)));
        let b = launches(&drive(&mut slow, Time::from_secs(2000), |k| {
            Duration::from_millis(100 + 7 * k as u64)
        }));
        let n = a.len().min(b.len());
        assert!(n > 500, "{n} launches");
        assert_eq!(a[..n], b[..n]);
    }

    #[test]
    fn test_offered_load_matches_hand_formula() {
        // 3 objects of 5 packets of 1000 B per page, launched 100 ms apart;
        // each object takes 50 ms + 10 ms per packet = 100 ms, so a page
        // takes 200 + 100 = 300 ms; then 1.7 s to the next page: one page
        // every 2 s. 4 sessions x 15000 B x 8 / (1.7 s + 0.3 s) = 240 kb/s.
        // Sessions of 3 pages replaced at once give the same load as long
        // sessions: the replacement's first page waits one inter-page gap.
        let service = |k: u32| Duration::from_millis(50 + 10 * k as u64);
        for pages in [250.0, 3.0] {
            let p = WebParams {
                replace_finished: true,
                ..constant_params(pages, 3.0, 0.1, 5.0, 1.7)
            };
            assert!((p.offered_load_bps(4, PAYLOAD_BYTES, 0.3).unwrap() - 240_000.0).abs() < 1e-6);
            let end = Time::from_secs(1000);
            let mut bits = 0u64;
            for j in 0..4 {
                let mut s = slot(&p, 1, 1, &format!("web[{j}]"));
                let log = drive(&mut s, end, service);
                let mut pkts_by_page = std::collections::HashMap::new();
                for &(_, a) in &log {
                    match a {
                        Action::Launch { page, size_pkts, .. } => {
                            *pkts_by_page.entry(page).or_insert(0u64) += size_pkts as u64;
                        }
                        Action::PageDone { page, started, now } => {
                            assert_eq!(now - started, Duration::from_millis(300));
                            bits += pkts_by_page[&page] * PAYLOAD_BYTES as u64 * 8;
                        }
                        Action::SessionDone => {}
                    }
                }
                // Pages start at 0, 2, ..., 998 s and end 0.3 s later.
                assert_eq!(s.stats().pages_done, 500);
                assert_eq!(s.stats().sessions_done, if pages == 3.0 { 166 } else { 2 });
            }
            assert_eq!(bits as f64 / end.as_secs_f64(), 240_000.0);
        }
    }
}
