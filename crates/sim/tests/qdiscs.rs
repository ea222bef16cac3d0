//! Queue disciplines inside whole runs, with open-loop traffic, against
//! what each algorithm promises.

mod common;

use aqmlab_sim::run;
use common::*;
use serde_json::{json, Value};

/// A chain of graph links a -> b -> c ..., each `{ rate, qdisc }`, with 1 ms
/// delays, and one CBR flow from the first node to the last.
fn line(links: &[(&str, Value)], cbr_rate: &str, ted_deadline: Option<&str>) -> Value {
    let nodes: Vec<String> = (0..=links.len()).map(|i| format!("n{i}")).collect();
    let links: Vec<Value> = links
        .iter()
        .enumerate()
        .map(|(i, (rate, q))| json!({ "from": nodes[i], "to": nodes[i + 1], "rate": rate, "delay": "1ms", "qdisc": q, "duplex": false, "name": format!("q{i}") }))
        .collect();
    let mut cbr = json!({ "name": "cbr", "kind": "cbr", "rate": cbr_rate, "size": "1000B", "src": nodes[0], "dst": nodes.last().unwrap(), "start": "0s" });
    if let Some(d) = ted_deadline {
        cbr["ted_deadline"] = json!(d);
    }
    json!({ "duration": "20s", "warmup": "1s", "topology": { "kind": "graph", "nodes": nodes, "links": links }, "traffic": [cbr] })
}

#[test]
fn test_ted_lbd_never_sends_late_and_only_expires() {
    // CBR at 12 Mb/s into 10 Mb/s: the queue would grow without bound; with
    // a 5 ms deadline and no limit every drop is an expiry, and no packet is
    // transmitted after waiting more than 5 ms.
    let v = line(
        &[(
            "10Mbps",
            json!({ "kind": "ted", "limit": "inf", "deadlines": { "realtime": "5ms" } }),
        )],
        "12Mbps",
        None,
    );
    let q = &run(&scenario(&v), 1).summary["queues"]["q0"];
    assert!(q["qdelay_max_s"].as_f64().unwrap() <= 0.005);
    let drops = q["drops"].as_u64().unwrap();
    assert_eq!(q["drops_expired"].as_u64().unwrap(), drops);
    // 1/6 of the offered packets cannot be carried: the loss rate is 1/6
    // up to the packets queued at the window's edges.
    assert!(
        (q["loss_rate"].as_f64().unwrap() - 1.0 / 6.0).abs() < 0.002,
        "{}",
        q["loss_rate"]
    );
    // The queue settles where packets wait just under 5 ms (6.25 packets of
    // 0.8 ms): the mean wait is close to the deadline.
    assert!(q["qdelay_mean_s"].as_f64().unwrap() > 0.004);
}

#[test]
fn test_ted_ebd_budget_bounds_the_sum_of_queueing_delays() {
    // Two congested TED queues in end-to-end mode with an 8 ms budget: the
    // queueing delays of a delivered packet add up to at most 8 ms. In
    // per-hop mode with the same deadline each queue may use 8 ms.
    let ted = |mode: &str| json!({ "kind": "ted", "limit": "inf", "mode": mode });
    // Fixed parts of the one-way delay: 2 x 1 ms propagation, 1000 B at
    // 10 Mb/s (0.8 ms) and at 8 Mb/s (1 ms).
    let fixed = 0.002 + 0.0008 + 0.001;
    let queueing_max = |mode: &str| {
        let v = line(&[("10Mbps", ted(mode)), ("8Mbps", ted(mode))], "12Mbps", Some("8ms"));
        let out = run(&scenario(&v), 1);
        let f = &out.summary["flows"][0];
        let q = &out.summary["queues"];
        assert_eq!(q["q0"]["drops"], q["q0"]["drops_expired"]);
        assert!(
            q["q1"]["drops_expired"].as_u64().unwrap() > 0,
            "both queues are congested"
        );
        f["delay_max_s"].as_f64().unwrap() - fixed
    };
    let ebd = queueing_max("ebd");
    assert!(ebd <= 0.008 + 1e-9, "ebd queueing {ebd}");
    let lbd = queueing_max("lbd");
    assert!(lbd > 0.012, "lbd lets each hop use its deadline: {lbd}");
    assert!(lbd <= 0.016 + 1e-9);
}

