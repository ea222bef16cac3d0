//! Whole scenarios through multi-hop topologies: exact delays, routing,
//! utilisation, determinism.

mod common;

use aqmlab_sim::{run, run_json, Scenario};
use common::*;
use serde_json::{json, Value};

/// Four CBR flows, one per sender host, with access delays 10..40 ms and
/// start times chosen so their packets never meet at the bottleneck.
fn cbr_dumbbell() -> Value {
    let groups: Vec<Value> = (0..4)
        .map(|i| {
            json!({
                "name": format!("cbr{i}"), "kind": "cbr", "rate": "250kbps", "size": "573B",
                "src": format!("s{i}"), "dst": format!("d{i}"), "start": format!("{}ms", 4 * i),
            })
        })
        .collect();
    json!({
        "name": "cbr-dumbbell",
        "duration": "100s",
        "warmup": "10s",
        "topology": {
            "kind": "dumbbell",
            "senders": [ {"delay": "10ms"}, {"delay": "20ms"}, {"delay": "30ms"}, {"delay": "40ms"} ],
            "access_rate": "100Mbps",
            "bottleneck": { "rate": "10Mbps", "delay": "50ms" },
            "qdisc": { "kind": "droptail", "limit": "100pkt" },
        },
        "traffic": groups,
    })
}

#[test]
fn test_cbr_one_way_delay_is_exact_sum_of_path_delays() {
    let sc = scenario(&cbr_dumbbell());
    let out = run(&sc, 1);
    let flows = out.summary["flows"].as_array().unwrap();
    assert_eq!(flows.len(), 4);
    for (i, f) in flows.iter().enumerate() {
        // Access 100 Mb/s: 573 B take 45_840 ns; bottleneck 10 Mb/s: 458_400 ns;
        // receiver access (10x bottleneck = 100 Mb/s, 0.1 ms): 45_840 ns.
        let prop_ns = (10 + 10 * i as u64) * 1_000_000 + 50_000_000 + 100_000;
        let tx_ns = 45_840 + 458_400 + 45_840;
        let expected = (prop_ns + tx_ns) as f64 / 1e9;
        assert_eq!(f["delay_min_s"].as_f64().unwrap(), expected, "flow {i}");
        assert_eq!(f["delay_max_s"].as_f64().unwrap(), expected, "flow {i}");
        assert_eq!(f["drops"], 0);
        // Round-trip propagation: both directions of the path.
        let rtt = 2.0 * prop_ns as f64 / 1e9;
        assert!((f["rtt_prop_s"].as_f64().unwrap() - rtt).abs() < 1e-12);
    }
}

#[test]
fn test_underloaded_bottleneck_utilisation_equals_offered_load() {
    let out = run(&scenario(&cbr_dumbbell()), 1);
    let q = &out.summary["queues"]["bottleneck"];
    // 1 Mb/s offered to 10 Mb/s. The window [10 s, 100 s] may cut one
    // packet of each flow at either edge: at most 8 x 458.4 us of 90 s.
    let bound = 8.0 * 458.4e-6 / 90.0;
    let u = q["utilization"].as_f64().unwrap();
    assert!((u - 0.1).abs() <= bound, "utilization {u}");
    assert_eq!(q["qdelay_mean_s"].as_f64().unwrap(), 0.0, "the CBR packets never queue");
    // Access links never drop here, so they are not reported.
    let names: Vec<&str> = out.summary["queues"]
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(names, vec!["bottleneck", "bottleneck_rev"]);
}

#[test]
fn test_chain_routes_over_shortest_path() {
    // R0 - R1 - R2 with hosts a (at R0) and b (at R2); a 1 Mb/s CBR from a to b
    // crosses both router links, each 5 ms, and the two host links (1 ms).
    let v = json!({
        "duration": "10s",
        "topology": {
            "kind": "chain",
            "routers": 3,
            "links": [
                { "rate": "10Mbps", "delay": "5ms", "qdisc": { "kind": "droptail", "limit": "10pkt" } },
                { "rate": "10Mbps", "delay": "5ms" },
            ],
            "hosts": [
                { "name": "a", "router": 0, "rate": "100Mbps", "delay": "1ms" },
                { "name": "b", "router": 2, "rate": "100Mbps", "delay": "1ms" },
            ],
        },
        "traffic": [ { "name": "c", "kind": "cbr", "rate": "1Mbps", "size": "1250B", "src": "a", "dst": "b", "start": "0s" } ],
    });
    let out = run(&scenario(&v), 1);
    let f = &out.summary["flows"][0];
    // 1250 B: 100 us at 100 Mb/s, 1 ms at 10 Mb/s.
    let expected = (2 * 1_000_000 + 2 * 5_000_000 + 2 * 100_000 + 2 * 1_000_000) as f64 / 1e9;
    assert_eq!(f["delay_max_s"].as_f64().unwrap(), expected);
    assert_eq!(f["delay_min_s"].as_f64().unwrap(), expected);
    let q = &out.summary["queues"];
    assert!(q["R0->R1"]["arrivals"].as_u64().unwrap() > 0 && q["R1->R2"]["arrivals"] == q["R0->R1"]["arrivals"]);
    assert_eq!(q["R2->R1"]["arrivals"], 0);
}

