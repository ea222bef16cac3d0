//! One run: the network, the flows' ends and their applications, driven by
//! the event queue, and the result they produce.
//!
//! The [`Sim`] owns time. It pops the next event and hands it to the part
//! that owns it: a link's wake-up to the network (`crate::net::link`), a
//! UDP source's, a TCP agent's or a bulk application's to the flows' ends
//! (`flows.rs`), a web session's or an HTTP/1.1 client's to `web.rs`, a
//! sample to `trace.rs`. Each of them says what happened (packets to send,
//! packets the network lost, actions an application asked for) and the loop
//! carries it out. `setup.rs` builds a
//! run from its scenario; `summary.rs` gathers the monitors' and the flows'
//! counts into the result.

use aqmlab_qdisc::rng;
use aqmlab_qdisc::{tcp_flags, Duration, Ecn, Packet, PacketKind, QueueDisc, Time};
use serde_json::{json, Map, Value};

use crate::app::bulk::{Bulk, BulkAction};
use crate::app::http11::{Http11Action, Http11Client};
use crate::app::web::{Action as WebAction, WebResponse, WebSession};
use crate::app::REQUEST_PKTS;
use crate::engine::{EventQueue, Fired, LinkEvent, Next, Timer};
use crate::monitor::{
    jain_index, DelayHistogram, DelayStats, HistogramSummary, Fairness, FlowRow, FlowStats, GroupSummary, Http11Summary, Named, RunSummary, SizeRow,
    TcpCounts, TcpFlowSummary, TcpGroupSummary, TimesSummary, Totals, WebSummary, Window,
};
use crate::net::link::{Link, Network, Wakeups};
use crate::scenario::{Scenario, SourceSpec, TcpOnOff};
use crate::transport::tcp::conn::{Payload, TcpConn};
use crate::transport::tcp::{AckInfo, DataInfo, RtoConfig, Segment};
use crate::transport::udp::UdpSource;

mod flows;
mod setup;
mod summary;
#[cfg(test)]
mod tests;
mod trace;
mod web;

use flows::*;
use trace::*;
use web::*;

pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The end of the run.
    End,
    /// UDP flow `0`'s source is due to emit.
    Source(u32),
    /// A queue discipline's own timer.
    QdiscTimer { link: u32, generation: u32 },
    /// Time to sample the traced queues.
    Sample,
    /// The measurement window opens.
    Warmup,
    /// A bulk TCP application's own timer (its start, an ON/OFF switch,
    /// its next transfer, its next paced packets).
    BulkTimer { flow: u32, generation: u32 },
    /// A TCP sender's retransmission timer.
    TcpSenderTimer { flow: u32, generation: u32 },
    /// A TCP sink's delayed-ACK timer.
    TcpSinkTimer { flow: u32, generation: u32 },
    /// Web session `0` starts.
    WebStart(u32),
    /// A web session's own timer (next object or page).
    WebTimer { session: u32, generation: u32 },
    /// HTTP/1.1 client `0` opens its connection and sends its first request.
    HttpStart(u32),
    /// An HTTP/1.1 client's think time ends.
    HttpTimer { client: u32, generation: u32 },
}

/// The network's wake-ups are link events of the event queue; a
/// discipline's timer is an event of its own.
impl Wakeups for EventQueue<Event> {
    #[inline]
    fn reserve(&mut self) -> u64 {
        EventQueue::reserve(self)
    }

    #[inline]
    fn set_tx_done(&mut self, l: u32, at: Option<(Time, u64)>) {
        self.set_link(l, LinkEvent::TxDone, at);
    }

    #[inline]
    fn set_arrival(&mut self, l: u32, at: Option<(Time, u64)>) {
        self.set_link(l, LinkEvent::Arrive, at);
    }

    #[inline]
    fn qdisc_timer(&mut self, l: u32, at: Time, generation: u32) {
        self.schedule(at, Event::QdiscTimer { link: l, generation });
    }
}

#[derive(Clone, Copy, Debug)]
struct FlowMeta {
    /// The row of `stats` the flow's packets count in: its own for a
    /// group's flows; its session's for a web connection.
    stat: u32,
    /// The group's TED deadline, `Duration::MAX` for none.
    ted_deadline: Duration,
    /// The ECN codepoint of an open-loop (UDP) flow's packets.
    udp_ecn: Ecn,
    group: u16,
    class: u8,
    src: u32,
    dst: u32,
}

/// What a run produces: the summary (README, "What is measured") and the time
/// series as named columns.
#[derive(Clone, Debug)]
pub struct RunOutput {
    pub summary: Value,
    pub series: Vec<(String, Vec<f64>)>,
}

