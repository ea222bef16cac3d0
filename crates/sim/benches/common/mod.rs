//! The open-loop scenario the speed benchmarks run, shared by the criterion
//! bench (`benches/engine.rs`) and the long-run example
//! (`examples/bench_openloop.rs`) so that both measure the same thing.
//!
//! One 10 Mb/s link with 10 ms propagation delay behind a droptail queue of
//! 100 packets, fed by Poisson arrivals of exponentially distributed sizes
//! (mean 1000 B, so the service rate is 1250 packets/s). Each admitted
//! packet costs three events (source, end of transmission, arrival) and
//! each dropped one costs one.

use aqmlab_sim::Scenario;
use serde_json::json;

/// The offered loads benchmarked: below and well above capacity.
pub const LOADS: [f64; 2] = [0.9, 2.0];

/// The open-loop scenario at `load` (offered rate over link rate), lasting
/// `duration_s` simulated seconds.
pub fn openloop(load: f64, duration_s: u64) -> Scenario {
    let v = json!({
        "name": format!("openloop-load{load}"),
        "duration": format!("{duration_s}s"),
        "topology": {
            "kind": "graph",
            "nodes": ["src", "dst"],
            "links": [{
                "from": "src", "to": "dst", "rate": "10Mbps", "delay": "10ms",
                "qdisc": { "kind": "droptail", "limit": "100pkt" },
                "duplex": false, "name": "q",
            }],
        },
        "traffic": [{
            "name": "p", "kind": "poisson", "src": "src", "dst": "dst", "start": "0s",
            "rate": format!("{}Mbps", load * 10.0),
            "size": { "dist": "exponential", "mean": "1000B" },
        }],
    });
    match Scenario::from_value(&v) {
        Ok(sc) => sc,
        Err(errs) => panic!("invalid benchmark scenario: {errs:?}"),
    }
}
