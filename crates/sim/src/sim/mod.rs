//! One run: the world of links, queues and sources, driven by the event
//! queue, and the result it produces.
//!
//! A packet's life: a source emits it at its host; the host's route for its
//! destination names an output link; the link's queue discipline takes it or
//! drops it; when the link is free the discipline hands over the next packet,
//! which is serialised at the link rate (`TxDone`), then propagates
//! (`Arrive`) to the far node, which delivers it or forwards it. Packets in
//! propagation on a link stay in a FIFO on that link (its delay is constant,
//! so they arrive in the order they left), which keeps events small.

use aqmlab_qdisc::rng;
use aqmlab_qdisc::{tcp_flags, AnyQdisc, Duration, Ecn, Limit, Packet, PacketKind, QueueDisc, Time};
use serde_json::{json, Map, Value};

use crate::app::web::{Action as WebAction, Http11Action, Http11Client, WebResponse, WebSession, REQUEST_PKTS};
use crate::engine::{EventQueue, Fired, LinkEvent, Next, Timer};
use crate::monitor::{jain_index, num, ratio, DelayStats, FlowStats, QueueMonitor, Totals, Window};
use crate::net::link::{Link, Network, Wakeups};
use crate::net::qdisc::describe;
use crate::scenario::{DelaySpec, Report, Scenario, SourceSpec, TcpOnOff};
use crate::transport::tcp::conn::{Payload, TcpConn};
use crate::transport::tcp::{AckInfo, DataInfo, RtoConfig, Segment};
use crate::transport::udp::UdpSource;

pub const ENGINE_VERSION: &str = env!("CARGO_PKG_VERSION");

#[derive(Clone, Copy, Debug)]
enum Event {
    /// The end of the run.
    End,
    /// Flow `0`'s source is due to emit.
    Source(u32),
    /// A queue discipline's own timer.
    QdiscTimer { link: u32, generation: u32 },
    /// Time to sample the traced queues.
    Sample,
    /// The measurement window opens.
    Warmup,
    /// Flow `0`'s TCP application starts.
    TcpStart(u32),
    /// A TCP sender's retransmission timer.
    TcpSenderTimer { flow: u32, generation: u32 },
    /// A TCP sink's delayed-ACK timer.
    TcpSinkTimer { flow: u32, generation: u32 },
    /// Flow `0`'s ON/OFF application switches.
    TcpOnOff(u32),
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

/// A TCP flow's connection and the engine's timers for its two agents.
struct TcpFlow {
    conn: TcpConn,
    role: Role,
    /// Which of the flow's connections `conn` is; packets carry it.
    gen: u32,
    sender_timer: Timer,
    sink_timer: Timer,
    on_off: Option<OnOff>,
    repeat: Option<Repeat>,
    /// To open further connections (`file`).
    cfg: crate::transport::tcp::TcpConfig,
    boot: Duration,
    payload: crate::config::dist::Dist,
    payload_seed: u64,
    /// Retransmits, timeouts, fast retransmits and ECN reductions inside
    /// the window, over all the flow's connections, and the current
    /// connection's counters when they were last added in.
    counts: [u64; 4],
    last_seen: crate::transport::tcp::TcpSenderStats,
    /// srtt and RTO after each ACK inside the window (s).
    srtt: DelayStats,
    rto: DelayStats,
    /// Completion times of the transfers that ended inside the window.
    transfer_times: Vec<f64>,
    /// Payload delivered in order over the run, all connections.
    transfer_bytes: u64,
}

impl TcpFlow {
    /// A connection that the engine feeds with data as its application
    /// asks (HTTP/1.1 and web), with fresh timers and no counts yet.
    fn persistent(conn: TcpConn, role: Role, cfg: crate::transport::tcp::TcpConfig) -> TcpFlow {
        TcpFlow {
            conn,
            role,
            gen: 0,
            sender_timer: Timer::default(),
            sink_timer: Timer::default(),
            on_off: None,
            repeat: None,
            cfg,
            boot: Duration::ZERO,
            payload: crate::config::dist::Dist::Constant(0.0),
            payload_seed: 0,
            counts: [0; 4],
            last_seen: Default::default(),
            srtt: DelayStats::default(),
            rto: DelayStats::default(),
            transfer_times: Vec::new(),
            transfer_bytes: 0,
        }
    }

    /// Adds the current connection's counters since they were last seen,
    /// counting them only inside the window.
    fn account(&mut self, inside: bool) {
        let now = *self.conn.sender.stats();
        if inside {
            let then = &self.last_seen;
            for (total, (a, b)) in self.counts.iter_mut().zip([
                (now.retransmits, then.retransmits),
                (now.timeouts, then.timeouts),
                (now.fast_retransmits, then.fast_retransmits),
                (now.ecn_reductions, then.ecn_reductions),
            ]) {
                *total += a - b;
            }
        }
        self.last_seen = now;
    }
}

/// What a TCP connection carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Role {
    /// A group's own flow (`ftp`, `file`, `onoff`).
    Flow,
    /// Web session `session`'s request for `object`, client to server.
    WebRequest {
        session: u32,
        object: u64,
    },
    /// The response to it, server to client (under `same-connection`, the
    /// rest of the request's connection).
    WebResponse {
        session: u32,
        object: u64,
    },
    /// HTTP/1.1 client `client`'s persistent connection for requests
    /// (client to server) or responses (server to client).
    HttpRequest {
        client: u32,
    },
    HttpResponse {
        client: u32,
    },
}

/// A persistent HTTP/1.1 client and its two long-lived connections.
struct HttpSlot {
    client: Http11Client,
    /// Connection slots: requests (client to server), responses back.
    req: u32,
    resp: u32,
    /// Packets asked of and delivered by each connection so far.
    req_target: u64,
    req_delivered: u64,
    resp_target: u64,
    resp_delivered: u64,
    /// The request under way: its response's packets and when it was asked.
    pending: Option<(u32, Time)>,
    timer: Timer,
    /// Response times (request to the last response byte) in the window,
    /// with each response's size in packets.
    response_times: Vec<(u32, f64)>,
}

/// A web session of a `web` group and what is measured about it.
struct WebSlot {
    session: WebSession,
    /// Its row in `stats` (a flow index of the group).
    stat: u32,
    servers: Vec<u32>,
    clients: Vec<u32>,
    payload_bytes: u32,
    cfg: crate::transport::tcp::TcpConfig,
    /// How its objects' requests and responses travel, and so which end
    /// finishes a web connection: the sender once all is acknowledged
    /// (`new-connection`), or the sink once all is delivered.
    response: WebResponse,
    timer: Timer,
    /// Objects in flight: (object, launch time, size in packets).
    in_flight: Vec<(u64, Time, u32)>,
    /// Object and page times that ended inside the window (s).
    object_times: Vec<f64>,
    page_times: Vec<f64>,
    /// TCP counters of its closed connections inside the window.
    counts: [u64; 4],
    /// Sizes (packets) of the objects launched inside the window.
    object_sizes: Vec<u32>,
}

/// Repeated transfers of a `file` group.
struct Repeat {
    size: crate::config::dist::Dist,
    gap: crate::config::dist::Dist,
    rng: aqmlab_qdisc::rng::Rng,
}

/// An ON/OFF application over TCP: unlimited data while ON, none while OFF.
struct OnOff {
    on: crate::config::dist::Dist,
    off: crate::config::dist::Dist,
    rng: aqmlab_qdisc::rng::Rng,
    is_on: bool,
}

#[derive(Clone, Copy, Debug)]
struct FlowMeta {
    /// The row of `stats` the flow's packets count in: its own for a
    /// group's flows; its session's for a web connection.
    stat: u32,
    /// The group's TED deadline, `Duration::MAX` for none.
    ted_deadline: Duration,
    group: u16,
    class: u8,
    src: u32,
    dst: u32,
}

