//! Engine speed over long runs of the open-loop benchmark scenario (see
//! `benches/common/mod.rs`) at loads 0.9 and 2.0: events per second and
//! simulated seconds per wall-clock second, best of several runs.
//!
//! ```text
//! cargo run --release -p aqmlab-sim --example bench_openloop [-- DURATION_S [REPS]]
//! ```
//!
//! Defaults: 2000 simulated seconds, best of 3. Only set-up and the event
//! loop are timed, not the summary.

#[path = "../benches/common/mod.rs"]
mod common;

use std::process::ExitCode;
use std::time::Instant;

use aqmlab_sim::Sim;

const SEED: u64 = 1;

fn arg(args: &[String], i: usize, name: &str, default: u64) -> Result<u64, String> {
    match args.get(i) {
        None => Ok(default),
        Some(s) => match s.parse::<u64>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!("{name} must be a positive integer (got {s:?})")),
        },
    }
}

fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let parsed = arg(&args, 0, "DURATION_S", 2000).and_then(|d| Ok((d, arg(&args, 1, "REPS", 3)?)));
    let (duration_s, reps) = match parsed {
        Ok(v) if args.len() <= 2 => v,
        Ok(_) => {
            eprintln!("usage: bench_openloop [DURATION_S [REPS]]");
            return ExitCode::from(2);
        }
        Err(e) => {
            eprintln!("bench_openloop: {e}");
            return ExitCode::from(2);
        }
    };
    println!("open-loop scenario, {duration_s} simulated s per run, best of {reps}, seed {SEED}");
    println!(
        "{:>5}  {:>12}  {:>9}  {:>12}  {:>14}",
        "load", "events", "wall_s", "Mevents/s", "sim_s/wall_s"
    );
    for load in common::LOADS {
        let sc = common::openloop(load, duration_s);
        let mut best = f64::INFINITY;
        let mut events = 0;
        for _ in 0..reps {
            let wall = Instant::now();
            let mut sim = Sim::new(&sc, SEED);
            sim.run_to_end();
            best = best.min(wall.elapsed().as_secs_f64());
            events = sim.events();
        }
        println!(
            "{load:>5.1}  {events:>12}  {best:>9.3}  {:>12.2}  {:>14.0}",
            events as f64 / best / 1e6,
            duration_s as f64 / best
        );
    }
    ExitCode::SUCCESS
}
