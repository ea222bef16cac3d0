//! fq_pie, cobalt and fq_cobalt in whole runs: bulk TCP flows through a
//! 10 Mb/s dumbbell bottleneck, against what each algorithm is built to
//! hold (its target delay) and what fair queueing promises (equal shares).

mod common;

use aqmlab_sim::run;
use common::*;
use serde_json::{json, Value};

/// `n` NewReno bulk flows with equal RTTs (2 x (5 + 20 + 5) ms propagation)
/// through a 10 Mb/s bottleneck running `qdisc`, 100 s of which the first
/// 20 s are discarded.
fn bulk(qdisc: Value, n: u64) -> Value {
    let summary = run(
        &scenario(&json!({
            "duration": "100s", "warmup": "20s",
            "topology": {
                "kind": "dumbbell", "senders": 1, "access_rate": "100Mbps", "access_delay": "5ms",
                "bottleneck": { "rate": "10Mbps", "delay": "20ms" }, "qdisc": qdisc,
            },
            "traffic": [{ "name": "ftp", "kind": "ftp", "count": n, "tcp": { "variant": "newreno" } }],
        })),
        1,
    )
    .summary;
    serde_json::to_value(summary).unwrap()
}

fn f(v: &Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

/// Each flow's PIE holds the time average of its sampled delay (the last
/// departure's sojourn) at `target` = 15 ms, and with the link busy the
/// departures sample time uniformly, so the mean sojourn is near 15 ms; the
/// third of the target allowed is for the TCP sawtooth between the 15 ms
/// updates. With 4 flows the safeguard (no drop while a flow holds at most
/// two MTUs) only binds below 2 x 4 x 1.2 ms = 9.6 ms, under the target.
/// Deficit round robin gives backlogged flows equal shares: Jain > 0.99.
#[test]
fn test_fq_pie_holds_each_flow_near_target_and_shares_fairly() {
    let s = bulk(json!({ "kind": "fq_pie" }), 4);
    let q = &s["queues"]["bottleneck"];
    let (qdelay, jain, util) = (f(&q["qdelay_mean_s"]), f(&s["fairness"]["jain"]), f(&q["utilization"]));
    assert!(jain > 0.99, "jain {jain}");
    assert!((qdelay - 0.015).abs() < 0.005, "qdelay {qdelay}");
    // Each flow's own queueing delay: its mean one-way delay less its
    // least (the fixed part, propagation and transmission, seen by a packet
    // that found its queue nearly empty).
    for r in s["flows"].as_array().unwrap() {
        let own = f(&r["delay_mean_s"]) - f(&r["delay_min_s"]);
        assert!((own - 0.015).abs() < 0.005, "flow {}: queueing {own}", r["id"]);
    }
    assert!(util > 0.95, "utilization {util}");
}

/// COBALT's CoDel holds the standing (minimum) sojourn at `target` = 5 ms
/// and the mean sits above it by the sawtooth's swing; BLUE stays quiet
/// (no overflow). The mean is asked to lie between half the target and
/// twice it.
#[test]
fn test_cobalt_keeps_sojourn_near_codel_target() {
    let s = bulk(json!({ "kind": "cobalt" }), 4);
    let q = &s["queues"]["bottleneck"];
    let (qdelay, util) = (f(&q["qdelay_mean_s"]), f(&q["utilization"]));
    assert!(qdelay > 0.0025 && qdelay < 0.010, "qdelay {qdelay}");
    assert!(util > 0.95, "utilization {util}");
}

/// The same per flow, with fair shares.
#[test]
fn test_fq_cobalt_keeps_sojourn_near_target_and_shares_fairly() {
    let s = bulk(json!({ "kind": "fq_cobalt" }), 4);
    let q = &s["queues"]["bottleneck"];
    let (qdelay, jain, util) = (f(&q["qdelay_mean_s"]), f(&s["fairness"]["jain"]), f(&q["utilization"]));
    assert!(jain > 0.99, "jain {jain}");
    assert!(qdelay > 0.0025 && qdelay < 0.010, "qdelay {qdelay}");
    assert!(util > 0.95, "utilization {util}");
}

/// A bad value is refused before the run, naming the key, the value and
/// what is allowed.
#[test]
fn test_bad_values_rejected_by_key_before_the_run() {
    let cases = [
        (
            json!({ "kind": "fq_pie", "ecn_prob": 1.5 }),
            "topology.qdisc.ecn_prob",
            "1.5",
        ),
        (
            json!({ "kind": "fq_pie", "target": "0s" }),
            "topology.qdisc.target",
            "0",
        ),
        (json!({ "kind": "fq_pie", "flows": 0 }), "topology.qdisc.flows", "0"),
        (
            json!({ "kind": "cobalt", "increment": 2 }),
            "topology.qdisc.increment",
            "2",
        ),
        (
            json!({ "kind": "cobalt", "blue_threshold": "soon" }),
            "topology.qdisc.blue_threshold",
            "none",
        ),
        (
            json!({ "kind": "fq_cobalt", "drop_batch": 0 }),
            "topology.qdisc.drop_batch",
            "0",
        ),
        (
            json!({ "kind": "fq_cobalt", "quantum": "0B" }),
            "topology.qdisc.quantum",
            "0",
        ),
    ];
    for (qdisc, path, shown) in cases {
        let v = json!({
            "duration": "10s",
            "topology": {
                "kind": "dumbbell", "senders": 1, "access_rate": "100Mbps", "access_delay": "5ms",
                "bottleneck": { "rate": "10Mbps", "delay": "20ms" }, "qdisc": qdisc,
            },
            "traffic": [{ "name": "ftp", "kind": "ftp", "count": 1 }],
        });
        let errs = aqmlab_sim::Scenario::from_value(&v).unwrap_err();
        assert_eq!(errs.len(), 1, "{errs:?}");
        assert_eq!(errs[0].path, path, "{errs:?}");
        assert!(errs[0].message.contains(shown), "{errs:?}");
    }
}
