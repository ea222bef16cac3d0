//! `aqmlab._engine`: the Python face of the Rust engine. Conversions and
//! error mapping only; every behaviour lives in `aqmlab-sim` (simulation)
//! and `aqmlab-emu` (emulation).
//!
//! Scenarios cross the boundary as JSON text (the Python layer reads TOML
//! and applies overrides) and results come back as JSON text, so the binding
//! has no schema of its own to keep in step.

use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;

/// Every problem of a scenario as (key path, message) pairs; empty when valid.
#[pyfunction]
fn validate(scenario_json: &str) -> Vec<(String, String)> {
    match aqmlab_sim::Scenario::from_json(scenario_json) {
        Ok(_) => Vec::new(),
        Err(errs) => errs.into_iter().map(|e| (e.path, e.message)).collect(),
    }
}

/// Runs a scenario (JSON) with `seed` (the scenario's own if None) and
/// returns the result as JSON. The GIL is released while the engine runs,
/// so runs on several Python threads proceed in parallel.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn run(py: Python<'_>, scenario_json: &str, seed: Option<u64>) -> PyResult<String> {
    let text = scenario_json.to_owned();
    py.allow_threads(move || aqmlab_sim::run_json(&text, seed))
        .map_err(|errs| {
            let problems: Vec<(String, String)> = errs.into_iter().map(|e| (e.path, e.message)).collect();
            PyValueError::new_err(problems)
        })
}

/// The scenario (JSON) as an ns-2.35 Tcl script run with `seed` (the
/// scenario's own if None). Raises ValueError with (key path, message) pairs
/// for an invalid scenario or for settings ns-2.35 cannot express.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn export_ns2(scenario_json: &str, seed: Option<u64>) -> PyResult<String> {
    let to_py = |errs: Vec<aqmlab_sim::ConfigError>| {
        let problems: Vec<(String, String)> = errs.into_iter().map(|e| (e.path, e.message)).collect();
        PyValueError::new_err(problems)
    };
    let sc = aqmlab_sim::Scenario::from_json(scenario_json).map_err(to_py)?;
    let seed = seed.unwrap_or(sc.seed);
    aqmlab_ns2::export(&sc, seed).map_err(to_py)
}

/// Emulates a scenario (JSON) with `seed` through real Linux stacks in
/// network namespaces, in real time, and returns the result as JSON.
/// Raises ValueError with (key path, message) pairs for an invalid scenario
/// or one emulation cannot run, PermissionError where emulation is
/// impossible (no root, no namespaces), OSError if the system refuses
/// something, KeyboardInterrupt on Ctrl-C (after removing everything).
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn emulate(py: Python<'_>, scenario_json: &str, seed: Option<u64>) -> PyResult<String> {
    use aqmlab_emu::EmuError;
    let text = scenario_json.to_owned();
    py.allow_threads(move || aqmlab_emu::emulate_json(&text, seed)).map_err(|e| match e {
        EmuError::Config(errs) => {
            let problems: Vec<(String, String)> = errs.into_iter().map(|e| (e.path, e.message)).collect();
            PyValueError::new_err(problems)
        }
        EmuError::Unavailable(m) => pyo3::exceptions::PyPermissionError::new_err(m),
        EmuError::Io(m) => pyo3::exceptions::PyOSError::new_err(m),
        EmuError::Interrupted => pyo3::exceptions::PyKeyboardInterrupt::new_err("emulation interrupted"),
    })
}

/// Everything in a scenario (JSON) that emulation cannot run, as (key
/// path, message) pairs; empty when it can run it all. Needs no root.
/// Raises ValueError with the pairs for an invalid scenario.
#[pyfunction]
#[pyo3(signature = (scenario_json, seed=None))]
fn emulate_check(scenario_json: &str, seed: Option<u64>) -> PyResult<Vec<(String, String)>> {
    let sc = aqmlab_sim::Scenario::from_json(scenario_json).map_err(|errs| {
        let problems: Vec<(String, String)> = errs.into_iter().map(|e| (e.path, e.message)).collect();
        PyValueError::new_err(problems)
    })?;
    let seed = seed.unwrap_or(sc.seed);
    Ok(aqmlab_emu::check(&sc, seed).into_iter().map(|e| (e.path, e.message)).collect())
}

/// Removes the namespaces of emulations whose process is gone; returns
/// their names.
#[pyfunction]
fn emulate_cleanup() -> PyResult<Vec<String>> {
    aqmlab_emu::lab::cleanup().map_err(|e| pyo3::exceptions::PyOSError::new_err(e.to_string()))
}

/// Why emulation cannot run on this machine, or None if it can.
#[pyfunction]
fn emulate_unavailable() -> Option<String> {
    aqmlab_emu::lab::unavailable()
}

/// The JSON Schema (draft 2020-12) of scenario files, as JSON text.
#[pyfunction]
fn scenario_schema() -> String {
    serde_json::to_string_pretty(&aqmlab_sim::scenario::scenario_schema()).expect("a JSON value serializes")
}

/// Every table of a scenario file and its keys, as Markdown tables.
#[pyfunction]
fn scenario_keys_markdown() -> String {
    aqmlab_sim::scenario::scenario_markdown()
}

#[pymodule]
fn _engine(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add("ENGINE_VERSION", aqmlab_sim::ENGINE_VERSION)?;
    m.add_function(wrap_pyfunction!(validate, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(export_ns2, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_schema, m)?)?;
    m.add_function(wrap_pyfunction!(emulate, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_cleanup, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_check, m)?)?;
    m.add_function(wrap_pyfunction!(emulate_unavailable, m)?)?;
    m.add_function(wrap_pyfunction!(scenario_keys_markdown, m)?)?;
    Ok(())
}