/// Time series, one column per traced quantity.
struct Tracer {
    interval: Duration,
    next_at: Time,
    links: Vec<u32>,
    flows: Vec<(u32, String)>,
    time_s: Vec<f64>,
    columns: Vec<(String, Vec<f64>)>,
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
    /// The open-loop source of each flow (`None` for TCP flows).
    sources: Vec<Option<UdpSource>>,
    /// The TCP connection of each flow (`None` for UDP flows).
    tcp: Vec<Option<TcpFlow>>,
    /// Web sessions, and the connection slots freed for reuse (with the
    /// timers of their last connection, whose generations go on).
    web: Vec<WebSlot>,
    free_slots: Vec<u32>,
    slot_timers: Vec<(Timer, Timer, u32)>,
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
    next_id: u64,
    n_events: u64,
    tracer: Option<Tracer>,
    /// Every TCP data packet and SYN as it leaves its sender: (time, flow,
    /// sequence number).
    #[cfg(test)]
    tcp_log: Vec<(Time, u32, u32)>,
}

impl<'s> Sim<'s> {
    pub fn new(sc: &'s Scenario, seed: u64) -> Sim<'s> {
        let window = Window {
            start: Time(sc.warmup.0),
            end: Time(sc.duration.0),
        };
        let n_classes = sc.classes.len();
        let links = sc
            .net
            .links
            .iter()
            .map(|l| {
                let qdisc = l.qdisc.build(
                    l.info(),
                    rng::stream_seed(seed, &format!("queue[{}].qdisc", l.name)),
                    &sc.classes,
                );
                // A queue reported only if it drops, and that cannot drop.
                let mon = if l.report == Report::IfDropped
                    && matches!(&qdisc, AnyQdisc::DropTail(d) if d.params().limit == Limit::Unlimited)
                {
                    QueueMonitor::totals_only(window)
                } else {
                    QueueMonitor::new(window, n_classes)
                };
                let delay = match &l.delay {
                    DelaySpec::Fixed(d) => *d,
                    DelaySpec::Drawn { dist, stream } => {
                        Duration::from_secs_f64(dist.sample(&mut rng::stream(seed, stream)))
                    }
                };
                Link::new(l.to, l.rate_bps, delay, qdisc, mon)
            })
            .collect();
        let mut sim = Sim {
            sc,
            seed,
            now: Time::ZERO,
            window,
            events: EventQueue::new(sc.net.links.len()),
            net: Network::new(links, sc.net.next_hop.clone(), sc.net.nodes.len()),
            flows: Vec::new(),
            sources: Vec::new(),
            tcp: Vec::new(),
            web: Vec::new(),
            free_slots: Vec::new(),
            slot_timers: Vec::new(),
            spare: Vec::new(),
            web_actions: Vec::new(),
            http: Vec::new(),
            http_actions: Vec::new(),
            active: vec![(0, Time::ZERO, 0); sc.groups.len()],
            segments: Vec::new(),
            acks: Vec::new(),
            stats: Vec::new(),
            next_id: 0,
            n_events: 0,
            #[cfg(test)]
            tcp_log: Vec::new(),
            tracer: sc.trace.as_ref().map(|t| Tracer {
                interval: t.interval,
                next_at: Time::ZERO,
                links: t.links.clone(),
                flows: t.flows.clone(),
                time_s: Vec::new(),
                columns: Vec::new(),
            }),
        };
        sim.events.schedule(window.end, Event::End);
        let mut http_setup = Vec::new();
        for (g, group) in sc.groups.iter().enumerate() {
            let stop = group.stop.map(|d| Time(d.0)).unwrap_or(Time::MAX);
            for j in 0..group.count {
                let (src, dst) = group.endpoints(j);
                let f = sim.flows.len() as u32;
                sim.flows.push(FlowMeta {
                    stat: f,
                    ted_deadline: group.ted_deadline.unwrap_or(Duration::MAX),
                    group: g as u16,
                    class: group.class,
                    src,
                    dst,
                });
                sim.stats.push(FlowStats::default());
                let name = format!("traffic[{}].flow[{j}]", group.name);
                let start = group.start.sample(&mut rng::stream(seed, &format!("{name}.start")));
                sim.tcp.push(match &group.source {
                    SourceSpec::Ftp {
                        size_bytes,
                        payload,
                        tcp,
                        on_off,
                        repeat,
                    } => {
                        let mut cfg = *tcp;
                        if cfg.rto == RtoConfig::Ted {
                            cfg.rto = RtoConfig::Fixed(ted_rto(sc, &sim.net.links, g, src, dst));
                        }
                        let boot = match cfg.rto {
                            RtoConfig::Ns2 { tick, .. } => Duration(
                                (rng::uniform(&mut rng::stream(seed, &format!("{name}.boot"))) * tick.0 as f64) as u64
                                    % tick.0,
                            ),
                            _ => Duration::ZERO,
                        };
                        let payload_seed = rng::stream_seed(seed, &format!("{name}.payload"));
                        let mut repeat = repeat.as_ref().map(|(size, gap)| Repeat {
                            size: size.clone(),
                            gap: gap.clone(),
                            rng: rng::stream(seed, &format!("{name}.repeat")),
                        });
                        // A `file` flow's first transfer has a drawn size too.
                        let size_bytes = match repeat.as_mut() {
                            Some(r) => Some(r.size.sample(&mut r.rng).round().max(1.0) as u64),
                            None => *size_bytes,
                        };
                        let data = Payload::new(payload.clone(), rng::stream_seed(payload_seed, "0"), size_bytes);
                        let conn = TcpConn::new(&cfg, data, boot).expect("a validated TCP configuration");
                        // A rate-limited ON/OFF application is a source (below)
                        // that opens the connection with its first packet.
                        let paced = matches!(on_off, Some(TcpOnOff { rate_bps: Some(_), .. }));
                        if !paced {
                            sim.events
                                .schedule(Time::ZERO + Duration::from_secs_f64(start), Event::TcpStart(f));
                        }
                        let on_off = on_off.as_ref().filter(|_| !paced).map(|o| OnOff {
                            on: o.on.clone(),
                            off: o.off.clone(),
                            rng: rng::stream(seed, &format!("{name}.onoff")),
                            is_on: false,
                        });
                        Some(TcpFlow {
                            conn,
                            role: Role::Flow,
                            gen: 0,
                            sender_timer: Timer::default(),
                            sink_timer: Timer::default(),
                            on_off,
                            repeat,
                            cfg,
                            boot,
                            payload: payload.clone(),
                            payload_seed,
                            counts: [0; 4],
                            last_seen: Default::default(),
                            srtt: DelayStats::default(),
                            rto: DelayStats::default(),
                            transfer_times: Vec::new(),
                            transfer_bytes: 0,
                        })
                    }
                    SourceSpec::Http11 {
                        params,
                        payload_bytes,
                        tcp,
                    } => {
                        let client =
                            Http11Client::new(params, *payload_bytes, rng::stream(seed, &format!("{name}.http")))
                                .expect("a validated HTTP/1.1 group");
                        sim.http.push(HttpSlot {
                            client,
                            req: 0,
                            resp: 0,
                            req_target: 0,
                            req_delivered: 0,
                            resp_target: 0,
                            resp_delivered: 0,
                            pending: None,
                            timer: Timer::default(),
                            response_times: Vec::new(),
                        });
                        http_setup.push((sim.http.len() as u32 - 1, f, *tcp, *payload_bytes, start));
                        None
                    }
                    SourceSpec::Web {
                        params,
                        payload_bytes,
                        tcp,
                        response,
                    } => {
                        let mut cfg = *tcp;
                        if cfg.rto == RtoConfig::Ted {
                            // Connections of a session run between varying hosts:
                            // the TED RTO is taken for the group's first pair.
                            cfg.rto = RtoConfig::Fixed(ted_rto(sc, &sim.net.links, g, group.src[0], group.dst[0]));
                        }
                        let session = WebSession::new(
                            params,
                            group.dst.len() as u32,
                            group.src.len() as u32,
                            rng::stream(seed, &format!("{name}.web")),
                        )
                        .expect("a validated web group");
                        sim.web.push(WebSlot {
                            session,
                            stat: f,
                            servers: group.src.clone(),
                            clients: group.dst.clone(),
                            payload_bytes: *payload_bytes,
                            cfg,
                            response: *response,
                            timer: Timer::default(),
                            in_flight: Vec::new(),
                            object_times: Vec::new(),
                            page_times: Vec::new(),
                            counts: [0; 4],
                            object_sizes: Vec::new(),
                        });
                        sim.events.schedule(
                            Time::ZERO + Duration::from_secs_f64(start),
                            Event::WebStart(sim.web.len() as u32 - 1),
                        );
                        None
                    }
                    _ => None,
                });
                let mut source = group.source.schedule().map(|schedule| {
                    UdpSource::new(
                        &schedule,
                        stop,
                        rng::stream(seed, &format!("{name}.gap")),
                        rng::stream(seed, &format!("{name}.size")),
                    )
                });
                if let Some(t) = source
                    .as_mut()
                    .and_then(|s| s.first(Time::ZERO + Duration::from_secs_f64(start)))
                {
                    sim.events.schedule(t, Event::Source(f));
                }
                sim.sources.push(source);
            }
        }
        if sim.tracer.is_some() {
            sim.events.schedule(Time::ZERO, Event::Sample);
        }
        if window.start > Time::ZERO {
            sim.events.schedule(window.start, Event::Warmup);
        }
        sim.slot_timers = vec![(Timer::default(), Timer::default(), 0); sim.flows.len()];
        // Each HTTP/1.1 client's two persistent connections: responses in
        // the client's own flow slot (server to client), requests in a new
        // one the other way. Neither has data until a request is made.
        for (c, f, cfg, payload_bytes, start) in http_setup {
            let m = sim.flows[f as usize];
            let conn = |syn: bool| {
                let cfg = crate::transport::tcp::TcpConfig { syn, ..cfg };
                let data = Payload::new(crate::config::dist::Dist::Constant(payload_bytes as f64), 0, None);
                TcpConn::new(&cfg, data, Duration::ZERO).expect("a validated TCP configuration")
            };
            sim.tcp[f as usize] = Some(TcpFlow::persistent(conn(false), Role::HttpResponse { client: c }, cfg));
            sim.flows.push(FlowMeta {
                src: m.dst,
                dst: m.src,
                ..m
            });
            sim.tcp.push(Some(TcpFlow::persistent(
                conn(true),
                Role::HttpRequest { client: c },
                cfg,
            )));
            sim.sources.push(None);
            sim.slot_timers.push((Timer::default(), Timer::default(), 0));
            sim.http[c as usize].req = sim.flows.len() as u32 - 1;
            sim.http[c as usize].resp = f;
            sim.events
                .schedule(Time::ZERO + Duration::from_secs_f64(start), Event::HttpStart(c));
        }
        sim
    }

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
            // re-sync of the owner's timers: `transfer_done` cancels the
            // timers of a `file` flow's closed connection while its agents
            // still want them (its last ACKs are ignored), and a re-sync
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
                    for t in self.tcp.iter_mut().flatten() {
                        t.account(false);
                    }
                }
                Event::TcpStart(f) => {
                    if self.tcp_mut(f).conn.done_at.is_some() {
                        self.open_next_transfer(f);
                    }
                    let (now, mut segs) = (self.now, std::mem::take(&mut self.segments));
                    self.tcp_mut(f).conn.start(now, &mut segs);
                    self.segments = segs;
                    self.tcp_send(f);
                    // An ON/OFF application starts ON, with the data the start gave.
                    let t = self.tcp_mut(f);
                    if let Some(o) = t.on_off.as_mut() {
                        o.is_on = true;
                        let on = o.on.sample(&mut o.rng);
                        self.events
                            .schedule(now + Duration::from_secs_f64(on), Event::TcpOnOff(f));
                    }
                }
                Event::TcpOnOff(f) => self.on_off_switch(f),
                // A closed web connection's timers are dead.
                Event::TcpSenderTimer { flow, .. } | Event::TcpSinkTimer { flow, .. }
                    if self.tcp[flow as usize].is_none() => {}
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

