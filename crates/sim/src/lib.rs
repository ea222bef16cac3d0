//! aqmlab-sim: the packet-level simulator behind aqmlab.
//!
//! Layers, each knowing only the ones below it:
//! - [`config`], [`dist`], [`scenario`]: reading and validating a scenario
//!   (units, distributions, topologies, traffic groups) and compiling its
//!   topology into nodes, links and static routes; [`schema`]: the
//!   declaration of every table's keys, and the JSON Schema and README key
//!   tables made from them;
//! - [`engine`]: the event queue, ordered by (time, insertion sequence), and
//!   cancellable timers;
//! - [`app`]: open-loop traffic sources;
//! - [`monitor`]: what is measured at queues and flows;
//! - [`run`]: one run of a scenario with a seed, and its result.
//!
//! Queue disciplines live in `aqmlab-qdisc` and never see the engine.
//!
//! A run is a pure function of (scenario, seed): simulated time is integer
//! nanoseconds, ties between events resolve by insertion order, and every
//! random draw comes from a stream named after the component that draws.

pub mod app;
pub mod config;
pub mod dist;
pub mod engine;
pub mod monitor;
pub mod qdiscs;
pub mod run;
pub mod scenario;
pub mod schema;
pub mod tcp;
pub mod web;

pub use config::ConfigError;
pub use run::{run, RunOutput, Sim, ENGINE_VERSION};
pub use scenario::Scenario;

/// Validates a scenario given as JSON and runs it with `seed` (the
/// scenario's own seed if `None`). Returns the result as JSON.
pub fn run_json(scenario: &str, seed: Option<u64>) -> Result<String, Vec<ConfigError>> {
    let sc = Scenario::from_json(scenario)?;
    let seed = seed.unwrap_or(sc.seed);
    Ok(run(&sc, seed).to_json())
}