/// The result with the wall-clock time taken out.
fn without_wall(json: &str) -> String {
    let mut v: Value = serde_json::from_str(json).unwrap();
    v["summary"]["wall_s"] = json!(0);
    serde_json::to_string(&v).unwrap()
}

fn busy_scenario() -> String {
    let mut v = cbr_dumbbell();
    v["topology"]["qdisc"] = json!({ "kind": "bernoulli", "limit": "20pkt", "p": 0.01 });
    v["trace"] = json!({ "interval": "1s" });
    v["traffic"].as_array_mut().unwrap().push(json!({
        "name": "burst", "kind": "batch-poisson", "batch": { "dist": "pareto2", "shape": 1.5, "mean": 4 },
        "rate": "8Mbps", "size": { "dist": "uniform", "min": "40B", "max": "1500B" }, "count": 3,
    }));
    v["traffic"].as_array_mut().unwrap().push(json!({
        "name": "tcp", "kind": "ftp", "count": 3, "tcp": { "variant": "sack", "delayed_ack": true },
        "packet_size": { "dist": "uniform", "min": "500B", "max": "1500B" },
    }));
    v["traffic"].as_array_mut().unwrap().push(json!({
        "name": "onoff", "kind": "onoff", "rate": "2Mbps", "size": "500B", "count": 2,
        "on": { "dist": "pareto", "shape": 1.5, "mean": "500ms" }, "off": { "dist": "exponential", "mean": "500ms" },
    }));
    v.to_string()
}

#[test]
fn test_same_seed_gives_identical_json_sequentially_and_on_threads() {
    let text = busy_scenario();
    let a = without_wall(&run_json(&text, Some(7)).unwrap());
    let b = without_wall(&run_json(&text, Some(7)).unwrap());
    assert_eq!(a, b);
    let threads: Vec<_> = (0..4)
        .map(|_| {
            let t = text.clone();
            std::thread::spawn(move || without_wall(&run_json(&t, Some(7)).unwrap()))
        })
        .collect();
    for h in threads {
        assert_eq!(h.join().unwrap(), a);
    }
    let c = without_wall(&run_json(&text, Some(8)).unwrap());
    assert_ne!(a, c, "another seed gives another run");
}

#[test]
fn test_adding_a_group_leaves_other_groups_draws_unchanged() {
    // Common random numbers: streams are named after the component, so a
    // new group (here on a link of its own, so that it cannot interact)
    // does not move the first group's arrival times or sizes: its whole
    // summary is unchanged, delays included.
    let link = |from: &str, to: &str| json!({ "from": from, "to": to, "rate": "2Mbps", "delay": "1ms", "qdisc": { "kind": "droptail", "limit": "5pkt" } });
    let base = json!({
        "duration": "20s",
        "topology": { "kind": "graph", "nodes": ["a", "b", "c", "d"], "links": [link("a", "b"), link("c", "d")] },
        "traffic": [ { "name": "p", "kind": "poisson", "rate": "1.5Mbps", "size": { "dist": "exponential", "mean": "500B" }, "src": "a", "dst": "b" } ],
    });
    let mut more = base.clone();
    more["traffic"].as_array_mut().unwrap().insert(
        0,
        json!({ "name": "q", "kind": "poisson", "rate": "1Mbps", "size": "100B", "src": "c", "dst": "d" }),
    );
    let p1 = run(&scenario(&base), 3).summary["traffic"]["p"].clone();
    let p2 = run(&scenario(&more), 3).summary["traffic"]["p"].clone();
    assert!(p1["drops"].as_u64().unwrap() > 0, "the queue is busy enough to matter");
    assert_eq!(p1, p2);
}