    /// An ON/OFF application's period ends: OFF pauses the sender, ON gives
    /// it unlimited data again; the next switch is drawn.
    fn on_off_switch(&mut self, f: u32) {
        let now = self.now;
        let mut segs = std::mem::take(&mut self.segments);
        let t = self.tcp_mut(f);
        let o = t.on_off.as_mut().expect("an ON/OFF flow");
        let period = if o.is_on {
            t.conn.sender.app_pause();
            o.off.sample(&mut o.rng)
        } else {
            t.conn.sender.app_data(None, now, &mut segs);
            o.on.sample(&mut o.rng)
        };
        o.is_on = !o.is_on;
        self.segments = segs;
        self.tcp_send(f);
        self.events
            .schedule(now + Duration::from_secs_f64(period), Event::TcpOnOff(f));
    }

    /// Carries out what HTTP/1.1 client `c` asked for: a request goes out on
    /// its request connection; then its timer is kept in step.
    fn http_act(&mut self, c: u32) {
        let now = self.now;
        let mut actions = std::mem::take(&mut self.http_actions);
        for a in actions.drain(..) {
            let Http11Action::Request { response_pkts, .. } = a;
            let slot = &mut self.http[c as usize];
            slot.pending = Some((response_pkts, now));
            slot.req_target += REQUEST_PKTS as u64;
            let req = slot.req;
            let mut segs = std::mem::take(&mut self.segments);
            self.tcp_mut(req)
                .conn
                .sender
                .app_data(Some(REQUEST_PKTS as u64), now, &mut segs);
            self.segments = segs;
            self.tcp_send(req);
        }
        self.http_actions = actions;
        let slot = &mut self.http[c as usize];
        if let Some((at, generation)) = slot.timer.set(slot.client.next_timer(), now) {
            self.events.schedule(at, Event::HttpTimer { client: c, generation });
        }
    }

    /// Packets reached the application on an HTTP/1.1 connection: a whole
    /// request makes the server send the response; a whole response ends
    /// the request.
    fn http_delivered(&mut self, role: Role, pkts: u64) {
        let now = self.now;
        match role {
            Role::HttpRequest { client } => {
                let slot = &mut self.http[client as usize];
                slot.req_delivered += pkts;
                if pkts > 0 && slot.req_delivered >= slot.req_target {
                    let (resp_pkts, _) = slot.pending.expect("a request under way");
                    slot.resp_target += resp_pkts as u64;
                    let resp = slot.resp;
                    let mut segs = std::mem::take(&mut self.segments);
                    self.tcp_mut(resp)
                        .conn
                        .sender
                        .app_data(Some(resp_pkts as u64), now, &mut segs);
                    self.segments = segs;
                    self.tcp_send(resp);
                }
            }
            Role::HttpResponse { client } => {
                let inside = self.window.contains(now);
                let slot = &mut self.http[client as usize];
                slot.resp_delivered += pkts;
                if pkts > 0 && slot.resp_delivered >= slot.resp_target {
                    if let Some((size_pkts, asked)) = slot.pending.take() {
                        if inside {
                            slot.response_times.push((size_pkts, (now - asked).as_secs_f64()));
                        }
                        let mut actions = std::mem::take(&mut self.http_actions);
                        self.http[client as usize].client.response_done(now, &mut actions);
                        self.http_actions = actions;
                        self.http_act(client);
                    }
                }
            }
            _ => {}
        }
    }