impl RunOutput {
    /// `{"summary": ..., "series": {"time_s": [...], ...}}`.
    pub fn to_json(&self) -> String {
        let series: Map<String, Value> = self.series.iter().map(|(k, v)| (k.clone(), json!(v))).collect();
        serde_json::to_string(&json!({ "summary": self.summary, "series": series })).expect("a JSON value serialises")
    }
}

pub struct Sim<'s> {
    sc: &'s Scenario,
    seed: u64,
    now: Time,
    window: Window,
    events: EventQueue<Event>,
    net: Network,
    flows: Vec<FlowMeta>,
    /// Each flow's end: its transport, and the application driving it.
    ends: Vec<End>,
    /// Bulk applications' actions, scratch.
    bulk_actions: Vec<BulkAction>,
    /// Web sessions, and the connection slots freed for reuse.
    web: Vec<WebSlot>,
    free_slots: Vec<u32>,
    /// Buffers of closed web connections, for new ones to reuse.
    spare: Vec<crate::transport::tcp::conn::Spare>,
    web_actions: Vec<WebAction>,
    http: Vec<HttpSlot>,
    http_actions: Vec<Http11Action>,
    /// Open web connections now, and their time integral in the window.
    /// Per group: open web connections now, since when, and their time
    /// integral inside the window.
    active: Vec<(u64, Time, u128)>,
    /// Scratch for what TCP agents send.
    segments: Vec<Segment>,
    acks: Vec<AckInfo>,
    stats: Vec<FlowStats>,
    /// Per group: the one-way delays of its delivered packets (those
    /// `stats` counts in `delay`).
    delays: Vec<DelayHistogram>,
    /// Per group: the same packets' time spent waiting in queues.
    queueing: Vec<DelayHistogram>,
    next_id: u64,
    n_events: u64,
    tracer: Option<Tracer>,
    /// Every TCP data packet and SYN as it leaves its sender: (time, flow,
    /// sequence number).
    #[cfg(test)]
    tcp_log: Vec<(Time, u32, u32)>,
}

impl<'s> Sim<'s> {
    /// Runs to the end and returns the result.
    pub fn run(mut self) -> RunOutput {
        let wall = std::time::Instant::now();
        self.run_to_end();
        let wall_s = wall.elapsed().as_secs_f64();
        self.finish(wall_s)
    }

    /// Processes events up to the end of the run.
    pub fn run_to_end(&mut self) {
        while let Some(next) = self.events.pop() {
            self.n_events += 1;
            let (t, ev) = match next {
                Next::Link(t, l, LinkEvent::Arrive) => {
                    self.now = t;
                    self.arrive(l);
                    continue;
                }
                Next::Link(t, l, LinkEvent::TxDone) => {
                    self.now = t;
                    self.net.tx_done(l, t, &mut self.events);
                    self.account_lost();
                    continue;
                }
                Next::Other(t, ev) => (t, ev),
            };
            self.now = t;
            // A timer event fires only if its timer is due now; one moved
            // later goes back in the queue. A stale one (its timer re-armed
            // earlier or cancelled since) is ignored outright, with no
            // re-sync of the owner's timers: a `file` flow's `Close`
            // (`flows.rs`) cancels the timers of its closed connection
            // while its agents still want them (its last ACKs are ignored), and a re-sync
            // would arm them again: the closed connection would time out
            // and send packets stamped with the next connection's
            // generation, whose ACKs would reach that connection (an RTT
            // sample shorter than the path, an ACK beyond all it has sent)
            // and could stall it for good.
            if let Some((timer, generation)) = self.timer_of(ev) {
                match timer.fire(generation, t) {
                    Fired::Due => {}
                    Fired::Later(at) => {
                        self.events.schedule(at, ev);
                        continue;
                    }
                    Fired::Stale => continue,
                }
            }
            match ev {
                Event::End => {
                    // The End event was scheduled first, so it precedes a
                    // sample due at the same instant: take that one too.
                    if self.tracer.as_ref().is_some_and(|tr| tr.next_at == self.now) {
                        self.sample();
                    }
                    break;
                }
                Event::Source(f) => self.source_fire(f),
                Event::QdiscTimer { link, .. } => self.net.qdisc_timer(link, self.now, &mut self.events),
                Event::Sample => self.sample(),
                Event::Warmup => {
                    for t in self.ends.iter_mut().filter_map(End::tcp_mut) {
                        t.account(false);
                    }
                }
                Event::BulkTimer { flow, .. } => self.bulk_timer(flow),
                // A closed web connection's timers are dead.
                Event::TcpSenderTimer { flow, .. } | Event::TcpSinkTimer { flow, .. }
                    if self.ends[flow as usize].tcp().is_none() => {}
                Event::TcpSenderTimer { flow, .. } => {
                    let (now, mut segs) = (self.now, std::mem::take(&mut self.segments));
                    self.tcp_mut(flow).conn.sender.on_timer(now, &mut segs);
                    self.segments = segs;
                    self.tcp_send(flow);
                }
                Event::TcpSinkTimer { flow, .. } => {
                    let (now, mut acks) = (self.now, std::mem::take(&mut self.acks));
                    self.tcp_mut(flow).conn.sink.on_timer(now, &mut acks);
                    self.acks = acks;
                    self.tcp_ack(flow);
                }
                Event::HttpStart(c) => {
                    let now = self.now;
                    let slot = &self.http[c as usize];
                    let (req, resp) = (slot.req, slot.resp);
                    for f in [req, resp] {
                        let mut segs = std::mem::take(&mut self.segments);
                        let t = self.tcp_mut(f);
                        t.conn.started_at = now;
                        t.conn.sender.start(now, &mut segs);
                        self.segments = segs;
                        self.tcp_send(f);
                    }
                    let mut actions = std::mem::take(&mut self.http_actions);
                    self.http[c as usize].client.start(now, &mut actions);
                    self.http_actions = actions;
                    self.http_act(c);
                }
                Event::HttpTimer { client, .. } => {
                    let (now, mut actions) = (self.now, std::mem::take(&mut self.http_actions));
                    self.http[client as usize].client.timer(now, &mut actions);
                    self.http_actions = actions;
                    self.http_act(client);
                }
                Event::WebStart(w) => {
                    let (now, mut actions) = (self.now, std::mem::take(&mut self.web_actions));
                    self.web[w as usize].session.start(now, &mut actions);
                    self.web_actions = actions;
                    self.web_act(w);
                }
                Event::WebTimer { session, .. } => {
                    let (now, mut actions) = (self.now, std::mem::take(&mut self.web_actions));
                    self.web[session as usize].session.timer(now, &mut actions);
                    self.web_actions = actions;
                    self.web_act(session);
                }
            }
        }
    }

