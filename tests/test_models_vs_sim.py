"""Bonald et al.'s chains (aqmlab.models.bonald) against the simulator.

One 10 Mb/s link fed by Poisson packets of exponentially distributed size
(mean 1000 B, so mu = 1250 packets/s): M/M/1/K with Tail Drop, and with RED
on the instantaneous queue (Example 1: min_th 20, max_th 40, max_p 1, w_q 1,
no count spacing). The queue's limit is 40 packets behind the one in
transmission, so K = 41 in the system (RED's max_th may not exceed the
limit), and the drop decision sees the
backlog behind the packet in transmission without the arrival: the chains'
``count_arrival=False, count_in_service=False``.

Each point is 10 independent replications of 200 s after 10 s of warm-up;
the model must lie inside the simulation's Student-t 99% confidence
interval. Where a point sees almost no drops (Tail Drop at load 0.5 loses
one packet in 2e12) the replications cannot make an interval; the total
count is then held against the model's expected count with the exact 99%
Poisson interval.
"""

from __future__ import annotations

import copy
from concurrent.futures import ThreadPoolExecutor

import numpy as np
import pytest
from scipy.stats import chi2

import aqmlab
from aqmlab import models
from aqmlab.stats import summarize

K = 41
MU = 1250.0  # packets/s: 10 Mb/s / (8 * 1000 B)
LOADS = [0.5, 1.0, 1.5, 2.0, 2.5, 3.0]
REPS = 10
EX1 = models.Red(20, 40, 1.0)
QDISCS = {
    "td": {"kind": "droptail", "limit": f"{K - 1}pkt"},
    "red": {"kind": "red", "limit": f"{K - 1}pkt", "min_th": "20pkt", "max_th": "40pkt", "max_p": 1, "w_q": 1,
            "avg_of": "instantaneous", "drop_spacing": "none", "exempt_first": False},
}
BASE = {
    "name": "bonald-check", "duration": "210s", "warmup": "10s",
    "topology": {"kind": "graph", "nodes": ["src", "dst"],
                 "links": [{"name": "q", "from": "src", "to": "dst", "rate": "10Mbps", "delay": "0ms",
                            "duplex": False, "qdisc": None}]},
    "traffic": [{"name": "p", "kind": "poisson", "src": "src", "dst": "dst", "rate": None,
                 "size": {"dist": "exponential", "mean": "1000B"}}],
}


def scenario(qdisc: str, rho: float) -> aqmlab.Scenario:
    d = copy.deepcopy(BASE)
    d["topology"]["links"][0]["qdisc"] = QDISCS[qdisc]
    d["traffic"][0]["rate"] = f"{rho * 10:g}Mbps"
    return aqmlab.Scenario.from_dict(d)


@pytest.fixture(scope="module")
def runs() -> dict[tuple[str, float], list[dict]]:
    cases = [(q, rho, seed) for q in QDISCS for rho in LOADS for seed in range(1, REPS + 1)]
    with ThreadPoolExecutor(2) as pool:
        out = list(pool.map(lambda c: aqmlab.run(scenario(c[0], c[1]), seed=c[2]).queue("q"), cases))
    table: dict[tuple[str, float], list[dict]] = {}
    for (q, rho, _), summary in zip(cases, out):
        table.setdefault((q, rho), []).append(summary)
    return table


def chain(qdisc: str) -> models.Red | None:
    return EX1 if qdisc == "red" else None


def poisson_interval(count: int, level: float = 0.99) -> tuple[float, float]:
    """Exact (Garwood) interval for the mean of a Poisson count."""
    a = 1 - level
    low = 0.0 if count == 0 else chi2.ppf(a / 2, 2 * count) / 2
    return low, chi2.ppf(1 - a / 2, 2 * count + 2) / 2


