//! Helpers shared by the integration tests.
#![allow(dead_code)]

use aqmlab_sim::{run, Scenario};
use serde_json::{json, Value};

/// Parses a scenario, failing the test with every problem listed.
#[track_caller]
pub fn scenario(v: &Value) -> Scenario {
    match Scenario::from_value(v) {
        Ok(sc) => sc,
        Err(errs) => panic!("invalid test scenario: {errs:?}"),
    }
}

/// One queue on a link from `src` to `dst` fed by a traffic group at `src`:
/// arrivals at the queue are exactly the group's emissions.
pub fn single_queue(rate: &str, qdisc: Value, traffic: Value, duration: &str) -> Value {
    let mut traffic = traffic;
    traffic["src"] = json!("src");
    traffic["dst"] = json!("dst");
    traffic["start"] = json!("0s");
    json!({
        "name": "single-queue",
        "duration": duration,
        "topology": {
            "kind": "graph",
            "nodes": ["src", "dst"],
            "links": [{ "from": "src", "to": "dst", "rate": rate, "delay": "0ms", "qdisc": qdisc, "duplex": false, "name": "q" }],
        },
        "traffic": [traffic],
    })
}

/// The summary of the queue named `name` in a run of `sc` with `seed`.
pub fn queue_summary(sc: &Scenario, seed: u64, name: &str) -> Value {
    run(sc, seed).summary["queues"][name].clone()
}

/// Mean and 95% confidence half-width (Student t) of replications.
pub fn mean_ci(xs: &[f64]) -> (f64, f64) {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, t975(xs.len() - 1) * (var / n).sqrt())
}

/// Student t quantile t(0.975, df) for the replication counts the tests use.
pub fn t975(df: usize) -> f64 {
    match df {
        4 => 2.776,
        7 => 2.365,
        9 => 2.262,
        19 => 2.093,
        _ => panic!("no t quantile tabled for {df} degrees of freedom"),
    }
}

/// Relative error of `x` against `theory`.
pub fn rel(x: f64, theory: f64) -> f64 {
    (x - theory).abs() / theory
}

/// Stationary distribution of a continuous-time Markov chain with generator
/// `q` (rows sum to zero): solves pi Q = 0, sum pi = 1 by Gaussian
/// elimination with partial pivoting.
pub fn ctmc_stationary(q: &[Vec<f64>]) -> Vec<f64> {
    let n = q.len();
    // Transpose to Q^T pi = 0 and replace the last equation by sum pi = 1.
    let mut a: Vec<Vec<f64>> = (0..n).map(|i| (0..n).map(|j| q[j][i]).collect()).collect();
    let mut b = vec![0.0; n];
    a[n - 1] = vec![1.0; n];
    b[n - 1] = 1.0;
    for col in 0..n {
        let piv = (col..n)
            .max_by(|&i, &j| a[i][col].abs().total_cmp(&a[j][col].abs()))
            .unwrap();
        a.swap(col, piv);
        b.swap(col, piv);
        for row in 0..n {
            if row != col {
                let f = a[row][col] / a[col][col];
                if f != 0.0 {
                    let pivot_row = a[col].clone();
                    for (x, p) in a[row][col..].iter_mut().zip(&pivot_row[col..]) {
                        *x -= f * p;
                    }
                    b[row] -= f * b[col];
                }
            }
        }
    }
    (0..n).map(|i| b[i] / a[i][i]).collect()
}
