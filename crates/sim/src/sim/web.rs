//! Web sessions and HTTP/1.1 clients: the connections they open and close,
//! and what their applications asked for carried out.

use super::*;

/// A persistent HTTP/1.1 client and its two long-lived connections.
pub(super) struct HttpSlot {
    pub(super) client: Http11Client,
    /// Connection slots: requests (client to server), responses back.
    pub(super) req: u32,
    pub(super) resp: u32,
    /// Packets asked of and delivered by each connection so far.
    pub(super) req_target: u64,
    pub(super) req_delivered: u64,
    pub(super) resp_target: u64,
    pub(super) resp_delivered: u64,
    /// The request under way: its response's packets and when it was asked.
    pub(super) pending: Option<(u32, Time)>,
    pub(super) timer: Timer,
    /// Response times (request to the last response byte) in the window,
    /// with each response's size in packets.
    pub(super) response_times: Vec<(u32, f64)>,
}

/// A web session of a `web` group and what is measured about it.
pub(super) struct WebSlot {
    pub(super) session: WebSession,
    /// Its row in `stats` (a flow index of the group).
    pub(super) stat: u32,
    pub(super) servers: Vec<u32>,
    pub(super) clients: Vec<u32>,
    pub(super) payload_bytes: u32,
    pub(super) cfg: crate::transport::tcp::TcpConfig,
    /// How its objects' requests and responses travel, and so which end
    /// finishes a web connection: the sender once all is acknowledged
    /// (`new-connection`), or the sink once all is delivered.
    pub(super) response: WebResponse,
    pub(super) timer: Timer,
    /// Objects in flight: (object, launch time, size in packets).
    pub(super) in_flight: Vec<(u64, Time, u32)>,
    /// Object and page times that ended inside the window (s).
    pub(super) object_times: Vec<f64>,
    pub(super) page_times: Vec<f64>,
    /// TCP counters of its closed connections inside the window.
    pub(super) counts: [u64; 4],
    /// Sizes (packets) of the objects launched inside the window.
    pub(super) object_sizes: Vec<u32>,
}

impl<'s> Sim<'s> {
    /// Carries out what HTTP/1.1 client `c` asked for: a request goes out on
    /// its request connection; then its timer is kept in step.
    pub(super) fn http_act(&mut self, c: u32) {
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
    pub(super) fn http_delivered(&mut self, role: Role, pkts: u64) {
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
    pub(super) fn web_act(&mut self, w: u32) {
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
    pub(super) fn open_web_conn(&mut self, w: u32, role: Role, src: u32, dst: u32, bytes: u64, syn: bool) {
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
                self.ends.push(End::free());
                (self.flows.len() - 1) as u32
            }
        };
        let End::Free {
            sender_timer,
            sink_timer,
            gen,
        } = self.ends[f as usize]
        else {
            unreachable!("a free slot")
        };
        let mut flow = TcpFlow::persistent(conn, role, cfg);
        (flow.gen, flow.sender_timer, flow.sink_timer) = (gen + 1, sender_timer, sink_timer);
        self.ends[f as usize] = End::Tcp(flow);
        let group = self.flows[stat as usize].group as usize;
        self.active_changed(group, 1);
        let (now, mut segs) = (self.now, std::mem::take(&mut self.segments));
        self.tcp_mut(f).conn.start(now, &mut segs);
        self.segments = segs;
        self.tcp_send(f);
    }

    /// Closes web connection `f`: its counters go to its session and its
    /// slot (with its timers' generations) to the free list.
    pub(super) fn close_web_conn(&mut self, f: u32, w: u32) {
        let inside = self.window.contains(self.now);
        // Worked on in place (the flow is large) and then dropped, its
        // buffers kept for the next connection.
        let t = self.ends[f as usize].tcp_mut().expect("an open web connection");
        t.account(inside);
        t.sender_timer.reset();
        t.sink_timer.reset();
        for (total, c) in self.web[w as usize].counts.iter_mut().zip(t.counts) {
            *total += c;
        }
        let free = End::Free {
            sender_timer: t.sender_timer,
            sink_timer: t.sink_timer,
            gen: t.gen,
        };
        self.spare.push(t.conn.take_spare());
        self.ends[f as usize] = free;
        self.free_slots.push(f);
        let group = self.flows[self.web[w as usize].stat as usize].group as usize;
        self.active_changed(group, -1);
    }

    /// The number of open web connections changes by `delta`.
    pub(super) fn active_changed(&mut self, group: usize, delta: i64) {
        let dt = self.window.overlap_ns(self.active[group].1, self.now) as u128;
        let (n, since, area) = &mut self.active[group];
        *area += *n as u128 * dt;
        *since = self.now;
        *n = (*n as i64 + delta) as u64;
    }

    /// A web connection is finished (see `WebSlot::response` for which end
    /// says so): a request opens the response; a response completes its
    /// object.
    pub(super) fn web_transfer_done(&mut self, f: u32, role: Role) {
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

    /// The sizes, in packets, of the web objects launched inside the
    /// window so far, over all web groups (for checking their distribution).
    pub fn web_object_sizes(&self) -> Vec<u32> {
        self.web.iter().flat_map(|w| w.object_sizes.iter().copied()).collect()
    }
}
