"""Every queue discipline through the Python API: it runs, reports its
effective parameters, and rejects a bad parameter with its key path."""

import pytest

import aqmlab
from aqmlab import ConfigError, Scenario
from conftest import EXAMPLES

QDISCS = {
    "droptail": {"limit": "50pkt"},
    "bernoulli": {"limit": "50pkt", "p": 0.01},
    "red": {"limit": "200pkt", "min_th": "20pkt", "max_th": "60pkt", "max_p": 0.1, "w_q": 0.002},
    "ared": {"limit": "200pkt"},
    "feng-ared": {"limit": "200pkt", "min_th": "20pkt", "max_th": "60pkt", "max_p": 0.1, "w_q": "auto",
                  "dynamic_thresholds": True},
    "red-tail": {"limit": "200pkt", "red": {"kind": "ared"}},
    "blue": {"limit": "100pkt"},
    "sfb": {"limit": "100pkt"},
    "ted": {"limit": "inf", "default_deadline": "20ms"},
    "codel": {},
    "pie": {},
    "dualpi2": {},
    "fq_codel": {},
    "fq_pie": {},
    "cobalt": {},
    "fq_cobalt": {},
}

# One invalid value per kind, and the key path the error must name.
BAD = {
    "droptail": ("drop", "middle", "topology.qdisc.drop"),
    "bernoulli": ("p", 1.5, "topology.qdisc.p"),
    "red": ("max_th", "10pkt", "topology.qdisc.max_th"),
    "ared": ("update", "sometimes", "topology.qdisc.update"),
    "feng-ared": ("a", 0.5, "topology.qdisc.a"),
    "red-tail": ("c1_max", 1.0, "topology.qdisc.c1_max"),
    "blue": ("d1", 2.0, "topology.qdisc.d1"),
    "sfb": ("penalty_rate", "10Mbps", "topology.qdisc.penalty_rate"),
    "ted": ("mode", "global", "topology.qdisc.mode"),
    "codel": ("target", "0ms", "topology.qdisc.target"),
    "pie": ("alpha", -1, "topology.qdisc.alpha"),
    "dualpi2": ("c_protection", 150, "topology.qdisc.c_protection"),
    "fq_codel": ("flows", 0, "topology.qdisc.flows"),
    "fq_pie": ("ecn_prob", 1.5, "topology.qdisc.ecn_prob"),
    "cobalt": ("blue_threshold", "later", "topology.qdisc.blue_threshold"),
    "fq_cobalt": ("drop_batch", 0, "topology.qdisc.drop_batch"),
}


def dumbbell(qdisc: dict) -> Scenario:
    sc = Scenario.load(EXAMPLES / "cbr-dumbbell.toml")
    return sc.with_(**{"duration": "10s", "warmup": "1s", "topology.qdisc": qdisc, "traffic[1].rate": "3Mbps"})


@pytest.mark.parametrize("kind", sorted(QDISCS))
def test_every_kind_runs_and_reports_itself(kind):
    res = aqmlab.run(dumbbell({"kind": kind, **QDISCS[kind]}))
    q = res.queue("bottleneck")
    assert q["qdisc"]["kind"] == kind
    # Offered 13 Mb/s to 10 Mb/s: every discipline must drop.
    assert q["drops"] > 0


@pytest.mark.parametrize("kind", sorted(BAD))
def test_bad_parameter_names_its_key(kind):
    key, value, path = BAD[kind]
    with pytest.raises(ConfigError) as e:
        dumbbell({"kind": kind, **QDISCS[kind], key: value}).validate()
    assert [p for p, _ in e.value.problems] == [path], e.value.problems


def test_auto_values_are_reported_resolved():
    q = aqmlab.run(dumbbell({"kind": "ared", "limit": "200pkt"})).queue("bottleneck")["qdisc"]
    # 10 Mb/s with 500 B mean packets: C = 2500 packets/s; min_th = max(5,
    # 0.005 * 2500 / 2) = 6.25, max_th = 18.75, w_q = 1 - exp(-1/2500).
    assert q["min_th_pkts"] == 6.25 and q["max_th_pkts"] == 18.75
    assert abs(q["w_q"] - 3.99920e-4) < 1e-9