    /// The timer a timer event belongs to, with the generation it carries
    /// (None for other events, and for the timers of a closed web
    /// connection, whose events are ignored).
    fn timer_of(&mut self, ev: Event) -> Option<(&mut Timer, u32)> {
        match ev {
            Event::QdiscTimer { link, generation } => Some((&mut self.net.links[link as usize].timer, generation)),
            Event::TcpSenderTimer { flow, generation } => self.ends[flow as usize]
                .tcp_mut()
                .map(|t| (&mut t.sender_timer, generation)),
            Event::TcpSinkTimer { flow, generation } => self.ends[flow as usize]
                .tcp_mut()
                .map(|t| (&mut t.sink_timer, generation)),
            Event::BulkTimer { flow, generation } => self.ends[flow as usize]
                .tcp_mut()
                .map(|t| (&mut t.app_timer, generation)),
            Event::HttpTimer { client, generation } => Some((&mut self.http[client as usize].timer, generation)),
            Event::WebTimer { session, generation } => Some((&mut self.web[session as usize].timer, generation)),
            _ => None,
        }
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.n_events
    }

    /// Sends `pkt` on from `node` and accounts what the network lost.
    #[inline]
    fn forward(&mut self, node: u32, pkt: Packet) {
        self.net.forward(node, pkt, self.now, &mut self.events);
        self.account_lost();
    }

    /// Link `l`'s oldest packet in flight reaches the far node.
    fn arrive(&mut self, l: u32) {
        let delivered = self.net.arrive(l, self.now, &mut self.events);
        self.account_lost();
        if let Some(pkt) = delivered {
            self.deliver(pkt);
        }
    }

    /// The packets the network dropped count against their flows if they
    /// were sent inside the window, so that `drops / sent` compares like
    /// with like.
    #[inline]
    fn account_lost(&mut self) {
        if self.net.lost.is_empty() {
            return;
        }
        let Sim {
            net,
            flows,
            stats,
            window,
            ..
        } = self;
        for pkt in net.lost.drain(..) {
            if pkt.kind != PacketKind::TcpAck && window.contains(pkt.sent_at) {
                stats[flows[pkt.flow as usize].stat as usize].drops += 1;
            }
        }
    }
}

/// Runs `sc` with `seed`.
pub fn run(sc: &Scenario, seed: u64) -> RunOutput {
    Sim::new(sc, seed).run()
}
