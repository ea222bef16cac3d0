//! The flows' ends: UDP sources and TCP connections (ns-2's agents) sending
//! into the network, packets delivered to them, and the bulk, file and
//! ON/OFF applications that feed TCP.

use super::*;

/// A TCP flow's connection and the engine's timers for its two agents.
pub(super) struct TcpFlow {
    pub(super) conn: TcpConn,
    pub(super) role: Role,
    /// Which of the flow's connections `conn` is; packets carry it.
    pub(super) gen: u32,
    pub(super) sender_timer: Timer,
    pub(super) sink_timer: Timer,
    pub(super) on_off: Option<OnOff>,
    pub(super) repeat: Option<Repeat>,
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
}

/// What a TCP connection carries.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Role {
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

/// Repeated transfers of a `file` group.
pub(super) struct Repeat {
    pub(super) size: crate::config::dist::Dist,
    pub(super) gap: crate::config::dist::Dist,
    pub(super) rng: aqmlab_qdisc::rng::Rng,
}

/// An ON/OFF application over TCP: unlimited data while ON, none while OFF.
pub(super) struct OnOff {
    pub(super) on: crate::config::dist::Dist,
    pub(super) off: crate::config::dist::Dist,
    pub(super) rng: aqmlab_qdisc::rng::Rng,
    pub(super) is_on: bool,
}

impl<'s> Sim<'s> {
    /// An ON/OFF application's period ends: OFF pauses the sender, ON gives
    /// it unlimited data again; the next switch is drawn.
    pub(super) fn on_off_switch(&mut self, f: u32) {
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

    /// A `file` flow's next transfer: a new connection (the next
    /// generation) with a freshly drawn size.
    pub(super) fn open_next_transfer(&mut self, f: u32) {
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
    pub(super) fn transfer_done(&mut self, f: u32) {
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

    pub(super) fn tcp_mut(&mut self, f: u32) -> &mut TcpFlow {
        self.tcp[f as usize].as_mut().expect("a TCP flow")
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
    pub(super) fn tcp_ack(&mut self, f: u32) {
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
    pub(super) fn sync_tcp_timers(&mut self, f: u32) {
        let now = self.now;
        let t = self.tcp[f as usize].as_mut().expect("a TCP flow");
        if let Some((at, generation)) = t.sender_timer.set(t.conn.sender.timer_deadline(), now) {
            self.events.schedule(at, Event::TcpSenderTimer { flow: f, generation });
        }
        if let Some((at, generation)) = t.sink_timer.set(t.conn.sink.timer_deadline(), now) {
            self.events.schedule(at, Event::TcpSinkTimer { flow: f, generation });
        }
    }

    pub(super) fn source_fire(&mut self, f: u32) {
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
    pub(super) fn tcp_app_packets(&mut self, f: u32, n: u64) {
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

    pub(super) fn emit(&mut self, f: u32, size_bytes: u32) {
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

    pub(super) fn deliver(&mut self, pkt: Packet) {
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
}
