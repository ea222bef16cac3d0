//! Runs one scenario, given as the engine's JSON (what `Scenario.to_json()`
//! writes), and prints the wall time of set-up plus event loop, the events
//! and the run's output checksum. A driver for profilers (`valgrind
//! --tool=callgrind`, `perf`) and for checking that an optimisation leaves
//! results bit-identical. With OUT.json, the last run's output (less the
//! wall-clock fields) is written there, for diffing.
//!
//! ```text
//! cargo run --release -p aqmlab-sim --example run_json -- SCENARIO.json [SEED [REPS [OUT.json]]]
//! ```

use std::collections::hash_map::DefaultHasher;
use std::hash::{Hash, Hasher};
use std::time::Instant;

use aqmlab_sim::{Scenario, Sim};

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let path = args.first().expect("usage: run_json SCENARIO.json [SEED [REPS]]");
    let seed: u64 = args.get(1).map_or(1, |s| s.parse().expect("SEED is a whole number"));
    let reps: u32 = args.get(2).map_or(1, |s| s.parse().expect("REPS is a whole number"));
    let text = std::fs::read_to_string(path).expect("a readable scenario file");
    let sc = Scenario::from_json(&text).unwrap_or_else(|e| panic!("invalid scenario: {e:?}"));
    for _ in 0..reps {
        let wall = Instant::now();
        let mut sim = Sim::new(&sc, seed);
        sim.run_to_end();
        let secs = wall.elapsed().as_secs_f64();
        let events = sim.events();
        let mut json: serde_json::Value = serde_json::from_str(&sim.finish(secs).to_json()).expect("JSON output");
        // Everything but the wall-clock fields: equal checksums mean equal results.
        strip_wall(&mut json);
        if let Some(out) = args.get(3) {
            std::fs::write(out, serde_json::to_string_pretty(&json).expect("JSON")).expect("a writable OUT.json");
        }
        let mut h = DefaultHasher::new();
        json.to_string().hash(&mut h);
        println!(
            "wall_s {secs:.3}  events {events}  Mevents/s {:.2}  checksum {:016x}",
            events as f64 / secs / 1e6,
            h.finish()
        );
    }
}

fn strip_wall(v: &mut serde_json::Value) {
    match v {
        serde_json::Value::Object(m) => {
            m.retain(|k, _| !k.contains("wall"));
            m.values_mut().for_each(strip_wall);
        }
        serde_json::Value::Array(a) => a.iter_mut().for_each(strip_wall),
        _ => {}
    }
}