    /// Carries out what web session `w` asked for in `self.web_actions`,
    /// then keeps its timer in step.
    fn web_act(&mut self, w: u32) {
        let (now, inside) = (self.now, self.window.contains(self.now));
        let mut actions = std::mem::take(&mut self.web_actions);
        for a in actions.drain(..) {
            match a {
                WebAction::Launch {
                    object,
                    client,
                    server,
                    size_pkts,
                    ..
                } => {
                    let slot = &mut self.web[w as usize];
                    slot.in_flight.push((object, now, size_pkts));
                    if inside {
                        slot.object_sizes.push(size_pkts);
                    }
                    let (c, s) = (slot.clients[client as usize], slot.servers[server as usize]);
                    let bytes = (REQUEST_PKTS * slot.payload_bytes) as u64;
                    // WebTraf's request agent is a plain Agent/TCP: a SYN
                    // if the group's TCP has one. The older model always
                    // opened with one.
                    let syn = slot.response == WebResponse::SameConnection || slot.cfg.syn;
                    self.open_web_conn(w, Role::WebRequest { session: w, object }, c, s, bytes, syn);
                }
                WebAction::PageDone { started, now, .. } => {
                    if inside {
                        self.web[w as usize].page_times.push((now - started).as_secs_f64());
                    }
                }
                WebAction::SessionDone => {}
            }
        }
        self.web_actions = actions;
        let slot = &mut self.web[w as usize];
        if let Some((at, generation)) = slot.timer.set(slot.session.next_timer(), now) {
            self.events.schedule(at, Event::WebTimer { session: w, generation });
        }
    }

    /// Opens a web connection from `src` to `dst` carrying `bytes`, in a
    /// free slot (or a new one), and starts it.
    fn open_web_conn(&mut self, w: u32, role: Role, src: u32, dst: u32, bytes: u64, syn: bool) {
        let web = &self.web[w as usize];
        let stat = web.stat;
        let mut cfg = web.cfg;
        cfg.syn = syn;
        let payload = Payload::new(
            crate::config::dist::Dist::Constant(web.payload_bytes as f64),
            0,
            Some(bytes),
        );
        let mut conn = TcpConn::new(&cfg, payload, Duration::ZERO).expect("a validated TCP configuration");
        if let Some(spare) = self.spare.pop() {
            conn.reuse(spare);
        }
        let meta = FlowMeta {
            stat,
            src,
            dst,
            ..self.flows[stat as usize]
        };
        let f = match self.free_slots.pop() {
            Some(f) => {
                self.flows[f as usize] = meta;
                f
            }
            None => {
                self.flows.push(meta);
                self.tcp.push(None);
                self.sources.push(None);
                self.slot_timers.push((Timer::default(), Timer::default(), 0));
                (self.flows.len() - 1) as u32
            }
        };
        let (sender_timer, sink_timer, gen) = self.slot_timers[f as usize];
        let mut flow = TcpFlow::persistent(conn, role, cfg);
        (flow.gen, flow.sender_timer, flow.sink_timer) = (gen + 1, sender_timer, sink_timer);
        self.tcp[f as usize] = Some(flow);
        let group = self.flows[stat as usize].group as usize;
        self.active_changed(group, 1);
        let (now, mut segs) = (self.now, std::mem::take(&mut self.segments));
        self.tcp_mut(f).conn.start(now, &mut segs);
        self.segments = segs;
        self.tcp_send(f);
    }

    /// Closes web connection `f`: its counters go to its session and its
    /// slot (with its timers' generations) to the free list.
    fn close_web_conn(&mut self, f: u32, w: u32) {
        let inside = self.window.contains(self.now);
        // Worked on in place (the flow is large) and then dropped, its
        // buffers kept for the next connection.
        let t = self.tcp[f as usize].as_mut().expect("an open web connection");
        t.account(inside);
        t.sender_timer.reset();
        t.sink_timer.reset();
        for (total, c) in self.web[w as usize].counts.iter_mut().zip(t.counts) {
            *total += c;
        }
        self.slot_timers[f as usize] = (t.sender_timer, t.sink_timer, t.gen);
        self.spare.push(t.conn.take_spare());
        self.tcp[f as usize] = None;
        self.free_slots.push(f);
        let group = self.flows[self.web[w as usize].stat as usize].group as usize;
        self.active_changed(group, -1);
    }

    /// The number of open web connections changes by `delta`.
    fn active_changed(&mut self, group: usize, delta: i64) {
        let dt = self.window.overlap_ns(self.active[group].1, self.now) as u128;
        let (n, since, area) = &mut self.active[group];
        *area += *n as u128 * dt;
        *since = self.now;
        *n = (*n as i64 + delta) as u64;
    }

    /// A web connection is finished (see `WebSlot::response` for which end
    /// says so): a request opens the response; a response completes its
    /// object.
    fn web_transfer_done(&mut self, f: u32, role: Role) {
        let now = self.now;
        match role {
            Role::WebRequest { session, object } => {
                self.close_web_conn(f, session);
                let m = self.flows[f as usize];
                let slot = &self.web[session as usize];
                let size = slot
                    .in_flight
                    .iter()
                    .find(|o| o.0 == object)
                    .expect("a launched object")
                    .2;
                let bytes = size as u64 * slot.payload_bytes as u64;
                // new-connection: the client has the request's ACK, and
                // WebTraf's server (no processing delay) opens the response
                // at that very instant, with a SYN if the TCP has one.
                // same-connection: the server has the request and answers
                // on the open connection, which needs no SYN.
                let syn = slot.response == WebResponse::NewConnection && slot.cfg.syn;
                self.open_web_conn(session, Role::WebResponse { session, object }, m.dst, m.src, bytes, syn);
            }
            Role::WebResponse { session, object } => {
                self.close_web_conn(f, session);
                let inside = self.window.contains(now);
                let slot = &mut self.web[session as usize];
                let i = slot
                    .in_flight
                    .iter()
                    .position(|o| o.0 == object)
                    .expect("a launched object");
                let (_, launched, _) = slot.in_flight.swap_remove(i);
                if inside {
                    slot.object_times.push((now - launched).as_secs_f64());
                }
                let mut actions = std::mem::take(&mut self.web_actions);
                self.web[session as usize]
                    .session
                    .object_done(object, now, &mut actions);
                self.web_actions = actions;
                self.web_act(session);
            }
            _ => unreachable!("web transfers only"),
        }
    }

    /// A `file` flow's next transfer: a new connection (the next
    /// generation) with a freshly drawn size.
    fn open_next_transfer(&mut self, f: u32) {
        let t = self.tcp_mut(f);
        let r = t.repeat.as_mut().expect("only file flows reopen");
        let size = r.size.sample(&mut r.rng).round().max(1.0) as u64;
        let data = Payload::new(
            t.payload.clone(),
            rng::stream_seed(t.payload_seed, &t.gen.to_string()),
            Some(size),
        );
        t.conn = TcpConn::new(&t.cfg, data, t.boot).expect("a validated TCP configuration");
        t.last_seen = Default::default();
    }

    /// A transfer was delivered: its time is recorded and, for a `file`
    /// flow, the connection closes (its late packets will be ignored) and
    /// the next one is scheduled after a gap.
    fn transfer_done(&mut self, f: u32) {
        let (now, inside) = (self.now, self.window.contains(self.now));
        let t = self.tcp_mut(f);
        if inside {
            t.transfer_times.push((now - t.conn.started_at).as_secs_f64());
        }
        let Some(r) = t.repeat.as_mut() else { return };
        let gap = r.gap.sample(&mut r.rng);
        t.account(inside);
        // The connection is closed: its late packets are ignored from now.
        t.gen += 1;
        t.sender_timer.reset();
        t.sink_timer.reset();
        self.events
            .schedule(now + Duration::from_secs_f64(gap), Event::TcpStart(f));
    }

    fn tcp_mut(&mut self, f: u32) -> &mut TcpFlow {
        self.tcp[f as usize].as_mut().expect("a TCP flow")
    }

    /// A packet of flow `f` from `from` to `to`, stamped now.
    fn packet(&mut self, f: u32, kind: PacketKind, size_bytes: u32, from: u32, to: u32) -> Packet {
        let m = self.flows[f as usize];
        self.next_id += 1;
        Packet {
            id: self.next_id - 1,
            flow: f,
            group: m.group,
            class: m.class,
            kind,
            size_bytes,
            src: from,
            dst: to,
            sent_at: self.now,
            enqueued_at: self.now,
            ted_deadline: m.ted_deadline,
            ted_budget: m.ted_deadline,
            ..Packet::default()
        }
    }

