//! The flows' ends: UDP sources and TCP connections (ns-2's agents) sending
//! into the network, packets delivered to them, and what the bulk
//! applications (`crate::app::bulk`) ask of their connections carried out.
//!
//! A flow's end is one type, [`End`], an enum matched where packets and
//! timers arrive: one arm per transport family, so the hot path dispatches
//! with a `match` and nothing is boxed. There is no `Transport` trait: with
//! one TCP there would be one implementation, and the UDP sources share
//! nothing with TCP but being matched here. A second TCP family (its own
//! folder beside `crate::transport::tcp`) becomes one more variant, a
//! [`TcpFlow`] of its own connection type; the applications reach a
//! connection only through [`Sim::bulk_act`] (start, data, pause, close,
//! reopen) and the web and HTTP/1.1 code, so those and `deliver` are where
//! its arms go. If the two TCPs then share most calls, a trait over their
//! connections may read better than the arms; that is the time to decide.

use super::*;

/// What a flow's slot holds. Unboxed although `Tcp` is much the largest:
/// most slots hold one, and a box would cost an allocation per web
/// connection and a pointer to follow per packet.
#[allow(clippy::large_enum_variant)]
pub(super) enum End {
    /// No connection: a web group's session row, or a closed web
    /// connection's slot (free for reuse), keeping its last connection's
    /// timers and generation, which a new connection there continues so
    /// that the old one's queued events are stale.
    Free {
        sender_timer: Timer,
        sink_timer: Timer,
        gen: u32,
    },
    /// An open-loop UDP source.
    Udp(UdpSource),
    /// A TCP connection (ns-2's agents) and what drives it.
    Tcp(TcpFlow),
}

impl End {
    pub(super) fn free() -> End {
        End::Free {
            sender_timer: Timer::default(),
            sink_timer: Timer::default(),
            gen: 0,
        }
    }

    #[inline]
    pub(super) fn tcp(&self) -> Option<&TcpFlow> {
        match self {
            End::Tcp(t) => Some(t),
            _ => None,
        }
    }

    #[inline]
    pub(super) fn tcp_mut(&mut self) -> Option<&mut TcpFlow> {
        match self {
            End::Tcp(t) => Some(t),
            _ => None,
        }
    }
}

/// A TCP flow's connection, the engine's timers for its two agents, and
/// its bulk application if it has one.
pub(super) struct TcpFlow {
    pub(super) conn: TcpConn,
    pub(super) role: Role,
    /// Which of the flow's connections `conn` is; packets carry it.
    pub(super) gen: u32,
    pub(super) sender_timer: Timer,
    pub(super) sink_timer: Timer,
    /// The application of a group's own flow (`Role::Flow`) and its timer.
    pub(super) app: Option<Bulk>,
    pub(super) app_timer: Timer,
    /// To open further connections (`file`).
    pub(super) cfg: crate::transport::tcp::TcpConfig,
    pub(super) boot: Duration,
    pub(super) payload: crate::config::dist::Dist,
    pub(super) payload_seed: u64,
    /// Retransmits, timeouts, fast retransmits and ECN reductions inside
    /// the window, over all the flow's connections, and the current
    /// connection's counters when they were last added in.
    pub(super) counts: [u64; 4],
    pub(super) last_seen: crate::transport::tcp::TcpSenderStats,
    /// srtt and RTO after each ACK inside the window (s).
    pub(super) srtt: DelayStats,
    pub(super) rto: DelayStats,
    /// Completion times of the transfers that ended inside the window.
    pub(super) transfer_times: Vec<f64>,
    /// Payload delivered in order over the run, all connections.
    pub(super) transfer_bytes: u64,
}

