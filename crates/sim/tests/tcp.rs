//! TCP in whole runs, against what is known independently: the link a
//! single flow should fill, the fair share of equal flows, the Padhye et al.
//! throughput model, and exact byte accounting.

mod common;

use aqmlab_sim::run;
use common::*;
use serde_json::{json, Value};

/// A dumbbell with `n_hosts` senders at `access_delay`, a 10 Mb/s bottleneck
/// with `delay` and `qdisc`, and the given traffic groups.
fn dumbbell(access_delay: &str, delay: &str, qdisc: Value, traffic: Vec<Value>, duration: &str, warmup: &str) -> Value {
    json!({
        "duration": duration, "warmup": warmup,
        "topology": {
            "kind": "dumbbell", "senders": 1, "access_rate": "100Mbps", "access_delay": access_delay,
            "bottleneck": { "rate": "10Mbps", "delay": delay }, "qdisc": qdisc,
        },
        "traffic": traffic,
    })
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Padhye, Firoiu, Towsley, Kurose (SIGCOMM 1998), the full model with
/// timeouts and a window limit, in packets per second (the paper's
/// equation for B(p) with E[W], Q(w) and f(p)).
fn padhye(p: f64, rtt: f64, t0: f64, b: f64, w_max: f64) -> f64 {
    let q = |w: f64| {
        let num = (1.0 - (1.0 - p).powi(3)) * (1.0 + (1.0 - p).powi(3) * (1.0 - (1.0 - p).powf(w - 3.0)));
        (num / (1.0 - (1.0 - p).powf(w))).min(1.0)
    };
    let f = 1.0 + p + 2.0 * p.powi(2) + 4.0 * p.powi(3) + 8.0 * p.powi(4) + 16.0 * p.powi(5) + 32.0 * p.powi(6);
    let c = (2.0 + b) / (3.0 * b);
    let ew = c + (8.0 * (1.0 - p) / (3.0 * b * p) + c * c).sqrt();
    if ew < w_max {
        ((1.0 - p) / p + ew + q(ew) / (1.0 - p)) / (rtt * (b / 2.0 * ew + 1.0) + q(ew) * t0 * f / (1.0 - p))
    } else {
        let w = w_max;
        ((1.0 - p) / p + w + q(w) / (1.0 - p))
            / (rtt * (b / 8.0 * w + (1.0 - p) / (p * w) + 2.0) + q(w) * t0 * f / (1.0 - p))
    }
}

#[test]
fn test_padhye_matches_reference_vector() {
    // Padhye et al. (SIGCOMM 1998), full model, worked by hand: RTT 0.1 s,
    // p 0.01, T0 1 s: b 1 98.829 pkt/s, b 2 69.524; T0 0.4 s, b 1 110.960;
    // W_max 10, T0 1: b 1 66.149; p 0.001, T0 1, b 1: 376.602.
    let cases = [
        (0.01, 1.0, 1.0, f64::INFINITY, 98.829),
        (0.01, 1.0, 2.0, f64::INFINITY, 69.524),
        (0.01, 0.4, 1.0, f64::INFINITY, 110.960),
        (0.01, 1.0, 1.0, 10.0, 66.149),
        (0.001, 1.0, 1.0, f64::INFINITY, 376.602),
    ];
    for (p, t0, b, w_max, expected) in cases {
        let got = padhye(p, 0.1, t0, b, w_max);
        assert!(
            (got - expected).abs() < 0.01,
            "p {p} T0 {t0} b {b} W {w_max}: {got} vs {expected}"
        );
    }
}

#[test]
fn test_one_flow_fills_a_bdp_buffer() {
    // 10 Mb/s, RTT 100 ms (2 x (1 ms access + 48.9 ms bottleneck + 0.1 ms
    // receiver)): one bandwidth-delay product is 125000 B, 83 packets of
    // 1500 B. With a buffer of one BDP a Reno-style sawtooth never drains
    // the queue, so utilisation stays near 1; >= 95% is the bound.
    let ftp = json!({ "name": "ftp", "kind": "ftp", "start": "0s", "tcp": { "variant": "newreno" } });
    let v = dumbbell(
        "1ms",
        "48.9ms",
        json!({ "kind": "droptail", "limit": "83pkt" }),
        vec![ftp],
        "120s",
        "20s",
    );
    let s = run(&scenario(&v), 1).summary;
    let u = f(&s["queues"]["bottleneck"]["utilization"]);
    eprintln!("utilization {u}");
    assert!(u >= 0.95, "utilization {u}");
    let rtt = f(&s["flows"][0]["rtt_prop_s"]);
    assert!((rtt - 0.1).abs() < 1e-9, "{rtt}");
}

#[test]
fn test_ten_equal_flows_share_fairly() {
    // Ten flows with equal RTTs through drop-tail: Jain's index over 200 s
    // must be at least 0.95 (the bound).
    let ftp = json!({ "name": "ftp", "kind": "ftp", "count": 10, "tcp": { "variant": "newreno" } });
    let v = dumbbell(
        "5ms",
        "40ms",
        json!({ "kind": "droptail", "limit": "100pkt" }),
        vec![ftp],
        "220s",
        "20s",
    );
    let s = run(&scenario(&v), 1).summary;
    let jain = f(&s["fairness"]["jain"]);
    eprintln!("jain {jain}");
    assert!(jain >= 0.95, "jain {jain}");
}

#[test]
fn test_bernoulli_loss_throughput_follows_padhye() {
    // One flow through a Bernoulli dropper with p in {0.001, 0.01, 0.05},
    // with and without delayed ACKs (b = 2 and b = 1): the goodput in
    // packets/s within 20% of the full Padhye model evaluated with the run's
    // own mean RTT and mean RTO. The link (100 Mb/s) is never the limit.
    for delayed_ack in [false, true] {
        for p in [0.001, 0.01, 0.05] {
            let ftp = json!({ "name": "ftp", "kind": "ftp", "start": "0s", "packet_size": "1000B",
                              "tcp": { "variant": "newreno", "delayed_ack": delayed_ack } });
            let mut v = dumbbell(
                "10ms",
                "40ms",
                json!({ "kind": "bernoulli", "limit": "inf", "p": p }),
                vec![ftp],
                "1000s",
                "50s",
            );
            v["topology"]["bottleneck"]["rate"] = json!("100Mbps");
            let s = run(&scenario(&v), 1).summary;
            let flow = &s["flows"][0];
            let pkts_per_s = f(&flow["goodput_bps"]) / 8.0 / 1000.0;
            let (rtt, rto) = (f(&flow["rtt_mean_s"]), f(&flow["rto_mean_s"]));
            let b = if delayed_ack { 2.0 } else { 1.0 };
            let model = padhye(p, rtt, rto, b, f64::INFINITY);
            eprintln!("p {p} b {b}: sim {pkts_per_s:.2} pkt/s, model {model:.2} (rtt {rtt:.4} s, rto {rto:.3} s)");
            assert!(
                rel(pkts_per_s, model) < 0.2,
                "p {p} b {b}: sim {pkts_per_s} model {model}"
            );
        }
    }
}

#[test]
fn test_finite_transfer_counts_exactly_its_bytes() {
    // A 1 MB transfer through a lossy queue: whatever was retransmitted, the
    // application receives exactly 1e6 bytes, in packets of 1460 B and one
    // last partial packet.
    let ftp = json!({ "name": "file", "kind": "ftp", "size": "1MB", "start": "0s" });
    let v = dumbbell(
        "1ms",
        "20ms",
        json!({ "kind": "bernoulli", "limit": "inf", "p": 0.02 }),
        vec![ftp],
        "60s",
        "0s",
    );
    let s = run(&scenario(&v), 1).summary;
    let flow = &s["flows"][0];
    assert_eq!(flow["delivered_bytes"], 1_000_000);
    assert!(f(&s["traffic"]["file"]["retransmits"]) > 0.0, "the test needs losses");
    assert!(flow["completion_s"].as_f64().is_some());
}

/// The dumbbell of study A1, Brandauer et al. (examples/tcp-dumbbell.toml,
/// written again here so the test does not depend on the file's current
/// settings).
fn a1(n: u32, qdisc: Value) -> Value {
    json!({
        "duration": "100s", "warmup": "20s",
        "topology": {
            "kind": "dumbbell",
            "senders": [ {"delay": "10ms"}, {"delay": "20ms"}, {"delay": "30ms"}, {"delay": "40ms"} ],
            "access_rate": "100Mbps", "bottleneck": { "rate": "10Mbps", "delay": "50ms" }, "qdisc": qdisc,
        },
        "traffic": [
            { "name": "ftp", "kind": "ftp", "count": n, "start": { "dist": "uniform", "min": "0s", "max": "10s" },
              "tcp": { "variant": "sack", "delayed_ack": true },
              "packet_size": { "dist": "uniform", "min": "1400B", "max": "1628B" } },
            { "name": "cbr", "kind": "cbr", "count": 4, "rate": "250kbps", "size": "573B" },
        ],
    })
}

#[test]
fn test_a1_dumbbell_fills_the_link_and_udp_sees_some_loss() {
    let red =
        json!({ "kind": "red", "limit": "300pkt", "min_th": "45pkt", "max_th": "195pkt", "max_p": 0.1, "w_q": 0.002 });
    let droptail = json!({ "kind": "droptail", "limit": "300pkt" });
    for n in [16, 64, 256] {
        for q in [&droptail, &red] {
            let s = run(&scenario(&a1(n, q.clone())), 1).summary;
            let u = f(&s["queues"]["bottleneck"]["utilization"]);
            let udp_loss = f(&s["traffic"]["cbr"]["loss_rate"]);
            eprintln!("N {n} {}: utilization {u:.4}, UDP loss {udp_loss:.4}", q["kind"]);
            assert!(u >= 0.95, "N {n} {}: utilization {u}", q["kind"]);
            assert!(
                udp_loss > 0.0 && udp_loss < 0.2,
                "N {n} {}: UDP loss {udp_loss}",
                q["kind"]
            );
        }
    }
}

#[test]
fn test_ecn_flows_are_marked_not_dropped_and_traced() {
    // Eight ECN-capable NewReno flows through RED with ECN marking: RED marks
    // instead of dropping below max_th, so the senders halve on echoes
    // (ecn_reductions) and the queue's early drops stay at zero. The cwnd of
    // a traced flow is sampled and halves somewhere.
    let ftp = json!({ "name": "ftp", "kind": "ftp", "count": 8, "tcp": { "variant": "newreno", "ecn": true } });
    let red = json!({ "kind": "red", "limit": "200pkt", "min_th": "20pkt", "max_th": "80pkt", "max_p": 0.1,
                      "w_q": 0.002, "ecn": true });
    let mut v = dumbbell("5ms", "20ms", red, vec![ftp], "60s", "10s");
    v["trace"] = json!({ "interval": "10ms", "queues": [], "flows": ["ftp[0]"] });
    let out = run(&scenario(&v), 1);
    let s = &out.summary;
    let q = &s["queues"]["bottleneck"];
    assert!(f(&q["marks"]) > 0.0);
    assert_eq!(f(&q["drops_early"]), 0.0);
    assert!(f(&s["traffic"]["ftp"]["ecn_reductions"]) > 0.0);
    let cwnd = &out
        .series
        .iter()
        .find(|(n, _)| n == "ftp[0].cwnd")
        .expect("a traced cwnd")
        .1;
    assert!(cwnd.windows(2).any(|w| w[1] < 0.6 * w[0]), "cwnd halves at least once");
}

#[test]
fn test_onoff_over_tcp_sends_only_while_on() {
    // One ON/OFF TCP flow, ON and OFF 1 s each, on an otherwise idle 10 Mb/s
    // link. Were it backlogged throughout it would keep the link busy
    // (utilisation about 1); sending only while ON it can use at most half
    // of the time (plus what drains just after ON ends), and slow start
    // after each idle period costs more.
    let flow = json!({ "name": "web", "kind": "onoff", "transport": "tcp", "start": "0s",
                       "on": "1s", "off": "1s", "tcp": { "variant": "newreno" } });
    let v = dumbbell(
        "1ms",
        "10ms",
        json!({ "kind": "droptail", "limit": "100pkt" }),
        vec![flow],
        "100s",
        "10s",
    );
    let s = run(&scenario(&v), 1).summary;
    let u = f(&s["queues"]["bottleneck"]["utilization"]);
    eprintln!("on/off utilization {u}");
    assert!(u > 0.3 && u < 0.55, "utilization {u}");
    assert_eq!(s["traffic"]["web"]["kind"], "onoff");
    assert_eq!(s["traffic"]["web"]["class"], "bulk");
}

#[test]
fn test_onoff_over_tcp_without_rate_is_unchanged() {
    // The unlimited-while-ON application without `rate`, beside bulk TCP and
    // UDP on/off sources: these figures are what engine 0.4.0 gave before
    // `rate` was added; adding it must not move them.
    let v = json!({
        "duration": "40s", "warmup": "5s",
        "topology": {
            "kind": "dumbbell", "senders": [{ "delay": "10ms" }, { "delay": "20ms" }], "access_rate": "100Mbps",
            "bottleneck": { "rate": "10Mbps", "delay": "20ms" },
            "qdisc": { "kind": "red", "limit": "100pkt", "min_th": "10pkt", "max_th": "40pkt", "max_p": 0.1, "w_q": 0.002 },
        },
        "traffic": [
            { "name": "onoff", "kind": "onoff", "transport": "tcp", "count": 20,
              "on": { "dist": "pareto", "shape": 1.5, "mean": "1s" }, "off": { "dist": "pareto", "shape": 1.5, "mean": "1s" },
              "packet_size": "1000B", "tcp": { "variant": "reno", "ecn": true } },
            { "name": "ftp", "kind": "ftp", "count": 4 },
            { "name": "u", "kind": "onoff", "count": 4, "rate": "500kbps", "size": "500B",
              "on": { "dist": "exponential", "mean": "300ms" }, "off": { "dist": "exponential", "mean": "700ms" } },
        ],
    });
    let s = run(&scenario(&v), 1).summary;
    assert_eq!(s["events"], 290768);
    let g = &s["traffic"]["onoff"];
    let got: Vec<&Value> = [
        "sent",
        "delivered",
        "drops",
        "retransmits",
        "timeouts",
        "fast_retransmits",
    ]
    .iter()
    .map(|k| &g[*k])
    .collect();
    assert_eq!(
        got,
        [18012, 17464, 447, 516, 137, 280]
            .map(|x| json!(x))
            .iter()
            .collect::<Vec<_>>()
    );
    assert_eq!(f(&g["goodput_bps"]), 3991771.4285714286);
    assert_eq!(s["traffic"]["ftp"]["sent"], 14866);
    assert_eq!(s["traffic"]["u"]["sent"], 4523);
    let q = &s["queues"]["bottleneck"];
    assert_eq!((&q["arrivals"], &q["drops"]), (&json!(37407), &json!(860)));
}

#[test]
fn test_ecn_works_with_every_ecn_capable_qdisc() {
    // ECN-capable senders through each discipline that can mark: the queue
    // marks and the senders react (window reductions on echoes).
    let qdiscs = [
        json!({ "kind": "red", "limit": "200pkt", "min_th": "20pkt", "max_th": "80pkt", "max_p": 0.1, "w_q": 0.002, "ecn": true }),
        json!({ "kind": "blue", "limit": "100pkt", "ecn": true }),
        json!({ "kind": "sfb", "limit": "100pkt" }),
        json!({ "kind": "codel", "ecn": true }),
        json!({ "kind": "pie", "ecn": true }),
        json!({ "kind": "fq_codel" }),
        json!({ "kind": "fq_pie", "ecn": true }),
        json!({ "kind": "cobalt", "ecn": true }),
        json!({ "kind": "fq_cobalt" }),
    ];
    for q in qdiscs {
        let ftp = json!({ "name": "ftp", "kind": "ftp", "count": 8, "tcp": { "variant": "newreno", "ecn": true } });
        let s = run(
            &scenario(&dumbbell("5ms", "20ms", q.clone(), vec![ftp], "60s", "10s")),
            1,
        )
        .summary;
        let marks = f(&s["queues"]["bottleneck"]["marks"]);
        let cuts = f(&s["traffic"]["ftp"]["ecn_reductions"]);
        eprintln!("{}: marks {marks}, ECN window reductions {cuts}", q["kind"]);
        assert!(
            marks > 0.0 && cuts > 0.0,
            "{}: marks {marks}, reductions {cuts}",
            q["kind"]
        );
    }
}

#[test]
fn test_ted_rto_is_the_largest_rtt_the_deadlines_allow() {
    // rto = "ted" needs a TED queue on the path; with one (deadline 5 ms on
    // the bottleneck) the flow runs; without one the scenario is rejected.
    let ftp = json!({ "name": "ftp", "kind": "ftp", "count": 2, "tcp": { "rto": "ted" } });
    let ted = json!({ "kind": "ted", "limit": "inf", "default_deadline": "5ms" });
    let s = run(
        &scenario(&dumbbell("5ms", "20ms", ted, vec![ftp.clone()], "20s", "5s")),
        1,
    )
    .summary;
    // Fixed RTO: 2 x (5 + 20 + 0.1) ms propagation + transmission of a
    // 1500 B packet there (120 us + 1.2 ms + 120 us) and a 40 B ACK back
    // (3.2 + 32 + 3.2 us) + the 5 ms deadline: 50.2 + 1.44 + 0.0384 + 5 ms.
    let rto = f(&s["flows"][0]["rto_mean_s"]);
    assert!((rto - 0.0566784).abs() < 1e-9, "rto {rto}");
    let errs = aqmlab_sim::Scenario::from_value(&dumbbell(
        "5ms",
        "20ms",
        json!({ "kind": "droptail", "limit": "50pkt" }),
        vec![ftp],
        "20s",
        "5s",
    ))
    .unwrap_err();
    assert_eq!(errs[0].path, "traffic[0].tcp.rto");
}

#[test]
fn test_ted_rto_counts_an_lbd_deadline_per_queue_and_an_ebd_budget_once() {
    // a -> b -> c, two 10 Mb/s links of 5 ms, each with a TED queue of
    // deadline 2 ms (the reverse queues are drop-tail). Propagation 2 x 10
    // ms, transmission of a 1500 B packet on two links (2 x 1.2 ms) and of a
    // 40 B ACK back (2 x 32 us): 22.464 ms. lbd adds the deadline at both
    // queues (4 ms), ebd the budget once (2 ms).
    for (mode, want) in [("lbd", 0.026464), ("ebd", 0.024464)] {
        let ted = json!({ "kind": "ted", "mode": mode, "limit": "inf", "default_deadline": "2ms" });
        let link = |from: &str, to: &str| {
            json!({ "from": from, "to": to, "rate": "10Mbps", "delay": "5ms", "qdisc": ted.clone(),
                    "reverse_qdisc": { "kind": "droptail", "limit": "inf" } })
        };
        let v = json!({
            "duration": "5s",
            "topology": { "kind": "graph", "nodes": ["a", "b", "c"], "links": [link("a", "b"), link("b", "c")] },
            "traffic": [{ "name": "ftp", "kind": "ftp", "count": 1, "src": "a", "dst": "c", "start": "0s",
                          "tcp": { "rto": "ted", "rwnd": "4pkt" } }],
        });
        let s = run(&scenario(&v), 1).summary;
        let rto = f(&s["flows"][0]["rto_mean_s"]);
        assert!((rto - want).abs() < 1e-9, "{mode}: rto {rto}, by hand {want}");
    }
}

/// Transfer time of one file of `n` packets of 1000 B payload over an idle
/// 10 Mb/s link with 50 ms one-way delay, computed by hand. Serialising a
/// data packet (1040 B) takes tx = 0.832 ms, an ACK or the SYN (40 B)
/// t40 = 32 us. The SYN's round trip is T_syn = 2 (d + t40). Then slow start
/// from IW = 2 with an ACK per packet sends rounds of 2, 4, 8, 16, 32
/// packets; rounds are far shorter than the RTT, so round r + 1 starts when
/// the first ACK of round r returns, A = tx + d + t40 + d after round r
/// started, and its packets leave back to back (each ACK releases two, ACKs
/// come tx apart). The m-th packet of round L is delivered at
/// T_syn + (L - 1) A + m tx + d.
fn file_time_by_hand(n: u32) -> f64 {
    let (d, tx, t40) = (0.050, 1040.0 * 8.0 / 10e6, 40.0 * 8.0 / 10e6);
    let (t_syn, a) = (2.0 * (d + t40), tx + d + t40 + d);
    let (mut round, mut first, mut size) = (1u32, 1u32, 2u32);
    while n >= first + size {
        first += size;
        size *= 2;
        round += 1;
    }
    let m = n - first + 1;
    t_syn + (round - 1) as f64 * a + m as f64 * tx + d
}

#[test]
fn test_single_transfer_takes_handshake_and_slow_start_rounds() {
    for n in [1u32, 2, 7, 40] {
        let file = json!({ "name": "file", "kind": "file", "size": format!("{}B", n * 1000), "gap": "1000s",
                           "packet_size": "1000B", "src": "a", "dst": "b", "start": "0s" });
        let v = json!({
            "duration": "10s",
            "topology": { "kind": "graph", "nodes": ["a", "b"], "links": [
                { "from": "a", "to": "b", "rate": "10Mbps", "delay": "50ms", "qdisc": { "kind": "droptail", "limit": "inf" } } ] },
            "traffic": [file],
        });
        let s = run(&scenario(&v), 1).summary;
        let t = &s["traffic"]["file"]["transfers"];
        assert_eq!(t["count"], 1, "n {n}");
        let (got, want) = (f(&t["mean_s"]), file_time_by_hand(n));
        eprintln!("n {n}: {got:.9} s, by hand {want:.9} s");
        assert!((got - want).abs() < 1e-9, "n {n}: {got} vs {want}");
    }
}

#[test]
fn test_repeated_transfers_each_deliver_their_size() {
    // Transfers of 100 kB with 0.5 s gaps through a 1% Bernoulli loss
    // queue: every completed transfer delivered exactly 100000 B, so the
    // bytes delivered over the run lie between completed x 100000 and one
    // more transfer; late packets of closed connections are ignored.
    let file = json!({ "name": "file", "kind": "file", "size": "100kB", "gap": "500ms", "packet_size": "1000B", "start": "0s" });
    let v = dumbbell(
        "5ms",
        "20ms",
        json!({ "kind": "bernoulli", "limit": "inf", "p": 0.01 }),
        vec![file],
        "60s",
        "0s",
    );
    let s = run(&scenario(&v), 1).summary;
    let flow = &s["flows"][0];
    let done = flow["transfers"].as_u64().unwrap();
    let bytes = flow["transfer_bytes"].as_u64().unwrap();
    eprintln!("{done} transfers, {bytes} B");
    assert!(done > 20, "{done}");
    assert!(
        bytes >= done * 100_000 && bytes < (done + 1) * 100_000,
        "{bytes} for {done} transfers"
    );
    assert!(f(&s["traffic"]["file"]["retransmits"]) > 0.0);
    assert_eq!(s["traffic"]["file"]["kind"], "file");
}

/// Repeated transfers of 90 KB, 0.5 s apart, through 5% random drops on a
/// 3 Mb/s path with a 128 ms round trip (2 x (1 + 62.9 + 0.1) ms), with the
/// flow's srtt traced every 10 ms.
fn files_through_random_drops(tcp: Value) -> Value {
    json!({
        "duration": "100s", "warmup": "0s",
        "trace": { "interval": "10ms", "queues": [], "flows": ["file[0]"] },
        "topology": {
            "kind": "dumbbell", "senders": 1, "access_rate": "100Mbps", "access_delay": "1ms",
            "bottleneck": { "rate": "3Mbps", "delay": "62.9ms" },
            "qdisc": { "kind": "bernoulli", "limit": "inf", "p": 0.05 },
        },
        "traffic": [{ "name": "file", "kind": "file", "size": "90KB", "gap": "500ms", "start": "0s", "tcp": tcp }],
    })
}

#[test]
fn test_repeated_transfers_through_random_drops_never_stall() {
    // Each transfer opens a new connection in the flow's slot, and nothing
    // of the closed one may reach it. When the closed connection's
    // cancelled retransmission timer came back to life in the gap, it
    // resent packets stamped with the next connection's generation; their
    // ACKs gave that connection RTT samples of a few ticks and
    // acknowledged data it had not sent, and it stalled after its first
    // timeout with the RTO backed off to 60 s (1 to 33 transfers in 200 s
    // in these seeds). A sample can never be shorter than the path's round
    // trip: 12 ticks of 10 ms. 26 to 46 transfers fit in 100 s here.
    let variants = [
        json!({ "variant": "reno" }),
        json!({ "variant": "newreno", "syn": false }),
        json!({ "variant": "sack", "delayed_ack": true }),
    ];
    for tcp in variants {
        for seed in 1..=6 {
            let out = run(&scenario(&files_through_random_drops(tcp.clone())), seed);
            let srtt = &out.series.iter().find(|c| c.0 == "file[0].srtt_s").expect("traced").1;
            let srtt_min = srtt.iter().copied().filter(|&x| x > 0.0).fold(f64::INFINITY, f64::min);
            let done = out.summary["flows"][0]["transfers"].as_u64().unwrap();
            eprintln!("{tcp} seed {seed}: {done} transfers, smallest srtt {srtt_min} s");
            assert!(srtt_min >= 0.12 - 1e-9, "{tcp} seed {seed}: srtt {srtt_min} s");
            assert!(done >= 20, "{tcp} seed {seed}: {done} transfers");
        }
    }
}

#[test]
fn test_closed_file_connection_sends_nothing_more() {
    // Transfers of 10 packets, 0.5 s apart, over the idle link of
    // `file_time_by_hand`: each takes T = file_time_by_hand(10), so the
    // k-th ends at (k - 1)(T + gap) + T. Every packet the flow sends is a
    // SYN or a data packet delivered once, so a run that ends in a gap has
    // sent = delivered + one SYN per transfer. (A closed connection's last
    // ACKs are ignored, so its sender still wants its retransmission
    // timer; it used to fire in the gap and resend a packet.)
    let (n, gap, k) = (10u32, 0.5, 20u64);
    let duration = k as f64 * (file_time_by_hand(n) + gap) - gap / 2.0;
    let file = json!({ "name": "file", "kind": "file", "size": format!("{}B", n * 1000), "gap": "500ms",
                       "packet_size": "1000B", "src": "a", "dst": "b", "start": "0s" });
    let v = json!({
        "duration": format!("{duration:.6}s"),
        "topology": { "kind": "graph", "nodes": ["a", "b"], "links": [
            { "from": "a", "to": "b", "rate": "10Mbps", "delay": "50ms", "qdisc": { "kind": "droptail", "limit": "inf" } } ] },
        "traffic": [file],
    });
    let s = run(&scenario(&v), 1).summary;
    let flow = &s["flows"][0];
    assert_eq!(flow["transfers"], k);
    assert_eq!(flow["delivered"], k * n as u64);
    assert_eq!(flow["sent"], k * (n as u64 + 1));
    assert_eq!(flow["retransmits"], 0);
    assert_eq!(flow["timeouts"], 0);
}

#[test]
fn test_each_family_refuses_the_other_familys_keys_by_name() {
    let sc = dumbbell(
        "1ms",
        "10ms",
        json!({ "kind": "droptail", "limit": "50pkt" }),
        vec![
            json!({ "name": "sack", "kind": "ftp", "tcp": { "variant": "sack", "pacing": true } }),
            json!({ "name": "lr", "kind": "ftp", "tcp": { "variant": "linux-reno", "limited_transmit": false, "rto": "ns2" } }),
        ],
        "2s",
        "0s",
    )
    .to_string();
    let errs = aqmlab_sim::Scenario::from_json(&sc).expect_err("invalid");
    let got: Vec<(&str, &str)> = errs.iter().map(|e| (e.path.as_str(), e.message.as_str())).collect();
    assert_eq!(
        got,
        [
            (
                "traffic[0].tcp.pacing",
                "applies only to the Linux-style variants (cubic, bbr, dctcp, prague, linux-reno); this group's variant is \"sack\""
            ),
            (
                "traffic[1].tcp.rto",
                "applies only to ns-2's variants (reno, newreno, sack); this group's variant is \"linux-reno\""
            ),
            (
                "traffic[1].tcp.limited_transmit",
                "applies only to ns-2's variants (reno, newreno, sack); this group's variant is \"linux-reno\""
            ),
        ]
    );
}
