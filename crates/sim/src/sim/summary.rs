//! The result of a run: each queue's monitor, each flow's counters and each
//! application's times, gathered into the summary.

use super::*;

/// Count, mean, standard deviation and percentiles of transfer times.
pub(super) fn times_summary(xs: &mut [f64]) -> Value {
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
pub(super) fn by_size_summary(xs: &mut [(u32, f64)]) -> Value {
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

    pub(super) fn path_delay(&self, src: u32, dst: u32) -> Option<Duration> {
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
                if let Some(t) = self.ends[f].tcp_mut() {
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
                    let completion = match (t.repeats(), c.done_at) {
                        (false, Some(d)) => num((d - c.started_at).as_secs_f64()),
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
                    if t.role == Role::Flow && !t.repeats() && c.payload.packets().is_none() && s.sent_pkts > 0 {
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
                        let t = self.ends[h.req as usize].tcp_mut().expect("an HTTP/1.1 connection");
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
                let open: Vec<u32> = (0..self.ends.len() as u32)
                    .filter(|&c| {
                        matches!(self.ends[c as usize].tcp().map(|t| t.role),
                        Some(Role::WebRequest { session, .. } | Role::WebResponse { session, .. })
                            if self.web[session as usize].stat >= first && self.web[session as usize].stat < f as u32)
                    })
                    .collect();
                let mut counts = [0u64; 4];
                for c in open {
                    let t = self.ends[c as usize].tcp_mut().expect("an open connection");
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
