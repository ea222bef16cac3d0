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
