//! DualPI2 (RFC 9332) in whole runs: with Classic traffic only it is the
//! PI2 controller and holds the queue at its target; an ECT(1) source is
//! sent to the L queue and marked by the step above 1 ms of sojourn.

mod common;

use aqmlab_sim::run;
use common::*;
use serde_json::json;

fn f(v: &serde_json::Value) -> f64 {
    v.as_f64().unwrap_or_else(|| panic!("not a number: {v}"))
}

fn u(v: &serde_json::Value) -> u64 {
    v.as_u64().unwrap_or_else(|| panic!("not a count: {v}"))
}

#[test]
fn test_classic_tcp_alone_is_held_at_the_pi2_target() {
    // Ten Not-ECT SACK flows, RTT 2 x (5 ms + 20 ms) = 50 ms plus queueing,
    // through a 10 Mb/s bottleneck under dualpi2 with its defaults. No
    // packet is ECT(1), so the L queue stays empty and the discipline is
    // PI2 on the C queue: its integral term settles only where the delay it
    // measures averages target = 15 ms. The mean sojourn of the packets is
    // that delay seen per packet instead of per update; they differ by the
    // idle time (few packets, ten flows keep the link busy) and by the one
    // packet time (1.2 ms) between a head packet's wait at an update and at
    // its departure. Hence 15 ms +- 3 ms once warm (20 s of warm-up), and
    // every congestion signal is a drop (no packet can be marked).
    let v = json!({
        "duration": "80s", "warmup": "20s",
        "topology": {
            "kind": "dumbbell", "senders": 1, "access_rate": "100Mbps", "access_delay": "5ms",
            "bottleneck": { "rate": "10Mbps", "delay": "20ms" }, "qdisc": { "kind": "dualpi2" },
        },
        "traffic": [ { "name": "ftp", "kind": "ftp", "count": 10, "tcp": { "variant": "sack" } } ],
    });
    let s = run(&scenario(&v), 1).summary;
    let q = &s["queues"]["bottleneck"];
    let qdelay = f(&q["qdelay_mean_s"]);
    eprintln!(
        "mean sojourn {qdelay} s, utilization {}, drops {}",
        q["utilization"], q["drops"]
    );
    assert!((qdelay - 0.015).abs() <= 0.003, "mean sojourn {qdelay} s");
    assert_eq!(u(&q["marks"]), 0);
    assert!(u(&q["drops_head"]) > 0);
    assert_eq!(
        u(&q["drops_head"]),
        u(&q["drops"]),
        "every drop is PI2's, none overflow"
    );
}

#[test]
fn test_ect1_udp_is_marked_by_the_step_above_1ms() {
    // Batches of 5 ECT(1) packets of 1250 B every 50 ms into 10 Mb/s: one
    // packet takes exactly 1 ms to send, so the k-th packet of a batch
    // waits (k - 1) ms. Linux's step marks a sojourn above 1 ms: packets
    // 3, 4 and 5 (2, 3, 4 ms), not 2 (exactly 1 ms) nor 1 (0 ms). A batch
    // drains in 5 ms, long before the next. The base probability stays 0
    // when a batch starts (an update that catches a batch raises p' at most
    // to 3.36 * 0.004 - 0.0024; the next update, 16 ms later, finds the
    // queue empty and brings it back to 0), so no coupled mark adds to the
    // step's: 3 marks in every 5 packets, nothing dropped.
    let v = single_queue(
        "10Mbps",
        json!({ "kind": "dualpi2" }),
        json!({ "name": "l4s", "kind": "batch-poisson", "batch": 5, "gap": "50ms", "size": "1250B",
                "ecn": "ect1" }),
        "10s",
    );
    let q = &run(&scenario(&v), 1).summary["queues"]["q"];
    let (arrivals, marks) = (u(&q["arrivals"]), u(&q["marks"]));
    eprintln!("{arrivals} arrivals, {marks} marks");
    assert_eq!(arrivals % 5, 0);
    assert_eq!(marks * 5, arrivals * 3);
    assert_eq!(u(&q["drops"]), 0);
}

#[test]
fn test_udp_ecn_key_is_checked() {
    let bad = single_queue(
        "10Mbps",
        json!({ "kind": "dualpi2" }),
        json!({ "name": "u", "kind": "cbr", "rate": "1Mbps", "size": "1000B", "ecn": "ect2" }),
        "1s",
    );
    let errs = aqmlab_sim::Scenario::from_value(&bad).unwrap_err();
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].path, "traffic[0].ecn");
    assert!(errs[0].message.contains("\"ect2\" is not allowed"), "{errs:?}");
    assert!(errs[0].message.contains("\"not-ect\", \"ect0\", \"ect1\""), "{errs:?}");
    // TCP groups have no such key (their ECN is tcp.ecn).
    let tcp = single_queue(
        "10Mbps",
        json!({ "kind": "dualpi2" }),
        json!({ "name": "t", "kind": "ftp", "ecn": "ect1" }),
        "1s",
    );
    let errs = aqmlab_sim::Scenario::from_value(&tcp).unwrap_err();
    assert_eq!(errs[0].path, "traffic[0].ecn", "{errs:?}");
}

#[test]
fn test_dualpi2_keys_are_checked_at_their_path() {
    let with = |qdisc: serde_json::Value| {
        let v = single_queue(
            "10Mbps",
            qdisc,
            json!({ "name": "u", "kind": "cbr", "rate": "1Mbps", "size": "1000B" }),
            "1s",
        );
        aqmlab_sim::Scenario::from_value(&v)
    };
    let err = |qdisc: serde_json::Value| {
        // The first problem is the key's (a link that is not built leaves
        // no route for the traffic, reported after it).
        let errs = with(qdisc).unwrap_err();
        (errs[0].path.clone(), errs[0].message.clone())
    };
    let (path, msg) = err(json!({ "kind": "dualpi2", "c_protection": 150 }));
    assert_eq!(path, "topology.links[0].qdisc.c_protection");
    assert!(msg.contains("[0, 100]") && msg.contains("150"), "{msg}");
    let (path, msg) = err(json!({ "kind": "dualpi2", "coupling_factor": 0.5 }));
    assert_eq!(path, "topology.links[0].qdisc.coupling_factor");
    assert!(msg.contains("at least 1") && msg.contains("0.5"), "{msg}");
    let (path, msg) = err(json!({ "kind": "dualpi2", "step_thresh": "fast" }));
    assert_eq!(path, "topology.links[0].qdisc.step_thresh");
    assert!(msg.contains("\"fast\"") && msg.contains("pkt"), "{msg}");
    // A step in packets, as Linux's step_thresh_pkts, is a valid setting.
    assert!(with(json!({ "kind": "dualpi2", "step_thresh": "5pkt" })).is_ok());
}
