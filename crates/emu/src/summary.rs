//! The emulation's result, in the simulator's summary keys where the same
//! thing is measured: the queues by the same monitors, the flows' counts
//! from the router (packets sent, dropped, delivered, their delay through
//! the network) and from the hosts (bytes delivered to the application).
//! What only emulation has (timing accuracy, kernel drops, TCP_INFO, the
//! congestion control the kernel reports, the kernels' loss-recovery
//! counters under `kernel.tcp`) is added under keys of its own.
//! TCP transfers (`transfers` on a flow row, the group's `transfers` times)
//! are the simulator's keys: each from the connection's opening to the
//! receiver having all its bytes, those that end inside the window;
//! HTTP/1.1 groups get the simulator's `responses`, `responses_by_size`
//! and `request_goodput_bps` (payload), their flows' `transfers` counting
//! responses. Web groups get the simulator's `web` (object and page times,
//! the mean of open connections) and `request_goodput_bps`, their flows'
//! `transfers` and the group's counting objects. The router counts a flow's
//! packets both ways, so an HTTP/1.1 or web flow's `sent` and `delivered`
//! include its requests (one packet each), which the simulator counts on
//! connections of their own.

use aqmlab_qdisc::Duration;
use aqmlab_sim::monitor::{
    jain_index, DelayHistogram, FlowRow, FlowStats, GroupSummary, HistogramSummary, Named, SizeRow, TimesSummary,
    WebSummary,
};
use aqmlab_sim::scenario::{Scenario, SourceSpec};
use serde_json::{json, Value};

use crate::router::RouterReport;
use crate::traffic::{HostStats, TCP_COUNTERS};

/// The version of the emulator's result format.
pub const EMULATOR_VERSION: &str = "0.1.0";

fn num(x: f64) -> Value {
    if x.is_finite() {
        json!(x)
    } else {
        Value::Null
    }
}

/// The `q` quantile of `xs` (nanoseconds) in seconds: the smallest value
/// with at least a fraction `q` of the values at or below it.
fn quantile_ns(xs: &mut [u64], q: f64) -> f64 {
    if xs.is_empty() {
        return f64::NAN;
    }
    xs.sort_unstable();
    let i = ((q * xs.len() as f64).ceil() as usize).clamp(1, xs.len()) - 1;
    xs[i] as f64 * 1e-9
}

