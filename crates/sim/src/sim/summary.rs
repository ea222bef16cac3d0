//! The result of a run: each queue's monitor, each flow's counters and each
//! application's times, gathered into the summary (`crate::monitor::RunSummary`):
//! each part built by what measured it, the run's own parts added here.

use super::*;

impl TcpFlow {
    /// The connection counters of the flow's row, with everything added in
    /// (`account` first); `s` is the flow's own counts.
    fn summary(&self, s: &FlowStats) -> TcpFlowSummary {
        let c = &self.conn;
        let completion_s = match (self.repeats(), c.done_at) {
            (false, Some(d)) => Some((d - c.started_at).as_secs_f64()),
            _ => None,
        };
        TcpFlowSummary {
            counts: TcpCounts::from(self.counts),
            delivered_bytes: s.delivered_bytes,
            transfer_bytes: self.transfer_bytes,
            transfers: self.transfer_times.len(),
            completion_s,
            rtt_mean_s: self.srtt.mean(),
            rto_mean_s: self.rto.mean(),
            cwnd: c.sender.cwnd(),
            ssthresh: c.sender.ssthresh(),
        }
    }
}

impl<'s> Sim<'s> {
    /// Whole-run counters of every queue, with its backlog now: for the
    /// conservation identity arrivals = departures + drops + backlog.
    pub fn totals(&self) -> Vec<(Totals, u32)> {
        self.net
            .links
            .iter()
            .map(|l| (l.mon.totals, l.qdisc.backlog().pkts))
            .collect()
    }

