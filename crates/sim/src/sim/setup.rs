//! Building a run: its links from the scenario's, and each traffic group's
//! flows with their sources, connections and applications.

use super::*;

/// The TED paper's "TDTO" for a flow from `src` to `dst` of group `g`: the
/// largest round-trip time the TED deadlines on its path allow, i.e. the
/// propagation and transmission delays both ways (a data packet of the
/// largest payload one way, an ACK back) plus the TED queueing the flow may
/// meet each way: its deadline at every `lbd` queue, and once the budget an
/// `ebd` packet gets at the first TED queue that gives it one. (With
/// `check = "arrival"` a packet may wait up to one packet time more than
/// its deadline at a queue; that is not added.)
pub(super) fn ted_rto(sc: &Scenario, links: &[Link], g: usize, src: u32, dst: u32) -> Duration {
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

impl<'s> Sim<'s> {
    pub fn new(sc: &'s Scenario, seed: u64) -> Sim<'s> {
        let window = Window {
            start: Time(sc.warmup.0),
            end: Time(sc.duration.0),
        };
        let mut sim = Sim {
            sc,
            seed,
            now: Time::ZERO,
            window,
            events: EventQueue::new(sc.net.links.len()),
            net: Network::build(&sc.net, &sc.classes, seed, window),
            flows: Vec::new(),
            ends: Vec::new(),
            bulk_actions: Vec::new(),
            web: Vec::new(),
            free_slots: Vec::new(),
            spare: Vec::new(),
            web_actions: Vec::new(),
            http: Vec::new(),
            http_actions: Vec::new(),
            active: vec![(0, Time::ZERO, 0); sc.groups.len()],
            segments: Vec::new(),
            acks: Vec::new(),
            stats: Vec::new(),
            delays: vec![DelayHistogram::default(); sc.groups.len()],
            queueing: vec![DelayHistogram::default(); sc.groups.len()],
            next_id: 0,
            n_events: 0,
            #[cfg(test)]
            tcp_log: Vec::new(),
            tracer: sc.trace.as_ref().map(|t| Tracer {
                interval: t.interval,
                next_at: Time::ZERO,
                links: t.links.clone(),
                flows: t.flows.clone(),
                groups: {
                    let mut g = vec![None; sc.groups.len()];
                    for (i, name) in &t.groups {
                        g[*i as usize] = Some((format!("traffic.{name}"), 0, 0, 0));
                    }
                    g
                },
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
                    udp_ecn: group.ecn,
                    group: g as u16,
                    class: group.class,
                    src,
                    dst,
                });
                sim.stats.push(FlowStats::default());
                let name = group.flow_name(j);
                let start = group.start_of(seed, j);
                let end = match &group.source {
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
                        let app = match (on_off, repeat) {
                            // A rate-limited ON/OFF application hands packets
                            // to TCP on the schedule of a UDP ON/OFF source.
                            (Some(TcpOnOff { rate_bps: Some(_), .. }), _) => {
                                let schedule = group.source.schedule().expect("a paced application's schedule");
                                Bulk::paced(UdpSource::seeded(seed, &name, &schedule, stop), start)
                            }
                            (Some(o), _) => Bulk::on_off(
                                o.on.clone(),
                                o.off.clone(),
                                rng::stream(seed, &format!("{name}.onoff")),
                                start,
                            ),
                            (None, Some((size, gap))) => Bulk::file(
                                size.clone(),
                                gap.clone(),
                                rng::stream(seed, &format!("{name}.repeat")),
                                start,
                            ),
                            (None, None) => Bulk::ftp(*size_bytes, start),
                        };
                        // The first connection, with the first transfer's data.
                        let payload_seed = rng::stream_seed(seed, &format!("{name}.payload"));
                        let data = Payload::new(payload.clone(), rng::stream_seed(payload_seed, "0"), app.size_bytes());
                        let conn = TcpConn::new(&cfg, data, boot).expect("a validated TCP configuration");
                        let mut app_timer = Timer::default();
                        if let Some((at, generation)) = app_timer.set(app.next_timer(), Time::ZERO) {
                            sim.events.schedule(at, Event::BulkTimer { flow: f, generation });
                        }
                        End::Tcp(TcpFlow {
                            app: Some(app),
                            app_timer,
                            payload: payload.clone(),
                            payload_seed,
                            boot,
                            ..TcpFlow::persistent(conn, Role::Flow, cfg)
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
                        End::free()
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
                        sim.events.schedule(start, Event::WebStart(sim.web.len() as u32 - 1));
                        End::free()
                    }
                    udp => {
                        let schedule = udp.schedule().expect("a UDP group's schedule");
                        let mut source = UdpSource::seeded(seed, &name, &schedule, stop);
                        if let Some(t) = source.first(start) {
                            sim.events.schedule(t, Event::Source(f));
                        }
                        End::Udp(source)
                    }
                };
                sim.ends.push(end);
            }
        }
        if sim.tracer.is_some() {
            sim.events.schedule(Time::ZERO, Event::Sample);
        }
        if window.start > Time::ZERO {
            sim.events.schedule(window.start, Event::Warmup);
        }
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
            sim.ends[f as usize] = End::Tcp(TcpFlow::persistent(conn(false), Role::HttpResponse { client: c }, cfg));
            sim.flows.push(FlowMeta {
                src: m.dst,
                dst: m.src,
                ..m
            });
            sim.ends.push(End::Tcp(TcpFlow::persistent(
                conn(true),
                Role::HttpRequest { client: c },
                cfg,
            )));
            sim.http[c as usize].req = sim.flows.len() as u32 - 1;
            sim.http[c as usize].resp = f;
            sim.events.schedule(start, Event::HttpStart(c));
        }
        sim
    }
}
