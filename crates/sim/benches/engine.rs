//! Whole-run benchmarks of the engine on the open-loop scenario of
//! `common/mod.rs` at loads 0.9 and 2.0. Each sample is a run of a few
//! simulated seconds (set-up and event loop, not the summary), and the
//! throughput is reported in events, so criterion prints events per second.
//! Longer runs, closer to real use: `examples/bench_openloop.rs`.

mod common;

use std::time::Duration;

use aqmlab_sim::Sim;
use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};

/// Simulated seconds per sample: 34k events at load 0.9, 50k at load 2.0.
const SAMPLE_SIM_S: u64 = 10;
const SEED: u64 = 1;

fn openloop_runs(c: &mut Criterion) {
    let mut group = c.benchmark_group("openloop");
    for load in common::LOADS {
        let sc = common::openloop(load, SAMPLE_SIM_S);
        // A run is a pure function of (scenario, seed): every sample
        // processes exactly this many events.
        let events = {
            let mut sim = Sim::new(&sc, SEED);
            sim.run_to_end();
            sim.events()
        };
        group.throughput(Throughput::Elements(events));
        group.bench_with_input(BenchmarkId::new("load", format!("{load:.1}")), &sc, |b, sc| {
            b.iter(|| {
                let mut sim = Sim::new(sc, SEED);
                sim.run_to_end();
                sim.events()
            })
        });
    }
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(2)).measurement_time(Duration::from_secs(5)).sample_size(30);
    targets = openloop_runs
}
criterion_main!(benches);
