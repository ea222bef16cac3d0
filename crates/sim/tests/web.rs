//! Web traffic in whole runs: the exact time of one object, and the
//! offered load of many sessions.

mod common;

use aqmlab_sim::run;
use common::*;
use serde_json::{json, Value};

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// One web session of one page of one object of `n` packets between a
/// server `a` and a client `b` on an idle 10 Mb/s, 50 ms link.
fn one_object(n: u32) -> Value {
    json!({
        "duration": "20s",
        "topology": { "kind": "graph", "nodes": ["a", "b"], "links": [
            { "from": "a", "to": "b", "rate": "10Mbps", "delay": "50ms", "qdisc": { "kind": "droptail", "limit": "inf" } } ] },
        "traffic": [ { "name": "web", "kind": "web", "src": "a", "dst": "b", "start": "0s", "packet_size": "1000B",
                       "pages_per_session": 1, "objects_per_page": 1, "object_size": n, "inter_page": "1000s",
                       "replace": false } ],
    })
}

/// The object's time by hand. Data packets are 1040 B (tx = 0.832 ms at
/// 10 Mb/s), SYN and ACKs 40 B (t40 = 32 us), d = 50 ms. The client's SYN
/// takes a round trip, T_syn = 2 (d + t40); the 1-packet request then
/// reaches the server at t1 = T_syn + tx + d. The server answers at once on
/// the open connection (no second SYN) with IW = 2, but its link first
/// sends the 40 B ACK of the request, so the response's rounds start at
/// t1 + t40. Slow start then sends rounds of 2, 4, 8, ... packets, round r +
/// 1 starting A = tx + d + t40 + d after round r; the m-th packet of round L
/// arrives at t1 + t40 + (L - 1) A + m tx + d.
fn object_time_by_hand(n: u32) -> f64 {
    let (d, tx, t40) = (0.050, 1040.0 * 8.0 / 10e6, 40.0 * 8.0 / 10e6);
    let t1 = 2.0 * (d + t40) + tx + d;
    let a = tx + d + t40 + d;
    let (mut round, mut first, mut size) = (1u32, 1u32, 2u32);
    while n >= first + size {
        first += size;
        size *= 2;
        round += 1;
    }
    t1 + t40 + (round - 1) as f64 * a + (n - first + 1) as f64 * tx + d
}

#[test]
fn test_one_object_takes_handshake_request_and_slow_start() {
    for n in [1u32, 2, 7, 40] {
        let s = run(&scenario(&one_object(n)), 1).summary;
        let o = &s["traffic"]["web"]["objects"];
        assert_eq!(o["count"], 1, "n {n}");
        let (got, want) = (f(&o["mean_s"]), object_time_by_hand(n));
        eprintln!("n {n}: {got:.9} s, by hand {want:.9} s");
        assert!((got - want).abs() < 1e-9, "n {n}: {got} vs {want}");
        // Request and response each delivered: 1 + n packets of 1000 B.
        // Goodput counts the response (what the client downloads), the
        // request apart; the window is the whole 20 s.
        assert_eq!(s["flows"][0]["delivered"], 1 + n as u64);
        let g = &s["traffic"]["web"];
        assert_eq!(f(&g["goodput_bps"]) * 20.0 / 8.0, n as f64 * 1000.0, "n {n}");
        assert_eq!(f(&g["request_goodput_bps"]) * 20.0 / 8.0, 1000.0, "n {n}");
        assert_eq!(
            f(&s["flows"][0]["goodput_bps"]) * 20.0 / 8.0,
            n as f64 * 1000.0,
            "n {n}"
        );
    }
}

#[test]
fn test_offered_web_load_matches_sessions_over_page_cycle() {
    // 40 sessions on an underloaded 10 Mb/s dumbbell: pages of 2 objects
    // with sizes exponential of mean 9.5 packets (so max(1, ceil X) has mean
    // 1 + e^{-1/9.5} / (1 - e^{-1/9.5}), computed below), each with a
    // 1-packet request, 1 s apart on average after each page completes. The
    // goodput of the group (the responses) must equal sessions x mean page
    // bytes / (mean inter-page + mean page time) within 5%, and the
    // requests' goodput sessions x 2 packets / the same cycle. Light
    // tails keep the sample mean of 1000 s within about 1% (sd of a page's
    // bytes / sqrt(pages) ~ 1.2 / sqrt(35000)).
    let web = json!({ "name": "web", "kind": "web", "count": 40, "packet_size": "1000B",
                      "pages_per_session": 1000000, "objects_per_page": 2, "inter_object": "10ms",
                      "object_size": { "dist": "exponential", "mean": 9.5 }, "inter_page": { "dist": "exponential", "mean": "1s" } });
    let v = json!({
        "duration": "1000s", "warmup": "50s",
        "topology": { "kind": "dumbbell", "senders": 4, "access_rate": "100Mbps", "access_delay": "10ms",
                      "bottleneck": { "rate": "10Mbps", "delay": "20ms" }, "qdisc": { "kind": "droptail", "limit": "200pkt" } },
        "traffic": [web],
    });
    let s = run(&scenario(&v), 1).summary;
    let g = &s["traffic"]["web"];
    let q = 1.0 / 9.5f64;
    let mean_size = 1.0 + (-q).exp() / (1.0 - (-q).exp());
    let page_bytes = 2.0 * mean_size * 1000.0;
    let page_time = f(&g["pages"]["mean_s"]);
    let offered_bps = 40.0 * page_bytes * 8.0 / (1.0 + page_time);
    let goodput = f(&g["goodput_bps"]);
    let requests_bps = 40.0 * 2.0 * 1000.0 * 8.0 / (1.0 + page_time);
    assert!(rel(f(&g["request_goodput_bps"]), requests_bps) < 0.05);
    eprintln!(
        "goodput {goodput:.0} b/s, offered {offered_bps:.0} b/s (page time {page_time:.4} s, mean size {mean_size:.4})"
    );
    assert!(rel(goodput, offered_bps) < 0.05, "{goodput} vs {offered_bps}");
    assert!(f(&s["queues"]["bottleneck"]["utilization"]) < 0.8, "underloaded");
    assert!(f(&g["active_connections_mean"]) > 0.0);
}

