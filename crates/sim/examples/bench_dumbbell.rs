//! Engine speed on the standard TCP dumbbell of study A1 (Brandauer et al.):
//! 4 hosts, RTTs 120-180 ms, a 10 Mb/s bottleneck, 4 CBR UDP sources at
//! 1 Mb/s in total, N TCP SACK flows with delayed ACKs and payloads uniform
//! in 1400-1628 B, RED (buffer 300, min_th 45, max_th 195, max_p 0.1, w_q
//! 0.002). Prints wall seconds, events per second and simulated seconds per
//! wall second, best of several runs.
//!
//! ```text
//! cargo run --release -p aqmlab-sim --example bench_dumbbell [-- N [DURATION_S [REPS]]]
//! ```
//!
//! Defaults: N = 64, 500 simulated seconds, best of 3. Only set-up and the
//! event loop are timed.

use std::time::Instant;

use aqmlab_sim::{Scenario, Sim};
use serde_json::json;

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .map(|a| a.parse().expect("N, DURATION_S and REPS are whole numbers"))
        .collect();
    let n = args.first().copied().unwrap_or(64);
    let duration = args.get(1).copied().unwrap_or(500);
    let reps = args.get(2).copied().unwrap_or(3);
    let v = json!({
        "duration": format!("{duration}s"), "warmup": "20s",
        "topology": {
            "kind": "dumbbell",
            "senders": [ {"delay": "10ms"}, {"delay": "20ms"}, {"delay": "30ms"}, {"delay": "40ms"} ],
            "access_rate": "100Mbps", "bottleneck": { "rate": "10Mbps", "delay": "50ms" },
            "qdisc": { "kind": "red", "limit": "300pkt", "min_th": "45pkt", "max_th": "195pkt", "max_p": 0.1, "w_q": 0.002 },
        },
        "traffic": [
            { "name": "ftp", "kind": "ftp", "count": n, "start": { "dist": "uniform", "min": "0s", "max": "10s" },
              "tcp": { "variant": "sack", "delayed_ack": true },
              "packet_size": { "dist": "uniform", "min": "1400B", "max": "1628B" } },
            { "name": "cbr", "kind": "cbr", "count": 4, "rate": "250kbps", "size": "573B" },
        ],
    });
    let sc = Scenario::from_value(&v).expect("a valid benchmark scenario");
    let mut best: Option<(f64, u64)> = None;
    for _ in 0..reps {
        let wall = Instant::now();
        let mut sim = Sim::new(&sc, 1);
        sim.run_to_end();
        let secs = wall.elapsed().as_secs_f64();
        if best.is_none_or(|(b, _)| secs < b) {
            best = Some((secs, sim.events()));
        }
    }
    let (secs, events) = best.expect("at least one run");
    println!("A1 dumbbell, N = {n}, RED, {duration} simulated s, best of {reps}, seed 1");
    println!(
        "wall_s {secs:.3}  events {events}  Mevents/s {:.2}  sim_s/wall_s {:.0}",
        events as f64 / secs / 1e6,
        duration as f64 / secs
    );
}
