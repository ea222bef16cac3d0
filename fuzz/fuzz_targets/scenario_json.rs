//! Bytes -> the engine's scenario reader (`Scenario::from_json`), and, for
//! the few inputs that are valid and small, a run cut to 20 ms of simulated
//! time. Invalid input must come back as `ConfigError`s: any panic (an
//! unwrap, an index out of bounds, an arithmetic overflow, which fuzz builds
//! check) is a bug.
#![no_main]

use aqmlab_qdisc::Duration;
use aqmlab_sim::{run, Scenario};
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(mut sc) = Scenario::from_json(text) else {
        return;
    };
    let flows: u64 = sc.groups.iter().map(|g| u64::from(g.count)).sum();
    if flows > 16 || sc.net.nodes.len() > 32 {
        return; // valid, but too big to run thousands of times a minute
    }
    sc.duration = sc.duration.min(Duration::from_millis(20));
    sc.warmup = Duration::ZERO;
    if sc.trace.as_ref().is_some_and(|t| t.interval < Duration::from_millis(1)) {
        sc.trace = None;
    }
    run(&sc, sc.seed);
});