@pytest.mark.parametrize("rho", LOADS)
@pytest.mark.parametrize("qdisc", ["td", "red"])
def test_drop_probability_inside_the_99_percent_interval(runs, qdisc: str, rho: float) -> None:
    model = float(models.drop_probability(rho, K, 1, chain(qdisc), count_arrival=False, count_in_service=False))
    reps = runs[(qdisc, rho)]
    drops = sum(q["drops"] for q in reps)
    arrivals = sum(q["arrivals"] for q in reps)
    if drops < 10:
        low, high = poisson_interval(drops)
        print(f"{qdisc} rho {rho}: {drops} drops in {arrivals} arrivals, model expects {model * arrivals:.3g}")
        assert low <= model * arrivals <= high
        return
    s = summarize([q["loss_rate"] for q in reps], level=0.99)
    print(f"{qdisc} rho {rho}: sim {s.mean:.6f} +- {s.half_width:.6f} (99%), model {model:.6f}")
    # The interval must be narrow enough for the check to mean something:
    # about 1% of the mean above load 1, 6% at load 1, where the queue
    # wanders between empty and full on a scale of K^2 service times.
    assert s.half_width < 0.1 * s.mean
    assert s.low <= model <= s.high


@pytest.mark.parametrize("qdisc", ["td", "red"])
def test_queue_size_mean_at_load_2_inside_the_99_percent_interval(runs, qdisc: str) -> None:
    q = models.queue_distribution(2.0, K, chain(qdisc), count_arrival=False, count_in_service=False)
    # Number in the system = packets waiting + the one in transmission.
    s = summarize([r["qlen_mean_pkts"] + r["utilization"] for r in runs[(qdisc, 2.0)]], level=0.99)
    print(f"{qdisc}: E[N] sim {s.mean:.5f} +- {s.half_width:.5f} (99%), model {q.mean:.5f}")
    assert s.half_width < 0.01 * s.mean
    assert s.low <= q.mean <= s.high
    # The model's convention matters at this precision: the arriving
    # packet counted (d one packet early) moves the RED mean out of it.
    if qdisc == "red":
        shifted = models.queue_distribution(2.0, K, EX1, count_arrival=True, count_in_service=False).mean
        assert not s.low <= shifted <= s.high


# --- batches and loss runs ---------------------------------------------------------

BATCH_LOADS = [1.0, 2.0]


def batch_scenario(rho: float) -> aqmlab.Scenario:
    d = copy.deepcopy(BASE)
    d["topology"]["links"][0]["qdisc"] = QDISCS["td"]
    # Batches of 3 packets at Poisson times: rho / 3 of the link's packet rate.
    d["traffic"][0] = {"name": "b", "kind": "batch-poisson", "src": "src", "dst": "dst", "rate": f"{rho * 10:g}Mbps",
                       "batch": 3, "size": {"dist": "exponential", "mean": "1000B"}}
    return aqmlab.Scenario.from_dict(d)


@pytest.mark.parametrize("rho", BATCH_LOADS)
def test_tail_drop_batch_chain_inside_the_99_percent_interval(rho: float) -> None:
    # Every packet of a batch arrives at once and takes what room there is:
    # exactly Bonald et al.'s batch-Poisson chain for Tail Drop.
    with ThreadPoolExecutor(2) as pool:
        reps = list(pool.map(lambda seed: aqmlab.run(batch_scenario(rho), seed=seed).queue("q"), range(1, REPS + 1)))
    model = float(models.drop_probability(rho, K, 3, count_arrival=False, count_in_service=False))
    s = summarize([q["loss_rate"] for q in reps], level=0.99)
    print(f"TD B=3 rho {rho}: sim {s.mean:.6f} +- {s.half_width:.6f} (99%), chain {model:.6f}")
    assert s.half_width < 0.1 * s.mean
    assert s.low <= model <= s.high


@pytest.mark.parametrize("qdisc", ["td", "red"])
def test_loss_run_mean_at_load_2_inside_the_99_percent_interval(runs, qdisc: str) -> None:
    # Tail Drop: rho + 1 = 3. RED Example 1: the exact run chain (not the
    # paper's Approximation 2, which freezes d during a run).
    if qdisc == "td":
        run = models.consecutive_drops_td(2.0)
    else:
        run = models.consecutive_drops_red(2.0, K, EX1, method="exact", count_arrival=False, count_in_service=False)
    s = summarize([r["consecutive_loss"]["mean"] for r in runs[(qdisc, 2.0)]], level=0.99)
    print(f"{qdisc}: loss-run mean sim {s.mean:.5f} +- {s.half_width:.5f} (99%), model {run.mean:.5f}")
    assert s.half_width < 0.01 * s.mean
    assert s.low <= run.mean <= s.high