pub fn build(sc: &Scenario, seed: u64, mut r: RouterReport, hosts: Vec<HostStats>, tcp_counters: &[u64]) -> Value {
    let end = aqmlab_qdisc::Time(sc.duration.0);
    for l in &mut r.net.links {
        l.mon.finish(end);
    }
    let w = (sc.duration.0 - sc.warmup.0) as f64 * 1e-9;
    let queues = r.net.queue_summaries(&sc.net, &sc.classes);
    let mut traffic: Named<GroupSummary> = Named::default();
    let mut rows = Vec::new();
    let mut tcp_goodputs = Vec::new();
    let mut f = 0usize;
    let mut group_tcp = Vec::new();
    for g in &sc.groups {
        let mut total = FlowStats::default();
        // One-way delays from application to application, UDP groups only
        // (TCP's per-packet delays are not seen at the hosts).
        let mut delays = DelayHistogram::default();
        let mut retrans = 0u64;
        let mut transfer_times = Vec::new();
        let mut responses: Vec<(u32, f64)> = Vec::new();
        let mut request_bytes = 0u64;
        let (mut pages, mut open_area_ns) = (Vec::new(), 0u128);
        for j in 0..g.count {
            let (src, dst) = g.endpoints(j);
            let h = &hosts[f];
            // The router's counts, with what reached the application.
            let mut s = r.stats[f].clone();
            s.delivered_bytes = h.delivered_bytes;
            if let SourceSpec::Udp(_) = g.source {
                // One-way delay from application to application.
                s.delivered_pkts = h.delivered_pkts;
                s.delay = h.delay;
            }
            let rtt_prop_s = match (r.net.path_delay(&sc.net, src, dst), r.net.path_delay(&sc.net, dst, src)) {
                (Some(a), Some(b)) => (a + b).as_secs_f64(),
                _ => f64::NAN,
            };
            let row = FlowRow {
                group: g.name.clone(),
                id: j,
                src: sc.net.nodes[src as usize].name.clone(),
                dst: sc.net.nodes[dst as usize].name.clone(),
                rtt_prop_s,
                measured: s.measures(w),
                tcp: None,
            };
            let mut row = serde_json::to_value(&row).expect("a row serialises");
            if let SourceSpec::Udp(_) = g.source {
                let o = row.as_object_mut().expect("an object");
                h.delays_ns.iter().for_each(|&d| delays.push(Duration(d)));
                let mut d = h.delays_ns.clone();
                o.insert("delay_p50_s".into(), num(quantile_ns(&mut d, 0.5)));
                o.insert("delay_p99_s".into(), num(quantile_ns(&mut d, 0.99)));
                let mut l = h.send_late_ns.clone();
                o.insert("send_late_p50_s".into(), num(quantile_ns(&mut l, 0.5)));
                o.insert("send_late_p99_s".into(), num(quantile_ns(&mut l, 0.99)));
                // Sequence numbers that never arrived below the highest that
                // did, over the whole run (sequence numbers start at 1).
                let missing = h.udp_highest_seq.saturating_sub(h.udp_received_run);
                o.insert("missing_run".into(), json!(missing));
            }
            if g.source.is_tcp() {
                let info = h.info;
                let completion = h.done_at.map(|d| (d.0 as f64 - g.start_of(seed, j).0 as f64) * 1e-9);
                let o = row.as_object_mut().expect("an object");
                o.insert("delivered_bytes".into(), json!(h.delivered_bytes));
                o.insert("transfer_bytes".into(), json!(h.transfer_bytes));
                o.insert("transfers".into(), json!(h.transfer_times.len()));
                o.insert("completion_s".into(), completion.map_or(Value::Null, num));
                o.insert("congestion_control".into(), json!(h.congestion_control));
                transfer_times.extend_from_slice(&h.transfer_times);
                responses.extend_from_slice(&h.response_times);
                request_bytes += h.request_bytes;
                pages.extend_from_slice(&h.page_times);
                open_area_ns += h.open_area_ns;
                if let Some(i) = info {
                    // Whole run: TCP_INFO counts from the connection's start.
                    o.insert("retransmits_run".into(), json!(i.total_retrans));
                    o.insert("cwnd".into(), json!(i.cwnd));
                    o.insert("ssthresh".into(), json!(i.ssthresh));
                    o.insert("srtt_end_s".into(), num(i.srtt_s));
                    o.insert("rto_end_s".into(), num(i.rto_s));
                    retrans += i.total_retrans as u64;
                }
                if let SourceSpec::Ftp { size_bytes: None, .. } = g.source {
                    if s.sent_pkts > 0 {
                        tcp_goodputs.push(s.delivered_bytes as f64 * 8.0 / w);
                    }
                }
            }
            rows.push(row);
            total.merge(&s);
            f += 1;
        }
        let class = sc.classes[g.class as usize].clone();
        let mut group = GroupSummary::pooled(g.source.kind(), class, g.count, &total, &delays, w);
        if g.delay_histogram {
            group.delay_histogram = Some(HistogramSummary::from(&delays));
        }
        traffic.push(g.name.clone(), group);
        let http = matches!(g.source, SourceSpec::Http11 { .. }).then(|| {
            let mut times: Vec<f64> = responses.iter().map(|&(_, t)| t).collect();
            json!({
                "request_goodput_bps": num(request_bytes as f64 * 8.0 / w),
                "responses": TimesSummary::of(&mut times),
                "responses_by_size": SizeRow::by_size(&mut responses),
            })
        });
        let web = matches!(g.source, SourceSpec::Web { .. }).then(|| {
            let mut objects = transfer_times.clone();
            // The simulator's keys, beside the group's others.
            let mut v = serde_json::to_value(WebSummary {
                objects: TimesSummary::of(&mut objects),
                pages: TimesSummary::of(&mut pages),
                active_connections_mean: open_area_ns as f64 / (w * 1e9),
            })
            .expect("a summary serialises");
            v["request_goodput_bps"] = num(request_bytes as f64 * 8.0 / w);
            v
        });
        group_tcp.push(
            g.source
                .is_tcp()
                .then(|| (retrans, TimesSummary::of(&mut transfer_times), http.or(web))),
        );
    }
    let mut traffic = serde_json::to_value(&traffic).expect("groups serialise");
    for (g, tcp) in sc.groups.iter().zip(group_tcp) {
        if let Some((retrans, transfers, http)) = tcp {
            traffic[&g.name]["retransmits_run"] = json!(retrans);
            traffic[&g.name]["transfers"] = serde_json::to_value(&transfers).expect("times serialise");
            for (k, v) in http.as_ref().and_then(|h| h.as_object()).into_iter().flatten() {
                traffic[&g.name][k] = v.clone();
            }
        }
    }
    let lat = &r.lateness;
    let mut out = json!({
        "scenario": sc.name,
        "seed": seed,
        "engine": "emulation",
        "engine_version": aqmlab_sim::ENGINE_VERSION,
        "emulator_version": EMULATOR_VERSION,
        "duration_s": sc.duration.as_secs_f64(),
        "warmup_s": sc.warmup.as_secs_f64(),
        "events": lat.count,
        "wall_s": r.wall_s,
        "queues": serde_json::to_value(&queues).expect("queues serialise"),
        "traffic": traffic,
        "flows": rows,
        "timing": {
            "wakeups": lat.count,
            "late_p50_s": num(lat.quantile_s(0.5)),
            "late_p99_s": num(lat.quantile_s(0.99)),
            "late_max_s": num(lat.max_ns as f64 * 1e-9),
            "router_cpu_s": num(r.cpu_s),
            "router_cpu_share": num(r.cpu_s / r.wall_s),
        },
        "kernel": {
            "ring_drops": r.ring_drops,
            "send_failures": r.send_failures,
            "udp_send_errors": hosts.iter().map(|h| h.send_errors).sum::<u64>(),
            "foreign_frames": r.foreign,
            "stray_frames": r.strays,
            "tcp": TCP_COUNTERS.iter().zip(tcp_counters).map(|(k, v)| (k.to_string(), json!(v))).collect::<serde_json::Map<_, _>>(),
        },
    });
    if !tcp_goodputs.is_empty() {
        out["fairness"] = json!({ "jain": num(jain_index(&tcp_goodputs)), "flows": tcp_goodputs.len() });
    }
    out
}
