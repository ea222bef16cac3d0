//! The simulator against queueing theory. Each test runs independent
//! replications and asserts (a) that the 95% confidence interval of the
//! replication mean is narrow enough for the check to mean something and (b)
//! that the mean is within the tolerance of the closed form. The
//! half-width bounds were set from the variance the runs show, with room:
//! a test that fails (a) needs longer runs, not a wider tolerance.

mod common;

use common::*;
use serde_json::json;

/// M/M/1/K: loss probability and mean number in system.
fn mm1k(rho: f64, k: u32) -> (f64, f64) {
    let norm: f64 = (0..=k).map(|n| rho.powi(n as i32)).sum();
    let p = |n: u32| rho.powi(n as i32) / norm;
    (p(k), (0..=k).map(|n| n as f64 * p(n)).sum())
}

/// Runs M/M/1/K at load `rho` with `reps` replications of about
/// `arrivals` Poisson arrivals each, 1000 B mean exponential sizes on a
/// 10 Mb/s link (service rate 1250 packets/s).
fn run_mm1k(rho: f64, k: u32, arrivals: f64, reps: u64) -> (Vec<f64>, Vec<f64>) {
    let lambda = rho * 1250.0;
    let duration = format!("{}s", (arrivals / lambda).ceil());
    let v = single_queue(
        "10Mbps",
        json!({ "kind": "droptail", "limit": format!("{}pkt", k - 1) }),
        json!({ "name": "p", "kind": "poisson", "rate": format!("{}Mbps", rho * 10.0), "size": { "dist": "exponential", "mean": "1000B" } }),
        &duration,
    );
    let sc = scenario(&v);
    let (mut loss, mut in_system) = (Vec::new(), Vec::new());
    for seed in 1..=reps {
        let q = queue_summary(&sc, seed, "q");
        loss.push(q["loss_rate"].as_f64().unwrap());
        // Number in system = waiting (the queue's backlog) + in service (utilisation).
        in_system.push(q["qlen_mean_pkts"].as_f64().unwrap() + q["utilization"].as_f64().unwrap());
    }
    (loss, in_system)
}

#[track_caller]
fn check(label: &str, xs: &[f64], theory: f64, tol: f64, max_half_width: f64) {
    let (mean, hw) = mean_ci(xs);
    eprintln!(
        "{label}: sim {mean:.6} +- {hw:.6} (95%), theory {theory:.6}, rel err {:.4}%",
        100.0 * rel(mean, theory)
    );
    assert!(
        hw / theory < max_half_width,
        "{label}: CI half-width {:.3}% too wide for a {:.1}% check",
        100.0 * hw / theory,
        100.0 * tol
    );
    assert!(rel(mean, theory) < tol, "{label}: sim {mean} vs theory {theory}");
}

#[test]
fn test_mm1k_loss_and_occupancy_match_closed_form() {
    // 10 replications of 4e6 arrivals: the relative CI half-widths observed
    // are at most about 0.5%, so a 2% tolerance is four half-widths away.
    for (rho, k) in [(0.5, 5), (0.9, 10), (2.0, 10)] {
        let (loss, in_system) = run_mm1k(rho, k, 4e6, 10);
        let (p_loss, l) = mm1k(rho, k);
        check(&format!("M/M/1/{k} rho={rho} loss"), &loss, p_loss, 0.02, 0.01);
        check(&format!("M/M/1/{k} rho={rho} L"), &in_system, l, 0.02, 0.01);
    }
}

#[test]
fn test_md1_waiting_time_matches_pollaczek_khinchine() {
    // Deterministic 1000 B packets at 10 Mb/s: S = 0.8 ms; at rho = 0.8 the
    // P-K mean wait is rho S / (2 (1 - rho)) = 1.6 ms. Buffer 10000 packets
    // (never reached: P(wait > 8 s) is negligible).
    let v = single_queue(
        "10Mbps",
        json!({ "kind": "droptail", "limit": "10000pkt" }),
        json!({ "name": "p", "kind": "poisson", "rate": "8Mbps", "size": "1000B" }),
        "500s",
    );
    let sc = scenario(&v);
    let waits: Vec<f64> = (1..=10)
        .map(|seed| queue_summary(&sc, seed, "q")["qdelay_mean_s"].as_f64().unwrap())
        .collect();
    check("M/D/1 rho=0.8 Wq", &waits, 0.8 * 0.8e-3 / (2.0 * 0.2), 0.02, 0.01);
}