#[test]
fn test_http11_clients_repeat_request_response_think() {
    // One client with constant 5000 B responses (5 packets of 1000 B) and
    // 1 s think times on an idle 10 Mb/s, 50 ms link: every response takes
    // the same time after the first (the connection stays open; after each
    // idle second, longer than the RTO, cwnd restarts at 1, so 1 + 2 + 2
    // packets take three round trips), and requests come one response time
    // plus one second apart, so the window of 100 s holds about 100 / (1 +
    // response time) responses.
    let v = json!({
        "duration": "101s", "warmup": "1s",
        "topology": { "kind": "graph", "nodes": ["a", "b"], "links": [
            { "from": "a", "to": "b", "rate": "10Mbps", "delay": "50ms", "qdisc": { "kind": "droptail", "limit": "inf" } } ] },
        "traffic": [ { "name": "h", "kind": "http11", "src": "a", "dst": "b", "start": "0s", "packet_size": "1000B",
                       "response_size": "5000B", "think": "1s" } ],
    });
    let s = run(&scenario(&v), 1).summary;
    let r = &s["traffic"]["h"]["responses"];
    let (n, mean, sd) = (f(&r["count"]), f(&r["mean_s"]), f(&r["std_s"]));
    eprintln!("{n} responses, mean {mean:.6} s, sd {sd:.2e}");
    assert!(sd < 1e-9, "every response in the window takes the same time");
    assert!((n - 100.0 / (1.0 + mean)).abs() <= 1.0, "{n} responses of {mean} s");
    // Request (1 packet) and response (5 packets): 6000 B of payload per cycle.
    let delivered = s["flows"][0]["delivered_bytes"].as_u64().unwrap();
    assert!(delivered.is_multiple_of(1000) && delivered >= 5000 * n as u64);
}

#[test]
fn test_realised_object_sizes_follow_rounded_up_pareto2() {
    // The object sizes of a web run with the default model (ParetoII, mean
    // 12 packets, shape 1.2, rounded up): their empirical CDF against the
    // exact one of ceil(X), P(ceil X <= k) = F(k) = 1 - (1 + k/2.4)^-1.2,
    // compared at every integer. The KS bound 1.628/sqrt(n) is the 1% level
    // for a continuous law and is conservative for a discrete one.
    let v = json!({
        "duration": "300s", "warmup": "10s",
        "topology": { "kind": "dumbbell", "senders": 2, "access_rate": "100Mbps", "access_delay": "5ms",
                      "bottleneck": { "rate": "100Mbps", "delay": "10ms" }, "qdisc": { "kind": "droptail", "limit": "1000pkt" } },
        "traffic": [ { "name": "web", "kind": "web", "count": 300, "packet_size": "1000B", "inter_page": { "dist": "exponential", "mean": "2s" } } ],
    });
    let sc = scenario(&v);
    let mut sim = aqmlab_sim::Sim::new(&sc, 1);
    sim.run_to_end();
    let mut sizes = sim.web_object_sizes();
    sizes.sort_unstable();
    let n = sizes.len() as f64;
    assert!(n > 10_000.0, "{n} objects");
    let cdf = |k: f64| 1.0 - (1.0 + k / 2.4).powf(-1.2);
    let (mut d, mut i) = (0.0f64, 0usize);
    for k in 1..=*sizes.last().unwrap() {
        while i < sizes.len() && sizes[i] <= k {
            i += 1;
        }
        d = d.max((i as f64 / n - cdf(k as f64)).abs());
    }
    eprintln!("{n} objects, KS D = {d:.5}, bound {:.5}", 1.628 / n.sqrt());
    assert!(d < 1.628 / n.sqrt());
}

#[test]
fn test_active_connections_are_counted_per_group() {
    // Two web groups, the second starting after the run ends: only the
    // first has open connections.
    let web = |name: &str, start: &str| {
        json!({ "name": name, "kind": "web", "count": 10, "packet_size": "1000B", "start": start,
                "inter_page": { "dist": "exponential", "mean": "1s" } })
    };
    let v = json!({
        "duration": "30s",
        "topology": { "kind": "dumbbell", "senders": 2, "access_rate": "100Mbps", "access_delay": "5ms",
                      "bottleneck": { "rate": "10Mbps", "delay": "10ms" }, "qdisc": { "kind": "droptail", "limit": "100pkt" } },
        "traffic": [web("a", "0s"), web("b", "100s")],
    });
    let s = run(&scenario(&v), 1).summary;
    assert!(f(&s["traffic"]["a"]["active_connections_mean"]) > 0.0);
    assert_eq!(f(&s["traffic"]["b"]["active_connections_mean"]), 0.0);
}