    /// Group `gi`, whose flows start at flow `first`: pushes their rows to
    /// `rows` and the goodputs of its bulk TCP flows to `tcp_goodputs`
    /// (for fairness), and returns the group's summary.
    fn group_summary(
        &mut self,
        gi: usize,
        first: usize,
        rows: &mut Vec<FlowRow>,
        tcp_goodputs: &mut Vec<f64>,
    ) -> GroupSummary {
        let sc = self.sc;
        let group = &sc.groups[gi];
        let w = self.window.secs();
        let end = first + group.count as usize;
        let mut total = FlowStats::default();
        let mut tcp_counts = TcpCounts::default();
        let mut transfer_times = Vec::new();
        for (j, f) in (first..end).enumerate() {
            let m = self.flows[f];
            let s = &self.stats[f];
            let rtt_prop_s = match (
                self.net.path_delay(&sc.net, m.src, m.dst),
                self.net.path_delay(&sc.net, m.dst, m.src),
            ) {
                (Some(a), Some(b)) => (a + b).as_secs_f64(),
                _ => f64::NAN,
            };
            let mut row = FlowRow {
                group: group.name.clone(),
                id: j as u32,
                src: sc.net.nodes[m.src as usize].name.clone(),
                dst: sc.net.nodes[m.dst as usize].name.clone(),
                rtt_prop_s,
                measured: s.measures(w),
                tcp: None,
            };
            if let Some(t) = self.ends[f].tcp_mut() {
                t.account(true);
                let t = &*t;
                tcp_counts.add(TcpCounts::from(t.counts));
                transfer_times.extend_from_slice(&t.transfer_times);
                row.tcp = Some(t.summary(s));
                // Fairness among the bulk flows that were sending in
                // the window (not finite transfers).
                if t.role == Role::Flow && !t.repeats() && t.conn.payload.packets().is_none() && s.sent_pkts > 0 {
                    tcp_goodputs.push(s.delivered_bytes as f64 * 8.0 / w);
                }
            }
            rows.push(row);
            total.merge(s);
        }
        let class = sc.classes[group.class as usize].clone();
        let (delays, queueing) = (&self.delays[gi], &self.queueing[gi]);
        let mut g = GroupSummary::pooled(group.source.kind(), class, group.count, &total, delays, w);
        g.queueing_p50_s = queueing.percentile(0.5);
        g.queueing_p95_s = queueing.percentile(0.95);
        g.queueing_p99_s = queueing.percentile(0.99);
        if group.delay_histogram {
            g.delay_histogram = Some(HistogramSummary::from(delays));
            g.queueing_histogram = Some(HistogramSummary::from(queueing));
        }
        if matches!(group.source, SourceSpec::Http11 { .. } | SourceSpec::Web { .. }) {
            g.request_goodput_bps = Some(total.request_bytes as f64 * 8.0 / w);
        }
        let (first, end) = (first as u32, end as u32);
        match group.source {
            SourceSpec::Http11 { .. } => {
                let mut sized: Vec<(u32, f64)> = Vec::new();
                for h in &self.http {
                    if h.resp >= first && h.resp < end {
                        sized.extend_from_slice(&h.response_times);
                        // The request connection's counters (the response
                        // connection is the flow's own, counted above).
                        let t = self.ends[h.req as usize].tcp_mut().expect("an HTTP/1.1 connection");
                        t.account(true);
                        tcp_counts.add(TcpCounts::from(t.counts));
                    }
                }
                let mut times: Vec<f64> = sized.iter().map(|&(_, t)| t).collect();
                g.http11 = Some(Http11Summary {
                    responses: TimesSummary::of(&mut times),
                    responses_by_size: SizeRow::by_size(&mut sized),
                });
            }
            SourceSpec::Web { .. } => {
                // The web sessions' counters replace the flows': those of
                // their closed connections, and of the connections still
                // open so far.
                let open: Vec<u32> = (0..self.ends.len() as u32)
                    .filter(|&c| {
                        matches!(self.ends[c as usize].tcp().map(|t| t.role),
                        Some(Role::WebRequest { session, .. } | Role::WebResponse { session, .. })
                            if self.web[session as usize].stat >= first && self.web[session as usize].stat < end)
                    })
                    .collect();
                tcp_counts = TcpCounts::default();
                for c in open {
                    let t = self.ends[c as usize].tcp_mut().expect("an open connection");
                    t.account(true);
                    tcp_counts.add(TcpCounts::from(t.counts));
                }
                let (mut objects, mut pages) = (Vec::new(), Vec::new());
                for s in self.web.iter().filter(|s| s.stat >= first && s.stat < end) {
                    objects.extend_from_slice(&s.object_times);
                    pages.extend_from_slice(&s.page_times);
                    tcp_counts.add(TcpCounts::from(s.counts));
                }
                g.web = Some(WebSummary {
                    objects: TimesSummary::of(&mut objects),
                    pages: TimesSummary::of(&mut pages),
                    active_connections_mean: self.active[gi].2 as f64 / (w * 1e9),
                });
            }
            _ => {}
        }
        if group.source.is_tcp() {
            g.tcp = Some(TcpGroupSummary {
                counts: tcp_counts,
                transfers: TimesSummary::of(&mut transfer_times),
            });
        }
        g
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
        let sc = self.sc;
        let queues = self.net.queue_summaries(&self.sc.net, &self.sc.classes);
        let mut flows = Vec::new();
        let mut traffic = Named::default();
        let mut tcp_goodputs = Vec::new();
        let mut f = 0usize;
        for (gi, group) in sc.groups.iter().enumerate() {
            let g = self.group_summary(gi, f, &mut flows, &mut tcp_goodputs);
            traffic.push(group.name.clone(), g);
            f += group.count as usize;
        }
        let fairness = (!tcp_goodputs.is_empty()).then(|| Fairness {
            jain: jain_index(&tcp_goodputs),
            flows: tcp_goodputs.len(),
        });
        let run = RunSummary {
            scenario: sc.name.clone(),
            seed: self.seed,
            engine_version: ENGINE_VERSION,
            duration_s: sc.duration.as_secs_f64(),
            warmup_s: sc.warmup.as_secs_f64(),
            events: self.n_events,
            wall_s,
            queues,
            traffic,
            flows,
            fairness,
        };
        let summary = serde_json::to_value(&run).expect("a summary serialises");
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