#[test]
fn test_mm1_delay_percentiles_match_exponential_laws() {
    // FCFS M/M/1 at rho = 0.8, mu = 1250 packets/s (1000 B mean exponential
    // sizes at 10 Mb/s), buffer never reached. The wait before service has
    // P(Wq > t) = rho exp(-mu (1 - rho) t), so for p >= 1 - rho its
    // p-quantile is ln(rho / (1 - p)) / (mu (1 - rho)); the time in the
    // system, Wq + S (the one-way delay over a link without propagation
    // delay), is exponential with rate mu - lambda: -ln(1 - p) / (mu - lambda).
    // The group's queueing time is the wait again, summed over its one hop.
    // Percentiles come from log-binned histograms (within 0.8%); 10
    // replications of 10^6 arrivals give half-widths under 1%.
    let (rho, mu): (f64, f64) = (0.8, 1250.0);
    let v = single_queue(
        "10Mbps",
        json!({ "kind": "droptail", "limit": "100000pkt" }),
        json!({ "name": "p", "kind": "poisson", "rate": "8Mbps", "size": { "dist": "exponential", "mean": "1000B" } }),
        "1000s",
    );
    let sc = scenario(&v);
    let runs: Vec<_> = (1..=10).map(|seed| aqmlab_sim::run(&sc, seed).summary).collect();
    // The replications' values of the summary key `key` under `path`.
    let values = |path: &[&str], key: &str| -> Vec<f64> {
        runs.iter()
            .map(|s| path.iter().fold(s, |v, k| &v[*k])[key].as_f64().unwrap())
            .collect()
    };
    for (p, key) in [(0.5f64, "p50"), (0.95, "p95"), (0.99, "p99")] {
        let theory = (rho / (1.0 - p)).ln() / (mu * (1.0 - rho));
        let wait = values(&["queues", "q"], &format!("qdelay_{key}_s"));
        check(&format!("M/M/1 rho=0.8 Wq {key}"), &wait, theory, 0.03, 0.015);
        // The same wait, as the group's packets met it on their one hop.
        let queued = values(&["traffic", "p"], &format!("queueing_{key}_s"));
        check(&format!("M/M/1 rho=0.8 group's Wq {key}"), &queued, theory, 0.03, 0.015);
        let theory = -(1.0 - p).ln() / (mu * (1.0 - rho));
        let sojourn = values(&["traffic", "p"], &format!("delay_{key}_s"));
        check(&format!("M/M/1 rho=0.8 T {key}"), &sojourn, theory, 0.03, 0.015);
    }
}

#[test]
fn test_tail_drop_consecutive_losses_are_geometric() {
    // Bonald et al. 2000: at load rho a drop is followed by another with
    // probability rho / (rho + 1), so run lengths are geometric with mean
    // rho + 1 = 3 and variance rho (rho + 1) = 6 at rho = 2, for any K.
    let v = single_queue(
        "10Mbps",
        json!({ "kind": "droptail", "limit": "9pkt" }),
        json!({ "name": "p", "kind": "poisson", "rate": "20Mbps", "size": { "dist": "exponential", "mean": "1000B" } }),
        "200s",
    );
    let sc = scenario(&v);
    let (mut means, mut vars) = (Vec::new(), Vec::new());
    for seed in 1..=10 {
        let q = queue_summary(&sc, seed, "q");
        means.push(q["consecutive_loss"]["mean"].as_f64().unwrap());
        vars.push(q["consecutive_loss"]["var"].as_f64().unwrap());
    }
    check("TD run length mean", &means, 3.0, 0.03, 0.01);
    check("TD run length var", &vars, 6.0, 0.10, 0.03);
}

/// Exact packet drop probability of batch-Poisson arrivals (batches of `b`
/// at load rho in packets) into a tail-drop queue holding `k` packets in
/// all: the chain of the number in system, where a batch fills what room
/// there is and the rest of it is lost.
fn batch_td_drop(rho: f64, b: usize, k: usize) -> f64 {
    let mu = 1.0;
    let lambda = rho * mu / b as f64;
    let mut q = vec![vec![0.0; k + 1]; k + 1];
    for n in 0..=k {
        if n < k {
            q[n][(n + b).min(k)] += lambda;
        }
        if n > 0 {
            q[n][n - 1] += mu;
        }
        let out: f64 = q[n].iter().sum();
        q[n][n] = -out;
    }
    let pi = ctmc_stationary(&q);
    // PASTA: batches see the stationary distribution.
    (0..=k)
        .map(|n| pi[n] * (n + b).saturating_sub(k) as f64 / b as f64)
        .sum()
}

#[test]
fn test_batch_poisson_tail_drop_matches_markov_chain() {
    // Batches of 3 at load 1.0 (in packets), K = 10 in the system.
    let v = single_queue(
        "10Mbps",
        json!({ "kind": "droptail", "limit": "9pkt" }),
        json!({ "name": "b", "kind": "batch-poisson", "batch": 3, "rate": "10Mbps", "size": { "dist": "exponential", "mean": "1000B" } }),
        "400s",
    );
    let sc = scenario(&v);
    let drops: Vec<f64> = (1..=10)
        .map(|seed| queue_summary(&sc, seed, "q")["loss_rate"].as_f64().unwrap())
        .collect();
    let exact = batch_td_drop(1.0, 3, 10);
    check("batch-Poisson B=3 TD drop", &drops, exact, 0.02, 0.01);
}

#[test]
fn test_chain_solver_recovers_mm1k() {
    // The Markov-chain solver itself against the M/M/1/K closed form.
    let (p, _) = mm1k(0.9, 10);
    assert!((batch_td_drop(0.9, 1, 10) - p).abs() < 1e-12);
}
