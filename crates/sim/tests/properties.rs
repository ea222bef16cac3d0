//! Invariants over random small scenarios.
//!
//! Conservation at every queue, over the whole run: every packet that
//! arrived was transmitted, dropped, or is still queued.

mod common;

use aqmlab_sim::Sim;
use common::scenario;
use proptest::prelude::*;
use serde_json::{json, Value};

fn qdisc() -> impl Strategy<Value = Value> {
    prop_oneof![
        (1u32..20, prop::bool::ANY).prop_map(|(n, front)| json!({ "kind": "droptail", "limit": format!("{n}pkt"), "drop": if front { "front" } else { "tail" } })),
        (1000u32..20000, prop::bool::ANY).prop_map(|(b, front)| json!({ "kind": "droptail", "limit": format!("{b}B"), "drop": if front { "front" } else { "tail" } })),
        (1u32..20, 0.0f64..0.5).prop_map(|(n, p)| json!({ "kind": "bernoulli", "limit": format!("{n}pkt"), "p": p })),
    ]
}

fn traffic(i: usize) -> impl Strategy<Value = Value> {
    let name = format!("g{i}");
    let size = prop_oneof![
        (40u32..1500).prop_map(|b| json!(format!("{b}B"))),
        (100u32..1500).prop_map(|m| json!({ "dist": "exponential", "mean": format!("{m}B") })),
    ];
    (0usize..5, 1u32..4, 1u32..20, size).prop_map(move |(kind, count, mbps, size)| {
        let rate = format!("{mbps}Mbps");
        match kind {
            0 => json!({ "name": name, "kind": "cbr", "count": count, "rate": rate, "size": "500B", "jitter": true }),
            1 => json!({ "name": name, "kind": "poisson", "count": count, "rate": rate, "size": size }),
            3 => {
                let variant = ["reno", "newreno", "sack"][mbps as usize % 3];
                json!({ "name": name, "kind": "ftp", "count": count, "tcp": { "variant": variant, "delayed_ack": mbps % 2 == 0 } })
            }
            2 => json!({ "name": name, "kind": "batch-poisson", "count": count, "rate": rate, "size": size, "batch": { "dist": "uniform", "min": 1, "max": 6 } }),
            _ => json!({ "name": name, "kind": "onoff", "count": count, "rate": rate, "size": "300B",
                         "on": { "dist": "pareto", "shape": 1.5, "mean": "100ms" }, "off": { "dist": "exponential", "mean": "100ms" } }),
        }
    })
}

fn dumbbell() -> impl Strategy<Value = Value> {
    (1usize..4, qdisc(), qdisc(), prop::collection::vec(traffic(0), 1..2), traffic(1), 1u32..20).prop_map(|(hosts, q, aq, mut groups, g2, mbps)| {
        groups.push(g2);
        json!({
            "duration": "3s",
            "warmup": "1s",
            "topology": {
                "kind": "dumbbell",
                "senders": hosts, "access_rate": "20Mbps", "access_delay": { "dist": "uniform", "min": "0ms", "max": "5ms" },
                "bottleneck": { "rate": format!("{mbps}Mbps"), "delay": "2ms" },
                "qdisc": q, "access_qdisc": aq,
            },
            "traffic": groups,
        })
    })
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, ..ProptestConfig::default() })]

    #[test]
    fn prop_conservation_at_every_queue(v in dumbbell(), seed in 0u64..1000) {
        let sc = scenario(&v);
        let mut sim = Sim::new(&sc, seed);
        sim.run_to_end();
        for (i, (t, backlog)) in sim.totals().into_iter().enumerate() {
            prop_assert_eq!(t.arrivals, t.departures + t.drops + backlog as u64, "queue {} ({})", i, sc.net.links[i].name);
        }
        let out = sim.finish(0.0);
        for (name, q) in out.summary["queues"].as_object().unwrap() {
            // Per-class counts are kept apart from the totals: they must add up.
            let by_class = q["by_class"].as_object().unwrap();
            let class_sum = |k: &str| by_class.values().map(|c| c[k].as_u64().unwrap()).sum::<u64>();
            prop_assert_eq!(class_sum("arrivals"), q["arrivals"].as_u64().unwrap(), "queue {}", name);
            prop_assert_eq!(class_sum("drops"), q["drops"].as_u64().unwrap(), "queue {}", name);
            let u = q["utilization"].as_f64().unwrap();
            prop_assert!((0.0..=1.0).contains(&u), "utilization {} at {}", u, name);
        }
    }
}