impl TcpFlow {
    /// A connection that the engine feeds with data as its application
    /// asks (HTTP/1.1 and web), with fresh timers and no counts yet.
    pub(super) fn persistent(conn: TcpConn, role: Role, cfg: crate::transport::tcp::TcpConfig) -> TcpFlow {
        TcpFlow {
            conn,
            role,
            gen: 0,
            sender_timer: Timer::default(),
            sink_timer: Timer::default(),
            app: None,
            app_timer: Timer::default(),
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
    pub(super) fn account(&mut self, inside: bool) {
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

    /// Whether the flow makes one transfer after another (`file`).
    pub(super) fn repeats(&self) -> bool {
        self.app.as_ref().is_some_and(Bulk::repeats)
    }
}

/// What a TCP connection carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
    /// A group's own flow (`ftp`, `file`, `onoff`), driven by its [`Bulk`]
    /// application.
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

impl<'s> Sim<'s> {
    /// Flow `f`'s bulk application's timer is due.
    pub(super) fn bulk_timer(&mut self, f: u32) {
        let (now, mut actions) = (self.now, std::mem::take(&mut self.bulk_actions));
        self.tcp_mut(f)
            .app
            .as_mut()
            .expect("a bulk flow")
            .timer(now, &mut actions);
        self.bulk_actions = actions;
        self.bulk_act(f);
    }

    /// Carries out what flow `f`'s bulk application asked for in
    /// `self.bulk_actions` on its connection, then keeps the application's
    /// timer in step.
    pub(super) fn bulk_act(&mut self, f: u32) {
        let (now, inside) = (self.now, self.window.contains(self.now));
        let mut actions = std::mem::take(&mut self.bulk_actions);
        for a in actions.drain(..) {
            let mut segs = std::mem::take(&mut self.segments);
            let t = self.tcp_mut(f);
            match a {
                BulkAction::Start => t.conn.start(now, &mut segs),
                BulkAction::Pause => t.conn.sender.app_pause(),
                BulkAction::Resume => t.conn.sender.app_data(None, now, &mut segs),
                BulkAction::Send { pkts } => {
                    // The connection opens (its SYN, with `syn`) with the
                    // first packets, as ns-2's agent sends nothing before.
                    if !t.conn.sender.is_started() {
                        t.conn.started_at = now;
                        t.conn.sender.start(now, &mut segs);
                    }
                    t.conn.sender.app_data(Some(pkts), now, &mut segs);
                }
                BulkAction::Close => {
                    t.account(inside);
                    // The connection is closed: its late packets are
                    // ignored from now, and its timers with them (not
                    // re-synced: see the timer events in `mod.rs`).
                    t.gen += 1;
                    t.sender_timer.reset();
                    t.sink_timer.reset();
                    self.segments = segs;
                    continue;
                }
                BulkAction::Open { size_bytes } => {
                    // The next connection, with the payload stream of its
                    // generation.
                    let data = Payload::new(
                        t.payload.clone(),
                        rng::stream_seed(t.payload_seed, &t.gen.to_string()),
                        Some(size_bytes),
                    );
                    t.conn = TcpConn::new(&t.cfg, data, t.boot).expect("a validated TCP configuration");
                    t.last_seen = Default::default();
                    t.conn.start(now, &mut segs);
                }
            }
            self.segments = segs;
            self.tcp_send(f);
        }
        self.bulk_actions = actions;
        let t = self.tcp_mut(f);
        if let Some((at, generation)) = t.app_timer.set(t.app.as_ref().and_then(Bulk::next_timer), now) {
            self.events.schedule(at, Event::BulkTimer { flow: f, generation });
        }
    }

    /// A group's own flow delivered its transfer: its time is recorded and
    /// its application told (a `file` flow closes the connection and opens
    /// the next one after a gap).
    pub(super) fn transfer_done(&mut self, f: u32) {
        let (now, inside) = (self.now, self.window.contains(self.now));
        let mut actions = std::mem::take(&mut self.bulk_actions);
        let t = self.tcp_mut(f);
        if inside {
            t.transfer_times.push((now - t.conn.started_at).as_secs_f64());
        }
        t.app.as_mut().expect("a bulk flow").transfer_done(now, &mut actions);
        self.bulk_actions = actions;
        self.bulk_act(f);
    }

    #[inline]
    pub(super) fn tcp_mut(&mut self, f: u32) -> &mut TcpFlow {
        self.ends[f as usize].tcp_mut().expect("a TCP flow")
    }

    /// A packet of flow `f` from `from` to `to`, stamped now.
    pub(super) fn packet(&mut self, f: u32, kind: PacketKind, size_bytes: u32, from: u32, to: u32) -> Packet {
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
    pub(super) fn tcp_send(&mut self, f: u32) {
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
            pkt.ecn = match (seg.ect, seg.ect1) {
                (false, _) => Ecn::NotEct,
                (true, false) => Ecn::Ect0,
                (true, true) => Ecn::Ect1,
            };
            pkt.tcp_flags = if seg.cwr { tcp_flags::CWR } else { 0 };
            pkt.tsecr_ms = seg.tsecr_ms;
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
    pub(super) fn tcp_ack(&mut self, f: u32) {
        let m = self.flows[f as usize];
        let acks = std::mem::take(&mut self.acks);
        for a in &acks {
            let size = self.tcp_mut(f).conn.ack_bytes(a);
            let mut pkt = self.packet(f, PacketKind::TcpAck, size, m.dst, m.src);
            pkt.conn_gen = self.tcp_mut(f).gen;
            pkt.ack = a.ack.unwrap_or(u32::MAX);
            // An ACK's sequence number field carries the CE count.
            pkt.seq = a.ce_count;
            pkt.tcp_flags = if a.ece { tcp_flags::ECE } else { 0 };
            pkt.n_sack = a.n_sack;
            pkt.sack = a.sack;
            pkt.wnd_bytes = a.wnd_bytes.unwrap_or(u32::MAX);
            pkt.tsecr_ms = a.tsecr_ms;
            self.forward(m.dst, pkt);
        }
        self.acks = acks;
        self.acks.clear();
        self.sync_tcp_timers(f);
    }

    /// Keeps the event queue in step with flow `f`'s two TCP timers.
    pub(super) fn sync_tcp_timers(&mut self, f: u32) {
        let now = self.now;
        let t = self.ends[f as usize].tcp_mut().expect("a TCP flow");
        if let Some((at, generation)) = t.sender_timer.set(t.conn.sender.timer_deadline(), now) {
            self.events.schedule(at, Event::TcpSenderTimer { flow: f, generation });
        }
        if let Some((at, generation)) = t.sink_timer.set(t.conn.sink.timer_deadline(), now) {
            self.events.schedule(at, Event::TcpSinkTimer { flow: f, generation });
        }
    }

    /// UDP flow `f`'s source is due: its packets go out and its next
    /// time is queued.
    pub(super) fn source_fire(&mut self, f: u32) {
        let now = self.now;
        let (n, next) = self.udp_mut(f).fire(now);
        for _ in 0..n {
            let size = self.udp_mut(f).packet_size();
            self.emit(f, size);
        }
        if let Some(t) = next {
            self.events.schedule(t, Event::Source(f));
        }
    }

    #[inline]
    fn udp_mut(&mut self, f: u32) -> &mut UdpSource {
        match &mut self.ends[f as usize] {
            End::Udp(source) => source,
            _ => unreachable!("only UDP flows have Source events"),
        }
    }

    pub(super) fn emit(&mut self, f: u32, size_bytes: u32) {
        let m = self.flows[f as usize];
        let pkt = Packet {
            id: self.next_id,
            flow: f,
            group: m.group,
            class: m.class,
            ecn: m.udp_ecn,
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

    pub(super) fn deliver(&mut self, pkt: Packet) {
        let now = self.now;
        let inside = self.window.contains(now);
        let f = pkt.flow;
        match pkt.kind {
            PacketKind::Udp => {
                if let Some(tr) = self.tracer.as_mut() {
                    tr.delivered(self.flows[f as usize].group, now - pkt.sent_at);
                }
                if inside {
                    let s = &mut self.stats[f as usize];
                    s.delivered_pkts += 1;
                    s.delivered_bytes += pkt.size_bytes as u64;
                    s.delay.push(now - pkt.sent_at);
                    let g = self.flows[f as usize].group as usize;
                    self.delays[g].push(now - pkt.sent_at);
                    self.queueing[g].push(pkt.queued);
                }
            }
            // A late packet of a connection the flow has closed.
            PacketKind::TcpData | PacketKind::TcpSyn | PacketKind::TcpAck
                if self.ends[f as usize].tcp().is_none_or(|t| t.gen != pkt.conn_gen) => {}
            PacketKind::TcpData | PacketKind::TcpSyn => {
                let info = DataInfo {
                    seq: pkt.seq,
                    syn: pkt.kind == PacketKind::TcpSyn,
                    ect: pkt.ecn.is_ecn_capable(),
                    ce: pkt.ecn == Ecn::Ce,
                    cwr: pkt.tcp_flags & tcp_flags::CWR != 0,
                    tsecr_ms: pkt.tsecr_ms,
                    tsval_ms: crate::transport::linux::rcvwnd::ts_clock_ms(pkt.sent_at),
                };
                let mut acks = std::mem::take(&mut self.acks);
                let t = self.tcp_mut(f);
                let request = matches!(t.role, Role::WebRequest { .. } | Role::HttpRequest { .. });
                let was_done = t.conn.done_at.is_some();
                let (pkts, bytes) = t.conn.on_data(&info, now, &mut acks);
                t.transfer_bytes += bytes;
                let finished = !was_done && t.conn.done_at.is_some();
                self.acks = acks;
                if pkts > 0 {
                    if let Some(tr) = self.tracer.as_mut() {
                        tr.delivered(self.flows[f as usize].group, now - pkt.sent_at);
                    }
                }
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
                        let g = self.flows[f as usize].group as usize;
                        self.delays[g].push(now - pkt.sent_at);
                        self.queueing[g].push(pkt.queued);
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
                    ce_count: pkt.seq,
                    wnd_bytes: (pkt.wnd_bytes != u32::MAX).then_some(pkt.wnd_bytes),
                    // The receiver's clock when it sent the ACK (TSval).
                    tsval_ms: crate::transport::linux::rcvwnd::ts_clock_ms(pkt.sent_at),
                    tsecr_ms: pkt.tsecr_ms,
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
}
