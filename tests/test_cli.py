"""The aqmlab command on valid input."""

import json
import tomllib
from pathlib import Path

import pandas as pd
import pytest

import aqmlab
from conftest import EXAMPLES


def test_version(cli):
    r = cli("--version")
    assert r.returncode == 0 and r.stdout.strip() == f"aqmlab {aqmlab.__version__}"


def _is_experiment(path):
    return "scenario" in tomllib.loads(path.read_text())


SCENARIOS = sorted(p.name for p in EXAMPLES.glob("*.toml") if not _is_experiment(p))
EXPERIMENTS = sorted(p.name for p in EXAMPLES.glob("*.toml") if _is_experiment(p))


@pytest.mark.parametrize("example", SCENARIOS)
def test_every_example_validates_and_runs(cli, example):
    path = str(EXAMPLES / example)
    assert cli("validate", path).returncode == 0
    # Shortened so the suite stays quick; the examples' own durations are for users.
    r = cli("run", path, "--set", "duration=20s", "--set", "warmup=1s")
    assert r.returncode == 0, r.stderr
    assert "queue" in r.stdout and "traffic" in r.stdout


@pytest.mark.parametrize("example", EXPERIMENTS)
def test_every_experiment_example_sweeps_without_failures(cli, tmp_path, example):
    r = cli("sweep", str(EXAMPLES / example), "--store", str(tmp_path / "s.duckdb"), "--quiet")
    assert r.returncode == 0, r.stderr
    assert " 0 failed, 0 already stored" in r.stdout


def test_run_json_series_and_seed(cli, tmp_path: Path):
    out = tmp_path / "series.parquet"
    r = cli("run", str(EXAMPLES / "cbr-dumbbell.toml"), "--set", "duration=5s", "--set", "warmup=1s",
            "--seed", "42", "--json", "--series", str(out))
    assert r.returncode == 0, r.stderr
    s = json.loads(r.stdout)
    assert s["seed"] == 42 and s["duration_s"] == 5.0 and s["warmup_s"] == 1.0
    df = pd.read_parquet(out)
    # Samples every 100 ms from 0 to 5 s inclusive.
    assert len(df) == 51 and df["time_s"].iloc[-1] == 5.0
    assert {"bottleneck.backlog_pkts", "bottleneck.drops"} <= set(df.columns)
    assert [p.name for p in tmp_path.iterdir()] == ["series.parquet"]


def test_set_accepts_toml_values_and_bare_words(cli):
    r = cli("run", str(EXAMPLES / "mm1k.toml"), "--set", "duration=50s",
            "--set", 'topology.links[0].qdisc={kind = "bernoulli", limit = "inf", p = 0.25}', "--json")
    assert r.returncode == 0, r.stderr
    q = json.loads(r.stdout)["queues"]["q"]
    assert q["qdisc"] == {"kind": "bernoulli", "limit": "inf", "p": 0.25, "ecn": False}
    # No overflow with an unlimited buffer: every drop is an early (random) one.
    assert q["drops"] == q["drops_early"] > 0


def _mm1k_experiment(tmp_path: Path) -> Path:
    """Two buffer sizes of the M/M/1/K example, one short replication each."""
    (tmp_path / "mm1k.toml").write_text((EXAMPLES / "mm1k.toml").read_text())
    path = tmp_path / "exp.toml"
    path.write_text('scenario = "mm1k.toml"\nmetrics = ["queues.q.loss_rate"]\n\n'
                    '[sweep]\n"topology.links[0].qdisc.limit" = ["1pkt", "9pkt"]\n')
    return path


def test_sweep_set_overrides_the_base_scenario(cli, tmp_path: Path):
    import duckdb

    exp, store = _mm1k_experiment(tmp_path), tmp_path / "s.duckdb"
    r = cli("sweep", str(exp), "--store", str(store), "--jobs", "1", "--quiet",
            "--set", "duration=30s", "--set", "warmup=1s", "--set", "traffic[0].rate=20Mbps")
    assert r.returncode == 0, r.stderr
    db = duckdb.connect(str(store), read_only=True)
    try:
        runs = db.execute("SELECT labels, scenario, m.value FROM runs JOIN metrics m USING (key) "
                          "WHERE m.metric = 'queues.q.loss_rate' ORDER BY point").fetchall()
        text = db.execute("SELECT text FROM experiments").fetchone()[0]
    finally:
        db.close()
    # M/M/1/K at load rho = 2 (the --set rate; the file's is 0.9): loss =
    # (1 - rho) rho^K / (1 - rho^(K+1)) = 4/7 for K = 2 (1 waiting + 1 in
    # service) and 1024/2047 for K = 10; at load 0.9 it would be 0.29 and 0.05.
    for (labels, scenario, loss), k in zip(runs, [2, 10]):
        sc = json.loads(scenario)
        assert (sc["duration"], sc["warmup"], sc["traffic"][0]["rate"]) == ("30s", "1s", "20Mbps")
        assert loss == pytest.approx((1 - 2) * 2**k / (1 - 2 ** (k + 1)), abs=0.02), labels
    assert len(runs) == 2
    # The store shows the file as it was run.
    assert "#   traffic[0].rate=20Mbps" in text


@pytest.mark.parametrize("assignment,needles", [
    ("topology.links[0].qdisc.limit=3pkt", ["topology.links[0].qdisc.limit", "is swept"]),
    ("duration=20x", ["duration", '"20x"', "unknown unit"]),
    ("duration", ["--set", "key.path=value"]),
])
def test_sweep_set_errors_name_the_key(cli, tmp_path: Path, assignment, needles):
    exp = _mm1k_experiment(tmp_path)
    r = cli("sweep", str(exp), "--quiet", "--set", assignment)
    assert r.returncode == 2
    lines = r.stderr.splitlines()
    assert len(lines) == 1 and all(n in lines[0] for n in needles), r.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["exp.toml", "mm1k.toml"]