    /// Sends what flow `f`'s TCP sender put in `self.segments`.
    fn tcp_send(&mut self, f: u32) {
        let m = self.flows[f as usize];
        let segs = std::mem::take(&mut self.segments);
        for seg in &segs {
            let size = self.tcp_mut(f).conn.wire_bytes(seg);
            let kind = if seg.syn {
                PacketKind::TcpSyn
            } else {
                PacketKind::TcpData
            };
            let mut pkt = self.packet(f, kind, size, m.src, m.dst);
            pkt.conn_gen = self.tcp_mut(f).gen;
            pkt.seq = seg.seq;
            pkt.ecn = if seg.ect { Ecn::Ect } else { Ecn::NotEct };
            pkt.tcp_flags = if seg.cwr { tcp_flags::CWR } else { 0 };
            #[cfg(test)]
            self.tcp_log.push((self.now, f, seg.seq));
            if self.window.contains(self.now) {
                let s = &mut self.stats[m.stat as usize];
                s.sent_pkts += 1;
                s.sent_bytes += size as u64;
            }
            self.forward(m.src, pkt);
        }
        self.segments = segs;
        self.segments.clear();
        self.sync_tcp_timers(f);
    }

    /// Sends what flow `f`'s TCP sink put in `self.acks`, back to the sender.
    fn tcp_ack(&mut self, f: u32) {
        let m = self.flows[f as usize];
        let acks = std::mem::take(&mut self.acks);
        for a in &acks {
            let size = self.tcp_mut(f).conn.ack_bytes(a);
            let mut pkt = self.packet(f, PacketKind::TcpAck, size, m.dst, m.src);
            pkt.conn_gen = self.tcp_mut(f).gen;
            pkt.ack = a.ack.unwrap_or(u32::MAX);
            pkt.tcp_flags = if a.ece { tcp_flags::ECE } else { 0 };
            pkt.n_sack = a.n_sack;
            pkt.sack = a.sack;
            self.forward(m.dst, pkt);
        }
        self.acks = acks;
        self.acks.clear();
        self.sync_tcp_timers(f);
    }

    /// Keeps the event queue in step with flow `f`'s two TCP timers.
    fn sync_tcp_timers(&mut self, f: u32) {
        let now = self.now;
        let t = self.tcp[f as usize].as_mut().expect("a TCP flow");
        if let Some((at, generation)) = t.sender_timer.set(t.conn.sender.timer_deadline(), now) {
            self.events.schedule(at, Event::TcpSenderTimer { flow: f, generation });
        }
        if let Some((at, generation)) = t.sink_timer.set(t.conn.sink.timer_deadline(), now) {
            self.events.schedule(at, Event::TcpSinkTimer { flow: f, generation });
        }
    }

    /// The timer a timer event belongs to, with the generation it carries
    /// (None for other events, and for the timers of a closed web
    /// connection, whose events are ignored).
    fn timer_of(&mut self, ev: Event) -> Option<(&mut Timer, u32)> {
        match ev {
            Event::QdiscTimer { link, generation } => Some((&mut self.net.links[link as usize].timer, generation)),
            Event::TcpSenderTimer { flow, generation } => self.tcp[flow as usize]
                .as_mut()
                .map(|t| (&mut t.sender_timer, generation)),
            Event::TcpSinkTimer { flow, generation } => self.tcp[flow as usize]
                .as_mut()
                .map(|t| (&mut t.sink_timer, generation)),
            Event::HttpTimer { client, generation } => Some((&mut self.http[client as usize].timer, generation)),
            Event::WebTimer { session, generation } => Some((&mut self.web[session as usize].timer, generation)),
            _ => None,
        }
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.n_events
    }

    /// The sizes, in packets, of the web objects launched inside the
    /// window so far, over all web groups (for checking their distribution).
    pub fn web_object_sizes(&self) -> Vec<u32> {
        self.web.iter().flat_map(|w| w.object_sizes.iter().copied()).collect()
    }

    fn source_fire(&mut self, f: u32) {
        let source = self.sources[f as usize]
            .as_mut()
            .expect("only UDP flows and paced TCP applications have Source events");
        let (n, next) = source.fire(self.now);
        if self.tcp[f as usize].is_some() {
            self.tcp_app_packets(f, n);
        } else {
            for _ in 0..n {
                let size = self.sources[f as usize].as_mut().expect("a UDP flow").packet_size();
                self.emit(f, size);
            }
        }
        if let Some(t) = next {
            self.events.schedule(t, Event::Source(f));
        }
    }

    /// A paced TCP application (`onoff` with `rate`) hands `n` packets of
    /// one payload each to its sender, as ns-2's `sendmsg`: the send limit
    /// grows by `n` and the sender sends what its window allows. The first
    /// opens the connection (its SYN, with `syn`).
    fn tcp_app_packets(&mut self, f: u32, n: u64) {
        let (now, mut segs) = (self.now, std::mem::take(&mut self.segments));
        let conn = &mut self.tcp_mut(f).conn;
        if !conn.sender.is_started() {
            conn.started_at = now;
            conn.sender.start(now, &mut segs);
        }
        conn.sender.app_data(Some(n), now, &mut segs);
        self.segments = segs;
        self.tcp_send(f);
    }

