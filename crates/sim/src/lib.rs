//! aqmlab-sim: the packet-level simulator behind aqmlab.
//!
//! Layers, from the bottom up; each knows only the ones below it (see this
//! crate's README for a packet's walk through them):
//! - [`config`]: the language of scenario files: units, tables, the
//!   declarations of every table's keys ([`config::schema`]) and random
//!   distributions ([`config::dist`]);
//! - [`engine`]: the event queue, ordered by (time, insertion sequence),
//!   and cancellable timers;
//! - [`monitor`]: what is measured at queues and flows;
//! - [`net`]: nodes, links with their queue disciplines, and static routes;
//! - [`transport`]: TCP (the ns-2 agents) and the open-loop UDP sources;
//! - [`app`]: the applications that drive TCP connections (bulk transfers
//!   and ON/OFF, web sessions, HTTP/1.1 clients);
//! - [`scenario`]: reading and validating a whole scenario file;
//! - [`sim`]: one run of a scenario with a seed, and its result.
//!
//! Queue disciplines live in `aqmlab-qdisc` and never see the engine.
//!
//! A run is a pure function of (scenario, seed): simulated time is integer
//! nanoseconds, ties between events resolve by insertion order, and every
//! random draw comes from a stream named after the component that draws.

pub mod app;
pub mod config;
pub mod engine;
pub mod monitor;
pub mod net;
pub mod scenario;
pub mod sim;
pub mod transport;

pub use config::ConfigError;
pub use scenario::Scenario;
pub use sim::{run, RunOutput, Sim, ENGINE_VERSION};

/// Validates a scenario given as JSON and runs it with `seed` (the
/// scenario's own seed if `None`). Returns the result as JSON.
pub fn run_json(scenario: &str, seed: Option<u64>) -> Result<String, Vec<ConfigError>> {
    let sc = Scenario::from_json(scenario)?;
    let seed = seed.unwrap_or(sc.seed);
    Ok(run(&sc, seed).to_json())
}