/// A time series of a run's output by name.
fn column(out: &aqmlab_sim::RunOutput, name: &str) -> Vec<f64> {
    out.series
        .iter()
        .find(|(n, _)| n == name)
        .map(|(_, v)| v.clone())
        .unwrap_or_else(|| panic!("no column {name}"))
}

#[test]
fn test_trace_samples_backlog_and_cumulative_drops() {
    let text = busy_scenario();
    let sc = Scenario::from_json(&text).unwrap();
    let out = run(&sc, 1);
    let col = |name: &str| column(&out, name);
    let t = col("time_s");
    assert_eq!(t.len(), 101, "samples at 0, 1, ..., 100 s");
    assert_eq!(t[100], 100.0);
    let drops = col("bottleneck.drops");
    assert!(
        drops.windows(2).all(|w| w[0] <= w[1]),
        "cumulative drops never decrease"
    );
    assert_eq!(
        *drops.last().unwrap(),
        out.summary["queues"]["bottleneck"]["run_totals"]["drops"]
            .as_f64()
            .unwrap()
    );
    assert_eq!(col("bottleneck.p"), vec![0.01; 101]);
}

#[test]
fn test_trace_samples_a_groups_one_way_delay_per_interval() {
    // One 1000 B packet every 8 ms (1 Mb/s) over a 10 Mb/s link: each takes
    // 0.8 ms to send and nothing queues, so every one-way delay is 0.8 ms.
    // The flow starts at 0.5 s: the samples at 0 s to 0.5 s saw nothing
    // (null); from 0.6 s each 100-ms interval holds 12 or 13 packets whose
    // mean and largest delay are 0.8 ms.
    let mut v = single_queue(
        "10Mbps",
        json!({ "kind": "droptail", "limit": "100pkt" }),
        json!({ "name": "voip", "kind": "cbr", "rate": "1Mbps", "size": "1000B" }),
        "2s",
    );
    v["traffic"][0]["start"] = json!("0.5s");
    v["trace"] = json!({ "interval": "100ms", "queues": [], "groups": ["voip"] });
    let out = run(&scenario(&v), 1);
    let col = |name: &str| column(&out, name);
    let (mean, max) = (col("traffic.voip.delay_mean_s"), col("traffic.voip.delay_max_s"));
    assert_eq!(col("time_s").len(), 21);
    assert!(mean[..=5].iter().chain(&max[..=5]).all(|x| x.is_nan()));
    for x in mean[6..].iter().chain(&max[6..]) {
        assert!((x - 0.0008).abs() < 1e-12, "{x}");
    }
    // An unknown group is refused by name.
    v["trace"]["groups"] = json!(["video"]);
    let err = format!("{:?}", Scenario::from_value(&v).unwrap_err());
    assert!(
        err.contains("trace.groups[0]")
            && err.contains("no traffic group is named \\\"video\\\"; groups: \\\"voip\\\""),
        "{err}"
    );
}

#[test]
fn test_drawn_access_delay_is_shared_by_both_directions() {
    // Access delays drawn per host from a distribution: the host's two
    // access links get the same draw, so the round-trip propagation delay
    // is twice the one-way propagation delay seen by the CBR packets.
    let mut v = cbr_dumbbell();
    v["topology"]["senders"] = json!(4);
    v["topology"]["access_delay"] = json!({ "dist": "uniform", "min": "1ms", "max": "30ms" });
    // A 1 Gb/s bottleneck (receivers at 10 Gb/s) makes packets of different
    // flows meeting there, which would add queueing, very unlikely.
    v["topology"]["bottleneck"]["rate"] = json!("1Gbps");
    let out = run(&scenario(&v), 5);
    let tx_s = (45_840 + 4_584 + 459) as f64 / 1e9;
    let mut one_way = Vec::new();
    for f in out.summary["flows"].as_array().unwrap() {
        let prop = f["delay_max_s"].as_f64().unwrap() - tx_s;
        assert!((f["rtt_prop_s"].as_f64().unwrap() - 2.0 * prop).abs() < 1e-9);
        one_way.push(prop);
    }
    // Drawn, so the four hosts differ, within [1, 30] ms + 50.1 ms.
    assert!(
        one_way.iter().all(|&p| (0.0511 - 1e-9..=0.0801 + 1e-9).contains(&p)),
        "{one_way:?}"
    );
    one_way.dedup();
    assert_eq!(one_way.len(), 4);
}