    fn emit(&mut self, f: u32, size_bytes: u32) {
        let m = self.flows[f as usize];
        let pkt = Packet {
            id: self.next_id,
            flow: f,
            group: m.group,
            class: m.class,
            ecn: Ecn::NotEct,
            size_bytes,
            src: m.src,
            dst: m.dst,
            sent_at: self.now,
            enqueued_at: self.now,
            ted_deadline: m.ted_deadline,
            ted_budget: m.ted_deadline,
            ..Packet::default()
        };
        self.next_id += 1;
        if self.window.contains(self.now) {
            let s = &mut self.stats[f as usize];
            s.sent_pkts += 1;
            s.sent_bytes += size_bytes as u64;
        }
        self.forward(m.src, pkt);
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

    fn deliver(&mut self, pkt: Packet) {
        let now = self.now;
        let inside = self.window.contains(now);
        let f = pkt.flow;
        match pkt.kind {
            PacketKind::Udp => {
                if inside {
                    let s = &mut self.stats[f as usize];
                    s.delivered_pkts += 1;
                    s.delivered_bytes += pkt.size_bytes as u64;
                    s.delay.push(now - pkt.sent_at);
                }
            }
            // A late packet of a connection the flow has closed.
            PacketKind::TcpData | PacketKind::TcpSyn | PacketKind::TcpAck
                if self.tcp[f as usize].as_ref().is_none_or(|t| t.gen != pkt.conn_gen) => {}
            PacketKind::TcpData | PacketKind::TcpSyn => {
                let info = DataInfo {
                    seq: pkt.seq,
                    syn: pkt.kind == PacketKind::TcpSyn,
                    ect: pkt.ecn != Ecn::NotEct,
                    ce: pkt.ecn == Ecn::Ce,
                    cwr: pkt.tcp_flags & tcp_flags::CWR != 0,
                };
                let mut acks = std::mem::take(&mut self.acks);
                let t = self.tcp_mut(f);
                let request = matches!(t.role, Role::WebRequest { .. } | Role::HttpRequest { .. });
                let was_done = t.conn.done_at.is_some();
                let (pkts, bytes) = t.conn.on_data(&info, now, &mut acks);
                t.transfer_bytes += bytes;
                let finished = !was_done && t.conn.done_at.is_some();
                self.acks = acks;
                if inside {
                    // Goodput: payload delivered in order to the application.
                    let s = &mut self.stats[self.flows[f as usize].stat as usize];
                    s.delivered_pkts += pkts;
                    s.delivered_bytes += bytes;
                    if request {
                        s.request_bytes += bytes;
                    }
                    // One-way delay of the packets that delivered data (not
                    // of duplicates, or of out-of-order packets held back).
                    if pkts > 0 {
                        s.delay.push(now - pkt.sent_at);
                    }
                }
                self.tcp_ack(f);
                let role = self.tcp_mut(f).role;
                if matches!(role, Role::HttpRequest { .. } | Role::HttpResponse { .. }) {
                    self.http_delivered(role, pkts);
                }
                if finished {
                    let role = self.tcp_mut(f).role;
                    match role {
                        Role::Flow => self.transfer_done(f),
                        role @ (Role::WebRequest { session, .. } | Role::WebResponse { session, .. })
                            if self.web[session as usize].response == WebResponse::SameConnection =>
                        {
                            self.web_transfer_done(f, role)
                        }
                        _ => {}
                    }
                }
            }
            PacketKind::TcpAck => {
                let info = AckInfo {
                    ack: (pkt.ack != u32::MAX).then_some(pkt.ack),
                    ece: pkt.tcp_flags & tcp_flags::ECE != 0,
                    sack: pkt.sack,
                    n_sack: pkt.n_sack,
                };
                let mut segs = std::mem::take(&mut self.segments);
                let t = self.tcp_mut(f);
                t.conn.sender.on_ack(&info, now, &mut segs);
                if inside {
                    // The RTO as the sender would arm it now; srtt once there
                    // is an estimate (a fixed RTO keeps none).
                    t.rto.push(t.conn.sender.rto());
                    if t.conn.sender.srtt() > Duration::ZERO {
                        t.srtt.push(t.conn.sender.srtt());
                    }
                }
                self.segments = segs;
                self.tcp_send(f);
                // A new-connection web transfer ends at its sender, when all
                // it sent is acknowledged (ns-2's `done`), whatever the sink
                // saw; the ACK that ends it closes it, so this fires once.
                let t = self.tcp_mut(f);
                let (role, done) = (t.role, t.conn.sender.is_done());
                if let Role::WebRequest { session, .. } | Role::WebResponse { session, .. } = role {
                    if done && self.web[session as usize].response == WebResponse::NewConnection {
                        self.web_transfer_done(f, role);
                    }
                }
            }
        }
    }

    fn sample(&mut self) {
        let Some(tr) = self.tracer.as_mut() else {
            return;
        };
        tr.time_s.push(self.now.as_secs_f64());
        let mut i = 0;
        for &l in &tr.links {
            let link = &self.net.links[l as usize];
            let name = &self.sc.net.links[l as usize].name;
            let b = link.qdisc.backlog();
            let mut push = |key: &str, v: f64| {
                if tr.columns.len() <= i {
                    tr.columns.push((format!("{name}.{key}"), Vec::new()));
                }
                tr.columns[i].1.push(v);
                i += 1;
            };
            push("backlog_pkts", b.pkts as f64);
            push("backlog_bytes", b.bytes as f64);
            push("arrivals", link.mon.totals.arrivals as f64);
            push("drops", link.mon.totals.drops as f64);
            link.qdisc.traced(&mut |k, v| push(k, v));
        }
        for (f, name) in &tr.flows {
            let sender = &self.tcp[*f as usize]
                .as_ref()
                .expect("traced flows are TCP flows")
                .conn
                .sender;
            let values = [
                ("cwnd", sender.cwnd()),
                ("ssthresh", sender.ssthresh() as f64),
                ("srtt_s", sender.srtt().as_secs_f64()),
                ("rto_s", sender.rto().as_secs_f64()),
            ];
            for (key, v) in values {
                if tr.columns.len() <= i {
                    tr.columns.push((format!("{name}.{key}"), Vec::new()));
                }
                tr.columns[i].1.push(v);
                i += 1;
            }
        }
        if !self.web.is_empty() {
            if tr.columns.len() <= i {
                tr.columns.push(("web.active_connections".to_string(), Vec::new()));
            }
            tr.columns[i]
                .1
                .push(self.active.iter().map(|a| a.0).sum::<u64>() as f64);
        }
        tr.next_at = self.now + tr.interval;
        if tr.next_at <= self.window.end {
            self.events.schedule(tr.next_at, Event::Sample);
        }
    }

    /// Whole-run counters of every queue, with its backlog now: for the
    /// conservation identity arrivals = departures + drops + backlog.
    pub fn totals(&self) -> Vec<(Totals, u32)> {
        self.net
            .links
            .iter()
            .map(|l| (l.mon.totals, l.qdisc.backlog().pkts))
            .collect()
    }

    fn path_delay(&self, src: u32, dst: u32) -> Option<Duration> {
        let mut d = Duration::ZERO;
        let mut at = src;
        while at != dst {
            let l = self.sc.net.route(at, dst);
            if l == crate::scenario::NO_ROUTE {
                return None;
            }
            d = d + self.net.links[l as usize].delay;
            at = self.net.links[l as usize].to;
        }
        Some(d)
    }

    /// Closes the measurements and assembles the result.
    pub fn finish(mut self, wall_s: f64) -> RunOutput {
        self.now = self.window.end;
        for g in 0..self.active.len() {
            self.active_changed(g, 0);
        }
        let end = self.window.end;
        for l in &mut self.net.links {
            l.mon.finish(end);
        }
        let w = self.window.secs();
        let sc = self.sc;

        let mut queues = Map::new();
        for (l, spec) in self.net.links.iter().zip(&sc.net.links) {
            if spec.report == Report::IfDropped && l.mon.totals.drops == 0 {
                continue;
            }
            let mut q = l.mon.summary(&sc.classes);
            q.insert("qdisc".into(), describe(&l.qdisc, &sc.classes));
            q.insert(
                "link".into(),
                json!({
                    "from": sc.net.nodes[spec.from as usize].name, "to": sc.net.nodes[spec.to as usize].name,
                    "rate_bps": spec.rate_bps, "delay_s": l.delay.as_secs_f64(),
                }),
            );
            let t = l.mon.totals;
            q.insert(
                "run_totals".into(),
                json!({ "arrivals": t.arrivals, "departures": t.departures, "drops": t.drops, "backlog_pkts": l.qdisc.backlog().pkts }),
            );
            queues.insert(spec.name.clone(), Value::Object(q));
        }

        let mut flows = Vec::new();
        let mut traffic = Map::new();
        let mut tcp_goodputs = Vec::new();
        let mut f = 0usize;
        for (gi, group) in sc.groups.iter().enumerate() {
            let (mut sent_pkts, mut sent_bytes, mut deliv_pkts, mut deliv_bytes, mut drops) =
                (0u64, 0u64, 0u64, 0u64, 0u64);
            let mut request_bytes = 0u64;
            let mut delay = DelayStats::default();
            let mut tcp_totals = [0u64; 4];
            let mut transfer_times = Vec::new();
            for j in 0..group.count {
                let m = self.flows[f];
                let s = &self.stats[f];
                let rtt = match (self.path_delay(m.src, m.dst), self.path_delay(m.dst, m.src)) {
                    (Some(a), Some(b)) => (a + b).as_secs_f64(),
                    _ => f64::NAN,
                };
                let mut row = json!({
                    "group": group.name, "id": j,
                    "src": sc.net.nodes[m.src as usize].name, "dst": sc.net.nodes[m.dst as usize].name,
                    "rtt_prop_s": num(rtt),
                    "sent": s.sent_pkts, "delivered": s.delivered_pkts, "drops": s.drops,
                    "goodput_bps": (s.delivered_bytes - s.request_bytes) as f64 * 8.0 / w,
                    "throughput_bps": s.sent_bytes as f64 * 8.0 / w,
                    "loss_rate": num(ratio(s.drops as f64, s.sent_pkts as f64)),
                    "delay_mean_s": num(s.delay.mean()), "delay_std_s": num(s.delay.std()),
                    "delay_min_s": num(s.delay.min()), "delay_max_s": num(s.delay.max()),
                });
                if let Some(t) = self.tcp[f].as_mut() {
                    t.account(true);
                    let t = &*t;
                    let c = &t.conn;
                    let counts = t.counts;
                    for (total, c) in tcp_totals.iter_mut().zip(counts) {
                        *total += c;
                    }
                    for &x in &t.transfer_times {
                        transfer_times.push(x);
                    }
                    let completion = match (&t.repeat, c.done_at) {
                        (None, Some(d)) => num((d - c.started_at).as_secs_f64()),
                        _ => Value::Null,
                    };
                    let extra = json!({
                        "retransmits": counts[0], "timeouts": counts[1], "fast_retransmits": counts[2],
                        "ecn_reductions": counts[3],
                        "delivered_bytes": s.delivered_bytes, "transfer_bytes": t.transfer_bytes,
                        "transfers": t.transfer_times.len(),
                        "completion_s": completion,
                        "rtt_mean_s": num(t.srtt.mean()), "rto_mean_s": num(t.rto.mean()),
                        "cwnd": c.sender.cwnd(), "ssthresh": c.sender.ssthresh(),
                    });
                    row.as_object_mut()
                        .expect("a row is an object")
                        .extend(extra.as_object().expect("an object").clone());
                    // Fairness among the bulk flows that were sending in
                    // the window (not finite transfers).
                    if t.role == Role::Flow && t.repeat.is_none() && c.payload.packets().is_none() && s.sent_pkts > 0 {
                        tcp_goodputs.push(s.delivered_bytes as f64 * 8.0 / w);
                    }
                }
                flows.push(row);
                sent_pkts += s.sent_pkts;
                sent_bytes += s.sent_bytes;
                deliv_pkts += s.delivered_pkts;
                deliv_bytes += s.delivered_bytes;
                request_bytes += s.request_bytes;
                drops += s.drops;
                delay.merge(&s.delay);
                f += 1;
            }
            let mut g = json!({
                "kind": group.source.kind(), "class": sc.classes[group.class as usize], "flows": group.count,
                "sent": sent_pkts, "delivered": deliv_pkts, "drops": drops,
                "goodput_bps": (deliv_bytes - request_bytes) as f64 * 8.0 / w,
                "throughput_bps": sent_bytes as f64 * 8.0 / w,
                "loss_rate": num(ratio(drops as f64, sent_pkts as f64)),
                "delay_mean_s": num(delay.mean()), "delay_std_s": num(delay.std()),
            });
            if group.source.is_tcp() {
                g["retransmits"] = json!(tcp_totals[0]);
                g["timeouts"] = json!(tcp_totals[1]);
                g["fast_retransmits"] = json!(tcp_totals[2]);
                g["ecn_reductions"] = json!(tcp_totals[3]);
                g["transfers"] = times_summary(&mut transfer_times);
            }
            if matches!(group.source, SourceSpec::Http11 { .. } | SourceSpec::Web { .. }) {
                g["request_goodput_bps"] = json!(request_bytes as f64 * 8.0 / w);
            }
            if let SourceSpec::Http11 { .. } = group.source {
                let first = f as u32 - group.count;
                let mut sized: Vec<(u32, f64)> = Vec::new();
                let mut counts = [0u64; 4];
                for h in &self.http {
                    if h.resp >= first && h.resp < f as u32 {
                        sized.extend_from_slice(&h.response_times);
                        // The request connection's counters (the response
                        // connection is the flow's own, counted above).
                        let t = self.tcp[h.req as usize].as_mut().expect("an HTTP/1.1 connection");
                        t.account(true);
                        for (total, x) in counts.iter_mut().zip(t.counts) {
                            *total += x;
                        }
                    }
                }
                for (i, key) in ["retransmits", "timeouts", "fast_retransmits", "ecn_reductions"]
                    .iter()
                    .enumerate()
                {
                    g[*key] = json!(g[*key].as_u64().unwrap_or(0) + counts[i]);
                }
                let mut times: Vec<f64> = sized.iter().map(|&(_, t)| t).collect();
                g["responses"] = times_summary(&mut times);
                g["responses_by_size"] = by_size_summary(&mut sized);
            }
            if let SourceSpec::Web { .. } = group.source {
                // Connections still open add their counters so far.
                let first = f as u32 - group.count;
                let open: Vec<u32> = (0..self.tcp.len() as u32)
                    .filter(|&c| {
                        matches!(self.tcp[c as usize].as_ref().map(|t| t.role),
                        Some(Role::WebRequest { session, .. } | Role::WebResponse { session, .. })
                            if self.web[session as usize].stat >= first && self.web[session as usize].stat < f as u32)
                    })
                    .collect();
                let mut counts = [0u64; 4];
                for c in open {
                    let t = self.tcp[c as usize].as_mut().expect("an open connection");
                    t.account(true);
                    for (total, x) in counts.iter_mut().zip(t.counts) {
                        *total += x;
                    }
                }
                let (mut objects, mut pages) = (Vec::new(), Vec::new());
                for w in self.web.iter().filter(|w| w.stat >= first && w.stat < f as u32) {
                    objects.extend_from_slice(&w.object_times);
                    pages.extend_from_slice(&w.page_times);
                    for (total, x) in counts.iter_mut().zip(w.counts) {
                        *total += x;
                    }
                }
                for (key, x) in ["retransmits", "timeouts", "fast_retransmits", "ecn_reductions"]
                    .iter()
                    .zip(counts)
                {
                    g[*key] = json!(x);
                }
                g["objects"] = times_summary(&mut objects);
                g["pages"] = times_summary(&mut pages);
                g["active_connections_mean"] = num(self.active[gi].2 as f64 / (w * 1e9));
            }
            traffic.insert(group.name.clone(), g);
        }

        let summary = json!({
            "scenario": sc.name,
            "seed": self.seed,
            "engine_version": ENGINE_VERSION,
            "duration_s": sc.duration.as_secs_f64(),
            "warmup_s": sc.warmup.as_secs_f64(),
            "events": self.n_events,
            "wall_s": wall_s,
            "queues": queues,
            "traffic": traffic,
            "flows": flows,
        });
        let mut summary = summary;
        if !tcp_goodputs.is_empty() {
            summary["fairness"] = json!({ "jain": num(jain_index(&tcp_goodputs)), "flows": tcp_goodputs.len() });
        }
        let series = match self.tracer.take() {
            Some(tr) => {
                let mut cols = vec![("time_s".to_string(), tr.time_s)];
                cols.extend(tr.columns);
                cols
            }
            None => Vec::new(),
        };
        RunOutput { summary, series }
    }
}

/// Count, mean, standard deviation and percentiles of transfer times.
fn times_summary(xs: &mut [f64]) -> Value {
    xs.sort_unstable_by(f64::total_cmp);
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let std = (xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / n).sqrt();
    let pct = |p: f64| {
        xs.get(((n * p).ceil() as usize).saturating_sub(1))
            .map_or(Value::Null, |x| num(*x))
    };
    json!({
        "count": xs.len(), "mean_s": num(mean), "std_s": num(std),
        "p50_s": pct(0.5), "p95_s": pct(0.95), "p99_s": pct(0.99),
    })
}

/// Response times grouped by response size: one row per size (packets)
/// that occurred, smallest first, with the count, mean and standard
/// deviation (over n, as [`times_summary`]) of its times, so that a reader
/// can pool any range of sizes exactly (e.g. the small files only).
fn by_size_summary(xs: &mut [(u32, f64)]) -> Value {
    xs.sort_unstable_by(|a, b| a.0.cmp(&b.0).then(a.1.total_cmp(&b.1)));
    let rows: Vec<Value> = xs
        .chunk_by(|a, b| a.0 == b.0)
        .map(|g| {
            let n = g.len() as f64;
            let mean = g.iter().map(|x| x.1).sum::<f64>() / n;
            let std = (g.iter().map(|x| (x.1 - mean) * (x.1 - mean)).sum::<f64>() / n).sqrt();
            json!({ "pkts": g[0].0, "count": g.len(), "mean_s": num(mean), "std_s": num(std) })
        })
        .collect();
    Value::Array(rows)
}

/// Runs `sc` with `seed`.
pub fn run(sc: &Scenario, seed: u64) -> RunOutput {
    Sim::new(sc, seed).run()
}

/// The TED paper's "TDTO" for a flow from `src` to `dst` of group `g`: the
/// largest round-trip time the TED deadlines on its path allow, i.e. the
/// propagation and transmission delays both ways (a data packet of the
/// largest payload one way, an ACK back) plus the TED queueing the flow may
/// meet each way: its deadline at every `lbd` queue, and once the budget an
/// `ebd` packet gets at the first TED queue that gives it one. (With
/// `check = "arrival"` a packet may wait up to one packet time more than
/// its deadline at a queue; that is not added.)
fn ted_rto(sc: &Scenario, links: &[Link], g: usize, src: u32, dst: u32) -> Duration {
    use crate::net::qdisc::QdiscSpec;
    use aqmlab_qdisc::TedMode;
    let group = &sc.groups[g];
    let SourceSpec::Ftp { payload, tcp, .. } = &group.source else {
        unreachable!("only TCP groups have an RTO")
    };
    let largest = match payload {
        crate::config::dist::Dist::Constant(b) | crate::config::dist::Dist::Uniform { max: b, .. } => *b,
        other => other.mean().unwrap_or(1460.0),
    } as u32;
    let class = &sc.classes[group.class as usize];
    let mut total = Duration::ZERO;
    for (from, to, size) in [(src, dst, largest + tcp.header_bytes), (dst, src, tcp.header_bytes)] {
        // An ebd packet's budget is set once, by the first TED queue on its
        // way, and spent over the whole path; an lbd deadline holds at each.
        let mut budget = None;
        for l in sc.net.path(from, to) {
            let link = &sc.net.links[l as usize];
            // The delay as this run drew it (access delays may be drawn).
            total = total + aqmlab_qdisc::time::transmission_time(size, link.rate_bps) + links[l as usize].delay;
            if let QdiscSpec::Ted(t) = &link.qdisc {
                let d = group
                    .ted_deadline
                    .or_else(|| t.deadlines.iter().find(|(c, _)| c == class).map(|(_, d)| *d))
                    .or(t.default_deadline);
                // A queue with no deadline for the flow bounds nothing and,
                // in ebd, leaves the budget to a later queue.
                match (t.mode, d) {
                    (TedMode::Lbd, Some(d)) => total = total + d,
                    (TedMode::Ebd, Some(d)) => budget = budget.or(Some(d)),
                    (_, None) => {}
                }
            }
        }
        total = total + budget.unwrap_or(Duration::ZERO);
    }
    total
}

#[cfg(test)]
mod test {
    use super::*;
    use serde_json::json;

