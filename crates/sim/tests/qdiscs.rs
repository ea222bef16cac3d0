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
    let v = line(&[("10Mbps", json!({ "kind": "ted", "limit": "inf", "deadlines": { "realtime": "5ms" } }))], "12Mbps", None);
    let q = &run(&scenario(&v), 1).summary["queues"]["q0"];
    assert!(q["qdelay_max_s"].as_f64().unwrap() <= 0.005);
    let drops = q["drops"].as_u64().unwrap();
    assert_eq!(q["drops_expired"].as_u64().unwrap(), drops);
    // 1/6 of the offered packets cannot be carried: the loss rate is 1/6
    // up to the packets queued at the window's edges.
    assert!((q["loss_rate"].as_f64().unwrap() - 1.0 / 6.0).abs() < 0.002, "{}", q["loss_rate"]);
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
        assert!(q["q1"]["drops_expired"].as_u64().unwrap() > 0, "both queues are congested");
        f["delay_max_s"].as_f64().unwrap() - fixed
    };
    let ebd = queueing_max("ebd");
    assert!(ebd <= 0.008 + 1e-9, "ebd queueing {ebd}");
    let lbd = queueing_max("lbd");
    assert!(lbd > 0.012, "lbd lets each hop use its deadline: {lbd}");
    assert!(lbd <= 0.016 + 1e-9);
}