#[test]
fn test_ted_check_bounds_the_wait_it_measures() {
    // The run of test_ted_lbd_never_sends_late_and_only_expires (1000 B
    // packets, 0.8 ms each at 10 Mb/s; deadline 5 ms) with each check:
    // `departure` sends nothing that waited over 5 - 0.8 ms; `arrival` drops
    // at arrival what would wait over 5 ms behind the queued packets, and
    // may wait up to one packet in transmission longer. Every drop is an
    // expiry, counted as such, and the loss rate stays 1/6.
    let wait_max = |check: &str| {
        let q = json!({ "kind": "ted", "limit": "inf", "deadlines": { "realtime": "5ms" }, "check": check });
        let out = run(&scenario(&line(&[("10Mbps", q)], "12Mbps", None)), 1);
        let q = &out.summary["queues"]["q0"];
        assert_eq!(q["qdisc"]["check"], check);
        assert!(q["drops"].as_u64().unwrap() > 0);
        assert_eq!(q["drops_expired"], q["drops"]);
        let loss = q["loss_rate"].as_f64().unwrap();
        assert!((loss - 1.0 / 6.0).abs() < 0.002, "{check}: loss {loss}");
        q["qdelay_max_s"].as_f64().unwrap()
    };
    let head = wait_max("head");
    assert!(head <= 0.005 && head > 0.0042, "head {head}");
    let departure = wait_max("departure");
    assert!(departure <= 0.0042 + 1e-12, "departure {departure}");
    let arrival = wait_max("arrival");
    assert!(arrival <= 0.0058 + 1e-12, "arrival {arrival}");
}

/// The RFC 8033 update, written again here from the RFC's description as an
/// independent check: the drop probability after an update, from the one
/// before, the queueing delay now and at the previous update.
fn pie_rule(prob: f64, qdelay: f64, qdelay_old: f64) -> f64 {
    let (alpha, beta, qdelay_ref) = (0.125, 1.25, 0.015);
    let mut p = alpha * (qdelay - qdelay_ref) + beta * (qdelay - qdelay_old);
    // Auto-scaling by the probability before the update (RFC 8033 4.2).
    let scale = [
        (1e-6, 2048.0),
        (1e-5, 512.0),
        (1e-4, 128.0),
        (1e-3, 32.0),
        (1e-2, 8.0),
        (1e-1, 2.0),
    ]
    .iter()
    .find(|(bound, _)| prob < *bound)
    .map_or(1.0, |(_, div)| 1.0 / div);
    p *= scale;
    // Cap-drop adjustment (5.5): above 10% rise by at most 2% at a time.
    if prob >= 0.1 && p > 0.02 {
        p = 0.02;
    }
    let mut next = prob + p;
    if qdelay == 0.0 && qdelay_old == 0.0 {
        next *= 0.98;
    }
    next.clamp(0.0, 1.0)
}