    /// Two nodes joined by a 10 Mb/s, 10 ms duplex link with drop-tail
    /// queues, and one paced ON/OFF TCP flow from `a` to `b` starting at 0:
    /// 1000 B payloads at 800 kb/s (10 ms apart), bursts of 50 ms (5
    /// packets) and OFF periods of `off`, both constant.
    fn paced(tcp: serde_json::Value, off: &str, duration: &str) -> Scenario {
        let v = json!({
            "duration": duration,
            "topology": {
                "kind": "graph",
                "nodes": ["a", "b"],
                "links": [{ "from": "a", "to": "b", "rate": "10Mbps", "delay": "10ms",
                            "qdisc": { "kind": "droptail", "limit": "1000pkt" } }],
            },
            "traffic": [{ "name": "app", "kind": "onoff", "transport": "tcp", "rate": "800kbps",
                          "on": "50ms", "off": off, "packet_size": "1000B", "src": "a", "dst": "b",
                          "start": "0s", "tcp": tcp }],
        });
        Scenario::from_value(&v).unwrap_or_else(|e| panic!("{e:?}"))
    }

    /// The (time in ns, sequence number) of every packet flow 0 sent.
    fn sent(sc: &Scenario) -> Vec<(u64, u32)> {
        let mut sim = Sim::new(sc, 1);
        sim.run_to_end();
        sim.tcp_log.iter().map(|&(t, _, seq)| (t.0, seq)).collect()
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn test_paced_onoff_sends_on_the_application_schedule_when_the_window_allows() {
        // No SYN, an initial window of 10 and no restart after idle periods:
        // the window never holds a packet back, so packet k leaves when the
        // application makes it. The application starts with an OFF period:
        // bursts at 1010..1050 ms, then each burst's first packet an
        // interval plus 1 s after the previous burst's last one.
        let sc = paced(
            json!({ "variant": "reno", "syn": false, "initial_window": 10, "slow_start_restart": false }),
            "1s",
            "3.5s",
        );
        let expected: Vec<(u64, u32)> = [
            1010, 1020, 1030, 1040, 1050, 2060, 2070, 2080, 2090, 2100, 3110, 3120, 3130, 3140, 3150,
        ]
        .iter()
        .enumerate()
        .map(|(k, &ms)| (ms * MS, k as u32))
        .collect();
        assert_eq!(sent(&sc), expected);
    }

    #[test]
    fn test_paced_onoff_buffers_what_the_window_holds_back() {
        // ns-2.35's defaults (SYN, initial window 2, restart after an idle
        // RTO), as ns-2.35 sends it (Application/Traffic/Pareto with shape
        // 1e9 on Agent/TCP/Reno over the same link). The SYN leaves with the
        // first packet made (1010 ms); its ACK is back one round trip later,
        // 2 x (10 ms + 32 us for 40 B) = 20.064 ms. By then packets 1..3 are
        // waiting; the window of 2 sends 1 and 2. A data packet's round trip
        // is 20 ms + 832 us + 32 us = 20.864 ms: ACK 1 at 1050.928 ms
        // (window 3) sends 3 and 4, ACK 2 at 1051.760 ms sends 5 (made at
        // 1050 ms). The next burst is made from 2060 ms = 1050 + 10 + 1000
        // ms, counted from when packet 5 was made, not sent. The idle RTO
        // has put the window back to 1: 6 leaves at once, 7 and 8 on its
        // ACK, 9 and 10 on 7's.
        let sc = paced(json!({ "variant": "reno" }), "1s", "3.5s");
        let us = |x: u64| x * 1000;
        let expected = vec![
            (us(1_010_000), 0),
            (us(1_030_064), 1),
            (us(1_030_064), 2),
            (us(1_050_928), 3),
            (us(1_050_928), 4),
            (us(1_051_760), 5),
            (us(2_060_000), 6),
            (us(2_080_864), 7),
            (us(2_080_864), 8),
            (us(2_101_728), 9),
            (us(2_101_728), 10),
            (us(3_110_000), 11),
            (us(3_130_864), 12),
            (us(3_130_864), 13),
            (us(3_151_728), 14),
            (us(3_151_728), 15),
        ];
        assert_eq!(sent(&sc), expected);
    }

    #[test]
    fn test_paced_onoff_backlog_outlasts_the_on_period_and_the_schedule_goes_on() {
        // A window of 1 packet: one packet per round trip (20.864 ms after
        // the SYN's 20.064 ms), while the application makes 5 packets every
        // 60 ms (OFF 10 ms), 12 ms apart on average. The sender falls ever
        // further behind and sends through every OFF period, one packet per
        // round trip, as ns-2.35 does: SYN at 20 ms (the first packet made),
        // then data packet k at 40.064 + 20.864 (k - 1) ms. By 290 ms the
        // application has made 24 packets (bursts from 20, 80, 140, 200 and
        // 260 ms); 13 have left.
        let sc = paced(
            json!({ "variant": "reno", "rwnd": "1pkt", "initial_window": 1 }),
            "10ms",
            "300ms",
        );
        let mut expected = vec![(20 * MS, 0)];
        expected.extend((1..=13u32).map(|k| (40_064_000 + 20_864_000 * (k as u64 - 1), k)));
        assert_eq!(sent(&sc), expected);
    }
}