#[test]
fn test_pie_drop_prob_follows_the_update_rule_in_a_run() {
    // Poisson at 8 Mb/s into 10 Mb/s, plus 6 Mb/s of CBR from 5 s to 15 s:
    // the probability rises while overloaded (through the scaled steps and
    // the 2% cap) and decays after. Sampling every t_update gives the state
    // after each update; each must follow from the previous one.
    let v = json!({
        "duration": "25s",
        "trace": { "interval": "15ms", "queues": ["q"] },
        "topology": { "kind": "graph", "nodes": ["a", "b"], "links": [
            { "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms", "duplex": false, "name": "q", "qdisc": { "kind": "pie" } } ] },
        "traffic": [
            { "name": "p", "kind": "poisson", "rate": "8Mbps", "size": { "dist": "exponential", "mean": "1000B" }, "src": "a", "dst": "b", "start": "0s" },
            { "name": "c", "kind": "cbr", "rate": "6Mbps", "size": "1000B", "src": "a", "dst": "b", "start": "5s", "stop": "15s" },
        ],
    });
    let out = run(&scenario(&v), 1);
    let col = |n: &str| out.series.iter().find(|(name, _)| name == n).unwrap().1.clone();
    // After an update, qdelay_old holds the delay that update used.
    let (prob, qdelay) = (col("q.drop_prob"), col("q.qdelay_old"));
    assert!(
        prob.iter().cloned().fold(0.0, f64::max) > 0.1,
        "the run must reach the capped region"
    );
    let mut checked = 0;
    for k in 1..prob.len() {
        let expected = pie_rule(prob[k - 1], qdelay[k], qdelay[k - 1]);
        assert!(
            (prob[k] - expected).abs() <= 1e-12 * expected.max(1e-12),
            "update {k}: {} vs {expected}",
            prob[k]
        );
        checked += 1;
    }
    assert_eq!(checked, 25_000 / 15);
    assert!(*prob.last().unwrap() < 0.01, "decays once the overload ends");
    assert!(out.summary["queues"]["q"]["drops_early"].as_u64().unwrap() > 0);
}

#[test]
fn test_red_tail_shares_follow_c1_in_fixed_regimes() {
    // Both queues overloaded by CBR (realtime 8 Mb/s -> queue 1, bulk
    // 10 Mb/s -> queue 2's RED) on a 10 Mb/s link. Regime "below min_th1"
    // (min_th1 above anything the shared buffer can hold): C1 = c1_min =
    // 0.2 C. Regime "above max_th1" (max_th1 = 10 packets, q1 far above):
    // C1 = c1_max = 0.8 C. Queue 1's share of transmitted bits must equal
    // C1/C within 2%; the scheduler is exact per round, so the error is the
    // window's edge (a packet or two of 90 s).
    let share = |min_th1: &str, max_th1: &str| {
        let q = json!({
            "kind": "red-tail", "limit": "400pkt", "min_th1": min_th1, "max_th1": max_th1,
            "red": { "kind": "red", "min_th": "20pkt", "max_th": "60pkt", "max_p": 0.1, "w_q": 0.002 },
        });
        let cbr = |name: &str, rate: &str, class: &str| json!({ "name": name, "kind": "cbr", "rate": rate, "size": "1000B", "class": class, "src": "a", "dst": "b", "start": "0s" });
        let v = json!({
            "duration": "100s", "warmup": "10s",
            "topology": { "kind": "graph", "nodes": ["a", "b"], "links": [
                { "from": "a", "to": "b", "rate": "10Mbps", "delay": "1ms", "duplex": false, "name": "q", "qdisc": q } ] },
            "traffic": [cbr("rt", "8Mbps", "realtime"), cbr("bulk", "10Mbps", "bulk")],
        });
        let s = run(&scenario(&v), 1).summary;
        let rt = s["traffic"]["rt"]["goodput_bps"].as_f64().unwrap();
        let bulk = s["traffic"]["bulk"]["goodput_bps"].as_f64().unwrap();
        assert!(
            (rt + bulk - 10e6).abs() < 0.001 * 10e6,
            "work-conserving: {}",
            rt + bulk
        );
        rt / (rt + bulk)
    };
    let low = share("1000pkt", "2000pkt");
    assert!((low - 0.2).abs() < 0.02 * 0.2, "below min_th1: {low}");
    let high = share("2pkt", "10pkt");
    assert!((high - 0.8).abs() < 0.02 * 0.8, "above max_th1: {high}");
}
